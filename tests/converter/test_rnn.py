"""Recurrent ops with sequence_lens shorter than the sequence, against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import run_ort
from converter.onnx import load_onnx

SEQ, BATCH, INP, HID = 5, 3, 4, 6
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _model(op, direction):
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(7)
    g = GATES[op]
    w = rng.normal(size=(dirs, g * HID, INP)).astype(np.float32) * 0.5
    r = rng.normal(size=(dirs, g * HID, HID)).astype(np.float32) * 0.5
    b = rng.normal(size=(dirs, 2 * g * HID)).astype(np.float32) * 0.1
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, ["x", "w", "r", "b", "lens"], outputs, hidden_size=HID,
                            direction=direction)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, BATCH, INP]),
         helper.make_tensor_value_info("lens", TensorProto.INT32, [BATCH])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"),
         numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), outputs


@pytest.mark.parametrize("op", sorted(GATES))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens_masks_steps(op, direction):
    model, outputs = _model(op, direction)
    x = np.random.default_rng(1).normal(size=(SEQ, BATCH, INP)).astype(np.float32)
    feeds = {"x": x, "lens": np.array([5, 2, 3], np.int32)}
    want = run_ort(model, feeds)
    got = load_onnx(model).run(feeds)
    for name in outputs:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)
