"""numpy's array methods on Var, the in-place functions, random numbers and input
dtypes, against numpy."""
import numpy as np
import pytest

import mnn.expr as F
import mnn.numpy as mnp

from numpy_helpers import assert_matches, data

x_np = data((3, 4), np.float32)
i_np = data((3, 4), np.int32, seed=1)


def _var(a):
    return F.const(a, dtype=a.dtype)


@pytest.mark.parametrize("method,args,kwargs", [
    ("sum", (), {}), ("sum", (1,), {"keepdims": True}), ("mean", (0,), {}),
    ("max", (), {}), ("min", (1,), {}), ("std", (), {"ddof": 1}), ("var", (0,), {}),
    ("prod", (), {}), ("reshape", (2, 6), {}), ("reshape", ((4, 3),), {}),
    ("reshape", (-1,), {}), ("astype", (np.int32,), {}), ("flatten", (), {}),
    ("ravel", (), {}), ("transpose", (), {}), ("transpose", (1, 0), {}),
    ("squeeze", (), {}), ("copy", (), {}), ("tolist", (), {}), ("any", (), {}),
    ("all", (0,), {}), ("clip", (-1, 1), {}), ("round", (1,), {}), ("ptp", (1,), {}),
    ("repeat", (2,), {"axis": 0}), ("swapaxes", (0, 1), {}), ("nonzero", (), {}),
    ("take", ([0, 5],), {}), ("diagonal", (), {}), ("trace", (), {}),
    ("tobytes", (), {}), ("compress", ([True, False, True],), {"axis": 0}),
    ("argmax", (), {}), ("argmin", (0,), {}), ("argsort", (1,), {}),
    ("cumsum", (), {}), ("cumprod", (1,), {}), ("argpartition", (2,), {}),
])
def test_method_matches_numpy(method, args, kwargs):
    got = getattr(_var(x_np), method)(*args, **kwargs)
    # ndarray.ptp was removed in numpy 2; np.ptp is the same computation.
    want = np.ptp(x_np, *args, **kwargs) if method == "ptp" else \
        getattr(x_np, method)(*args, **kwargs)
    if method in ("tolist", "tobytes"):
        assert got == want
        return
    assert_matches(got, want, where=method)


def test_properties_and_dot():
    v = _var(x_np)
    assert_matches(v.T, x_np.T)
    assert_matches(_var(data((2, 3, 4))).mT, data((2, 3, 4)).mT)
    assert v.nbytes == x_np.nbytes and v.itemsize == 4
    assert list(v.flat) == list(x_np.flat)
    assert_matches(v.dot(_var(x_np.T)), x_np.dot(x_np.T))
    assert_matches(_var(i_np).choose([x_np[0], x_np[1], x_np[2]], mode="clip"),
                   i_np.choose([x_np[0], x_np[1], x_np[2]], mode="clip"))


def test_sort_and_partition_methods_work_in_place():
    v = _var(x_np)
    assert v.sort(axis=0) is v
    np.testing.assert_array_equal(np.asarray(v), np.sort(x_np, axis=0))
    v = _var(x_np)
    v.partition(1)
    got = np.asarray(v)
    np.testing.assert_array_equal(got[:, 1], np.sort(x_np, axis=1)[:, 1])
    sorted_v = _var(np.sort(x_np.ravel()))
    assert_matches(sorted_v.searchsorted(x_np), np.searchsorted(np.sort(x_np.ravel()), x_np))
    v = _var(x_np)
    assert v.put([0], 7.0) is v and float(np.asarray(v)[0, 0]) == 7.0


def test_reshape_zero_is_a_real_size():
    empty = F.const(np.zeros((0, 3), np.float32))
    assert empty.reshape(3, 0).shape == [3, 0]
    assert mnp.reshape(empty, (0, 3, 1)).shape == [0, 3, 1]


def test_fill_and_inplace_functions_rebind_the_var():
    v = _var(x_np)
    assert v.fill(2.5) is v
    np.testing.assert_array_equal(np.asarray(v), np.full((3, 4), 2.5, np.float32))
    mnp.fill(v, 1)
    np.testing.assert_array_equal(np.asarray(v), np.ones((3, 4), np.float32))

    want = x_np.copy()
    v = _var(x_np)
    np.put(want, [0, 7], [9, 8])
    mnp.put(v, [0, 7], F.const(np.array([9, 8], np.float32)))
    np.testing.assert_array_equal(np.asarray(v), want)

    mask = x_np > 0
    want = x_np.copy()
    np.putmask(want, mask, [1.0, 2.0])
    v = _var(x_np)
    mnp.putmask(v, mask, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(v), want)

    want = x_np.copy()
    np.place(want, mask, [5.0, 6.0])
    v = _var(x_np)
    mnp.place(v, mask, np.array([5.0, 6.0], np.float32))
    np.testing.assert_array_equal(np.asarray(v), want)

    want = x_np.copy()
    np.fill_diagonal(want, 0)
    v = _var(x_np)
    mnp.fill_diagonal(v, 0)
    np.testing.assert_array_equal(np.asarray(v), want)

    want = x_np.copy()
    idx = np.array([[0], [2], [1]])
    np.put_along_axis(want, idx, -1.0, 1)
    v = _var(x_np)
    mnp.put_along_axis(v, idx, -1.0, 1)
    np.testing.assert_array_equal(np.asarray(v), want)

    v = _var(x_np)
    mnp.copyto(v, np.float32(3.0), where=mask)
    np.testing.assert_array_equal(np.asarray(v), np.where(mask, 3.0, x_np))


