"""Samples of the ops mnn.numpy adds (mnn/express/ops/np_*.py), each checked against the
numpy function of the same meaning. Index/count outputs are int32 (MNN's integer type),
so references cast numpy's int64 results; dtypes numpy gives that a Var cannot hold
(float16, int16) are widened as the engine does (float32, int32)."""
import numpy as np

from opdb_core import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, Sample, values

_WIDEN = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.int16): np.dtype(np.int32),
          np.dtype(np.uint16): np.dtype(np.int32)}


def _widened(out):
    out = np.asarray(out)
    return out.astype(_WIDEN.get(out.dtype, out.dtype))


def _i32(out):
    return np.asarray(out).astype(np.int32)


def _unary(fn):
    def ref(a):
        return _widened(fn(a))
    return ref


def _binary(fn):
    def ref(a, b):
        return _widened(fn(a, b))
    return ref


SAMPLES = {}
REJECTS = {}


def _add(op, *samples):
    SAMPLES.setdefault(op, []).extend(samples)


def _reject(op, *samples):
    REJECTS.setdefault(op, []).extend(samples)


# -- elementwise (np_math) ---------------------------------------------------------------

_FLOAT_UNARY = {"cbrt": np.cbrt, "spacing": np.spacing, "i0": np.i0, "exp2": np.exp2,
                "log2": np.log2, "log10": np.log10, "sinc": np.sinc}
for _name, _fn in _FLOAT_UNARY.items():
    low = 0.1 if _name in ("log2", "log10") else -3.0
    for _dt in FLOAT_DTYPES:
        for _shape in [(), (1,), (3, 5)]:
            _add(_name, Sample([values(_shape, _dt, low=low)], {}, _unary(_fn)))
    _add(_name, Sample([values((4,), np.int32, low=1)], {}, _unary(_fn), rtol=1e-6,
                       note="int input"))

def _in_float32_if_half(fn):
    """numpy computes small integer inputs in float16; Vars hold no float16, so the
    engine computes those in float32: the reference does the same."""
    def ref(a):
        out = fn(a)
        if out.dtype == np.float16:
            out = fn(a.astype(np.float32))
        return out
    return ref


for _name, _fn in {"degrees": np.degrees, "radians": np.radians, "fabs": np.fabs,
                   "rint": np.rint}.items():
    for _dt in ALL_DTYPES:
        for _shape in [(), (3, 5)]:
            _add(_name, Sample([values(_shape, _dt) * (3 if _dt != np.bool_ else 1)], {},
                               _in_float32_if_half(_fn)))

for _name, _fn in {"trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf,
                   "isfinite": np.isfinite, "signbit": np.signbit}.items():
    for _dt in FLOAT_DTYPES:
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 2.5, -2.5], _dt)
        _add(_name, Sample([special], {}, _unary(_fn), note="special"),
             Sample([values((3, 5), _dt)], {}, _unary(_fn)))
    if _name != "trunc":
        _add(_name, Sample([values((2, 3), np.int32)], {}, _unary(_fn), note="int"))

for _name, _fn in {"fmod": np.fmod, "fmax": np.fmax, "fmin": np.fmin,
                   "copysign": np.copysign, "heaviside": np.heaviside,
                   "nextafter": np.nextafter, "logaddexp": np.logaddexp,
                   "logaddexp2": np.logaddexp2, "hypot": np.hypot}.items():
    for _dt in FLOAT_DTYPES:
        _add(_name,
             Sample([values((3, 5), _dt), values((3, 5), _dt, seed=1, nonzero=True)], {},
                    _binary(_fn)),
             Sample([values((3, 1), _dt), values((4,), _dt, seed=2, nonzero=True)], {},
                    _binary(_fn), note="broadcast"),
             Sample([values((), _dt), values((), _dt, seed=3, nonzero=True)], {},
                    _binary(_fn)))
    if _name in ("fmax", "fmin"):
        nan = np.array([np.nan, 1.0, np.nan], np.float32)
        _add(_name, Sample([nan, np.array([2.0, np.nan, np.nan], np.float32)], {},
                           _binary(_fn), note="nan"))
    if _name == "fmod":
        for _dt in INT_DTYPES:
            _add(_name, Sample([values((3, 4), _dt), values((3, 4), _dt, low=1, seed=5)],
                               {}, _binary(_fn), note="int"))

