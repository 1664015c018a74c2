"""Elementwise ops: MNN's 31 unary and 23 binary ops, plus numpy's logical/bitwise names.

Binary ops broadcast like numpy and promote like numpy (NEP 50: a Python scalar takes the
other operand's type when it fits). Comparisons return bool (MNN returns int32); true
division of integers gives float64 (MNN floors). Each op's gradient rule sits beside it.
"""
import numpy as np
import scipy.special as _sp

from ..._cython import activation as _act_kernels
from ..._cython import elementwise as _kernels
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..runtime import get_thread_number
from ..var import Var, const, to_var

__all__ = [
    # unary (MNN's 31)
    "sign", "abs", "negative", "floor", "round", "ceil", "square", "sqrt", "rsqrt", "exp",
    "log", "sin", "sinh", "cos", "cosh", "tan", "tanh", "asin", "asinh", "acos", "acosh",
    "atan", "atanh", "reciprocal", "log1p", "gelu", "sigmoid", "erf", "erfc", "erfinv",
    "expm1",
    # binary (MNN's 23)
    "add", "subtract", "multiply", "divide", "floordiv", "mod", "floormod", "pow",
    "minimum", "maximum", "equal", "not_equal", "greater", "greater_equal", "less",
    "less_equal", "squared_difference", "atan2", "logical_or", "bias_add", "bitwise_and",
    "bitwise_or", "bitwise_xor",
    # numpy's companions
    "logical_and", "logical_xor", "logical_not", "bitwise_not", "cast",
]


# ---------------------------------------------------------------------------------------
# shared machinery


def _result_dtype(fn, dtypes):
    """The dtype numpy gives for ``fn`` on inputs of these dtypes (on empty arrays)."""
    key = (fn, dtypes)
    hit = _DTYPE_CACHE.get(key)
    if hit is None:
        try:
            hit = np.asarray(fn(*[np.empty(0, d) for d in dtypes])).dtype
        except TypeError as exc:
            raise OpError(f"not defined for dtype {', '.join(str(d) for d in dtypes)}: "
                          f"{exc}") from None
        from ..dtypes import to_numpy_dtype

        hit = to_numpy_dtype(hit)
        _DTYPE_CACHE[key] = hit
    return hit


_DTYPE_CACHE = {}


def _in_result_float(arrays, dt):
    """Cast integer/bool inputs to a float result dtype before computing.

    numpy computes small integers in float16, which Vars store as float32: computing in
    float32 (the result dtype) keeps float32 precision instead of float16's.
    """
    if dt.kind != "f":
        return arrays
    return [a.astype(dt) if a.dtype.kind != "f" else a for a in arrays]


# Binary ops with a multi-threaded compiled loop (codes of mnn/_cython/elementwise.pyx).
_KERNEL_CODES = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3, "maximum": 4,
                 "minimum": 5}
# Below this many elements a second thread costs more than it saves.
PARALLEL_MIN_SIZE = 1 << 17
_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _parallel_binary(code, a, b, dt):
    """``a (op) b`` on all kernel threads for large same-shape contiguous float arrays;
    None when that does not apply (numpy's single-threaded loop is as fast then)."""
    nthreads = get_thread_number()
    if (nthreads < 2 or a.size < PARALLEL_MIN_SIZE or a.shape != b.shape
            or a.dtype != dt or b.dtype != dt or dt not in _KERNEL_FLOATS
            or not a.flags.c_contiguous or not b.flags.c_contiguous):
        return None
    out = np.empty(a.shape, dt)
    _kernels.binary(code, a.reshape(-1), b.reshape(-1), out.reshape(-1), nthreads)
    return out


# Unary ops with a compiled float32 loop (SIMD, all kernel threads on large arrays):
# exp is within 1 ulp (numpy's float32 exp: within about 2.3 ulp) and faster.
# float32 sigmoid, gelu and tanh: activation.pyx (same SIMD exp; gelu by an erfc fit,
# tanh from expm1).
_UNARY_KERNELS = {"exp": _kernels.exp_f32, "sigmoid": _act_kernels.sigmoid_f32,
                  "gelu": _act_kernels.gelu_f32, "tanh": _act_kernels.tanh_f32}
COMPILED_MIN_SIZE = 1 << 14


def _compiled_unary(kernel, x):
    if x.dtype != np.float32 or x.size < COMPILED_MIN_SIZE or not x.flags.c_contiguous:
        return None
    nthreads = get_thread_number() if x.size >= PARALLEL_MIN_SIZE else 1
    out = np.empty(x.shape, np.float32)
    kernel(x.reshape(-1), out.reshape(-1), nthreads)
    return out


