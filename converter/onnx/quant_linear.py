"""ONNX integer and quantised-linear ops: MatMulInteger, ConvInteger, QLinearMatMul,
QLinearConv.

Integer accumulation follows the spec: codes minus zero points, products summed exactly
(int32 for matmuls; float64 — exact for these sums — for convolutions, which run on the
float kernels). The QLinear forms then scale by ``a_scale * b_scale / y_scale`` computed in
the scales' declared type (float16 scales round each step to float16, as the model's
arithmetic does), round half to even, add the output zero point and saturate.
"""
import numpy as np

import mnn.express as F

from .nn import conv as _conv
from .registry import onnx_op


def _declared(ctx, position, var):
    names = ctx.node.input
    if position < len(names) and names[position]:
        dtype = ctx.declared_dtype(names[position])
        if dtype is not None:
            return np.dtype(dtype)
    return var.dtype


def _in_type(ctx, value, dtype):
    """``value`` (float32 storage) rounded to the declared narrow float ``dtype``."""
    from .loader import narrow_name

    name = narrow_name(dtype)
    return F.narrow_cast(value, name) if name in ("float16", "bfloat16") else value


def _per_row(ctx, v):
    """A per-row ([M]) zero point or scale of a matmul's left operand, as [M, 1]."""
    shape = ctx.known_shape(v)
    if shape is not None and len(shape) == 1 and shape[0] > 1:
        return F.reshape(v, [-1, 1])
    return v


def _centred(x, zero_point, dtype):
    out = F.cast(x, dtype)
    if zero_point is not None:
        out = F.subtract(out, F.cast(zero_point, dtype))
    return out


def _requantise(ctx, acc, scale_position, scales, y_zero_point, out_dtype):
    """round(acc * (s_a * s_b / s_y)) + zp_y, saturated to ``out_dtype``; the product and
    quotient of the scales in the declared type of the scale at input ``scale_position``."""
    sa, sb, sy = scales
    stype = _declared(ctx, scale_position, sa)
    factor = _in_type(ctx, F.multiply(F.cast(sa, np.float32), F.cast(sb, np.float32)),
                      stype)
    factor = _in_type(ctx, F.divide(factor, F.cast(sy, np.float32)), stype)
    y = F.multiply(F.cast(acc, np.float64), F.cast(factor, np.float64))
    if y_zero_point is not None:
        y = F.add(y, F.cast(y_zero_point, np.float64))
    info = np.iinfo(out_dtype)
    y = F.round(y)
    y = F.minimum(F.maximum(y, F.const(np.array(info.min, np.float64))),
                  F.const(np.array(info.max, np.float64)))
    return F.cast(y, out_dtype)


def _code_type(ctx, x, what):
    if x.dtype not in (np.uint8, np.int8):
        raise ctx.error(f"{what} must be uint8 or int8, got {x.dtype}")
    return x.dtype


@onnx_op("MatMulInteger", since=10)
def matmul_integer(ctx, A, B, a_zero_point=None, b_zero_point=None):
    _code_type(ctx, A, "A")
    _code_type(ctx, B, "B")
    a = _centred(A, None if a_zero_point is None else _per_row(ctx, a_zero_point), np.int32)
    return F.matmul(a, _centred(B, b_zero_point, np.int32))


@onnx_op("QLinearMatMul", since=10)
def qlinear_matmul(ctx, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
                   y_zero_point=None):
    _code_type(ctx, a, "a")
    _code_type(ctx, b, "b")
    acc = matmul_integer(ctx, a, b, a_zero_point, b_zero_point)
    out = y_zero_point.dtype if y_zero_point is not None else a.dtype
    return _requantise(ctx, acc, 1, (_per_row(ctx, a_scale), b_scale, y_scale),
                       y_zero_point, out)


def _conv_codes(ctx, x, w, x_zero_point, w_zero_point, attrs):
    """Integer convolution of the centred codes (float64: exact for these sums)."""
    _code_type(ctx, x, "x")
    _code_type(ctx, w, "w")
    if w_zero_point is not None:
        shape = ctx.known_shape(w_zero_point)
        rank = len(ctx.known_shape(w) or [])
        if shape is not None and len(shape) == 1 and shape[0] > 1:
            w_zero_point = F.reshape(w_zero_point, [-1] + [1] * (rank - 1))
    xc = _centred(x, x_zero_point, np.float64)
    wc = _centred(w, w_zero_point, np.float64)
    return _conv(ctx, xc, wc, None, **attrs)


_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


@onnx_op("ConvInteger", since=10)
def conv_integer(ctx, x, w, x_zero_point=None, w_zero_point=None, **attrs):
    unknown = set(attrs) - set(_CONV_ATTRS)
    if unknown:
        raise ctx.error(f"unknown attributes {sorted(unknown)}")
    return F.cast(_conv_codes(ctx, x, w, x_zero_point, w_zero_point, attrs), np.int32)


@onnx_op("QLinearConv", since=10)
def qlinear_conv(ctx, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
                 y_zero_point=None, B=None, **attrs):
    unknown = set(attrs) - set(_CONV_ATTRS)
    if unknown:
        raise ctx.error(f"unknown attributes {sorted(unknown)}")
    acc = _conv_codes(ctx, x, w, x_zero_point, w_zero_point, attrs)
    rank = len(ctx.known_shape(acc) or [])
    if B is not None:
        acc = F.add(acc, F.reshape(F.cast(B, np.float64), [1, -1] + [1] * (rank - 2)))
    shape = ctx.known_shape(w_scale)
    if shape is not None and len(shape) == 1 and shape[0] > 1:
        w_scale = F.reshape(w_scale, [1, -1] + [1] * (rank - 2))
    out = y_zero_point.dtype if y_zero_point is not None else x.dtype
    return _requantise(ctx, acc, 1, (x_scale, w_scale, y_scale), y_zero_point, out)
