"""ONNX elementwise math, logic, comparison, Cast/Where, MatMul/Gemm handlers."""
import numpy as np

import mnn.express as F

from .common import same_dtype_const
from .registry import onnx_op


def _binary(onnx_name, fn, since=7):
    @onnx_op(onnx_name, since=since)
    def handler(ctx, a, b):
        return fn(a, b)

    handler.__name__ = f"onnx_{onnx_name.lower()}"
    return handler


_binary("Add", F.add)
_binary("Sub", F.subtract)
_binary("Mul", F.multiply)
_binary("Equal", F.equal)
_binary("Greater", F.greater)
_binary("Less", F.less)
_binary("GreaterOrEqual", F.greater_equal, since=12)
_binary("LessOrEqual", F.less_equal, since=12)
_binary("And", F.logical_and)
_binary("Or", F.logical_or)
_binary("Xor", F.logical_xor)
_binary("BitwiseAnd", F.bitwise_and, since=18)
_binary("BitwiseOr", F.bitwise_or, since=18)
_binary("BitwiseXor", F.bitwise_xor, since=18)


@onnx_op("Div", since=7)
def div(ctx, a, b):
    """Float division is true division; integer division truncates toward zero (C)."""
    if a.dtype.kind in "iu":
        return F.onnx_trunc_div(a, b)
    return F.divide(a, b)


@onnx_op("Mod", since=10)
def mod(ctx, a, b, fmod=0):
    """``fmod=0``: the result takes the divisor's sign; ``fmod=1``: the dividend's (C)."""
    if fmod:
        return F.onnx_fmod(a, b)
    return F.mod(a, b)


@onnx_op("Pow", since=7)
def pow_(ctx, x, y):
    """The result has the base's dtype (ONNX), whatever the exponent's dtype."""
    if x.dtype.kind == "f":
        return F.pow(x, F.cast(y, x.dtype) if y.dtype != x.dtype else y)
    out = F.pow(F.cast(x, np.float64), F.cast(y, np.float64))
    return F.cast(out, x.dtype)


@onnx_op("BitShift", since=11)
def bit_shift(ctx, x, y, direction="LEFT"):
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    return F.onnx_bit_shift(x, y, direction=direction)


def _unary(onnx_name, fn, since=6):
    @onnx_op(onnx_name, since=since)
    def handler(ctx, x):
        return fn(x)

    handler.__name__ = f"onnx_{onnx_name.lower()}"
    return handler


_unary("Abs", F.abs)
_unary("Neg", F.negative)
_unary("Floor", F.floor)
_unary("Ceil", F.ceil)
_unary("Round", F.round, since=11)
_unary("Sqrt", F.sqrt)
_unary("Exp", F.exp)
_unary("Log", F.log)
_unary("Reciprocal", F.reciprocal)
_unary("Sin", F.sin, since=7)
_unary("Cos", F.cos, since=7)
_unary("Tan", F.tan, since=7)
_unary("Asin", F.asin, since=7)
_unary("Acos", F.acos, since=7)
_unary("Atan", F.atan, since=7)
_unary("Sinh", F.sinh, since=9)
_unary("Cosh", F.cosh, since=9)
_unary("Asinh", F.asinh, since=9)
_unary("Acosh", F.acosh, since=9)
_unary("Atanh", F.atanh, since=9)
_unary("Erf", F.erf, since=9)
_unary("Sign", F.sign, since=9)
_unary("Not", F.logical_not, since=1)
_unary("BitwiseNot", F.bitwise_not, since=18)
_unary("Sigmoid", F.sigmoid)
_unary("Tanh", F.tanh)


@onnx_op("IsNaN", since=9)
def is_nan(ctx, x):
    return F.not_equal(x, x)


@onnx_op("IsInf", since=10)
def is_inf(ctx, x, detect_negative=1, detect_positive=1):
    pos = F.equal(x, same_dtype_const(np.inf, x))
    neg = F.equal(x, same_dtype_const(-np.inf, x))
    if detect_negative and detect_positive:
        return F.logical_or(pos, neg)
    if detect_positive:
        return pos
    if detect_negative:
        return neg
    return F.logical_and(pos, neg)  # all False, with x's shape


def _variadic(onnx_name, fn, since=6):
    @onnx_op(onnx_name, since=since)
    def handler(ctx, *xs):
        if not xs:
            raise ctx.error("needs at least one input")
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out

    handler.__name__ = f"onnx_{onnx_name.lower()}"
    return handler


