"""Index-driven picks as ops: numpy's ``take`` (with its raise/wrap/clip modes),
``take_along_axis`` and ``choose``, and the scatter-add ops that are their gradients.

Indices come as a second (integer) input and are range-checked before numpy sees them,
so a bad index is an error naming it, never an out-of-bounds read.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .np_common import axis_of

__all__ = ["take", "take_backward", "take_along_axis", "take_along_axis_backward", "choose"]


# -- take / take_along_axis / choose ----------------------------------------------------

_MODES = ("raise", "wrap", "clip")


def _check_int_indices(meta, what="indices"):
    if meta.dtype.kind not in "iu":
        raise OpError(f"{what} must be integers, got {meta.dtype}")


def _take_infer(metas, axis, mode):
    x, idx = metas
    _check_int_indices(idx)
    if mode not in _MODES:
        raise OpError(f"mode {mode!r} is not one of {_MODES}")
    if axis is None:
        return [(tuple(idx.shape), x.dtype)]
    ax = axis_of(axis, len(x.shape))
    shape = x.shape[:ax] + tuple(idx.shape) + x.shape[ax + 1:]
    if mode == "raise" and idx.value is not None:
        _check_range(idx.value, x.shape[ax])
    return [(shape, x.dtype)]


def _check_range(indices, length):
    if indices.size and (indices.min() < -length or indices.max() >= length):
        raise OpError(f"index {int(indices.max() if indices.max() >= length else indices.min())}"
                      f" is out of bounds for an axis of size {length}")


def _take_compute(arrays, axis, mode):
    x, idx = arrays
    if mode == "raise":
        _check_range(idx, x.size if axis is None else x.shape[axis_of(axis, x.ndim)])
    elif x.size == 0 and idx.size:
        raise OpError("cannot take from an empty axis")
    return np.take(x, idx, axis=axis, mode=mode)


def _take_grad(inputs, outputs, grads, axis, mode):
    x, idx = inputs
    return [take_backward(grads[0], idx, x.shape, axis, mode), None]


register(OpDef("take", _take_infer, _take_compute, _take_grad))


def _wrapped_indices(idx, length, mode):
    """The positions numpy's ``take`` reads for ``idx`` in an axis of ``length``."""
    if mode == "wrap":
        return np.mod(idx, length) if length else idx
    if mode == "clip":
        return np.clip(idx, 0, max(length - 1, 0))
    return np.where(idx < 0, idx + length, idx)


def _take_bw_infer(metas, shape, axis, mode):
    g, idx = metas
    _check_int_indices(idx)
    return [(tuple(shape), g.dtype)]


def _take_bw_compute(arrays, shape, axis, mode):
    # Scatter-add: an index read twice by take receives both gradients.
    g, idx = arrays
    out = np.zeros(shape, g.dtype)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, _wrapped_indices(idx, flat.size, mode).reshape(-1), g.reshape(-1))
        return out
    ax = axis_of(axis, len(shape))
    pos = _wrapped_indices(idx, shape[ax], mode)
    moved = np.moveaxis(out, ax, 0)
    g_moved = np.moveaxis(g.reshape(shape[:ax] + idx.shape + shape[ax + 1:]),
                          list(range(ax, ax + idx.ndim)), list(range(idx.ndim)))
    np.add.at(moved, pos, g_moved)
    return out


def _take_bw_grad(inputs, outputs, grads, shape, axis, mode):
    return [take(grads[0], inputs[1], axis, mode), None]


register(OpDef("take_backward", _take_bw_infer, _take_bw_compute, _take_bw_grad))


def take_backward(g, indices, shape, axis=None, mode="raise"):
    """The gradient of :func:`take`: ``g`` added into zeros of ``shape`` at the positions
    ``take`` read (repeated indices accumulate)."""
    return apply("take_backward", [to_var(g), to_var(indices)],
                 shape=tuple(int(d) for d in shape),
                 axis=None if axis is None else int(axis), mode=str(mode))[0]


def take(x, indices, axis=None, mode="raise"):
    """Elements of ``x`` at ``indices`` along ``axis`` (the flattened input when None).

    Parameters
    ----------
    x : Var or array_like
    indices : Var or array_like of int
    axis : int, optional
    mode : {'raise', 'wrap', 'clip'}
        How out-of-range indices are handled (``raise``: an error naming the index).

    Returns
    -------
    Var
    """
    x = to_var(x)
    return apply("take", [x, to_var(indices)], axis=None if axis is None else int(axis),
                 mode=str(mode))[0]


