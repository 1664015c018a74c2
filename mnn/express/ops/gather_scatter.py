"""Gather and scatter: ``gather`` (along an axis), ``gather_nd``, ``scatter_nd``.

Indices may be negative (counted from the end, numpy/ONNX); every index is checked
against its axis before numpy sees it, so a bad index is an :class:`OpError` naming the
op, never a read outside the tensor. Gradients scatter-add (repeated indices accumulate).
``scatter_nd`` writes updates in order, so with repeated indices the last one wins (as
MNN does; TensorFlow sums): only the last update written to a position gets its gradient.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["gather", "gather_nd", "scatter_nd"]


def _check_index_dtype(meta, what="indices"):
    if meta.dtype.kind not in "iu":
        raise OpError(f"{what} must be integers, got {meta.dtype}")


def check_bounds(index, size, axis_desc):
    """Raise OpError if any of ``index`` is outside ``[-size, size)``."""
    if index.size == 0:
        return
    lo, hi = int(index.min()), int(index.max())
    if lo < -size or hi >= size:
        bad = lo if lo < -size else hi
        raise OpError(f"index {bad} is out of range for {axis_desc} of size {size}")


def _axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise OpError(f"axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim


# -- gather along an axis -------------------------------------------------------------------

def _gather_infer(metas, axis):
    x, idx = metas
    _check_index_dtype(idx)
    ax = _axis(axis, len(x.shape))
    if idx.value is not None:
        check_bounds(idx.value, x.shape[ax], f"axis {ax}")
    return [(tuple(x.shape[:ax]) + tuple(idx.shape) + tuple(x.shape[ax + 1:]), x.dtype)]


def _gather_compute(arrays, axis):
    x, idx = arrays
    ax = _axis(axis, x.ndim)
    check_bounds(idx, x.shape[ax], f"axis {ax}")
    return np.take(x, idx, axis=ax)


def _gather_grad(inputs, outputs, grads, axis):
    x, idx = inputs
    return [apply("gather_grad", [grads[0], idx], axis=axis, shape=tuple(x.shape))[0], None]


register(OpDef("gather", _gather_infer, _gather_compute, _gather_grad))


def _gather_grad_infer(metas, axis, shape):
    g, idx = metas
    _check_index_dtype(idx)
    ax = _axis(axis, len(shape))
    want = tuple(shape[:ax]) + tuple(idx.shape) + tuple(shape[ax + 1:])
    if tuple(g.shape) != want:
        raise OpError(f"gradient of shape {list(g.shape)} does not match gathered shape "
                      f"{list(want)}")
    return [(tuple(shape), g.dtype)]


def _gather_grad_compute(arrays, axis, shape):
    g, idx = arrays
    ax = _axis(axis, len(shape))
    check_bounds(idx, shape[ax], f"axis {ax}")
    out = np.zeros(shape, g.dtype)
    key = (slice(None),) * ax + (idx,)
    np.add.at(out, key, g)
    return out


def _gather_grad_grad(inputs, outputs, grads, axis, shape):
    return [apply("gather", [grads[0], inputs[1]], axis=axis)[0], None]


register(OpDef("gather_grad", _gather_grad_infer, _gather_grad_compute, _gather_grad_grad))


def gather(x, index, axis=0):
    """``x[index]`` along ``axis`` (MNN's ``gather``; numpy's ``take``).

    Parameters
    ----------
    x : Var or array_like
    index : Var or array_like of int
        Any shape; values in ``[-n, n)`` for an axis of size n.
    axis : int
        0 in MNN's ``gather``; other axes are ONNX's Gather.

    Returns
    -------
    Var
        Shape ``x.shape[:axis] + index.shape + x.shape[axis+1:]``.
    """
    return apply("gather", [to_var(x), _int_var(index)], axis=int(axis))[0]


def _int_var(index):
    if isinstance(index, (list, tuple)) or np.isscalar(index):
        arr = np.asarray(index)
        if arr.dtype.kind in "iu" or arr.size == 0:
            return to_var(arr.astype(np.int32) if arr.size == 0 else arr)
    return to_var(index)


# -- gather_nd / scatter_nd -----------------------------------------------------------------

def _nd_key(indices, shape):
    k = indices.shape[-1]
    for d in range(k):
        check_bounds(indices[..., d], shape[d], f"axis {d}")
    return tuple(np.moveaxis(indices, -1, 0))


def _nd_shapes(x_shape, idx_shape):
    if len(idx_shape) < 1:
        raise OpError("indices must be at least 1-d (the last axis indexes the input)")
    k = idx_shape[-1]
    if k > len(x_shape):
        raise OpError(f"indices address {k} axes of a {len(x_shape)}-d input")
    return tuple(idx_shape[:-1]) + tuple(x_shape[k:])


def _gather_nd_infer(metas):
    x, idx = metas
    _check_index_dtype(idx)
    out = _nd_shapes(x.shape, idx.shape)
    if idx.value is not None:
        _nd_key(idx.value, x.shape)
    return [(out, x.dtype)]


def _gather_nd_compute(arrays):
    x, idx = arrays
    return x[_nd_key(idx, x.shape)]


def _gather_nd_grad(inputs, outputs, grads):
    x, idx = inputs
    return [apply("gather_nd_grad", [grads[0], idx], shape=tuple(x.shape))[0], None]


register(OpDef("gather_nd", _gather_nd_infer, _gather_nd_compute, _gather_nd_grad))


def _gather_nd_grad_infer(metas, shape):
    g, idx = metas
    _check_index_dtype(idx)
    want = _nd_shapes(shape, idx.shape)
    if tuple(g.shape) != want:
        raise OpError(f"gradient of shape {list(g.shape)} does not match gathered shape "
                      f"{list(want)}")
    return [(tuple(shape), g.dtype)]


def _gather_nd_grad_compute(arrays, shape):
    g, idx = arrays
    out = np.zeros(shape, g.dtype)
    np.add.at(out, _nd_key(idx, shape), g)
    return out


def _gather_nd_grad_grad(inputs, outputs, grads, shape):
    return [apply("gather_nd", [grads[0], inputs[1]])[0], None]


register(OpDef("gather_nd_grad", _gather_nd_grad_infer, _gather_nd_grad_compute,
               _gather_nd_grad_grad))


def gather_nd(x, indices):
    """Gather slices of ``x`` addressed by the last axis of ``indices`` (TensorFlow's and
    MNN's ``gather_nd``): ``out[i...] = x[indices[i..., 0], ..., indices[i..., k-1]]``.

    Returns
    -------
    Var
        Shape ``indices.shape[:-1] + x.shape[k:]``.
    """
    return apply("gather_nd", [to_var(x), _int_var(indices)])[0]


def _scatter_nd_infer(metas, shape):
    idx, upd = metas
    _check_index_dtype(idx)
    want = _nd_shapes(shape, idx.shape)
    if tuple(upd.shape) != want:
        raise OpError(f"updates of shape {list(upd.shape)} must have shape {list(want)} "
                      f"(indices.shape[:-1] + shape[k:]) for output shape {list(shape)}")
    if idx.value is not None:
        _nd_key(idx.value, shape)
    return [(tuple(shape), upd.dtype)]


def _scatter_nd_compute(arrays, shape):
    idx, upd = arrays
    out = np.zeros(shape, upd.dtype)
    out[_nd_key(idx, shape)] = upd
    return out


def _scatter_nd_grad(inputs, outputs, grads, shape):
    return [None, apply("scatter_nd_updates_grad", [grads[0], inputs[0]])[0]]


register(OpDef("scatter_nd", _scatter_nd_infer, _scatter_nd_compute, _scatter_nd_grad))


def scatter_nd(indices, updates, shape):
    """Zeros of ``shape`` with ``updates`` written at ``indices`` (MNN's ``scatter_nd``;
    with repeated indices the last update wins, as in MNN).

    Parameters
    ----------
    indices : Var or array_like of int, shape ``[..., k]``
    updates : Var or array_like, shape ``indices.shape[:-1] + shape[k:]``
    shape : sequence of int or const Var
    """
    if hasattr(shape, "read"):
        shape = shape.read()
    shape = tuple(int(d) for d in np.atleast_1d(np.asarray(shape)).ravel())
    if any(d < 0 for d in shape):
        raise OpError(f"scatter_nd: shape {list(shape)} has a negative dimension")
    return apply("scatter_nd", [_int_var(indices), to_var(updates)], shape=shape)[0]


def _scatter_nd_updates_grad_infer(metas):
    g, idx = metas
    _check_index_dtype(idx)
    return [(_nd_shapes(g.shape, idx.shape), g.dtype)]


def _scatter_nd_updates_grad_compute(arrays):
    # gather_nd of the gradient, zeroed where a later update overwrote this one.
    g, idx = arrays
    key = _nd_key(idx, g.shape)
    ids = np.arange(int(np.prod(idx.shape[:-1], dtype=np.int64))).reshape(idx.shape[:-1])
    canvas = np.full(g.shape[:idx.shape[-1]], -1, np.int64)
    canvas[key] = ids
    won = (canvas[key] == ids).reshape(ids.shape + (1,) * (g.ndim - idx.shape[-1]))
    return np.where(won, g[key], np.zeros((), g.dtype))


def _scatter_nd_updates_grad_grad(inputs, outputs, grads):
    # Linear in g; its adjoint writes h at the indices, the last writer winning: scatter_nd.
    g, idx = inputs
    return [apply("scatter_nd", [idx, grads[0]], shape=tuple(g.shape))[0], None]


register(OpDef("scatter_nd_updates_grad", _scatter_nd_updates_grad_infer,
               _scatter_nd_updates_grad_compute, _scatter_nd_updates_grad_grad))
