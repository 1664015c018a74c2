"""Movement ops: reshape, transpose, broadcast, squeeze/unsqueeze, concat/split, stack.

These move or copy elements without arithmetic; their gradients move the gradient back.
"""
import math

import numpy as np

from ..dtypes import to_numpy_dtype
from ..errors import OpError
from ..formats import NCHW
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .reduce import normalize_axes

__all__ = ["reshape", "transpose", "broadcast_to", "squeeze", "unsqueeze", "expand_dims",
           "concat", "split", "stack", "unstack"]


def _axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise OpError(f"axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim if ndim else 0


# -- reshape ----------------------------------------------------------------------------

def _reshape_target(in_shape, shape, zero_copies):
    # math.prod (exact Python ints): numpy's prod costs microseconds per call, and a
    # reshape runs in every model
    size = math.prod(int(d) for d in in_shape)
    out = []
    for i, d in enumerate(shape):
        if d == 0 and zero_copies:
            if i >= len(in_shape):
                raise OpError(f"shape {list(shape)}: 0 at position {i} copies a dimension "
                              "the input does not have")
            d = in_shape[i]
        out.append(int(d))
    if out.count(-1) > 1:
        raise OpError(f"shape {list(shape)} has more than one -1")
    if any(d < -1 for d in out):
        raise OpError(f"shape {list(shape)} has a negative dimension")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or size % known:
            raise OpError(f"cannot reshape {size} elements into {list(shape)}")
        out[out.index(-1)] = size // known
    if math.prod(out) != size:
        raise OpError(f"cannot reshape {size} elements into {list(shape)}")
    return tuple(out)


def _reshape_infer(metas, shape, zero_copies):
    return [(_reshape_target(metas[0].shape, shape, zero_copies), metas[0].dtype)]


def _reshape_compute(arrays, shape, zero_copies):
    x = arrays[0]
    return x.reshape(_reshape_target(x.shape, shape, zero_copies))


def _reshape_grad(inputs, outputs, grads, shape, zero_copies):
    return [reshape(grads[0], inputs[0].shape, zero_copies=False)]


register(OpDef("reshape", _reshape_infer, _reshape_compute, _reshape_grad))


def reshape(x, shape, original_format=NCHW, zero_copies=True):
    """Give ``x`` a new shape with the same elements (MNN's ``reshape``).

    Parameters
    ----------
    x : Var or array_like
    shape : sequence of int
        One entry may be -1 (inferred). With ``zero_copies`` (MNN's and ONNX's rule) a 0
        copies the input's dimension at that position; numpy's rule is
        ``zero_copies=False``.
    original_format : data_format
        Accepted for pymnn compatibility; the logical layout is what is reshaped.
    """
    x = to_var(x)
    shape = tuple(int(d) for d in (shape.read().ravel() if hasattr(shape, "read")
                                   else np.atleast_1d(np.asarray(shape, dtype=np.int64))))
    if np.ndim(shape) == 0:
        shape = (int(shape),)
    return apply("reshape", [x], shape=shape, zero_copies=bool(zero_copies))[0]


# -- transpose --------------------------------------------------------------------------

def _check_perm(perm, ndim):
    if sorted(perm) != list(range(ndim)):
        raise OpError(f"perm {list(perm)} is not a permutation of {ndim} axes")


def _transpose_infer(metas, perm):
    shape = metas[0].shape
    _check_perm(perm, len(shape))
    return [(tuple(shape[p] for p in perm), metas[0].dtype)]


def _transpose_compute(arrays, perm):
    _check_perm(perm, arrays[0].ndim)
    return np.transpose(arrays[0], perm)


def _transpose_grad(inputs, outputs, grads, perm):
    return [transpose(grads[0], list(np.argsort(perm)))]


register(OpDef("transpose", _transpose_infer, _transpose_compute, _transpose_grad))


def transpose(x, perm=None):
    """Permute the axes of ``x`` (reverse them when ``perm`` is None)."""
    x = to_var(x)
    if perm is None:
        perm = list(range(x.ndim))[::-1]
    if hasattr(perm, "read"):
        perm = perm.read().ravel()
    perm = tuple(int(p) % max(x.ndim, 1) if int(p) < 0 else int(p) for p in perm)
    return apply("transpose", [x], perm=perm)[0]


# -- broadcast_to -----------------------------------------------------------------------

def _broadcast_target(in_shape, shape):
    try:
        return np.broadcast_shapes(tuple(in_shape), tuple(shape))
    except ValueError:
        raise OpError(f"cannot broadcast shape {list(in_shape)} to {list(shape)}") from None


def _broadcast_infer(metas, shape):
    return [(_broadcast_target(metas[0].shape, shape), metas[0].dtype)]


def _broadcast_compute(arrays, shape):
    x = arrays[0]
    return np.broadcast_to(x, _broadcast_target(x.shape, shape))


def _broadcast_grad(inputs, outputs, grads, shape):
    from .elementwise import _unbroadcast

    return [_unbroadcast(grads[0], inputs[0].shape)]


register(OpDef("broadcast_to", _broadcast_infer, _broadcast_compute, _broadcast_grad))


def broadcast_to(input, shape):  # noqa: A002 - MNN's argument name
    """Broadcast ``input`` to ``shape`` with numpy's rules (MNN's ``broadcast_to``; the
    result is the broadcast of both shapes, as MNN and ONNX Expand do)."""
    x = to_var(input)
    shape = tuple(int(d) for d in (shape.read().ravel() if hasattr(shape, "read")
                                   else np.atleast_1d(shape)))
    return apply("broadcast_to", [x], shape=shape)[0]


# -- squeeze / unsqueeze ----------------------------------------------------------------

def _squeeze_axes(shape, axes):
    if not axes:
        return tuple(i for i, d in enumerate(shape) if d == 1)
    axes = normalize_axes(axes, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise OpError(f"cannot squeeze axis {a} of size {shape[a]}")
    return axes


def _squeeze_infer(metas, axes):
    shape = metas[0].shape
    drop = _squeeze_axes(shape, axes)
    return [(tuple(d for i, d in enumerate(shape) if i not in drop), metas[0].dtype)]


def _squeeze_compute(arrays, axes):
    x = arrays[0]
    return np.squeeze(x, axis=_squeeze_axes(x.shape, axes))


def _reshape_back_grad(inputs, outputs, grads, **attrs):
    return [reshape(grads[0], inputs[0].shape, zero_copies=False)]


register(OpDef("squeeze", _squeeze_infer, _squeeze_compute, _reshape_back_grad))


def squeeze(x, axes=[]):  # noqa: B006 - MNN's default, never mutated
    """Drop size-1 axes (all of them when ``axes`` is empty)."""
    x = to_var(x)
    axes = tuple(int(a) for a in np.atleast_1d(axes)) if axes is not None else ()
    return apply("squeeze", [x], axes=axes)[0]


def _unsqueeze_shape(shape, axes):
    ndim = len(shape) + len(axes)
    axes = normalize_axes(axes, ndim)
    out, it = [], iter(shape)
    for i in range(ndim):
        out.append(1 if i in axes else next(it))
    return tuple(out)


def _unsqueeze_infer(metas, axes):
    return [(_unsqueeze_shape(metas[0].shape, axes), metas[0].dtype)]


def _unsqueeze_compute(arrays, axes):
    x = arrays[0]
    return x.reshape(_unsqueeze_shape(x.shape, axes))


register(OpDef("unsqueeze", _unsqueeze_infer, _unsqueeze_compute, _reshape_back_grad))


def unsqueeze(x, axes=[]):  # noqa: B006
    """Insert size-1 axes at ``axes`` (positions in the result)."""
    x = to_var(x)
    axes = tuple(int(a) for a in np.atleast_1d(axes))
    return apply("unsqueeze", [x], axes=axes)[0]


def expand_dims(x, axis):
    """Insert one size-1 axis at ``axis``."""
    return unsqueeze(x, [int(axis)])


# -- concat / split ---------------------------------------------------------------------

def _concat_infer(metas, axis):
    first = metas[0].shape
    ax = _axis(axis, len(first))
    total = 0
    for m in metas:
        if len(m.shape) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(m.shape, first)) if i != ax):
            raise OpError(f"all inputs must match except on axis {ax}")
        total += m.shape[ax]
    dtype = to_numpy_dtype(np.result_type(*[m.dtype for m in metas]))
    shape = list(first)
    shape[ax] = total
    return [(tuple(shape), dtype)]


