"""Pooling ops and their gradients against torch (CPU)."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(99)

# (N, C, H, W, kernel(h,w), stride(h,w), pad(h,w), ceil_mode)
CASES = [
    (1, 2, 9, 11, (3, 3), (2, 2), (1, 1), False),
    (2, 3, 9, 11, (3, 3), (2, 2), (1, 1), True),
    (2, 1, 8, 8, (2, 2), (2, 2), (0, 0), False),
    (1, 3, 7, 10, (3, 2), (1, 3), (1, 0), True),
    (3, 2, 6, 5, (2, 3), (3, 2), (1, 1), True),
]


def _x(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _mnn(pair):
    return (pair[1], pair[0])


def _grads(y, xv, ty, tx, dtype):
    dy = _x(ty.shape, dtype)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    return gx.read(), tx.grad.numpy()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_and_grad_match_torch(case, dtype):
    n, c, h, w, k, s, p, ceil = case
    x = _x((n, c, h, w), dtype)
    xv = F.const(x)
    y = F.max_pool(xv, _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.max_pool2d(tx, k, s, p, ceil_mode=ceil)
    np.testing.assert_array_equal(y.read(), ty.detach().numpy())
    np.testing.assert_allclose(*_grads(y, xv, ty, tx, dtype), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("include", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool_and_grad_match_torch(case, include, dtype):
    n, c, h, w, k, s, p, ceil = case
    x = _x((n, c, h, w), dtype)
    xv = F.const(x)
    y = F.avg_pool(xv, _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil,
                   count_include_pad=include)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.avg_pool2d(tx, k, s, p, ceil_mode=ceil, count_include_pad=include)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(*_grads(y, xv, ty, tx, dtype), rtol=1e-5, atol=1e-6)


def test_max_pool_ties_send_gradient_to_first_maximum_like_torch():
    x = np.array([[[[1, 1, 0], [1, 1, 0], [0, 0, 0]]]], np.float32)
    xv = F.const(x)
    y = F.max_pool(xv, (2, 2), (1, 1))
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.max_pool2d(tx, 2, 1)
    np.testing.assert_array_equal(*_grads(y, xv, ty, tx, np.float32))


def test_max_pool_same_padding_matches_torch_on_padded_input():
    x = _x((1, 2, 7, 8))
    y = F.max_pool(F.const(x), (3, 3), (2, 2), padding_mode=F.SAME)
    # SAME: out = ceil(7/2)=4, ceil(8/2)=4; pads h: (1, 1), w: (0, 1)
    ref = TF.max_pool2d(TF.pad(torch.tensor(x), (0, 1, 1, 1), value=-np.inf), 3, 2).numpy()
    np.testing.assert_array_equal(y.read(), ref)


@pytest.mark.parametrize("name", ["SAME", "same", "Valid"])
def test_padding_mode_by_name_is_the_enum(name):
    # Names as TensorFlow and ONNX users write them select the same mode as the enum;
    # the enum's result is checked against torch above.
    x = _x((1, 2, 7, 8))
    mode = getattr(F, name.upper())
    np.testing.assert_array_equal(
        F.max_pool(F.const(x), (3, 3), (2, 2), padding_mode=name).read(),
        F.max_pool(F.const(x), (3, 3), (2, 2), padding_mode=mode).read())
    w = _x((3, 2, 3, 3))
    np.testing.assert_array_equal(
        F.conv2d(F.const(x), F.const(w), None, padding_mode=name).read(),
        F.conv2d(F.const(x), F.const(w), None, padding_mode=mode).read())


@pytest.mark.parametrize("bad", ["full", 7, None])
def test_unknown_padding_mode_is_named_in_the_error(bad):
    with pytest.raises(F.OpError, match="padding_mode"):
        F.max_pool(F.const(_x((1, 1, 4, 4))), (2, 2), (2, 2), padding_mode=bad)


def test_asymmetric_pads_match_torch_on_padded_input():
    x = _x((2, 2, 6, 7))
    y = F.avg_pool(F.const(x), (2, 3), (2, 2), pads=(1, 0, 0, 1))  # top, left, bottom, right
    ref = TF.avg_pool2d(TF.pad(torch.tensor(x), (0, 1, 1, 0)), (3, 2), 2).numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("size", [(1, 1), (3, 4), (5, 7), (2, 9)])
def test_adaptive_pooling_and_grads_match_torch(size):
    x = _x((2, 3, 9, 7), np.float64)
    for ours, theirs in ((F.adaptive_avg_pool, TF.adaptive_avg_pool2d),
                         (F.adaptive_max_pool, TF.adaptive_max_pool2d)):
        xv = F.const(x)
        y = ours(xv, size)
        tx = torch.tensor(x, requires_grad=True)
        ty = theirs(tx, size)
        np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(*_grads(y, xv, ty, tx, np.float64), rtol=1e-12)


def test_global_pooling_matches_numpy():
    x = _x((2, 3, 5, 4))
    np.testing.assert_allclose(F.global_avg_pool(F.const(x)).read(),
                               x.mean(axis=(2, 3), keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(F.global_max_pool(F.const(x)).read(),
                                  x.max(axis=(2, 3), keepdims=True))


def test_lp_pool_matches_torch():
    x = _x((1, 2, 8, 7))
    y = F.lp_pool(F.const(x), (2, 3), (1, 2), p=3.0)
    ref = TF.lp_pool2d(torch.tensor(x).abs(), 3.0, (3, 2), (2, 1)).numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-6)


def test_avg_pool_second_order_by_finite_differences(gradcheck):
    def fn(xv):
        y = F.avg_pool(xv, (2, 2), (1, 2), pads=(1, 1), count_include_pad=False)
        (gx,) = F.grad([F.reduce_sum(y * y)], [xv])
        return gx

    gradcheck(fn, [RNG.standard_normal((1, 2, 5, 4))], atol=1e-6)


def test_pooling_errors_name_the_problem():
    x = F.const(_x((1, 1, 4, 4)))
    with pytest.raises(F.OpError, match="smaller than the kernel"):
        F.max_pool(x, (2, 2), (1, 1), pads=(2, 2))
    with pytest.raises(F.OpError, match="empty output"):
        F.max_pool(x, (5, 5), (1, 1))
    with pytest.raises(F.OpError, match="4-D"):
        F.avg_pool(F.const(_x((4, 4))), (2, 2), (1, 1))
    with pytest.raises(F.OpError, match="float32 or float64"):
        F.max_pool(F.const(np.ones((1, 1, 4, 4), np.int32)), (2, 2), (1, 1))
