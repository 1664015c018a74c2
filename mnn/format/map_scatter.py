"""Scatters along an axis in the .mnn file: numpy's ``put_along_axis`` and the gather
gradient ``scatter_add_along_axis`` are written as MNN's ``ScatterElements`` (replace and
add), with what numpy allows and MNN does not (negative indices, values that broadcast,
no axis) made explicit with other ops first. The file reads back as the ONNX form
``onnx_scatter_elements`` (see :mod:`mnn.format.map_tensor`)."""

import numpy as np

from ..express.ops import elementwise as ew
from ..express.ops import movement
from ..express.ops.creation import fill
from ..express.ops.selection import select
from ..express.var import const
from .mapping import encoder

__all__ = []

# ScatterElements' BinaryOp codes (see map_tensor._SCATTER_REDUCTIONS).
_REPLACE, _ADD = -1, 0


def _static_shape(ctx, expr, var, what):
    shape = var.expr.metas[var.index].shape
    if shape is None:
        ctx.fail(expr, f"the shape of the {what} must be known when writing")
    return list(shape)


def _wrapped(indices, length):
    """``indices`` with negative entries counted from the end (numpy's rule)."""
    dim = const(np.asarray(length, indices.dtype))
    zero = const(np.asarray(0, indices.dtype))
    return select(ew.less(indices, zero), ew.add(indices, dim), indices)


@encoder("put_along_axis")
def _encode_put_along_axis(ctx, expr):
    data, indices, values = expr.inputs
    axis = expr.attrs["axis"]
    shape = _static_shape(ctx, expr, data, "array")
    ind_shape = _static_shape(ctx, expr, indices, "indices")
    if axis is None:
        # numpy's flat form: scatter into the flattened array, then restore its shape.
        size = int(np.prod(shape, dtype=np.int64))
        out = _put(movement.reshape(data, [-1]), movement.reshape(indices, [-1]),
                   values, 0, size, data.dtype, [int(np.prod(ind_shape, dtype=np.int64))])
        ctx.encode_as(expr, [movement.reshape(out, shape)])
        return
    ctx.encode_as(expr, [_put(data, indices, values, axis, shape[axis], data.dtype,
                              ind_shape)])


def _put(data, indices, values, axis, length, dtype, ind_shape):
    """``put_along_axis`` as the ONNX scatter (written as ScatterElements): indices
    wrapped, values cast and broadcast to the indices' shape."""
    from ..express.graph import apply

    if values.dtype != dtype:
        values = ew.cast(values, dtype)
    if values.expr.metas[values.index].shape != tuple(ind_shape):
        values = movement.broadcast_to(values, ind_shape)
    return apply("onnx_scatter_elements", [data, _wrapped(indices, length), values],
                 axis=int(axis), reduction="none")[0]


@encoder("scatter_add_along_axis")
def _encode_scatter_add(ctx, expr):
    values, indices = expr.inputs
    shape = [int(d) for d in expr.attrs["shape"]]
    axis = int(expr.attrs["axis"])
    from ..express.graph import apply

    zeros = fill(const(np.asarray(shape, np.int32)), const(np.zeros((), values.dtype)))
    out = apply("onnx_scatter_elements", [zeros, _wrapped(indices, shape[axis]), values],
                axis=axis, reduction="add")[0]
    ctx.encode_as(expr, [out])