for _name, _fn in {"gcd": np.gcd, "lcm": np.lcm, "left_shift": np.left_shift,
                   "right_shift": np.right_shift}.items():
    for _dt in INT_DTYPES:
        high = 3.0 if "shift" in _name else 12.0
        _add(_name, Sample([values((3, 4), _dt, low=0, high=12),
                            values((3, 4), _dt, low=0, high=high, seed=4)], {}, _binary(_fn)),
             Sample([values((), _dt, low=0, high=12), values((5,), _dt, low=0, high=high)],
                    {}, _binary(_fn)))
    _reject(_name, Sample([values((3,), np.float32), values((3,), np.float32)]))


def _ldexp_ref(x, e):
    return np.ldexp(x, e).astype(x.dtype)


def _frexp_ref(x):
    m, e = np.frexp(x)
    return [m, _i32(e)]


for _dt in FLOAT_DTYPES:
    _add("ldexp", Sample([values((3, 4), _dt), values((3, 4), np.int32, low=-4, high=4)],
                         {}, _ldexp_ref),
         Sample([values((), _dt), values((2,), np.int32, low=-4, high=4)], {}, _ldexp_ref))
    _add("frexp", Sample([values((3, 4), _dt)], {}, _frexp_ref),
         Sample([np.array([0.0, -0.0, 1.0, 1e-30], _dt)], {}, _frexp_ref, note="edge"))
_reject("ldexp", Sample([values((3,), np.float32), values((3,), np.float32)]))
_reject("frexp", Sample([values((3,), np.int32)]))

# -- movement and index ops (np_shape) ---------------------------------------------------

for _dt in ALL_DTYPES:
    x = values((3, 4, 5), _dt)
    _add("flip", Sample([x], {"axes": (0, 2)}, lambda a, axes: np.flip(a, axes)),
         Sample([values((7,), _dt)], {"axes": (0,)}, lambda a, axes: np.flip(a, axes)))
    _add("roll", Sample([x], {"shifts": (2, -1), "axes": (0, 2)},
                        lambda a, shifts, axes: np.roll(a, shifts, axes)),
         Sample([x], {"shifts": (7,), "axes": None},
                lambda a, shifts, axes: np.roll(a, shifts[0], axes)))
    _add("repeat", Sample([x], {"repeats": (2,), "axis": 1},
                          lambda a, repeats, axis: np.repeat(a, repeats[0], axis)),
         Sample([values((3,), _dt)], {"repeats": (1, 0, 3), "axis": 0},
                lambda a, repeats, axis: np.repeat(a, repeats, axis)),
         Sample([values((2, 2), _dt)], {"repeats": (2,), "axis": None},
                lambda a, repeats, axis: np.repeat(a, repeats[0], axis)))
    _add("diagonal", Sample([x], {"offset": 1, "axis1": 2, "axis2": 0},
                            lambda a, offset, axis1, axis2: np.diagonal(a, offset, axis1,
                                                                        axis2)))
    _add("diag", Sample([values((4,), _dt)], {"k": -1}, lambda a, k: np.diag(a, k)),
         Sample([values((3, 5), _dt)], {"k": 2}, lambda a, k: np.diag(a, k)))
    _add("take", Sample([x, np.array([[2, 0], [1, 1]], np.int32)], {"axis": 1, "mode": "raise"},
                        lambda a, i, axis, mode: np.take(a, i, axis, mode=mode)),
         Sample([x, np.array([-1, 70], np.int64)], {"axis": None, "mode": "wrap"},
                lambda a, i, axis, mode: np.take(a, i, axis, mode=mode)),
         Sample([x, np.array(9, np.int32)], {"axis": 2, "mode": "clip"},
                lambda a, i, axis, mode: np.take(a, i, axis, mode=mode)))
    _add("take_along_axis",
         Sample([x, values((3, 2, 5), np.int32, low=0, high=3)], {"axis": 1},
                lambda a, i, axis: np.take_along_axis(a, i, axis)))
    _add("delete", Sample([x], {"obj": (0, 2), "axis": 1},
                          lambda a, obj, axis: np.delete(a, list(obj), axis)),
         Sample([x], {"obj": (-1,), "axis": None},
                lambda a, obj, axis: np.delete(a, list(obj), axis)))
    _add("resize_np", Sample([values((2, 3), _dt)], {"new_shape": (4, 5)},
                             lambda a, new_shape: np.resize(a, new_shape)))
    if _dt != np.bool_:
        _add("diff", Sample([x], {"n": 2, "axis": 1}, lambda a, n, axis: np.diff(a, n, axis)),
             Sample([values((6,), _dt)], {"n": 1, "axis": 0},
                    lambda a, n, axis: np.diff(a, n, axis)))
    _add("insert", Sample([x, values((), _dt, seed=9)],
                          {"obj": (1,), "scalar_obj": True, "axis": 2},
                          lambda a, v, obj, scalar_obj, axis: np.insert(a, obj[0], v, axis)),
         Sample([values((5,), _dt), values((2,), _dt, seed=9)],
                {"obj": (0, 5), "scalar_obj": False, "axis": None},
                lambda a, v, obj, scalar_obj, axis: np.insert(a, list(obj), v, axis)))
    _add("choose", Sample([values((3, 4), np.int32, low=0, high=2), values((3, 4), _dt),
                           values((4,), _dt, seed=3), values((), _dt, seed=4)],
                          {"mode": "raise"},
                          lambda i, *c, mode: np.choose(i, c, mode=mode)))


