"""The convolution kernels' fast paths against torch.nn.functional.conv2d (CPU).

Direct depthwise 3x3 (AVX-512 interior + scalar edges, strides 1 and 2), the packed
SGEMM (sgemm.pyx: 1x1 and im2col convolutions, partial tiles, several K blocks, fused
bias and clamp) and its weight cache, over odd sizes, batches, pads, strides larger than
the kernel, 1-pixel images and groups.
"""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn._cython import sgemm
from mnn.express.ops import nn_conv

RNG = np.random.default_rng(77)
TOL = dict(rtol=2e-4, atol=2e-4)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _torch_conv(x, w, b, stride, pads, group, act=None):
    # pads: (top, left, bottom, right)
    t = TF.pad(torch.tensor(x), (pads[1], pads[3], pads[0], pads[2]))
    y = TF.conv2d(t, torch.tensor(w), None if b is None else torch.tensor(b), stride,
                  0, 1, group)
    if act == "relu":
        y = torch.relu(y)
    elif act == "relu6":
        y = torch.clamp(y, 0, 6)
    return y.numpy()


def _ours(x, w, b, stride, pads, group, act=None):
    y = F.conv2d(F.const(x), F.const(w), None if b is None else F.const(b),
                 (stride[1], stride[0]), pads, group=group, activation=act)
    return y.read()


# (N, C, H, W, stride (h, w), pads (top, left, bottom, right), multiplier)
DW_CASES = [
    (1, 3, 1, 1, (1, 1), (1, 1, 1, 1), 1),        # 1-pixel image
    (2, 5, 7, 9, (1, 1), (1, 1, 1, 1), 1),
    (1, 4, 17, 33, (1, 1), (1, 1, 1, 1), 1),      # one full 16-lane step + remainder
    (1, 2, 56, 56, (2, 2), (0, 0, 1, 1), 1),      # asymmetric pads, stride 2
    (2, 3, 35, 37, (2, 2), (1, 1, 1, 1), 1),      # odd size, stride 2, partial lanes
    (1, 3, 9, 70, (2, 2), (1, 2, 0, 2), 1),
    (1, 2, 12, 13, (1, 2), (0, 0, 0, 0), 2),      # row stride 1, column stride 2, M = 2
    (1, 2, 11, 10, (3, 1), (2, 2, 2, 2), 1),      # row stride 3, pads wider than taps
    (1, 2, 2, 2, (1, 1), (2, 2, 2, 2), 1),        # image smaller than the kernel
    (1, 2, 10, 11, (4, 4), (1, 1, 1, 1), 1),      # stride larger than the kernel
    (1, 1, 3, 64, (1, 1), (0, 0, 0, 0), 1),       # no edge columns at all
    (2, 3, 5, 32, (1, 1), (1, 1, 1, 1), 1),       # 32 wide: masked whole-row path
    (1, 2, 6, 30, (1, 1), (0, 2, 1, 0), 3),       # masked path, asymmetric pads, M = 3
]


@pytest.mark.parametrize("case", DW_CASES)
@pytest.mark.parametrize("act", [None, "relu6"])
def test_depthwise_3x3_matches_torch(case, act):
    n, c, h, w, stride, pads, mult = case
    x, wt, b = _data(n, c, h, w), _data(c * mult, 1, 3, 3), _data(c * mult)
    np.testing.assert_allclose(_ours(x, wt, b, stride, pads, c, act),
                               _torch_conv(x, wt, b, stride, pads, c, act), **TOL)


# (N, C, H, W, O, K, stride, pads, group)
GEMM_CASES = [
    (1, 3, 5, 7, 5, 1, 1, (0, 0, 0, 0), 1),       # fewer rows and columns than a tile
    (2, 16, 9, 13, 33, 1, 1, (0, 0, 0, 0), 1),    # partial row slab, partial column strip
    (1, 300, 6, 6, 17, 1, 1, (0, 0, 0, 0), 1),    # two K blocks
    (1, 70, 9, 9, 24, 3, 1, (1, 1, 1, 1), 1),     # im2col, K = 630 (three K blocks)
    (3, 8, 23, 29, 12, 3, 2, (1, 0, 2, 1), 2),    # groups, asymmetric pads
    (1, 6, 1, 1, 9, 3, 1, (1, 1, 1, 1), 1),       # 1-pixel image
    (1, 300, 1, 1, 70, 1, 1, (0, 0, 0, 0), 1),    # 1x1 on 1-pixel images: a dense layer
    (3, 40, 1, 1, 37, 1, 1, (0, 0, 0, 0), 1),     # ... on a batch
    (10, 40, 1, 1, 37, 1, 1, (0, 0, 0, 0), 1),    # ... on more images (a GEMM)
    (2, 4, 11, 10, 6, 2, 3, (0, 0, 0, 0), 1),     # stride larger than the kernel
    (1, 12, 40, 40, 40, 1, 1, (0, 0, 0, 0), 4),   # grouped 1x1, 1600 columns
    (5, 40, 20, 20, 16, 3, 1, (1, 1, 1, 1), 2),   # images in several column chunks
]


