"""Logic, comparison and bitwise functions (numpy's names).

Comparisons return bool Vars. ``all``/``any`` return Vars (0-d for a full reduction);
``array_equal``/``array_equiv``/``allclose`` return Python bools, as numpy does.
"""
import numpy as np

from ..express.ops import elementwise as _ew
from ..express.ops import np_math as _nm
from ..express.ops import np_signal as _nsig
from ..express.ops import reduce as _red
from ..express.ops.elementwise import cast
from ..express.var import Var
from ._util import asvar, axes_tuple, no_out
from .math import _ufunc

__all__ = ["all", "any", "array_equal", "array_equiv", "allclose", "isclose", "greater",
           "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
           "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
           "isposinf", "isneginf", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "invert", "left_shift", "right_shift", "packbits", "unpackbits",
           "binary_repr", "base_repr"]

greater = _ufunc("greater", _ew.greater, 2, "``x1 > x2`` elementwise.")
greater_equal = _ufunc("greater_equal", _ew.greater_equal, 2, "``x1 >= x2`` elementwise.")
less = _ufunc("less", _ew.less, 2, "``x1 < x2`` elementwise.")
less_equal = _ufunc("less_equal", _ew.less_equal, 2, "``x1 <= x2`` elementwise.")
equal = _ufunc("equal", _ew.equal, 2, "``x1 == x2`` elementwise.")
not_equal = _ufunc("not_equal", _ew.not_equal, 2, "``x1 != x2`` elementwise.")
logical_and = _ufunc("logical_and", _ew.logical_and, 2, "Truth of ``x1 and x2``.")
logical_or = _ufunc("logical_or", _ew.logical_or, 2, "Truth of ``x1 or x2``.")
logical_xor = _ufunc("logical_xor", _ew.logical_xor, 2, "Truth of ``x1 xor x2``.")
logical_not = _ufunc("logical_not", _ew.logical_not, 1, "Truth of ``not x``.")
isnan = _ufunc("isnan", _nm.isnan, 1, "True where ``x`` is NaN.")
isinf = _ufunc("isinf", _nm.isinf, 1, "True where ``x`` is infinite.")
isfinite = _ufunc("isfinite", _nm.isfinite, 1, "True where ``x`` is neither inf nor NaN.")
bitwise_and = _ufunc("bitwise_and", _ew.bitwise_and, 2, "Bitwise AND of integers/bools.")
bitwise_or = _ufunc("bitwise_or", _ew.bitwise_or, 2, "Bitwise OR of integers/bools.")
bitwise_xor = _ufunc("bitwise_xor", _ew.bitwise_xor, 2, "Bitwise XOR of integers/bools.")
invert = _ufunc("invert", _ew.bitwise_not, 1, "Bitwise NOT (logical NOT for bools).")
bitwise_not = invert
left_shift = _ufunc("left_shift", _nm.left_shift, 2, "Shift the bits of ``x1`` left.")
right_shift = _ufunc("right_shift", _nm.right_shift, 2, "Shift the bits of ``x1`` right.")


def isposinf(x, out=None):
    """True where ``x`` is +inf."""
    no_out(out)
    x = asvar(x)
    return _ew.logical_and(_nm.isinf(x), _ew.greater(x, 0))


def isneginf(x, out=None):
    """True where ``x`` is -inf."""
    no_out(out)
    x = asvar(x)
    return _ew.logical_and(_nm.isinf(x), _ew.less(x, 0))


def _bool_reduce(fn, a, axis, keepdims, where):
    x = asvar(a)
    if x.dtype != np.bool_:
        x = _ew.not_equal(x, 0)
    if where is not True:
        from ..express.ops.selection import select

        identity = fn is _red.reduce_all
        x = select(asvar(where), x, asvar(np.bool_(identity)))
    axes = axes_tuple(axis, x.ndim)
    if not axes:
        return cast(x, np.bool_)
    return fn(x, list(axes), keepdims=bool(keepdims))


def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether every element (along ``axis``) is true; a bool Var."""
    no_out(out)
    return _bool_reduce(_red.reduce_all, a, axis, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether some element (along ``axis``) is true; a bool Var."""
    no_out(out)
    return _bool_reduce(_red.reduce_any, a, axis, keepdims, where)


def array_equal(a1, a2, equal_nan=False):
    """True if both have the same shape and elements (a Python bool)."""
    x, y = asvar(a1), asvar(a2)
    if x.shape != y.shape:
        return False
    same = _ew.equal(x, y)
    if equal_nan and x.dtype.kind == "f" and y.dtype.kind == "f":
        same = _ew.logical_or(same, _ew.logical_and(_nm.isnan(x), _nm.isnan(y)))
    return bool(_bool_reduce(_red.reduce_all, same, None, False, True))


def array_equiv(a1, a2):
    """True if the inputs broadcast to one shape and are equal there (a Python bool)."""
    x, y = asvar(a1), asvar(a2)
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        return False
    return bool(_bool_reduce(_red.reduce_all, _ew.equal(x, y), None, False, True))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (infinities equal when equal)."""
    x, y = asvar(a), asvar(b)
    dt = np.result_type(x.dtype, y.dtype, np.float32)
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    xf, yf = cast(x, dt), cast(y, dt)
    finite = _ew.logical_and(_nm.isfinite(xf), _nm.isfinite(yf))
    close = _ew.less_equal(_ew.abs(xf - yf), atol + rtol * _ew.abs(yf))
    result = _ew.logical_or(_ew.logical_and(finite, close), _ew.equal(xf, yf))
    if equal_nan:
        result = _ew.logical_or(result, _ew.logical_and(_nm.isnan(xf), _nm.isnan(yf)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    return bool(_bool_reduce(_red.reduce_all, isclose(a, b, rtol, atol, equal_nan), None,
                             False, True))


def packbits(a, axis=None, bitorder="big"):
    """Elements' truth packed into the bits of uint8."""
    return _nsig.packbits(asvar(a), axis, bitorder)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8 elements as a uint8 Var of 0 and 1."""
    return _nsig.unpackbits(asvar(a), axis, count, bitorder)


def binary_repr(num, width=None):
    """The binary string of an integer (two's complement with ``width``)."""
    if isinstance(num, Var):
        num = num.item()
    return np.binary_repr(int(num), width)


def base_repr(number, base=2, padding=0):
    """The string of an integer in ``base`` (2 to 36)."""
    if isinstance(number, Var):
        number = number.item()
    return np.base_repr(int(number), base, padding)
