"""Var indexing against numpy: basic slicing, advanced (gather) indexing, masks, setitem."""
import mnn.expr as F
import numpy as np
import pytest

A = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

BASIC_KEYS = [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (0, None, slice(1, 3)),
    slice(None, None, -1), (slice(None), slice(None, None, -2)), (Ellipsis, slice(4, 0, -2)),
    (1, Ellipsis, None), (slice(-3, None), slice(None, -1), 2, slice(None, None, 3)),
    (slice(5, 10),), (slice(1, 1),), (slice(None), slice(2, -5, -1)), (), Ellipsis,
    (None, Ellipsis, None), (slice(-100, 100, 7),),
]

ADVANCED_KEYS = [
    [1, 0], ([0, 1, 1],), (slice(None), [2, 0, 2]), ([0, 1], [2, 0]),
    ([0, 1], slice(None), [1, 3]), (0, slice(None), [0, 1]), (slice(None), 0, [0, 1]),
    (Ellipsis, 0, [1, 2]), (slice(None), [0], None, [0]), (slice(None), [1], Ellipsis, [0]),
    (np.array([[0, 1], [1, 0]]), np.array([1, 2])), (-1, [-1, -3]),
    (np.array([], np.int64),), (slice(None), np.array(1), [0, 2]),
    (A[:, 0, 0, 0] > 10,), (A[..., 0] > 30,), (0, A[0] > 30), (slice(None), A[0, :, 0, 0] > 20),
    (1, A[0, :, :, 0] > 7), (A[:, :, 0, 0] > 70, [0, 3]), (True,), (None, [0, 1], True),
    (False,), (slice(None), [0, 1], True, [1, 2]),
    (slice(None, None, -1), [2, 1], slice(1, 4, 2), [0]),
]


@pytest.mark.parametrize("key", BASIC_KEYS + ADVANCED_KEYS)
def test_getitem_matches_numpy(key):
    x = F.const(A)
    got = x[key]
    want = A[key]
    assert got.shape == list(want.shape)
    np.testing.assert_array_equal(got.read(), want)
    assert got.dtype == want.dtype


def test_basic_keys_build_one_strided_slice():
    assert F.const(A)[0, ::-1, None].op_type == "strided_slice"
    assert F.const(A)[[0, 1]].op_type == "index"


def test_index_with_var_and_bool_var():
    x = F.const(A)
    idx = F.const(np.array([2, 0], np.int32))
    np.testing.assert_array_equal(x[:, idx].read(), A[:, [2, 0]])
    mask = x > 60.0
    got = x[mask]
    np.testing.assert_array_equal(got.read(), A[A > 60])


def test_mask_from_placeholder_infers_after_write():
    p = F.placeholder([4], dtype=np.float32)
    sel = p[p > 1.0]
    p.write([0.0, 2.0, 3.0, 1.0])
    assert sel.shape == [2]
    np.testing.assert_array_equal(sel.read(), [2.0, 3.0])
    p.write([5.0, 5.0, 5.0, 5.0])
    np.testing.assert_array_equal(sel.read(), [5.0] * 4)


def test_random_keys_against_numpy():
    rng = np.random.default_rng(1)
    shape = (3, 4, 5)
    a = rng.standard_normal(shape)
    x = F.const(a)
    for _ in range(300):
        key, dim = [], 0
        for _ in range(rng.integers(0, 4)):
            if dim >= len(shape):
                break
            kind = rng.integers(0, 5)
            n = shape[dim]
            if kind == 0:
                key.append(int(rng.integers(-n, n)))
            elif kind == 1:
                lo, hi = rng.integers(-n - 2, n + 2, size=2)
                step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
                key.append(slice(int(lo) if rng.random() < .8 else None,
                                 int(hi) if rng.random() < .8 else None, step))
            elif kind == 2:
                key.append(rng.integers(-n, n, size=int(rng.integers(1, 3))).tolist())
            elif kind == 3:
                key.append(None)
                continue
            else:
                key.append(Ellipsis if Ellipsis not in key else slice(None))
                if key[-1] is Ellipsis:
                    dim = len(shape) - sum(1 for k in key if k is not None
                                           and k is not Ellipsis) + 1
                    continue
            dim += 1
        key = tuple(key)
        try:
            want = a[key]
        except IndexError:
            with pytest.raises(ValueError):
                x[key].read()
            continue
        got = x[key]
        assert got.shape == list(want.shape), key
        np.testing.assert_array_equal(got.read(), want, err_msg=repr(key))


