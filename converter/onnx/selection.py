"""ONNX gather/scatter/arg handlers: Gather, GatherElements, GatherND, ScatterND,
ScatterElements, OneHot, ArgMax, ArgMin, TopK, Hardmax, Compress."""
import numpy as np

import mnn.express as F
from mnn.express.graph import apply
from mnn.express.ops.np_edit import put_along_axis

from .common import same_dtype_const
from .registry import onnx_op
from .tensor import flatten_2d


def _shape(ctx, var, what="input"):
    shape = ctx.known_shape(var)
    if shape is None:
        raise ctx.static_needed(f"the shape of the {what} must be known at conversion time")
    return shape


def _axis(ctx, axis, rank):
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


@onnx_op("Gather", since=1)
def gather(ctx, data, indices, axis=0):
    shape = ctx.partial_shape(data) or _shape(ctx, data)  # only the rank is used
    axis = _axis(ctx, axis, len(shape))
    picked = _static_shape_entries(ctx, data, indices) if axis == 0 else None
    if picked is not None:
        return picked
    return F.gather(data, indices, axis)


def _static_shape_entries(ctx, data, indices):
    """Constant entries of a run-time shape: when ``data`` is the shape of a tensor with
    dynamic dims (ONNX Shape: a cast of MNN's Shape op) and the constant ``indices`` pick
    only its static dims (``x.size(1)`` of a tensor with a dynamic batch), those dims as
    a constant, so conditions and sizes built from them fold (an ``If`` on a static dim
    keeps only its branch). None otherwise."""
    expr = data.expr
    if expr.op is None or expr.op.name != "cast" or data.dtype != np.int64:
        return None
    source = expr.inputs[0]
    if source.expr.op is None or source.expr.op.name != "shape":
        return None
    dims = ctx.partial_shape(source.expr.inputs[0])
    idx = ctx.value(indices)
    if dims is None or idx is None or idx.dtype.kind not in "iu":
        return None
    idx = np.asarray(idx, np.int64)
    if idx.size and (idx.min() < -len(dims) or idx.max() >= len(dims)):
        return None  # out of range: the Gather op names it
    picked = np.take(np.array(dims, np.int64), idx)
    if (picked < 0).any():
        return None
    return F.const(picked.astype(np.int64))


@onnx_op("GatherElements", since=11)
def gather_elements(ctx, data, indices, axis=0):
    shape = ctx.partial_shape(data) or _shape(ctx, data)
    axis = _axis(ctx, axis, len(shape))
    # Negative indices count from the end of the axis (ONNX); a dynamic axis's size is
    # read when the graph runs.
    if shape[axis] >= 0:
        dim = same_dtype_const(shape[axis], indices)
    else:
        dim = F.cast(F.gather(F.shape(data), F.const(np.array(axis)), 0), indices.dtype)
    fixed = F.select(F.less(indices, F.zeros_like(indices)), F.add(indices, dim), indices)
    return F.gather_elements(data, fixed, axis)


@onnx_op("GatherND", since=11)
def gather_nd(ctx, data, indices, batch_dims=0):
    if not batch_dims:
        return F.gather_nd(data, indices)
    # Leading batch dims: flatten them into one and address it with an extra leading
    # index component (the batch number), then restore the batch shape.
    ds, ix = ctx.known_shape(data), ctx.known_shape(indices)
    if ds is None or ix is None:
        return _gather_nd_batched_dynamic(ctx, data, indices, int(batch_dims))
    b = int(batch_dims)
    if not 0 < b < min(len(ds), len(ix)) or ds[:b] != ix[:b]:
        raise ctx.error(f"batch_dims {b} does not fit data {ds} and indices {ix}")
    k = ix[-1]
    if b + k > len(ds):
        raise ctx.error(f"indices address {k} dims of data {ds} after {b} batch dims")
    batch = int(np.prod(ds[:b]))
    mid = ix[b:-1]
    ids = np.broadcast_to(np.arange(batch).reshape([batch] + [1] * (len(mid) + 1)),
                          [batch] + mid + [1]).astype(indices.dtype)
    flat_idx = F.reshape(indices, [batch] + ix[b:])
    out = F.gather_nd(F.reshape(data, [batch] + ds[b:]), F.concat([F.const(ids), flat_idx],
                                                                  -1))
    return F.reshape(out, ds[:b] + mid + ds[b + k:])


