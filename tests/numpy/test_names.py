"""mnn.numpy has every name of the real MNN.numpy (and its linalg and random), each one
working: the MNN wheel's names are read from the installed wheel, and every callable of
ours is exercised against numpy in test_against_numpy.py or the tests listed here."""
import inspect
import os
import sys

import pytest

import mnn.numpy as mnp

from test_against_numpy import CASES

# Names the brief asks for beyond MNN.numpy's lists.
EXTRA_LINALG = {"inv", "det", "slogdet"}
EXTRA_RANDOM = {"seed", "choice", "shuffle", "permutation", "uniform", "normal"}

# Callables exercised in other test files of this folder (by name).
TESTED_ELSEWHERE = {
    "nditer", "ndenumerate", "ndindex", "nested_iters", "flatiter", "broadcast",
    "loadtxt", "fromfile", "put", "putmask", "place", "fill_diagonal", "put_along_axis",
    "fill", "finfo", "iinfo",
}


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


@pytest.fixture(scope="module")
def wheel_numpy():
    # ``import MNN`` prints a banner; the wheel is the oracle for the list of names.
    MNN_numpy = pytest.importorskip("MNN.numpy")
    return MNN_numpy


def test_every_mnn_numpy_name_exists(wheel_numpy):
    missing = sorted(_public(wheel_numpy) - _public(mnp))
    assert not missing, f"names MNN.numpy has and mnn.numpy lacks: {missing}"
    assert len(_public(wheel_numpy)) >= 278


def test_linalg_and_random_names(wheel_numpy):
    assert not (_public(wheel_numpy.linalg) | EXTRA_LINALG) - _public(mnp.linalg)
    assert not (_public(wheel_numpy.random) | EXTRA_RANDOM) - _public(mnp.random)


def test_every_callable_is_exercised(wheel_numpy):
    covered = {c.name for c in CASES} | TESTED_ELSEWHERE
    callables = {n for n in _public(mnp) if callable(getattr(mnp, n))
                 and not inspect.ismodule(getattr(mnp, n))
                 and not n[0].isupper() and n not in ("uint8", "int8", "int32", "int64",
                                                      "float32", "float64", "bool_")}
    untested = sorted(callables - covered)
    assert not untested, f"mnn.numpy functions without a test against numpy: {untested}"


def test_no_function_raises_not_implemented():
    root = os.path.dirname(mnp.__file__)
    ops = os.path.join(os.path.dirname(os.path.dirname(root)), "mnn", "express", "ops")
    paths = [os.path.join(d, f) for d, _, files in os.walk(root) for f in files
             if f.endswith(".py")]
    paths += [os.path.join(ops, f) for f in os.listdir(ops) if f.startswith("np_")]
    for path in paths:
        with open(path) as fh:
            assert "NotImplementedError" not in fh.read(), path


def test_constants():
    import math

    assert mnp.pi == math.pi and mnp.inf == float("inf") and mnp.newaxis is None
    assert mnp.e == math.e and mnp.nan != mnp.nan
    assert mnp.zeros(2, mnp.uint8).dtype.name == "uint8"
    assert mnp.ones(2, mnp.float64).dtype.name == "float64"
    assert "mnn.numpy" in sys.modules
