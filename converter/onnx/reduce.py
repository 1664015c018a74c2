"""ONNX reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare.

Axes come as an attribute in early opsets and as an optional input later (ReduceSum from
13, the others from 18). No axes reduce everything unless ``noop_with_empty_axes`` is set.
"""
import numpy as np

import mnn.express as F

from .common import ints, same_dtype_const
from .registry import onnx_op

# Opset at which each reduction moved its axes from an attribute to an input.
_AXES_INPUT_SINCE = {"ReduceSum": 13}


def _resolve_axes(ctx, data, axes, noop_with_empty_axes):
    """Axes list, or None for "reduce nothing" (noop with empty axes)."""
    if axes is None or len(axes) == 0:
        return None if noop_with_empty_axes else []
    rank = len(ctx.known_shape(data) or [])
    out = []
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise ctx.error(f"axis {a} is out of range for rank {rank}")
        out.append(a % rank if rank else 0)
    return out


def _reduction(onnx_name, mode, body):
    since = _AXES_INPUT_SINCE.get(onnx_name, 18)

    def build(ctx, data, axes, keepdims, noop):
        shape = ctx.known_shape(data)
        if shape is None:
            axes = F.const(np.array(axes or [], np.int64))
            return F.onnx_reduce(data, axes, mode, keepdims, noop)
        resolved = _resolve_axes(ctx, data, axes, noop)
        if resolved is not None and any(shape[a] == 0 for a in (resolved or range(len(shape)))):
            # An empty reduction gives the identity (ONNX): a constant of the output shape.
            axes = F.const(np.array(resolved, np.int64))
            return F.onnx_reduce(data, axes, mode, keepdims, noop)
        return body(ctx, data, resolved, bool(keepdims))

    @onnx_op(onnx_name, since=1, until=since)
    def attr_form(ctx, data, axes=None, keepdims=1):
        return build(ctx, data, axes, keepdims, 0)

    @onnx_op(onnx_name, since=since)
    def input_form(ctx, data, axes=None, keepdims=1, noop_with_empty_axes=0):
        if axes is not None and ctx.value(axes) is None:
            return F.onnx_reduce(data, axes, mode, keepdims, noop_with_empty_axes)
        axes = None if axes is None else ints(ctx.value(axes))
        return build(ctx, data, axes, keepdims, noop_with_empty_axes)

    attr_form.__name__ = f"onnx_{onnx_name.lower()}_attr"
    input_form.__name__ = f"onnx_{onnx_name.lower()}"


def _with(fn, pre=None, post=None):
    """A reduction body: ``post(fn(pre(x)))``; ``axes=None`` applies only pre/post."""
    def body(ctx, x, axes, keepdims):
        y = pre(x) if pre is not None else x
        if axes is not None:
            y = fn(y, axes, keepdims)
        return post(y) if post is not None else y
    return body


def _sum(x, axes, keepdims):
    return F.reduce_sum(x, axes, keepdims)


_reduction("ReduceSum", "sum", _with(_sum))
_reduction("ReduceMean", "mean", _with(lambda x, a, k: F.reduce_mean(x, a, k)))
_reduction("ReduceMax", "max", _with(lambda x, a, k: F.reduce_max(x, a, k)))
_reduction("ReduceMin", "min", _with(lambda x, a, k: F.reduce_min(x, a, k)))
_reduction("ReduceProd", "prod", _with(lambda x, a, k: F.reduce_prod(x, a, k)))
_reduction("ReduceL1", "l1", _with(_sum, pre=F.abs))
_reduction("ReduceSumSquare", "sum_square", _with(_sum, pre=lambda x: F.multiply(x, x)))
_reduction("ReduceL2", "l2", _with(_sum, pre=lambda x: F.multiply(x, x), post=F.sqrt))
_reduction("ReduceLogSum", "log_sum", _with(_sum, post=F.log))


def _log_sum_exp(ctx, x, axes, keepdims):
    if axes is None:
        return F.log(F.exp(x))
    # Subtract the maximum first so large inputs do not overflow exp.
    peak = F.reduce_max(x, axes, True)
    peak = F.select(F.equal(F.abs(peak), same_dtype_const(np.inf, peak)),
                    F.zeros_like(peak), peak)
    out = F.add(F.log(F.reduce_sum(F.exp(F.subtract(x, peak)), axes, True)), peak)
    if not keepdims:
        shape = ctx.known_shape(out)
        rank = len(shape)
        axes = [a % rank for a in axes] if axes else list(range(rank))
        out = F.reshape(out, [d for i, d in enumerate(shape) if i not in axes])
    return out


_reduction("ReduceLogSumExp", "log_sum_exp", _log_sum_exp)
