"""Winograd 3x3 stride-1 convolution (F(4x4,3x3) and F(2x2,3x3), float32) against torch.

torch's conv2d in float64 on the same float32 data is the reference. Winograd rounds to
about 1e-5 of the output's scale, also on outputs near zero, so the tolerance is relative
to the largest output (the brief's 1e-4 of a direct convolution) plus a relative part.
"""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn._cython import winograd as wk
from mnn.express import get_thread_number, set_thread_number
from mnn.express.ops import nn_conv

RNG = np.random.default_rng(2024)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old = get_thread_number()
    set_thread_number(request.param)
    yield request.param
    set_thread_number(old)


def _reference(x, w, b, pads, act=None):
    """torch float64 conv2d; ``pads`` = (top, left, bottom, right)."""
    tx = TF.pad(torch.tensor(x, dtype=torch.float64), (pads[1], pads[3], pads[0], pads[2]))
    ref = TF.conv2d(tx, torch.tensor(w, dtype=torch.float64),
                    None if b is None else torch.tensor(b, dtype=torch.float64))
    if act == "relu":
        ref = TF.relu(ref)
    elif act == "relu6":
        ref = TF.relu6(ref)
    return ref.numpy()


def _check(y, ref):
    scale = float(np.abs(ref).max())
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4 * scale)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# (N, C, O, H, W, pads (top, left, bottom, right), tile size _use_winograd picks)
CASES = [
    (2, 16, 16, 5, 5, (1, 1, 1, 1), 2),       # 2x2 tiles of 4: F(2x2) has 9 per image
    (3, 17, 24, 13, 11, (1, 1, 1, 1), 4),     # odd sizes, edge tiles cut off, batch 3
    (2, 32, 40, 7, 7, (1, 1, 1, 1), 2),       # ResNet's 7x7 shape at small width
    (2, 16, 33, 9, 10, (0, 0, 0, 0), 4),      # no pads; O not a multiple of the strips
    (1, 20, 17, 26, 24, (0, 1, 2, 1), 4),     # asymmetric pads
    (5, 16, 16, 12, 12, (2, 0, 1, 2), 4),     # many images: threads take whole blocks
    (1, 24, 48, 64, 61, (1, 1, 1, 1), 4),     # several blocks of tiles per image
]


@pytest.mark.parametrize("n,c,o,h,w,pads,m", CASES)
def test_winograd_conv_matches_torch(threads, n, c, o, h, w, pads, m):
    x, wt, b = _data(n, c, h, w), _data(o, c, 3, 3), _data(o)
    assert nn_conv._use_winograd(x.shape, wt.shape, (1, 1), (1, 1), 1, x.dtype) == m
    wv = F.const(wt)
    ref = _reference(x, wt, b, pads)
    for _ in range(2):   # the second run reads the cached transformed weight
        y = F.conv2d(F.const(x), wv, F.const(b), padding=pads)
        _check(y.read(), ref)


@pytest.mark.parametrize("act", ["relu", "relu6"])
@pytest.mark.parametrize("size", [6, 20])   # F(2x2) and F(4x4)
def test_winograd_fused_activation_and_no_bias(threads, act, size):
    x, wt = _data(2, 16, size, size), _data(24, 16, 3, 3)
    y = F.conv2d(F.const(x), F.const(wt), None, padding=(1, 1), activation=act)
    _check(y.read(), _reference(x, wt, None, (1, 1, 1, 1), act))


@pytest.mark.parametrize("n,size,m", [(1, 14, 4), (2, 7, 2)])
def test_winograd_512_channels_stays_accurate(n, size, m):
    # Many channels sum many rounded products: N(0, 1) data, weights scaled as a trained
    # network's (output of unit scale), against the float64 reference.
    x = _data(n, 512, size, size)
    wt = (_data(512, 512, 3, 3) / np.sqrt(9 * 512)).astype(np.float32)
    b = _data(512)
    assert nn_conv._use_winograd(x.shape, wt.shape, (1, 1), (1, 1), 1, x.dtype) == m
    y = F.conv2d(F.const(x), F.const(wt), F.const(b), padding=(1, 1)).read()
    ref = _reference(x, wt, b, (1, 1, 1, 1))
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max()