def _take_bw_ref(g, idx, shape, axis, mode):
    # Scatter-add written out with a Python loop over numpy's own take positions.
    out = np.zeros(shape, g.dtype)
    n = out.size if axis is None else shape[axis]
    pos = np.take(np.arange(n), idx, mode=mode)
    if axis is None:
        flat = out.reshape(-1)
        for p, v in zip(pos.reshape(-1), g.reshape(-1)):
            flat[p] += v
        return out
    g_m = np.moveaxis(g, list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    out_m = np.moveaxis(out, axis, 0)
    for k, p in enumerate(pos.reshape(-1)):
        out_m[p] += g_m.reshape((-1,) + g_m.shape[idx.ndim:])[k]
    return out


def _tala_bw_ref(g, idx, shape, axis):
    out = np.zeros(shape, g.dtype)
    for pos in np.ndindex(*g.shape):
        target = list(pos)
        target[axis] = idx[pos]
        out[tuple(target)] += g[pos]
    return out


for _dt in FLOAT_DTYPES:
    _add("take_backward",
         Sample([values((3, 2, 2, 5), _dt), np.array([[0, 3], [3, -1]], np.int32)],
                {"shape": (3, 4, 5), "axis": 1, "mode": "raise"}, _take_bw_ref),
         Sample([values((4,), _dt), np.array([0, 13, 13, -2], np.int64)],
                {"shape": (3, 4), "axis": None, "mode": "wrap"}, _take_bw_ref),
         Sample([values((2, 3), _dt), np.array([9, -9], np.int32)],
                {"shape": (5, 3), "axis": 0, "mode": "clip"}, _take_bw_ref))
    _add("take_along_axis_backward",
         Sample([values((3, 2), _dt), np.array([[0, 0], [3, 1], [2, 2]], np.int32)],
                {"shape": (3, 4), "axis": 1}, _tala_bw_ref))
_reject("take_backward", Sample([values((2,), np.float32), np.array([0.5, 1.0], np.float32)],
                                {"shape": (3,), "axis": 0, "mode": "raise"}))
_add("diff", Sample([values((5,), np.bool_)], {"n": 1, "axis": 0},
                    lambda a, n, axis: np.diff(a, n, axis), note="bool"))
_reject("take", Sample([values((3,), np.float32), np.array([3], np.int32)],
                       {"axis": 0, "mode": "raise"}),
        Sample([values((3,), np.float32), np.array([0.5], np.float32)],
               {"axis": 0, "mode": "raise"}))
_reject("take_along_axis", Sample([values((3, 2), np.float32), np.array([[5, 0]], np.int32)],
                                  {"axis": 0}))
_reject("flip", Sample([values((3,), np.float32)], {"axes": (1,)}))
_reject("diag", Sample([values((2, 2, 2), np.float32)], {"k": 0}))
_reject("choose", Sample([np.array([0, 3], np.int32), values((2,), np.float32),
                          values((2,), np.float32)], {"mode": "raise"}))

# -- search, sets, counting (np_sorting) -------------------------------------------------


def _unique_ref(a, axis, equal_nan, extras):
    out = np.unique(a, return_index=extras[0], return_inverse=extras[1],
                    return_counts=extras[2], axis=axis, equal_nan=equal_nan)
    if not any(extras):
        out = (out,)
    rest = iter(out[1:])
    return [out[0]] + [_i32(next(rest)).reshape(-1) if wanted else np.zeros(0, np.int32)
                       for wanted in extras]


for _dt in ALL_DTYPES:
    _add("unique", Sample([values((4, 5), _dt, low=-2, high=2)],
                          {"axis": None, "equal_nan": True, "extras": (True, True, True)},
                          _unique_ref),
         Sample([values((7,), _dt, low=-2, high=2)],
                {"axis": None, "equal_nan": True, "extras": (False, False, False)},
                _unique_ref, note="values only"),
         Sample([np.array([[1, 2], [1, 2], [0, 3]]).astype(_dt)],
                {"axis": 0, "equal_nan": True, "extras": (False, True, True)}, _unique_ref,
                note="axis"))
    if _dt != np.bool_:
        sorted_a = np.sort(values((9,), _dt))
        _add("searchsorted",
             Sample([sorted_a, values((3, 4), _dt, seed=2)], {"side": "left"},
                    lambda a, v, side: _i32(np.searchsorted(a, v, side))),
             Sample([sorted_a, values((), _dt, seed=3)], {"side": "right"},
                    lambda a, v, side: _i32(np.searchsorted(a, v, side))))
        _add("digitize",
             Sample([values((3, 4), _dt), np.sort(values((5,), _dt, seed=4))],
                    {"right": False}, lambda x, b, right: _i32(np.digitize(x, b, right))),
             Sample([values((6,), _dt), np.sort(values((4,), _dt, seed=5))[::-1].copy()],
                    {"right": True}, lambda x, b, right: _i32(np.digitize(x, b, right)),
                    note="decreasing"))
        x = values((4, 7), _dt, seed=6)
        _add("partition",
             Sample([x], {"kth": (2,), "axis": 1, "arg": False},
                    lambda a, kth, axis, arg: np.partition(a, list(kth), axis)),
             Sample([x], {"kth": (0, 5), "axis": None, "arg": True},
                    lambda a, kth, axis, arg: _i32(np.argpartition(a, list(kth), axis))))
        _add("lexsort", Sample([values((2, 8), _dt, low=0, high=2)], {"axis": -1},
                               lambda k, axis: _i32(np.lexsort(k, axis))))
    _add("trim_zeros", Sample([np.array([0, 0, 1, 0, 2, 0]).astype(_dt)],
                              {"trim": "fb", "axis": None},
                              lambda a, trim, axis: np.trim_zeros(a, trim, axis)),
         Sample([np.array([0, 3, 0]).astype(_dt)], {"trim": "f", "axis": None},
                lambda a, trim, axis: np.trim_zeros(a, trim, axis)),
         Sample([np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]).astype(_dt)],
                {"trim": "fb", "axis": (1,)},
                lambda a, trim, axis: np.trim_zeros(a, trim, axis), note="2-d"))
    _add("compress", Sample([np.array([True, False, True]), values((3, 2), _dt)],
                            {"axis": 0}, lambda c, a, axis: np.compress(c, a, axis)),
         Sample([np.array([0, 1, 1]), values((2, 2), _dt)], {"axis": None},
                lambda c, a, axis: np.compress(c.astype(bool), a, axis)))
