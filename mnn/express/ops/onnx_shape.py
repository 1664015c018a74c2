"""Ops whose shape parameters are tensors computed at run time (ONNX's dynamic forms).

ONNX passes Reshape's target shape, Expand's shape, Slice's starts/ends, the reduction axes
... as tensors. When they are constants the converter uses the ordinary ops (``reshape``,
``broadcast_to``, ``strided_slice``, ``reduce_*``); when they depend on graph inputs it uses
these, whose output shape is known only once the parameters are computed (``infer``
returns a shape of None until then).

- ``onnx_reshape(x, shape; allowzero)``: ONNX Reshape (0 copies the input dim unless
  ``allowzero``; one -1 is inferred).
- ``onnx_expand(x, shape)``: broadcast ``x`` and ``shape`` together (bidirectional).
- ``onnx_constant_of_shape(shape; value, dtype)``: a tensor of ``shape`` filled with
  ``value``.
- ``onnx_reduce(x, axes; mode, keepdims, noop_with_empty_axes)``: reductions with axes as a
  tensor; ``mode`` one of sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp,
  sum_square. Empty reductions give the identity (0, 1, -inf, +inf) like ONNX.
- ``onnx_slice(x, starts, ends[, axes[, steps]])``: ONNX Slice with clamping.
- ``onnx_squeeze(x, axes)``, ``onnx_unsqueeze(x, axes)``, ``onnx_tile(x, repeats)``.

None of these is differentiable (they exist to run converted inference graphs).
"""
import builtins

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = [
    "onnx_constant_of_shape",
    "onnx_expand",
    "onnx_reduce",
    "onnx_reshape",
    "onnx_slice",
    "onnx_squeeze",
    "onnx_tile",
    "onnx_unsqueeze",
]


def _ints(arr, what):
    arr = np.asarray(arr)
    if arr.dtype.kind not in "iu" or arr.ndim > 1:
        raise OpError(f"{what} must be a 1-d integer tensor, got {arr.dtype} "
                      f"{list(arr.shape)}")
    return [int(v) for v in arr.reshape(-1)]


def _values(metas):
    """Values of the parameter inputs, or None when one is not known yet."""
    vals = [m.value for m in metas]
    return None if any(v is None for v in vals) else vals


def _axis(a, rank):
    if not -rank <= a < max(rank, 1):
        raise OpError(f"axis {a} is out of range for rank {rank}")
    return a % rank if rank else 0


def _dynamic(name, shape_fn, value_fn, dtype_fn=None):
    """Register op ``name``: ``shape_fn(x_shape, *params)`` gives the output shape,
    ``value_fn(x, *params, **attrs)`` the output array. The first input is the data."""
    def infer(metas, **attrs):
        dtype = dtype_fn(metas, **attrs) if dtype_fn else metas[0].dtype
        params = _values(metas[1:])
        if params is None:
            return [(None, dtype)]
        return [(shape_fn(metas[0].shape, *params, **attrs), dtype)]

    def compute(arrays, **attrs):
        out = value_fn(*arrays, **attrs)
        return np.asarray(out)

    register(OpDef(name, infer, compute))


# -- reshape ------------------------------------------------------------------------------

def _reshape_shape(in_shape, shape, allowzero):
    shape = _ints(shape, "shape")
    size = int(np.prod(in_shape, dtype=np.int64))
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise OpError(f"shape {shape}: 0 at position {i} copies a missing dim")
            d = in_shape[i]
        out.append(d)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise OpError(f"shape {shape} is not a valid target shape")
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise OpError(f"cannot reshape {size} elements into {shape}")
        out[out.index(-1)] = size // known
    if int(np.prod(out, dtype=np.int64)) != size:
        raise OpError(f"cannot reshape {size} elements into {shape}")
    return tuple(out)


_dynamic("onnx_reshape", _reshape_shape,
         lambda x, shape, allowzero: x.reshape(_reshape_shape(x.shape, shape, allowzero)))


def onnx_reshape(x, shape, allowzero=0):
    """ONNX Reshape with the target ``shape`` as a tensor (see the module docstring)."""
    return apply("onnx_reshape", [to_var(x), to_var(shape)], allowzero=int(allowzero))[0]


# -- expand -------------------------------------------------------------------------------

def _expand_shape(in_shape, shape):
    try:
        return tuple(np.broadcast_shapes(tuple(in_shape), tuple(_ints(shape, "shape"))))
    except ValueError:
        raise OpError(f"shape {list(np.asarray(shape))} does not broadcast with "
                      f"{list(in_shape)}") from None


