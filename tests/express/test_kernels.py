"""The compiled multi-threaded paths (large float arrays, 2 threads) against numpy."""
import mnn.expr as F
import numpy as np
import pytest

from mnn.express.ops import elementwise, reduce

N = elementwise.PARALLEL_MIN_SIZE + 5  # odd length above the threshold


@pytest.fixture
def two_threads():
    before = F.get_thread_number()
    F.set_thread_number(2)
    yield
    F.set_thread_number(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,ref", [("add", np.add), ("subtract", np.subtract),
                                      ("multiply", np.multiply), ("divide", np.divide),
                                      ("maximum", np.maximum), ("minimum", np.minimum)])
def test_binary_kernels_equal_numpy(two_threads, name, ref, dtype):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(N).astype(dtype) for _ in range(2))
    a[::1000] = np.nan  # NaN propagation must match numpy's maximum/minimum
    b[5::777] = np.nan
    b[7] = a[7]
    got = getattr(F, name)(F.const(a), F.const(b)).read()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, ref(a, b))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [reduce.COMPILED_MIN_SIZE + 1, reduce.PARALLEL_MIN_SIZE + 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean"])
def test_sum_kernel_close_to_float64_sum(threads, size, dtype, keepdims, name):
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(1)
        a = rng.standard_normal((3, size // 3 + 1)).astype(dtype)
        got = getattr(F, name)(F.const(a), keepdims=keepdims).read()
    finally:
        F.set_thread_number(before)
    exact = a.astype(np.float64)
    want = exact.sum(keepdims=keepdims) if name == "reduce_sum" else exact.mean(
        keepdims=keepdims)
    assert got.dtype == dtype and got.shape == np.shape(want)
    # The error bound of blocked summation: a small multiple of eps * sum(|a|).
    eps = np.finfo(dtype).eps
    bound = 64 * eps * np.abs(exact).sum() / (a.size if name == "reduce_mean" else 1)
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound)


@pytest.mark.parametrize("threads", [1, 2])
def test_exp_kernel_within_one_ulp_and_special_values(threads):
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(3)
        x = rng.uniform(-90, 90, N).astype(np.float32)
        x[:8] = [np.nan, np.inf, -np.inf, 88.5, -87.5, -104.0, 0.0, -0.0]
        got = F.exp(F.const(x)).read()
    finally:
        F.set_thread_number(before)
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
        want32 = exact.astype(np.float32)
        finite = np.isfinite(want32) & (want32 != 0)
        ulp = np.spacing(want32[finite]).astype(np.float64)  # subnormals: 2**-149
        assert np.all(np.abs(got[finite] - exact[finite]) <= ulp)
        # inf, nan, overflow and underflow to zero as numpy gives them
        np.testing.assert_array_equal(got[~finite], np.exp(x[~finite]))
    assert got.dtype == np.float32
