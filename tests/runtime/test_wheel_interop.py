"""Loaded models and the session API against the real MNN wheel on the same files."""
import numpy as np
import pytest
from runtime_models import ELEMENTWISE_B, wheel_module_outputs

import mnn
from mnn.express.errors import MnnError

pytest.importorskip("mnn.format.reader")
f32 = np.float32
RNG = np.random.default_rng(3)


def _ours(path, names_in=(), names_out=(), **kw):
    return mnn.nn.load_module_from_file(path, list(names_in), list(names_out), **kw)


def test_elementwise_module_matches_wheel(wheel_models):
    _, path = wheel_models("elementwise")
    x, x2 = RNG.standard_normal((2, 3)).astype(f32), RNG.standard_normal((2, 3)).astype(f32)
    want = wheel_module_outputs(path, [x, x2])
    got = [v.read() for v in _ours(path).forward([x, x2])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    with open(path, "rb") as fh:
        from_bytes = _ours(fh.read())
    np.testing.assert_allclose(from_bytes.forward([x, x2])[1].read(), want[1], rtol=1e-5)


def test_fused_binary_relu_matches_wheel(wheel_models):
    _, path = wheel_models("add_relu")
    x = RNG.standard_normal((2, 3)).astype(f32)
    want = wheel_module_outputs(path, [x])[0]
    np.testing.assert_allclose(want, np.maximum(x + ELEMENTWISE_B, 0), rtol=1e-6)
    np.testing.assert_allclose(_ours(path).forward(x).read(), want, rtol=1e-6)


def test_fused_residual_relu_is_one_plan_step_and_matches_wheel(wheel_models):
    # The BinaryOp's fused ReLU loads as a relu, so the plan merges relu(conv + x).
    _, path = wheel_models("residual")
    x = RNG.standard_normal((1, 4, 6, 5)).astype(f32)
    want = wheel_module_outputs(path, [x])[0]
    for threads in (1, 2):
        m = _ours(path, thread_num=threads)
        np.testing.assert_allclose(m.forward(x).read(), want, rtol=1e-5, atol=1e-6)
        assert [s.op.name for s in m.plan.steps] == ["conv2d_add_relu"]


def test_named_inputs_outputs_and_info_match_wheel(wheel_models):
    MNN = pytest.importorskip("MNN")
    _, path = wheel_models("elementwise")
    theirs = MNN.nn.load_module_from_file(path, ["x2", "x"], ["z"]).get_info()
    ours = _ours(path, ["x2", "x"], ["z"]).get_info()
    for key in ("version", "bizCode", "inputNames", "outputNames"):
        assert ours[key] == theirs[key], key
    assert [v.shape for v in ours["inputs"]] == [v.shape for v in theirs["inputs"]]
    x, x2 = RNG.standard_normal((2, 3)).astype(f32), RNG.standard_normal((2, 3)).astype(f32)
    want = wheel_module_outputs(path, [x2, x], ["x2", "x"], ["z"])
    got = _ours(path, ["x2", "x"], ["z"]).forward([x2, x])
    np.testing.assert_allclose(got[0].read(), want[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(MnnError, match="no tensor named 'nope'"):
        _ours(path, ["nope"], [])


def test_cnn_module_matches_wheel(wheel_models):
    pytest.importorskip("mnn.format.map_nn")  # the format's conv/pool mapping
    _, path = wheel_models("conv")
    x = RNG.standard_normal((1, 3, 8, 8)).astype(f32)
    want = wheel_module_outputs(path, [x])
    for threads in (1, 2):
        m = _ours(path, thread_num=threads)
        np.testing.assert_allclose(m.forward(x).read(), want[0], rtol=1e-4, atol=1e-5)
    # A new input size is re-planned (the file declares 8x8).
    big = RNG.standard_normal((2, 3, 12, 12)).astype(f32)
    assert _ours(path).forward(big).shape == [2, 4, 1, 1]


def _session_run_wheel(path, feeds):
    MNN = pytest.importorskip("MNN")
    it = MNN.Interpreter(path)
    s = it.createSession({"numThread": 1})
    for name, arr in feeds.items():
        t = it.getSessionInput(s, name)
        if t.getShape() != arr.shape:
            it.resizeTensor(t, arr.shape)
    it.resizeSession(s)
    for name, arr in feeds.items():
        tmp = MNN.Tensor(arr.shape, MNN.Halide_Type_Float, arr.ravel().tolist(),
                         MNN.Tensor_DimensionType_Caffe)
        it.getSessionInput(s, name).copyFrom(tmp)
    assert it.runSession(s) == 0
    outs = it.getSessionOutputAll(s)
    return {k: np.array(v.getNumpyData(), copy=True) for k, v in outs.items()}


def test_session_api_matches_wheel(wheel_models):
    _, path = wheel_models("elementwise")
    x, x2 = RNG.standard_normal((2, 3)).astype(f32), RNG.standard_normal((2, 3)).astype(f32)
    want = _session_run_wheel(path, {"x": x, "x2": x2})
    it = mnn.Interpreter(path)
    s = it.createSession({"numThread": 2})
    inputs = it.getSessionInputAll(s)
    assert sorted(inputs) == ["x", "x2"]
    assert it.getSessionInput(s).getShape() == (2, 3)
    assert it.getSessionInput(s).getDimensionType() == mnn.Tensor_DimensionType_Caffe
    assert it.getSessionInput(s).getDataType() is mnn.Halide_Type_Float
    out_z = it.getSessionOutput(s, "z")
    assert out_z.getShape() == (2, 3)  # known after createSession, before running
    tmp = mnn.Tensor((2, 3), mnn.Halide_Type_Float, x.ravel().tolist(),
                     mnn.Tensor_DimensionType_Caffe)
    assert inputs["x"].copyFrom(tmp)
    assert inputs["x2"].copyFrom(x2)  # an ndarray works too (it crashes the wheel)
    assert it.runSession(s) == 0
    for name in ("y", "z"):
        np.testing.assert_allclose(it.getSessionOutput(s, name).getNumpyData(), want[name],
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_z.getData(), want["z"].ravel(), rtol=1e-5, atol=1e-6)
    assert it.getSessionInfo(s, 4) == 2
    assert it.getSessionInfo(s, 0) > 0 and it.getSessionInfo(s, 1) > 0


def test_session_resize_and_callbacks(wheel_models):
    _, path = wheel_models("elementwise")
    it = mnn.Interpreter(path)
    s = it.createSession()
    for name in ("x", "x2"):
        it.resizeTensor(it.getSessionInput(s, name), (4, 3))
    assert it.getSessionInfo(s, 3) == 2
    assert it.resizeSession(s) is True
    assert it.getSessionOutput(s, "z").getShape() == (4, 3)
    x = RNG.standard_normal((4, 3)).astype(f32)
    it.getSessionInput(s, "x").fromNumpy(x)
    it.getSessionInput(s, "x2").fromNumpy(np.ones((4, 3), f32))
    seen = []

    def begin(tensors, info):
        seen.append((info.getName(), info.getType(), [t.getShape() for t in tensors]))
        return True

    def end(tensors, info):
        assert info.getTime() >= 0 and info.getFlops() > 0
        return True

    assert it.runSessionWithCallBackInfo(s, begin, end) == 0
    assert len(seen) >= 3 and all(shapes for _, _, shapes in seen)
    host = mnn.Tensor(it.getSessionOutput(s, "y"), mnn.Tensor_DimensionType_Caffe)
    it.getSessionOutput(s, "y").copyToHostTensor(host)
    assert host.getShape() == (4, 3)
    np.testing.assert_allclose(host.getNumpyData(), np.exp(np.tanh(x + ELEMENTWISE_B)),
                               rtol=1e-5)
    names = []
    assert it.runSessionWithCallBack(s, lambda t, n: names.append(n) or True,
                                     lambda t, n: False) == 11  # stopped after the first op
    assert len(names) == 1


def test_bad_files_raise_clear_errors(tmp_path):
    from mnn.format.errors import ModelFileError

    with pytest.raises(ModelFileError, match="cannot read"):
        _ours(str(tmp_path / "missing.mnn"))
    junk = tmp_path / "junk.mnn"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 300, np.uint8).tobytes())
    with pytest.raises(ModelFileError):
        mnn.Interpreter(str(junk))


def test_running_from_an_inner_tensor_and_saving_tensors(wheel_models):
    _, path = wheel_models("elementwise")
    r = RNG.standard_normal((2, 3)).astype(f32)
    tail = _ours(path, ["r"], ["y"])  # "r" is the tanh output inside the model
    np.testing.assert_allclose(tail.forward(r).read(), np.exp(r), rtol=1e-6)
    it = mnn.Interpreter(path)
    s = it.createSession({"saveTensors": ["r"]})
    assert list(it.getSessionOutputAll(s)) == ["y", "z", "r"]
    x = RNG.standard_normal((2, 3)).astype(f32)
    it.getSessionInput(s, "x").copyFrom(x)
    it.runSession(s)
    np.testing.assert_allclose(it.getSessionOutput(s, "r").getNumpyData(),
                               np.tanh(x + ELEMENTWISE_B), rtol=1e-5)
    with pytest.raises(MnnError, match="unknown config keys"):
        it.createSession({"numThreads": 2})


def test_new_input_shapes_recompute_shape_chains(wheel_models):
    _, path = wheel_models("shape_chain")
    m = _ours(path)
    for batch in (1, 3, 2, 3):
        x = RNG.standard_normal((batch, 3, 4)).astype(f32)
        want = wheel_module_outputs(path, [x])[0]
        np.testing.assert_allclose(want, x.reshape(batch, 12) * 2, rtol=1e-6)
        got = m.forward(x)
        assert got.shape == [batch, 12]
        np.testing.assert_allclose(got.read(), want, rtol=1e-6)
    it = mnn.Interpreter(path)
    s = it.createSession()
    it.resizeTensor(it.getSessionInput(s), (4, 3, 4))
    it.resizeSession(s)
    assert it.getSessionOutput(s).getShape() == (4, 12)
    x = RNG.standard_normal((4, 3, 4)).astype(f32)
    it.getSessionInput(s).copyFrom(x)
    it.runSession(s)
    np.testing.assert_allclose(it.getSessionOutput(s).getNumpyData(), x.reshape(4, 12) * 2,
                               rtol=1e-6)
    fixed = _ours(path, shape_mutable=False)
    with pytest.raises(MnnError, match="declares"):
        fixed.forward(np.zeros((2, 3, 4), f32))


def test_clones_in_threads_with_changing_shapes(wheel_models):
    from concurrent.futures import ThreadPoolExecutor

    _, path = wheel_models("shape_chain")
    m = _ours(path, thread_num=1)
    batches = [1 + (k * 7) % 6 for k in range(24)]  # more shapes than the plan cache keeps

    def run(batch):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 4)).astype(f32)
        return x, m.clone().forward(x).read()

    with ThreadPoolExecutor(2) as pool:
        for x, got in pool.map(run, batches):
            np.testing.assert_allclose(got, x.reshape(len(x), 12) * 2, rtol=1e-6)