for _dt in (np.int32, np.int64, np.uint8, np.int8, np.bool_):
    _add("bincount", Sample([values((12,), _dt, low=0, high=6)], {"minlength": 0},
                            lambda x, minlength: _i32(np.bincount(x, minlength=minlength))),
         Sample([values((5,), _dt, low=0, high=3), values((5,), np.float32)],
                {"minlength": 8},
                lambda x, w, minlength: np.bincount(x, w, minlength).astype(np.float64)))
_reject("bincount", Sample([np.array([1, -1], np.int32)], {"minlength": 0}),
        Sample([values((3,), np.float32)], {"minlength": 0}))
_reject("searchsorted", Sample([values((2, 2), np.float32), values((3,), np.float32)],
                               {"side": "left"}))
_reject("partition", Sample([values((4,), np.float32)], {"kth": (4,), "axis": 0,
                                                         "arg": False}))
_reject("digitize", Sample([values((4,), np.float32), np.array([1.0, 0.0, 2.0], np.float32)],
                           {"right": False}))

# -- in-place edits as ops (np_edit) -----------------------------------------------------


def _put_ref(a, ind, v, mode):
    out = a.copy()
    np.put(out, ind, v, mode=mode)
    return out


def _putmask_ref(a, mask, v):
    out = a.copy()
    np.putmask(out, mask, v)
    return out


def _place_ref(a, mask, v):
    out = a.copy()
    np.place(out, mask, v)
    return out


def _fill_diag_ref(a, val, wrap):
    out = a.copy()
    np.fill_diagonal(out, val, wrap=wrap)
    return out


def _pala_ref(a, ind, v, axis):
    out = a.copy()
    np.put_along_axis(out, ind, v, axis)
    return out


