"""LSTM, GRU and RNN with a dynamic sequence length and batch convert without
--inputConfigFile (the recurrence becomes a loop over the run-time length) and run at
several shapes, in memory, through our .mnn file and in the real MNN wheel, matching
onnxruntime."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import run_ort
from converter.cli import main as mnnconvert
from converter.onnx import load_onnx
from mnn import nn as mnn_nn
import mnn.expr as F

INP, HID = 4, 6
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# (seq, batch) pairs run against one converted model.
SIZES = [(5, 3), (2, 1)]


def _model(op, direction, seq="S", lens=True, layout=0):
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(7)
    g = GATES[op]
    w = rng.normal(size=(dirs, g * HID, INP)).astype(np.float32) * 0.5
    r = rng.normal(size=(dirs, g * HID, HID)).astype(np.float32) * 0.5
    b = rng.normal(size=(dirs, 2 * g * HID)).astype(np.float32) * 0.1
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    ins = ["x", "w", "r", "b"] + (["lens"] if lens else [])
    node = helper.make_node(op, ins, outputs, hidden_size=HID, direction=direction,
                            layout=layout)
    x_dims = ["N", seq, INP] if layout else [seq, "N", INP]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)]
    if lens:
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"]))
    graph = helper.make_graph(
        [node], "g", inputs,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"),
         numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), outputs


def _feeds(seq, batch, lens, layout=0, seed=1):
    rng = np.random.default_rng(seed)
    shape = (batch, seq, INP) if layout else (seq, batch, INP)
    feeds = {"x": rng.normal(size=shape).astype(np.float32)}
    if lens:
        feeds["lens"] = rng.integers(1, seq + 1, batch).astype(np.int32)
    return feeds


def _write(model, folder):
    """Our .mnn file of ``model`` (the write fails on a node left to run time)."""
    src, dst = os.path.join(folder, "m.onnx"), os.path.join(folder, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    return dst


@pytest.mark.parametrize("op", sorted(GATES))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_dynamic_sequence_and_batch(op, direction, tmp_path):
    model, outputs = _model(op, direction)
    graph = load_onnx(model)
    path = _write(model, str(tmp_path))
    ours = mnn_nn.load_module_from_file(path, ["x", "lens"], outputs)
    for seq, batch in SIZES:
        feeds = _feeds(seq, batch, True)
        want = run_ort(model, feeds)
        got = graph.run(feeds)
        from_file = ours.forward([F.const(feeds["x"]), F.const(feeds["lens"])])
        for name, value in zip(outputs, from_file):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(np.asarray(value.read()), want[name], rtol=1e-4,
                                       atol=1e-5)


@pytest.mark.parametrize("op", sorted(GATES))
@pytest.mark.parametrize("seq", [3, "S"])
def test_batch_first_layout(op, seq, tmp_path):
    """layout 1 (batch first), with a known sequence length (unrolled) or a dynamic one
    (a loop); the batch stays dynamic. onnxruntime runs only layout 0: the oracle is the
    layout-0 model on the transposed input, its outputs transposed back."""
    model, outputs = _model(op, "bidirectional", seq=seq, lens=False, layout=1)
    reference, _ = _model(op, "bidirectional", seq=seq, lens=False, layout=0)
    path = _write(model, str(tmp_path))
    ours = mnn_nn.load_module_from_file(path, ["x"], outputs)
    for n_steps, batch in ([(3, 1), (3, 4)] if seq == 3 else SIZES):
        feeds = _feeds(n_steps, batch, False, layout=1)
        want = run_ort(reference, {"x": feeds["x"].transpose(1, 0, 2)})
        want = {"y": want["y"].transpose(2, 0, 1, 3),
                **{k: v.transpose(1, 0, 2) for k, v in want.items() if k != "y"}}
        for name, value in zip(outputs, ours.forward([F.const(feeds["x"])])):
            np.testing.assert_allclose(np.asarray(value.read()), want[name], rtol=1e-4,
                                       atol=1e-5)


# -- torch exports (dynamic_axes on batch and sequence), ours and the real wheel ----------

torch = pytest.importorskip("torch")


class _Net(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(INP, HID, num_layers=2, batch_first=True,
                                           bidirectional=True)
        self.fc = torch.nn.Linear(2 * HID, 3)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_torch_export_with_dynamic_axes(kind, tmp_path):
    MNN = pytest.importorskip("MNN")
    torch.manual_seed(0)
    net = _Net(kind).eval()
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    torch.onnx.export(net, torch.randn(2, 5, INP), src, dynamo=False, input_names=["x"],
                      output_names=["y"], opset_version=14,
                      dynamic_axes={"x": {0: "N", 1: "S"}, "y": {0: "N", 1: "S"}})
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    import onnx

    model = onnx.load(src)
    ours = mnn_nn.load_module_from_file(dst, ["x"], ["y"])
    wheel = MNN.nn.load_module_from_file(dst, ["x"], ["y"])
    rng = np.random.default_rng(0)
    for shape in [(1, 7, INP), (3, 2, INP)]:
        x = rng.standard_normal(shape).astype(np.float32)
        want = run_ort(model, {"x": x})["y"]
        got = np.asarray(ours.forward(F.const(x)).read())
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        theirs = np.array(wheel.forward(MNN.expr.const(x, list(shape), MNN.expr.NCHW)).read())
        np.testing.assert_allclose(theirs, want, rtol=1e-4, atol=1e-5)