_dynamic("onnx_expand", _expand_shape,
         lambda x, shape: np.broadcast_to(x, _expand_shape(x.shape, shape)))


def onnx_expand(x, shape):
    """Broadcast ``x`` against the tensor ``shape`` (ONNX Expand)."""
    return apply("onnx_expand", [to_var(x), to_var(shape)])[0]


# -- constant of shape --------------------------------------------------------------------

def _cos_infer(metas, value, dtype):
    if metas[0].value is None:
        return [(None, dtype)]
    dims = _ints(metas[0].value, "shape")
    if any(d < 0 for d in dims):
        raise OpError(f"shape {dims} has a negative dimension")
    return [(tuple(dims), dtype)]


def _cos_compute(arrays, value, dtype):
    dims = _ints(arrays[0], "shape")
    if any(d < 0 for d in dims):
        raise OpError(f"shape {dims} has a negative dimension")
    return np.full(dims, value, dtype=dtype)


register(OpDef("onnx_constant_of_shape", _cos_infer, _cos_compute))


def onnx_constant_of_shape(shape, value=0.0, dtype=np.float32):
    """A tensor of the run-time ``shape`` filled with ``value`` (ONNX ConstantOfShape)."""
    return apply("onnx_constant_of_shape", [to_var(shape)], value=value,
                 dtype=np.dtype(dtype))[0]


# -- reductions ---------------------------------------------------------------------------

_MODES = ("sum", "mean", "max", "min", "prod", "l1", "l2", "log_sum", "log_sum_exp",
          "sum_square")


def _reduce_axes(rank, axes, noop):
    axes = _ints(axes, "axes")
    if not axes:
        return None if noop else tuple(builtins.range(rank))
    out = tuple(sorted({_axis(a, rank) for a in axes}))
    if len(out) != len(axes):
        raise OpError(f"axes {axes} repeat an axis")
    return out


def _reduce_shape(in_shape, axes, mode, keepdims, noop_with_empty_axes):
    axes = _reduce_axes(len(in_shape), axes, noop_with_empty_axes)
    if axes is None:
        return tuple(in_shape)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return tuple(d for i, d in enumerate(in_shape) if i not in axes)


def reduce_array(x, axes, mode, keepdims):
    """numpy reduction of ``x`` over ``axes`` (a tuple) in ``mode``, ONNX's empty rules."""
    kw = dict(axis=axes, keepdims=bool(keepdims))
    if mode in ("max", "min"):
        if x.dtype.kind == "f":
            start = -np.inf if mode == "max" else np.inf
        elif x.dtype == np.bool_:
            start = mode == "min"
        else:
            info = np.iinfo(x.dtype)
            start = info.min if mode == "max" else info.max
        fn = np.max if mode == "max" else np.min
        out = fn(x, initial=start, **kw)
    elif mode == "sum":
        out = np.sum(x, **kw)
    elif mode == "mean":
        out = np.mean(x, **kw)
    elif mode == "prod":
        out = np.prod(x, **kw)
    elif mode == "l1":
        out = np.sum(np.abs(x), **kw)
    elif mode == "l2":
        out = np.sqrt(np.sum(np.square(x), **kw))
    elif mode == "sum_square":
        out = np.sum(np.square(x), **kw)
    elif mode == "log_sum":
        out = np.log(np.sum(x, **kw))
    elif mode == "log_sum_exp":
        peak = np.max(x, axis=axes, keepdims=True, initial=-np.inf)
        peak = np.where(np.isfinite(peak), peak, 0)
        out = np.log(np.sum(np.exp(x - peak), axis=axes, keepdims=True)) + peak
        if not keepdims:
            out = np.squeeze(out, axis=axes)
    else:
        raise OpError(f"unknown reduction mode {mode!r}; one of {', '.join(_MODES)}")
    return np.asarray(out).astype(x.dtype, copy=False)


def _reduce_compute(x, axes, mode, keepdims, noop_with_empty_axes):
    ax = _reduce_axes(x.ndim, axes, noop_with_empty_axes)
    if ax is None:
        # ONNX's reference still applies the elementwise parts (abs, square, log ...).
        return reduce_array(x[..., None], (x.ndim,), mode, False)
    return reduce_array(x, ax, mode, keepdims)


_dynamic("onnx_reduce", _reduce_shape, _reduce_compute)


