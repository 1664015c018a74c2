"""conv_pool.ConvMeanPlan: a convolution by the direct kernel and the plane means of its
output (a global average pool) in one call, against torch (float64) and, bit for bit,
against the two kernels one after the other (sgemm.conv_direct_images, then
pool.global_forward); its argument checks."""
import threading

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mnn._cython import conv_pool, pool, sgemm

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not conv_pool.available(),
                                reason="the direct kernel needs AVX-512")

# (N, C, H, W, M, k, stride, pad, dilation): a classifier head's 1x1 conv, several
# images, 3x3 with a zero border (padded copy), stride 2, dilation, a partial slab of 24
# channels and one of 5, M under one slab.
CASES = [
    (1, 160, 7, 7, 96, 1, 1, 0, 1),
    (3, 17, 9, 11, 70, 3, 2, 1, 1),
    (2, 8, 8, 8, 56, 3, 1, 2, 2),
    (1, 5, 8, 8, 5, 3, 1, 1, 1),
    (2, 40, 4, 4, 37, 1, 1, 0, 1),
]


def _out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _args(rng, n, c, h, w, m, k, s, p, d):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = (rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    return x, wt, b, _out(h, k, s, p, d), _out(w, k, s, p, d)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n,c,h,w,m,k,s,p,d", CASES)
def test_means_match_torch_and_the_two_kernels_bitwise(n, c, h, w, m, k, s, p, d, threads):
    rng = np.random.default_rng(n * 100 + m)
    x, wt, b, oh, ow = _args(rng, n, c, h, w, m, k, s, p, d)
    packed = sgemm.pack_weight_direct(wt.reshape(m, -1))
    geo = (k, k, s, s, p, p, d, d)
    plan = conv_pool.conv_mean_plan(x.shape, m, geo, oh, ow, 0.0, 6.0, threads)
    y = np.full((n, m), np.nan, np.float32)
    plan.run(packed, x, b, y)
    # the ops one by one: the conv's output stored, then pooled
    conv = np.empty((n, m, oh * ow), np.float32)
    sgemm.conv_direct_images(packed, m, x, conv, b, k, k, oh, ow, s, s, p, p, d, d, 0.0, 6.0,
                             threads)
    pooled = np.empty(n * m, np.float32)
    pool.global_forward(conv.reshape(n * m, oh * ow), pooled, False, threads)
    np.testing.assert_array_equal(y.reshape(-1), pooled)
    ref = torch.clamp(torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
        torch.from_numpy(b).double(), s, p, d), 0, 6).mean((2, 3)).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_input_with_gaps_between_planes_is_rejected():
    # the kernel reads each image's planes as one block: a view with gaps is not taken
    rng = np.random.default_rng(3)
    x, wt, b, oh, ow = _args(rng, 2, 32, 6, 6, 40, 1, 1, 0, 1)
    packed = sgemm.pack_weight_direct(np.ascontiguousarray(wt[:, ::2]).reshape(40, -1))
    plan = conv_pool.conv_mean_plan((2, 16, 6, 6), 40, (1, 1, 1, 1, 0, 0, 1, 1), oh, ow)
    with pytest.raises(ValueError, match="contiguous"):
        plan.run(packed, x[:, ::2], b, np.empty((2, 40), np.float32))


