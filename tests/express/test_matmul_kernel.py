"""matmul.pyx (float32 C = A @ B, B packed once, A read in place) against numpy in
float64: directly (every build; without AVX-512 its tile is plain C) and through
``F.matmul``, which takes it for float32 products of at least 2 rows and 64 columns when
the build has the AVX-512 tile."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import gemm, matmul
from mnn.express.ops import linalg, pack_cache

RNG = np.random.default_rng(17)

SHAPES = [(1, 1, 1), (2, 3, 5), (7, 5, 3), (8, 256, 32), (9, 257, 33), (17, 513, 95),
          (64, 784, 128), (3, 1000, 70), (40, 64, 300)]


def _bound(a, b):
    # float32 accumulation: a small multiple of eps times the sum of |products|
    return 4 * a.shape[-1] ** 0.5 * np.finfo(np.float32).eps * (
        np.abs(a).astype(np.float64) @ np.abs(b)) + 1e-30


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_kernel_matches_numpy(m, k, n, ta, tb, threads):
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    stored_a = np.ascontiguousarray(a.T) if ta else a
    packed = (matmul.pack_b(np.ascontiguousarray(b.T), True, threads) if tb
              else matmul.pack_b(b, False, threads))
    c = np.full((m, n), np.nan, np.float32)  # every element must be written
    matmul.gemm(stored_a, packed, c, ta, threads)
    exact = a.astype(np.float64) @ b
    assert np.all(np.abs(c - exact) <= _bound(a, b))


@pytest.mark.parametrize("n,k", [(1, 1), (7, 40), (16, 16), (33, 17), (50, 1024),
                                 (64, 48), (500, 803)])
def test_packing_a_transposed_b_gives_the_same_strips(n, k):
    # pack_b(b.T, transposed=True) (16 x 16 register transposes where the build has
    # AVX-512, element by element at the edges) lays out exactly what pack_b(b) does
    b = RNG.standard_normal((k, n)).astype(np.float32)
    for threads in (1, 2):
        plain = matmul.pack_b(b, False, threads)
        moved = matmul.pack_b(np.ascontiguousarray(b.T), True, threads)
        assert (moved.k, moved.n) == (plain.k, plain.n) == (k, n)
        np.testing.assert_array_equal(moved.data, plain.data)


def test_kernel_edges_and_errors():
    a = np.ones((3, 0), np.float32)
    c = np.full((3, 4), np.nan, np.float32)
    matmul.gemm(a, matmul.pack_b(np.ones((0, 4), np.float32)), c)
    np.testing.assert_array_equal(c, 0)  # an empty inner dimension sums nothing
    a = np.ones((3, 5), np.float32)
    packed = matmul.pack_b(np.ones((5, 40), np.float32))
    assert (packed.k, packed.n) == (5, 40)
    with pytest.raises(ValueError, match="packed B"):
        matmul.gemm(np.ones((3, 6), np.float32), packed, np.empty((3, 40), np.float32))
    with pytest.raises(ValueError, match="output"):
        matmul.gemm(a, packed, np.empty((3, 41), np.float32))
    with pytest.raises(ValueError, match="output"):
        matmul.gemm(a, packed, np.empty((4, 40), np.float32))
    with pytest.raises(ValueError, match="nthreads"):
        matmul.gemm(a, packed, np.empty((3, 40), np.float32), False, 0)
    with pytest.raises(TypeError):
        matmul.gemm(a, packed.data, np.empty((3, 40), np.float32))  # not a PackedB
    short = matmul.PackedB(5, 40, np.ones(3, np.float32))  # claims more than it holds
    with pytest.raises(ValueError, match="packed B"):
        matmul.gemm(a, short, np.empty((3, 40), np.float32))


def test_nan_and_inf_propagate_as_in_numpy():
    a = RNG.standard_normal((16, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 96)).astype(np.float32)
    a[3, 5] = np.nan
    b[7, 50] = np.inf
    c = np.empty((16, 96), np.float32)
    matmul.gemm(a, matmul.pack_b(b), c)
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b
    np.testing.assert_array_equal(np.isnan(c), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(c), np.isposinf(want))


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_batched_kernel_follows_the_index_maps(ta, tb, threads):
    a = RNG.standard_normal((3, 9, 70)).astype(np.float32)
    b = RNG.standard_normal((2, 70, 96)).astype(np.float32)
    ia = np.array([0, 1, 2, 0, 1], np.int64)
    ib = np.array([1, 0, 1, 1, 0], np.int64)
    stored_a = np.ascontiguousarray(a.transpose(0, 2, 1)) if ta else a
    stored_b = np.ascontiguousarray(b.transpose(0, 2, 1)) if tb else b
    c = np.full((5, 9, 96), np.nan, np.float32)
    matmul.gemm_batch(stored_a, stored_b, c, ia, ib, ta, tb, threads)
    for i in range(5):
        exact = a[ia[i]].astype(np.float64) @ b[ib[i]]
        assert np.all(np.abs(c[i] - exact) <= _bound(a[ia[i]], b[ib[i]]))


@pytest.mark.parametrize("kernel", [matmul.gemm_batch, gemm.gemm_indexed])
def test_batched_kernels_check_indices_and_shapes(kernel):
    # our kernel and the BLAS one share these checks (batch_maps.pxd)
    a = np.ones((2, 4, 8), np.float32)
    b = np.ones((2, 8, 64), np.float32)
    c = np.empty((2, 4, 64), np.float32)
    ok = np.array([0, 1], np.int64)
    with pytest.raises(ValueError, match="batch index"):
        kernel(a, b, c, np.array([0, 2], np.int64), ok)
    with pytest.raises(ValueError, match="batch index"):
        kernel(a, b, c, ok, np.array([-1, 0], np.int64))
    with pytest.raises(ValueError, match="shapes do not match"):
        kernel(a, b, np.empty((2, 4, 63), np.float32), ok, ok)
    with pytest.raises(ValueError, match="shapes do not match"):
        kernel(a, b, c, np.array([0], np.int64), ok)
    with pytest.raises(ValueError, match="nthreads"):
        kernel(a, b, c, ok, ok, False, False, 0)
    kernel(a, b, c, ok, ok)
    np.testing.assert_array_equal(c, 8)


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_matmul_op_matches_numpy(threads):
    # attention-like products, with a broadcast batch dimension, through F.matmul
    F.set_thread_number(threads)
    try:
        q = RNG.standard_normal((2, 3, 40, 16)).astype(np.float32)
        k = RNG.standard_normal((2, 3, 64, 16)).astype(np.float32)
        got = F.matmul(F.const(q), F.const(k), False, True).read()
        want = q.astype(np.float64) @ np.swapaxes(k, -1, -2)
        assert np.all(np.abs(got - want) <= _bound(q, np.swapaxes(k, -1, -2)))
        v = RNG.standard_normal((1, 3, 16, 128)).astype(np.float32)
        got = F.matmul(F.const(q), F.const(v)).read()
        assert np.all(np.abs(got - q.astype(np.float64) @ v) <= _bound(q, v))
    finally:
        F.set_thread_number(1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_op_matches_numpy(ta, tb, threads):
    # Shapes the op routes to the kernel (2-D, and a batch of rows times a matrix) and
    # ones it keeps on BLAS (one row, few columns): the same results either way.
    F.set_thread_number(threads)
    try:
        for m, k, n in [(64, 300, 128), (5, 77, 64), (1, 300, 128), (64, 300, 40)]:
            a = RNG.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
            b = RNG.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
            got = F.matmul(F.const(a), F.const(b), ta, tb).read()
            aa, bb = (a.T if ta else a), (b.T if tb else b)
            assert np.all(np.abs(got - aa.astype(np.float64) @ bb) <= _bound(aa, bb))
        x = RNG.standard_normal((3, 20, 48)).astype(np.float32)
        w = RNG.standard_normal((48, 80)).astype(np.float32)
        got = F.matmul(F.const(x), F.const(w)).read()
        assert np.all(np.abs(got - x.astype(np.float64) @ w) <= _bound(x, w))
    finally:
        F.set_thread_number(1)


@pytest.mark.skipif(not matmul.fast(), reason="the op takes the kernel with AVX-512 only")
def test_a_constant_weight_is_packed_once():
    w = RNG.standard_normal((96, 128)).astype(np.float32)
    x = F.placeholder([32, 96])
    y = F.matmul(x, F.const(w))

    def entries():
        return [key for key in pack_cache.PACKED.entries if key[0] == ("matmul_b", False)]

    before = len(entries())
    for _ in range(3):
        data = RNG.standard_normal((32, 96)).astype(np.float32)
        x.write(data)
        assert np.all(np.abs(y.read() - data.astype(np.float64) @ w) <= _bound(data, w))
    assert len(entries()) == before + 1
    assert linalg._MM_MIN_COLS <= 128