@pytest.mark.parametrize("case", GEMM_CASES)
@pytest.mark.parametrize("act", [None, "relu", "relu6"])
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_convolutions_match_torch(case, act, threads):
    n, c, h, w, o, k, s, pads, g = case
    x, wt, b = _data(n, c, h, w), _data(o, c // g, k, k), _data(o)
    F.set_thread_number(threads)
    try:
        got = _ours(x, wt, b, (s, s), pads, g, act)
    finally:
        F.set_thread_number(1)
    np.testing.assert_allclose(got, _torch_conv(x, wt, b, (s, s), pads, g, act), **TOL)


@pytest.mark.parametrize("threads", [1, 2])
def test_dense_layer_convolution_without_bias_and_in_float64_matches_torch(threads):
    # 1x1 convolutions of 1x1 images run as one GEMM over the output channels.
    F.set_thread_number(threads)
    try:
        for dtype in (np.float32, np.float64):
            x = RNG.standard_normal((2, 96, 1, 1)).astype(dtype)
            w = RNG.standard_normal((130, 96, 1, 1)).astype(dtype)
            got = F.conv2d(F.const(x), F.const(w), None, (1, 1), (0, 0)).read()
            want = TF.conv2d(torch.tensor(x), torch.tensor(w)).numpy()
            assert got.dtype == dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    finally:
        F.set_thread_number(1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n,c,hw,o,k,s,p,g", [
    (4, 40, 20, 16, 3, 2, 1, 2),    # backward ops over several image chunks, groups
    (3, 6, 9, 5, 1, 1, 0, 1),       # 1x1
    (2, 4, 7, 6, 2, 3, 1, 1),       # stride larger than the kernel
])
def test_conv_gradients_over_image_chunks_match_torch(n, c, hw, o, k, s, p, g, threads):
    x, wt = _data(n, c, hw, hw), _data(o, c // g, k, k)
    xv, wv = F.const(x), F.const(wt)
    F.set_thread_number(threads)
    try:
        y = F.conv2d(xv, wv, None, (s, s), (p, p), group=g)
        dy = _data(*y.shape)
        gx, gw = F.grad([y], [xv, wv], [F.const(dy)])
        got = (y.read(), gx.read(), gw.read())
    finally:
        F.set_thread_number(1)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    ty = TF.conv2d(tx, tw, None, s, p, 1, g)
    ty.backward(torch.tensor(dy))
    for a, b in zip(got, (ty.detach(), tx.grad, tw.grad)):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-3, atol=1e-3)


def test_packed_weight_is_not_stale_after_the_weight_is_written():
    x, w1, w2 = _data(1, 8, 6, 6), _data(16, 8, 1, 1), _data(16, 8, 1, 1)
    xv, wv = F.placeholder([1, 8, 6, 6]), F.placeholder([16, 8, 1, 1])
    y = F.conv2d(xv, wv)
    xv.write(x)
    wv.write(w1)
    np.testing.assert_allclose(y.read(), _torch_conv(x, w1, None, 1, (0,) * 4, 1), **TOL)
    wv.write(w2)
    np.testing.assert_allclose(y.read(), _torch_conv(x, w2, None, 1, (0,) * 4, 1), **TOL)


def test_packed_weight_of_a_writeable_array_is_not_cached():
    from mnn.express.ops import pack_cache

    w = _data(4, 3)
    value = pack_cache.PACKED.get("test", w, lambda a: sgemm.pack_weight(a))
    assert ("test", id(w)) not in pack_cache.PACKED.entries
    w.flags.writeable = False
    view = w[:2]
    assert pack_cache.PackCache.immutable(view)
    assert value.shape[0] >= w.size


