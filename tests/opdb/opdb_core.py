"""The op database: sample inputs for every op of the table, checked against numpy.

A samples file ``tests/opdb/samples_<family>.py`` defines ``SAMPLES``, a dict from op name
(as registered in the op table) to a list of :class:`Sample`, and optionally ``REJECTS``
in the same shape, listing inputs the op must refuse with a clear error. See README.md.
"""
import glob
import importlib.util
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

ALL_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.bool_)
FLOAT_DTYPES = (np.float32, np.float64)
INT_DTYPES = (np.int32, np.int64, np.uint8, np.int8)


class Sample:
    """One call of an op and its numpy reference.

    Parameters
    ----------
    inputs : list of ndarray
        The op's input arrays (each becomes ``F.const``). Their dtypes are kept exactly.
    attrs : dict
        The op's attributes, as ``graph.apply(name, inputs, **attrs)`` takes them.
    ref : callable
        ``ref(*inputs, **attrs)`` returns the expected array (or list of arrays for
        multi-output ops), computed with numpy; its dtype is the expected dtype.
        Omit it in ``REJECTS`` entries.
    rtol, atol : float, optional
        Tolerances for floating results; default by dtype (float32 1e-5/1e-6, float64
        1e-12/1e-12). Integer and bool results must match exactly.
    note : str
        Shown in the test id (what this sample exercises).
    """

    def __init__(self, inputs, attrs=None, ref=None, rtol=None, atol=None, note=""):
        self.inputs = [np.asarray(a) for a in inputs]
        self.attrs = dict(attrs or {})
        self.ref = ref
        self.rtol = rtol
        self.atol = atol
        self.note = note

    def describe(self):
        shapes = ",".join("x".join(str(d) for d in a.shape) or "s" for a in self.inputs)
        dtypes = ",".join(a.dtype.name for a in self.inputs)
        return f"{self.note}[{shapes}|{dtypes}]" if self.note else f"[{shapes}|{dtypes}]"


def sample_files():
    """Paths of every samples_*.py beside this file, sorted."""
    return sorted(glob.glob(os.path.join(HERE, "samples_*.py")))


def _load(path):
    name = "opdb_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(attribute):
    """``{op: [(file, Sample), ...]}`` merged over every samples file's ``attribute``."""
    out = {}
    for path in sample_files():
        module = _load(path)
        for op, samples in getattr(module, attribute, {}).items():
            out.setdefault(op, []).extend((os.path.basename(path), s) for s in samples)
    return out


def rng(seed=0):
    return np.random.default_rng(seed)


def values(shape, dtype, low=-3.0, high=3.0, seed=0, nonzero=False):
    """Deterministic test values of ``shape`` and ``dtype`` in ``[low, high]``."""
    r = rng(seed + 7919 * len(shape) + sum(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = max(int(np.ceil(low)), int(np.iinfo(dtype).min))
        hi = min(int(np.floor(high)), int(np.iinfo(dtype).max))
        arr = r.integers(lo, hi + 1, size=shape).astype(dtype)
        if nonzero:
            arr[arr == 0] = 1 if hi >= 1 else -1
        return arr
    arr = r.uniform(low, high, size=shape).astype(dtype)
    if nonzero:
        arr[np.abs(arr) < 0.1] = 0.5
    return arr


# Shapes each elementwise family is sampled on: a scalar, size-1, odd sizes.
UNARY_SHAPES = [(), (1,), (3, 5), (2, 1, 7)]
# Pairs of shapes that broadcast (scalar, size-1, odd sizes, both directions).
BINARY_SHAPES = [((), ()), ((3, 5), ()), ((), (4,)), ((1,), (5,)), ((3, 5), (3, 5)),
                 ((3, 1, 5), (4, 1)), ((7,), (2, 1))]
