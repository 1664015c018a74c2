"""Mathematical functions under numpy's names: ufuncs, rounding, sums and products,
differences, and 1-d signal helpers.

Every function takes Vars, numpy arrays, lists or scalars and returns a Var. Binary
functions broadcast and promote like numpy (NEP 50 for Python scalars). Sums and
products of bools and integers accumulate in int64 as numpy's do (MNN's reduce_sum
keeps the input type, so a uint8 sum would wrap around).
"""
import builtins

import numpy as np

from .. import express as _F
from ..express.errors import OpError
from ..express.ops import elementwise as _ew
from ..express.ops import movement as _mv
from ..express.ops import np_math as _nm
from ..express.ops import np_shape as _nps
from ..express.ops import np_signal as _nsig
from ..express.ops import reduce as _red
from ..express.ops.elementwise import cast
from ..express.ops.selection import select
from ..express.var import Var, const
from ._util import asvar, axes_tuple, axis_index, float_dtype, no_out, npdtype

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
    "float_power", "mod", "remainder", "fmod", "divmod", "modf", "negative", "positive",
    "reciprocal", "sign", "abs", "absolute", "fabs", "sqrt", "cbrt", "square", "exp",
    "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "hypot", "degrees", "radians", "deg2rad", "rad2deg",
    "sinc", "around", "round", "round_", "rint", "fix", "floor", "ceil", "trunc", "clip",
    "maximum", "minimum", "fmax", "fmin", "copysign", "heaviside", "signbit", "ldexp",
    "frexp", "nextafter", "spacing", "gcd", "lcm", "i0", "nan_to_num", "real_if_close",
    "sum", "prod", "nansum", "nanprod", "cumsum", "cumprod", "nancumsum", "nancumprod",
    "diff", "ediff1d", "gradient", "cross", "trapz", "trapezoid", "convolve", "correlate",
    "interp", "unwrap", "sort_complex",
]


def _ufunc(name, op, nargs, doc):
    """A numpy-style function calling express op function ``op`` on its arguments."""
    if nargs == 1:
        def fn(x, out=None, dtype=None):
            no_out(out)
            x = asvar(x) if dtype is None else asvar(x, dtype)
            return op(x)
    else:
        def fn(x1, x2, out=None, dtype=None):
            no_out(out)
            result = op(x1 if not isinstance(x1, (list, tuple)) else asvar(x1),
                        x2 if not isinstance(x2, (list, tuple)) else asvar(x2))
            return result if dtype is None else cast(result, npdtype(dtype))
    fn.__name__ = fn.__qualname__ = name
    args = "x" if nargs == 1 else "x1, x2"
    fn.__doc__ = (f"{doc}\n\nParameters\n----------\n{args} : Var or array_like\n"
                  "out : None\n    Must be None (Vars are values).\ndtype : dtype, optional"
                  "\n\nReturns\n-------\nVar\n")
    return fn


add = _ufunc("add", _ew.add, 2, "Elementwise sum.")
subtract = _ufunc("subtract", _ew.subtract, 2, "Elementwise difference.")
multiply = _ufunc("multiply", _ew.multiply, 2, "Elementwise product.")
divide = _ufunc("divide", _ew.divide, 2, "True division (integers give float64).")
true_divide = divide
floor_divide = _ufunc("floor_divide", _ew.floordiv, 2, "Division rounded down.")
power = _ufunc("power", _ew.pow, 2, "``x1 ** x2`` elementwise.")
mod = _ufunc("mod", _ew.mod, 2, "Remainder with the sign of the divisor (Python's %).")
remainder = mod
fmod = _ufunc("fmod", _nm.fmod, 2, "Remainder with the sign of the dividend (C's fmod).")
negative = _ufunc("negative", _ew.negative, 1, "``-x`` elementwise.")
reciprocal = _ufunc("reciprocal", _ew.reciprocal, 1,
                    "``1 / x`` elementwise (integers give the true value as float64).")