def onnx_reduce(x, axes, mode="sum", keepdims=1, noop_with_empty_axes=0):
    """Reduce ``x`` over the run-time ``axes`` (a 1-d int tensor) in ``mode``."""
    if mode not in _MODES:
        raise OpError(f"onnx_reduce: unknown mode {mode!r}; one of {', '.join(_MODES)}")
    return apply("onnx_reduce", [to_var(x), to_var(axes)], mode=mode, keepdims=int(keepdims),
                 noop_with_empty_axes=int(noop_with_empty_axes))[0]


# -- slice --------------------------------------------------------------------------------

def slice_key(shape, starts, ends, axes=None, steps=None):
    """numpy key of ONNX Slice (clamped like the spec)."""
    starts, ends = _ints(starts, "starts"), _ints(ends, "ends")
    rank = len(shape)
    axes = list(builtins.range(len(starts))) if axes is None else _ints(axes, "axes")
    steps = [1] * len(starts) if steps is None else _ints(steps, "steps")
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise OpError("starts, ends, axes and steps need the same length")
    key = [builtins.slice(None)] * rank
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = _axis(a, rank)
        dim = shape[a]
        if st == 0:
            raise OpError("a slice step is 0")
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
        key[a] = builtins.slice(s, None if e < 0 else e, st)
    return tuple(key)


def _slice_shape(in_shape, *params):
    key = slice_key(in_shape, *params)
    return tuple(len(builtins.range(*k.indices(d))) for k, d in zip(key, in_shape))


_dynamic("onnx_slice", _slice_shape, lambda x, *params: x[slice_key(x.shape, *params)])


def onnx_slice(x, starts, ends, axes=None, steps=None):
    """ONNX Slice with run-time ``starts``/``ends`` (and optional ``axes``/``steps``)."""
    inputs = [to_var(x), to_var(starts), to_var(ends)]
    if steps is not None and axes is None:
        raise OpError("onnx_slice: steps need axes")
    if axes is not None:
        inputs.append(to_var(axes))
    if steps is not None:
        inputs.append(to_var(steps))
    return apply("onnx_slice", inputs)[0]


# -- squeeze / unsqueeze / tile -----------------------------------------------------------

def _squeeze_shape(in_shape, axes):
    axes = {_axis(a, len(in_shape)) for a in _ints(axes, "axes")}
    for a in axes:
        if in_shape[a] != 1:
            raise OpError(f"cannot squeeze axis {a} of size {in_shape[a]}")
    return tuple(d for i, d in enumerate(in_shape) if i not in axes)


_dynamic("onnx_squeeze", _squeeze_shape,
         lambda x, axes: x.reshape(_squeeze_shape(x.shape, axes)))


def onnx_squeeze(x, axes):
    """Drop the size-1 axes listed in the run-time tensor ``axes``."""
    return apply("onnx_squeeze", [to_var(x), to_var(axes)])[0]


def _unsqueeze_shape(in_shape, axes):
    axes = _ints(axes, "axes")
    rank = len(in_shape) + len(axes)
    axes = sorted(_axis(a, rank) for a in axes)
    if len(set(axes)) != len(axes):
        raise OpError(f"axes {axes} repeat an axis")
    out = list(in_shape)
    for a in axes:
        out.insert(a, 1)
    return tuple(out)


_dynamic("onnx_unsqueeze", _unsqueeze_shape,
         lambda x, axes: x.reshape(_unsqueeze_shape(x.shape, axes)))


def onnx_unsqueeze(x, axes):
    """Insert size-1 axes at the run-time ``axes`` (positions in the result)."""
    return apply("onnx_unsqueeze", [to_var(x), to_var(axes)])[0]


def _tile_shape(in_shape, repeats):
    reps = _ints(repeats, "repeats")
    if len(reps) != len(in_shape) or any(r < 0 for r in reps):
        raise OpError(f"repeats {reps} need one non-negative entry per axis of "
                      f"{list(in_shape)}")
    return tuple(r * d for r, d in zip(reps, in_shape))


def _tile_compute(x, repeats):
    _tile_shape(x.shape, repeats)
    return np.tile(x, _ints(repeats, "repeats"))


_dynamic("onnx_tile", _tile_shape, _tile_compute)


def onnx_tile(x, repeats):
    """Repeat ``x`` along each axis by the run-time ``repeats``."""
    return apply("onnx_tile", [to_var(x), to_var(repeats)])[0]