def _broadcast(a, b):
    if a == b:
        return a
    if len(a) == len(b):
        # Equal ranks (a bias row against a batch): numpy's rule in plain Python, a
        # fraction of np.broadcast_shapes's cost; a mismatch falls through to its error.
        out = []
        for x, y in zip(a, b):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                break
        else:
            return tuple(out)
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise OpError(f"shapes {list(a)} and {list(b)} cannot be broadcast") from None


def _unbroadcast(grad, shape):
    """Sum ``grad`` down to ``shape`` (undo broadcasting) as express ops."""
    from .reduce import reduce_sum
    from .movement import reshape

    gshape = grad.shape
    if list(gshape) == list(shape):
        return grad
    lead = len(gshape) - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1]
    if axes and lead == 0:
        return reduce_sum(grad, axes, keepdims=True)  # already ``shape``: no reshape op
    if axes:
        grad = reduce_sum(grad, axes, keepdims=False)
    return reshape(grad, list(shape), zero_copies=False)  # 0 is a size here, not 'copy'


def _is_float(v):
    return v.dtype.kind == "f"


# ---------------------------------------------------------------------------------------
# unary ops


def _unary_op(name, fn, grad=None):
    def infer(metas):
        (m,) = metas
        return [(m.shape, _result_dtype(fn, (m.dtype,)))]

    def compute(arrays):
        dt = _result_dtype(fn, (arrays[0].dtype,))
        if kernel is not None:
            out = _compiled_unary(kernel, arrays[0])
            if out is not None:
                return out
        out = fn(*_in_result_float(arrays, dt))
        return np.asarray(out, dtype=dt)

    kernel = _UNARY_KERNELS.get(name)
    register(OpDef(name, infer, compute, grad))

    def public(x):
        return apply(name, [to_var(x)])[0]

    public.__name__ = name
    public.__qualname__ = name
    public.__doc__ = (f"Elementwise ``{name}`` of ``x`` (numpy semantics).\n\n"
                      "Parameters\n----------\nx : Var or array_like\n\n"
                      "Returns\n-------\nVar\n")
    return public


def _g(rule):
    """Wrap a one-input gradient rule ``rule(x, y, g) -> Var``."""
    def grad(inputs, outputs, grads):
        return [rule(inputs[0], outputs[0], grads[0])]
    return grad


def _np_sign(x):
    return np.sign(x)


def _np_rsqrt(x):
    return 1.0 / np.sqrt(x)


def _np_reciprocal(x):
    if x.dtype.kind in "iub":
        # numpy's integer reciprocal truncates (1/2 -> 0); we return the true value.
        return 1.0 / x.astype(np.float64)
    return np.reciprocal(x)


def _np_sigmoid(x):
    return _sp.expit(x)


def _np_gelu(x):
    # MNN's gelu is the erf form (exact), as torch's default.
    x = np.asarray(x)
    return (0.5 * x * (1.0 + _sp.erf(x / np.sqrt(2.0).astype(x.dtype)))).astype(
        _float_of(x.dtype), copy=False)


def _float_of(dt):
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _zeros_like_grad(x, y, g):
    return None


sign = _unary_op("sign", _np_sign, _g(_zeros_like_grad))
abs = _unary_op("abs", np.abs, _g(lambda x, y, g: g * sign(x)))  # noqa: A001
negative = _unary_op("negative", np.negative, _g(lambda x, y, g: negative(g)))
floor = _unary_op("floor", np.floor, _g(_zeros_like_grad))
round = _unary_op("round", np.round, _g(_zeros_like_grad))  # noqa: A001
ceil = _unary_op("ceil", np.ceil, _g(_zeros_like_grad))
square = _unary_op("square", np.square, _g(lambda x, y, g: g * x * 2.0))
sqrt = _unary_op("sqrt", np.sqrt, _g(lambda x, y, g: g * 0.5 / y))
rsqrt = _unary_op("rsqrt", _np_rsqrt, _g(lambda x, y, g: g * -0.5 * y * y * y))
exp = _unary_op("exp", np.exp, _g(lambda x, y, g: g * y))
log = _unary_op("log", np.log, _g(lambda x, y, g: g / x))
sin = _unary_op("sin", np.sin, _g(lambda x, y, g: g * cos(x)))
sinh = _unary_op("sinh", np.sinh, _g(lambda x, y, g: g * cosh(x)))
cos = _unary_op("cos", np.cos, _g(lambda x, y, g: negative(g * sin(x))))
cosh = _unary_op("cosh", np.cosh, _g(lambda x, y, g: g * sinh(x)))
tan = _unary_op("tan", np.tan, _g(lambda x, y, g: g * (y * y + 1.0)))
tanh = _unary_op("tanh", np.tanh, _g(lambda x, y, g: g * (1.0 - y * y)))
asin = _unary_op("asin", np.arcsin, _g(lambda x, y, g: g * rsqrt(1.0 - x * x)))
asinh = _unary_op("asinh", np.arcsinh, _g(lambda x, y, g: g * rsqrt(x * x + 1.0)))
acos = _unary_op("acos", np.arccos, _g(lambda x, y, g: negative(g * rsqrt(1.0 - x * x))))
acosh = _unary_op("acosh", np.arccosh, _g(lambda x, y, g: g * rsqrt(x * x - 1.0)))
atan = _unary_op("atan", np.arctan, _g(lambda x, y, g: g / (x * x + 1.0)))
atanh = _unary_op("atanh", np.arctanh, _g(lambda x, y, g: g / (1.0 - x * x)))
reciprocal = _unary_op("reciprocal", _np_reciprocal, _g(lambda x, y, g: negative(g * y * y)))
log1p = _unary_op("log1p", np.log1p, _g(lambda x, y, g: g / (x + 1.0)))
sigmoid = _unary_op("sigmoid", _np_sigmoid, _g(lambda x, y, g: g * y * (1.0 - y)))
erf = _unary_op("erf", _sp.erf,
                _g(lambda x, y, g: g * (2.0 / np.sqrt(np.pi)) * exp(negative(x * x))))
