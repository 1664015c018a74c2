"""numpy's elementwise functions that MNN's op set lacks.

These are primitives (one numpy ufunc each) because their exact numpy semantics cannot be
composed from MNN's ops without changing results: ``fmod`` truncates where ``mod`` floors,
``trunc`` rounds toward zero where ``round`` rounds half to even, ``fmax`` ignores NaN
where ``maximum`` propagates it, ``cbrt`` is defined for negative inputs. They are built
with the same factories as MNN's own elementwise ops, so dtypes follow numpy.
"""
import numpy as np

from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .elementwise import (_b, _binary_op, _g, _select_grad, _unary_op, cast, floor,
                          greater_equal, less_equal, logical_not, logical_or, negative,
                          not_equal, sign)

__all__ = ["fmod", "fmax", "fmin", "trunc", "cbrt", "gcd", "lcm", "left_shift",
           "right_shift", "nextafter", "spacing", "isnan", "isinf", "isfinite", "signbit",
           "copysign", "heaviside", "i0", "frexp", "ldexp", "exp2", "log2", "log10",
           "logaddexp", "logaddexp2", "hypot", "sinc", "degrees", "radians", "fabs",
           "rint"]


def _exp(v):
    from .elementwise import exp

    return exp(v)


def _trunc_of(v):
    # trunc(v) = sign(v) * floor(|v|), written with ops that have gradients rules.
    from .elementwise import abs as _abs

    return sign(v) * floor(_abs(v))


def _isnan_of(v):
    return not_equal(v, v)


def _nan_aware_pick(better):
    """fmax/fmin gradient: the result is x where x wins or y is NaN."""
    def rule(x, y, out, g):
        mask = logical_or(better(x, y), _isnan_of(y))
        return _select_grad(mask, g), _select_grad(logical_not(mask), g)
    return rule


trunc = _unary_op("trunc", np.trunc, _g(lambda x, y, g: None))
cbrt = _unary_op("cbrt", np.cbrt, _g(lambda x, y, g: g / (y * y * 3.0)))
spacing = _unary_op("spacing", np.spacing)
isnan = _unary_op("isnan", np.isnan)
isinf = _unary_op("isinf", np.isinf)
isfinite = _unary_op("isfinite", np.isfinite)
signbit = _unary_op("signbit", np.signbit)
i0 = _unary_op("i0", np.i0)
exp2 = _unary_op("exp2", np.exp2, _g(lambda x, y, g: g * y * float(np.log(2.0))))
log2 = _unary_op("log2", np.log2, _g(lambda x, y, g: g / (x * float(np.log(2.0)))))
log10 = _unary_op("log10", np.log10, _g(lambda x, y, g: g / (x * float(np.log(10.0)))))
sinc = _unary_op("sinc", np.sinc)
degrees = _unary_op("degrees", np.degrees, _g(lambda x, y, g: g * float(180.0 / np.pi)))
radians = _unary_op("radians", np.radians, _g(lambda x, y, g: g * float(np.pi / 180.0)))
fabs = _unary_op("fabs", np.fabs, _g(lambda x, y, g: g * sign(x)))
# rint gives floats for integer inputs (numpy's ufunc); MNN's round keeps integers.
rint = _unary_op("rint", np.rint, _g(lambda x, y, g: None))

fmod = _binary_op("fmod", np.fmod,
                  _b(lambda x, y, o, g: (g, negative(g * _trunc_of(x / y)))))
fmax = _binary_op("fmax", np.fmax, _b(_nan_aware_pick(greater_equal)))
fmin = _binary_op("fmin", np.fmin, _b(_nan_aware_pick(less_equal)))
gcd = _binary_op("gcd", np.gcd)
lcm = _binary_op("lcm", np.lcm)
left_shift = _binary_op("left_shift", np.left_shift)
right_shift = _binary_op("right_shift", np.right_shift)
nextafter = _binary_op("nextafter", np.nextafter)
copysign = _binary_op("copysign", np.copysign,
                      _b(lambda x, y, o, g: (g * sign(x) * sign(o), None)))
logaddexp = _binary_op("logaddexp", np.logaddexp,
                       _b(lambda x, y, o, g: (g * _exp(x - o), g * _exp(y - o))))
logaddexp2 = _binary_op("logaddexp2", np.logaddexp2,
                        _b(lambda x, y, o, g: (g * exp2(x - o), g * exp2(y - o))))
hypot = _binary_op("hypot", np.hypot, _b(lambda x, y, o, g: (g * x / o, g * y / o)))
heaviside = _binary_op("heaviside", np.heaviside, _b(lambda x, y, o, g: (None, None)))


def _ldexp_compute(arrays):
    x, e = arrays
    return np.ldexp(x, e).astype(_ldexp_dtype(x.dtype, e.dtype), copy=False)


def _ldexp_dtype(xd, ed):
    return np.result_type(xd, np.float32) if xd.kind != "f" else xd


def _ldexp_infer(metas):
    from .elementwise import _broadcast
    from ..errors import OpError

    x, e = metas
    if e.dtype.kind not in "iub":
        raise OpError("ldexp needs integer exponents")
    if x.dtype.kind not in "iubf":
        raise OpError("ldexp needs a numeric mantissa")
    return [(_broadcast(x.shape, e.shape), _ldexp_dtype(x.dtype, e.dtype))]


def _ldexp_grad(inputs, outputs, grads):
    from .elementwise import _unbroadcast

    x, e = inputs
    # d(x * 2**e)/dx = 2**e (not out / x, which fails at x = 0).
    scale = exp2(cast(e, x.dtype))
    return [_unbroadcast(grads[0] * scale, x.shape), None]


register(OpDef("ldexp", _ldexp_infer, _ldexp_compute, _ldexp_grad))


def ldexp(x1, x2):
    """``x1 * 2**x2`` elementwise (numpy's ``ldexp``; ``x2`` must be integers).

    Parameters
    ----------
    x1 : Var or array_like
        Mantissas.
    x2 : Var or array_like
        Integer exponents.

    Returns
    -------
    Var
    """
    x1 = to_var(x1)
    x2 = to_var(x2)
    if x1.dtype.kind != "f":
        x1 = cast(x1, np.float32)
    return apply("ldexp", [x1, x2])[0]


def _frexp_infer(metas):
    from ..errors import OpError

    (m,) = metas
    if m.dtype.kind != "f":
        raise OpError("frexp needs a float input")
    return [(m.shape, m.dtype), (m.shape, np.dtype(np.int32))]


def _frexp_compute(arrays):
    mant, expo = np.frexp(arrays[0])
    return [mant, expo.astype(np.int32)]


register(OpDef("frexp", _frexp_infer, _frexp_compute, None, n_outputs=2))


def frexp(x):
    """Split ``x`` into mantissa in [0.5, 1) and integer exponent: ``x = m * 2**e``.

    Parameters
    ----------
    x : Var or array_like
        Float input (integers are converted to float32).

    Returns
    -------
    (Var, Var)
        Mantissa (dtype of ``x``) and exponent (int32).
    """
    x = to_var(x)
    if x.dtype.kind != "f":
        x = cast(x, np.float32)
    mant, expo = apply("frexp", [x])
    return mant, expo
