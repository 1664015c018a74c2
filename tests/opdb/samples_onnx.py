"""Samples of the converter's ONNX-only primitives (mnn/express/ops/onnx_math.py and
onnx_shape.py). References are written from the ONNX spec with plain Python/numpy, element
by element where the op has C semantics (truncating division, fmod, shifts).
"""
import math

import numpy as np
from opdb_core import FLOAT_DTYPES, Sample, values

_SIGNED = (np.int32, np.int64, np.int8)


def _i64(*v):
    return np.array(v, dtype=np.int64)


# -- onnx_math ----------------------------------------------------------------------------

def _trunc_div_ref(a, b):
    a2, b2 = np.broadcast_arrays(a, b)
    out = [int(x / y) if y else 0 for x, y in zip(a2.ravel().tolist(), b2.ravel().tolist())]
    # int(x / y) truncates toward zero; exact for the small values used here.
    return np.array(out, dtype=a.dtype).reshape(a2.shape)


def _fmod_ref(a, b):
    a2, b2 = np.broadcast_arrays(a, b)
    out = [math.fmod(x, y) for x, y in zip(a2.ravel().tolist(), b2.ravel().tolist())]
    return np.array(out, dtype=np.float64).astype(a.dtype).reshape(a2.shape)


def _shift_ref(a, b, direction):
    a2, b2 = np.broadcast_arrays(a, b)
    bits = a.dtype.itemsize * 8
    out = []
    for x, s in zip(a2.ravel().tolist(), b2.ravel().tolist()):
        if s >= bits or s < 0:
            out.append(-1 if direction == "RIGHT" and x < 0 else 0)
        elif direction == "LEFT":
            out.append((x << s) % (1 << bits))
        else:
            out.append(x >> s)
    return np.array(out, dtype=a.dtype).reshape(a2.shape)


def _mixed(shape, dtype, seed):
    return values(shape, dtype, -20, 20, seed=seed)


def _divisor(shape, dtype, seed):
    v = values(shape, dtype, 1, 7, seed=seed)
    sign = np.where(values(shape, np.int32, 0, 2, seed=seed + 1) > 0, 1, -1)
    return (v * sign.astype(dtype)).astype(dtype)


SAMPLES = {
    "onnx_trunc_div": [
        Sample([_mixed((3, 5), dt, 1), _divisor((3, 5), dt, 2)], {}, _trunc_div_ref,
               note="mixed signs") for dt in _SIGNED
    ] + [
        Sample([_mixed((2, 3, 4), np.int32, 3), _divisor((4,), np.int32, 4)], {},
               _trunc_div_ref, note="broadcast"),
        Sample([np.array(-7, np.int64), np.array(2, np.int64)], {}, _trunc_div_ref,
               note="scalar"),
        Sample([values((1,), np.uint8, 0, 200), np.array([3], np.uint8)], {},
               _trunc_div_ref, note="unsigned"),
    ],
    "onnx_fmod": [
        Sample([_mixed((3, 5), dt, 5), _divisor((3, 5), dt, 6)], {}, _fmod_ref,
               note="ints") for dt in _SIGNED
    ] + [
        Sample([values((4, 3), dt, -9, 9, seed=7), values((3,), dt, 0.5, 3, seed=8)], {},
               _fmod_ref, note="floats") for dt in FLOAT_DTYPES
    ] + [Sample([np.array(-5.5, np.float32), np.array(2.0, np.float32)], {}, _fmod_ref,
                note="scalar")],
    "onnx_bit_shift": [
        Sample([values((2, 5), dt, 0, 60, seed=9), values((5,), dt, 0, 4, seed=10)],
               {"direction": d}, _shift_ref, note=d)
        for dt in (np.uint8, np.int32, np.int64) for d in ("LEFT", "RIGHT")
    ] + [Sample([np.array([16, 16], np.uint8), np.array([8, 9], np.uint8)],
                {"direction": "LEFT"}, _shift_ref, note="width or more gives 0"),
         Sample([np.array([-8, 4, -1], np.int8), np.array([8, -1, 100], np.int8)],
                {"direction": "RIGHT"}, _shift_ref, note="signed, out of range")],
}