def _gather_nd_batched_dynamic(ctx, data, indices, b):
    """GatherND with ``b`` batch dims on dynamic dims: as the static form (batch dims
    merged, the batch number as an extra leading index component), every size read from
    the run-time shapes. Needs the ranks and the index depth ``k``."""
    ds, ix = ctx.partial_shape(data), ctx.partial_shape(indices)
    if ds is None or ix is None or ix[-1] < 0:
        _shape(ctx, data)
        _shape(ctx, indices, "indices")
    k = ix[-1]
    if not 0 < b < min(len(ds), len(ix)) or b + k > len(ds):
        raise ctx.error(f"batch_dims {b} and indices of depth {k} do not fit data of rank "
                        f"{len(ds)} and indices of rank {len(ix)}")
    big = np.iinfo(np.int64).max

    def part(dims, start, stop):
        return F.onnx_slice(dims, _i64([start]), _i64([stop]))

    dd, di = F.cast(F.shape(data), np.int64), F.cast(F.shape(indices), np.int64)
    flat_data = F.onnx_reshape(data, F.concat([_i64([-1]), part(dd, b, big)], 0))
    flat_idx = F.onnx_reshape(F.cast(indices, np.int64),
                              F.concat([_i64([-1]), part(di, b, big)], 0))
    count = F.reshape(F.reduce_prod(part(dd, 0, b), [0], False), [])
    ids = F.reshape(F.range(_i64(0), count, _i64(1)), [-1] + [1] * (len(ix) - b))
    # The batch number beside every index tuple: broadcast against a zero column.
    column = F.onnx_slice(flat_idx, _i64([0]), _i64([1]), _i64([len(ix) - b]))
    ids = F.add(ids, F.multiply(column, _i64(0)))
    out = F.gather_nd(flat_data, F.concat([ids, flat_idx], len(ix) - b))
    target = F.concat([part(dd, 0, b), part(di, b, len(ix) - 1), part(dd, b + k, big)], 0)
    return F.onnx_reshape(out, target)


def _i64(values):
    return F.const(np.array(values, np.int64))


@onnx_op("ScatterND", since=11)
def scatter_nd(ctx, data, indices, updates, reduction="none"):
    shape = ctx.known_shape(data)
    indices, updates = _scatter_nd_layout(ctx, indices, updates)
    if reduction != "none" or shape is None:
        # Dynamic dims: MNN's ScatterNd into data, its shape read when the graph runs.
        return F.onnx_scatter_nd(data, indices, updates, reduction)
    # data where no index points, updates where one does (ONNX forbids repeats).
    placed = F.scatter_nd(indices, updates, shape)
    hit = F.scatter_nd(indices, F.cast(F.ones_like(updates), np.int32), shape)
    return F.select(F.greater(hit, F.zeros_like(hit)), placed, data)


def _scatter_nd_layout(ctx, indices, updates):
    """ScatterND's indices and updates with ``k - 1`` leading unit axes and the batch
    axes merged into one: ``(1, ..., 1, B, k)`` and ``(1, ..., 1, B, slice...)``, the same
    scatter. MNN's ScatterNd sizes each update slice by the updates' axes from ``k`` on,
    which is right only when indices has ``k + 1`` axes; this layout makes it so (ours
    reads either)."""
    ix, up = ctx.partial_shape(indices), ctx.partial_shape(updates)
    if ix is None or up is None or len(ix) < 1 or ix[-1] < 1:
        return indices, updates
    k, batch = ix[-1], len(ix) - 1
    if batch == k:
        return indices, updates
    lead = [1] * (k - 1)
    indices = F.reshape(indices, lead + [-1, k])
    tail = up[batch:]
    if all(d >= 0 for d in tail):
        return indices, F.reshape(updates, lead + [-1] + list(tail))
    dims = F.cast(F.shape(updates), np.int64)
    tail = F.onnx_slice(dims, F.const(np.array([batch], np.int64)),
                        F.const(np.array([np.iinfo(np.int64).max], np.int64)))
    target = F.concat([F.const(np.array(lead + [-1], np.int64)), tail], 0)
    return indices, F.onnx_reshape(updates, target)


