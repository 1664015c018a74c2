"""ONNX quantisation and miscellaneous handlers: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear, Det, GlobalLpPool, Unique, RandomUniform(Like), and the unary op
names MNN's converter also accepts (Erfc, Erfinv, Expm1, Log1p, ATan)."""
import ml_dtypes
import numpy as np

import mnn.express as F
from mnn.express.ops.np_linalg import linalg_det
from mnn.express.ops.np_sorting import unique as np_unique

from .common import onnx_type, same_dtype_const
from .registry import onnx_op


def _int_range(dtype):
    """(lowest, highest) value of an integer dtype (the 4- and 2-bit ones included)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" and dtype.name not in ("int4", "uint4", "int2", "uint2"):
        return None
    info = ml_dtypes.iinfo(dtype) if dtype.kind not in "iu" else np.iinfo(dtype)
    return int(info.min), int(info.max)


def _per_axis(ctx, v, x, axis, block_size=0):
    """A scale/zero point brought to broadcast against ``x``: a 1-d one along ``axis``,
    a blocked one (``block_size`` > 0, same rank as ``x``) repeated over each block."""
    shape = ctx.known_shape(v)
    if shape is None or len(shape) == 0 or (len(shape) == 1 and shape[0] == 1 and
                                            not block_size):
        return v
    xs = ctx.known_shape(x)
    if xs is None:
        raise ctx.static_needed("the input's shape must be known")
    rank = len(xs)
    axis = axis % rank
    if block_size:
        if len(shape) != rank or -(-xs[axis] // block_size) != shape[axis]:
            raise ctx.error(f"a blocked scale/zero point must have shape {xs} with axis "
                            f"{axis} of {-(-xs[axis] // block_size)}, got {shape}")
        index = np.arange(xs[axis], dtype=np.int64) // int(block_size)
        return F.gather(v, F.const(index), axis)
    return F.reshape(v, [-1 if i == axis else 1 for i in range(rank)])


def _declared(ctx, position, fallback):
    """The model's declared dtype of input ``position`` (narrow types included)."""
    names = ctx.node.input
    if position < len(names) and names[position]:
        dtype = ctx.declared_dtype(names[position])
        if dtype is not None:
            return np.dtype(dtype)
    return fallback


@onnx_op("QuantizeLinear", since=10)
def quantize_linear(ctx, x, y_scale, y_zero_point=None, axis=1, block_size=0,
                    output_dtype=0, saturate=1, precision=0):
    from .loader import ConvertError, onnx_dtype_to_numpy, storage_dtype

    if block_size < 0:
        raise ctx.error(f"attribute 'block_size' must not be negative, got {block_size}")
    if precision not in (0, 1):
        # 0: the input's type, 1: float; narrower intermediates are not emulated.
        raise ctx.error(f"attribute 'precision' {precision} is not supported (0 or "
                        "FLOAT)")
    if y_zero_point is not None:
        out_dtype = _declared(ctx, 2, y_zero_point.dtype)
    elif output_dtype:
        try:
            out_dtype = np.dtype(onnx_dtype_to_numpy(output_dtype))
        except ConvertError as exc:
            raise ctx.error(str(exc)) from None
    else:
        out_dtype = np.dtype(np.uint8)
    if out_dtype.name in F.ops.onnx_narrow.MINIFLOATS:
        # 8/4-bit float quantisation: x / scale (+ zero point) rounded to the format.
        if saturate not in (0, 1):
            raise ctx.error(f"attribute 'saturate' must be 0 or 1, got {saturate}")
        xw = F.cast(x, np.float32)
        q = F.divide(xw, F.cast(_per_axis(ctx, y_scale, x, axis, block_size), np.float32))
        if y_zero_point is not None:
            zp = _per_axis(ctx, y_zero_point, x, axis, block_size)
            q = F.add(q, F.cast(zp, np.float32))
        return F.minifloat_cast(q, out_dtype.name, bool(saturate))
    limits = _int_range(out_dtype)
    if limits is None or limits[1] > 2**31:
        raise ctx.error(f"attribute 'output_dtype': quantising to {out_dtype} is not "
                        "supported (integer types up to 32 bits are)")
    lo, hi = limits
    # float32 holds every 8/16-bit integer exactly, not every int32: clamp those in float64.
    wide = x.dtype == np.float64 or hi > 2**24
    work = np.dtype(np.float64) if wide else np.dtype(np.float32)
    xw = F.cast(x, work)
    scale = _per_axis(ctx, y_scale, x, axis, block_size)
    q = F.round(F.divide(xw, F.cast(scale, work)))  # round half to even, as ONNX
    if y_zero_point is not None:
        zp = _per_axis(ctx, y_zero_point, x, axis, block_size)
        q = F.add(q, F.cast(zp, work))
    q = F.minimum(F.maximum(q, same_dtype_const(lo, q)), same_dtype_const(hi, q))
    return F.cast(F.cast(q, np.int64), storage_dtype(out_dtype))


@onnx_op("DequantizeLinear", since=10)
def dequantize_linear(ctx, x, x_scale, x_zero_point=None, axis=1, block_size=0,
                      output_dtype=0):
    if block_size < 0:
        raise ctx.error(f"attribute 'block_size' must not be negative, got {block_size}")
    scale = _per_axis(ctx, x_scale, x, axis, block_size)
    # Integer codes subtract exactly in int64; 8/4-bit float codes are held as float32.
    work = np.dtype(np.float32) if x.dtype.kind == "f" else np.dtype(np.int64)
    v = F.cast(x, work)
    if x_zero_point is not None:
        zp = _per_axis(ctx, x_zero_point, x, axis, block_size)
        v = F.subtract(v, F.cast(zp, work))
    return F.multiply(F.cast(v, scale.dtype), scale)


