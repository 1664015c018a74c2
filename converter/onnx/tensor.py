"""ONNX shape and movement handlers: Reshape, Transpose, Slice, Gather, Concat, Split, ...

Inputs that ONNX passes as tensors but that fix a shape (Reshape's shape, Slice's starts,
Split's sizes ...) must be constants at conversion time: shape chains (Shape -> Gather ->
Concat -> Reshape) over static input shapes fold to constants through ``ctx.value``.
"""
import builtins

import numpy as np

import mnn.express as F
from mnn.express.ops.onnx_shape import slice_key

from .common import ints, onnx_type
from .registry import onnx_op


def _shape(ctx, var, what="input"):
    shape = ctx.known_shape(var)
    if shape is None:
        raise ctx.static_needed(f"the shape of the {what} must be known at conversion time")
    return shape


def _axis(ctx, axis, rank):
    axis = int(axis)
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


@onnx_op("Identity", since=1)
def identity(ctx, x):
    return x


@onnx_op("Dropout", since=1)
def dropout(ctx, data, ratio=None, training_mode=None, seed=None, is_test=0,
            consumed_inputs=None):
    """Inference form: the data passes through and the mask is all True."""
    if training_mode is not None:
        training = ctx.require_value(training_mode, "training_mode")
        rate = 0.5 if ratio is None or isinstance(ratio, float) else \
            float(ctx.require_value(ratio, "ratio"))
        if bool(training) and rate > 0.0:
            raise ctx.error("training-mode dropout draws random numbers; convert the "
                            "model in inference mode")
    mask = F.cast(F.ones_like(data), np.bool_)
    return data, mask


@onnx_op("Reshape", since=5)
def reshape(ctx, data, shape, allowzero=0):
    target = ctx.value(shape)
    if target is None or ctx.known_shape(data) is None:
        return F.onnx_reshape(data, shape, allowzero)
    return F.reshape(data, ints(target), zero_copies=not allowzero)


@onnx_op("Transpose", since=1)
def transpose(ctx, data, perm=None):
    return F.transpose(data, None if perm is None else list(perm))


@onnx_op("Flatten", since=1)
def flatten(ctx, x, axis=1):
    shape = ctx.partial_shape(x) or _shape(ctx, x)
    rank = len(shape)
    if not -rank <= axis <= rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    return flatten_2d(x, shape, axis)


def flatten_2d(x, shape, axis):
    """``x`` as (prod(dims before axis), prod(the rest)), given what is known of its
    ``shape``: sizes fixed at conversion time where one side is static, else read from
    the run-time shape (dynamic dims on both sides)."""
    outer, inner = shape[:axis], shape[axis:]
    if all(d >= 0 for d in inner):
        return F.reshape(x, [-1, int(np.prod(inner, dtype=np.int64))])
    if all(d >= 0 for d in outer):
        return F.reshape(x, [int(np.prod(outer, dtype=np.int64)), -1])
    dims = F.cast(F.shape(x), np.int64)
    head = F.onnx_slice(dims, F.const(np.array([0], np.int64)),
                        F.const(np.array([axis], np.int64)))
    return F.onnx_reshape(x, F.concat([F.reduce_prod(head, [0], True),
                                       F.const(np.array([-1], np.int64))], 0))


@onnx_op("Squeeze", since=1, until=13)
def squeeze_attr(ctx, data, axes=None):
    return _squeeze(ctx, data, axes)


@onnx_op("Squeeze", since=13)
def squeeze(ctx, data, axes=None):
    if axes is not None and ctx.value(axes) is None:
        return F.onnx_squeeze(data, axes)
    return _squeeze(ctx, data, None if axes is None else ints(ctx.value(axes)))


def _squeeze(ctx, data, axes):
    partial = ctx.partial_shape(data)
    if axes is not None and ctx.known_shape(data) is None:
        # Dynamic dims: the run-time form checks the squeezed sizes are 1 (and resolves
        # negative axes when the rank is not known yet).
        if partial is not None:
            axes = [_axis(ctx, a, len(partial)) for a in axes]
        return F.onnx_squeeze(data, F.const(np.array(axes, np.int64)))
    if axes is None and ctx.known_shape(data) is None:
        return _squeeze_unit_axes(data)
    shape = _shape(ctx, data)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    axes = [_axis(ctx, a, len(shape)) for a in axes]
    for a in axes:
        if shape[a] != 1:
            raise ctx.error(f"cannot squeeze axis {a} of size {shape[a]}")
    if not axes:
        return data
    return F.reshape(data, [d for i, d in enumerate(shape) if i not in axes])