def test_winograd_is_not_used_where_it_does_not_apply():
    shape = (1, 32, 28, 28)
    assert nn_conv._use_winograd(shape, (32, 32, 3, 3), (2, 2), (1, 1), 1) == 0
    assert nn_conv._use_winograd(shape, (32, 32, 3, 3), (1, 1), (2, 2), 1) == 0
    assert nn_conv._use_winograd(shape, (32, 16, 3, 3), (1, 1), (1, 1), 2) == 0
    assert nn_conv._use_winograd(shape, (32, 32, 3, 3), (1, 1), (1, 1), 1, np.float64) == 0
    assert nn_conv._use_winograd((1, 32, 3, 3), (32, 32, 3, 3), (1, 1), (1, 1), 1) == 0
    # one small image: the direct kernel (in a model the weights come from memory)
    assert nn_conv._use_winograd((1, 512, 7, 7), (512, 512, 3, 3), (1, 1), (1, 1), 1) == 0


def _kernel_args(n=1, c=16, o=16, h=8, w=8, m=4, nthreads=1):
    x = _data(n, c, h, w)
    u = np.zeros(((m + 2) ** 2, o, c), np.float32)
    ub = wk.pack_weight(u)
    y = np.empty((n, o, h, w), np.float32)
    _, size = wk.plan(n, c, o, h, w, m, nthreads)
    return x, ub, np.zeros(o, np.float32), y, np.empty(size, np.float32)


def test_winograd_kernel_rejects_mismatched_buffers():
    x, ub, b, y, work = _kernel_args()
    with pytest.raises(ValueError, match="scratch"):
        wk.conv(x, ub, b, y, 4, 1, 1, work[:-1])
    with pytest.raises(ValueError, match="packed weight"):
        wk.conv(x, ub, b, y, 2, 1, 1, work)
    with pytest.raises(ValueError, match="packed weight"):
        wk.conv(x[:, :8], ub, b, y, 4, 1, 1, work)
    with pytest.raises(ValueError, match="bias"):
        wk.conv(x, ub, b[:5], y, 4, 1, 1, work)
    with pytest.raises(ValueError, match="tile size"):
        wk.conv(x, ub, b, y, 3, 1, 1, work)
    with pytest.raises(ValueError, match="float32"):
        wk.pack_weight(np.zeros((9, 4, 4), np.float32))


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("o, c", [(16, 16), (70, 24), (300, 40)])
def test_transform_weight_in_blocks_equals_the_whole_transform(monkeypatch, m, o, c):
    # Blocks of one strip (the smallest budget) must give the transform of the whole
    # weight, computed here by numpy's einsum.
    monkeypatch.setattr(wk, "_TRANSFORM_BYTES", 1)
    wt = _data(o, c, 3, 3)
    g = nn_conv._WINO_G[m]
    u = np.einsum("ai,ocij,bj->aboc", g, wt.astype(np.float64), g)
    ref = wk.pack_weight(u.reshape((m + 2) ** 2, o, c).astype(np.float32))
    np.testing.assert_allclose(wk.transform_weight(wt, g), ref, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="weight must be"):
        wk.transform_weight(wt[:, :, :2], g)


def test_winograd_kernel_output_larger_than_the_input_reads_no_pixel_outside():
    # Pads far past the image: every tile is an edge tile, every read is tested.
    x, wt, b = _data(1, 16, 3, 4), _data(16, 16, 3, 3), _data(16)
    y = F.conv2d(F.const(x), F.const(wt), F.const(b), padding=(5, 4, 6, 3))
    _check(y.read(), _reference(x, wt, b, (5, 4, 6, 3)))