for _dt in ALL_DTYPES:
    a = values((3, 4), _dt)
    mask = values((3, 4), np.bool_, seed=2)
    _add("put", Sample([a, np.array([0, 5, -1], np.int32), values((2,), _dt, seed=3)],
                       {"mode": "raise"}, _put_ref),
         Sample([a, np.array([13], np.int64), values((), _dt, seed=3)], {"mode": "wrap"},
                _put_ref))
    _add("putmask", Sample([a, mask, values((5,), _dt, seed=4)], {}, _putmask_ref))
    _add("place", Sample([a, mask, values((3,), _dt, seed=4)], {}, _place_ref))
    _add("fill_diagonal", Sample([values((5, 3), _dt), values((), _dt, seed=5)],
                                 {"wrap": True}, _fill_diag_ref))
    _add("put_along_axis", Sample([a, np.array([[1], [0], [3]], np.int32),
                                   values((3, 1), _dt, seed=6)], {"axis": 1}, _pala_ref))
_reject("put", Sample([values((3,), np.float32), np.array([3], np.int32),
                       values((1,), np.float32)], {"mode": "raise"}))
_reject("putmask", Sample([values((3,), np.float32), values((2,), np.bool_),
                           values((1,), np.float32)]))
_reject("fill_diagonal", Sample([values((3,), np.float32), values((), np.float32)],
                                {"wrap": False}))

# -- statistics (np_stats) ---------------------------------------------------------------


def _quantile_ref(a, q, axis, method, keepdims, ignore_nan):
    fn = np.nanquantile if ignore_nan else np.quantile
    out = fn(a, q, axis=axis, method=method, keepdims=keepdims)
    return np.asarray(out, dtype=a.dtype if a.dtype.kind == "f" else np.float64)


for _dt in (np.float32, np.float64, np.int32, np.uint8):
    a = values((4, 5, 3), _dt)
    _add("quantile",
         Sample([a, np.array(0.5)], {"axis": (1,), "method": "linear", "keepdims": False,
                                     "ignore_nan": False}, _quantile_ref),
         Sample([a, np.array([0.1, 0.9])], {"axis": (0, 2), "method": "nearest",
                                            "keepdims": True, "ignore_nan": False},
                _quantile_ref),
         Sample([a, np.array(0.25)], {"axis": (0, 1, 2), "method": "hazen",
                                      "keepdims": False, "ignore_nan": False},
                _quantile_ref))
_nan_data = values((3, 6), np.float64)
_nan_data[0, 2] = _nan_data[2, :] = np.nan
_add("quantile", Sample([_nan_data, np.array([0.3, 0.5])],
                        {"axis": (1,), "method": "linear", "keepdims": False,
                         "ignore_nan": True}, _quantile_ref, note="nan"))
_reject("quantile", Sample([values((3,), np.float32), np.array(1.5)],
                           {"axis": (0,), "method": "linear", "keepdims": False,
                            "ignore_nan": False}),
        Sample([values((3,), np.float32), np.array(0.5)],
               {"axis": (0,), "method": "fancy", "keepdims": False, "ignore_nan": False}))


def _hist_ref(a, *rest, nbins, lo, hi, density):
    bins = nbins if nbins else rest[0]
    weights = rest[-1] if len(rest) == (1 if nbins else 2) else None
    rng = None if lo is None else (lo, hi)
    hist, edges = np.histogram(a, bins, rng, weights=weights, density=density)
    if nbins:
        edges = edges.astype(a.dtype if a.dtype.kind == "f" else np.float64)
    return [hist, edges]


for _dt in (np.float32, np.float64, np.int32, np.uint8):
    a = values((40,), _dt, low=0, high=9)
    _add("np_histogram",
         Sample([a], {"nbins": 5, "lo": None, "hi": None, "density": False}, _hist_ref),
         Sample([a, values((40,), np.float32, seed=2)],
                {"nbins": 4, "lo": 1.0, "hi": 7.0, "density": False}, _hist_ref),
         Sample([a, np.array([0.0, 2.0, 3.0, 9.0])],
                {"nbins": None, "lo": None, "hi": None, "density": True}, _hist_ref))
_reject("np_histogram", Sample([values((4,), np.float32)],
                               {"nbins": 0, "lo": None, "hi": None, "density": False}))


def _histdd_ref(sample, *rest, bins, ranges, density):
    weights = rest[0] if rest else None
    spec = [b if isinstance(b, int) else np.asarray(b) for b in bins]
    if len(spec) == 1:
        spec = spec * sample.shape[1]
    hist, edges = np.histogramdd(sample, spec, ranges, density=density, weights=weights)
    return [hist.astype(np.float64)] + [e.astype(np.float64) for e in edges]


