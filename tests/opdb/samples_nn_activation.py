"""Samples of the activations and softmax (mnn/express/ops/nn_activation.py), referenced
by numpy/scipy formulas. Float ops refuse integer inputs (REJECTS); relu and relu6 also
take integers."""
import numpy as np
import scipy.special as sp
from opdb_core import FLOAT_DTYPES, INT_DTYPES, UNARY_SHAPES, Sample, values


def _f(fn):
    def ref(x, **attrs):
        return np.asarray(fn(x.astype(np.float64), **attrs)).astype(x.dtype)
    return ref


def _relu(x, slope):
    return np.where(x > 0, x, x * slope)


def _relu6(x, min_value, max_value):
    return np.minimum(np.maximum(x, min_value), max_value)


def _elu(x, alpha):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


def _selu(x, scale, alpha):
    return scale * _elu(x, alpha)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _silu(x):
    return x * sp.expit(x)


def _hardswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def _hardsigmoid(x, alpha, beta):
    return np.clip(alpha * x + beta, 0, 1)


def _softplus(x):
    return np.logaddexp(0, x)


def _softsign(x):
    return x / (1 + np.abs(x))


def _softmax(x, axis):
    return sp.softmax(x, axis=axis)


def _log_softmax(x, axis):
    return sp.log_softmax(x, axis=axis)


def _prelu(x, s):
    shape = (1, -1) + (1,) * (x.ndim - 2) if s.size > 1 else (1,) * x.ndim
    return np.where(x > 0, x, x * s.reshape(shape)).astype(x.dtype)


_UNARY = {"elu": (_elu, [{"alpha": 1.0}, {"alpha": 0.3}]),
          "selu": (_selu, [{"scale": 1.0507009873554805, "alpha": 1.6732632423543772}]),
          "gelu_tanh": (_gelu_tanh, [{}]), "silu": (_silu, [{}]),
          "hardswish": (_hardswish, [{}]),
          "hardsigmoid": (_hardsigmoid, [{"alpha": 0.2, "beta": 0.5}]),
          "softplus": (_softplus, [{}]), "softsign": (_softsign, [{}]),
          "relu": (_relu, [{"slope": 0.0}, {"slope": 0.1}]),
          "relu6": (_relu6, [{"min_value": 0.0, "max_value": 6.0},
                             {"min_value": -1.0, "max_value": 2.0}])}

SAMPLES = {name: [] for name in _UNARY}
for _name, (_fn, _attr_sets) in _UNARY.items():
    for _dt in FLOAT_DTYPES:
        for _shape in UNARY_SHAPES:
            for _attrs in _attr_sets:
                SAMPLES[_name].append(Sample([values(_shape, _dt, -7, 7)], _attrs, _f(_fn)))
for _name in ("relu", "relu6"):
    for _dt in INT_DTYPES:
        if _dt == np.uint8 and _name == "relu6":
            continue
        _attrs = _UNARY[_name][1][0]
        SAMPLES[_name].append(Sample([values((3, 5), _dt, -7, 7)], _attrs, _f(_UNARY[_name][0])))

SAMPLES["softmax"] = []
SAMPLES["log_softmax"] = []
for _dt in FLOAT_DTYPES:
    for _shape, _axis in (((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 1, 4), 2), ((2, 3, 4), 1)):
        _x = values(_shape, _dt, -9, 9)
        SAMPLES["softmax"].append(Sample([_x], {"axis": _axis}, _f(_softmax)))
        SAMPLES["log_softmax"].append(Sample([_x], {"axis": _axis}, _f(_log_softmax)))

SAMPLES["prelu"] = [
    Sample([values((2, 3, 4, 5), np.float32), values((3,), np.float32, seed=1)], {}, _prelu),
    Sample([values((2, 3), np.float64), values((1,), np.float64, seed=2)], {}, _prelu),
    Sample([values((1, 4, 3), np.float64), values((4,), np.float64, seed=3)], {}, _prelu),
]

REJECTS = {name: [Sample([values((3,), np.int32)], attrs[0])]
           for name, (_, attrs) in _UNARY.items() if name not in ("relu", "relu6")}
REJECTS["relu"] = [Sample([values((3,), np.bool_)], {"slope": 0.0})]
REJECTS["softmax"] = [Sample([values((3,), np.int32)], {"axis": 0}),
                      Sample([values((3,), np.float32)], {"axis": 1})]
REJECTS["log_softmax"] = [Sample([values((3,), np.int64)], {"axis": 0})]
REJECTS["prelu"] = [Sample([values((1, 3, 2), np.float32), values((2,), np.float32)], {}),
                    Sample([values((1, 3, 2), np.float32), values((3,), np.float64)], {})]


def _relu_grad(x, g, slope):
    return np.where(x > 0, g, g * x.dtype.type(slope)).astype(x.dtype)


SAMPLES["relu_grad"] = [
    Sample([values(_shape, _dt, -5, 5), values(_shape, _dt, -3, 3, seed=1)],
           {"slope": _slope}, _relu_grad)
    for _dt in FLOAT_DTYPES for _shape in ((), (1,), (3, 5), (2, 3, 4, 7))
    for _slope in (0.0, 0.1)
]
REJECTS["relu_grad"] = [
    Sample([values((3,), np.int32), values((3,), np.int32)], {"slope": 0.0}),
    Sample([values((3,), np.float32), values((3,), np.float64)], {"slope": 0.0}),
    Sample([values((3,), np.float32), values((2, 3), np.float32)], {"slope": 0.0}),
]
