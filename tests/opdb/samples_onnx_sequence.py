"""Samples of the run-time sequence/optional ops (mnn/express/ops/onnx_sequence.py) and of
``narrow_cast`` (onnx_narrow.py).

A packed sequence is ``data`` (the elements raveled and concatenated) and ``index``
(``[n, rank_0, dims_0..., ...]``); the references build and read that layout with plain
Python lists, and follow the ONNX spec of each sequence op. ``narrow_cast`` is checked
against numpy's float16 and integer casts and ml_dtypes' bfloat16 (an onnx dependency).
"""
import ml_dtypes
import numpy as np
from opdb_core import Sample, values


def _ref_pack(items, dtype):
    index = [len(items)]
    data = []
    for a in items:
        a = np.asarray(a)
        index += [a.ndim] + list(a.shape)
        data += a.reshape(-1).tolist()
    return [np.array(data, dtype=dtype).reshape(-1), np.array(index, dtype=np.int64)]


def _ref_unpack(data, index):
    n, pos, off, out = int(index[0]), 1, 0, []
    for _ in range(n):
        rank = int(index[pos])
        dims = [int(d) for d in index[pos + 1:pos + 1 + rank]]
        size = int(np.prod(dims)) if dims else 1
        out.append(np.array(data[off:off + size]).reshape(dims))
        off += size
        pos += 1 + rank
    return out


_A = values((2, 3), np.float32, seed=1)
_B = values((4,), np.float32, seed=2)
_C = values((), np.float32, seed=3)
_SEQ = _ref_pack([_A, _B, _C], np.float32)
_ISEQ = _ref_pack([np.arange(6, dtype=np.int64).reshape(3, 2),
                   np.arange(4, dtype=np.int64).reshape(2, 2)], np.int64)


def _insert_ref(data, index, tensor, position=None):
    items = _ref_unpack(data, index)
    pos = len(items) if position is None else int(position)
    items.insert(pos if pos >= 0 else pos + len(items), tensor)
    return _ref_pack(items, data.dtype)


def _erase_ref(data, index, position=None):
    items = _ref_unpack(data, index)
    pos = len(items) - 1 if position is None else int(position)
    del items[pos]
    return _ref_pack(items, data.dtype)


def _at_ref(data, index, position):
    return _ref_unpack(data, index)[int(position)]


def _concat_ref(data, index, axis, new_axis):
    items = _ref_unpack(data, index)
    return np.stack(items, axis) if new_axis else np.concatenate(items, axis)


def _split_ref(x, split=None, axis=0, keepdims=True):
    dim = x.shape[axis]
    if split is None:
        sizes = [1] * dim
    elif np.ndim(split) == 0:
        sizes = [int(split)] * (dim // int(split)) + ([dim % int(split)] if dim % int(split)
                                                      else [])
    else:
        sizes = [int(s) for s in split]
    pieces = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    if split is None and not keepdims:
        pieces = [np.squeeze(p, axis) for p in pieces]
    return _ref_pack(pieces, x.dtype)