sign = _ufunc("sign", _ew.sign, 1, "-1, 0 or 1 by the sign of ``x``.")
abs = _ufunc("abs", _ew.abs, 1, "Absolute value.")  # noqa: A001
absolute = abs
sqrt = _ufunc("sqrt", _ew.sqrt, 1, "Square root.")
cbrt = _ufunc("cbrt", _nm.cbrt, 1, "Cube root (defined for negative numbers).")
square = _ufunc("square", _ew.square, 1, "``x * x``.")
exp = _ufunc("exp", _ew.exp, 1, "Exponential.")
exp2 = _ufunc("exp2", _nm.exp2, 1, "``2 ** x``.")
expm1 = _ufunc("expm1", _ew.expm1, 1, "``exp(x) - 1``, accurate near 0.")
log = _ufunc("log", _ew.log, 1, "Natural logarithm.")
log2 = _ufunc("log2", _nm.log2, 1, "Base-2 logarithm.")
log10 = _ufunc("log10", _nm.log10, 1, "Base-10 logarithm.")
log1p = _ufunc("log1p", _ew.log1p, 1, "``log(1 + x)``, accurate near 0.")
logaddexp = _ufunc("logaddexp", _nm.logaddexp, 2, "``log(exp(x1) + exp(x2))`` stably.")
logaddexp2 = _ufunc("logaddexp2", _nm.logaddexp2, 2, "``log2(2**x1 + 2**x2)`` stably.")
sin = _ufunc("sin", _ew.sin, 1, "Sine.")
cos = _ufunc("cos", _ew.cos, 1, "Cosine.")
tan = _ufunc("tan", _ew.tan, 1, "Tangent.")
arcsin = _ufunc("arcsin", _ew.asin, 1, "Inverse sine.")
arccos = _ufunc("arccos", _ew.acos, 1, "Inverse cosine.")
arctan = _ufunc("arctan", _ew.atan, 1, "Inverse tangent.")
arctan2 = _ufunc("arctan2", _ew.atan2, 2, "Angle of the point ``(x2, x1)``.")
sinh = _ufunc("sinh", _ew.sinh, 1, "Hyperbolic sine.")
cosh = _ufunc("cosh", _ew.cosh, 1, "Hyperbolic cosine.")
tanh = _ufunc("tanh", _ew.tanh, 1, "Hyperbolic tangent.")
arcsinh = _ufunc("arcsinh", _ew.asinh, 1, "Inverse hyperbolic sine.")
arccosh = _ufunc("arccosh", _ew.acosh, 1, "Inverse hyperbolic cosine.")
arctanh = _ufunc("arctanh", _ew.atanh, 1, "Inverse hyperbolic tangent.")
hypot = _ufunc("hypot", _nm.hypot, 2, "``sqrt(x1**2 + x2**2)`` without overflow.")
sinc = _ufunc("sinc", _nm.sinc, 1, "``sin(pi x) / (pi x)`` (1 at 0).")
rint = _ufunc("rint", _nm.rint, 1, "Round to the nearest integer, halves to even.")
floor = _ufunc("floor", _ew.floor, 1, "Round down.")
ceil = _ufunc("ceil", _ew.ceil, 1, "Round up.")
trunc = _ufunc("trunc", _nm.trunc, 1, "Round toward zero.")
fix = _ufunc("fix", _nm.trunc, 1, "Round toward zero (numpy's ``fix``).")
maximum = _ufunc("maximum", _ew.maximum, 2, "Elementwise maximum (NaN propagates).")
minimum = _ufunc("minimum", _ew.minimum, 2, "Elementwise minimum (NaN propagates).")
fmax = _ufunc("fmax", _nm.fmax, 2, "Elementwise maximum ignoring NaN.")
fmin = _ufunc("fmin", _nm.fmin, 2, "Elementwise minimum ignoring NaN.")
copysign = _ufunc("copysign", _nm.copysign, 2, "``|x1|`` with the sign of ``x2``.")
heaviside = _ufunc("heaviside", _nm.heaviside, 2,
                   "Step function: 0 below zero, 1 above, ``x2`` at zero.")
signbit = _ufunc("signbit", _nm.signbit, 1, "True where the sign bit is set.")
nextafter = _ufunc("nextafter", _nm.nextafter, 2,
                   "The next float after ``x1`` toward ``x2``.")
spacing = _ufunc("spacing", _nm.spacing, 1, "Distance to the next larger float.")
gcd = _ufunc("gcd", _nm.gcd, 2, "Greatest common divisor of integers.")
lcm = _ufunc("lcm", _nm.lcm, 2, "Least common multiple of integers.")
i0 = _ufunc("i0", _nm.i0, 1, "Modified Bessel function of the first kind, order 0.")
ldexp = _ufunc("ldexp", _nm.ldexp, 2, "``x1 * 2**x2`` (integer ``x2``).")
fabs = _ufunc("fabs", _nm.fabs, 1, "Absolute value as a float.")
degrees = _ufunc("degrees", _nm.degrees, 1, "Radians to degrees.")
radians = _ufunc("radians", _nm.radians, 1, "Degrees to radians.")


def positive(x, out=None):
    """``+x``: a copy of ``x``."""
    no_out(out)
    from .creation import copy

    return copy(asvar(x))


def float_power(x1, x2, out=None):
    """``x1 ** x2`` computed in float64."""
    no_out(out)
    return _ew.pow(asvar(x1, np.float64), asvar(x2, np.float64))


