"""Pooling kernels on random geometries (odd sizes, N > 1, ceil mode, pads, dilation,
stride > kernel, kernel = input, NaNs and infinities) against torch, forward and backward,
and the kernels' own argument checks."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn._cython import pool as pool_k
from mnn._cython import pool_table as table_k


def _out(size, k, s, p, d, ceil):
    # torch's output size; in ceil mode the last window starts inside the input or its
    # begin padding.
    span = size + 2 * p - d * (k - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // s) if ceil else span // s) + 1
    return out - 1 if ceil and (out - 1) * s >= size + p else out


def _padding_only(size, k, s, p, d, out):
    return any(all(not 0 <= o * s - p + j * d < size for j in range(k)) for o in range(out))


def _geometry(rng):
    """A random (shape, kernel, stride, pad, dilation, ceil) torch accepts, (h, w) pairs."""
    while True:
        h, w = (int(v) for v in rng.integers(1, 14, 2))
        k = tuple(int(v) for v in rng.integers(1, 5, 2))
        s = tuple(int(v) for v in rng.integers(1, 5, 2))
        d = tuple(int(v) for v in rng.choice([1, 1, 2, 3], 2))
        p = tuple(int(rng.integers(0, k[a] // 2 + 1)) for a in range(2))
        ceil = bool(rng.integers(0, 2))
        out = [_out((h, w)[a], k[a], s[a], p[a], d[a], ceil) for a in range(2)]
        # torch reads outside the plane for a window made only of padding (possible with
        # dilation): leave those out (we give -inf and pass no gradient).
        if min(out) >= 1 and not _padding_only(h, k[0], s[0], p[0], d[0], out[0]) \
                and not _padding_only(w, k[1], s[1], p[1], d[1], out[1]):
            n, c = (int(v) for v in rng.integers(1, 4, 2))
            return (n, c, h, w), k, s, p, d, ceil


def _mnn(pair):
    return (pair[1], pair[0])


def _data(rng, shape, dtype, specials):
    x = rng.standard_normal(shape).astype(dtype)
    if specials:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, max(1, flat.size // 15))
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0], picks.size)
    # Ties: a few windows of equal values, where the first maximum must win.
    x[..., ::3, ::2] = np.round(x[..., ::3, ::2])
    return x


@pytest.mark.parametrize("seed", range(40))
def test_random_max_pool_geometry_matches_torch(seed):
    rng = np.random.default_rng(1000 + seed)
    shape, k, s, p, d, ceil = _geometry(rng)
    dtype = np.float64 if seed % 2 else np.float32
    x = _data(rng, shape, dtype, specials=seed % 3 == 0)
    xv = F.const(x)
    y = F.max_pool(xv, _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil, dilation=_mnn(d))
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.max_pool2d(tx, k, s, p, d, ceil)
    np.testing.assert_array_equal(y.read(), ty.detach().numpy())
    dy = rng.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", range(30))
def test_random_avg_pool_geometry_matches_torch(seed):
    rng = np.random.default_rng(2000 + seed)
    shape, k, s, p, _, ceil = _geometry(rng)  # torch's avg_pool2d has no dilation
    include = bool(seed % 2)
    x = _data(rng, shape, np.float64, specials=False)
    xv = F.const(x)
    y = F.avg_pool(xv, _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil,
                   count_include_pad=include)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.avg_pool2d(tx, k, s, p, ceil, include)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    dy = rng.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(1, 3, 1, 1), (2, 5, 7, 1), (3, 2, 1, 9), (2, 4, 7, 7),
                                   (1, 70, 5, 9), (2, 3, 4, 4), (1, 5, 8, 4), (1, 4, 3, 11),
                                   (2, 3, 10, 10)])
def test_global_pooling_with_nans_matches_torch(shape):
    # (planes of 16 values and more take include/plane_reduce.h's vectors with AVX-512:
    # whole vectors, a tail, both)
    rng = np.random.default_rng(5)
    x = _data(rng, shape, np.float32, specials=True)
    tx = torch.tensor(x)
    np.testing.assert_array_equal(F.global_max_pool(F.const(x)).read(),
                                  tx.amax((2, 3), keepdim=True).numpy())
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(F.global_avg_pool(F.const(x)).read(),
                               TF.adaptive_avg_pool2d(torch.tensor(x), 1).numpy(),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 16, 33, 35), (1, 3, 3, 40), (1, 2, 9, 5)])
def test_pooling_runs_the_same_at_two_and_three_threads(shape):
    # The threads take bands of output rows of every plane (1 to 5 rows here).
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(np.float32)
    results = []
    before = F.get_thread_number()
    for n in (1, 2, 3):
        F.set_thread_number(n)
        try:
            xv = F.const(x)
            y = F.max_pool(xv, (3, 3), (2, 2), pads=(1, 1))
            (g,) = F.grad([y], [xv], [F.const(np.ones(y.shape, np.float32))])
            a = F.avg_pool(xv, (2, 2), (2, 2), ceil_mode=True)
            results.append([y.read(), g.read(), a.read(), F.global_avg_pool(xv).read()])
        finally:
            F.set_thread_number(before)
    for one, *more in zip(*results):
        for other in more:
            np.testing.assert_array_equal(one, other)


def test_kernels_reject_inconsistent_arguments():
    x = np.zeros((1, 2, 5, 5), np.float32)
    y = np.zeros((1, 2, 2, 2), np.float32)
    none = np.ones(0, np.float32)
    with pytest.raises(ValueError, match="geometry"):
        pool_k.pool_forward_regular(x, y, True, 0, 2, 2, 2, 0, 0, 1, 1, none, none, 1)
    with pytest.raises(ValueError, match="batch and channels"):
        pool_k.pool_forward_regular(x, np.zeros((1, 3, 2, 2), np.float32), True, 2, 2, 2,
                                    2, 0, 0, 1, 1, none, none, 1)
    with pytest.raises(ValueError, match="divisor"):
        pool_k.pool_forward_regular(x, y, False, 2, 2, 2, 2, 0, 0, 1, 1, none, none, 1)
    with pytest.raises(ValueError, match="dx must have"):
        pool_k.max_backward_regular(x, y, np.zeros((1, 2, 5, 4), np.float32), 2, 2, 2, 2,
                                    0, 0, 1, 1, 1)
    with pytest.raises(ValueError, match="one output per plane"):
        pool_k.global_forward(x.reshape(2, 25), np.zeros(3, np.float32), True, 1)
    win = np.array([[0, 3], [2, 6]], np.int64)  # 6 > the axis size 5
    one = np.array([[0], [1]], np.int64)
    x5, y5 = x.reshape(1, 2, 1, 5, 5), np.zeros((1, 2, 1, 2, 2), np.float32)
    with pytest.raises(ValueError, match="outside"):
        table_k.max_forward(x5, y5, None, (one, win, win), (1, 1, 1), 1)
    with pytest.raises(ValueError, match="does not match"):
        table_k.max_forward(x5, y5, None, (one, one, win), (1, 1, 1), 1)
    ok = np.array([[0, 2], [2, 4]], np.int64)
    with pytest.raises(ValueError, match="step"):
        table_k.max_forward(x5, y5, None, (one, ok, ok), (1, 0, 1), 1)
