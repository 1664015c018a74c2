"""Saving and restoring parameters, and exporting a trained network for inference: the
file runs in mnn's loader and in the real MNN wheel with the same outputs."""
import contextlib
import io

import numpy as np
import pytest

import mnn.expr as F
from mnn import nn, optim

RNG = np.random.default_rng(21)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.conv(1, 4, [3, 3], padding=[1, 1])
        self.bn = nn.batch_norm(4)
        self.fc = nn.linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool(F.relu(self.bn(self.conv(x))), [2, 2], [2, 2])
        return self.fc(F.reshape(x, [0, -1]))


def _trained():
    nn.init.seed(5)
    net = Small()
    opt = optim.SGD(net, 0.05, 0.9)
    x = RNG.standard_normal((8, 1, 8, 8)).astype(np.float32)
    y = RNG.integers(0, 3, 8).astype(np.int32)
    for _ in range(3):
        opt.step(nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y)))
    net.train(False)
    return net


def test_parameters_round_trip(tmp_path):
    net = _trained()
    path = str(tmp_path / "params.mnn")
    F.save(net.parameters, path)
    loaded = F.load_as_list(path)
    assert len(loaded) == len(net.parameters)
    fresh = Small()
    fresh.load_parameters(loaded)
    fresh.train(False)
    for p, q in zip(net.parameters, fresh.parameters):
        np.testing.assert_array_equal(p.read(), q.read())
    x = F.const(RNG.standard_normal((2, 1, 8, 8)).astype(np.float32))
    np.testing.assert_allclose(fresh(x).read(), net(x).read(), rtol=1e-6)
    # Trainable parameters stay trainable after loading: training can go on.
    assert fresh.conv.weight.op_type == "trainable"


def _export(net, path):
    image = F.placeholder([1, 1, 8, 8], F.NCHW)
    image.name = "image"
    out = net(image)
    out.name = "logits"
    F.save([out], path)


def test_exported_inference_model_runs_in_mnn_and_in_the_real_wheel(tmp_path):
    net = _trained()
    path = str(tmp_path / "small.mnn")
    _export(net, path)
    x = RNG.standard_normal((1, 1, 8, 8)).astype(np.float32)
    expect = net(F.const(x)).read()

    module = nn.load_module_from_file(path, ["image"], ["logits"])
    np.testing.assert_allclose(np.asarray(module(F.const(x))), expect, rtol=1e-4, atol=1e-5)

    with contextlib.redirect_stdout(io.StringIO()):
        MNN = pytest.importorskip("MNN")
    wheel = MNN.nn.load_module_from_file(path, ["image"], ["logits"])
    wx = MNN.expr.const(x.ravel().tolist(), [1, 1, 8, 8], MNN.expr.NCHW)
    got = wheel.forward([wx])[0]
    got = np.array(MNN.expr.convert(got, MNN.expr.NCHW).read(), copy=True)
    np.testing.assert_allclose(got.reshape(expect.shape), expect, rtol=1e-3, atol=1e-4)