def divmod(x1, x2, out=None):  # noqa: A001 - numpy's name
    """``(floor_divide(x1, x2), mod(x1, x2))``."""
    no_out(out)
    return _ew.floordiv(x1, x2), _ew.mod(x1, x2)


def modf(x, out=None):
    """Fractional and integral parts of ``x``, both with its sign."""
    no_out(out)
    x = asvar(x)
    if x.dtype.kind != "f":
        x = cast(x, np.float64)
    whole = _nm.trunc(x)
    return x - whole, whole


def frexp(x, out=None):
    """Mantissa and exponent: ``x = m * 2**e``."""
    no_out(out)
    return _nm.frexp(asvar(x))


rad2deg = degrees
deg2rad = radians


def around(a, decimals=0, out=None):
    """Round to ``decimals`` places, halves to even (numpy's ``round``)."""
    no_out(out)
    x = asvar(a)
    decimals = int(decimals)
    if x.dtype == np.bool_:
        # numpy rounds bools as float16 numbers; Vars hold float32.
        x = cast(x, np.float32)
    if x.dtype.kind in "iu":
        if decimals >= 0:
            from .creation import copy

            return copy(x)
        scale = 10 ** (-decimals)
        shifted = _ew.round(cast(x, np.float64) / float(scale)) * float(scale)
        return cast(shifted, x.dtype)
    if decimals == 0:
        return _ew.round(x)
    scale = float(10.0 ** decimals)
    return _ew.round(x * scale) / scale


round = around  # noqa: A001 - numpy's name
round_ = around


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """``a`` limited to ``[a_min, a_max]`` (either may be None; arrays broadcast)."""
    no_out(out)
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise TypeError(f"mnn.numpy.clip: unexpected arguments {sorted(kwargs)}")
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    x = asvar(a)
    if a_min is not None:
        x = _ew.maximum(x, a_min if not isinstance(a_min, (list, tuple)) else asvar(a_min))
    if a_max is not None:
        x = _ew.minimum(x, a_max if not isinstance(a_max, (list, tuple)) else asvar(a_max))
    return x


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default: the
    largest/smallest finite float of the dtype)."""
    x = asvar(x)
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    dt = x.dtype
    y = select(_nm.isnan(x), const(np.asarray(nan, dt)), x)
    y = select(_ew.equal(x, const(np.asarray(np.inf, dt))), const(np.asarray(hi, dt)), y)
    return select(_ew.equal(x, const(np.asarray(-np.inf, dt))), const(np.asarray(lo, dt)), y)


def real_if_close(a, tol=100):
    """``a`` itself: Vars hold real numbers only."""
    return asvar(a)


def sort_complex(a):
    """``a`` sorted by value (numpy sorts by real then imaginary part; Vars are real, so
    the result stays real rather than becoming complex)."""
    from .sorting import sort

    return sort(asvar(a), axis=-1)


# -- sums and products ------------------------------------------------------------------

def _accumulator(x, dtype):
    """``x`` in the dtype numpy sums and multiplies it in: ``dtype`` if given, else
    int64 for bools and integers (numpy: int64/uint64), so uint8 images do not wrap."""
    if dtype is not None:
        return cast(x, npdtype(dtype))
    if x.dtype.kind in "biu" and x.dtype != np.int64:
        return cast(x, np.int64)
    return x


def _reduce(fn, a, axis, dtype, keepdims, initial, where, identity):
    x = _accumulator(asvar(a), dtype)
    if where is not True:
        x = select(asvar(where), x, const(np.asarray(identity, x.dtype)))
    axes = axes_tuple(axis, x.ndim)
    if axes:
        out = fn(x, list(axes), keepdims=bool(keepdims))
    else:
        # numpy: reducing over no axes returns the input (in the accumulator dtype).
        out = cast(x, x.dtype)
    if initial is not None:
        out = (out + initial) if fn is _red.reduce_sum else out * initial
    return out


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=True):
    """Sum over ``axis`` (all axes when None). Returns a Var (0-d for a full sum)."""
    no_out(out)
    return _reduce(_red.reduce_sum, a, axis, dtype, keepdims, initial, where, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product over ``axis`` (all axes when None)."""
    no_out(out)
    return _reduce(_red.reduce_prod, a, axis, dtype, keepdims, initial, where, 1)


