"""Samples of the indexing ops: strided_slice (+ its gradient op), index, index_add,
index_put. References index numpy arrays with the equivalent numpy key."""
import builtins

import numpy as np
from opdb_core import ALL_DTYPES, Sample, values

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _ss(begin, end, strides, **masks):
    attrs = {"begin": tuple(begin), "end": tuple(end), "strides": tuple(strides)}
    attrs.update({m: masks.get(m, 0) for m in MASKS})
    return attrs


def _ss_key(attrs):
    """The numpy key of a TensorFlow strided-slice spec, written from TF's definition."""
    key = []
    for i, (b, e, s) in enumerate(zip(attrs["begin"], attrs["end"], attrs["strides"])):
        bit = 1 << i
        if attrs["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif attrs["new_axis_mask"] & bit:
            key.append(None)
        elif attrs["shrink_axis_mask"] & bit:
            key.append(b)
        else:
            key.append(builtins.slice(None if attrs["begin_mask"] & bit else b,
                                      None if attrs["end_mask"] & bit else e, s))
    return tuple(key)


def _ss_ref(a, **attrs):
    return a[_ss_key(attrs)]


def _ssg_ref(g, shape, **attrs):
    out = np.zeros(shape, g.dtype)
    out[_ss_key(attrs)] = g
    return out


SS_CASES = [
    ((3, 5), _ss([1], [3], [1])),
    ((3, 5), _ss([0, 4], [0, 0], [1, -2], begin_mask=1, end_mask=3)),
    ((2, 3, 5), _ss([0, 1], [0, 2], [1, 1], ellipsis_mask=1, shrink_axis_mask=2)),
    ((2, 3, 5), _ss([0, 0, -1], [0, 0, 0], [1, 1, -1], new_axis_mask=2, begin_mask=1,
                    end_mask=5)),
    ((7,), _ss([-100], [100], [3])),
    ((1,), _ss([0], [1], [1], shrink_axis_mask=1)),
    ((3, 5), _ss([2, 1], [0, 4], [-1, 2])),
]

SAMPLES = {k: [] for k in ("strided_slice", "strided_slice_grad", "index", "index_add",
                           "index_put")}
for _dt in ALL_DTYPES:
    for _shape, _attrs in SS_CASES:
        _a = values(_shape, _dt)
        SAMPLES["strided_slice"].append(Sample([_a], _attrs, _ss_ref))
        _g = _ss_ref(_a, **_attrs)
        SAMPLES["strided_slice_grad"].append(
            Sample([_g], dict(_attrs, shape=_shape), _ssg_ref))


def _spec_key(spec, indices):
    key, it = [], iter(indices)
    for e in spec:
        if e[0] == "int":
            key.append(e[1])
        elif e[0] == "slice":
            key.append(builtins.slice(*e[1:]))
        elif e[0] == "none":
            key.append(None)
        elif e[0] == "ellipsis":
            key.append(Ellipsis)
        else:
            key.append(next(it))
    return tuple(key)


def _index_ref(a, *idx, spec):
    return a[_spec_key(spec, idx)]


def _index_add_ref(g, *idx, spec, shape):
    out = np.zeros(shape, g.dtype)
    np.add.at(out, _spec_key(spec, idx), g)
    return out


def _index_put_ref(a, v, *idx, spec):
    out = a.copy()
    out[_spec_key(spec, idx)] = v
    return out


_I = np.array
INDEX_CASES = [
    ((5,), (("array",),), [_I([4, 0, 0, -1])]),
    ((3, 5), (("slice", None, None, -1), ("array",)), [_I([[1, 2], [0, 4]], np.int32)]),
    ((3, 5), (("array",), ("array",)), [_I([0, 2]), _I([4])]),
    ((2, 3, 5), (("int", 1), ("slice", None, None, None), ("array",)), [_I([0, 3])]),
    ((2, 3, 5), (("mask",),), [values((2, 3), np.bool_)]),
    ((2, 3, 5), (("none",), ("ellipsis",), ("mask",)), [values((5,), np.bool_, seed=3)]),
    ((1,), (("array",),), [_I([0, 0, 0], np.int64)]),
    ((3,), (("array",),), [_I(1)]),
]
for _dt in ALL_DTYPES:
    for _shape, _spec, _idx in INDEX_CASES:
        _a = values(_shape, _dt)
        SAMPLES["index"].append(Sample([_a] + _idx, {"spec": _spec}, _index_ref))
        _target = _index_ref(_a, *_idx, spec=_spec)
        SAMPLES["index_put"].append(Sample([_a, values(_target.shape, _dt, seed=9)] + _idx,
                                           {"spec": _spec}, _index_put_ref))
        SAMPLES["index_put"].append(Sample([_a, values((), _dt, seed=9)] + _idx,
                                           {"spec": _spec}, _index_put_ref, note="scalar"))
        if np.dtype(_dt).kind != "b":
            SAMPLES["index_add"].append(
                Sample([values(_target.shape, _dt, seed=5)] + _idx,
                       {"spec": _spec, "shape": _shape}, _index_add_ref))

REJECTS = {
    "strided_slice": [Sample([np.zeros((3,), np.float32)], _ss([3], [4], [1], shrink_axis_mask=1),
                             note="shrink-out-of-range"),
                      Sample([np.zeros((3,), np.float32)], _ss([0], [3], [0]), note="zero-stride"),
                      Sample([np.zeros((3,), np.float32)], _ss([0, 0], [1, 1], [1, 1]),
                             note="too-many")],
    "index": [Sample([np.zeros((3,), np.float32), _I([3])], {"spec": (("array",),)}),
              Sample([np.zeros((3,), np.float32), _I([-4])], {"spec": (("array",),)}),
              Sample([np.zeros((3,), np.float32), _I([0.5])], {"spec": (("array",),)}),
              Sample([np.zeros((3,), np.float32), np.zeros(4, bool)], {"spec": (("mask",),)})],
    "index_put": [Sample([np.zeros((3,), np.float32), np.zeros(2, np.float32), _I([0, 1, 2])],
                         {"spec": (("array",),)})],
}


def _index_put_value_grad_ref(g, *idx, spec, shape):
    # Loop form of "only the last writer of a position gets its gradient".
    key = _spec_key(spec, idx)
    positions = np.arange(g.size).reshape(g.shape)[key]
    taken = np.zeros(positions.shape, bool)
    seen = set()
    flat = positions.reshape(-1)
    for j in range(flat.size - 1, -1, -1):
        if flat[j] not in seen:
            seen.add(flat[j])
            taken.reshape(-1)[j] = True
    picked = np.where(taken, g[key], 0).astype(g.dtype)
    while picked.ndim > len(shape):
        picked = picked.sum(axis=0)
    for axis, d in enumerate(shape):
        if d == 1 and picked.shape[axis] != 1:
            picked = picked.sum(axis=axis, keepdims=True)
    return picked.astype(g.dtype)


for _dt in (np.float32, np.float64, np.int32):
    for _shape, _spec, _idx in INDEX_CASES:
        _g = values(_shape, _dt, seed=11)
        _target = _index_ref(_g, *_idx, spec=_spec)
        for _vshape in {_target.shape, ()}:
            SAMPLES.setdefault("index_put_value_grad", []).append(
                Sample([_g] + _idx, {"spec": _spec, "shape": _vshape},
                       _index_put_value_grad_ref))