# -- onnx_shape ---------------------------------------------------------------------------

def _reshape_ref(x, shape, allowzero):
    dims = [x.shape[i] if d == 0 and not allowzero else d for i, d in enumerate(shape)]
    return x.reshape(dims)


def _expand_ref(x, shape):
    return x * np.ones(tuple(shape), dtype=x.dtype) if x.dtype != np.bool_ else \
        np.logical_and(x, np.ones(tuple(shape), dtype=bool))


def _cos_ref(shape, value, dtype):
    return np.full(tuple(int(d) for d in shape), value, dtype=dtype)


def _reduce_ref(x, axes, mode, keepdims, noop_with_empty_axes):
    axes = tuple(int(a) % x.ndim for a in axes) if len(axes) else tuple(range(x.ndim))
    f = x.astype(np.float64)
    table = {
        "sum": lambda: np.add.reduce(f, axis=axes, keepdims=bool(keepdims)),
        "mean": lambda: np.add.reduce(f, axis=axes, keepdims=bool(keepdims))
        / np.prod([x.shape[a] for a in axes]),
        "max": lambda: np.maximum.reduce(f, axis=axes, keepdims=bool(keepdims)),
        "min": lambda: np.minimum.reduce(f, axis=axes, keepdims=bool(keepdims)),
        "prod": lambda: np.multiply.reduce(f, axis=axes, keepdims=bool(keepdims)),
        "l1": lambda: np.add.reduce(np.abs(f), axis=axes, keepdims=bool(keepdims)),
        "l2": lambda: np.sqrt(np.add.reduce(f * f, axis=axes, keepdims=bool(keepdims))),
        "sum_square": lambda: np.add.reduce(f * f, axis=axes, keepdims=bool(keepdims)),
        "log_sum": lambda: np.log(np.add.reduce(f, axis=axes, keepdims=bool(keepdims))),
        "log_sum_exp": lambda: np.log(np.add.reduce(np.exp(f), axis=axes,
                                                    keepdims=bool(keepdims))),
    }
    return table[mode]().astype(x.dtype)


def _slice_ref(x, starts, ends, axes=None, steps=None):
    # Python slices clamp like ONNX except a negative-step end below -dim: use None.
    key = [slice(None)] * x.ndim
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        if st < 0 and e < -dim:
            e = None
        key[int(a)] = slice(int(s), None if e is None else int(e), int(st))
    return x[tuple(key)]


def _squeeze_ref(x, axes):
    return np.squeeze(x, axis=tuple(int(a) for a in axes))


def _unsqueeze_ref(x, axes):
    return np.expand_dims(x, axis=tuple(int(a) for a in axes))


def _tile_ref(x, repeats):
    return np.tile(x, tuple(int(r) for r in repeats))


_F = values((2, 3, 4), np.float32, 0.5, 2.0, seed=11)

