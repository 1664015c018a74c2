"""A skip connection added in the convolution kernel's store, ``clip(conv + bias + skip,
lo, hi)``: Winograd's output transform and the direct kernel's tile store against torch
(float64 reference), their argument checks, and residual blocks ``relu(conv + skip)``
that the evaluation fuses into them (or not, where the store does not apply).
"""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn._cython import sgemm
from mnn._cython import winograd as wk
from mnn.express.ops import nn_conv

RNG = np.random.default_rng(77)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _reference(x, w, b, stride, pads, skip, lo, hi):
    """clip(conv2d(x) + b + skip, lo, hi) in float64 and the largest finite value before
    the clip (the scale the kernels round to); ``pads`` = (top, left, bottom, right)."""
    t = TF.pad(torch.tensor(x, dtype=torch.float64), (pads[1], pads[3], pads[0], pads[2]))
    y = TF.conv2d(t, torch.tensor(w, dtype=torch.float64), torch.tensor(b, dtype=torch.float64),
                  stride) + torch.tensor(skip, dtype=torch.float64)
    finite = y[torch.isfinite(y)]
    return torch.clamp(y, lo, hi).numpy(), float(finite.abs().max())


def _check(got, want, scale):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


# (N, C, O, H, W, pads (top, left, bottom, right), m)
WINO_CASES = [
    (2, 16, 16, 5, 5, (1, 1, 1, 1), 2),
    (1, 32, 40, 7, 7, (1, 1, 1, 1), 2),      # one image: the threads share its block
    (3, 17, 24, 13, 11, (1, 1, 1, 1), 4),    # edge tiles cut off
    (1, 20, 33, 26, 24, (0, 1, 2, 1), 4),    # O not a multiple of the strips
    (5, 16, 16, 12, 12, (2, 0, 1, 2), 4),    # threads take whole blocks
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("clamp", [(0.0, np.inf), (-0.3, 0.4)])
@pytest.mark.parametrize("n,c,o,h,w,pads,m", WINO_CASES)
def test_winograd_adds_the_skip_before_the_clamp(n, c, o, h, w, pads, m, clamp, threads):
    x, wt, b = _data(n, c, h, w), _data(o, c, 3, 3), _data(o)
    oh, ow = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
    skip = _data(n, o, oh, ow)
    skip[0, 0, 0, :2] = [np.nan, np.inf]
    y = np.full((n, o, oh, ow), np.nan, np.float32)
    work = np.empty(wk.plan(n, c, o, oh, ow, m, threads)[1], np.float32)
    ub = wk.transform_weight(wt, nn_conv._WINO_G[m])
    wk.conv(x, ub, b, y, m, pads[0], pads[1], work, threads, *clamp, skip)
    want, scale = _reference(x, wt, b, 1, pads, skip, *clamp)
    assert np.isnan(y[0, 0, 0, 0]) and y[0, 0, 0, 1] == clamp[1]
    _check(y, want, scale)


# (N, C, H, W, O, k, stride, pads (top, left, bottom, right)): the direct kernel's 14-,
# 8- and 7-pixel tiles, a partial slab of channels (45 = 32 + 13), two rows of 7 per
# tile (7x7 outputs), stride 2, several images.
DIRECT_CASES = [
    (1, 200, 7, 7, 45, 1, 1, (0, 0, 0, 0)),
    (2, 64, 14, 14, 70, 3, 2, (1, 1, 1, 1)),
    (1, 16, 11, 13, 40, 3, 1, (1, 1, 1, 1)),
    (1, 40, 9, 9, 37, 1, 1, (0, 0, 0, 0)),
    # slabs of 24 and 16 lanes or fewer (sgemm_kernel.h's HALF tiles), also in chunks of
    # depth (K > 1024: partial sums kept between chunks)
    (1, 96, 9, 9, 24, 1, 1, (0, 0, 0, 0)),
    (2, 24, 8, 8, 56, 3, 1, (1, 1, 1, 1)),
    (1, 1100, 4, 5, 20, 1, 1, (0, 0, 0, 0)),
    (1, 1100, 5, 5, 8, 1, 1, (0, 0, 0, 0)),
]


@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("clamp", [(0.0, np.inf), (-0.3, 0.4)])
@pytest.mark.parametrize("n,c,h,w,o,k,s,pads", DIRECT_CASES)
def test_direct_kernel_adds_the_skip_before_the_clamp(n, c, h, w, o, k, s, pads, clamp,
                                                      threads):
    x, wt, b = _data(n, c, h, w), _data(o, c, k, k), _data(o)
    oh = (h + pads[0] + pads[2] - k) // s + 1
    ow = (w + pads[1] + pads[3] - k) // s + 1
    skip = _data(n, o, oh * ow)
    skip[0, o - 1, :2] = [np.nan, -np.inf]
    y = np.full((n, o, oh * ow), np.nan, np.float32)
    sgemm.conv_direct_images(sgemm.pack_weight_direct(wt.reshape(o, -1)), o, x, y, b, k, k,
                             oh, ow, s, s, pads[0], pads[1], 1, 1, *clamp, threads,
                             None, skip)
    want, scale = _reference(x, wt, b, s, pads, skip.reshape(n, o, oh, ow), *clamp)
    assert np.isnan(y[0, o - 1, 0]) and y[0, o - 1, 1] == clamp[0]
    _check(y.reshape(want.shape), want, scale)


def test_kernels_reject_a_skip_unlike_the_output():
    x, wt, b = _data(1, 16, 6, 6), _data(16, 16, 3, 3), _data(16)
    y = np.empty((1, 16, 6, 6), np.float32)
    work = np.empty(wk.plan(1, 16, 16, 6, 6, 2, 1)[1], np.float32)
    ub = wk.transform_weight(wt, nn_conv._WINO_G[2])
    with pytest.raises(ValueError, match="skip"):
        wk.conv(x, ub, b, y, 2, 1, 1, work, 1, 0.0, np.inf, np.zeros((1, 16, 6, 5), np.float32))
    if not sgemm.direct_available():
        return
    packed = sgemm.pack_weight_direct(wt.reshape(16, -1))
    args = (packed, 16, x, y.reshape(1, 16, 36), b, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 0.0, np.inf,
            1, None)
    with pytest.raises(ValueError, match="skip"):
        sgemm.conv_direct_images(*args, np.zeros((1, 16, 35), np.float32))
    with pytest.raises(ValueError, match="skip"):   # the output's shape, not its strides
        sgemm.conv_direct_images(*args, np.zeros((1, 32, 36), np.float32)[:, ::2])


@pytest.fixture
def stores(returns_of):
    """The outcome of each nn_conv.conv2d_add_clamp call: True when the kernel added."""
    return returns_of(nn_conv, "conv2d_add_clamp")


# (input shape, weight shape, stride, pads, activation of the conv, kernel adds the skip)
BLOCKS = [
    ((2, 16, 20, 20), (16, 16, 3, 3), 1, 1, None, True),     # Winograd
    ((1, 64, 14, 14), (96, 64, 3, 3), 2, 1, None, True),     # direct kernel
    ((1, 160, 7, 7), (40, 160, 1, 1), 1, 0, None, True),     # direct kernel, 1x1
    ((1, 8, 12, 12), (8, 8, 1, 1), 1, 0, None, False),       # packed GEMM: added after
    ((2, 16, 20, 20), (16, 16, 3, 3), 1, 1, "relu", False),  # relu before the sum
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,stride,pad,act,in_store", BLOCKS)
def test_residual_block_matches_torch(x_shape, w_shape, stride, pad, act, in_store, threads,
                                      stores):
    if not sgemm.direct_available() and w_shape[1] >= 64:
        in_store = False
    wt, b = _data(*w_shape) * 0.2, _data(w_shape[0])
    x = F.placeholder(list(x_shape))
    side = (x_shape[2] + 2 * pad - w_shape[2]) // stride + 1
    out_shape = (x_shape[0], w_shape[0], side, side)
    skip = F.placeholder(list(out_shape))
    # (no reference to the conv's own Var: the evaluation fuses only values nobody holds)
    y = F.relu(F.conv2d(x, F.const(wt), F.const(b), (stride, stride), (pad, pad),
                        activation=act) + skip)
    F.set_thread_number(threads)
    try:
        for _ in range(2):
            xd, sd = _data(*x_shape), _data(*out_shape)
            x.write(xd)
            skip.write(sd)
            t = TF.conv2d(torch.tensor(xd, dtype=torch.float64),
                          torch.tensor(wt, dtype=torch.float64),
                          torch.tensor(b, dtype=torch.float64), stride, pad)
            if act == "relu":
                t = torch.relu(t)
            want = torch.relu(t + torch.tensor(sd, dtype=torch.float64))
            _check(y.read(), want.numpy(), float(want.abs().max()))
    finally:
        F.set_thread_number(1)
    if act is None:
        assert stores == [in_store] * 2
    else:
        assert not any(stores)
