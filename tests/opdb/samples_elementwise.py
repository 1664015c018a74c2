"""Samples of the elementwise ops (mnn/express/ops/elementwise.py).

Every op is sampled on a scalar, size-1 and odd shapes (binary ops also broadcast both
ways) for every dtype numpy defines it for; dtypes numpy refuses go to REJECTS. The
expected dtype is numpy's, with float16 results stored as float32 (Vars hold no float16)
and computed in that dtype. gelu, erf, erfc and erfinv use torch as the reference.
"""
import numpy as np
import scipy.special as sp
import torch
from opdb_core import ALL_DTYPES, BINARY_SHAPES, UNARY_SHAPES, Sample, values

# Vars hold no float16/int16/unsigned wider than uint8: these numpy results are stored in
# the next supported type (documented in mnn/express/dtypes.py).
_COERCE = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.int16): np.dtype(np.int32),
           np.dtype(np.uint16): np.dtype(np.int32), np.dtype(np.uint32): np.dtype(np.int64),
           np.dtype(np.uint64): np.dtype(np.int64)}


def _result_dtype(fn, dtypes):
    """numpy's result dtype for ``fn`` on these dtypes (float16 stored as float32), or
    None if numpy refuses them."""
    try:
        dt = np.asarray(fn(*[np.zeros(0, d) for d in dtypes])).dtype
    except TypeError:
        return None
    return _COERCE.get(dt, dt)


def _numpy_ref(fn):
    def ref(*arrays):
        out = _result_dtype(fn, [a.dtype for a in arrays])
        if out.kind == "f":
            arrays = [a.astype(out) if a.dtype.kind != "f" else a for a in arrays]
        return np.asarray(fn(*arrays)).astype(out)
    return ref


def _torch_ref(name):
    def ref(a):
        out = _result_dtype(getattr(sp, name) if name != "gelu" else sp.erf, [a.dtype])
        t = torch.from_numpy(np.asarray(a, dtype=np.float64))
        fn = torch.nn.functional.gelu if name == "gelu" else getattr(torch.special, name)
        return fn(t).numpy().astype(out)
    return ref


def _rsqrt(a):
    return 1.0 / np.sqrt(a)


def _reciprocal_ref(a):
    if a.dtype.kind in "iub":
        return 1.0 / a.astype(np.float64)  # the true value, not numpy's integer truncation
    return (np.ones((), a.dtype) / a).astype(a.dtype)


def _sigmoid_ref(a):
    x = a if a.dtype.kind == "f" else a.astype(np.float64)
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


# name -> (numpy function used for the dtype table, reference, (low, high) domain)
UNARY = {
    "sign": (np.sign, None, (-3, 3)),
    "abs": (np.abs, None, (-3, 3)),
    "negative": (np.negative, None, (-3, 3)),
    "floor": (np.floor, None, (-3, 3)),
    "round": (np.round, None, (-3, 3)),
    "ceil": (np.ceil, None, (-3, 3)),
    "square": (np.square, None, (-3, 3)),
    "sqrt": (np.sqrt, None, (0, 4)),
    "rsqrt": (_rsqrt, None, (0.2, 4)),
    "exp": (np.exp, None, (-3, 3)),
    "log": (np.log, None, (0.2, 5)),
    "sin": (np.sin, None, (-3, 3)),
    "sinh": (np.sinh, None, (-3, 3)),
    "cos": (np.cos, None, (-3, 3)),
    "cosh": (np.cosh, None, (-3, 3)),
    "tan": (np.tan, None, (-1.2, 1.2)),
    "tanh": (np.tanh, None, (-3, 3)),
    "asin": (np.arcsin, None, (-0.9, 0.9)),
    "asinh": (np.arcsinh, None, (-3, 3)),
    "acos": (np.arccos, None, (-0.9, 0.9)),
    "acosh": (np.arccosh, None, (1, 4)),
    "atan": (np.arctan, None, (-3, 3)),
    "atanh": (np.arctanh, None, (-0.9, 0.9)),
    "reciprocal": (np.reciprocal, _reciprocal_ref, (-3, 3)),
    "log1p": (np.log1p, None, (-0.5, 3)),
    "gelu": (sp.erf, _torch_ref("gelu"), (-3, 3)),
    "sigmoid": (sp.expit, _sigmoid_ref, (-3, 3)),
    "erf": (sp.erf, _torch_ref("erf"), (-2, 2)),
    "erfc": (sp.erfc, _torch_ref("erfc"), (-2, 2)),
    "erfinv": (sp.erfinv, _torch_ref("erfinv"), (-0.9, 0.9)),
    "expm1": (np.expm1, None, (-3, 3)),
    "logical_not": (np.logical_not, None, (-3, 3)),
    "bitwise_not": (np.invert, None, (-3, 3)),
}


def _nonzero_ints(a):
    if a.dtype == np.bool_:
        return np.ones_like(a)
    if a.dtype.kind in "iu":
        a = a.copy()
        a[a == 0] = 1
    return a


def _positive(a):
    return np.abs(a) + (0.5 if a.dtype.kind == "f" else 0) if a.dtype != np.bool_ else a