SAMPLES.update({
    "onnx_reshape": [
        Sample([_F, _i64(4, 0, -1)], {"allowzero": 0}, _reshape_ref, note="0 copies"),
        Sample([values((0, 3), np.float64), _i64(3, 0)], {"allowzero": 1}, _reshape_ref,
               note="allowzero"),
        Sample([values((6,), np.int32), _i64(2, 3)], {"allowzero": 0}, _reshape_ref),
        Sample([np.array(5, np.int64), _i64(1, 1)], {"allowzero": 0}, _reshape_ref,
               note="scalar"),
    ],
    "onnx_expand": [
        Sample([values((3, 1), dt, seed=12), _i64(2, 3, 4)], {}, _expand_ref)
        for dt in (np.float32, np.int64, np.uint8, np.bool_)
    ] + [Sample([values((3, 4), np.float32), _i64(1)], {}, _expand_ref,
                note="smaller shape")],
    "onnx_constant_of_shape": [
        Sample([_i64(2, 3)], {"value": 1.5, "dtype": np.dtype(np.float32)}, _cos_ref),
        Sample([_i64(4)], {"value": 7, "dtype": np.dtype(np.int64)}, _cos_ref),
        Sample([_i64(0, 2)], {"value": 0, "dtype": np.dtype(np.int32)}, _cos_ref,
               note="zero size"),
        Sample([np.zeros(0, np.int64)], {"value": 2.0, "dtype": np.dtype(np.float64)},
               _cos_ref, note="scalar"),
    ],
    "onnx_reduce": [
        Sample([_F, _i64(1, -1)], {"mode": m, "keepdims": k, "noop_with_empty_axes": 0},
               _reduce_ref, rtol=1e-5, note=m)
        for m in ("sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square", "log_sum",
                  "log_sum_exp") for k in (0, 1)
    ] + [
        Sample([values((3, 5), np.int32, -5, 5), _i64(0)],
               {"mode": "sum", "keepdims": 0, "noop_with_empty_axes": 0}, _reduce_ref),
        Sample([values((3, 5), np.float64), np.zeros(0, np.int64)],
               {"mode": "max", "keepdims": 1, "noop_with_empty_axes": 0}, _reduce_ref,
               note="empty axes reduce all"),
    ],
    "onnx_slice": [
        Sample([_F, _i64(0, 1), _i64(2, -1)], {}, _slice_ref),
        Sample([_F, _i64(-1), _i64(-1000), _i64(2), _i64(-1)], {}, _slice_ref,
               note="negative step"),
        Sample([values((5, 6), np.int64), _i64(1, 0), _i64(1000, 6), _i64(0, 1),
                _i64(2, 3)], {}, _slice_ref, note="steps"),
        Sample([values((4,), np.bool_), _i64(1), _i64(3)], {}, _slice_ref),
    ],
    "onnx_squeeze": [
        Sample([values((1, 3, 1), np.float32), _i64(0, -1)], {}, _squeeze_ref),
        Sample([values((1,), np.int32), _i64(0)], {}, _squeeze_ref, note="to scalar"),
    ],
    "onnx_unsqueeze": [
        Sample([values((3, 4), np.float64), _i64(0, -1)], {}, _unsqueeze_ref),
        Sample([np.array(3, np.int64), _i64(0)], {}, _unsqueeze_ref, note="scalar"),
    ],
    "onnx_tile": [
        Sample([values((2, 3), dt), _i64(2, 1)], {}, _tile_ref)
        for dt in (np.float32, np.int8, np.bool_)
    ] + [Sample([values((3,), np.float32), _i64(0)], {}, _tile_ref, note="zero repeats")],
})

REJECTS = {
    "onnx_trunc_div": [Sample([values((3,), np.float32), values((3,), np.float32)]),
                       Sample([np.array([1, 2], np.int32), np.array([1, 0], np.int32)])],
    "onnx_fmod": [Sample([values((3,), np.float32), values((3,), np.float64)])],
    "onnx_bit_shift": [Sample([values((3,), np.float32), values((3,), np.float32)],
                              {"direction": "LEFT"}),
                       Sample([values((3,), np.int32), values((3,), np.int32)],
                              {"direction": "UP"})],
    "onnx_reshape": [Sample([_F, _i64(5, -1)], {"allowzero": 0})],
    "onnx_expand": [Sample([values((3,), np.float32), _i64(4)])],
    "onnx_reduce": [Sample([_F, _i64(3)], {"mode": "sum", "keepdims": 1,
                                            "noop_with_empty_axes": 0})],
    "onnx_slice": [Sample([_F, _i64(0), _i64(1), _i64(0), _i64(0)])],
    "onnx_squeeze": [Sample([_F, _i64(0)])],
    "onnx_tile": [Sample([_F, _i64(2)])],
}