def _without_nan(a, fill):
    x = asvar(a)
    if x.dtype.kind != "f":
        return x
    return select(_nm.isnan(x), const(np.asarray(fill, x.dtype)), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum treating NaN as zero."""
    return sum(_without_nan(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product treating NaN as one."""
    return prod(_without_nan(a, 1), axis, dtype, out, keepdims, initial, where)


def _cumulative(name, a, axis, dtype):
    x = _accumulator(asvar(a), dtype)
    if axis is None:
        x = _mv.reshape(x, [-1])
        axis = 0
    op = getattr(_F, name)
    return op(x, axis_index(axis, x.ndim))


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened input when None)."""
    no_out(out)
    return _cumulative("cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (of the flattened input when None)."""
    no_out(out)
    return _cumulative("cumprod", a, axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as zero."""
    return cumsum(_without_nan(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as one."""
    return cumprod(_without_nan(a, 1), axis, dtype, out)


# -- differences, integrals, 1-d signals -------------------------------------------------

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    x = asvar(a)
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = axis_index(axis, x.ndim)

    def edge(extra):
        e = asvar(extra)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            e = _mv.broadcast_to(e, shape)
        return e

    parts = ([edge(prepend)] if prepend is not None else []) + [x] + \
        ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        x = _mv.concat(parts, ax)
    if n == 0:
        return x
    return _nps.diff(x, int(n), ax)


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``, with optional values
    before and after."""
    x = _mv.reshape(asvar(ary), [-1])
    d = _nps.diff(x, 1, 0)
    parts = []
    if to_begin is not None:
        parts.append(cast(_mv.reshape(asvar(to_begin), [-1]), d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(cast(_mv.reshape(asvar(to_end), [-1]), d.dtype))
    return _mv.concat(parts, 0) if len(parts) > 1 else d


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside, first- or second-order one-sided at the
    boundaries (numpy's ``gradient``): one Var per axis, or a single Var for one axis."""
    f = asvar(f)
    axes = tuple(range(f.ndim)) if axis is None else \
        tuple(axis_index(a, f.ndim) for a in np.atleast_1d(axis))
    spacing = [np.asarray(v.read() if isinstance(v, Var) else v) for v in varargs] or [1.0]
    out = _nsig.gradient(f, spacing, axes, edge_order)
    return out[0] if len(axes) == 1 else tuple(out)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors) along the given axes, broadcasting the
    others; built from differentiable ops."""
    if axis is not None:
        axisa = axisb = axisc = axis
    from .manipulation import moveaxis

    a, b = asvar(a), asvar(b)
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be "
                         "2 or 3)")
    dt = np.result_type(a.dtype, b.dtype)
    a, b = cast(a, dt), cast(b, dt)
    ax = [_mv.squeeze(p, [-1]) for p in _mv.split(a, [1] * na, -1)]
    bx = [_mv.squeeze(p, [-1]) for p in _mv.split(b, [1] * nb, -1)]
    if na == 2 and nb == 2:
        return ax[0] * bx[1] - ax[1] * bx[0]
    zero = const(np.zeros((), dt))
    if na == 2:
        ax.append(zero)
    if nb == 2:
        bx.append(zero)
    comps = [ax[1] * bx[2] - ax[2] * bx[1],
             ax[2] * bx[0] - ax[0] * bx[2],
             ax[0] * bx[1] - ax[1] * bx[0]]
    shape = np.broadcast_shapes(*[tuple(c.shape) for c in comps])
    comps = [_mv.broadcast_to(c, shape) for c in comps]
    result = _mv.stack(comps, len(shape))
    return moveaxis(result, -1, axisc)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x`` or
    spacing ``dx``)."""
    y = asvar(y)
    ax = axis_index(axis, y.ndim)
    n = y.shape[ax]
    if n < 2:
        shape = [d for i, d in enumerate(y.shape) if i != ax]
        from .creation import zeros

        return zeros(shape, float_dtype(y.dtype))
    if y.dtype.kind != "f":
        y = cast(y, np.float64)
    head, tail = _mv.split(y, [n - 1, 1], ax)[0], _mv.split(y, [1, n - 1], ax)[1]
    if x is None:
        d = dx
    else:
        xv = asvar(x)
        if xv.ndim == 1:
            d = _nps.diff(xv, 1, 0)
            shape = [1] * y.ndim
            shape[ax] = n - 1
            d = _mv.reshape(d, shape)
        else:
            d = _nps.diff(xv, 1, ax)
    return _red.reduce_sum((head + tail) * d * 0.5, [ax])


trapz = trapezoid


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d sequences."""
    return _nsig.convolve(asvar(a), asvar(v), mode)


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d sequences (``c[k] = sum_n a[n+k] * v[n]``)."""
    return _nsig.convolve(asvar(a), _nps.flip(asvar(v), 0), mode)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation."""
    return _nsig.interp(asvar(x), asvar(xp), asvar(fp), left, right, period)


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap by taking the complement of large deltas with respect to ``period``."""
    return _nsig.unwrap(asvar(p), discont, axis, period)


del builtins, OpError
