"""Normalizations (values and gradients) against torch and numpy."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(11)


def _grads_match(y, vars_, ty, tensors, rtol=1e-10, atol=1e-12):
    dy = RNG.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    grads = F.grad([y], vars_, [F.const(dy)])
    for g, t in zip(grads, tensors):
        np.testing.assert_allclose(g.read(), t.grad.numpy(), rtol=rtol, atol=atol)


def _pair(shape):
    a = RNG.standard_normal(shape)
    return F.const(a), torch.tensor(a, requires_grad=True)


def test_batch_norm_inference_and_grads_match_torch():
    xv, tx = _pair((2, 3, 4, 5))
    mv, tm = _pair(3)
    vv = F.const(np.abs(RNG.standard_normal(3)) + 0.5)
    gv, tg = _pair(3)
    bv, tb = _pair(3)
    y = F.batch_norm(xv, mv, vv, gv, bv, 1e-3)
    tv = torch.tensor(vv.read())
    ref = TF.batch_norm(tx.detach(), tm.detach(), tv, tg.detach(), tb.detach(), False, 0.0,
                        1e-3)
    np.testing.assert_allclose(y.read(), ref.numpy(), rtol=1e-12)
    # torch's batch_norm has no gradient for the running mean: differentiate its formula.
    c = (1, 3, 1, 1)
    ty = (tx - tm.view(c)) / torch.sqrt(tv.view(c) + 1e-3) * tg.view(c) + tb.view(c)
    _grads_match(y, [xv, mv, gv, bv], ty, [tx, tm, tg, tb])


@pytest.mark.parametrize("shape,axis", [((4, 7), -1), ((2, 3, 6), [-2, -1]), ((2, 3, 4, 5), 2)])
def test_layer_norm_and_grads_match_torch(shape, axis):
    xv, tx = _pair(shape)
    tail = shape[-2:] if axis in ([-2, -1], 2) else shape[-1:]
    gv, tg = _pair(tail)
    bv, tb = _pair(tail)
    y = F.layer_norm(xv, axis, gv, bv, 1e-5)
    ty = TF.layer_norm(tx, tail, tg, tb, 1e-5)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    _grads_match(y, [xv, gv, bv], ty, [tx, tg, tb], rtol=1e-8, atol=1e-10)


def test_instance_norm_and_grads_match_torch():
    xv, tx = _pair((2, 3, 5, 4))
    gv, tg = _pair(3)
    bv, tb = _pair(3)
    y = F.instance_norm(xv, gv, bv, 1e-5)
    ty = TF.instance_norm(tx, weight=tg, bias=tb, eps=1e-5)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    _grads_match(y, [xv, gv, bv], ty, [tx, tg, tb], rtol=1e-8, atol=1e-10)


def test_group_norm_and_grads_match_torch():
    xv, tx = _pair((2, 6, 3, 4))
    gv, tg = _pair(6)
    bv, tb = _pair(6)
    y = F.group_norm(xv, 3, gv, bv, 1e-5)
    ty = TF.group_norm(tx, 3, tg, tb, 1e-5)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    _grads_match(y, [xv, gv, bv], ty, [tx, tg, tb], rtol=1e-8, atol=1e-10)


def test_moments_matches_numpy():
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    mean, var = F.moments(F.const(x))
    np.testing.assert_allclose(mean.read(), x.mean((2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(var.read(), x.var((2, 3), keepdims=True), rtol=1e-5)
    mean, var = F.moments(F.const(x), [0, 2], keep_dims=False)
    np.testing.assert_allclose(mean.read(), x.mean((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(var.read(), x.var((0, 2)), rtol=1e-5)


def test_scale_matches_numpy():
    x = RNG.standard_normal((2, 3, 2, 2)).astype(np.float32)
    y = F.scale(F.const(x), 3, [1.0, 2.0, 3.0], [0.5, 0.0, -1.0])
    ref = x * np.array([1, 2, 3.0])[:, None, None] + np.array([0.5, 0, -1.0])[:, None, None]
    np.testing.assert_allclose(y.read(), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("across,shared", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_normalize_matches_numpy(across, shared):
    x = RNG.standard_normal((2, 3, 4, 5))
    scale = [2.0] if shared else [1.0, 2.0, 3.0]
    y = F.normalize(F.const(x), across, shared, 1e-6, scale)
    axes = (1, 2, 3) if across else (1,)
    ref = x / np.sqrt((x * x).sum(axes, keepdims=True) + 1e-6)
    ref = ref * (2.0 if shared else np.array(scale)[:, None, None])
    np.testing.assert_allclose(y.read(), ref, rtol=1e-12)


def test_norm_errors():
    x = F.const(np.ones((2, 3, 4), np.float32))
    with pytest.raises(F.OpError, match="channels"):
        F.batch_norm(x, [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(F.OpError, match="groups"):
        F.group_norm(x, 2)
    with pytest.raises(F.OpError, match="trailing"):
        F.layer_norm(x, [0, 2])
    with pytest.raises(F.OpError, match="floating"):
        F.instance_norm(F.const(np.ones((2, 3, 4), np.int32)))


def test_layer_norm_second_order_by_finite_differences(gradcheck):
    def fn(xv, gv):
        y = F.layer_norm(xv, -1, gv, None, 1e-3)
        (gx,) = F.grad([F.reduce_sum(y * y * y)], [xv])
        return gx

    gradcheck(fn, [RNG.standard_normal((2, 5)), RNG.standard_normal(5)], atol=1e-6)
