"""Indexing, padding, tiling, arg/scan and activation ops: files from the real converter read
by us, and files we write run by the real wheel, with the same values."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

from mnn.express import graph as _graph
from mnn.express import io

F32, I64 = TensorProto.FLOAT, TensorProto.INT64

_NODES = [
    ("sl", helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["sl"])),
    ("ga", helper.make_node("Gather", ["x", "gidx"], ["ga"], axis=2)),
    ("pa", helper.make_node("Pad", ["x", "pads"], ["pa"], mode="reflect")),
    ("ti", helper.make_node("Tile", ["x", "reps"], ["ti"])),
    ("am", helper.make_node("ArgMax", ["x"], ["am"], axis=1, keepdims=1)),
    ("cs", helper.make_node("CumSum", ["x", "cax"], ["cs"], exclusive=1)),
    ("ex", helper.make_node("Expand", ["y1", "shp"], ["ex"])),
    ("oh", helper.make_node("OneHot", ["ids", "depth", "onoff"], ["oh"], axis=-1)),
    ("rl2", helper.make_node("ReduceL2", ["x"], ["rl2"], axes=[2], keepdims=0)),
    ("elu", helper.make_node("Elu", ["x"], ["elu"], alpha=0.7)),
    ("sp", helper.make_node("Softplus", ["x"], ["sp"])),
    ("ls", helper.make_node("LogSoftmax", ["x"], ["ls"], axis=-1)),
    ("hs", helper.make_node("HardSigmoid", ["x"], ["hs"])),
    ("nz", helper.make_node("NonZero", ["x"], ["nz"])),
    ("tv", helper.make_node("TopK", ["x", "k"], ["tv", "tk"], axis=-1)),
    ("d2s", helper.make_node("DepthToSpace", ["x4"], ["d2s"], blocksize=2, mode="DCR")),
]


def _onnx_model():
    def c(name, arr):
        return numpy_helper.from_array(np.asarray(arr), name)

    inits = [
        c("starts", np.int64([1, 0])),
        c("ends", np.int64([3, 5])),
        c("axes", np.int64([1, 2])),
        c("steps", np.int64([1, 2])),
        c("gidx", np.int64([2, 0, 1])),
        c("pads", np.int64([0, 1, 0, 0, 2, 1])),
        c("reps", np.int64([1, 2, 1])),
        c("cax", np.int64(1)),
        c("shp", np.int64([2, 4, 6])),
        c("depth", np.int64(4)),
        c("k", np.int64([4])),
        c("onoff", np.float32([0, 1])),
    ]
    outs = [name for name, _ in _NODES]
    graph = helper.make_graph(
        [node for _, node in _NODES],
        "ops",
        [
            helper.make_tensor_value_info("x", F32, [2, 4, 6]),
            helper.make_tensor_value_info("y1", F32, [1, 4, 1]),
            helper.make_tensor_value_info("ids", I64, [3]),
            helper.make_tensor_value_info("x4", F32, [1, 8, 2, 3]),
        ],
        [helper.make_tensor_value_info(o, F32, None) for o in outs],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    return convert_onnx(_onnx_model(), tmp_path_factory.mktemp("ops"))


@pytest.mark.parametrize("name", [name for name, _ in _NODES])
def test_converted_op_matches_wheel(name, converted, rng):
    feed = {
        "x": rng.standard_normal((2, 4, 6)).astype(np.float32),
        "y1": rng.standard_normal((1, 4, 1)).astype(np.float32),
        "ids": np.int32([0, 3, 1]),
        "x4": rng.standard_normal((1, 8, 2, 3)).astype(np.float32),
    }
    (theirs,) = wheel_run(converted, feed, [name])
    (ours,) = ours_run(converted, feed, [name])
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours.astype(np.float64), theirs, rtol=1e-6, atol=1e-6)


def _graphs():
    x = F.placeholder([2, 4, 6])
    x.name = "x"
    idx = F.const(np.int32([3, 0, 5, 5]))
    return x, {
        "gather": _graph.apply("gather", [x, idx], axis=2)[0],
        "strided": _graph.apply(
            "strided_slice",
            [x],
            begin=(0, 3, 1),
            end=(2, 0, 6),
            strides=(1, -1, 2),
            begin_mask=1,
            end_mask=0,
            ellipsis_mask=0,
            new_axis_mask=0,
            shrink_axis_mask=0,
        )[0],
        "pad": _graph.apply("pad", [x], pads=((0, 0), (1, 2), (2, 1)), mode=2, value=0)[0],
        "tile": _graph.apply("tile", [x], multiples=(2, 1, 3))[0],
        "argmax": _graph.apply("argmax", [x], axis=1, keepdims=True)[0],
        "argmin": _graph.apply("argmin", [x], axis=2, keepdims=False)[0],
        "cumsum": _graph.apply("cumsum", [x], axis=2, exclusive=False, reverse=True)[0],
        "elu": _graph.apply("elu", [x], alpha=0.5)[0],
        "selu": _graph.apply("selu", [x], scale=1.05, alpha=1.67)[0],
        "log_softmax": _graph.apply("log_softmax", [x], axis=2)[0],
        "softplus": _graph.apply("softplus", [x * 30.0])[0],
        "one_hot": _graph.apply(
            "one_hot",
            [F.const(np.int32([1, 0, 3]))],
            depth=4,
            on_value=2.0,
            off_value=-1.0,
            axis=0,
            dtype=np.dtype(np.float32),
        )[0]
        + F.reduce_sum(x),
        "shape": F.cast(_graph.apply("shape", [x])[0], F.float) * F.reduce_max(x),
        "depth_to_space": _graph.apply(
            "depth_to_space", [F.reshape(x, [1, 8, 3, 2])], block=2, channels_last=False
        )[0],
    }


@pytest.mark.parametrize("name", list(_graphs()[1]))
def test_written_op_runs_in_wheel(name, tmp_path, rng):
    x, graphs = _graphs()
    y = graphs[name]
    value = rng.standard_normal((2, 4, 6)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / f"{name}.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs.astype(np.float64), expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.astype(np.float64), expect, rtol=1e-6, atol=1e-6)
