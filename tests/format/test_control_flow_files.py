"""If/While (ONNX Loop) in .mnn files: made by the real converter and read by us; written by
us from express graphs and run by the real wheel."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

from mnn.express import io
from mnn.express.ops.control_flow import Subgraph, if_, loop

FLOAT = TensorProto.FLOAT


def _if_onnx():
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", FLOAT, [2, 3])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", FLOAT, [2, 3])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", FLOAT, [2, 3])],
        [numpy_helper.from_array(np.float32(0), "zero")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _loop_onnx():
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["v_in", "two"], ["m"]),
            helper.make_node("Add", ["m", "x"], ["v_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["v_out"], ["scan"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", FLOAT, [2, 3]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", FLOAT, [2, 3]),
            helper.make_tensor_value_info("scan", FLOAT, [2, 3]),
        ],
        [numpy_helper.from_array(np.float32(2), "two")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "x"], ["vf", "scans"], body=body)],
        "g",
        [
            helper.make_tensor_value_info("x", FLOAT, [2, 3]),
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
        ],
        [
            helper.make_tensor_value_info("vf", FLOAT, [2, 3]),
            helper.make_tensor_value_info("scans", FLOAT, None),
        ],
        [numpy_helper.from_array(np.array(True), "c")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _loop_numpy(x, n):
    v, scans = x, []
    for _ in range(n):
        v = v * 2 + x
        scans.append(v)
    return v, np.stack(scans) if scans else np.zeros((0,) + x.shape, x.dtype)


def test_converted_if_matches_wheel(tmp_path, rng):
    path = convert_onnx(_if_onnx(), tmp_path)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for value in (np.abs(x), -np.abs(x)):
        (theirs,) = wheel_run(path, {"x": value}, ["y"])
        (ours,) = ours_run(path, {"x": value}, ["y"])
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(ours, value + value if value.sum() > 0 else value * value)


@pytest.mark.parametrize("trips", [3, 1, 0])
def test_converted_loop_matches_wheel(trips, tmp_path, rng):
    path = convert_onnx(_loop_onnx(), tmp_path)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    feed = {"x": x, "n": np.array([trips], np.int32)}
    ours = ours_run(path, feed, ["vf", "scans"])
    expect = _loop_numpy(x, trips)
    for o, e in zip(ours, expect):
        np.testing.assert_allclose(o, e, rtol=1e-6)
    if trips:  # the wheel segfaults on a Loop with a scan output and zero trips
        theirs = wheel_run(path, feed, ["vf", "scans"])
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o, t, rtol=1e-6)


def test_if_and_loop_written_by_us_run_in_wheel(tmp_path, rng):
    x = F.placeholder([2, 3])
    x.name = "x"
    then_g = Subgraph.trace(lambda a: [a + a], [([2, 3], np.float32)], name="then")
    else_g = Subgraph.trace(lambda a: [F.exp(a)], [([2, 3], np.float32)], name="else")
    (chosen,) = if_(F.greater(F.reduce_sum(x), 0.0), then_g, else_g, [x])
    body = Subgraph.trace(
        lambda i, c, v, k: [c, v * 2.0 + k, k, F.tanh(v)],
        [([], np.int32), ([], np.bool_), ([2, 3], np.float32), ([2, 3], np.float32)],
        name="body",
    )
    final, _, scans = loop(F.const(np.int32(3)), True, body, [chosen, x])
    path = str(tmp_path / "cf.mnn")
    io.save({"final": final, "scans": scans}, path)
    for value in (np.abs(rng.standard_normal((2, 3))), -np.abs(rng.standard_normal((2, 3)))):
        value = value.astype(np.float32)
        x.write(value)
        expect = [final.read(), scans.read()]
        theirs = wheel_run(path, {"x": value}, ["final", "scans"])
        ours = ours_run(path, {"x": value}, ["final", "scans"])
        for o, t, e in zip(ours, theirs, expect):
            np.testing.assert_allclose(t, e, rtol=1e-5)
            np.testing.assert_allclose(o, e, rtol=1e-6)
