"""numpy advanced indexing as ops: ``index`` (x[key]), ``index_put`` (x[key] = v) and
``index_add`` (the gradient of ``index``: scatter-add into zeros).

The key is an attribute ``spec``: a tuple with one entry per item of the numpy key,
``("int", i)``, ``("slice", start, stop, step)``, ``("none",)``, ``("ellipsis",)``,
``("array",)`` or ``("mask",)``. Each ``array``/``mask`` entry takes the next index input
(an integer or bool tensor). Shapes follow numpy's rules, including its quirks: with any
array in the key, plain ints act as 0-d index arrays, and the indexed axes move to the
front when the array entries are not next to each other in the key.

Index values are checked against the axis sizes before numpy sees them, so an
out-of-range index is an :class:`OpError` naming the op, never a read outside the array.
"""
import builtins

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register

__all__ = []  # reached through Var indexing (mnn/express/indexing.py)


def spec_to_key(spec, indices):
    """The numpy key for ``spec`` with ``indices`` (arrays) filled in."""
    key, it = [], iter(indices)
    for entry in spec:
        kind = entry[0]
        if kind == "int":
            key.append(entry[1])
        elif kind == "slice":
            key.append(builtins.slice(entry[1], entry[2], entry[3]))
        elif kind == "none":
            key.append(None)
        elif kind == "ellipsis":
            key.append(Ellipsis)
        else:
            key.append(next(it))
    return tuple(key)


def _consumed(entry, meta):
    kind = entry[0]
    if kind in ("int", "slice", "array"):
        return 1
    if kind == "mask":
        return len(meta.shape)
    return 0


def index_shape(shape, spec, metas):
    """Output shape of ``x[key]`` by numpy's rules, or None when a mask value is unknown.

    ``metas`` holds one TensorMeta per array/mask entry. Raises OpError for too many
    indices, out-of-range ints or index values, mismatched masks and index arrays that
    do not broadcast.
    """
    shape = tuple(shape)
    metas = list(metas)
    per_entry = []  # meta for array/mask entries, None otherwise
    it = iter(metas)
    for entry in spec:
        per_entry.append(next(it) if entry[0] in ("array", "mask") else None)
    if sum(1 for e in spec if e[0] == "ellipsis") > 1:
        raise OpError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(e, m) for e, m in zip(spec, per_entry))
    if consumed > len(shape):
        raise OpError(f"too many indices: the key indexes {consumed} axes of a "
                      f"{len(shape)}-d input")
    advanced_mode = any(e[0] in ("array", "mask") for e in spec)
    groups = []  # (position in key, broadcast shape of this advanced entry)
    basic_before, basic_after, basic_all = [], [], []
    dim, unknown = 0, False
    for pos, (entry, meta) in enumerate(zip(spec, per_entry)):
        kind = entry[0]
        if kind == "ellipsis":
            n = len(shape) - consumed
            dims = list(shape[dim:dim + n])
            dim += n
            _basic(dims, groups, basic_before, basic_after, basic_all)
        elif kind == "none":
            _basic([1], groups, basic_before, basic_after, basic_all)
        elif kind == "slice":
            size = len(range(*builtins.slice(entry[1], entry[2], entry[3]).indices(shape[dim])))
            dim += 1
            _basic([size], groups, basic_before, basic_after, basic_all)
        elif kind == "int":
            size = shape[dim]
            if not -size <= entry[1] < size:
                raise OpError(f"index {entry[1]} is out of range for axis {dim} of size {size}")
            dim += 1
            if advanced_mode:
                groups.append((pos, ()))
        elif kind == "array":
            _check_array(meta, shape[dim], dim)
            dim += 1
            groups.append((pos, tuple(meta.shape)))
        else:  # mask
            k = len(meta.shape)
            covered = shape[dim:dim + k]
            if tuple(meta.shape) != tuple(covered):
                raise OpError(f"boolean mask of shape {list(meta.shape)} does not match the "
                              f"indexed axes {list(covered)} (axes {dim}..{dim + k - 1})")
            dim += k
            if meta.value is None:
                unknown = True
                groups.append((pos, (0,)))
            else:
                groups.append((pos, (int(np.count_nonzero(meta.value)),)))
    rest = list(shape[dim:])
    _basic(rest, groups, basic_before, basic_after, basic_all)
    if not groups:
        return tuple(basic_all)
    try:
        bshape = np.broadcast_shapes(*[g[1] for g in groups])
    except ValueError:
        raise OpError("index arrays of shapes " + ", ".join(str(list(g[1])) for g in groups)
                      + " cannot be broadcast together") from None
    if unknown:
        return None
    positions = [g[0] for g in groups]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    if adjacent:
        return tuple(basic_before) + tuple(bshape) + tuple(basic_after)
    return tuple(bshape) + tuple(basic_all)


def _basic(dims, groups, before, after, every):
    (after if groups else before).extend(dims)
    every.extend(dims)


def _check_array(meta, size, dim):
    if meta.dtype.kind not in "iu":
        raise OpError(f"index arrays must be integers or bools, got {meta.dtype}")
    if meta.value is not None and meta.value.size:
        lo, hi = int(meta.value.min()), int(meta.value.max())
        if lo < -size or hi >= size:
            bad = lo if lo < -size else hi
            raise OpError(f"index {bad} is out of range for axis {dim} of size {size}")


def _checked_key(x_shape, spec, indices):
    from ..optable import TensorMeta

    index_shape(x_shape, spec, [TensorMeta(a.shape, a.dtype, a) for a in indices])
    return spec_to_key(spec, indices)


