"""Parameter initialisers with MNN's formulas, and the generator they draw from.

MNN's layers default to ``xavier`` (Caffe's filler: uniform on ``[-s, s]`` with
``s = sqrt(3 / fan_in)``, ``fan_in = size / shape[0]``) for weights and zeros for biases.
Call :func:`seed` for reproducible initialisation and dropout masks.
"""
import numpy as np

from ..express.errors import MnnError

__all__ = ["seed", "generator", "xavier", "msra", "uniform", "gaussian", "constant",
           "FANIN", "FANOUT", "AVERAGE"]

# MNN's VarianceNorm choices for xavier / msra.
FANIN, FANOUT, AVERAGE = "fan_in", "fan_out", "average"

_rng = [np.random.default_rng()]


def seed(value):
    """Reseed the generator used by initialisers and dropout."""
    _rng[0] = np.random.default_rng(int(value))


def generator():
    """The ``numpy.random.Generator`` initialisers and dropout draw from."""
    return _rng[0]


def _fans(shape):
    size = int(np.prod(shape, dtype=np.int64))
    if not shape or size == 0:
        raise MnnError(f"mnn: cannot initialise a parameter of shape {list(shape)}")
    fan_in = size // shape[0]
    fan_out = size // shape[1] if len(shape) > 1 else size
    return fan_in, fan_out


def _norm(shape, norm):
    fan_in, fan_out = _fans(shape)
    if norm == FANIN:
        return float(fan_in)
    if norm == FANOUT:
        return float(fan_out)
    if norm == AVERAGE:
        return (fan_in + fan_out) / 2.0
    raise MnnError(f"mnn: variance norm must be one of {FANIN!r}, {FANOUT!r}, "
                   f"{AVERAGE!r}, got {norm!r}")


def xavier(shape, norm=FANIN, dtype=np.float32):
    """Uniform on ``[-s, s]``, ``s = sqrt(3 / n)`` (MNN's and Caffe's xavier filler)."""
    scale = np.sqrt(3.0 / _norm(shape, norm))
    return generator().uniform(-scale, scale, size=tuple(shape)).astype(dtype)


def msra(shape, norm=FANIN, dtype=np.float32):
    """Normal with standard deviation ``sqrt(2 / n)`` (MNN's and Caffe's MSRA filler)."""
    std = np.sqrt(2.0 / _norm(shape, norm))
    return (generator().standard_normal(tuple(shape)) * std).astype(dtype)


def uniform(shape, low=0.0, high=1.0, dtype=np.float32):
    """Uniform on ``[low, high)``."""
    return generator().uniform(low, high, size=tuple(shape)).astype(dtype)


def gaussian(shape, mean=0.0, std=1.0, dtype=np.float32):
    """Normal with ``mean`` and ``std``."""
    return (generator().standard_normal(tuple(shape)) * std + mean).astype(dtype)


def constant(shape, value=0.0, dtype=np.float32):
    """Every element ``value``."""
    return np.full(tuple(shape), value, dtype=dtype)