_add("np_histogramdd",
     Sample([values((30, 2), np.float32)], {"bins": (4,), "ranges": None, "density": False},
            _histdd_ref),
     Sample([values((30, 3), np.float64), values((30,), np.float64, low=0)],
            {"bins": (2, 3, (-3.0, 0.0, 3.0)), "ranges": ((-2.0, 2.0), None, None),
             "density": True}, _histdd_ref))

# -- linear algebra (np_linalg) ----------------------------------------------------------


def _spd(shape, dtype, seed=0):
    m = values(shape, dtype, seed=seed)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


def _solve_ref(a, b):
    return np.linalg.solve(a.astype(np.result_type(a, b, np.float32)), b)


for _dt in FLOAT_DTYPES:
    tol = {"rtol": 1e-4, "atol": 1e-5} if _dt == np.float32 else {"rtol": 1e-10,
                                                                     "atol": 1e-10}
    a3 = _spd((3, 3), _dt)
    ab = _spd((2, 4, 4), _dt, seed=1)
    _add("linalg_solve", Sample([a3, values((3,), _dt, seed=2)], {}, _solve_ref, **tol),
         Sample([ab, values((2, 4, 2), _dt, seed=3)], {}, _solve_ref, **tol))
    _add("linalg_inv", Sample([a3], {}, np.linalg.inv, **tol),
         Sample([ab], {}, np.linalg.inv, **tol))
    _add("linalg_det", Sample([a3], {}, lambda a: np.asarray(np.linalg.det(a)), **tol),
         Sample([ab], {}, np.linalg.det, **tol))
    _add("linalg_slogdet", Sample([ab], {}, lambda a: list(np.linalg.slogdet(a)), **tol))
_add("linalg_solve", Sample([_spd((2, 2), np.float64), values((2, 1), np.int32)], {},
                            _solve_ref, rtol=1e-10, atol=1e-10, note="int b"))
_add("linalg_inv", Sample([np.array([[2, 1], [1, 1]], np.int32)], {},
                          lambda a: np.linalg.inv(a.astype(np.float64)), note="int"))
_reject("linalg_inv", Sample([values((2, 3), np.float32)]),
        Sample([np.zeros((2, 2), np.float32)], note="singular"))
_reject("linalg_solve", Sample([values((3, 3), np.float32), values((2,), np.float32)]))


def _svdvals_ref(a):
    return np.linalg.svd(a, compute_uv=False)


def _svd_ref(a, full_matrices):
    # Singular vectors are unique only up to sign; these inputs have distinct singular
    # values, and LAPACK's sign choice is the same call as ours, so numpy's u/vh are
    # the reference (the reconstruction is also checked in tests/numpy).
    return list(np.linalg.svd(a, full_matrices=full_matrices))


_add("linalg_svdvals", Sample([values((4, 3), np.float64)], {}, _svdvals_ref),
     Sample([values((2, 3, 5), np.float32)], {}, _svdvals_ref, rtol=1e-4, atol=1e-5))
_add("linalg_svd", Sample([values((4, 3), np.float64)], {"full_matrices": False}, _svd_ref),
     Sample([values((3, 5), np.float64)], {"full_matrices": True}, _svd_ref))


for _dt in FLOAT_DTYPES:
    tol = {"rtol": 1e-4, "atol": 1e-5} if _dt == np.float32 else {"rtol": 1e-9,
                                                                     "atol": 1e-10}
    spd = _spd((3, 3), _dt, seed=4)
    tall = values((5, 3), _dt, seed=5)
    # Same LAPACK routines as numpy, so even sign conventions of factors agree.
    _add("linalg_cholesky",
         Sample([spd], {"upper": False}, lambda a, upper: np.linalg.cholesky(a), **tol),
         Sample([_spd((2, 3, 3), _dt)], {"upper": True},
                lambda a, upper: np.linalg.cholesky(a, upper=True), **tol))
    _add("linalg_qr",
         Sample([tall], {"mode": "reduced"}, lambda a, mode: list(np.linalg.qr(a, mode)),
                **tol),
         Sample([tall], {"mode": "complete"}, lambda a, mode: list(np.linalg.qr(a, mode)),
                **tol))
    _add("linalg_eigh", Sample([spd], {"uplo": "L", "vectors": True},
                               lambda a, uplo, vectors: list(np.linalg.eigh(a, uplo)), **tol))
    _add("linalg_eigvalsh", Sample([spd], {"uplo": "U", "vectors": False},
                                   lambda a, uplo, vectors: np.linalg.eigvalsh(a, uplo),
                                   **tol))
    _add("linalg_pinv", Sample([tall], {"rcond": None, "hermitian": False},
                               lambda a, rcond, hermitian: np.linalg.pinv(a), **tol),
         Sample([spd], {"rcond": 1e-3, "hermitian": True},
                lambda a, rcond, hermitian: np.linalg.pinv(a, rcond, True), **tol))