# -- onnx_deferred ------------------------------------------------------------------------

class _Node:
    """A stand-in for the converter's DeferredNode: runs a numpy function at run time."""

    def __init__(self, fn, n_outputs=1):
        self.fn, self.n_outputs = fn, n_outputs

    def run(self, arrays):
        return self.fn(*arrays)


_PAD = _Node(lambda x, pads: [np.pad(x, np.asarray(pads).reshape(2, -1).T)])
_SPLIT2 = _Node(lambda x: list(np.split(x, 2)), n_outputs=2)

SAMPLES["onnx_deferred"] = [
    Sample([values((2, 3), np.float32), _i64(0, 1, 1, 0)], {"node": _PAD},
           lambda x, pads, node: np.pad(x, [(0, 1), (1, 0)]), note="run-time pads"),
    Sample([values((4,), np.int64)], {"node": _SPLIT2},
           lambda x, node: [x[:2], x[2:]], note="two outputs"),
]


# -- onnx_scatter -------------------------------------------------------------------------

def _scatter_nd_ref(data, indices, updates, reduction):
    out = data.copy()
    k = indices.shape[-1]
    flat_idx = indices.reshape(-1, k)
    flat_upd = updates.reshape((flat_idx.shape[0],) + data.shape[k:])
    for i in range(flat_idx.shape[0]):
        key = tuple(int(v) % data.shape[j] for j, v in enumerate(flat_idx[i]))
        old = out[key]
        new = flat_upd[i]
        out[key] = {"none": new, "add": old + new, "mul": old * new,
                    "max": np.maximum(old, new), "min": np.minimum(old, new)}[reduction]
    return out


def _scatter_el_ref(data, indices, updates, axis, reduction):
    out = data.copy()
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        target[axis] = int(indices[pos]) % data.shape[axis]
        target = tuple(target)
        old, new = out[target], updates[pos]
        out[target] = {"none": new, "add": old + new, "mul": old * new,
                       "max": max(old, new), "min": min(old, new)}[reduction]
    return out


_D = values((4, 3), np.float32, seed=20)
SAMPLES.update({
    "onnx_scatter_nd": [
        Sample([_D, _i64(1, 3, 1).reshape(3, 1), values((3, 3), np.float32, seed=21)],
               {"reduction": r}, _scatter_nd_ref, note=r)
        for r in ("none", "add", "mul", "max", "min")
    ] + [Sample([values((2, 3), np.int32), np.array([[0, -1], [1, 0]], np.int64),
                 np.array([5, 7], np.int32)], {"reduction": "add"}, _scatter_nd_ref,
                note="element indices, negative")],
    "onnx_scatter_elements": [
        Sample([_D, np.array([[1, 0, 3], [1, 2, 0]], np.int64),
                values((2, 3), np.float32, seed=22)], {"axis": 0, "reduction": r},
               _scatter_el_ref, note=r)
        for r in ("none", "add", "mul", "max", "min")
    ] + [Sample([values((3, 4), np.int64), np.array([[-1], [0], [2]], np.int64),
                 np.array([[9], [8], [7]], np.int64)], {"axis": 1, "reduction": "none"},
                _scatter_el_ref, note="axis 1, negative")],
})

REJECTS.update({
    "onnx_scatter_nd": [Sample([_D, _i64(7).reshape(1, 1), values((1, 3), np.float32)],
                               {"reduction": "none"}),
                        Sample([_D, _i64(1).reshape(1, 1), values((1, 3), np.float32)],
                               {"reduction": "sub"})],
    "onnx_scatter_elements": [Sample([_D, np.array([[4, 0, 0]], np.int64),
                                      values((1, 3), np.float32)],
                                     {"axis": 0, "reduction": "none"})],
})
