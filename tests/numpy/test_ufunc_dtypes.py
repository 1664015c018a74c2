"""numpy's ufunc names over every Var dtype: where numpy computes, we give the same values
(and the same dtype, widened from float16/int16 which Vars do not hold); where numpy
refuses the dtype, we refuse it with an error too."""
import warnings

import numpy as np
import pytest

import mnn.numpy as mnp

from numpy_helpers import assert_matches, data

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.bool_]
_WIDEN = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.int16): np.dtype(np.int32),
          np.dtype(np.uint16): np.dtype(np.int32)}

UNARY = ["negative", "sign", "abs", "absolute", "sqrt", "cbrt", "square", "exp", "exp2",
         "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "rint", "floor",
         "ceil", "trunc", "fix", "signbit", "spacing", "isnan", "isinf", "isfinite", "invert",
         "logical_not", "sinc", "i0", "degrees", "radians", "fabs"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "power", "mod", "fmod",
          "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "heaviside",
          "nextafter", "logaddexp", "logaddexp2", "gcd", "lcm", "left_shift", "right_shift",
          "bitwise_and", "bitwise_or", "bitwise_xor", "greater", "greater_equal", "less",
          "less_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_xor"]

def _inputs(dtype, seed, positive=False):
    low = 1 if positive else (-2 if np.dtype(dtype).kind in "if" else 0)
    return data((3, 4), dtype, low=low, high=4, seed=seed)


def _numpy(name, *args):
    """numpy's result; where numpy would compute in float16 (small integer inputs), the
    same function on float32 inputs, which is what a Var computes (it holds no float16)."""
    fn = getattr(np, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            out = fn(*args)
            first = out[0] if isinstance(out, tuple) else out
            if first.dtype == np.float16:
                out = fn(*[a.astype(np.float32) for a in args])
    if isinstance(out, tuple):
        return tuple(o.astype(_WIDEN.get(o.dtype, o.dtype)) for o in out)
    return out.astype(_WIDEN.get(out.dtype, out.dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype):
    x = _inputs(dtype, 1, positive=name in ("log", "log2", "log10", "sqrt", "arccosh"))
    if name in ("arcsin", "arccos", "arctanh") and np.dtype(dtype).kind == "f":
        x = (x / 5).astype(dtype)
    try:
        want = _numpy(name, x)
    except TypeError:
        with pytest.raises((TypeError, ValueError)):
            np.asarray(getattr(mnp, name)(x))
        return
    with np.errstate(all="ignore"):
        got = getattr(mnp, name)(x)
    assert_matches(got, want, rtol=2e-6, atol=1e-6, exact_dtype=True, where=name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, dtype):
    positive = name in ("power", "floor_divide", "mod", "fmod", "gcd", "lcm", "left_shift",
                        "right_shift")
    x = _inputs(dtype, 2, positive=name in ("power",))
    y = _inputs(dtype, 3, positive=positive)
    if name in ("left_shift", "right_shift", "power") and np.dtype(dtype).kind in "iu":
        y = np.minimum(y, 3).astype(dtype)
    try:
        want = _numpy(name, x, y)
    except TypeError:
        with pytest.raises((TypeError, ValueError)):
            np.asarray(getattr(mnp, name)(x, y))
        return
    with np.errstate(all="ignore"):
        got = getattr(mnp, name)(x, y)
    assert_matches(got, want, rtol=2e-6, atol=1e-6, exact_dtype=True, where=name)