def test_copy_is_not_rebound_with_the_original():
    v = _var(x_np)
    c = mnp.copy(v)
    v.fill(0)
    np.testing.assert_array_equal(np.asarray(c), x_np)


def test_inplace_needs_a_var():
    with pytest.raises(TypeError, match="must be a Var"):
        mnp.put(x_np, [0], [1.0])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.int64, np.float32,
                                   np.float64, np.bool_, np.int16, np.float16])
def test_numpy_arrays_of_common_dtypes_are_accepted(dtype):
    a = data((2, 3), dtype, low=0, high=5)
    v = mnp.array(a)
    np.testing.assert_array_equal(np.asarray(v), a)
    assert_matches(mnp.sum(a, axis=0), np.sum(a, axis=0).astype(
        np.int32 if a.dtype == np.bool_ else a.dtype))
    assert_matches(mnp.transpose(a), a.T)


def test_defaults_follow_mnn_numpy():
    assert mnp.array([1.0]).dtype == np.float32
    assert mnp.array([1]).dtype == np.int32
    assert mnp.zeros(3).dtype == np.float32
    assert mnp.arange(3).dtype == np.int32
    assert mnp.arange(0.0, 1.0, 0.5).dtype == np.float32
    assert mnp.array([1.0], dtype=float).dtype == np.float64
    assert mnp.array(np.ones(2)).dtype == np.float64


def test_random_reproduces_numpy_randomstate():
    mnp.random.seed(7)
    ref = np.random.RandomState(7)
    assert_matches(mnp.random.rand(2, 3), ref.random_sample((2, 3)).astype(np.float32),
                   exact_dtype=True)
    assert_matches(mnp.random.randn(4), ref.standard_normal(4).astype(np.float32),
                   exact_dtype=True)
    assert_matches(mnp.random.randint(2, 9, size=(3,)),
                   ref.randint(2, 9, size=(3,), dtype=np.int64).astype(np.int32),
                   exact_dtype=True)
    assert_matches(mnp.random.random((2,)), ref.random_sample((2,)).astype(np.float32))
    assert_matches(mnp.random.uniform(1, 2, 3), ref.uniform(1, 2, 3).astype(np.float32))
    assert_matches(mnp.random.normal(1, 2, 3), ref.normal(1, 2, 3).astype(np.float32))
    assert_matches(mnp.random.choice(5, 3, replace=False),
                   ref.choice(5, 3, replace=False))
    assert_matches(mnp.random.permutation(6), ref.permutation(6))
    assert mnp.random.rand().shape == []
    assert mnp.random.rand([2, 3]).shape == [2, 3]


def test_randn_is_normal_and_shuffle_permutes():
    mnp.random.seed(1)
    z = np.asarray(mnp.random.randn(20000))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    assert np.mean(z < 0) == pytest.approx(0.5, abs=0.02)
    v = F.const(np.arange(10, dtype=np.int32))
    mnp.random.shuffle(v)
    got = np.asarray(v)
    assert sorted(got.tolist()) == list(range(10))
    picks = np.asarray(mnp.random.choice(F.const(np.array([1.5, 2.5], np.float32)), 50,
                                         p=[0.0, 1.0]))
    assert np.all(picks == 2.5)


def test_names_numpy_returns_as_python_values():
    assert mnp.array_equal([1, 2], [1, 2]) is True
    assert mnp.allclose(x_np, x_np) is True
    assert mnp.shape(x_np) == (3, 4)
    assert isinstance(mnp.sum(x_np), F.Var) and mnp.sum(x_np).shape == []
    assert mnp.asscalar(np.array([3.0])) == 3.0


def test_iterators_over_computed_values():
    v = _var(x_np)
    assert [i for i, _ in mnp.ndenumerate(v)] == [i for i, _ in np.ndenumerate(x_np)]
    assert list(mnp.ndindex(2, 3)) == list(np.ndindex(2, 3))
    assert [float(e) for e in mnp.nditer(v)] == [float(e) for e in np.nditer(x_np)]
    assert list(mnp.flatiter(v)) == list(x_np.flat)
    outer, inner = mnp.nested_iters([v], [[0], [1]])
    rows = []
    for _ in outer:
        rows.append([float(e) for e in inner])
    assert rows == x_np.tolist()
    bc = mnp.broadcast(x_np, data((4,)))
    assert bc.shape == (3, 4) and bc.size == 12 and bc.nd == 2
    assert list(bc) == list(np.broadcast(x_np, data((4,))))


def test_loadtxt_and_fromfile(tmp_path):
    path = tmp_path / "m.txt"
    np.savetxt(path, x_np)
    assert_matches(mnp.loadtxt(str(path)), np.loadtxt(str(path)).astype(np.float32))
    raw = tmp_path / "m.bin"
    x_np.tofile(raw)
    assert_matches(mnp.fromfile(str(raw)).reshape(3, 4), x_np)