@onnx_op("ScatterElements", since=11)
def scatter_elements(ctx, data, indices, updates, axis=0, reduction="none"):
    shape = ctx.known_shape(data) or ctx.partial_shape(data) or _shape(ctx, data)
    axis = _axis(ctx, axis, len(shape))
    # Negative indices count from the end of the axis; a dynamic axis's size is read
    # when the graph runs.
    if shape[axis] >= 0:
        dim = same_dtype_const(shape[axis], indices)
    else:
        dim = F.cast(F.gather(F.shape(data), F.const(np.array(axis)), 0), indices.dtype)
    idx = F.select(F.less(indices, F.zeros_like(indices)), F.add(indices, dim), indices)
    ix = ctx.known_shape(indices)
    static = ctx.known_shape(data) is not None
    # numpy's scatters broadcast the indices over the other axes of data; ONNX writes
    # only where indices has entries: those forms serve when the shapes agree there.
    whole = static and ix is not None and \
        all(i == d for k, (i, d) in enumerate(zip(ix, shape)) if k != axis)
    if reduction == "none" and whole:
        return put_along_axis(data, idx, updates, axis)
    if reduction == "add" and whole:
        added = apply("scatter_add_along_axis", [updates, idx], axis=axis,
                      shape=tuple(shape))[0]
        return F.add(data, added)
    return F.onnx_scatter_elements(data, idx, updates, axis, reduction)


@onnx_op("OneHot", since=9)
def one_hot(ctx, indices, depth, values, axis=-1):
    d = ctx.require_value(depth, "depth")
    vals = ctx.require_value(values, "values")
    d = int(np.asarray(d).reshape(-1)[0])
    off, on = (float(v) for v in np.asarray(vals).reshape(-1)[:2])
    # Negative indices count from the end (ONNX); values outside [-d, d) give all "off".
    idx = F.cast(indices, np.int64)
    idx = F.select(F.less(idx, F.zeros_like(idx)), F.add(idx, same_dtype_const(d, idx)), idx)
    out = F.one_hot(idx, d, on, off, axis)
    return F.cast(out, vals.dtype) if vals.dtype != np.float32 else out


def _arg(ctx, fn, data, axis, keepdims, select_last_index):
    shape = ctx.partial_shape(data) or _shape(ctx, data)
    axis = _axis(ctx, axis, len(shape))
    if select_last_index:
        # The last extreme is the first one of the reversed axis.
        if shape[axis] >= 0:
            last = F.const(np.array(shape[axis] - 1, np.int64))
        else:  # a dynamic axis: its size is read when the graph runs
            size = F.gather(F.cast(F.shape(data), np.int64), F.const(np.array(axis)), 0)
            last = F.subtract(size, F.const(np.array(1, np.int64)))
        rev = F.reverse(data, axis)
        idx = F.cast(fn(rev, axis, bool(keepdims)), np.int64)
        return F.subtract(last, idx)
    return F.cast(fn(data, axis, bool(keepdims)), np.int64)


@onnx_op("ArgMax", since=1)
def arg_max(ctx, data, axis=0, keepdims=1, select_last_index=0):
    return _arg(ctx, F.argmax, data, axis, keepdims, select_last_index)


@onnx_op("ArgMin", since=1)
def arg_min(ctx, data, axis=0, keepdims=1, select_last_index=0):
    return _arg(ctx, F.argmin, data, axis, keepdims, select_last_index)


@onnx_op("TopK", since=1, until=10)
def top_k_attr(ctx, X, axis=-1, k=None):
    """Opsets before 10 give k as an attribute (largest first, sorted)."""
    if k is None:
        raise ctx.error("attribute 'k' is required")
    return _top_k(ctx, X, int(k), axis, 1)


