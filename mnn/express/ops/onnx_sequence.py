"""ONNX sequences and optionals whose contents are only known at run time.

A sequence the converter cannot fix at conversion time (one a ``Loop`` grows, one an ``If``
picks, one split by run-time sizes) travels through the graph as two tensors:

- ``data``: the elements' values raveled and concatenated (1-d, the elements' dtype);
- ``index``: int64, 1-d, ``[n, rank_0, dims_0..., rank_1, dims_1..., ...]``.

Both are ordinary tensors, so a sequence can be a loop-carried value of ``while`` (its
shapes change between iterations) or an output of ``if``. The ops:

- ``sequence_pack(t_1 … t_n; dtype)`` -> ``[data, index]`` (``dtype`` of an empty one);
- ``sequence_insert(data, index, tensor[, position])`` -> ``[data, index]``;
- ``sequence_erase(data, index[, position])`` -> ``[data, index]``;
- ``sequence_at(data, index, position)`` -> the element;
- ``sequence_length(index)`` -> int64 scalar;
- ``sequence_concat(data, index; axis, new_axis)`` -> ONNX ConcatFromSequence;
- ``sequence_split(x[, split]; axis, keepdims)`` -> ``[data, index]`` (SplitToSequence);
- ``optional_get(present, v_1 … v_k)`` -> ``[v_1 … v_k]``, an error when ``present`` is
  false (ONNX OptionalGetElement on an empty optional).

Positions follow ONNX: negative counts from the end, out of range is an error. None of
these is differentiable; MNN stores such sequences as TensorArrays, which the .mnn writer
maps separately.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = [
    "optional_get",
    "sequence_at",
    "sequence_concat",
    "sequence_erase",
    "sequence_insert",
    "sequence_length",
    "sequence_pack",
    "sequence_split",
    "sequence_unpack",
]


# -- the packed form ----------------------------------------------------------------------

def sequence_unpack(data, index):
    """The element arrays of a packed sequence (``data``, ``index`` ndarrays).

    Raises
    ------
    OpError
        If ``index`` is malformed or does not describe ``data`` exactly.
    """
    data = np.asarray(data)
    index = np.asarray(index)
    if data.ndim != 1 or index.ndim != 1 or index.dtype != np.int64 or index.size < 1:
        raise OpError(f"sequence: malformed packed sequence (data {list(data.shape)}, index "
                      f"{index.dtype} {list(index.shape)})")
    n = int(index[0])
    if n < 0:
        raise OpError(f"sequence: malformed index (length {n})")
    out, pos, offset = [], 1, 0
    for i in range(n):
        if pos >= index.size:
            raise OpError(f"sequence: index ends before element {i} of {n}")
        rank = int(index[pos])
        dims = index[pos + 1:pos + 1 + rank]
        if rank < 0 or dims.size != rank or np.any(dims < 0):
            raise OpError(f"sequence: malformed shape of element {i}")
        size = int(np.prod(dims, dtype=np.int64))
        if offset + size > data.size:
            raise OpError(f"sequence: element {i} runs past the data ({data.size} values)")
        out.append(data[offset:offset + size].reshape([int(d) for d in dims]))
        offset += size
        pos += 1 + rank
    if pos != index.size or offset != data.size:
        raise OpError("sequence: index and data have values left over")
    return out


def _pack(arrays, dtype):
    index = [len(arrays)]
    for a in arrays:
        index.append(a.ndim)
        index.extend(a.shape)
    data = [np.asarray(a, dtype).reshape(-1) for a in arrays]
    flat = np.concatenate(data) if data else np.zeros(0, dtype)
    return [flat, np.array(index, np.int64)]


def _packed_metas(metas, what):
    data, index = metas[0], metas[1]
    if data.shape is not None and len(data.shape) != 1:
        raise OpError(f"{what}: data must be 1-d, got shape {list(data.shape)}")
    if index.dtype is not None and index.dtype != np.int64:
        raise OpError(f"{what}: index must be int64, got {index.dtype}")
    return data.dtype


def _position(value, length, insert, what):
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.size != 1:
        raise OpError(f"{what}: position must be one integer, got {arr.dtype} "
                      f"{list(arr.shape)}")
    pos = int(arr.reshape(-1)[0])
    hi = length if insert else length - 1
    if not -length <= pos <= hi:
        raise OpError(f"{what}: position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


# -- pack ---------------------------------------------------------------------------------

def _pack_infer(metas, dtype):
    for i, m in enumerate(metas):
        if m.dtype is not None and m.dtype != dtype:
            raise OpError(f"sequence_pack: element {i} is {m.dtype}, the sequence holds "
                          f"{dtype}")
    if any(m.shape is None for m in metas):
        return [(None, dtype), (None, np.dtype(np.int64))]
    size = sum(int(np.prod(m.shape, dtype=np.int64)) for m in metas)
    n_index = 1 + sum(1 + len(m.shape) for m in metas)
    return [((size,), dtype), ((n_index,), np.dtype(np.int64))]


def _pack_compute(arrays, dtype):
    return _pack(list(arrays), dtype)


register(OpDef("sequence_pack", _pack_infer, _pack_compute, None, n_outputs=2))


def sequence_pack(tensors, dtype):
    """Pack ``tensors`` (all of ``dtype``) into ``[data, index]``."""
    from ..dtypes import to_numpy_dtype

    return apply("sequence_pack", [to_var(t) for t in tensors], dtype=to_numpy_dtype(dtype))


# -- insert / erase -----------------------------------------------------------------------

def _insert_infer(metas):
    dtype = _packed_metas(metas, "sequence_insert")
    if metas[2].dtype is not None and dtype is not None and metas[2].dtype != dtype:
        raise OpError(f"sequence_insert: the tensor is {metas[2].dtype}, the sequence holds "
                      f"{dtype}")
    data, index, t = metas[0], metas[1], metas[2]
    if data.shape is None or index.shape is None or t.shape is None:
        return [(None, dtype), (None, np.dtype(np.int64))]
    size = data.shape[0] + int(np.prod(t.shape, dtype=np.int64))
    return [((size,), dtype), ((index.shape[0] + 1 + len(t.shape),), np.dtype(np.int64))]


def _insert_compute(arrays):
    data, index, tensor = arrays[:3]
    items = sequence_unpack(data, index)
    pos = len(items) if len(arrays) < 4 else _position(arrays[3], len(items), True,
                                                       "sequence_insert")
    items.insert(pos, tensor)
    return _pack(items, data.dtype)


register(OpDef("sequence_insert", _insert_infer, _insert_compute, None, n_outputs=2))


def sequence_insert(data, index, tensor, position=None):
    """Insert ``tensor`` at ``position`` (default: the end); returns ``[data, index]``."""
    args = [to_var(data), to_var(index), to_var(tensor)]
    if position is not None:
        args.append(to_var(position))
    return apply("sequence_insert", args)


def _erase_infer(metas):
    dtype = _packed_metas(metas, "sequence_erase")
    return [(None, dtype), (None, np.dtype(np.int64))]


def _erase_compute(arrays):
    data, index = arrays[:2]
    items = sequence_unpack(data, index)
    if not items:
        raise OpError("sequence_erase: the sequence is empty")
    pos = len(items) - 1 if len(arrays) < 3 else _position(arrays[2], len(items), False,
                                                          "sequence_erase")
    del items[pos]
    return _pack(items, data.dtype)


register(OpDef("sequence_erase", _erase_infer, _erase_compute, None, n_outputs=2))


def sequence_erase(data, index, position=None):
    """Remove the element at ``position`` (default: the last); returns ``[data, index]``."""
    args = [to_var(data), to_var(index)]
    if position is not None:
        args.append(to_var(position))
    return apply("sequence_erase", args)


# -- at / length / concat -----------------------------------------------------------------

def _at_infer(metas):
    return [(None, _packed_metas(metas, "sequence_at"))]


def _at_compute(arrays):
    items = sequence_unpack(arrays[0], arrays[1])
    return np.array(items[_position(arrays[2], len(items), False, "sequence_at")])


register(OpDef("sequence_at", _at_infer, _at_compute))


def sequence_at(data, index, position):
    """The element at ``position`` (negative counts from the end)."""
    return apply("sequence_at", [to_var(data), to_var(index), to_var(position)])[0]


def _length_infer(metas):
    if metas[0].dtype is not None and metas[0].dtype != np.int64:
        raise OpError(f"sequence_length: index must be int64, got {metas[0].dtype}")
    return [((), np.dtype(np.int64))]


def _length_compute(arrays):
    index = arrays[0]
    if index.ndim != 1 or index.size < 1:
        raise OpError("sequence_length: malformed index")
    return np.array(index[0], np.int64)


register(OpDef("sequence_length", _length_infer, _length_compute))


def sequence_length(index):
    """Number of elements of a packed sequence (int64 scalar)."""
    return apply("sequence_length", [to_var(index)])[0]


def _concat_infer(metas, axis, new_axis):
    return [(None, _packed_metas(metas, "sequence_concat"))]


def _concat_compute(arrays, axis, new_axis):
    items = sequence_unpack(arrays[0], arrays[1])
    if not items:
        raise OpError("sequence_concat: the sequence is empty")
    rank = items[0].ndim + (1 if new_axis else 0)
    if not -rank <= axis < rank:
        raise OpError(f"sequence_concat: axis {axis} is out of range for rank {rank}")
    try:
        if new_axis:
            return np.stack(items, axis)
        return np.concatenate(items, axis)
    except ValueError as exc:
        raise OpError(f"sequence_concat: elements do not fit together: {exc}") from None


register(OpDef("sequence_concat", _concat_infer, _concat_compute))


def sequence_concat(data, index, axis, new_axis=False):
    """Concatenate (or, with ``new_axis``, stack) the elements along ``axis``."""
    return apply("sequence_concat", [to_var(data), to_var(index)], axis=int(axis),
                 new_axis=bool(new_axis))[0]


# -- split --------------------------------------------------------------------------------

def _split_infer(metas, axis, keepdims):
    if len(metas) > 1 and metas[1].dtype is not None and metas[1].dtype.kind not in "iu":
        raise OpError(f"sequence_split: split must be integers, got {metas[1].dtype}")
    return [(None, metas[0].dtype), (None, np.dtype(np.int64))]


def _split_compute(arrays, axis, keepdims):
    x = arrays[0]
    if x.ndim == 0:
        raise OpError("sequence_split: the input must have at least one dimension")
    if not -x.ndim <= axis < x.ndim:
        raise OpError(f"sequence_split: axis {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    dim = x.shape[axis]
    squeeze = False
    if len(arrays) < 2:
        sizes, squeeze = [1] * dim, not keepdims
    else:
        split = np.asarray(arrays[1])
        if split.dtype.kind not in "iu" or split.ndim > 1:
            raise OpError(f"sequence_split: split must be a scalar or 1-d integers, got "
                          f"{split.dtype} {list(split.shape)}")
        if split.ndim == 0:
            step = int(split)
            if step <= 0:
                raise OpError(f"sequence_split: split {step} must be positive")
            sizes = [step] * (dim // step) + ([dim % step] if dim % step else [])
        else:
            sizes = [int(s) for s in split]
            if any(s < 0 for s in sizes) or sum(sizes) != dim:
                raise OpError(f"sequence_split: split sizes {sizes} do not add up to {dim}")
    pieces, start = [], 0
    for size in sizes:
        piece = np.take(x, np.arange(start, start + size), axis=axis)
        pieces.append(np.squeeze(piece, axis) if squeeze else piece)
        start += size
    return _pack(pieces, x.dtype)


register(OpDef("sequence_split", _split_infer, _split_compute, None, n_outputs=2))


def sequence_split(x, split=None, axis=0, keepdims=True):
    """ONNX SplitToSequence; returns ``[data, index]``."""
    args = [to_var(x)] + ([to_var(split)] if split is not None else [])
    return apply("sequence_split", args, axis=int(axis), keepdims=bool(keepdims))


# -- optionals ----------------------------------------------------------------------------

def _optional_get_infer(metas, n):
    present = metas[0]
    if present.shape is not None and int(np.prod(present.shape, dtype=np.int64)) != 1:
        raise OpError(f"optional_get: present must have one element, has shape "
                      f"{list(present.shape)}")
    return [(m.shape, m.dtype) for m in metas[1:]]


def _optional_get_compute(arrays, n):
    if not bool(np.asarray(arrays[0]).reshape(-1)[0]):
        raise OpError("optional_get: the optional is empty")
    return list(arrays[1:])


def _optional_get_outputs(attrs):
    return attrs["n"]


register(OpDef("optional_get", _optional_get_infer, _optional_get_compute, None,
               n_outputs=_optional_get_outputs))


def optional_get(present, values):
    """``values`` when ``present`` holds, else an error at run time (empty optional)."""
    values = [to_var(v) for v in values]
    return apply("optional_get", [to_var(present)] + values, n=len(values))
