"""The compiled softmax, layer norm, pooling, relu_grad and matmul paths at sizes that
use their vector lanes and thread splits, at 1 and 2 threads, against torch and numpy."""
import itertools

import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from mnn.express.graph import apply

RNG = np.random.default_rng(7)


@pytest.fixture(params=[1, 2])
def threads(request):
    before = F.get_thread_number()
    F.set_thread_number(request.param)
    yield request.param
    F.set_thread_number(before)


@pytest.mark.parametrize("shape,axis", [((64, 1000), -1), ((3, 37), 1), ((5, 130, 9), 1),
                                        ((4, 33, 70), 0), ((2, 3, 1), 2)])
def test_softmax_and_log_softmax_match_torch(threads, shape, axis):
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    x.flat[3] = 80.0  # a dominant entry: the max shift must keep this finite
    t = torch.tensor(x)
    np.testing.assert_allclose(F.softmax(F.const(x), axis).read(),
                               torch.softmax(t, axis).numpy(), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(F.log_softmax(F.const(x), axis).read(),
                               torch.log_softmax(t, axis).numpy(), rtol=2e-6, atol=2e-5)


def test_softmax_propagates_nan_and_infinity():
    x = np.array([[1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [-np.inf, 0.0, 1.0]], np.float32)
    t = torch.tensor(x)
    np.testing.assert_array_equal(F.softmax(F.const(x), 1).read(), torch.softmax(t, 1).numpy())
    np.testing.assert_array_equal(F.log_softmax(F.const(x), 1).read(),
                                  torch.log_softmax(t, 1).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 768), (7, 5, 33), (3, 1)])