def test_python_threads_share_a_plan():
    rng = np.random.default_rng(4)
    x, wt, b, oh, ow = _args(rng, 2, 24, 8, 8, 64, 3, 1, 1, 1)
    packed = sgemm.pack_weight_direct(wt.reshape(64, -1))
    plan = conv_pool.conv_mean_plan(x.shape, 64, (3, 3, 1, 1, 1, 1, 1, 1), oh, ow, 0.0, 6.0, 2)
    inputs = [rng.standard_normal(x.shape).astype(np.float32) for _ in range(4)]
    want = []
    for xi in inputs:
        want.append(np.empty((2, 64), np.float32))
        plan.run(packed, xi, b, want[-1])
    got = [np.empty((2, 64), np.float32) for _ in inputs]

    def work(i):
        for _ in range(30):
            plan.run(packed, inputs[i], b, got[i])
            np.testing.assert_array_equal(got[i], want[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_plan_rejects_bad_geometry():
    plan = conv_pool.conv_mean_plan
    geo = (3, 3, 1, 1, 1, 1, 1, 1)
    plan((1, 4, 8, 8), 8, geo, 8, 8)  # as given it is fine
    with pytest.raises(ValueError, match="under 16 pixels"):
        plan((1, 4, 3, 3), 8, geo, 3, 3)
    with pytest.raises(ValueError, match="negative pad"):
        plan((1, 4, 8, 8), 8, (3, 3, 1, 1, -1, 1, 1, 1), 8, 8)
    with pytest.raises(ValueError, match="stride"):
        plan((1, 4, 8, 8), 8, (3, 3, 0, 1, 1, 1, 1, 1), 8, 8)
    with pytest.raises(ValueError, match="empty conv"):
        plan((1, 0, 8, 8), 8, geo, 8, 8)
    with pytest.raises(ValueError, match="empty conv"):
        plan((1, 4, 8, 8), 0, geo, 8, 8)
    with pytest.raises(ValueError, match="nthreads"):
        plan((1, 4, 8, 8), 8, geo, 8, 8, 0.0, 6.0, 0)


def test_run_rejects_arrays_unlike_the_plan():
    rng = np.random.default_rng(5)
    x, wt, b, oh, ow = _args(rng, 2, 4, 8, 8, 8, 3, 1, 1, 1)
    packed = sgemm.pack_weight_direct(wt.reshape(8, -1))
    plan = conv_pool.conv_mean_plan(x.shape, 8, (3, 3, 1, 1, 1, 1, 1, 1), oh, ow)
    y = np.empty((2, 8), np.float32)
    plan.run(packed, x, b, y)  # as given they are fine
    with pytest.raises(ValueError, match="input"):
        plan.run(packed, x[:1], b, y)
    with pytest.raises(ValueError, match="packed weight"):
        plan.run(packed[:-1], x, b, y)
    with pytest.raises(ValueError, match="bias"):
        plan.run(packed, x, b[:7], y)
    with pytest.raises(ValueError, match="output"):
        plan.run(packed, x, b, np.empty((2, 9), np.float32))
    with pytest.raises(ValueError, match="pad scratch"):
        plan.run(packed, x, b, y, np.empty(10, np.float32))
    empty = conv_pool.conv_mean_plan((0, 4, 8, 8), 8, (3, 3, 1, 1, 1, 1, 1, 1), oh, ow)
    empty.run(packed, x[:0], b, y[:0])  # no images: nothing to do


@st.composite
def _geometry(draw):
    k, s, d = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    p = draw(st.integers(0, k))
    oh, ow = draw(st.integers(4, 9)), draw(st.integers(4, 9))
    # the smallest image giving that output, or a little larger
    h = max(1, (oh - 1) * s + (k - 1) * d + 1 - 2 * p) + draw(st.integers(0, 2))
    w = max(1, (ow - 1) * s + (k - 1) * d + 1 - 2 * p) + draw(st.integers(0, 2))
    return (draw(st.integers(0, 3)), draw(st.integers(1, 9)), h, w, draw(st.integers(1, 70)),
            k, s, p, d)


@settings(max_examples=60, deadline=None)
@given(_geometry(), st.integers(1, 3), st.integers(0, 2 ** 31 - 1))
def test_random_geometries_match_the_two_kernels_bitwise(geometry, threads, seed):
    n, c, h, w, m, k, s, p, d = geometry
    oh, ow = _out(h, k, s, p, d), _out(w, k, s, p, d)
    assume(oh * ow >= 16)
    rng = np.random.default_rng(seed)
    x, wt, b, _, _ = _args(rng, n, c, h, w, m, k, s, p, d)
    packed = sgemm.pack_weight_direct(wt.reshape(m, -1))
    plan = conv_pool.conv_mean_plan(x.shape, m, (k, k, s, s, p, p, d, d), oh, ow, -1.0, 2.0,
                                    threads)
    y = np.full((n, m), np.nan, np.float32)
    plan.run(packed, x, b, y)
    conv = np.empty((n, m, oh * ow), np.float32)
    sgemm.conv_direct_images(packed, m, x, conv, b, k, k, oh, ow, s, s, p, p, d, d, -1.0, 2.0,
                             threads)
    pooled = np.empty(n * m, np.float32)
    pool.global_forward(conv.reshape(n * m, oh * ow), pooled, False, threads)
    np.testing.assert_array_equal(y.reshape(-1), pooled)