def _concat_compute(arrays, axis):
    ax = _axis(axis, arrays[0].ndim)
    return np.concatenate(arrays, axis=ax, dtype=to_numpy_dtype(np.result_type(*arrays)))


def _concat_grad(inputs, outputs, grads, axis):
    ax = _axis(axis, inputs[0].ndim)
    sizes = [v.shape[ax] for v in inputs]
    parts = split(grads[0], sizes, ax)
    from .elementwise import cast

    return [cast(p, v.dtype) if p.dtype != v.dtype else p for p, v in zip(parts, inputs)]


register(OpDef("concat", _concat_infer, _concat_compute, _concat_grad))


def concat(values, axis):
    """Join ``values`` along ``axis`` (dtypes promote like numpy)."""
    values = [to_var(v) for v in values]
    if not values:
        raise OpError("concat: needs at least one input")
    return apply("concat", values, axis=int(axis))[0]


def _split_sizes(dim, size_splits):
    if len(size_splits) == 1:
        n = size_splits[0]
        if n <= 0 or dim % n:
            raise OpError(f"cannot split a dimension of {dim} into {n} equal parts")
        return [dim // n] * n
    if sum(size_splits) != dim or any(s < 0 for s in size_splits):
        raise OpError(f"split sizes {list(size_splits)} do not add up to {dim}")
    return list(size_splits)


def _split_infer(metas, sizes, axis):
    shape = metas[0].shape
    ax = _axis(axis, len(shape))
    out = []
    for s in _split_sizes(shape[ax], sizes):
        part = list(shape)
        part[ax] = s
        out.append((tuple(part), metas[0].dtype))
    return out


def _split_compute(arrays, sizes, axis):
    x = arrays[0]
    ax = _axis(axis, x.ndim)
    bounds = np.cumsum(_split_sizes(x.shape[ax], sizes))[:-1]
    return np.split(x, bounds, axis=ax)


def _split_grad(inputs, outputs, grads, sizes, axis):
    from .creation import zeros_like

    parts = [g if g is not None else zeros_like(o) for g, o in zip(grads, outputs)]
    return [concat(parts, axis)]


register(OpDef("split", _split_infer, _split_compute, _split_grad, n_outputs=-1))


def split(x, size_splits, axis):
    """Split ``x`` along ``axis``: ``[n]`` gives n equal parts, a longer list gives parts
    of those sizes."""
    x = to_var(x)
    sizes = tuple(int(s) for s in np.atleast_1d(size_splits))
    return apply("split", [x], sizes=sizes, axis=int(axis))


def stack(values, axis=0):
    """Join same-shaped ``values`` along a new axis."""
    values = [to_var(v) for v in values]
    if not values:
        raise OpError("stack: needs at least one input")
    ndim = values[0].ndim + 1
    ax = int(axis)
    if not -ndim <= ax < ndim:
        raise OpError(f"stack: axis {ax} is out of range for {ndim - 1}-d inputs")
    ax %= ndim
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) != 1:
        raise OpError(f"stack: inputs must have one shape, got {sorted(shapes)}")
    return concat([unsqueeze(v, [ax]) for v in values], ax)


def unstack(x, axis=0):
    """Split ``x`` into the slices along ``axis`` (the axis removed)."""
    x = to_var(x)
    ax = _axis(axis, x.ndim) if x.ndim else None
    if ax is None:
        raise OpError("unstack: needs at least a 1-d input")
    n = x.shape[ax]
    if n == 0:
        return []
    return [squeeze(p, [ax]) for p in split(x, [1] * n if n > 1 else [1], ax)]
