"""Samples of select/where (selection.py), fill/full_like/range (creation.py) and matmul
(linalg.py)."""
import numpy as np
from opdb_core import ALL_DTYPES, Sample, values

_COERCE = {np.dtype(np.int16): np.dtype(np.int32)}


def _select_ref(c, x, y):
    out = np.result_type(x.dtype, y.dtype)
    return np.where(c.astype(bool), x, y).astype(_COERCE.get(out, out))


def _where_ref(x):
    return np.argwhere(x).astype(np.int32)


def _fill_ref(value, shape):
    return np.full(shape, value.reshape(()), dtype=value.dtype)


def _full_like_ref(a, value):
    return np.full(a.shape, value, dtype=a.dtype)


def _range_ref(start, limit, delta):
    return np.arange(start.item(), limit.item(), delta.item(),
                     dtype=np.result_type(start, limit, delta))


def _matmul_ref(a, b, transpose_a, transpose_b):
    if transpose_a and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if transpose_b and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


SAMPLES = {k: [] for k in ("select", "where", "fill", "full_like", "range", "matmul")}
for _dt in ALL_DTYPES:
    SAMPLES["select"] += [
        Sample([values((), np.bool_), values((), _dt), values((), _dt, seed=1)], ref=_select_ref),
        Sample([values((3, 5), np.bool_), values((3, 5), _dt), values((1,), _dt, seed=1)],
               ref=_select_ref),
        Sample([values((3, 1), np.bool_), values((1, 5), _dt), values((2, 1, 1), _dt, seed=1)],
               ref=_select_ref),
        Sample([values((3,), np.int32, 0, 1), values((3,), _dt), values((3,), _dt, seed=2)],
               ref=_select_ref, note="int-condition"),
    ]
    SAMPLES["where"] += [Sample([values((), _dt)], ref=_where_ref),
                         Sample([values((1,), _dt)], ref=_where_ref),
                         Sample([values((3, 5), _dt)], ref=_where_ref),
                         Sample([values((2, 1, 7), _dt)], ref=_where_ref)]
    SAMPLES["fill"] += [Sample([values((), _dt)], {"shape": (3, 5)}, _fill_ref),
                        Sample([values((1,), _dt)], {"shape": ()}, _fill_ref),
                        Sample([values((), _dt)], {"shape": (0, 2)}, _fill_ref)]
    SAMPLES["full_like"] += [Sample([values((3, 5), _dt)], {"value": 0}, _full_like_ref),
                             Sample([values((), _dt)], {"value": 1}, _full_like_ref)]
SAMPLES["select"] += [
    Sample([values((4,), np.bool_), values((4,), np.uint8), values((4,), np.int8)],
           ref=_select_ref, note="mixed"),
    Sample([values((4,), np.bool_), values((4,), np.int32), values((4,), np.float32)],
           ref=_select_ref, note="mixed"),
]
for _dt in (np.float32, np.float64, np.int32, np.int64):
    SAMPLES["range"] += [
        Sample([np.array(0, _dt), np.array(7, _dt), np.array(1, _dt)], ref=_range_ref),
        Sample([np.array(5, _dt), np.array(-4, _dt), np.array(-3, _dt)], ref=_range_ref),
        Sample([np.array(2, _dt), np.array(2, _dt), np.array(1, _dt)], ref=_range_ref),
    ]
SAMPLES["range"].append(Sample([np.array(0.5, np.float32), np.array(2.0, np.float32),
                                np.array(0.25, np.float32)], ref=_range_ref))
for _dt in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8):
    for _sa, _sb, _ta, _tb in [((3, 5), (5, 7), False, False), ((5, 3), (5, 7), True, False),
                               ((3, 5), (7, 5), False, True), ((5,), (5, 3), False, False),
                               ((2, 3, 5), (5,), False, False), ((1,), (1,), False, False),
                               ((2, 1, 3, 5), (4, 7, 5), False, True)]:
        SAMPLES["matmul"].append(Sample([values(_sa, _dt, 0, 3), values(_sb, _dt, 0, 3, seed=1)],
                                        {"transpose_a": _ta, "transpose_b": _tb}, _matmul_ref))
SAMPLES["matmul"].append(Sample([values((3, 4), np.int32), values((4, 2), np.float32)],
                                {"transpose_a": False, "transpose_b": False}, _matmul_ref))

REJECTS = {
    "select": [Sample([np.zeros(3, bool), np.zeros(2, np.float32), np.zeros(4, np.float32)])],
    "fill": [Sample([np.zeros(2, np.float32)], {"shape": (3,)}, note="non-scalar value")],
    "range": [Sample([np.array(0), np.array(5), np.array(0)], note="zero-delta")],
    "matmul": [Sample([np.zeros((3, 4), np.float32), np.zeros((5, 2), np.float32)],
                      {"transpose_a": False, "transpose_b": False}),
               Sample([np.zeros((3, 4), bool), np.zeros((4, 2), bool)],
                      {"transpose_a": False, "transpose_b": False}),
               Sample([np.zeros((), np.float32), np.zeros((4, 2), np.float32)],
                      {"transpose_a": False, "transpose_b": False})],
}
