"""If/Loop .mnn files made by the real wheel's converter, run by mnn's Module and Session
APIs against onnxruntime on the source ONNX. (The wheel runs these files only through its
Module API, and segfaults on the trip-count-0 Loop; its Session API cannot run them.)"""
import numpy as np
import pytest

import mnn

pytest.importorskip("mnn.format.map_control")
ort = pytest.importorskip("onnxruntime")
f32 = np.float32
RNG = np.random.default_rng(9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_file_module_and_session(wheel_models, sign):
    src, path = wheel_models("if")
    x = (np.abs(RNG.standard_normal((2, 3))) * sign).astype(f32)
    want = ort.InferenceSession(src).run(None, {"x": x})[0]
    m = mnn.nn.load_module_from_file(path, [], [])
    np.testing.assert_allclose(m.forward(x).read(), want, rtol=1e-6)
    it = mnn.Interpreter(path)
    s = it.createSession()
    it.getSessionInput(s).copyFrom(x)
    assert it.runSession(s) == 0
    np.testing.assert_allclose(it.getSessionOutput(s).getNumpyData(), want, rtol=1e-6)


@pytest.mark.parametrize("trips, stop", [(4, 100.0), (6, 2.0), (0, 100.0)])
def test_loop_file_module_and_session(wheel_models, trips, stop):
    src, path = wheel_models("loop")
    x, v0 = RNG.standard_normal((2, 3)).astype(f32), RNG.standard_normal((2, 3)).astype(f32)
    feeds = {"M": np.array(trips, np.int64), "c": np.array(True), "v0": v0, "x": x,
             "stop": np.array(stop, f32)}
    want = ort.InferenceSession(src).run(None, feeds)
    # MNN files keep integers and booleans as int32.
    ours = [np.array(trips, np.int32), np.array(1, np.int32), v0, x, feeds["stop"]]
    got = mnn.nn.load_module_from_file(path, [], []).forward(ours)
    for g, w in zip(got, want):
        assert g.shape == list(w.shape)
        np.testing.assert_allclose(g.read(), w, rtol=1e-6)
    it = mnn.Interpreter(path)
    s = it.createSession({"numThread": 1})
    for name, value in zip(["M", "c", "v0", "x", "stop"], ours):
        it.getSessionInput(s, name).copyFrom(value)
    assert it.runSession(s) == 0
    for name, w in zip(["v", "s"], want):
        out = it.getSessionOutput(s, name)
        assert out.getShape() == w.shape
        np.testing.assert_allclose(out.getNumpyData(), w, rtol=1e-6)