@onnx_op("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, x):
    """uint8 quantisation over [min(x, 0), max(x, 0)] (ONNX's formula)."""
    zero = same_dtype_const(0, x)
    lo = F.minimum(F.reduce_min(x, [], False), zero)
    hi = F.maximum(F.reduce_max(x, [], False), zero)
    scale = F.divide(F.subtract(hi, lo), same_dtype_const(255, x))
    zp = F.round(F.subtract(zero, F.divide(lo, scale)))
    zp = F.minimum(F.maximum(zp, zero), same_dtype_const(255, x))
    y = F.add(F.round(F.divide(x, scale)), zp)
    y = F.minimum(F.maximum(y, zero), same_dtype_const(255, x))
    return F.cast(y, np.uint8), scale, F.cast(zp, np.uint8)


@onnx_op("Det", since=11)
def det(ctx, X):
    return linalg_det(X)


@onnx_op("GlobalLpPool", since=2)
def global_lp_pool(ctx, X, p=2):
    rank = len(ctx.known_shape(X) or [])
    if rank < 3:
        raise ctx.static_needed("GlobalLpPool needs the input's rank")
    axes = list(range(2, rank))
    power = same_dtype_const(float(p), X)
    total = F.reduce_sum(F.pow(F.abs(X), power), axes, True)
    return F.pow(total, F.reciprocal(power))


@onnx_op("Unique", since=11)
def unique(ctx, X, axis=None, sorted=1):
    values, first, inverse, counts = np_unique(X, axis, True, True, True, True)
    first, inverse, counts = (F.cast(v, np.int64) for v in (first, inverse, counts))
    if not sorted:
        # Order of first occurrence: sort the unique entries by their first index.
        order = F.sort(first, 0, arg=True)
        rank = F.sort(order, 0, arg=True)  # old position -> new position
        values = F.gather(values, order, 0 if axis is None else axis)
        first = F.gather(first, order, 0)
        counts = F.gather(counts, order, 0)
        inverse = F.gather(F.cast(rank, np.int64), inverse, 0)
    return values, first, inverse, counts


@onnx_op("RandomUniform", since=1)
def random_uniform(ctx, dtype=1, high=1.0, low=0.0, seed=None, shape=None):
    if shape is None:
        raise ctx.error("attribute 'shape' is required")
    s = 0 if seed is None else int(seed)
    return F.randomuniform(list(shape), onnx_type(ctx, dtype), low, high, 0, s)


@onnx_op("RandomUniformLike", since=1)
def random_uniform_like(ctx, input, dtype=None, high=1.0, low=0.0, seed=None):
    shape = ctx.known_shape(input)
    if shape is None:
        raise ctx.static_needed("the input's shape must be known")
    out = input.dtype if dtype is None else onnx_type(ctx, dtype)
    s = 0 if seed is None else int(seed)
    return F.randomuniform(shape, out, low, high, 0, s)


def _normal(ctx, shape, dtype, mean, scale, seed):
    """Normal draws by the Box-Muller transform of two uniform streams (seeded apart)."""
    if dtype.kind != "f":
        raise ctx.error(f"attribute 'dtype': normal draws must be float, got {dtype}")
    if seed is None:
        u1 = F.randomuniform(shape, np.float64, 0.0, 1.0, 0, 0)
        u2 = F.randomuniform(shape, np.float64, 0.0, 1.0, 0, 0)
    else:
        s = int(seed)
        u1 = F.randomuniform(shape, np.float64, 0.0, 1.0, 1, s)
        u2 = F.randomuniform(shape, np.float64, 0.0, 1.0, 2, s)
    # 1 - u1 lies in (0, 1]: its log is finite.
    radius = F.sqrt(F.multiply(F.const(-2.0), F.log(F.subtract(F.const(1.0), u1))))
    z = F.multiply(radius, F.cos(F.multiply(F.const(2 * np.pi), u2)))
    z = F.add(F.multiply(z, F.const(float(scale))), F.const(float(mean)))
    return F.cast(z, dtype)


@onnx_op("RandomNormal", since=1)
def random_normal(ctx, dtype=1, mean=0.0, scale=1.0, seed=None, shape=None):
    if shape is None:
        raise ctx.error("attribute 'shape' is required")
    return _normal(ctx, [int(d) for d in shape], onnx_type(ctx, dtype), mean, scale, seed)


@onnx_op("RandomNormalLike", since=1)
def random_normal_like(ctx, input, dtype=None, mean=0.0, scale=1.0, seed=None):
    shape = ctx.known_shape(input)
    if shape is None:
        raise ctx.static_needed("the input's shape must be known")
    out = input.dtype if dtype is None else onnx_type(ctx, dtype)
    return _normal(ctx, shape, out, mean, scale, seed)


def _alias(name, fn):
    @onnx_op(name, since=1)
    def handler(ctx, x):
        return fn(x)

    handler.__name__ = f"onnx_{name.lower()}"


# Names MNN's ONNX converter accepts beside the standard ones.
_alias("Erfc", F.erfc)
_alias("Erfinv", F.erfinv)
_alias("Expm1", F.expm1)
_alias("Log1p", F.log1p)
_alias("ATan", F.atan)
