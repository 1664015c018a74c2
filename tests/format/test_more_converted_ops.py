"""More ONNX ops through the real wheel's converter, read by us: instance norm, LRN, PRelu,
LeakyRelu, HardSwish, Erf, GatherElements, Range, ReduceLogSumExp, Trilu, Equal, Sign,
Selu, MeanVarianceNormalization, Einsum; against the wheel and onnxruntime."""

import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT

_NODES = [
    (F32, helper.make_node("InstanceNormalization", ["x", "sc", "bi"], ["inorm"])),
    (F32, helper.make_node("LRN", ["x"], ["lrn"], size=3)),
    (F32, helper.make_node("PRelu", ["x", "slope"], ["prelu"])),
    (F32, helper.make_node("LeakyRelu", ["x"], ["leaky"], alpha=0.1)),
    (F32, helper.make_node("HardSwish", ["x"], ["hsw"])),
    (F32, helper.make_node("Erf", ["x"], ["erf"])),
    (F32, helper.make_node("GatherElements", ["x", "gi"], ["gel"], axis=1)),
    (TensorProto.INT64, helper.make_node("Range", ["st", "lim", "dl"], ["rng"])),
    (F32, helper.make_node("ReduceLogSumExp", ["x"], ["lse"], axes=[1], keepdims=1)),
    (F32, helper.make_node("Trilu", ["x"], ["tri"], upper=1)),
    (TensorProto.BOOL, helper.make_node("Equal", ["x", "eqc"], ["eq"])),
    (F32, helper.make_node("Sign", ["x"], ["sign"])),
    (F32, helper.make_node("Selu", ["x"], ["selu"])),
    (F32, helper.make_node("MeanVarianceNormalization", ["x"], ["mvn"])),
    (F32, helper.make_node("Einsum", ["x", "x"], ["ein"], equation="bchw,bchw->bc")),
]
NAMES = [node.output[0] for _, node in _NODES]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    rng = np.random.default_rng(0)

    def c(name, arr):
        return numpy_helper.from_array(np.asarray(arr), name)

    gather = rng.integers(0, 4, (1, 4, 5, 6)).astype(np.int64)
    inits = [
        c("sc", rng.standard_normal(4).astype(np.float32)),
        c("bi", rng.standard_normal(4).astype(np.float32)),
        c("slope", np.float32([0.1, 0.2, 0.3, 0.4]).reshape(4, 1, 1)),
        c("gi", gather),
        c("lim", np.int64(5)),
        c("st", np.int64(0)),
        c("dl", np.int64(1)),
        c("eqc", np.float32(0.5)),
    ]
    graph = helper.make_graph(
        [node for _, node in _NODES],
        "ops2",
        [helper.make_tensor_value_info("x", F32, [1, 4, 5, 6])],
        [helper.make_tensor_value_info(node.output[0], t, None) for t, node in _NODES],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, convert_onnx(model, tmp_path_factory.mktemp("ops2"))


@pytest.mark.parametrize("name", NAMES)
def test_converted_op(name, converted, rng):
    ort = pytest.importorskip("onnxruntime")
    model, path = converted
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    (expect,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run([name], {"x": x})
    (ours,) = ours_run(path, {"x": x}, [name])
    (theirs,) = wheel_run(path, {"x": x}, [name])
    np.testing.assert_allclose(ours.astype(np.float64), theirs, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        ours.astype(np.float64), expect.astype(np.float64), rtol=1e-4, atol=1e-5
    )


def test_converted_scatters(tmp_path):
    """ScatterElements/ScatterND from the wheel's converter. It drops ONNX's reduction
    attribute (y2, y4 are written as plain scatters), so those two are checked against
    the wheel only."""
    ort = pytest.importorskip("onnxruntime")
    nodes = [
        helper.make_node("ScatterElements", ["x", "i", "u"], ["y1"], axis=1),
        helper.make_node("ScatterElements", ["x", "i", "u"], ["y2"], axis=1, reduction="add"),
        helper.make_node("ScatterND", ["x", "ni", "nu"], ["y3"]),
        helper.make_node("ScatterND", ["x", "ni", "nu"], ["y4"], reduction="mul"),
    ]
    inits = [
        numpy_helper.from_array(np.int64([[1, 0], [3, 2], [0, 0]]), "i"),
        numpy_helper.from_array(np.float32([[1, 2], [3, 4], [5, 6]]), "u"),
        numpy_helper.from_array(np.int64([[0, 1], [2, 3]]), "ni"),
        numpy_helper.from_array(np.float32([7, 8]), "nu"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F32, [3, 4])],
        [helper.make_tensor_value_info(n, F32, None) for n in ("y1", "y2", "y3", "y4")],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = convert_onnx(model, tmp_path)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    names = ["y1", "y2", "y3", "y4"]
    ours = ours_run(path, {"x": x}, names)
    theirs = wheel_run(path, {"x": x}, names)
    expect = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(names, {"x": x})
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)
    np.testing.assert_array_equal(ours[0], expect[0])
    np.testing.assert_array_equal(ours[2], expect[2])
