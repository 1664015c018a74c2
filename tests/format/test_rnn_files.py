"""LSTM and GRU models converted by the real MNN wheel (its converter turns them into While
loops): loop bodies receive values whose shape only run time knows (the previous layer's scan
output, a reversed sequence); they load in mnn and give the wheel's and onnxruntime's outputs.

Exported with static shapes: with dynamic axes the wheel's converter assumes a sequence of
length 1 and unrolls a single step, a model neither the wheel nor mnn can run on longer
sequences."""

import io as _io

import numpy as np
import pytest
from format_oracle import convert_onnx, wheel_run

import mnn
from mnn.express import io
from mnn.format.reader import load_graph

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

HIDDEN, FEATURES = 5, 4
# torch warns that a batch size other than 1 with RNNs is fragile; the shapes here are fixed.
pytestmark = pytest.mark.filterwarnings("ignore:Exporting a model to ONNX with a batch_size")


def _export(kind, layers, bidirectional, batch_first):
    torch.manual_seed(layers * 4 + bidirectional * 2 + batch_first)
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    net = cls(FEATURES, HIDDEN, num_layers=layers, bidirectional=bidirectional,
              batch_first=batch_first)
    outputs = ["y", "h", "c"] if kind == "lstm" else ["y", "h"]
    buf = _io.BytesIO()
    torch.onnx.export(net, (torch.randn(3, 2, FEATURES),), buf, input_names=["x"],
                      output_names=outputs, dynamo=False)
    return onnx.load_from_string(buf.getvalue()), outputs, net


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("layers, bidirectional, batch_first", [
    (1, False, False), (1, True, True), (2, False, True), (2, True, False),
])
def test_converted_rnn_matches_wheel_and_onnxruntime(kind, layers, bidirectional, batch_first,
                                                     tmp_path, rng):
    model, outputs, net = _export(kind, layers, bidirectional, batch_first)
    path = convert_onnx(model, tmp_path)
    session = ort.InferenceSession(model.SerializeToString())
    module = mnn.nn.load_module_from_file(path, ["x"], outputs)
    # Read by us and written again: the wheel runs our file as it runs its own.
    rewritten = str(tmp_path / "rewritten.mnn")
    io.save(load_graph(path).outputs, rewritten)
    for _ in range(2):  # a second input through the same plans
        x = rng.standard_normal((3, 2, FEATURES)).astype(np.float32)
        want = session.run(outputs, {"x": x})
        ours = [np.asarray(v.read()) for v in module.forward([x])]
        theirs = wheel_run(path, {"x": x}, outputs)
        again = wheel_run(rewritten, {"x": x}, outputs)
        for o, w, t, a in zip(ours, want, theirs, again):
            assert o.shape == w.shape
            np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(a, t, rtol=1e-6, atol=1e-7)
    # A longer sequence than exported (the trip count comes from the input's shape); torch
    # is the reference (the ONNX model's input shape is fixed).
    longer = (3, 7, FEATURES) if batch_first else (7, 2, FEATURES)
    x = rng.standard_normal(longer).astype(np.float32)
    with torch.no_grad():
        y, state = net(torch.from_numpy(x))
    want = [y.numpy()] + ([s.numpy() for s in state] if kind == "lstm" else [state.numpy()])
    ours = [np.asarray(v.read()) for v in module.forward([x])]
    theirs = wheel_run(path, {"x": x}, outputs)
    for o, w, t in zip(ours, want, theirs):
        np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("layers, bidirectional, batch_first", [(1, False, False),
                                                                (2, True, True)])
def test_converted_rnn_with_initial_states(kind, layers, bidirectional, batch_first,
                                           tmp_path, rng):
    torch.manual_seed(7)
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    net = cls(FEATURES, HIDDEN, num_layers=layers, bidirectional=bidirectional,
              batch_first=batch_first)
    states = layers * (2 if bidirectional else 1)
    batch = 3 if batch_first else 2
    feed = {"x": rng.standard_normal((3, 2, FEATURES)).astype(np.float32),
            "h0": rng.standard_normal((states, batch, HIDDEN)).astype(np.float32)}
    names, outputs = ["x", "h0"], ["y", "h"]
    if kind == "lstm":
        feed["c0"] = rng.standard_normal((states, batch, HIDDEN)).astype(np.float32)
        names, outputs = names + ["c0"], outputs + ["c"]
    t = {k: torch.from_numpy(v) for k, v in feed.items()}
    args = (t["x"], (t["h0"], t["c0"])) if kind == "lstm" else (t["x"], t["h0"])
    buf = _io.BytesIO()
    torch.onnx.export(net, args, buf, input_names=names, output_names=outputs, dynamo=False)
    model = onnx.load_from_string(buf.getvalue())
    path = convert_onnx(model, tmp_path)
    want = ort.InferenceSession(buf.getvalue()).run(outputs, feed)
    module = mnn.nn.load_module_from_file(path, names, outputs)
    ours = [np.asarray(v.read()) for v in module.forward([feed[n] for n in names])]
    theirs = wheel_run(path, feed, outputs)
    for o, w, t in zip(ours, want, theirs):
        assert o.shape == w.shape
        np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layers, bidirectional, batch_first", [(1, False, False),
                                                                (2, True, True)])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_converted_plain_rnn(nonlinearity, layers, bidirectional, batch_first, tmp_path, rng):
    """nn.RNN stays one MNN ``RNN`` op. Its file has no field for the activation and the
    wheel computes tanh even for a relu RNN (its converter drops the attribute): mnn reads
    the file as the wheel runs it, so a relu model matches the wheel, not onnxruntime."""
    torch.manual_seed(3)
    net = torch.nn.RNN(FEATURES, HIDDEN, num_layers=layers, nonlinearity=nonlinearity,
                       bidirectional=bidirectional, batch_first=batch_first)
    x = rng.standard_normal((3, 2, FEATURES)).astype(np.float32)
    buf = _io.BytesIO()
    torch.onnx.export(net, (torch.from_numpy(x),), buf, input_names=["x"],
                      output_names=["y", "h"], dynamo=False)
    path = convert_onnx(onnx.load_from_string(buf.getvalue()), tmp_path)
    want = ort.InferenceSession(buf.getvalue()).run(["y", "h"], {"x": x})
    module = mnn.nn.load_module_from_file(path, ["x"], ["y", "h"])
    ours = [np.asarray(v.read()) for v in module.forward([x])]
    theirs = wheel_run(path, {"x": x}, ["y", "h"])
    for o, w, t in zip(ours, want, theirs):
        assert o.shape == w.shape
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
        if nonlinearity == "tanh":
            np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-6)
