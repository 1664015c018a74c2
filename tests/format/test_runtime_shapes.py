"""Ops whose parameters or input shapes are known only at run time (as inside loop bodies
and after loops): SliceTf, StridedSlice, Slice, Rank and Size read from hand-built files,
checked against numpy and the real wheel."""

import numpy as np
import pytest
from format_oracle import wheel_run

from mnn.format import flat
from mnn.format.reader import load_graph
from mnn.format.schema import OP_TYPES


def _input(name, index, dims, dtype=1):
    return {
        "type": OP_TYPES["Input"],
        "name": name,
        "outputIndexes": np.int32([index]),
        "main_type": "Input",
        "main": {"dims": np.int32(dims), "dtype": dtype, "dformat": 0},
    }


def _op(type_name, name, ins, outs, main_type=None, main=None):
    op = {
        "type": OP_TYPES[type_name],
        "name": name,
        "inputIndexes": np.int32(ins),
        "outputIndexes": np.int32(outs),
    }
    if main_type:
        op["main_type"], op["main"] = main_type, main
    return op


def _net(ops, names, outputs):
    return flat.encode(
        {"oplists": ops, "tensorName": names, "outputName": outputs, "sourceType": 3}
    )


def _run(data, feed, outputs, tmp_path):
    graph = load_graph(data)
    for name, value in feed.items():
        graph.inputs[name].write(value)
    ours = [graph.outputs[n].read() for n in outputs]
    path = tmp_path / "m.mnn"
    path.write_bytes(data)
    return ours, wheel_run(str(path), feed, outputs)


@pytest.mark.parametrize("begin,size", [([1, 2], [2, -1]), ([-2, 0], [2, 3]), ([0, -3], [1, 3])])
def test_slice_tf_with_runtime_begin_and_size(begin, size, tmp_path, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    data = _net(
        [
            _input("x", 0, [4, 6]),
            _input("b", 1, [2], 3),
            _input("s", 2, [2], 3),
            _op("SliceTf", "y", [0, 1, 2], [3]),
        ],
        ["x", "b", "s", "y"],
        ["y"],
    )
    feed = {"x": x, "b": np.int32(begin), "s": np.int32(size)}
    (ours,), (theirs,) = _run(data, feed, ["y"], tmp_path)
    b = [v % d for v, d in zip(begin, x.shape)]
    expect = x[tuple(slice(v, None if s == -1 else v + s) for v, s in zip(b, size))]
    np.testing.assert_array_equal(ours, expect)
    np.testing.assert_array_equal(theirs, expect)


def test_strided_slice_with_runtime_bounds(tmp_path, rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    param = {"Index": 3, "T": 1, "beginMask": 0b010, "endMask": 0b100, "shrinkAxisMask": 0b001}
    ops = [
        _input("x", 0, [4, 6, 5]),
        _input("b", 1, [3], 3),
        _input("e", 2, [3], 3),
        {
            "type": OP_TYPES["Const"],
            "name": "st",
            "outputIndexes": np.int32([3]),
            "main_type": "Blob",
            "main": {"dims": np.int32([3]), "dataType": 3, "int32s": np.int32([1, 2, -1])},
        },
        _op("StridedSlice", "y", [0, 1, 2, 3], [4], "StridedSliceParam", param),
    ]
    data = _net(ops, ["x", "b", "e", "st", "y"], ["y"])
    feed = {"x": x, "b": np.int32([-1, 3, 3]), "e": np.int32([0, 5, 0])}
    (ours,), (theirs,) = _run(data, feed, ["y"], tmp_path)
    expect = x[-1, 0:5:2, 3::-1]  # axis 1 begin masked, axis 2 end masked
    np.testing.assert_array_equal(ours, expect)
    np.testing.assert_array_equal(theirs, expect)


def test_split_rank_and_size_of_a_runtime_shape(tmp_path, rng):
    # x's first dimension is free (-1): its shape is known only once written
    x = rng.standard_normal((3, 6)).astype(np.float32)
    ops = [
        _input("x", 0, [-1, 6]),
        _op("Slice", "parts", [0], [1, 2, 3], "Slice", {"axis": 1, "sourceType": 3}),
        _op("Rank", "r", [0], [4]),
        _op("Size", "n", [0], [5]),
    ]
    data = _net(ops, ["x", "a", "b", "c", "r", "n"], ["a", "b", "c", "r", "n"])
    graph = load_graph(data)
    graph.inputs["x"].write(x)
    got = [graph.outputs[k].read() for k in ("a", "b", "c", "r", "n")]
    for part, expect in zip(got[:3], np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(part, expect)
    assert int(got[3]) == 2 and int(got[4]) == 18


def test_broadcast_and_gather_with_runtime_parameters(tmp_path, rng):
    x = rng.standard_normal((3, 1)).astype(np.float32)
    t = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ops = [
        _input("x", 0, [3, 1]),
        _input("shape", 1, [2], 3),
        _op("BroadcastTo", "y", [0, 1], [2]),
        _input("t", 3, [2, 3, 4]),
        _input("idx", 4, [2], 3),
        _input("axis", 5, [], 3),
        _op("GatherV2", "g", [3, 4, 5], [6]),
    ]
    data = _net(ops, ["x", "shape", "y", "t", "idx", "axis", "g"], ["y", "g"])
    feed = {
        "x": x,
        "shape": np.int32([3, 5]),
        "t": t,
        "idx": np.int32([3, -1]),
        "axis": np.int32(-1),
    }
    (ours_y, ours_g), (theirs_y, theirs_g) = _run(data, feed, ["y", "g"], tmp_path)
    np.testing.assert_array_equal(ours_y, np.broadcast_to(x, (3, 5)))
    np.testing.assert_array_equal(theirs_y, np.broadcast_to(x, (3, 5)))
    np.testing.assert_array_equal(ours_g, t[..., [3, 3]])
    # (the wheel reads the negative run-time index as zeros: only column 0 is compared)
    np.testing.assert_array_equal(theirs_g[..., 0], t[..., 3])