def _narrow_ref(x, dtype):
    narrow = {"bfloat16": ml_dtypes.bfloat16, "int4": ml_dtypes.int4,
              "uint4": ml_dtypes.uint4, "int2": ml_dtypes.int2,
              "uint2": ml_dtypes.uint2}.get(dtype, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(narrow).astype(x.dtype)


def _minifloat_ref(x, format, saturate):
    t = getattr(ml_dtypes, format)
    v = np.clip(x, -ml_dtypes.finfo(t).max, ml_dtypes.finfo(t).max) if saturate else x
    with np.errstate(over="ignore", invalid="ignore"):
        return v.astype(t).astype(x.dtype)


_F8_EDGE = np.array([0.0, -0.0, 1.0, -1.0, 0.3, 1e-3, -1e-5, 3e-8, 100.0, 250.0, 300.0,
                     460.0, 470.0, 6e4, -7e4, np.inf, -np.inf, np.nan, 0.0625, 0.09375,
                     2.5, 3.5, 5.0, 7.0], np.float32)
_F4_EDGE = _F8_EDGE[~np.isnan(_F8_EDGE)]  # float4 has no NaN (the spec leaves it open)
_I64 = np.int64
_EDGE = np.array([0.1, 1.0 / 3, 65504.0, 70000.0, -2.5e-8, np.inf, -np.inf, np.nan, 0.0,
                  1.00390625, 1.01171875], np.float32)

SAMPLES = {
    "sequence_pack": [
        Sample([_A, _B, _C], {"dtype": np.dtype(np.float32)},
               lambda *xs, dtype: _ref_pack(xs, dtype), note="three"),
        Sample([], {"dtype": np.dtype(np.int32)}, lambda dtype: _ref_pack([], dtype),
               note="empty"),
        Sample([np.ones((0, 2), np.float64)], {"dtype": np.dtype(np.float64)},
               lambda x, dtype: _ref_pack([x], dtype), note="zero-size"),
    ],
    "sequence_insert": [
        Sample(_SEQ + [_B], {}, _insert_ref, note="append"),
        Sample(_SEQ + [_A, np.array(0, _I64)], {}, _insert_ref, note="front"),
        Sample(_SEQ + [_C, np.array(-1, np.int32)], {}, _insert_ref, note="negative"),
        Sample(_ISEQ + [np.zeros((1,), _I64), np.array(2, _I64)], {}, _insert_ref,
               note="end"),
    ],
    "sequence_erase": [
        Sample(_SEQ, {}, _erase_ref, note="last"),
        Sample(_SEQ + [np.array(0, _I64)], {}, _erase_ref, note="first"),
        Sample(_ISEQ + [np.array(-2, _I64)], {}, _erase_ref, note="negative"),
    ],
    "sequence_at": [
        Sample(_SEQ + [np.array(0, _I64)], {}, _at_ref),
        Sample(_SEQ + [np.array(-1, np.int32)], {}, _at_ref, note="scalar element"),
        Sample(_ISEQ + [np.array(1, _I64)], {}, _at_ref),
    ],
    "sequence_length": [
        Sample([_SEQ[1]], {}, lambda i: np.array(3, _I64)),
        Sample([_ref_pack([], np.float32)[1]], {}, lambda i: np.array(0, _I64), note="empty"),
    ],
    "sequence_concat": [
        Sample(_ISEQ, {"axis": 0, "new_axis": False}, _concat_ref),
        Sample(_ref_pack([np.ones((2, 1), _I64), np.zeros((2, 3), _I64)], _I64),
               {"axis": -1, "new_axis": False}, _concat_ref, note="last axis"),
        Sample(_ref_pack([_B, _B * 2], np.float32), {"axis": 1, "new_axis": True},
               _concat_ref, note="new axis"),
    ],
    "sequence_split": [
        Sample([values((5, 3), np.float32, seed=4)], {"axis": 0, "keepdims": True},
               lambda x, axis, keepdims: _split_ref(x, None, axis, keepdims), note="ones"),
        Sample([values((5, 3), np.float32, seed=4)], {"axis": 1, "keepdims": False},
               lambda x, axis, keepdims: _split_ref(x, None, axis, keepdims),
               note="squeezed"),
        Sample([values((5, 3), np.int32, seed=5), np.array(2, _I64)],
               {"axis": 0, "keepdims": True}, _split_ref, note="scalar split"),
        Sample([values((5, 3), np.float64, seed=6), np.array([1, 4], _I64)],
               {"axis": -2, "keepdims": True},
               lambda x, s, axis, keepdims: _split_ref(x, s, axis % 2, keepdims),
               note="sizes"),
    ],
    "optional_get": [
        Sample([np.array(True), _A, _B], {"n": 2}, lambda p, a, b, n: [a, b]),
        Sample([np.array([1], np.bool_), _C], {"n": 1}, lambda p, c, n: [c]),
    ],
    "narrow_cast": [
        Sample([_EDGE], {"dtype": "float16"}, _narrow_ref, rtol=0, atol=0),
        Sample([_EDGE], {"dtype": "bfloat16"}, _narrow_ref, rtol=0, atol=0),
        Sample([values((3, 4), np.float64, seed=7)], {"dtype": "float16"}, _narrow_ref,
               rtol=0, atol=0),
        Sample([values((50,), np.float32, low=-1e4, high=1e4, seed=8)],
               {"dtype": "bfloat16"}, _narrow_ref, rtol=0, atol=0, note="rounding"),
        Sample([np.array([-1, 70000, 32768, -32769, 5], np.int32)], {"dtype": "int16"},
               _narrow_ref),
        Sample([np.array([-1, 70000, 65535], np.int32)], {"dtype": "uint16"}, _narrow_ref),
        Sample([np.array([-1, 2 ** 33 + 7, 3], np.int64)], {"dtype": "uint32"}, _narrow_ref),
        Sample([np.array([-1, 5], np.int64)], {"dtype": "uint64"}, _narrow_ref),
        Sample([np.array(2.5, np.float32)], {"dtype": "float16"}, _narrow_ref, note="scalar"),
        Sample([np.arange(-20, 20, dtype=np.int32)], {"dtype": "int4"}, _narrow_ref),
        Sample([np.arange(-20, 20, dtype=np.int64)], {"dtype": "uint4"}, _narrow_ref),
        Sample([np.arange(-6, 6, dtype=np.int8)], {"dtype": "int2"}, _narrow_ref),
        Sample([np.arange(0, 255, 7, dtype=np.uint8)], {"dtype": "uint2"}, _narrow_ref),
    ],
}

SAMPLES["minifloat_cast"] = [
    Sample([_F8_EDGE if f != "float4_e2m1fn" else _F4_EDGE], {"format": f, "saturate": sat},
           _minifloat_ref, rtol=0, atol=0, note=f"{f}-{'sat' if sat else 'nosat'}")
    for f in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
              "float4_e2m1fn")
    for sat in (True, False) if not (f == "float4_e2m1fn" and not sat)
] + [Sample([values((4, 5), np.float64, low=-500, high=500, seed=9)],
            {"format": "float8_e4m3fn", "saturate": True}, _minifloat_ref, rtol=0, atol=0,
            note="float64")]