def _squeeze_unit_axes(data):
    """Squeeze without axes of an input with dynamic dims: every axis of size 1 when the
    graph runs, a dynamic one included (ONNX's rule; MNN's Squeeze without dims does the
    same). What is known of the result's shape before running (its rank, for the nodes
    after it) takes the dynamic dims to be larger than 1, as the exporter's trace did;
    when one is 1 at run time the result has fewer axes, as in onnxruntime."""
    return F.squeeze(data, [])


@onnx_op("Unsqueeze", since=1, until=13)
def unsqueeze_attr(ctx, data, axes=None):
    return _unsqueeze(ctx, data, axes or [])


@onnx_op("Unsqueeze", since=13)
def unsqueeze(ctx, data, axes):
    if ctx.value(axes) is None:
        return F.onnx_unsqueeze(data, axes)
    return _unsqueeze(ctx, data, ints(ctx.value(axes)))


def _unsqueeze(ctx, data, axes):
    if ctx.known_shape(data) is None:
        # Dynamic dims (or a rank only run time knows): insert the axes when it runs.
        return F.onnx_unsqueeze(data, F.const(np.array(list(axes), np.int64)))
    shape = _shape(ctx, data)
    rank = len(shape) + len(axes)
    axes = sorted(_axis(ctx, a, rank) for a in axes)
    if len(set(axes)) != len(axes):
        raise ctx.error(f"axes {axes} repeat an axis")
    out = list(shape)
    for a in axes:
        out.insert(a, 1)
    if data.expr.kind == "const":
        # A constant stays a constant (shape chains: a Concat of it with run-time sizes
        # then keeps the values the shape inference tracks).
        return F.const(np.reshape(ctx.value(data), out))
    return F.reshape(data, out)


@onnx_op("Concat", since=4)
def concat(ctx, *inputs, axis=None):
    if axis is None:
        raise ctx.error("attribute 'axis' is required")
    return F.concat(list(inputs), axis)


@onnx_op("Split", since=2, until=13)
def split_attr(ctx, x, split=None, axis=0):
    return _split(ctx, x, split, axis, None)


@onnx_op("Split", since=13)
def split(ctx, x, split=None, axis=0, num_outputs=None):
    if split is not None and ctx.value(split) is None:
        return _dynamic_split(ctx, x, split, axis)
    sizes = None if split is None else ints(ctx.value(split))
    return _split(ctx, x, sizes, axis, num_outputs)


def _dynamic_split(ctx, x, split, axis):
    """Split by sizes known only at run time: output i is the slice between the running
    sums of ``split`` before and after entry i."""
    axes = F.const(np.array([axis], np.int64))
    split = F.cast(split, np.int64)
    outs = []
    for i in range(len(ctx.node.output)):
        start = _prefix_sum(split, i)
        end = _prefix_sum(split, i + 1)
        outs.append(F.onnx_slice(x, start, end, axes))
    return outs