SET_CASES = [
    (0, 7.0), ((slice(None), 1), np.arange(4 * 5, dtype=np.float32).reshape(4, 5)),
    ((Ellipsis, slice(None, None, -2)), -1.0), ([1, 0], 3.0),
    (([0, 1], [2, 0]), [[[1.0]], [[2.0]]]),
    ((A > 50,), 0.0), ((slice(None), [0, 0]), 9.0), ((0, 1, 2, 3), 100.0),
]


@pytest.mark.parametrize("key,value", SET_CASES)
def test_setitem_matches_numpy(key, value):
    x = F.const(A)
    before = x
    x[key] = value
    want = A.copy()
    want[key] = value
    np.testing.assert_array_equal(x.read(), want)
    assert before is x  # the same Python object now stands for the new value


def test_setitem_key_and_value_use_old_value():
    a = np.array([-2.0, 3.0, -1.0, 4.0])
    x = F.const(a)
    x[x < 0] = -x[x < 0]
    want = a.copy()
    want[want < 0] = -want[want < 0]
    np.testing.assert_array_equal(x.read(), want)


def test_setitem_casts_like_numpy():
    x = F.const(np.zeros(3, np.int32))
    x[1] = 2.7
    want = np.zeros(3, np.int32)
    want[1] = 2.7
    np.testing.assert_array_equal(x.read(), want)
    assert x.dtype == np.int32


@pytest.mark.parametrize("key", [(1, slice(None, None, -1)), (slice(None), [2, 0, 2]),
                                 ([0, 1, 1], slice(1, 3), [0, 2, 2]), (Ellipsis, None, 1)],
                         )
def test_getitem_gradient(gradcheck, key):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    gradcheck(lambda x: x[key], [a])


def test_mask_gradient(gradcheck):
    a = np.random.default_rng(0).standard_normal((3, 4))
    mask = a > 0
    gradcheck(lambda x: x[mask] * 2.0, [a])


@pytest.mark.parametrize("key", [(0,), (slice(None), [1, 2]), (Ellipsis, slice(0, 3, 2)),
                                 ([2, 0, 2],), (slice(None), [3, 3])],
                         )
def test_setitem_gradient(gradcheck, key):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    v = rng.standard_normal(a[key].shape)

    def fn(x, value):
        y = x * 1.0
        y[key] = value * value
        return y

    gradcheck(fn, [a, v])


@pytest.mark.parametrize("key,match", [
    ((0, 0, 0, 0, 0), "too many indices"), (5, "out of range"), ([0, 2], "out of range"),
    ((slice(None), [-4]), "out of range"), (np.zeros((2, 2), bool), "mask"),
    (([0, 1], [0, 1, 2]), "broadcast"), (1.5, "cannot index"), (np.array([0.5]), "integers"),
    ((Ellipsis, Ellipsis), "ellipsis"), (slice(0, 2, 0), "step"),
])
def test_bad_keys_raise_clear_errors(key, match):
    x = F.const(A)
    with pytest.raises(ValueError, match=match):
        x[key].read()


def test_out_of_range_index_var_raises_at_compute():
    x = F.const(np.arange(5.0))
    idx = F.placeholder([2], dtype=np.int32)
    y = x[idx]
    idx.write([1, 7])
    with pytest.raises(ValueError, match="index: index 7 is out of range"):
        y.read()
