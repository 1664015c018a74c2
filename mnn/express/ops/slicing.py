"""Basic slicing: ``strided_slice`` (TensorFlow's five masks, as MNN) and ``slice``.

A strided slice is a list of specs, one per entry of ``begin``/``end``/``strides``. Bit
``i`` of a mask changes spec ``i``: ``begin_mask`` ignores ``begin[i]`` (start from the
edge), ``end_mask`` ignores ``end[i]``, ``ellipsis_mask`` makes the spec ``...``,
``new_axis_mask`` inserts a size-1 axis, ``shrink_axis_mask`` takes the single index
``begin[i]`` and drops the axis. Starts and ends clamp like Python slices; a shrink index
out of range is an error. The gradient scatters the incoming gradient into zeros.
"""
import builtins

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["slice", "strided_slice"]


def _int_tuple(values, what):
    if hasattr(values, "read"):
        values = values.read()
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise OpError(f"{what} must be a 1-d list of integers, got {values!r}")
    return tuple(int(v) for v in arr)


def _key_from_masks(begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                    new_axis_mask, shrink_axis_mask):
    """numpy index tuple equivalent to a strided-slice spec list."""
    if not len(begin) == len(end) == len(strides):
        raise OpError(f"begin {list(begin)}, end {list(end)} and strides {list(strides)} "
                      "must have the same length")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(int(b))
        else:
            if s == 0:
                raise OpError(f"stride {i} is 0")
            key.append(builtins.slice(None if begin_mask & bit else b,
                                 None if end_mask & bit else e, s))
    if key.count(Ellipsis) > 1:
        raise OpError("ellipsis_mask sets more than one bit")
    return tuple(key)


def basic_shape(shape, key):
    """Output shape of ``x[key]`` for a key of ints, slices, None and one Ellipsis.

    Raises
    ------
    OpError
        If the key indexes more axes than ``shape`` has or an int is out of range.
    """
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > len(shape):
        raise OpError(f"too many indices: {consumed} for a {len(shape)}-d input")
    out, dim = [], 0
    for k in key:
        if k is Ellipsis:
            n = len(shape) - consumed
            out.extend(shape[dim:dim + n])
            dim += n
        elif k is None:
            out.append(1)
        elif isinstance(k, int):
            size = shape[dim]
            if not -size <= k < size:
                raise OpError(f"index {k} is out of range for axis {dim} of size {size}")
            dim += 1
        else:
            out.append(len(range(*k.indices(shape[dim]))))
            dim += 1
    out.extend(shape[dim:])
    return tuple(out)


_MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _ss_key(attrs):
    return _key_from_masks(attrs["begin"], attrs["end"], attrs["strides"],
                           *(attrs[n] for n in _MASK_NAMES))


def _ss_infer(metas, **attrs):
    return [(basic_shape(metas[0].shape, _ss_key(attrs)), metas[0].dtype)]


def _ss_compute(arrays, **attrs):
    x = arrays[0]
    key = _ss_key(attrs)
    basic_shape(x.shape, key)
    return x[key]


def _ss_grad(inputs, outputs, grads, **attrs):
    return [apply("strided_slice_grad", [grads[0]], shape=tuple(inputs[0].shape), **attrs)[0]]


register(OpDef("strided_slice", _ss_infer, _ss_compute, _ss_grad))


def _ssg_infer(metas, shape, **attrs):
    want = basic_shape(shape, _ss_key(attrs))
    if tuple(metas[0].shape) != want:
        raise OpError(f"gradient of shape {list(metas[0].shape)} does not match the slice "
                      f"shape {list(want)}")
    return [(shape, metas[0].dtype)]


def _ssg_compute(arrays, shape, **attrs):
    out = np.zeros(shape, arrays[0].dtype)
    out[_ss_key(attrs)] = arrays[0]
    return out


def _ssg_grad(inputs, outputs, grads, shape, **attrs):
    return [apply("strided_slice", [grads[0]], **attrs)[0]]


register(OpDef("strided_slice_grad", _ssg_infer, _ssg_compute, _ssg_grad))


def masks_from_key(key):
    """The strided-slice attributes of a basic numpy key (ints, slices, None, Ellipsis)."""
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASK_NAMES, 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, builtins.slice):
            step = 1 if k.step is None else int(k.step)
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(step)
        else:
            masks["shrink_axis_mask"] |= bit
            begin.append(int(k)), end.append(int(k) + 1), strides.append(1)
    return dict(begin=tuple(begin), end=tuple(end), strides=tuple(strides), **masks)


def basic_index(x, key):
    """``x[key]`` for a key of ints, slices, None and Ellipsis (one strided_slice op)."""
    return apply("strided_slice", [to_var(x)], **masks_from_key(key))[0]


def strided_slice(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """TensorFlow-style strided slice (MNN's ``strided_slice``).

    Parameters
    ----------
    x : Var or array_like
    begin, end, strides : sequence of int (or const Var)
        One entry per slice spec.
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask : int
        Bit ``i`` changes spec ``i`` (see the module docstring).

    Returns
    -------
    Var
    """
    attrs = {"begin": _int_tuple(begin, "strided_slice: begin"),
             "end": _int_tuple(end, "strided_slice: end"),
             "strides": _int_tuple(strides, "strided_slice: strides"),
             "begin_mask": int(begin_mask), "end_mask": int(end_mask),
             "ellipsis_mask": int(ellipsis_mask), "new_axis_mask": int(new_axis_mask),
             "shrink_axis_mask": int(shrink_axis_mask)}
    return apply("strided_slice", [to_var(x)], **attrs)[0]


def slice(x, starts, sizes):
    """The block of ``x`` starting at ``starts`` with ``sizes`` (-1: to the end).

    Parameters
    ----------
    x : Var or array_like
    starts, sizes : sequence of int (or const Var)
        One entry per leading axis of ``x``.
    """
    x = to_var(x)
    starts = _int_tuple(starts, "slice: starts")
    sizes = _int_tuple(sizes, "slice: sizes")
    shape = x.shape
    if len(starts) != len(sizes) or len(starts) > len(shape):
        raise OpError(f"slice: starts {list(starts)} and sizes {list(sizes)} must have one "
                      f"entry per axis of the input (shape {shape})")
    key = []
    for axis, (b, n, d) in enumerate(zip(starts, sizes, shape)):
        stop = d if n == -1 else b + n
        if b < 0 or n < -1 or stop > d:
            raise OpError(f"slice: start {b} with size {n} does not fit axis {axis} of size "
                          f"{d} (input shape {shape})")
        key.append(builtins.slice(b, stop, 1))
    return basic_index(x, tuple(key))
