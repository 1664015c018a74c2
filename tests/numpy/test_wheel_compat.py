"""The same calls through the real wheel's MNN.numpy and through mnn.numpy give the same
values, for the functions the wheel implements (MNN users' scripts keep working)."""
import contextlib
import io

import numpy as np
import pytest

import mnn.numpy as mnp

from numpy_helpers import data

A = data((3, 4))
B = data((3, 4), seed=1, low=0.5)
C3 = data((2, 3, 4), seed=2)


@pytest.fixture(scope="module")
def wnp():
    with contextlib.redirect_stdout(io.StringIO()):
        import MNN.numpy as wheel_numpy
    return wheel_numpy


def _value(result):
    if isinstance(result, (list, tuple)):
        return [_value(r) for r in result]
    if hasattr(result, "read"):
        return np.array(result.read(), copy=True)
    return np.asarray(result)


CALLS = {
    "arange": lambda np_, a, b, c: np_.arange(0, 10, 2),
    "reshape": lambda np_, a, b, c: np_.reshape(a, [4, 3]),
    "transpose": lambda np_, a, b, c: np_.transpose(c, [2, 0, 1]),
    "swapaxes": lambda np_, a, b, c: np_.swapaxes(c, 0, 2),
    "moveaxis": lambda np_, a, b, c: np_.moveaxis(c, 0, -1),
    "expand_dims": lambda np_, a, b, c: np_.expand_dims(a, 1),
    "squeeze": lambda np_, a, b, c: np_.squeeze(np_.expand_dims(a, 0), 0),
    "concatenate": lambda np_, a, b, c: np_.concatenate([a, b], 1),
    "stack": lambda np_, a, b, c: np_.stack([a, b], 1),
    "vstack": lambda np_, a, b, c: np_.vstack([a, b]),
    "hstack": lambda np_, a, b, c: np_.hstack([a, b]),
    "split": lambda np_, a, b, c: np_.split(a, 2, 1),
    "sum": lambda np_, a, b, c: np_.sum(c, 1),
    "mean": lambda np_, a, b, c: np_.mean(c, 2),
    "max": lambda np_, a, b, c: np_.max(a, 0),
    "min": lambda np_, a, b, c: np_.min(a, 1),
    "prod": lambda np_, a, b, c: np_.prod(b, 0),
    "argmax": lambda np_, a, b, c: np_.argmax(a, 1),
    "argmin": lambda np_, a, b, c: np_.argmin(a, 0),
    "sort": lambda np_, a, b, c: np_.sort(a, 1),
    "argsort": lambda np_, a, b, c: np_.argsort(a, 1),
    "tile": lambda np_, a, b, c: np_.tile(a, [2, 3]),
    "clip": lambda np_, a, b, c: np_.clip(a, -1.0, 1.0),
    "where": lambda np_, a, b, c: np_.where(np_.greater(a, b), a, b),
    "dot": lambda np_, a, b, c: np_.dot(a, np_.transpose(b)),
    "norm": lambda np_, a, b, c: np_.linalg.norm(a, 1, 1),
    "exp_log": lambda np_, a, b, c: np_.log(np_.exp(a) + b),
    "maximum": lambda np_, a, b, c: np_.maximum(a, b),
    "pad": lambda np_, a, b, c: np_.pad(a, [[1, 2], [2, 1]], "reflect"),
    "pad_symmetric": lambda np_, a, b, c: np_.pad(a, 1, "symmetric"),
    "cumsum": lambda np_, a, b, c: np_.cumsum(a, 1),
    "std": lambda np_, a, b, c: np_.std(c, 1),
    "var": lambda np_, a, b, c: np_.var(c, 0),
    "ptp": lambda np_, a, b, c: np_.ptp(a, 1),
    "square_sqrt": lambda np_, a, b, c: np_.sqrt(np_.square(a) + b),
    "atleast_2d": lambda np_, a, b, c: np_.atleast_2d(np_.arange(0, 3, 1)),
    "broadcast_to": lambda np_, a, b, c: np_.broadcast_to(a, [2, 3, 4]),
    "identity": lambda np_, a, b, c: np_.identity(3),
    "eye": lambda np_, a, b, c: np_.eye(3),
    "full_like": lambda np_, a, b, c: np_.full_like(a, 2.5),
    "floor_divide": lambda np_, a, b, c: np_.floor_divide(a, b),
    "hypot": lambda np_, a, b, c: np_.hypot(a, b),
    "argwhere": lambda np_, a, b, c: np_.argwhere(np_.greater(a, 0.0)),
    "nonzero": lambda np_, a, b, c: np_.nonzero(np_.greater(a, 0.0)),
    "count_nonzero": lambda np_, a, b, c: np_.count_nonzero(np_.greater(a, 0.0), 1),
    "meshgrid": lambda np_, a, b, c: np_.meshgrid(np_.arange(0, 3, 1), np_.arange(0, 2, 1)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_values_as_the_wheel(wnp, name):
    fn = CALLS[name]
    theirs = _value(fn(wnp, wnp.array(A), wnp.array(B), wnp.array(C3)))
    ours = _value(fn(mnp, mnp.array(A), mnp.array(B), mnp.array(C3)))
    if isinstance(theirs, list):
        assert len(ours) == len(theirs)
        pairs = zip(ours, theirs)
    else:
        pairs = [(ours, theirs)]
    for o, t in pairs:
        assert o.shape == t.shape, f"{name}: shape {o.shape} vs wheel {t.shape}"
        np.testing.assert_allclose(o.astype(np.float64), t.astype(np.float64), rtol=1e-5,
                                   atol=1e-5, err_msg=name)


def test_full_reductions_are_scalars_in_both(wnp):
    # The wheel returns Python numbers; mnn.numpy returns 0-d Vars (documented), equal
    # in value.
    assert float(mnp.sum(mnp.array(A))) == pytest.approx(wnp.sum(wnp.array(A)), rel=1e-5)
    assert float(mnp.mean(mnp.array(A))) == pytest.approx(wnp.mean(wnp.array(A)), rel=1e-5)
    assert int(mnp.argmax(mnp.array(A))) == wnp.argmax(wnp.array(A))
