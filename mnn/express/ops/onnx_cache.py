"""``onnx_tensor_scatter``: ONNX TensorScatter, writing new entries into a KV cache.

``cache`` and ``update`` agree on every axis but ``axis`` (the sequence axis), where the
update is not longer than the cache. For each batch entry ``b`` (axis 0) the update's
rows go to cache rows ``write_indices[b] + i`` (``i`` over the update's length); in
``circular`` mode modulo the cache length, in ``linear`` mode they must fit. Rows not
written keep the cache's values. ``write_indices`` defaults to zeros.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_tensor_scatter"]


def _axis(rank, axis):
    if rank < 2 or not -rank <= axis < rank:
        raise OpError(f"onnx_tensor_scatter: axis {axis} is out of range for rank {rank} "
                      "(at least 2: batch and sequence)")
    a = axis % rank
    if a == 0:
        raise OpError("onnx_tensor_scatter: the sequence axis cannot be the batch axis 0")
    return a


def _infer(metas, axis, mode):
    cache, update = metas[0], metas[1]
    if mode not in ("linear", "circular"):
        raise OpError(f"onnx_tensor_scatter: mode must be linear or circular, got {mode!r}")
    if cache.dtype is not None and update.dtype is not None and cache.dtype != update.dtype:
        raise OpError(f"onnx_tensor_scatter: cache is {cache.dtype}, update {update.dtype}")
    if len(metas) > 2 and metas[2].dtype is not None and metas[2].dtype.kind not in "iu":
        raise OpError(f"onnx_tensor_scatter: write_indices must be integers, got "
                      f"{metas[2].dtype}")
    if cache.shape is not None and update.shape is not None:
        _check(cache.shape, update.shape, axis)
    return [(cache.shape, cache.dtype)]


def _check(cs, us, axis):
    if len(cs) != len(us):
        raise OpError(f"onnx_tensor_scatter: cache {list(cs)} and update {list(us)} differ "
                      "in rank")
    a = _axis(len(cs), axis)
    for i, (c, u) in enumerate(zip(cs, us)):
        if (i != a and c != u) or (i == a and u > c):
            raise OpError(f"onnx_tensor_scatter: update {list(us)} does not fit cache "
                          f"{list(cs)} (axis {a})")
    return a


def _compute(arrays, axis, mode):
    cache, update = arrays[0], arrays[1]
    a = _check(cache.shape, update.shape, axis)
    batch, length, room = cache.shape[0], update.shape[a], cache.shape[a]
    if len(arrays) > 2:
        starts = np.asarray(arrays[2]).reshape(-1).astype(np.int64)
        if starts.size != batch:
            raise OpError(f"onnx_tensor_scatter: write_indices has {starts.size} values "
                          f"for a batch of {batch}")
    else:
        starts = np.zeros(batch, np.int64)
    out = np.array(cache, copy=True)
    for b in range(batch):
        rows = starts[b] + np.arange(length)
        if mode == "circular":
            rows %= room
        elif length and (starts[b] < 0 or rows[-1] >= room):
            raise OpError(f"onnx_tensor_scatter: rows {starts[b]}..{starts[b] + length - 1} "
                          f"do not fit a cache of {room} (batch {b})")
        target = np.moveaxis(out[b], a - 1, 0)
        target[rows] = np.moveaxis(update[b], a - 1, 0)
    return out


register(OpDef("onnx_tensor_scatter", _infer, _compute))


def onnx_tensor_scatter(cache, update, write_indices=None, axis=-2, mode="linear"):
    """ONNX TensorScatter (see the module docstring)."""
    args = [to_var(cache), to_var(update)]
    if write_indices is not None:
        args.append(to_var(write_indices))
    return apply("onnx_tensor_scatter", args, axis=int(axis), mode=str(mode))[0]
