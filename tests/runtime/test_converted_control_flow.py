"""If/Loop ONNX models: our converter's graph in a LoadedModule vs the wheel and onnxruntime.

(The .mnn files of these models are also run by the wheel here; loading them in mnn waits
for the format's If/While mapping.)"""
import numpy as np
import pytest
from runtime_models import if_model, loop_model, wheel_module_outputs

f32 = np.float32
RNG = np.random.default_rng(5)


def _converted_module(model):
    pytest.importorskip("converter.onnx.loader")
    from converter.onnx.loader import load_onnx
    from mnn.runtime.module import LoadedModule

    g = load_onnx(model)
    return LoadedModule(list(g.inputs.values()), list(g.outputs.values()), list(g.inputs),
                        list(g.outputs))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_model_matches_wheel_and_onnxruntime(wheel_models, sign):
    ort = pytest.importorskip("onnxruntime")
    src, path = wheel_models("if")
    x = (np.abs(RNG.standard_normal((2, 3))) * sign).astype(f32)
    want = ort.InferenceSession(src).run(None, {"x": x})[0]
    np.testing.assert_allclose(wheel_module_outputs(path, [x])[0], want, rtol=1e-6)
    got = _converted_module(if_model()).forward(x).read()
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("trips, stop", [(3, 100.0), (5, 2.0), (0, 100.0)])
def test_loop_model_matches_wheel_and_onnxruntime(wheel_models, trips, stop):
    ort = pytest.importorskip("onnxruntime")
    src, path = wheel_models("loop")
    x, v0 = RNG.standard_normal((2, 3)).astype(f32), RNG.standard_normal((2, 3)).astype(f32)
    feeds = {"M": np.array(trips, np.int64), "c": np.array(True), "v0": v0, "x": x,
             "stop": np.array(stop, f32)}
    want = ort.InferenceSession(src).run(None, feeds)
    if trips:  # the wheel segfaults on a Loop with a scan output and trip count 0
        theirs = wheel_module_outputs(path, [np.array(trips, np.int32), np.array(1, np.int32),
                                             v0, x, feeds["stop"]])
        for t, w in zip(theirs, want):
            np.testing.assert_allclose(t, w, rtol=1e-6)
    got = _converted_module(loop_model()).forward(list(feeds.values()))
    for g, w in zip(got, want):
        assert g.shape == list(w.shape)
        np.testing.assert_allclose(g.read(), w, rtol=1e-6)