def test_layer_norm_matches_torch(threads, dtype, shape):
    x = (RNG.standard_normal(shape) * 3 + 5).astype(dtype)
    g = RNG.standard_normal(shape[-1:]).astype(dtype)
    b = RNG.standard_normal(shape[-1:]).astype(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for gamma, beta in ((g, b), (g, None), (None, b), (None, None)):
        got = F.layer_norm(F.const(x), -1, None if gamma is None else F.const(gamma),
                           None if beta is None else F.const(beta), 1e-5).read()
        ref = TF.layer_norm(torch.tensor(x), shape[-1:],
                            None if gamma is None else torch.tensor(gamma),
                            None if beta is None else torch.tensor(beta), 1e-5).numpy()
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("k,s,p,ceil", [(3, 2, 1, False), (2, 2, 0, False), (3, 1, 1, False),
                                        (3, 3, 0, True), (5, 2, 2, True)])
def test_pooling_matches_torch(threads, k, s, p, ceil):
    x = RNG.standard_normal((2, 24, 31, 45)).astype(np.float32)
    x[0, 0, 3, 4] = np.nan  # max pooling propagates NaN, as torch does
    t = torch.tensor(x)
    got = F.max_pool(F.const(x), (k, k), (s, s), pads=(p, p), ceil_mode=ceil).read()
    ref = TF.max_pool2d(t, k, s, p, ceil_mode=ceil).numpy()
    np.testing.assert_array_equal(got, ref)
    x[0, 0, 3, 4] = 0.0
    t = torch.tensor(x)
    for include in (False, True):
        got = F.avg_pool(F.const(x), (k, k), (s, s), pads=(p, p), ceil_mode=ceil,
                         count_include_pad=include).read()
        ref = TF.avg_pool2d(t, k, s, p, ceil_mode=ceil, count_include_pad=include).numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


def test_pooling_is_deterministic_across_threads():
    # A race between OpenMP threads (a window bound shared instead of private) corrupted
    # a few outputs in ~1 of 70 two-thread runs; repeat so such a race shows.
    before = F.get_thread_number()
    F.set_thread_number(2)
    try:
        x = RNG.standard_normal((1, 64, 112, 112)).astype(np.float32)
        ref = TF.max_pool2d(torch.tensor(x), 3, 2, 1).numpy()
        ref_avg = TF.avg_pool2d(torch.tensor(x), 3, 2, 1).numpy()
        xv = F.placeholder(list(x.shape))
        y = F.max_pool(xv, (3, 3), (2, 2), pads=(1, 1))
        y_avg = F.avg_pool(xv, (3, 3), (2, 2), pads=(1, 1))
        for _ in range(150):
            xv.write(x)
            np.testing.assert_array_equal(y.read(), ref)
            np.testing.assert_allclose(y_avg.read(), ref_avg, rtol=1e-5, atol=1e-6)
    finally:
        F.set_thread_number(before)


@pytest.mark.parametrize("slope", [0.0, 0.2])
def test_relu_gradient_matches_torch(threads, slope):
    x = RNG.standard_normal((3, 50000)).astype(np.float32)
    x[0, :5] = [0.0, -0.0, np.nan, 1e-30, -1e-30]
    g = RNG.standard_normal(x.shape).astype(np.float32)
    xv = F.const(x)
    (got,) = F.grad([F.relu(xv, slope)], [xv], [F.const(g)])
    assert got.expr.op.name == "relu_grad"
    t = torch.tensor(x, requires_grad=True)
    TF.leaky_relu(t, slope).backward(torch.tensor(g))
    np.testing.assert_array_equal(got.read(), t.grad.numpy())
    np.testing.assert_array_equal(
        apply("relu_grad", [F.const(x), F.const(g)], slope=slope)[0].read(), t.grad.numpy())


_MATMUL_SHAPES = [((300, 257), (257, 190)), ((4, 33, 17), (17, 29)), ((2, 1, 9, 40), (3, 40, 8)),
                  ((1, 7, 5), (6, 5, 3)), ((40,), (40, 70)), ((64, 40), (40,)), ((5, 0), (0, 3))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", _MATMUL_SHAPES)
def test_matmul_matches_numpy(threads, dtype, sa, sb):
    for ta, tb in itertools.product([False, True], repeat=2):
        a = RNG.standard_normal(sa).astype(dtype)
        b = RNG.standard_normal(sb).astype(dtype)
        if ta and a.ndim > 1:
            a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        if tb and b.ndim > 1:
            b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
        ref = np.matmul(np.swapaxes(a, -1, -2) if ta and a.ndim > 1 else a,
                        np.swapaxes(b, -1, -2) if tb and b.ndim > 1 else b)
        got = F.matmul(F.const(a), F.const(b), ta, tb).read()
        assert got.shape == ref.shape and got.dtype == ref.dtype
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_matmul_of_non_contiguous_views():
    base = RNG.standard_normal((12, 20)).astype(np.float32)
    a = base[:, ::2]          # strided: copied to contiguous
    b = base[:10, :7].T.copy().T  # transposed view of a contiguous array: read in place
    np.testing.assert_allclose(F.matmul(F.const(a), F.const(b)).read(), a @ b, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k,n", [(128, 33), (1283, 1000), (4096, 7), (200, 1)])
@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_gemm_split_vector_times_matrix_matches_numpy(dtype, k, n, nthreads):
    # A row vector times a (k, n) matrix: with several threads, split by blocks of rows
    # and the partial rows summed (alpha, beta and a transposed a included).
    from mnn._cython import gemm

    for trans_a, alpha, beta in ((False, 1.0, 0.0), (True, 0.5, 2.0)):
        a = RNG.standard_normal((k, 1) if trans_a else (1, k)).astype(dtype)
        b = RNG.standard_normal((k, n)).astype(dtype)
        c0 = RNG.standard_normal((1, n)).astype(dtype)
        c = c0.copy()
        gemm.gemm_split(a, b, c, trans_a, False, alpha, beta, nthreads)
        want = alpha * ((a.T if trans_a else a) @ b) + beta * c0
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(c, want, rtol=tol, atol=tol * np.sqrt(k))


def test_classifier_matmul_matches_numpy(threads):
    a = RNG.standard_normal((1, 1280)).astype(np.float32)
    w = RNG.standard_normal((1280, 1000)).astype(np.float32)
    got = F.matmul(F.const(a), F.const(w)).read()
    np.testing.assert_allclose(got, a.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)