_variadic("Sum", F.add)
_variadic("Max", F.maximum)
_variadic("Min", F.minimum)


@onnx_op("Mean", since=6)
def mean(ctx, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = F.add(out, x)
    return F.divide(out, same_dtype_const(len(xs), out))


@onnx_op("Where", since=9)
def where(ctx, condition, x, y):
    return F.select(condition, x, y)


def _cast_to(ctx, x, dtype, saturate=1, round_mode="up"):
    """``x`` cast to numpy ``dtype``; types Vars store wider (float16, bfloat16, int16,
    uint16, uint32, uint64) keep only what the narrow type holds (``narrow_cast``)."""
    from .loader import narrow_name, storage_dtype

    try:
        store = storage_dtype(dtype)
    except TypeError:
        raise ctx.error(f"cannot cast to {np.dtype(dtype)}, which mnn cannot hold") from None
    # Floats to ints truncate toward zero (C), as numpy's astype does.
    narrow = narrow_name(dtype)
    if narrow == "float8_e8m0fnu":
        if round_mode not in ("up", "down", "nearest"):
            raise ctx.error(f"attribute 'round_mode' must be up, down or nearest, got "
                            f"{round_mode!r}")
        return F.e8m0_cast(F.cast(x, np.float32), round_mode, bool(saturate))
    if narrow in F.ops.onnx_narrow.MINIFLOATS:
        # 8/4-bit floats: round in float32 (``saturate`` clamps out-of-range values).
        if saturate not in (0, 1):
            raise ctx.error(f"attribute 'saturate' must be 0 or 1, got {saturate}")
        return F.minifloat_cast(F.cast(x, np.float32), narrow, bool(saturate))
    if narrow in ("int4", "uint4", "int2", "uint2"):
        # Truncate in a wide int, wrap to the narrow range, then store in (u)int8.
        wide = x if x.dtype in (np.int32, np.int64) else F.cast(x, np.int32)
        return F.cast(F.narrow_cast(wide, narrow), store)
    out = F.cast(x, store)
    if narrow is not None:
        out = F.narrow_cast(out, narrow)
    return out


@onnx_op("Cast", since=6)
def cast(ctx, x, to=None, saturate=1, round_mode="up"):
    from .loader import ConvertError, onnx_dtype_to_numpy

    if to is None:
        raise ctx.error("attribute 'to' is required")
    try:
        dtype = onnx_dtype_to_numpy(to)
    except ConvertError as exc:
        raise ctx.error(str(exc)) from None
    return _cast_to(ctx, x, dtype, saturate, round_mode)


@onnx_op("CastLike", since=15)
def cast_like(ctx, x, target_type, saturate=1, round_mode="up"):
    declared = ctx.declared_dtype(ctx.node.input[1])
    if declared is not None and declared != target_type.dtype:
        from .loader import storage_dtype

        if storage_dtype(declared) == target_type.dtype:
            return _cast_to(ctx, x, declared, saturate, round_mode)
    return _cast_to(ctx, x, target_type.dtype, saturate, round_mode)


@onnx_op("BitCast", since=26)
def bit_cast(ctx, input, to=None):
    from .loader import ConvertError, onnx_dtype_to_numpy

    if to is None:
        raise ctx.error("attribute 'to' is required")
    src = ctx.declared_dtype(ctx.node.input[0])
    if src is None:
        src = input.dtype
    try:
        dst = onnx_dtype_to_numpy(to)
    except ConvertError as exc:
        raise ctx.error(str(exc)) from None
    try:
        return F.bitcast(input, np.dtype(src).name, np.dtype(dst).name)
    except ValueError as exc:
        raise ctx.error(f"attribute 'to' ({np.dtype(dst).name}): {exc}") from None


@onnx_op("MatMul", since=1)
def matmul(ctx, a, b):
    return F.matmul(a, b)


@onnx_op("Gemm", since=7)
def gemm(ctx, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    out = F.matmul(a, b, bool(transA), bool(transB))
    if alpha != 1.0:
        out = F.multiply(out, same_dtype_const(alpha, out))
    if c is not None:
        if beta != 1.0:
            c = F.multiply(c, same_dtype_const(beta, c))
        out = F.add(out, c)
    return out
