"""The float32 convolution paths of sgemm.pyx against torch.nn.functional.conv2d (CPU):
the packed GEMM that packs B straight from the image (conv_packed_images, no im2col
matrix) and the direct kernel (conv_direct_images: vectors over output channels, input
values broadcast from the image), each forced on every case.

Odd sizes, channel counts that are not a multiple of the 8-row / 32-column tiles (and
the direct kernel's 7-, 8- and 14-pixel tiles),
batches 1 and 3, every stride / dilation / asymmetric pad combination the packer
treats separately (strides 1, 2 and 3; pads wider than the kernel reach; images
smaller than the kernel), groups, bias, fused clamps, and 1 and 2 threads; then the
kernel's input checks.
"""
import collections

import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn._cython import sgemm
from mnn.express.ops import nn_conv

RNG = np.random.default_rng(404)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _torch(x, w, b, stride, pads, dilation, group, clamp):
    t = TF.pad(torch.tensor(x), (pads[1], pads[3], pads[0], pads[2]))
    y = TF.conv2d(t, torch.tensor(w), None if b is None else torch.tensor(b), stride, 0,
                  dilation, group)
    if clamp is not None:
        y = torch.clamp(y, *clamp)
    return y.numpy()


PATHS = ["packed", "direct"] if sgemm.direct_available() else ["packed"]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Route every float32 conv of the test through one sgemm path."""
    k = 1 if request.param == "direct" else 1 << 40
    for name in ("_DIRECT_MIN_K", "_DIRECT_MIN_K_POINTWISE", "_DIRECT_MIN_K_FEW_PIXELS",
                 "_DIRECT_MIN_K_STRIDED_1X1"):
        monkeypatch.setattr(nn_conv, name, k)
    # plans made under the other path's thresholds must not be found
    monkeypatch.setattr(nn_conv, "_CONV_PLANS", collections.OrderedDict())
    return request.param


# (N, C, H, W, O, (KH, KW), stride (h, w), pads (t, l, b, r), dilation, group, clamp)
CASES = [
    (1, 3, 29, 31, 10, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, (0.0, np.inf)),
    (3, 3, 17, 15, 33, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, (0.0, 6.0)),
    (1, 13, 9, 11, 17, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, None),
    (3, 7, 12, 10, 9, (1, 1), (2, 3), (0, 0, 0, 0), (1, 1), 1, None),
    (1, 5, 10, 13, 40, (3, 2), (3, 1), (2, 0, 1, 2), (1, 2), 1, (0.0, 6.0)),
    (3, 6, 8, 9, 12, (3, 3), (1, 1), (1, 1, 1, 1), (2, 2), 2, None),
    (1, 4, 2, 3, 8, (3, 3), (1, 1), (2, 2, 2, 2), (1, 1), 1, None),   # image < kernel
    (1, 4, 10, 11, 8, (2, 2), (4, 4), (1, 1, 1, 1), (1, 1), 1, None),  # stride > kernel
    (1, 2, 3, 40, 5, (1, 5), (1, 2), (0, 4, 0, 4), (1, 1), 1, None),   # pads > reach
    (1, 9, 40, 41, 24, (3, 3), (2, 2), (0, 0, 1, 1), (1, 1), 3, (0.0, 6.0)),
    (2, 40, 14, 14, 70, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, None),  # K > 256
    (1, 64, 7, 7, 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None),    # few columns
    # 1x1 stride 1 (the input itself is B): tails of 8 pixels and 32 channels
    (1, 200, 7, 7, 45, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0.0, 6.0)),
    (3, 19, 5, 9, 70, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),
    (1, 24, 13, 13, 8, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 2, (0.0, np.inf)),
    (3, 12, 6, 6, 12, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 3, None),
    (1, 33, 1, 1, 31, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),    # one pixel
    (1, 16, 5, 7, 16, (1, 1), (1, 1), (1, 0, 2, 1), (1, 1), 1, None),    # padded 1x1
    # K >= 96: 14-pixel tiles, ranges ending in a short tile that runs as 14 (9 pixels),
    # 8 or 7 (5 pixels) pixels
    (1, 100, 6, 7, 100, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),  # 42 = 3 x 14
    (2, 96, 5, 10, 97, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),   # 50 = 3 x 14 + 8
    (1, 128, 11, 11, 130, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0.0, 6.0)),  # + 9
    (1, 12, 9, 13, 96, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None),   # 117: + 5
    (1, 16, 15, 17, 100, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, None),  # 72: + 2
    # how a tile finds its pixels' inputs: one output row, pixels 1 apart (1x1 on 7x7:
    # two rows of 7 per 14-pixel tile, then a 7-pixel tail), 2 apart (stride 2: 7x7 and
    # 14x14 outputs), 3 apart (a pointer per pixel), rows wrapping mid-tile (OW = 10)
    (1, 100, 7, 7, 40, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),
    (1, 12, 13, 13, 40, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, (0.0, 6.0)),
    (2, 12, 28, 28, 36, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, None),
    (1, 11, 20, 44, 33, (3, 3), (1, 3), (1, 1, 1, 1), (1, 1), 1, None),
    (1, 12, 12, 10, 35, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None),
    # packed weight over 512 KB: slab-major tiles fetching the next tile's input ahead
    (1, 500, 6, 6, 300, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),
    # K over 1024, slab-major: chunks of depth with partial sums between them (2 chunks
    # of one slab; 2 of five slabs, two images; 3 chunks, a short last tile, a clamp)
    (1, 130, 6, 7, 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None),
    (2, 1100, 5, 7, 150, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None),
    (1, 228, 9, 9, 70, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, (0.0, 6.0)),
    (1, 44, 24, 25, 20, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, None),  # 43 tiles: 2 runs
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CASES)
def test_conv_matches_torch(case, bias, threads, path):
    n, c, h, wd, o, (kh, kw), stride, pads, dil, group, clamp = case
    x, w = _data(n, c, h, wd), _data(o, c // group, kh, kw)
    b = _data(o) if bias else None
    F.set_thread_number(threads)
    act = {None: None, (0.0, np.inf): "relu", (0.0, 6.0): "relu6"}[clamp]
    try:
        # mnn's stride and dilation pairs are (x, y): width first.
        got = F.conv2d(F.const(x), F.const(w), None if b is None else F.const(b),
                       stride[::-1], pads, dil[::-1], group, activation=act).read()
    finally:
        F.set_thread_number(1)
    want = _torch(x, w, b, stride, pads, dil, group, clamp)
    np.testing.assert_allclose(got, want, rtol=3e-4, atol=3e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("act", ["relu", "relu6"])
def test_fused_activation_strided(act, threads, path):
    x, w, b = _data(3, 5, 23, 19), _data(37, 5, 3, 3), _data(37)
    F.set_thread_number(threads)
    try:
        got = F.conv2d(F.const(x), F.const(w), F.const(b), (2, 2), (1, 1),
                       activation=act).read()
    finally:
        F.set_thread_number(1)
    clamp = (0.0, np.inf) if act == "relu" else (0.0, 6.0)
    np.testing.assert_allclose(got, _torch(x, w, b, (2, 2), (1, 1, 1, 1), (1, 1), 1, clamp),
                               rtol=3e-4, atol=3e-4)


@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
def test_direct_padded_batch_in_chunks(monkeypatch):
    # A pad buffer bound below one image's padded size: one image per chunk, groups too.
    calls = []
    real = sgemm.conv_direct_images

    def counted(*args):
        calls.append(args[2].shape[0])
        return real(*args)

    monkeypatch.setattr(sgemm, "conv_direct_images", counted)
    monkeypatch.setattr(nn_conv, "_DIRECT_PAD_ELEMENTS", 100)
    x, w, b = _data(5, 8, 11, 9), _data(6, 4, 3, 3), _data(6)
    got = F.conv2d(F.const(x), F.const(w), F.const(b), (1, 2), (1, 1), group=2).read()
    want = _torch(x, w, b, (2, 1), (1, 1, 1, 1), (1, 1), 2, None)
    np.testing.assert_allclose(got, want, rtol=3e-4, atol=3e-4)
    assert calls == [1] * 10  # 5 chunks of one image, 2 groups each
    calls.clear()
    # padded group input: 4 channels of 13 x 11 per image; two images per chunk
    monkeypatch.setattr(nn_conv, "_DIRECT_PAD_ELEMENTS", 2 * 4 * 13 * 11)
    got = F.conv2d(F.const(x), F.const(w.copy()), F.const(b), (1, 2), (1, 1), group=2,
                   activation="relu").read()
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=3e-4, atol=3e-4)
    assert calls == [2, 2, 2, 2, 1, 1]


def test_kernel_on_group_slice_of_input():
    # A group's channel slice of x (rows contiguous, channel stride of the whole input),
    # with a clamp that is neither relu nor relu6.
    x, w, b = _data(2, 6, 9, 8), _data(5, 3, 3, 3), _data(5)
    y = np.zeros((2, 5, 4 * 4), np.float32)
    sgemm.conv_packed_images(sgemm.pack_weight(w.reshape(5, -1)), 5, x[:, 3:], y, b, 3, 3,
                             4, 4, 2, 2, 1, 1, 1, 1, -0.3, 0.4, 2)
    want = _torch(x[:, 3:], w, b, (2, 2), (1, 1, 1, 1), (1, 1), 1, (-0.3, 0.4))[:, :, :4, :4]
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=3e-4, atol=3e-4)


@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c", [3, 40])
def test_direct_kernel_on_group_slice_of_batch(threads, c):
    # Images of a channel slice are not contiguous with each other; odd clamp; 37 output
    # channels are two slabs, walked slab-major (K = 27) and tile-major (K = 360).
    x, w, b = _data(3, 2 * c, 9, 8), _data(37, c, 3, 3), _data(37)
    y = np.zeros((3, 37, 5 * 4), np.float32)
    sgemm.conv_direct_images(sgemm.pack_weight_direct(w.reshape(37, -1)), 37, x[:, c:], y,
                             b, 3, 3, 5, 4, 2, 2, 1, 1, 1, 1, -0.3, 0.4, threads)
    want = _torch(x[:, c:], w, b, (2, 2), (1, 1, 1, 1), (1, 1), 1, (-0.3, 0.4))[:, :, :5, :4]
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=3e-4, atol=3e-4)


@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
def test_direct_kernel_rejects_bad_shapes():
    x, w, b = _data(1, 3, 8, 8), _data(4, 3, 3, 3), _data(4)
    pk = sgemm.pack_weight_direct(w.reshape(4, -1))
    y = np.zeros((1, 4, 16), np.float32)
    args = (3, 3, 4, 4, 2, 2, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="packed weight"):
        sgemm.conv_direct_images(pk, 4, x[:, :2], y, b, *args)
    with pytest.raises(ValueError, match="packed weight"):
        sgemm.conv_direct_images(sgemm.pack_weight(w.reshape(4, -1)), 4, x, y, b, *args)
    with pytest.raises(ValueError, match="output"):
        sgemm.conv_direct_images(pk, 4, x, np.zeros((1, 4, 15), np.float32), b, *args)
    with pytest.raises(ValueError, match="bias"):
        sgemm.conv_direct_images(pk, 4, x, y, b[:3], *args)
    with pytest.raises(ValueError, match=">= 1"):
        sgemm.conv_direct_images(pk, 4, x, y, b, 3, 3, 4, 4, 2, 0, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="pads"):
        sgemm.conv_direct_images(pk, 4, x, y, b, 3, 3, 4, 4, 2, 2, -1, 1, 1, 1)
    with pytest.raises(ValueError, match="dtype mismatch"):
        sgemm.conv_direct_images(pk, 4, x.astype(np.float64), y, b, *args)
    with pytest.raises(ValueError, match="nthreads"):
        sgemm.conv_direct_images(pk, 4, x, y, b, *args, -np.inf, np.inf, 0)
    need = sgemm.direct_pad_elements(x.shape, *args)
    assert need == 3 * 9 * 9  # one zero row below / column right, one above / left
    with pytest.raises(ValueError, match="pad scratch"):
        sgemm.conv_direct_images(pk, 4, x, y, b, *args, -np.inf, np.inf, 1,
                                 np.zeros(need - 1, np.float32))


@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
def test_direct_kernel_reuses_dirty_pad_scratch():
    # A reused scratch holds the previous call's data: the border must be rewritten.
    x, w, b = _data(2, 3, 8, 8), _data(4, 3, 3, 3), _data(4)
    pk = sgemm.pack_weight_direct(w.reshape(4, -1))
    args = (3, 3, 8, 8, 1, 1, 1, 1, 1, 1)
    scratch = np.full(sgemm.direct_pad_elements(x.shape, *args) + 5, np.nan, np.float32)
    y = np.zeros((2, 4, 64), np.float32)
    sgemm.conv_direct_images(pk, 4, x, y, b, *args, -np.inf, np.inf, 2, scratch)
    want = _torch(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 1, None)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=3e-4, atol=3e-4)


def test_kernel_rejects_bad_shapes():
    x, w, b = _data(1, 3, 8, 8), _data(4, 3, 3, 3), _data(4)
    pk = sgemm.pack_weight(w.reshape(4, -1))
    y = np.zeros((1, 4, 16), np.float32)
    args = (3, 3, 4, 4, 2, 2, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="packed weight"):
        sgemm.conv_packed_images(pk, 4, x[:, :2], y, b, *args)
    with pytest.raises(ValueError, match="output"):
        sgemm.conv_packed_images(pk, 4, x, np.zeros((1, 4, 15), np.float32), b, *args)
    with pytest.raises(ValueError, match="output"):
        sgemm.conv_packed_images(pk, 4, x, np.zeros((2, 4, 16), np.float32), b, *args)
    with pytest.raises(ValueError, match="bias"):
        sgemm.conv_packed_images(pk, 4, x, y, b[:3], *args)
    with pytest.raises(ValueError, match=">= 1"):
        sgemm.conv_packed_images(pk, 4, x, y, b, 3, 3, 4, 4, 0, 2, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="contiguous"):
        sgemm.conv_packed_images(pk, 4, x[..., ::2], y, b, *args)
    with pytest.raises(ValueError, match="nthreads"):
        sgemm.conv_packed_images(pk, 4, x, y, b, *args, -np.inf, np.inf, 0)


def test_strided_1x1_convs_run_by_the_packed_gemm_below_k_256():
    # ResNet's downsampling convs: 64 and 128 input channels by the packed GEMM (it packs
    # B row by row), 256 and more by the direct kernel when it is compiled in.
    def kind(c, o, h):
        return nn_conv._kernel_kind((1, c, h, h), np.float32, (o, c, 1, 1), (2, 2),
                                    (0, 0, 0, 0), (1, 1), 1, ((h + 1) // 2,) * 2)
    assert kind(64, 128, 56) == "gemm" and kind(128, 256, 28) == "gemm"
    assert kind(256, 512, 14) == ("direct" if sgemm.direct_available() else "gemm")
    assert not nn_conv.direct_any_size(np.float32, (128, 64, 1, 1), (2, 2), (1, 1), 1)