@onnx_op("TopK", since=10)
def top_k(ctx, X, K, axis=-1, largest=1, sorted=1):  # noqa: A002 - the spec's name
    k = int(np.asarray(ctx.require_value(K, "K")).reshape(-1)[0])
    return _top_k(ctx, X, k, axis, largest)


def _top_k(ctx, X, k, axis, largest):
    shape = _shape(ctx, X)
    axis = _axis(ctx, axis, len(shape))
    if not 0 <= k <= shape[axis]:
        raise ctx.error(f"K={k} is out of range for an axis of size {shape[axis]}")
    order = F.sort(X, axis, arg=True, descend=bool(largest))
    key = [slice(None)] * len(shape)
    key[axis] = slice(0, k)
    idx = order[tuple(key)]
    values = F.gather_elements(X, idx, axis)
    return values, F.cast(idx, np.int64)


@onnx_op("Hardmax", since=13)
def hardmax(ctx, input, axis=-1):
    # One where the first maximum along ``axis`` is: its position compared with the
    # positions 0 .. size - 1 of the axis (read when the graph runs when dynamic).
    shape = ctx.partial_shape(input) or _shape(ctx, input)
    axis = _axis(ctx, axis, len(shape))
    idx = F.argmax(input, axis, True)
    if shape[axis] >= 0:
        size = F.const(np.array(shape[axis], np.int32))
    else:
        size = F.cast(F.gather(F.shape(input), F.const(np.array(axis, np.int32)), 0),
                      np.int32)
    positions = F.range(F.const(np.array(0, np.int32)), size, F.const(np.array(1, np.int32)))
    positions = F.reshape(positions, [-1] + [1] * (len(shape) - 1 - axis))
    return F.cast(F.equal(F.cast(idx, np.int32), positions), input.dtype)


@onnx_op("Hardmax", since=1, until=13)
def hardmax_v1(ctx, input, axis=1):
    """Opsets before 13 flatten to 2-D at ``axis`` first."""
    shape = ctx.partial_shape(input) or _shape(ctx, input)
    axis = _axis(ctx, axis, len(shape))
    y = hardmax(ctx, flatten_2d(input, shape, axis), 1)
    if all(d >= 0 for d in shape):
        return F.reshape(y, shape)
    return F.onnx_reshape(y, F.cast(F.shape(input), np.int64))


@onnx_op("Compress", since=9)
def compress(ctx, input, condition, axis=None):
    """The slices where ``condition`` is true: a gather of the true positions (MNN's
    Where, then Gather), which takes run-time sizes; a shorter condition leaves the
    slices past its end out, as ONNX says."""
    cond = ctx.partial_shape(condition)
    if cond is not None and len(cond) != 1:
        raise ctx.error(f"condition must be 1-d, got shape {cond}")
    picked = F.reshape(F.where(F.cast(condition, np.bool_)), [-1])
    if axis is None:
        return F.gather(F.reshape(input, [-1]), picked, 0)
    shape = ctx.partial_shape(input) or _shape(ctx, input)
    return F.gather(input, picked, _axis(ctx, axis, len(shape)))


@onnx_op("NonZero", since=9)
def non_zero(ctx, X):
    value = ctx.value(X)
    if value is None:
        # The output shape depends on the data: the node runs once X is computed.
        raise ctx.static_needed("NonZero needs its input's values")
    return F.const(np.array(np.nonzero(value), dtype=np.int64))


@onnx_op("Scatter", since=9, until=11)
def scatter(ctx, data, indices, updates, axis=0):
    """The deprecated name of ScatterElements."""
    return scatter_elements(ctx, data, indices, updates, axis)


@onnx_op("TensorScatter", since=24)
def tensor_scatter(ctx, past_cache, update, write_indices=None, axis=-2, mode="linear"):
    if mode not in ("linear", "circular"):
        raise ctx.error(f"attribute 'mode' must be 'linear' or 'circular', got {mode!r}")
    return F.onnx_tensor_scatter(past_cache, update, write_indices, axis, mode)
