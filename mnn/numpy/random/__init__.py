"""mnn.numpy.random: random numbers as constant Vars.

Draws come from one numpy ``RandomState`` (Mersenne Twister) owned by this module, so
after ``seed(s)`` the values equal ``numpy.random.RandomState(s)``'s draws, cast to
MNN's default float32 / int32. ``randn`` is a true standard normal (MNN's returns
uniform numbers). The result of a call is fixed: reading it again gives the same values.
"""
import numpy as np

from ...express.var import Var, const
from .._util import asvar, npdtype

__all__ = ["seed", "rand", "randn", "randint", "random", "random_sample", "ranf", "sample",
           "uniform", "normal", "choice", "shuffle", "permutation"]

_state = np.random.RandomState()
_F32 = np.dtype(np.float32)


def seed(seed=None):  # noqa: A002 - numpy's name
    """Reseed the generator (None: from the operating system)."""
    _state.seed(seed)


def _size(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(int(a) for a in args[0])
    return tuple(int(a) for a in args)


def rand(*shape):
    """Uniform floats in [0, 1) of ``shape`` (float32); ``rand()`` gives a 0-d Var.

    ``rand(2, 3)`` as numpy; ``rand([2, 3])`` as MNN also works.
    """
    return const(_state.random_sample(_size(shape)).astype(_F32))


def randn(*shape):
    """Standard normal floats of ``shape`` (float32)."""
    return const(_state.standard_normal(_size(shape)).astype(_F32))


def random(size=None):
    """Uniform floats in [0, 1) (float32); a 0-d Var when ``size`` is None."""
    return const(np.asarray(_state.random_sample(size)).astype(_F32))


random_sample = random
ranf = random
sample = random


def randint(low, high=None, size=None, dtype=np.int32):
    """Integers in ``[low, high)`` (``[0, low)`` when ``high`` is None), int32 by
    default."""
    dt = npdtype(dtype)
    low = low.read() if isinstance(low, Var) else low
    high = high.read() if isinstance(high, Var) else high
    values = _state.randint(low, high, size=size, dtype=np.int64)
    return const(np.asarray(values).astype(dt))


def uniform(low=0.0, high=1.0, size=None):
    """Uniform floats in ``[low, high)`` (float32)."""
    return const(np.asarray(_state.uniform(low, high, size)).astype(_F32))


def normal(loc=0.0, scale=1.0, size=None):
    """Normal floats with mean ``loc`` and standard deviation ``scale`` (float32)."""
    return const(np.asarray(_state.normal(loc, scale, size)).astype(_F32))


def choice(a, size=None, replace=True, p=None):
    """Random picks from ``a`` (a Var/array, or ``arange(a)`` for an int), with or
    without replacement, optionally with probabilities ``p``."""
    if isinstance(a, (int, np.integer)):
        picks = _state.choice(int(a), size=size, replace=replace, p=p)
        return const(np.asarray(picks).astype(np.int32))
    x = asvar(a)
    if x.ndim == 0:
        raise ValueError("a must be 1-dimensional or an integer")
    probs = None if p is None else np.asarray(p.read() if isinstance(p, Var) else p)
    index = _state.choice(x.shape[0], size=size, replace=replace, p=probs)
    from ...express.ops.np_take import take

    return take(x, const(np.asarray(index).astype(np.int32)), 0)


def permutation(x):
    """A randomly permuted copy along the first axis (``arange(x)`` for an int)."""
    if isinstance(x, (int, np.integer)):
        return const(_state.permutation(int(x)).astype(np.int32))
    v = asvar(x)
    if v.ndim == 0:
        raise ValueError("x must be an integer or at least 1-dimensional")
    from ...express.ops.np_take import take

    order = _state.permutation(v.shape[0]).astype(np.int32)
    return take(v, const(order), 0)


def shuffle(x):
    """Shuffle the Var ``x`` along its first axis (``x`` is rebound to the result)."""
    if not isinstance(x, Var):
        raise TypeError("mnn.numpy.random.shuffle: x must be a Var")
    x.replace(permutation(Var(x.expr, x.index)))
