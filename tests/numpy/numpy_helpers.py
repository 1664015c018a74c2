"""Comparing mnn.numpy results (Vars, tuples of Vars, Python values) with numpy's."""
import numpy as np

import mnn.expr as F


def data(shape, dtype=np.float32, low=-3.0, high=3.0, seed=0):
    """Deterministic values of ``shape`` and ``dtype``."""
    r = np.random.default_rng(seed + 31 * len(shape) + int(np.sum(shape)))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = max(int(low), int(np.iinfo(dtype).min))
        return r.integers(lo, int(high) + 1, size=shape).astype(dtype)
    return r.uniform(low, high, size=shape).astype(dtype)


def as_vars(value):
    """ndarrays (also inside lists/tuples) as constant Vars of the same dtype."""
    if isinstance(value, np.ndarray):
        return F.const(value, dtype=value.dtype)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [as_vars(v) for v in value]
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        return tuple(as_vars(v) for v in value)
    return value


def to_numpy(result):
    """Vars as arrays, recursively through tuples and lists."""
    if isinstance(result, F.Var):
        return np.asarray(result)
    if isinstance(result, (list, tuple)):
        return type(result)(to_numpy(r) for r in result)
    return result


def _kind(dt):
    return "i" if dt.kind in "iu" else dt.kind


def assert_matches(got, want, rtol=1e-5, atol=1e-6, exact_dtype=False, where=""):
    """``got`` (from mnn.numpy) equals ``want`` (from numpy) in structure, shape, dtype
    kind (or exactly) and values."""
    got = to_numpy(got)
    if isinstance(want, (list, tuple)) and not isinstance(want, np.ndarray):
        assert isinstance(got, (list, tuple)), f"{where}: got {type(got)}, want a sequence"
        assert len(got) == len(want), f"{where}: {len(got)} results, want {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, rtol, atol, exact_dtype, f"{where}[{i}]")
        return
    if isinstance(want, (str, bool)) or want is None:
        assert got == want, f"{where}: {got!r} != {want!r}"
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{where}: shape {g.shape}, want {w.shape}"
    if exact_dtype:
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, want {w.dtype}"
    else:
        assert _kind(g.dtype) == _kind(w.dtype), f"{where}: dtype {g.dtype}, want {w.dtype}"
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(g, w, err_msg=where)


def gradcheck(fn, arrays, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """``F.grad`` of ``sum(fn(*vars) * w)`` against central differences (float64)."""
    r = np.random.default_rng(seed)
    holders = [F.placeholder(list(a.shape), dtype=np.float64) for a in arrays]
    for h, a in zip(holders, arrays):
        h.write(a)
    out = fn(*holders)
    weight = r.standard_normal(out.shape)
    loss = F.reduce_sum(out * F.const(weight))
    grads = F.grad(loss, holders)

    def value(vals):
        for h, a in zip(holders, vals):
            h.write(a)
        return float(np.sum(np.asarray(fn(*holders)) * weight))

    for k, (a, g) in enumerate(zip(arrays, grads)):
        for h, v in zip(holders, arrays):
            h.write(v)
        got = np.asarray(g)
        want = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [v.copy() for v in arrays]
            minus = [v.copy() for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            want[idx] = (value(plus) - value(minus)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k}")