# -- index: y = x[key] --------------------------------------------------------------------

def _index_infer(metas, spec):
    return [(index_shape(metas[0].shape, spec, metas[1:]), metas[0].dtype)]


def _index_compute(arrays, spec):
    x = arrays[0]
    return x[_checked_key(x.shape, spec, arrays[1:])]


def _index_grad(inputs, outputs, grads, spec):
    x = inputs[0]
    g = apply("index_add", [grads[0]] + list(inputs[1:]), spec=spec,
              shape=tuple(x.shape))[0]
    return [g] + [None] * (len(inputs) - 1)


register(OpDef("index", _index_infer, _index_compute, _index_grad))


# -- index_add: zeros(shape) with g added at x[key] (repeated indices accumulate) --------

def _index_add_infer(metas, spec, shape):
    want = index_shape(shape, spec, metas[1:])
    if want is not None and tuple(metas[0].shape) != tuple(want):
        raise OpError(f"values of shape {list(metas[0].shape)} do not match the indexed "
                      f"shape {list(want)}")
    return [(shape, metas[0].dtype)]


def _index_add_compute(arrays, spec, shape):
    out = np.zeros(shape, arrays[0].dtype)
    np.add.at(out, _checked_key(shape, spec, arrays[1:]), arrays[0])
    return out


def _index_add_grad(inputs, outputs, grads, spec, shape):
    g = apply("index", [grads[0]] + list(inputs[1:]), spec=spec)[0]
    return [g] + [None] * (len(inputs) - 1)


register(OpDef("index_add", _index_add_infer, _index_add_compute, _index_add_grad))


# -- index_put: copy of x with x[key] = v (numpy assignment: v broadcasts and is cast to
# x's dtype with numpy's unsafe casting, as ``ndarray.__setitem__`` does) ---------------

def _index_put_infer(metas, spec):
    x, v = metas[0], metas[1]
    target = index_shape(x.shape, spec, metas[2:])
    if target is not None:
        try:
            if np.broadcast_shapes(tuple(v.shape), tuple(target)) != tuple(target):
                raise ValueError
        except ValueError:
            raise OpError(f"value of shape {list(v.shape)} cannot be broadcast to the "
                          f"indexed shape {list(target)}") from None
    return [(x.shape, x.dtype)]


def _index_put_compute(arrays, spec):
    x, v = arrays[0], arrays[1]
    key = _checked_key(x.shape, spec, arrays[2:])
    target = x[key].shape
    try:
        np.broadcast_to(v, target)
    except ValueError:
        raise OpError(f"value of shape {list(v.shape)} cannot be broadcast to the indexed "
                      f"shape {list(target)}") from None
    out = np.array(x, copy=True)
    out[key] = v
    return out


def _index_put_grad(inputs, outputs, grads, spec):
    from .creation import zeros_like
    from .elementwise import cast

    v = inputs[1]
    idx = list(inputs[2:])
    g = grads[0]
    gx = apply("index_put", [g, zeros_like(v) if v.dtype == g.dtype
                             else cast(zeros_like(v), g.dtype)] + idx, spec=spec)[0]
    gv = apply("index_put_value_grad", [g] + idx, spec=spec, shape=tuple(v.shape))[0]
    if gv.dtype != v.dtype:
        gv = cast(gv, v.dtype)
    return [gx, gv] + [None] * len(idx)


register(OpDef("index_put", _index_put_infer, _index_put_compute, _index_put_grad))


# -- index_put_value_grad: the gradient reaching the assigned values ---------------------------
# Each written position takes the value assigned last (numpy), so only the last writer
# of a position receives its gradient; then broadcasting of the value is undone.

def _last_writers(shape, key):
    """Bool mask over ``x[key]``'s shape: True where that element is the last written to
    its position by ``x[key] = ...``."""
    target_shape = np.empty(shape, np.int8)[key].shape
    ids = np.arange(int(np.prod(target_shape, dtype=np.int64))).reshape(target_shape)
    canvas = np.full(shape, -1, np.int64)
    canvas[key] = ids
    return canvas[key] == ids


def _sum_to_shape(g, shape):
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def _ipvg_infer(metas, spec, shape):
    g = metas[0]
    target = index_shape(g.shape, spec, metas[1:])
    if target is not None:
        try:
            ok = np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
        except ValueError:
            ok = False
        if not ok:
            raise OpError(f"values of shape {list(shape)} do not broadcast to the indexed "
                          f"shape {list(target)}")
    return [(tuple(shape), g.dtype)]


def _ipvg_compute(arrays, spec, shape):
    g = arrays[0]
    key = _checked_key(g.shape, spec, arrays[1:])
    picked = np.where(_last_writers(g.shape, key), g[key], np.zeros((), g.dtype))
    return _sum_to_shape(picked, tuple(shape)).astype(g.dtype, copy=False)


def _ipvg_grad(inputs, outputs, grads, spec, shape):
    # The map g -> (last writer's g, summed back to v's shape) is linear; its adjoint
    # writes h, broadcast, at the key into zeros with the last writer winning: index_put.
    from .creation import zeros_like
    from .elementwise import cast

    g, h = inputs[0], grads[0]
    h = cast(h, g.dtype) if h.dtype != g.dtype else h
    return [apply("index_put", [zeros_like(g), h] + list(inputs[1:]), spec=spec)[0]] + \
        [None] * (len(inputs) - 1)


register(OpDef("index_put_value_grad", _ipvg_infer, _ipvg_compute, _ipvg_grad))