def _lstsq_ref(a, b, rcond):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=rcond)
    return [x, res, np.asarray(rank, np.int32), sv]


_add("linalg_lstsq", Sample([values((5, 3), np.float64), values((5, 2), np.float64, seed=1)],
                            {"rcond": None}, _lstsq_ref),
     Sample([values((2, 3), np.float64), values((2,), np.float64, seed=1)],
            {"rcond": 1e-10}, _lstsq_ref, note="underdetermined"))
_reject("linalg_cholesky", Sample([-np.eye(2)], {"upper": False}, note="not positive"))
_reject("linalg_qr", Sample([values((3,), np.float32)], {"mode": "reduced"}))


def _einsum_ref(*ops, subscripts):
    return np.asarray(np.einsum(subscripts, *ops))


for _dt in (np.float32, np.float64, np.int32):
    _add("einsum",
         Sample([values((3, 4), _dt), values((4, 5), _dt, seed=1)],
                {"subscripts": "ij,jk->ik"}, _einsum_ref, rtol=1e-5, atol=1e-5),
         Sample([values((2, 3, 4), _dt)], {"subscripts": "abc->ca"}, _einsum_ref,
                rtol=1e-5, atol=1e-5),
         Sample([values((3,), _dt), values((3,), _dt, seed=2), values((3, 3), _dt, seed=3)],
                {"subscripts": "i,j,ij->"}, _einsum_ref, rtol=1e-5, atol=1e-5),
         Sample([values((3, 3), _dt)], {"subscripts": "ii->i"}, _einsum_ref))
_reject("einsum", Sample([values((3, 4), np.float32), values((5, 2), np.float32)],
                         {"subscripts": "ij,jk->ik"}))

# -- signals and index arithmetic (np_signal) --------------------------------------------

for _dt in (np.float32, np.float64, np.int32):
    for mode in ("full", "same", "valid"):
        _add("convolve", Sample([values((7,), _dt), values((3,), _dt, seed=1)],
                                {"mode": mode},
                                lambda a, v, mode: np.convolve(a, v, mode)),
             Sample([values((2,), _dt), values((5,), _dt, seed=1)], {"mode": mode},
                    lambda a, v, mode: np.convolve(a, v, mode)))


def _interp_ref(x, xp, fp, left, right, period):
    out = np.interp(x, xp, fp, left=left, right=right, period=period)
    return np.asarray(out, dtype=fp.dtype if fp.dtype.kind == "f" else np.float64)


for _dt in FLOAT_DTYPES:
    xp = np.sort(values((6,), _dt))
    _add("interp",
         Sample([values((3, 4), _dt, low=-4, high=4), xp, values((6,), _dt, seed=2)],
                {"left": None, "right": None, "period": None}, _interp_ref),
         Sample([values((5,), _dt, low=-4, high=4), xp, values((6,), _dt, seed=2)],
                {"left": -10.0, "right": 10.0, "period": None}, _interp_ref),
         Sample([values((5,), _dt, low=-9, high=9), values((4,), _dt), values((4,), _dt)],
                {"left": None, "right": None, "period": 5.0}, _interp_ref))
_add("interp", Sample([values((3,), np.float32), np.array([0, 1, 2], np.int32),
                       np.array([1, 4, 2], np.int32)],
                      {"left": None, "right": None, "period": None}, _interp_ref,
                      note="int fp"))


def _unwrap_ref(p, discont, axis, period):
    return np.unwrap(p, discont=discont, axis=axis, period=period).astype(
        p.dtype if p.dtype.kind == "f" else np.float64)


for _dt in FLOAT_DTYPES:
    phase = np.cumsum(values((4, 9), _dt, low=-3, high=3), axis=1).astype(_dt)
    _add("unwrap", Sample([phase], {"discont": None, "axis": 1, "period": 2 * np.pi},
                          _unwrap_ref, rtol=1e-5, atol=1e-5),
         Sample([phase], {"discont": 4.0, "axis": 0, "period": 6.0}, _unwrap_ref,
                rtol=1e-5, atol=1e-5))


def _gradient_ref(f, spacing, axes, edge_order):
    args = [np.asarray(s) if isinstance(s, tuple) else s for s in spacing]
    out = np.gradient(f, *args, axis=axes, edge_order=edge_order)
    out = [out] if len(axes) == 1 else out
    return [np.asarray(o, dtype=f.dtype if f.dtype.kind == "f" else np.float64)
            for o in out]