erfc = _unary_op("erfc", _sp.erfc,
                 _g(lambda x, y, g: g * (-2.0 / np.sqrt(np.pi)) * exp(negative(x * x))))
erfinv = _unary_op("erfinv", _sp.erfinv,
                   _g(lambda x, y, g: g * (np.sqrt(np.pi) / 2.0) * exp(y * y)))
expm1 = _unary_op("expm1", np.expm1, _g(lambda x, y, g: g * (y + 1.0)))


def _gelu_grad(x, y, g):
    # d/dx [x * Phi(x)] = Phi(x) + x * phi(x)
    cdf = (erf(x * (1.0 / np.sqrt(2.0))) + 1.0) * 0.5
    pdf = exp(x * x * -0.5) * (1.0 / np.sqrt(2.0 * np.pi))
    return g * (cdf + x * pdf)


gelu = _unary_op("gelu", _np_gelu, _g(_gelu_grad))
logical_not = _unary_op("logical_not", np.logical_not)
bitwise_not = _unary_op("bitwise_not", np.invert)


# ---------------------------------------------------------------------------------------
# binary ops


def _binary_op(name, fn, grad=None, check=None):
    def infer(metas):
        a, b = metas
        if check is not None:
            check(a.dtype, b.dtype)
        return [(_broadcast(a.shape, b.shape), _result_dtype(fn, (a.dtype, b.dtype)))]

    def compute(arrays):
        a, b = arrays
        dt = _result_dtype(fn, (a.dtype, b.dtype))
        if dt.kind == "f" and (a.dtype.kind != "f" or b.dtype.kind != "f"):
            a, b = _in_result_float(arrays, dt)
        out = _parallel_binary(code, a, b, dt) if code is not None else None
        if out is None:
            out = fn(a, b)
        if type(out) is np.ndarray and out.dtype == dt:
            return out
        return np.asarray(out, dtype=dt)

    code = _KERNEL_CODES.get(name)

    register(OpDef(name, infer, compute, grad))

    def public(x, y):
        if type(x) is not Var or type(y) is not Var:
            x, y = _operands(x, y)
        return apply(name, [x, y])[0]

    public.__name__ = name
    public.__qualname__ = name
    public.__doc__ = (f"Elementwise ``{name}`` of ``x`` and ``y`` with numpy broadcasting "
                      "and type promotion.\n\nParameters\n----------\n"
                      "x, y : Var or array_like\n\nReturns\n-------\nVar\n")
    return public


def _operands(x, y):
    """Both operands as Vars; a Python scalar takes the other side's dtype (NEP 50)."""
    xv, yv = isinstance(x, Var), isinstance(y, Var)
    if xv and not yv and _is_python_scalar(y):
        return x, const(y, dtype=np.result_type(x.dtype, y))
    if yv and not xv and _is_python_scalar(x):
        return const(x, dtype=np.result_type(y.dtype, x)), y
    return to_var(x), to_var(y)


def _is_python_scalar(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)


def _b(rule):
    """Wrap a two-input gradient rule ``rule(x, y, out, g) -> (gx, gy)``, unbroadcasting."""
    def grad(inputs, outputs, grads):
        x, y = inputs
        gx, gy = rule(x, y, outputs[0], grads[0])
        return [None if gx is None else _unbroadcast(gx, x.shape),
                None if gy is None else _unbroadcast(gy, y.shape)]
    return grad


def _ints_only(a, b):
    if a.kind not in "iub" or b.kind not in "iub":
        raise OpError("needs integer or bool inputs")


