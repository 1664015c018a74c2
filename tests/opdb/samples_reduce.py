"""Samples of the reductions (mnn/express/ops/reduce.py).

Sums and products keep the input's integer dtype (MNN; bool sums give int32), means of
integers are float64, any/all give bool. Every dtype, scalars, size-1 and odd shapes,
single and multiple axes, negative axes, keepdims both ways.
"""
import numpy as np
from opdb_core import ALL_DTYPES, Sample, values


def _sum_dtype(dt):
    return np.dtype(np.int32) if dt == np.bool_ else dt


def _ref(fn, out_dtype):
    def ref(a, axes, keepdims):
        axis = None if axes is None or axes == () else tuple(axes)
        return np.asarray(fn(a, axis=axis, keepdims=keepdims,
                             dtype=out_dtype(a.dtype))).astype(out_dtype(a.dtype))
    return ref


def _minmax_ref(fn):
    def ref(a, axes, keepdims):
        axis = None if axes is None or axes == () else tuple(axes)
        return np.asarray(fn(a, axis=axis, keepdims=keepdims))
    return ref


def _mean_dtype(dt):
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _bool_ref(fn):
    def ref(a, axes, keepdims):
        axis = None if axes is None or axes == () else tuple(axes)
        return np.asarray(fn(a, axis=axis, keepdims=keepdims))
    return ref


REDUCERS = {
    "reduce_sum": _ref(np.sum, _sum_dtype),
    "reduce_prod": _ref(np.prod, _sum_dtype),
    "reduce_mean": _ref(np.mean, _mean_dtype),
    "reduce_max": _minmax_ref(np.max),
    "reduce_min": _minmax_ref(np.min),
    "reduce_any": _bool_ref(np.any),
    "reduce_all": _bool_ref(np.all),
}

# (shape, axes): axes None and () both mean every axis (MNN's default is []).
CASES = [((), None), ((1,), ()), ((7,), (0,)), ((3, 5), (1,)), ((3, 5), (-2,)),
         ((2, 3, 5), (0, 2)), ((2, 1, 5), None), ((3, 4), (0, 1))]

SAMPLES = {name: [] for name in REDUCERS}
for _name, _ref_fn in REDUCERS.items():
    for _dt in ALL_DTYPES:
        for _i, (_shape, _axes) in enumerate(CASES):
            _low, _high = (-2, 2) if _name == "reduce_prod" else (-3, 3)
            _a = values(_shape, _dt, _low, _high, seed=_i)
            for _keep in (False, True) if _i % 2 else (False,):
                SAMPLES[_name].append(Sample([_a], {"axes": _axes, "keepdims": _keep},
                                             ref=_ref_fn))

REJECTS = {
    "reduce_sum": [Sample([np.zeros((2, 3), np.float32)], {"axes": (2,), "keepdims": False},
                          note="axis-out-of-range"),
                   Sample([np.zeros((2, 3), np.float32)], {"axes": (1, -1), "keepdims": False},
                          note="axis-repeated")],
    "reduce_max": [Sample([np.zeros((0, 3), np.float32)], {"axes": (0,), "keepdims": False},
                          note="empty-axis")],
    "reduce_min": [Sample([np.zeros((2, 0), np.int32)], {"axes": None, "keepdims": False},
                          note="empty")],
}