for _dt in (np.float32, np.float64, np.int32):
    f = values((4, 6), _dt)
    _add("gradient",
         Sample([f], {"spacing": (1.0, 2.0), "axes": (0, 1), "edge_order": 1},
                _gradient_ref),
         Sample([f], {"spacing": ((0.0, 1.0, 1.5, 3.0, 4.0, 6.0),), "axes": (1,),
                      "edge_order": 2}, _gradient_ref, rtol=1e-5, atol=1e-5))
_reject("gradient", Sample([values((1, 4), np.float32)],
                           {"spacing": (1.0,), "axes": (0,), "edge_order": 1}))

for _dt in (np.bool_, np.uint8, np.int32):
    bits = values((3, 10), _dt, low=0, high=1)
    _add("packbits",
         Sample([bits], {"axis": None, "bitorder": "big"},
                lambda a, axis, bitorder: np.packbits(a, axis, bitorder)),
         Sample([bits], {"axis": 1, "bitorder": "little"},
                lambda a, axis, bitorder: np.packbits(a, axis, bitorder)))
_add("unpackbits",
     Sample([values((2, 3), np.uint8, low=0, high=255)],
            {"axis": None, "count": None, "bitorder": "big"},
            lambda a, axis, count, bitorder: np.unpackbits(a, axis, count, bitorder)),
     Sample([values((2, 3), np.uint8, low=0, high=255)],
            {"axis": 1, "count": -3, "bitorder": "little"},
            lambda a, axis, count, bitorder: np.unpackbits(a, axis, count, bitorder)))
_reject("unpackbits", Sample([values((2,), np.int32)],
                             {"axis": None, "count": None, "bitorder": "big"}))

for _dt in (np.int32, np.int64):
    idx = np.stack([values((4,), _dt, low=0, high=2), values((4,), _dt, low=0, high=4)])
    _add("np_ravel_multi_index",
         Sample([idx], {"dims": (3, 5), "mode": "raise", "order": "C"},
                lambda m, dims, mode, order: _i32(np.ravel_multi_index(tuple(m), dims,
                                                                       mode=mode,
                                                                       order=order))),
         Sample([idx * 3], {"dims": (3, 5), "mode": ("wrap", "clip"), "order": "F"},
                lambda m, dims, mode, order: _i32(np.ravel_multi_index(tuple(m), dims,
                                                                       mode=mode,
                                                                       order=order))))
    _add("np_unravel_index",
         Sample([values((2, 3), _dt, low=0, high=29)], {"dims": (5, 6), "order": "C"},
                lambda i, dims, order: _i32(np.unravel_index(i, dims, order))),
         Sample([values((), _dt, low=0, high=29)], {"dims": (2, 3, 5), "order": "F"},
                lambda i, dims, order: _i32(np.unravel_index(i, dims, order))))
_reject("np_ravel_multi_index", Sample([np.array([[3], [0]], np.int32)],
                                       {"dims": (3, 5), "mode": "raise", "order": "C"}))
_reject("np_unravel_index", Sample([np.array([30], np.int32)], {"dims": (5, 6), "order": "C"}))


def _pad_ref(a, widths, mode, options):
    return np.pad(a, widths, mode=mode, **dict(options))


for _dt in ALL_DTYPES:
    a = values((3, 4), _dt)
    for mode, options in [("constant", (("constant_values", ((1, 2), (3, 0))),)),
                          ("edge", ()), ("reflect", ()), ("symmetric", ()), ("wrap", ())]:
        if _dt == np.bool_ and options:
            options = (("constant_values", True),)
        _add("np_pad", Sample([a], {"widths": ((1, 2), (0, 3)), "mode": mode,
                                    "options": options}, _pad_ref, note=mode))
for _dt in (np.float32, np.float64, np.int32):
    a = values((4, 5), _dt)
    for mode, options in [("linear_ramp", (("end_values", 5),)), ("maximum", ()),
                          ("mean", (("stat_length", 2),)), ("median", ()), ("minimum", ()),
                          ("reflect", (("reflect_type", "odd"),))]:
        _add("np_pad", Sample([a], {"widths": ((2, 1), (3, 3)), "mode": mode,
                                    "options": options}, _pad_ref, note=mode))
_reject("np_pad", Sample([values((3,), np.float32)], {"widths": ((1, 1), (1, 1)),
                                                      "mode": "edge", "options": ()}),
        Sample([values((3,), np.float32)], {"widths": ((1, 1),), "mode": "bogus",
                                            "options": ()}))