def _np_floordiv(a, b):
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b == 0):
        raise OpError("integer division by zero")
    return np.floor_divide(a, b)


def _np_mod(a, b):
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b == 0):
        raise OpError("integer modulo by zero")
    return np.mod(a, b)


def _np_pow(a, b):
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b < 0):
        raise OpError("integers to negative integer powers are not allowed")
    return np.power(a, b)


def _select_grad(mask, g):
    from .selection import select

    zero = const(0, dtype=g.dtype)
    return select(mask, g, zero)


def _min_max_grad(pick_x):
    def rule(x, y, out, g):
        mask = pick_x(x, y)
        return _select_grad(mask, g), _select_grad(logical_not(mask), g)
    return rule


add = _binary_op("add", np.add, _b(lambda x, y, o, g: (g, g)))
subtract = _binary_op("subtract", np.subtract, _b(lambda x, y, o, g: (g, negative(g))))
multiply = _binary_op("multiply", np.multiply, _b(lambda x, y, o, g: (g * y, g * x)))
divide = _binary_op("divide", np.true_divide,
                    _b(lambda x, y, o, g: (g / y, negative(g * o / y))))
floordiv = _binary_op("floordiv", _np_floordiv)
mod = _binary_op("mod", _np_mod,
                 _b(lambda x, y, o, g: (g, negative(g * floor(divide(x, y))))))
floormod = _binary_op("floormod", _np_mod,
                      _b(lambda x, y, o, g: (g, negative(g * floor(divide(x, y))))))
pow = _binary_op("pow", _np_pow,  # noqa: A001
                 _b(lambda x, y, o, g: (g * y * pow(x, y - 1.0), g * o * log(x))))
minimum = _binary_op("minimum", np.minimum, _b(_min_max_grad(lambda x, y: less_equal(x, y))))
maximum = _binary_op("maximum", np.maximum,
                     _b(_min_max_grad(lambda x, y: greater_equal(x, y))))
equal = _binary_op("equal", np.equal)
not_equal = _binary_op("not_equal", np.not_equal)
greater = _binary_op("greater", np.greater)
greater_equal = _binary_op("greater_equal", np.greater_equal)
less = _binary_op("less", np.less)
less_equal = _binary_op("less_equal", np.less_equal)
squared_difference = _binary_op(
    "squared_difference", lambda a, b: np.square(np.subtract(a, b)),
    _b(lambda x, y, o, g: ((x - y) * g * 2.0, (y - x) * g * 2.0)))
atan2 = _binary_op("atan2", np.arctan2,
                   _b(lambda x, y, o, g: (g * y / (x * x + y * y),
                                          negative(g * x / (x * x + y * y)))))
logical_or = _binary_op("logical_or", np.logical_or)
logical_and = _binary_op("logical_and", np.logical_and)
logical_xor = _binary_op("logical_xor", np.logical_xor)
bitwise_and = _binary_op("bitwise_and", np.bitwise_and, check=_ints_only)
bitwise_or = _binary_op("bitwise_or", np.bitwise_or, check=_ints_only)
bitwise_xor = _binary_op("bitwise_xor", np.bitwise_xor, check=_ints_only)


def bias_add(value, bias):
    """Add a 1-D ``bias`` along the last axis of ``value`` (MNN's ``bias_add``).

    Parameters
    ----------
    value : Var
        At least 1-D.
    bias : Var
        1-D, length equal to ``value``'s last dimension.
    """
    value, bias = to_var(value), to_var(bias)
    vshape, bshape = value.shape, bias.shape
    if len(bshape) != 1 or not vshape or vshape[-1] != bshape[0]:
        raise OpError(f"bias_add: bias of shape {bshape} must be 1-D with the length of "
                      f"value's last dimension (value shape {vshape})")
    return add(value, bias)


# ---------------------------------------------------------------------------------------
# cast


def _cast_infer(metas, dtype):
    return [(metas[0].shape, dtype)]


def _cast_compute(arrays, dtype):
    return arrays[0].astype(dtype)


def _cast_grad(inputs, outputs, grads, dtype):
    x = inputs[0]
    if x.dtype.kind != "f":
        return [None]
    return [cast(grads[0], x.dtype)]


register(OpDef("cast", _cast_infer, _cast_compute, _cast_grad))


def cast(x, dtype=np.float32):
    """Convert ``x`` to ``dtype`` (numpy's ``astype`` rules: floats truncate toward zero).

    Parameters
    ----------
    x : Var or array_like
    dtype : dtype
        MNN enum member (``F.int``) or numpy dtype.
    """
    from ..dtypes import to_numpy_dtype

    x = to_var(x)
    return apply("cast", [x], dtype=to_numpy_dtype(dtype))[0]
