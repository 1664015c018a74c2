"""Layers against torch: forward values and gradients from identical weights."""
import numpy as np
import pytest
import torch

import mnn
import mnn.expr as F
from mnn import nn

RNG = np.random.default_rng(0)


def _grads(loss, params):
    return [g.read() for g in F.grad(loss, params)]


def test_linear_matches_torch_and_uses_mnn_init():
    nn.init.seed(1)
    layer = nn.linear(6, 5)
    w = layer.weight.read()
    assert w.shape == (5, 6) and layer.bias.shape == [1, 5]
    # MNN's xavier: uniform within sqrt(3 / fan_in); biases start at zero.
    assert np.abs(w).max() <= np.sqrt(3.0 / 6) and np.abs(w).max() > 0.5 * np.sqrt(3.0 / 6)
    assert not layer.bias.read().any()
    layer.bias.write(RNG.standard_normal((1, 5)).astype(np.float32))
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    tl = torch.nn.Linear(6, 5)
    with torch.no_grad():
        tl.weight.copy_(torch.from_numpy(w))
        tl.bias.copy_(torch.from_numpy(layer.bias.read()[0]))
    tx = torch.from_numpy(x).requires_grad_()
    ty = tl(tx)
    (ty ** 2).sum().backward()
    xv = F.const(x)
    y = layer(xv)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    gw, gb, gx = _grads(F.reduce_sum(F.square(y)), [layer.weight, layer.bias, xv])
    np.testing.assert_allclose(gw, tl.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb[0], tl.bias.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_linear_rejects_wrong_width():
    with pytest.raises(mnn.expr.MnnError, match="last dimension 6"):
        nn.linear(6, 2)(F.const(np.zeros((2, 5), np.float32)))


@pytest.mark.parametrize("dims", [2, 4])
def test_batch_norm_training_and_inference_match_torch(dims):
    c = 3
    shape = (8, c) if dims == 2 else (4, c, 5, 5)
    x = (RNG.standard_normal(shape) * 2 + 1).astype(np.float32)
    bn = nn.batch_norm(c, dims=dims, momentum=0.9, epsilon=1e-3)
    scale = RNG.standard_normal(c).astype(np.float32)
    bias = RNG.standard_normal(c).astype(np.float32)
    stat = [1, c] + [1] * (dims - 2)
    bn.scale.write(scale.reshape(stat))
    bn.bias.write(bias.reshape(stat))
    tb = (torch.nn.BatchNorm1d if dims == 2 else torch.nn.BatchNorm2d)(
        c, eps=1e-3, momentum=0.1)  # torch's momentum is the weight of the new value
    with torch.no_grad():
        tb.weight.copy_(torch.from_numpy(scale))
        tb.bias.copy_(torch.from_numpy(bias))
        tb.running_mean.zero_()
        tb.running_var.zero_()  # MNN starts the running variance at zero
    tx = torch.from_numpy(x).requires_grad_()
    ty = tb(tx)
    (ty * ty * torch.arange(ty.numel()).reshape(ty.shape)).sum().backward()
    xv = F.const(x)
    y = bn(xv)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    weights = F.const(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    gx, gs, gb = _grads(F.reduce_sum(y * y * weights), [xv, bn.scale, bn.bias])
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gs.ravel(), tb.weight.grad.numpy(), rtol=1e-3)
    np.testing.assert_allclose(gb.ravel(), tb.bias.grad.numpy(), rtol=1e-3)
    # Running statistics: torch keeps the unbiased variance, MNN the biased one.
    n = x.size // c
    np.testing.assert_allclose(bn.running_mean.read().ravel(), tb.running_mean.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_variance.read().ravel() * n / (n - 1),
                               tb.running_var.numpy(), rtol=1e-4)
    bn.train(False)
    tb.eval()
    # Give torch the same (biased) running variance, then compare inference.
    with torch.no_grad():
        tb.running_var.copy_(torch.from_numpy(bn.running_variance.read().ravel()))
    np.testing.assert_allclose(bn(F.const(x)).read(), tb(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-4)


def test_batch_norm_checks_channels():
    with pytest.raises(mnn.expr.MnnError, match="3 channels"):
        nn.batch_norm(3)(F.const(np.zeros((1, 2, 4, 4), np.float32)))


def test_layer_norm_matches_torch():
    x = RNG.standard_normal((3, 4, 6)).astype(np.float32)
    ln = nn.layer_norm([4, 6], epsilon=1e-5)
    w = RNG.standard_normal((4, 6)).astype(np.float32)
    b = RNG.standard_normal((4, 6)).astype(np.float32)
    ln.weight.write(w)
    ln.bias.write(b)
    tln = torch.nn.LayerNorm([4, 6], eps=1e-5)
    with torch.no_grad():
        tln.weight.copy_(torch.from_numpy(w))
        tln.bias.copy_(torch.from_numpy(b))
    tx = torch.from_numpy(x).requires_grad_()
    ty = tln(tx)
    (ty ** 3).sum().backward()
    xv = F.const(x)
    y = ln(xv)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    gx, gw, gb = _grads(F.reduce_sum(y * y * y), [xv, ln.weight, ln.bias])
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gw, tln.weight.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gb, tln.bias.grad.numpy(), rtol=1e-3, atol=1e-3)


def test_embedding_matches_torch_and_checks_range():
    emb = nn.embedding(7, 3)
    table = emb.weight.read()
    idx = np.array([[0, 6, 2], [2, 2, 5]], np.int32)
    te = torch.nn.Embedding(7, 3)
    with torch.no_grad():
        te.weight.copy_(torch.from_numpy(table))
    ty = te(torch.from_numpy(idx).long())
    (ty * ty).sum().backward()
    y = emb(F.const(idx))
    np.testing.assert_allclose(y.read(), ty.detach().numpy())
    (gw,) = _grads(F.reduce_sum(y * y), [emb.weight])
    np.testing.assert_allclose(gw, te.weight.grad.numpy(), rtol=1e-5)
    with pytest.raises(mnn.expr.MnnError, match="out of range"):
        emb(F.const(np.array([7], np.int32)))
    with pytest.raises(mnn.expr.MnnError, match="integer"):
        emb(F.const(np.array([1.0], np.float32)))


def test_dropout_drops_in_training_only():
    nn.init.seed(3)
    d = nn.dropout(0.25)
    x = np.ones((200, 100), np.float32)
    y = d(F.const(x)).read()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    d.train(False)
    np.testing.assert_array_equal(d(F.const(x)).read(), x)
    with pytest.raises(mnn.expr.MnnError, match=r"\[0, 1\)"):
        nn.dropout(1.0)


def test_layer_norm_without_affine_matches_torch():
    x = RNG.standard_normal((2, 3, 5))
    ln = nn.layer_norm(5, elementwise_affine=False)
    assert ln.parameters == []
    tx = torch.from_numpy(x).requires_grad_()
    ty = torch.nn.functional.layer_norm(tx, [5])
    (ty ** 3).sum().backward()
    xv = F.const(x)
    y = ln(xv)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-9, atol=1e-10)
    (gx,) = _grads(F.reduce_sum(y * y * y), [xv])
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-7, atol=1e-8)
