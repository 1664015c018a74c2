"""ONNX's scatters with a reduction: ``onnx_scatter_nd`` and ``onnx_scatter_elements``.

Both return a copy of ``data`` where the positions named by ``indices`` are combined with
``updates`` by ``reduction``: ``none`` (replace), ``add``, ``mul``, ``max``, ``min``
(repeated indices accumulate, in order). ``onnx_scatter_nd``: ``indices`` ``[..., k]``
address slices of ``data``'s first k axes (ScatterND); ``onnx_scatter_elements``:
``indices`` has ``updates``' shape and replaces the ``axis`` coordinate (ScatterElements).
Indices may be negative (from the end); out-of-range indices are an error.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_scatter_elements", "onnx_scatter_nd"]

_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _check_reduction(reduction):
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise OpError(f"reduction must be none, add, mul, max or min, got {reduction!r}")


def _check_index(idx):
    if idx.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {idx.dtype}")


def _normalize(indices, sizes):
    idx = np.asarray(indices, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    if np.any((idx < -sizes) | (idx >= sizes)):
        raise OpError(f"an index is out of range for sizes {sizes.tolist()}")
    return np.where(idx < 0, idx + sizes, idx)


def _nd_infer(metas, reduction):
    data, idx, upd = metas
    _check_reduction(reduction)
    _check_index(idx)
    k = idx.shape[-1] if idx.shape else 0
    if not idx.shape or k > len(data.shape):
        raise OpError(f"indices of shape {list(idx.shape)} need a last axis of at most "
                      f"{len(data.shape)}")
    want = tuple(idx.shape[:-1]) + tuple(data.shape[k:])
    if tuple(upd.shape) != want or upd.dtype != data.dtype:
        raise OpError(f"updates must have shape {list(want)} and dtype {data.dtype}, got "
                      f"{list(upd.shape)} {upd.dtype}")
    return [(data.shape, data.dtype)]


def _nd_compute(arrays, reduction):
    data, indices, updates = arrays
    k = indices.shape[-1]
    idx = _normalize(indices, data.shape[:k]).reshape(-1, k)
    upd = updates.reshape((idx.shape[0],) + data.shape[k:])
    out = data.copy()
    for i in range(idx.shape[0]):
        key = tuple(idx[i])
        if reduction == "none":
            out[key] = upd[i]
        else:
            out[key] = _UFUNCS[reduction](out[key], upd[i])
    return out


register(OpDef("onnx_scatter_nd", _nd_infer, _nd_compute))


def onnx_scatter_nd(data, indices, updates, reduction="none"):
    """ONNX ScatterND (see the module docstring)."""
    return apply("onnx_scatter_nd", [to_var(data), to_var(indices), to_var(updates)],
                 reduction=str(reduction))[0]


def _el_infer(metas, axis, reduction):
    data, idx, upd = metas
    _check_reduction(reduction)
    _check_index(idx)
    rank = len(data.shape)
    if not -rank <= axis < max(rank, 1):
        raise OpError(f"axis {axis} is out of range for rank {rank}")
    if len(idx.shape) != rank or tuple(idx.shape) != tuple(upd.shape):
        raise OpError(f"indices {list(idx.shape)} and updates {list(upd.shape)} need the "
                      f"same shape and the rank of data ({rank})")
    if any(i > d for i, d in zip(idx.shape, data.shape)) or upd.dtype != data.dtype:
        raise OpError(f"indices {list(idx.shape)} exceed data {list(data.shape)} or "
                      f"updates are not {data.dtype}")
    return [(data.shape, data.dtype)]


def _el_compute(arrays, axis, reduction):
    data, indices, updates = arrays
    axis = axis % data.ndim
    idx = _normalize(indices, data.shape[axis])
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    out = data.copy()
    if reduction == "none":
        out[tuple(grid)] = updates
    else:
        _UFUNCS[reduction].at(out, tuple(grid), updates)
    return out


register(OpDef("onnx_scatter_elements", _el_infer, _el_compute))


def onnx_scatter_elements(data, indices, updates, axis=0, reduction="none"):
    """ONNX ScatterElements (see the module docstring)."""
    return apply("onnx_scatter_elements", [to_var(data), to_var(indices), to_var(updates)],
                 axis=int(axis), reduction=str(reduction))[0]