def _tala_infer(metas, axis):
    x, idx = metas
    _check_int_indices(idx)
    if axis is None:
        if len(idx.shape) != 1:
            raise OpError("with axis=None, indices must be 1-d")
        return [(tuple(idx.shape), x.dtype)]
    if len(idx.shape) != len(x.shape):
        raise OpError(f"indices ({len(idx.shape)}-d) and input ({len(x.shape)}-d) must "
                      "have the same number of dimensions")
    ax = axis_of(axis, len(x.shape))
    try:
        shape = np.broadcast_shapes(x.shape[:ax] + (1,) + x.shape[ax + 1:],
                                    idx.shape[:ax] + (1,) + idx.shape[ax + 1:])
    except ValueError:
        raise OpError(f"indices of shape {list(idx.shape)} do not broadcast against the "
                      f"input of shape {list(x.shape)}") from None
    shape = shape[:ax] + (idx.shape[ax],) + shape[ax + 1:]
    return [(shape, x.dtype)]


def _tala_compute(arrays, axis):
    x, idx = arrays
    length = x.size if axis is None else x.shape[axis_of(axis, x.ndim)]
    _check_range(idx, length)
    return np.take_along_axis(x, idx, axis=axis)


def _tala_grad(inputs, outputs, grads, axis):
    x, idx = inputs
    return [take_along_axis_backward(grads[0], idx, x.shape, axis), None]


register(OpDef("take_along_axis", _tala_infer, _tala_compute, _tala_grad))


def _tala_bw_infer(metas, shape, axis):
    g, idx = metas
    _check_int_indices(idx)
    return [(tuple(shape), g.dtype)]


def _tala_bw_compute(arrays, shape, axis):
    g, idx = arrays
    out = np.zeros(shape, g.dtype)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, np.where(idx < 0, idx + flat.size, idx), g)
        return out
    ax = axis_of(axis, len(shape))
    idx = np.where(idx < 0, idx + shape[ax], idx)
    full = np.broadcast_shapes(g.shape, idx.shape)
    grids = list(np.indices(full, sparse=True))
    grids[ax] = np.broadcast_to(idx, full)
    np.add.at(out, tuple(grids), np.broadcast_to(g, full))
    return out


def _tala_bw_grad(inputs, outputs, grads, shape, axis):
    return [take_along_axis(grads[0], inputs[1], axis), None]


register(OpDef("take_along_axis_backward", _tala_bw_infer, _tala_bw_compute,
               _tala_bw_grad))


def take_along_axis_backward(g, indices, shape, axis):
    """The gradient of :func:`take_along_axis`: ``g`` added into zeros of ``shape`` at
    the positions read (repeated indices accumulate)."""
    return apply("take_along_axis_backward", [to_var(g), to_var(indices)],
                 shape=tuple(int(d) for d in shape),
                 axis=None if axis is None else int(axis))[0]


def take_along_axis(x, indices, axis):
    """Pick values along ``axis`` at the matching positions of ``indices`` (same ndim;
    other axes broadcast), as numpy's ``take_along_axis``.

    Parameters
    ----------
    x : Var or array_like
    indices : Var or array_like of int
    axis : int or None

    Returns
    -------
    Var
    """
    return apply("take_along_axis", [to_var(x), to_var(indices)],
                 axis=None if axis is None else int(axis))[0]


def _choose_infer(metas, mode):
    idx, choices = metas[0], metas[1:]
    _check_int_indices(idx, "choice indices")
    if mode not in _MODES:
        raise OpError(f"mode {mode!r} is not one of {_MODES}")
    try:
        shape = np.broadcast_shapes(idx.shape, *[c.shape for c in choices])
    except ValueError:
        raise OpError("indices and choices cannot be broadcast together") from None
    return [(shape, np.result_type(*[c.dtype for c in choices]))]


def _choose_compute(arrays, mode):
    idx, choices = arrays[0], arrays[1:]
    if mode == "raise":
        _check_range(idx, len(choices))
        if idx.size and idx.min() < 0:
            raise OpError(f"choice index {int(idx.min())} is negative")
    dtype = np.result_type(*choices)
    return np.choose(idx, [c.astype(dtype, copy=False) for c in choices], mode=mode)


register(OpDef("choose", _choose_infer, _choose_compute))


def choose(a, choices, mode="raise"):
    """Build an array by picking, per element, from ``choices[a]`` (numpy's ``choose``).

    Parameters
    ----------
    a : Var or array_like of int
    choices : sequence of Var or array_like
    mode : {'raise', 'wrap', 'clip'}

    Returns
    -------
    Var
    """
    choices = [to_var(c) for c in choices]
    if not choices:
        raise OpError("choose: needs at least one choice")
    return apply("choose", [to_var(a)] + choices, mode=str(mode))[0]
