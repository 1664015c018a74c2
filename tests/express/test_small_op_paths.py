"""Fast paths of small ops that training steps run many times, against numpy: the
equal-rank broadcast rule of binary ops' inference, float reductions through the
ufunc's reduce, matmul's dtype promotion for equal and mixed dtypes."""
import itertools

import numpy as np
import pytest

import mnn.expr as F
from mnn.express.errors import OpError
from mnn.express.ops.elementwise import _broadcast
from mnn.express.optable import get_op

RNG = np.random.default_rng(3)


def test_broadcast_rule_matches_numpy_on_every_small_shape_pair():
    dims = [0, 1, 2, 3]
    for ra, rb in itertools.product(range(4), repeat=2):
        for a in itertools.product(dims, repeat=ra):
            for b in itertools.product(dims, repeat=rb):
                try:
                    want = np.broadcast_shapes(a, b)
                except ValueError:
                    with pytest.raises(OpError, match="cannot be broadcast"):
                        _broadcast(a, b)
                    continue
                got = _broadcast(a, b)
                assert got == want and all(type(d) is int for d in got), (a, b)


def test_binary_op_on_a_bias_row_matches_numpy():
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    b = RNG.standard_normal((1, 7)).astype(np.float32)
    out = F.const(x) + F.const(b)
    assert out.shape == [5, 7]
    np.testing.assert_array_equal(out.read(), x + b)
    with pytest.raises(OpError, match=r"shapes \[5, 7\] and \[2, 7\] cannot be broadcast"):
        F.const(x) + F.const(np.ones((2, 7), np.float32))


_NUMPY = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min,
          "reduce_prod": np.prod, "reduce_mean": np.mean}


@pytest.mark.parametrize("name", sorted(_NUMPY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_reductions_match_numpy_bit_for_bit(name, dtype):
    base = RNG.standard_normal((6, 9, 4)) * 3
    base[1, 2, 3] = np.nan if dtype in (np.float32, np.float64) else 0
    x = base.astype(dtype)
    op = get_op(name)
    for arr in (x, x[:, ::2], np.swapaxes(x, 0, 2)):
        for axes in [(0,), (1,), (2,), (0, 2), (0, 1, 2)]:
            for keepdims in (False, True):
                got = op.compute([arr], axes=axes, keepdims=keepdims)
                (shape, dt), = op.infer([F.const(arr).expr.metas[0]], axes=axes,
                                        keepdims=keepdims)
                want = np.asarray(_NUMPY[name](arr, axis=axes, keepdims=keepdims), dtype=dt)
                assert got.dtype == want.dtype and got.shape == want.shape == tuple(shape)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")
def test_mean_over_trailing_axes_matches_numpy(dtype, threads):
    # Trailing axes of a contiguous array (a global average pool) take the pooling
    # kernel's plane reduction up to 4096-element planes; other layouts take numpy's.
    from mnn.express.ops.reduce import TRAILING_MEAN_MAX_PLANE

    op = get_op("reduce_mean")
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    F.set_thread_number(threads)
    try:
        for shape, axes in [((2, 5, 7, 7), (2, 3)), ((3, 4, 64, 64), (2, 3)),
                            ((1, 2, 65, 64), (2, 3)), ((64, 64, 7, 7), (2, 3)),
                            ((4, 9, 3), (2,)), ((4, 9, 3), (1, 2)), ((0, 3, 2), (1, 2))]:
            x = (RNG.standard_normal(shape) + 2).astype(dtype)
            for arr in (x, np.swapaxes(x, 0, 1)):
                for keepdims in (False, True):
                    got = op.compute([arr], axes=axes, keepdims=keepdims)
                    want = np.mean(arr, axis=axes, keepdims=keepdims)
                    assert got.dtype == dtype and got.shape == want.shape
                    np.testing.assert_allclose(got, want, rtol=rtol)
    finally:
        F.set_thread_number(1)
    assert 64 * 64 <= TRAILING_MEAN_MAX_PLANE < 65 * 64


def test_matmul_promotes_mixed_dtypes_as_numpy():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 2))
    got = F.matmul(F.const(a), F.const(b))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.read(), a.astype(np.float64) @ b, rtol=1e-12)
    same = F.matmul(F.const(a), F.const(b.astype(np.float32)))
    assert same.dtype == np.float32
    with pytest.raises(OpError, match="bool"):
        F.matmul(F.const(np.ones((2, 2), bool)), F.const(np.ones((2, 2), bool)))