def _split(ctx, x, sizes, axis, num_outputs):
    # Only the rank must be static (a dynamic split axis: slices with run-time or
    # constant bounds).
    shape = ctx.partial_shape(x) or _shape(ctx, x)
    axis = _axis(ctx, axis, len(shape))
    n = num_outputs or len(ctx.node.output)
    if shape[axis] < 0 and sizes is None:
        return _split_dynamic_axis(x, axis, n)
    if shape[axis] < 0:
        if any(s < 0 for s in sizes):
            raise ctx.error(f"split sizes {sizes} must not be negative")
        return _split_sizes_dynamic_axis(x, axis, sizes)
    dim = shape[axis]
    if sizes is None:
        # Equal parts; with num_outputs the last may be smaller (ceil division).
        step = -(-dim // n)
        sizes = [min(step, dim - i * step) for i in range(n)]
    if sum(sizes) != dim or any(s < 0 for s in sizes):
        raise ctx.error(f"split sizes {sizes} do not add up to dimension {dim}")
    if len(sizes) == 1:
        return [x]
    if all(s > 0 for s in sizes):
        return F.split(x, sizes, axis)
    # Empty parts: one static slice each (split ops have no empty parts).
    outs, start = [], 0
    for s in sizes:
        key = (builtins.slice(None),) * axis + (builtins.slice(start, start + s),)
        outs.append(x[key])
        start += s
    return outs


def _split_dynamic_axis(x, axis, n):
    """``n`` parts of a dynamic axis: ``ceil(size / n)`` long each, the last one shorter
    when ``n`` does not divide the size (ONNX's num_outputs rule; an equal split
    otherwise), as slices whose bounds are computed when the graph runs (Slice clamps
    them to the axis)."""
    size = F.gather(F.cast(F.shape(x), np.int64), F.const(np.array([axis], np.int32)), 0)
    step = F.floordiv(F.add(size, _i64([n - 1])), _i64([n]))
    axes = _i64([axis])
    outs = []
    for i in range(n):
        start = F.multiply(step, _i64([i]))
        end = F.multiply(step, _i64([i + 1])) if i < n - 1 else _i64([np.iinfo(np.int64).max])
        outs.append(F.onnx_slice(x, start, end, axes))
    return outs


def _split_sizes_dynamic_axis(x, axis, sizes):
    """Constant ``sizes`` along a dynamic axis: slices with constant bounds, the last one
    to the end. The axis must hold ``sum(sizes)`` when the graph runs (onnxruntime
    refuses other sizes): x is first reshaped to its run-time shape with that axis pinned
    to the sum, so another size fails that Reshape (in our runtime and the real wheel)
    rather than giving parts of the wrong size."""
    big = np.iinfo(np.int64).max
    total = int(sum(sizes))
    if total > 0:
        # (A zero in an ONNX Reshape shape copies the input's dim: nothing to pin then.)
        dims = F.cast(F.shape(x), np.int64)
        pinned = F.concat([F.onnx_slice(dims, _i64([0]), _i64([axis])), _i64([total]),
                           F.onnx_slice(dims, _i64([axis + 1]), _i64([big]))], 0)
        x = F.onnx_reshape(x, pinned)
    outs, start = [], 0
    for i, size in enumerate(sizes):
        end = big if i == len(sizes) - 1 else start + size
        outs.append(F.onnx_slice(x, _i64([start]), _i64([end]), _i64([axis])))
        start += size
    return outs


def _i64(values):
    return F.const(np.array(values, np.int64))


def _prefix_sum(sizes, count):
    """Sum of the first ``count`` entries of the 1-d tensor ``sizes``, as a 1-element Var."""
    if count == 0:
        return F.const(np.zeros(1, np.int64))
    head = F.onnx_slice(sizes, F.const(np.array([0], np.int64)),
                        F.const(np.array([count], np.int64)))
    return F.reduce_sum(head, [0], True)


@onnx_op("Expand", since=8)
def expand(ctx, x, shape):
    if ctx.value(shape) is None or ctx.known_shape(x) is None:
        return F.onnx_expand(x, shape)
    target = ints(ctx.value(shape))
    try:
        out = np.broadcast_shapes(tuple(_shape(ctx, x)), tuple(target))
    except ValueError:
        raise ctx.error(f"shape {target} does not broadcast with {_shape(ctx, x)}") from None
    return F.broadcast_to(x, list(out))


@onnx_op("Shape", since=1)
def shape(ctx, data, start=0, end=None):
    dims = ctx.partial_shape(data)
    if dims is None:
        dims = _shape(ctx, data)
    picked = dims[builtins.slice(start, end)]
    if all(d >= 0 for d in picked):
        return F.const(np.array(picked, dtype=np.int64))
    # Dynamic input dims: the shape is read when the graph runs (MNN's Shape op).
    rank = len(dims)
    first, stop = builtins.slice(start, end).indices(rank)[:2]
    y = F.cast(F.shape(data), np.int64)
    if (first, stop) == (0, rank):
        return y
    return F.onnx_slice(y, F.const(np.array([first], np.int64)),
                        F.const(np.array([max(stop, first)], np.int64)))


@onnx_op("Size", since=1)
def size(ctx, data):
    shape = ctx.known_shape(data)
    if shape is None:
        # Dynamic dims: the product of the shape read when the graph runs.
        return F.reduce_prod(F.cast(F.shape(data), np.int64), [0], False)
    return F.const(np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64))


@onnx_op("ConstantOfShape", since=9)
def constant_of_shape(ctx, input, value=None):
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    dtype = F.dtypes.to_numpy_dtype(fill.dtype)
    dims = ctx.value(input)
    if dims is None:
        return F.onnx_constant_of_shape(input, fill[0].item(), dtype)
    return F.const(np.full(ints(dims), fill[0], dtype=dtype))


@onnx_op("Constant", since=1)
def constant(ctx, value=None, value_float=None, value_floats=None, value_int=None,
             value_ints=None, sparse_value=None, value_string=None, value_strings=None):
    if value is not None:
        arr = np.asarray(value)
    elif sparse_value is not None:
        arr = np.asarray(sparse_value)
    elif value_float is not None:
        arr = np.array(value_float, np.float32)
    elif value_floats is not None:
        arr = np.array(value_floats, np.float32)
    elif value_int is not None:
        arr = np.array(value_int, np.int64)
    elif value_ints is not None:
        arr = np.array(value_ints, np.int64)
    else:
        raise ctx.error("needs a numeric value attribute (strings are not supported)")
    return F.const(np.asarray(arr, dtype=F.dtypes.to_numpy_dtype(arr.dtype)))