@pytest.mark.parametrize("o,k,n", [(1, 1, 1), (7, 33, 1), (37, 1280, 3), (130, 15, 8),
                                   (5, 0, 2)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_dense_rows_kernel_matches_numpy(o, k, n, threads):
    w, x, bias = _data(o, k), _data(n, k), _data(o)
    y = np.full((n, o), np.nan, np.float32)
    sgemm.dense_rows(w, x, y, bias, -1.0, 1.5, threads)
    ref = np.clip(x.astype(np.float64) @ w.T + bias, -1.0, 1.5)
    # float32 sums round off in proportion to the sum of the products' magnitudes (K =
    # 1280 of them here), not to the result
    scale = np.abs(x).astype(np.float64) @ np.abs(w).T
    np.testing.assert_array_less(np.abs(y - ref), 1e-5 + 1e-6 * scale)


def test_dense_rows_kernel_rejects_mismatched_shapes():
    w, x, bias = _data(6, 5), _data(2, 5), _data(6)
    for args in [(w, _data(2, 4), np.empty((2, 6), np.float32), bias),
                 (w, x, np.empty((2, 5), np.float32), bias),
                 (w, x, np.empty((3, 6), np.float32), bias),
                 (w, x, np.empty((2, 6), np.float32), _data(5))]:
        with pytest.raises(ValueError, match="dense_rows: weight"):
            sgemm.dense_rows(*args)
    with pytest.raises(ValueError, match="nthreads"):
        sgemm.dense_rows(w, x, np.empty((2, 6), np.float32), bias, nthreads=0)


# Output channels in slabs of 32 whose last one has 1 .. 16 lanes, 17 .. 24 or more
# (sgemm_kernel.h's HALF tiles: 16, 24 or 32 lanes computed), at depths of one chunk and
# of two (K > 1024: the partial sums kept between chunks).
@pytest.mark.skipif(not sgemm.direct_available(), reason="direct kernel needs AVX-512")
@pytest.mark.parametrize("m", [1, 8, 16, 17, 24, 25, 40, 56])
@pytest.mark.parametrize("c,k", [(3, 3), (96, 1), (1100, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_direct_kernel_narrow_slabs_match_torch(m, c, k, threads):
    torch = pytest.importorskip("torch")
    x, w, bias = _data(2, c, 6, 7), _data(m, c, k, k), _data(m)
    pad = k // 2
    y = np.full((2, m, 42), np.nan, np.float32)
    sgemm.conv_direct_images(sgemm.pack_weight_direct(w.reshape(m, -1)), m, x, y, bias,
                             k, k, 6, 7, 1, 1, pad, pad, 1, 1, -1.0, 1.5, threads)
    ref = torch.clamp(torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(),
        torch.from_numpy(bias).double(), padding=pad), -1.0, 1.5).numpy()
    np.testing.assert_allclose(y.reshape(ref.shape), ref, rtol=1e-4, atol=1e-4 * np.sqrt(c))


def test_narrow_pointwise_convs_take_the_direct_kernel_from_depth_96():
    # the measured rule (nn_conv._DIRECT_NARROW_M): up to 24 outputs the direct kernel's
    # narrow tiles win from K = 96; wider outputs keep the general threshold
    if not sgemm.direct_available():
        assert not nn_conv._use_direct(np.float32, 144, True, 3136, m=24)
        return
    assert nn_conv._use_direct(np.float32, 96, True, 3136, m=24)
    assert nn_conv._use_direct(np.float32, 144, True, 3136, m=16)
    assert not nn_conv._use_direct(np.float32, 64, True, 3136, m=24)
    assert not nn_conv._use_direct(np.float32, 96, True, 3136, m=32)
    assert not nn_conv._use_direct(np.float32, 96, True, 3136)
    kind = nn_conv._kernel_kind((1, 96, 56, 56), np.float32, (24, 96, 1, 1), (1, 1),
                                 (0, 0, 0, 0), (1, 1), 1, (56, 56))
    assert kind == "direct"


# Shallow K (<= 32) reads B's whole 32-column strips in place and packs only a partial
# last strip: whole strips only (8, 32, 64), several 256-column blocks (24, 32, 300), one
# past the depth read in place (16, 33, 65).
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (9, 300, 33), (17, 5, 100), (40, 513, 70),
                                   (8, 32, 64), (24, 32, 300), (16, 33, 65)])
def test_sgemm_kernel_matches_numpy(m, k, n):
    a, b, bias = _data(m, k), _data(k, n), _data(m)
    c = np.full((m, n), np.nan, np.float32)
    sgemm.gemm_packed(sgemm.pack_weight(a), m, b, c, bias, -1.0, 1.5, 2)
    ref = np.clip(a.astype(np.float64) @ b + bias[:, None], -1.0, 1.5)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_sgemm_kernel_rejects_mismatched_shapes():
    a, b = _data(5, 4), _data(4, 6)
    packed = sgemm.pack_weight(a)
    with pytest.raises(ValueError, match="packed weight"):
        sgemm.gemm_packed(packed, 5, _data(3, 6), np.empty((5, 6), np.float32), _data(5))
    with pytest.raises(ValueError, match="output"):
        sgemm.gemm_packed(packed, 5, b, np.empty((5, 7), np.float32), _data(5))
    with pytest.raises(ValueError, match="bias"):
        sgemm.gemm_packed(packed, 5, b, np.empty((5, 6), np.float32), _data(4))


def test_packed_weight_cache_drops_entries_of_dead_arrays():
    import gc

    from mnn.express.ops import pack_cache

    def cached():
        return sum(1 for key in pack_cache.PACKED.entries if key[0] == ("sgemm", 1))

    gc.collect()
    before = cached()
    x, w = _data(1, 8, 5, 5), _data(24, 8, 1, 1)
    wv = F.const(w)
    y = F.conv2d(F.const(x), wv)
    np.testing.assert_allclose(y.read(), _torch_conv(x, w, None, 1, (0,) * 4, 1), **TOL)
    assert cached() == before + 1      # the engine's read-only weight is cached
    del wv, y
    gc.collect()
    assert cached() == before          # and dropped with it


def test_weights_given_a_shape_are_packed_once():
    # const(w, shape) and a write() that reshapes store a view of the engine's copy: the
    # copy must be read-only too, or the weight is packed again on every run.
    from mnn.express.ops import pack_cache

    x, w = _data(1, 8, 5, 5), _data(24, 8, 1, 1)
    made = []
    original = pack_cache.PackCache.get

    def counting(self, tag, array, make):
        return original(self, tag, array, lambda a: made.append(tag) or make(a))

    wc = F.const(w.reshape(24, 8), [24, 8, 1, 1])
    wp = F.placeholder([24, 8, 1, 1])
    wp.write(w.reshape(-1))
    xv = F.placeholder([1, 8, 5, 5])
    ys = [F.conv2d(xv, wc), F.conv2d(xv, wp)]
    pack_cache.PackCache.get = counting
    try:
        for run in range(3):
            xv.write(x + run)
            for y in ys:
                np.testing.assert_allclose(y.read(), _torch_conv(x + run, w, None, 1,
                                                                 (0,) * 4, 1), **TOL)
            if run == 0:
                assert len(made) == 2
        assert len(made) == 2   # not packed again by the later runs
    finally:
        pack_cache.PackCache.get = original


def test_conv_plans_follow_the_thread_count_and_hold_no_arrays():
    import gc
    import weakref

    x, w, b = _data(2, 16, 9, 9), _data(16, 16, 3, 3), _data(16)
    want = _torch_conv(x, w, b, 1, (1,) * 4, 1)
    try:
        for threads in (1, 2, 1):
            F.set_thread_number(threads)
            got = F.conv2d(F.const(x), F.const(w), F.const(b), (1, 1), (1, 1)).read()
            np.testing.assert_allclose(got, want, **TOL)
        plans = [k for k in nn_conv._CONV_PLANS if k[0] == x.shape and k[2] == w.shape]
        assert sorted(k[-1] for k in plans) == [1, 2]  # one plan per thread count
    finally:
        F.set_thread_number(1)
    wv = F.const(w)
    ref = weakref.ref(wv.read())
    F.conv2d(F.const(x), wv, F.const(b), (1, 1), (1, 1)).read()
    del wv
    gc.collect()
    assert ref() is None  # the plan kept no weight alive


def test_convolution_keeps_scipy_blas_at_one_thread_after_set_thread_number():
    from threadpoolctl import threadpool_info

    from mnn.express.ops import nn_common

    x, w = _data(1, 8, 6, 6), _data(8, 8, 1, 1)
    try:
        F.set_thread_number(2)
        F.conv2d(F.const(x), F.const(w)).read()
        libs = [lib for lib in nn_common._BLAS_LIBS if lib is not None]
        assert all(lib.get_num_threads() == 1 for lib in libs)
        assert libs or not any("scipy.libs" in i["filepath"] for i in threadpool_info()
                               if i["internal_api"] == "openblas")
    finally:
        F.set_thread_number(1)


def test_prepared_convolution_follows_threads_and_shapes():
    # conv2d's prepared compute (OpDef.prepare) is kept on the Expr per input signature
    # and thread count: a new count or a resized input prepares it again.
    w, b = _data(8, 6, 3, 3), _data(8)
    x = F.placeholder([1, 6, 20, 20])
    y = F.conv2d(x, F.const(w), F.const(b), (1, 1), (1, 1), activation="relu")
    try:
        for threads, shape in [(1, (1, 6, 20, 20)), (2, (1, 6, 20, 20)),
                               (2, (2, 6, 9, 13)), (1, (2, 6, 9, 13))]:
            F.set_thread_number(threads)
            if tuple(x.shape) != shape:
                x.resize(list(shape))
            data = _data(*shape)
            x.write(data)
            want = _torch_conv(data, w, b, (1, 1), (1, 1, 1, 1), 1, "relu")
            np.testing.assert_allclose(y.read(), want, **TOL)
            sig, count, _ = y.expr.prepared
            assert count == threads and sig[0] == (shape, np.dtype(np.float32))
    finally:
        F.set_thread_number(1)
    # A non-contiguous input array takes the same prepared compute.
    xt = np.ascontiguousarray(_data(1, 20, 20, 6)).transpose(0, 3, 1, 2)
    conv = y.expr
    got = conv.call_op([xt, w, b])
    np.testing.assert_allclose(got, _torch_conv(np.ascontiguousarray(xt), w, b, (1, 1),
                                                (1, 1, 1, 1), 1, "relu"), **TOL)


# One convolution per kernel: (N, C, H, W, O, K, stride, pads, group)
KERNEL_KINDS = {
    "depthwise": (1, 4, 17, 33, 4, 3, 1, (1, 1, 1, 1), 4),
    "winograd": (1, 16, 12, 12, 16, 3, 1, (1, 1, 1, 1), 1),
    "direct": (1, 3, 20, 20, 40, 7, 2, (3, 3, 3, 3), 1),
    "packed GEMM": (2, 16, 9, 13, 33, 1, 1, (0, 0, 0, 0), 1),
    "dense": (1, 300, 1, 1, 70, 1, 1, (0, 0, 0, 0), 1),
}


@pytest.mark.parametrize("kind", list(KERNEL_KINDS))
@pytest.mark.parametrize("act", [None, "relu", "relu6"])
def test_nan_input_gives_nan_outputs_as_torch(kind, act):
    # The fused clamp lets NaN through (torch's relu and clamp do), whichever kernel
    # runs: the vector max/min must not swallow it into a bound.
    n, c, h, w, o, k, s, pads, g = KERNEL_KINDS[kind]
    x, wt, b = _data(n, c, h, w), _data(o, c // g, k, k), _data(o)
    x[0, 0, 0, 0] = np.nan
    x[-1, -1, h // 2, w // 2] = np.nan
    got = _ours(x, wt, b, (s, s), pads, g, act)
    want = _torch_conv(x, wt, b, (s, s), pads, g, act)
    assert np.isnan(want).any()
    np.testing.assert_allclose(got, want, **TOL)  # NaN where torch has NaN


@pytest.mark.parametrize("shape,threads", [((1, 3, 7, 9), 2), ((9, 2, 5, 4), 2), ((2, 1, 1, 3), 3)])
def test_pad_images_matches_numpy_pad(shape, threads):
    x = _data(*shape)
    view = _data(shape[0], shape[1], shape[2], shape[3] + 5)[:, :, :, 2:2 + shape[3]]
    for src in (x, view):  # contiguous, and rows of a wider array
        got = sgemm.pad_images(src, shape[2] + 4, shape[3] + 3, 1, 2, threads)
        want = np.pad(src, ((0, 0), (0, 0), (1, 3), (2, 1)))
        np.testing.assert_array_equal(got, want)


def test_pad_images_rejects_what_does_not_fit():
    x = _data(1, 2, 5, 5)
    with pytest.raises(ValueError, match="does not fit"):
        sgemm.pad_images(x, 6, 7, 2, 1)  # 5 rows below a pad of 2 need 7
    with pytest.raises(ValueError, match="does not fit"):
        sgemm.pad_images(x, 7, 7, -1, 1)
    with pytest.raises(ValueError, match="pad scratch"):
        sgemm.pad_images(x, 7, 7, 1, 1, 1, np.empty(10, np.float32))
