"""Depthwise convolution (group == channels) against torch.nn.functional.conv2d (CPU).

Covers every depthwise layer of MobileNetV2 as the model builds it (pads 1, bias, fused
relu6) and the geometries the 3x3 kernel's paths split on (include/dw3x3_kernel.h):
row blocks of 4, 2 and 1 output rows, the flat stream of small same-size planes
(7x7, 12x12, 20x20), partial 16-lane steps, column stride 2 with rows wider and
narrower than one step, asymmetric pads, images smaller than the kernel, and the
generic kernel (dilation, other kernel sizes, float64), at batch 1 and 3 and 1 and 2
threads.
"""
import itertools

import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(4)


def _tol(dtype):
    if dtype == np.float32:
        return {"rtol": 2e-4, "atol": 2e-4}
    return {"rtol": 1e-10, "atol": 1e-10}


def _data(shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def _reference(x, w, b, stride, pads, dilation, group, act):
    # pads: (top, left, bottom, right), applied by torch's pad so any asymmetry works
    t = TF.pad(torch.tensor(x), (pads[1], pads[3], pads[0], pads[2]))
    y = TF.conv2d(t, torch.tensor(w), None if b is None else torch.tensor(b), stride, 0,
                  dilation, group)
    if act == "relu":
        y = torch.relu(y)
    elif act == "relu6":
        y = torch.clamp(y, 0, 6)
    return y.numpy()


def _ours(x, w, b, stride, pads, dilation, group, act, threads):
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        y = F.conv2d(F.const(x), F.const(w), None if b is None else F.const(b),
                     (stride[1], stride[0]), pads, (dilation[1], dilation[0]), group,
                     activation=act)
        return np.asarray(y.read()).copy()
    finally:
        F.set_thread_number(before)


# (channels, height = width, stride, how many times MobileNetV2 runs it)
MOBILENET_V2 = [
    (32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (192, 28, 2),
    (384, 14, 1), (576, 14, 1), (576, 14, 2), (960, 7, 1),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layer", MOBILENET_V2, ids=lambda s: f"{s[0]}ch{s[1]}s{s[2]}")
def test_mobilenet_v2_depthwise_layers_match_torch(layer, threads):
    c, hw, s = layer
    # Scaled so that the relu6 clamp cuts at both ends.
    x, w, b = _data((1, c, hw, hw), scale=2.0), _data((c, 1, 3, 3)), _data(c)
    got = _ours(x, w, b, (s, s), (1, 1), (1, 1), c, "relu6", threads)
    ref = _reference(x, w, b, (s, s), (1, 1, 1, 1), (1, 1), c, "relu6")
    assert (ref == 0).any() and (ref == 6).any()
    np.testing.assert_allclose(got, ref, **_tol(np.float32))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layer", [(96, 112, 2), (384, 14, 1), (960, 7, 1)],
                         ids=lambda s: f"{s[0]}ch{s[1]}s{s[2]}")
def test_mobilenet_v2_layers_batch_3(layer, threads):
    c, hw, s = layer
    x, w, b = _data((3, c, hw, hw), scale=2.0), _data((c, 1, 3, 3)), _data(c)
    got = _ours(x, w, b, (s, s), (1, 1), (1, 1), c, "relu6", threads)
    np.testing.assert_allclose(got, _reference(x, w, b, (s, s), (1, 1, 1, 1), (1, 1), c,
                                               "relu6"), **_tol(np.float32))


# 3x3 kernel geometries: (H, W) x stride (h, w) x pads (top, left, bottom, right)
SIZES = [(1, 1), (2, 3), (5, 7), (7, 7), (9, 16), (12, 12), (11, 17), (20, 20), (8, 31),
         (14, 14), (13, 33), (6, 45)]
STRIDES = [(1, 1), (2, 2), (1, 2), (2, 1), (3, 3)]
PADS = [(0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 2, 0), (2, 0, 1, 2), (1, 2, 0, 1)]
GEOMETRY = [(hw, s, p) for hw, s, p in itertools.product(SIZES, STRIDES, PADS)
            if hw[0] + p[0] + p[2] >= 3 and hw[1] + p[1] + p[3] >= 3]


@pytest.mark.parametrize("act", [None, "relu6"])
@pytest.mark.parametrize("geometry", GEOMETRY, ids=str)
def test_3x3_geometries_match_torch(geometry, act):
    (h, w_), s, p = geometry
    c = 3
    x, w, b = _data((2, c, h, w_), scale=2.0), _data((c, 1, 3, 3)), _data(c)
    got = _ours(x, w, b, s, p, (1, 1), c, act, 1)
    np.testing.assert_allclose(got, _reference(x, w, b, s, p, (1, 1), c, act),
                               **_tol(np.float32))


# (N, C, H, W, multiplier, kernel (h, w), stride, pads, dilation, bias, act, threads)
MIXED = [
    (3, 4, 7, 7, 2, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True, "relu6", 2),
    (1, 3, 20, 20, 3, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, None, 1),
    (3, 5, 28, 28, 1, (3, 3), (2, 2), (0, 0, 1, 1), (1, 1), True, "relu", 2),
    (1, 6, 15, 19, 1, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), True, "relu6", 2),
    (2, 4, 13, 11, 2, (3, 3), (2, 1), (1, 0, 1, 3), (1, 2), True, None, 1),
    (1, 4, 16, 16, 1, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), True, "relu6", 2),
    (3, 2, 9, 12, 2, (1, 3), (1, 2), (0, 1, 0, 1), (1, 1), False, None, 2),
    (1, 3, 6, 6, 1, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), True, "relu6", 2),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", MIXED, ids=str)
def test_multiplier_dilation_bias_threads_dtypes_match_torch(case, dtype):
    n, c, h, w_, mult, k, s, p, d, bias, act, threads = case
    x = _data((n, c, h, w_), dtype, scale=3.0)
    w, b = _data((c * mult, 1) + k, dtype), _data(c * mult, dtype) if bias else None
    got = _ours(x, w, b, s, p, d, c, act, threads)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, _reference(x, w, b, s, p, d, c, act), **_tol(dtype))


def test_flat_and_row_paths_agree_across_plane_widths():
    # Same-size stride-1 planes switch between the flat stream and the row blocks by
    # width; every width from 1 to 40 against torch (pads 1 keeps OW == W).
    for wd in range(1, 41):
        x, w, b = _data((1, 2, 5, wd), scale=2.0), _data((2, 1, 3, 3)), _data(2)
        got = _ours(x, w, b, (1, 1), (1, 1), (1, 1), 2, "relu6", 1)
        np.testing.assert_allclose(
            got, _reference(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 2, "relu6"),
            err_msg=f"width {wd}", **_tol(np.float32))