@onnx_op("Range", since=11)
def range_(ctx, start, limit, delta):
    values = [ctx.value(v) for v in (start, limit, delta)]
    if all(v is not None for v in values):
        s, lim, d = (np.asarray(v).reshape(()) for v in values)
        if d == 0:
            raise ctx.error("delta is 0")
        n = max(int(np.ceil((lim - s) / d)), 0)
        return F.const((s + np.arange(n, dtype=s.dtype) * d).astype(s.dtype))
    return F.range(start, limit, delta)


@onnx_op("Slice", since=1, until=10)
def slice_attr(ctx, data, starts=None, ends=None, axes=None):
    if starts is None or ends is None:
        raise ctx.error("attributes 'starts' and 'ends' are required")
    params = [starts, ends] + ([axes] if axes is not None else [])
    return _slice(ctx, data, [F.const(np.array(p, np.int64)) for p in params] + [None] * (4 - len(params)))


@onnx_op("Slice", since=10)
def slice_(ctx, data, starts, ends, axes=None, steps=None):
    if steps is not None and axes is None:
        count = ctx.known_shape(starts)
        if count is None:
            raise ctx.error("the length of 'starts' must be known")
        axes = F.const(np.arange(count[0], dtype=np.int64))
    return _slice(ctx, data, [starts, ends, axes, steps])


def _slice(ctx, data, params):
    """A strided_slice when the parameters and the input shape are known at conversion
    time, else one ``onnx_slice`` op that reads them at run time."""
    shape = ctx.known_shape(data)
    values = [None if p is None else ctx.value(p) for p in params]
    if shape is not None and all(v is not None for v, p in zip(values, params) if p is not None):
        key = slice_key(shape, *values)
        return F.strided_slice(data, *_key_to_ranges(key, shape))
    return F.onnx_slice(data, *[_folded(ctx, v) for v in params])


def _key_to_ranges(key, shape):
    """begin, end, strides, begin_mask, end_mask of a key of slices (None ends: masks)."""
    begin, end, strides, end_mask = [], [], [], 0
    for i, k in enumerate(key):
        start, stop, step = k.indices(shape[i])
        if k.stop is None:
            end_mask |= 1 << i
            stop = 0
        begin.append(start), end.append(stop), strides.append(step)
    return begin, end, strides, 0, end_mask


def _folded(ctx, var):
    """``var`` as a constant when its value is known at conversion time."""
    if var is None:
        return None
    value = ctx.value(var)
    return var if value is None or var.expr.kind == "const" else F.const(value)


@onnx_op("Tile", since=6)
def tile(ctx, x, repeats):
    if ctx.value(repeats) is None or ctx.known_shape(x) is None:
        return F.onnx_tile(x, repeats)
    reps = ints(ctx.value(repeats))
    shape = _shape(ctx, x)
    if len(reps) != len(shape):
        raise ctx.error(f"repeats {reps} need one entry per axis of shape {shape}")
    # np.tile lays the copies out as [r0, d0, r1, d1, ...]: broadcast a (1, d0, 1, d1, ...)
    # view and merge each pair.
    spread = []
    for d in shape:
        spread += [1, d]
    target = []
    for r, d in zip(reps, shape):
        target += [r, d]
    out = F.broadcast_to(F.reshape(x, spread), target)
    return F.reshape(out, [r * d for r, d in zip(reps, shape)])


@onnx_op("EyeLike", since=9)
def eye_like(ctx, input, dtype=None, k=0):
    out_dtype = input.dtype if dtype is None else onnx_type(ctx, dtype)
    shape = ctx.known_shape(input)
    if shape is not None:
        if len(shape) != 2:
            raise ctx.error(f"the input must be 2-d, got shape {shape}")
        rows, cols = shape
        return F.const(np.eye(rows, cols, k=k, dtype=out_dtype))
    partial = ctx.partial_shape(input)
    if partial is not None and len(partial) != 2:
        raise ctx.error(f"the input must be 2-d, got rank {len(partial)}")
    # Dynamic dims: ones where column - row == k, the sizes read when the graph runs.
    dims = F.cast(F.shape(input), np.int32)
    zero, one = F.const(np.array(0, np.int32)), F.const(np.array(1, np.int32))

    def positions(i, shape):
        size = F.gather(dims, F.const(np.array(i, np.int32)), 0)
        return F.reshape(F.range(zero, size, one), shape)
    diagonal = F.equal(F.subtract(positions(1, [1, -1]), positions(0, [-1, 1])),
                       F.const(np.array(int(k), np.int32)))
    return F.cast(diagonal, out_dtype)
