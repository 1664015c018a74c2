"""Sequences whose length only run time knows (oracle: onnxruntime): a Loop with a run-time
trip count growing a sequence, read back with ConcatFromSequence / SequenceAt /
SequenceLength; one converted graph run with several trip counts."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter.onnx.loader import convert_graph


def _loop_model():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "fi"], ["scaled"]),
         helper.make_node("SequenceInsert", ["seq_in", "scaled"], ["seq_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
        helper.make_node("Loop", ["n", "", "empty"], ["seq"], body=body),
        helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
        helper.make_node("SequenceLength", ["seq"], ["len"]),
        helper.make_node("SequenceAt", ["seq", "pos"], ["at"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cat", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("len", TensorProto.INT64, None),
         helper.make_tensor_value_info("at", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_loop_grows_a_sequence_of_run_time_length():
    model = _loop_model()
    graph = convert_graph(model)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    for n, pos in ((3, 1), (5, -1), (1, 0)):
        feeds = {"n": np.array(n, np.int64), "x": x, "pos": np.array(pos, np.int64)}
        want = session.run(None, feeds)
        got = graph.run(feeds)
        for (name, value), expected in zip(got.items(), want):
            np.testing.assert_array_equal(value, expected, err_msg=f"{name} (n={n})")


def test_position_out_of_range_at_run_time_is_an_error():
    graph = convert_graph(_loop_model())
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="out of range"):
        graph.run({"n": np.array(2, np.int64), "x": x, "pos": np.array(7, np.int64)})


def test_long_constant_trip_count_runs_as_a_loop_not_unrolled():
    model = _loop_model()
    # The trip count as a constant initializer: 300 iterations (over the unroll limit).
    from onnx import numpy_helper

    model.graph.initializer.append(numpy_helper.from_array(np.array(300, np.int64), "n"))
    del model.graph.input[0]
    graph = convert_graph(model)
    assert any(v.expr.op_type == "while" for v in _ancestors(graph.outputs["cat"]))
    x = np.ones((2, 3), np.float32)
    got = graph.run({"x": x, "pos": np.array(299, np.int64)})
    assert got["cat"].shape == (600, 3) and int(got["len"]) == 300
    np.testing.assert_array_equal(got["at"], x * 299)


def _ancestors(var):
    seen, stack = set(), [var]
    while stack:
        v = stack.pop()
        if id(v.expr) in seen:
            continue
        seen.add(id(v.expr))
        yield v
        stack.extend(v.expr.inputs)
