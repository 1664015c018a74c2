"""Whole models exported from torch (random weights) through the converter.

Oracle: onnxruntime on the same ONNX file, relative L2 error 1e-4; through the .mnn file
(our writer -> our reader) too, and weight-quantised files within a looser bound.
"""
import os

import numpy as np
import pytest
from models import MODELS, example_inputs, export

from converter.cli import main
from converter.onnx import load_onnx
from mnn.express.io import load_as_dict


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    return {name: export(name, str(folder)) for name in MODELS}


def _reference(path, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def _rel(got, want):
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def _feeds(name):
    return dict(zip(MODELS[name]["inputs"], example_inputs(name, seed=3)))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_express_graph_matches_onnxruntime(exported, name):
    feeds = _feeds(name)
    want = _reference(exported[name], feeds)
    got = load_onnx(exported[name]).run(feeds)["output"]
    assert got.shape == want.shape
    assert _rel(got, want) < 1e-4


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mnn_file_matches_onnxruntime(exported, name, tmp_path):
    feeds = _feeds(name)
    want = _reference(exported[name], feeds)
    dst = str(tmp_path / f"{name}.mnn")
    assert main(["-f", "ONNX", "--modelFile", exported[name], "--MNNModel", dst]) == 0
    var_map = load_as_dict(dst)
    for key, value in feeds.items():
        var_map[key].write(value)
    assert _rel(var_map["output"].read(), want) < 1e-4


def test_loop_count_and_branch_follow_the_inputs(exported):
    # The scripted model's Loop runs n times and its If picks a branch from the data.
    graph = load_onnx(exported["loop_if"])
    for n, scale in ((0, 1.0), (1, 1.0), (5, -1.0)):
        x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * scale
        feeds = {"x": x, "n": np.array(n, np.int64)}
        want = _reference(exported["loop_if"], feeds)
        np.testing.assert_allclose(graph.run(feeds)["output"], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bits,bound", [(8, 0.01), (4, 0.15)])
def test_weight_quantised_mobilenet(exported, tmp_path, bits, bound):
    name = "mobilenet_v2"
    feeds = _feeds(name)
    want = _reference(exported[name], feeds)
    full, quant = str(tmp_path / "f.mnn"), str(tmp_path / "q.mnn")
    assert main(["-f", "ONNX", "--modelFile", exported[name], "--MNNModel", full]) == 0
    assert main(["-f", "ONNX", "--modelFile", exported[name], "--MNNModel", quant,
                 "--weightQuantBits", str(bits)]) == 0
    # Conv and fully connected weights become int codebooks (float32: 4 bytes each).
    assert os.path.getsize(quant) < os.path.getsize(full) * (0.3 if bits == 8 else 0.16)
    var_map = load_as_dict(quant)
    var_map["input"].write(feeds["input"])
    assert _rel(var_map["output"].read(), want) < bound


def test_real_wheel_runs_our_mobilenet_file(exported, tmp_path):
    # Interop: the real MNN wheel loads the converted (BN-folded, relu6-fused) file.
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        import MNN
    feeds = _feeds("mobilenet_v2")
    want = _reference(exported["mobilenet_v2"], feeds)
    dst = str(tmp_path / "m.mnn")
    assert main(["-f", "ONNX", "--modelFile", exported["mobilenet_v2"], "--MNNModel", dst]) == 0
    module = MNN.nn.load_module_from_file(dst, ["input"], ["output"])
    x = feeds["input"]
    out = module.forward([MNN.expr.const(x, list(x.shape), MNN.expr.NCHW)])
    got = np.array(out[0].read(), copy=True)
    assert _rel(got, want) < 1e-4