def _e8m0_ref(x, round_mode, saturate):
    from onnx.numpy_helper import to_float8e8m0

    return to_float8e8m0(x, saturate, round_mode).astype(np.float32)


_E8M0_EDGE = np.array([1.0, 1.5, 3.0, 0.75, 1e-3, 6e4, 3.4e38, 0.0, 1e-40, np.inf, np.nan,
                       1.25, 1.75, 2.0 ** 127 * 1.5, 2.0 ** -127, 2.0 ** -126 * 1.5],
                      np.float32)
SAMPLES["e8m0_cast"] = [
    Sample([_E8M0_EDGE], {"round_mode": mode, "saturate": sat}, _e8m0_ref, rtol=0, atol=0,
           note=f"{mode}-{sat}")
    for mode in ("up", "down", "nearest") for sat in (True, False)
]

REJECTS = {
    "sequence_pack": [Sample([_A, np.ones(2, np.int32)], {"dtype": np.dtype(np.float32)})],
    "sequence_insert": [
        Sample(_SEQ + [_B, np.array(5, _I64)], {}),
        Sample(_SEQ + [np.ones(2, np.int32)], {}),
        Sample([_SEQ[0][:-1], _SEQ[1], _B], {}),  # data shorter than the index says
    ],
    "sequence_erase": [Sample(_ref_pack([], np.float32), {})],
    "sequence_at": [Sample(_SEQ + [np.array(3, _I64)], {}),
                    Sample(_SEQ + [np.array(0.5, np.float32)], {})],
    "sequence_concat": [Sample(_SEQ, {"axis": 0, "new_axis": False})],
    "sequence_split": [Sample([values((5, 3), np.float32), np.array([1, 1], _I64)],
                              {"axis": 0, "keepdims": True})],
    "optional_get": [Sample([np.array(False), _A], {"n": 1})],
    "e8m0_cast": [Sample([np.ones(2, np.float64)], {"round_mode": "up", "saturate": True}),
                  Sample([np.ones(2, np.float32)], {"round_mode": "even", "saturate": True})],
    "minifloat_cast": [Sample([np.ones(2, np.int32)], {"format": "float8_e5m2",
                                                       "saturate": True}),
                       Sample([np.ones(2, np.float32)], {"format": "float8",
                                                         "saturate": True})],
    "narrow_cast": [Sample([np.ones(2, np.int32)], {"dtype": "float16"}),
                    Sample([np.ones(2, np.float32)], {"dtype": "int16"}),
                    Sample([np.ones(2, np.float32)], {"dtype": "float8"})],
}