def _small_exponent(a):
    if a.dtype.kind in "iu":
        return np.abs(a.astype(np.int64)).clip(0, 3).astype(a.dtype)
    return a


def _squared_difference(a, b):
    return np.square(np.subtract(a, b))


# name -> (numpy function, fix-up of the first input, fix-up of the second input)
BINARY = {
    "add": (np.add, None, None),
    "subtract": (np.subtract, None, None),
    "multiply": (np.multiply, None, None),
    "divide": (np.true_divide, None, _nonzero_ints),
    "floordiv": (np.floor_divide, None, _nonzero_ints),
    "mod": (np.mod, None, _nonzero_ints),
    "floormod": (np.mod, None, _nonzero_ints),
    "pow": (np.power, _positive, _small_exponent),
    "minimum": (np.minimum, None, None),
    "maximum": (np.maximum, None, None),
    "equal": (np.equal, None, None),
    "not_equal": (np.not_equal, None, None),
    "greater": (np.greater, None, None),
    "greater_equal": (np.greater_equal, None, None),
    "less": (np.less, None, None),
    "less_equal": (np.less_equal, None, None),
    "squared_difference": (_squared_difference, None, None),
    "atan2": (np.arctan2, None, None),
    "logical_or": (np.logical_or, None, None),
    "logical_and": (np.logical_and, None, None),
    "logical_xor": (np.logical_xor, None, None),
    "bitwise_and": (np.bitwise_and, None, None),
    "bitwise_or": (np.bitwise_or, None, None),
    "bitwise_xor": (np.bitwise_xor, None, None),
}

MIXED_PAIRS = [(np.int32, np.float32), (np.uint8, np.int8), (np.bool_, np.int32),
               (np.int64, np.float64), (np.float32, np.float64), (np.uint8, np.float32)]
_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor"}

SAMPLES = {}
REJECTS = {}


def _add_unary(name, fn, ref, domain):
    ref = ref or _numpy_ref(fn)
    for dt in ALL_DTYPES:
        if _result_dtype(fn, [np.dtype(dt)]) is None:
            REJECTS.setdefault(name, []).append(Sample([values((3,), dt)], note=np.dtype(dt).name))
            continue
        for seed, shape in enumerate(UNARY_SHAPES):
            a = values(shape, dt, *domain, seed=seed)
            SAMPLES.setdefault(name, []).append(Sample([a], ref=ref))


def _add_binary(name, fn, fix_a, fix_b):
    ref = _numpy_ref(fn)
    pairs = [((dt, dt), BINARY_SHAPES) for dt in ALL_DTYPES]
    pairs += [(pair, BINARY_SHAPES[4:6]) for pair in MIXED_PAIRS]
    for (da, db), shapes in pairs:
        refused = _result_dtype(fn, [np.dtype(da), np.dtype(db)]) is None
        if name in _INT_ONLY and (np.dtype(da).kind == "f" or np.dtype(db).kind == "f"):
            refused = True
        if refused:
            REJECTS.setdefault(name, []).append(
                Sample([values((3,), da), values((3,), db)]))
            continue
        for seed, (sa, sb) in enumerate(shapes):
            a = values(sa, da, seed=seed)
            b = values(sb, db, seed=seed + 100)
            a = fix_a(a) if fix_a else a
            b = fix_b(b) if fix_b else b
            SAMPLES.setdefault(name, []).append(Sample([a, b], ref=ref))


for _name, (_fn, _ref, _domain) in UNARY.items():
    _add_unary(_name, _fn, _ref, _domain)
for _name, (_fn, _fa, _fb) in BINARY.items():
    _add_binary(_name, _fn, _fa, _fb)

# Integer division by zero is refused (numpy would warn and return 0).
_I32 = np.int32
REJECTS.setdefault("floordiv", []).append(
    Sample([np.array([1, 2], _I32), np.array([1, 0], _I32)], note="int-div-by-zero"))
REJECTS.setdefault("mod", []).append(
    Sample([np.array([1, 2], _I32), np.array([0, 1], _I32)], note="int-mod-by-zero"))
REJECTS.setdefault("pow", []).append(
    Sample([np.array([2], _I32), np.array([-1], _I32)], note="int-negative-power"))
REJECTS.setdefault("add", []).append(
    Sample([np.zeros((2, 3), np.float32), np.zeros((4,), np.float32)], note="no-broadcast"))


def _cast_ref(dtype):
    def ref(a, dtype=dtype):
        return a.astype(dtype)
    return ref


SAMPLES["cast"] = []
for _src in ALL_DTYPES:
    for _dst in ALL_DTYPES:
        _a = values((3, 5), _src, -100, 100) if np.dtype(_src).kind != "b" else values((3, 5), _src)
        if np.dtype(_dst) == np.uint8 or np.dtype(_dst) == np.int8:
            _a = values((3, 5), _src, 0, 100) if np.dtype(_src).kind != "b" else _a
        SAMPLES["cast"].append(Sample([_a], {"dtype": np.dtype(_dst)}, ref=_cast_ref(_dst)))
SAMPLES["cast"].append(Sample([np.float32(2.7)], {"dtype": np.dtype(np.int32)},
                              ref=_cast_ref(np.int32), note="scalar"))
