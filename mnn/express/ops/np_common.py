"""Shared helpers of the numpy-named op modules (``np_*.py``); no ops here."""
import numpy as np

from ..errors import OpError

__all__ = []


def axis_of(axis, ndim):
    """``axis`` as a non-negative int, checked against ``ndim``."""
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise OpError(f"axis {axis} is out of bounds for a {ndim}-d input")
    return axis % ndim if ndim else 0


def proxy(meta):
    """A read-only array of ``meta``'s shape and dtype that costs no memory.

    Used to let numpy itself tell the output shape of shape-only functions at build time
    (their result for zeros has the same shape as for the real data).
    """
    return np.broadcast_to(np.zeros((), meta.dtype), meta.shape)


def run_on_proxies(fn, metas, **kwargs):
    """``(shape, dtype)`` of ``fn`` applied to proxies of ``metas``, numpy's errors as
    OpError."""
    try:
        out = np.asarray(fn(*[proxy(m) for m in metas], **kwargs))
    except (ValueError, IndexError, TypeError) as exc:
        raise OpError(str(exc)) from None
    return out.shape, out.dtype


def known_values(metas):
    """The constant values of all inputs, or None if any is not known at build time."""
    if all(m.value is not None for m in metas):
        return [m.value for m in metas]
    return None


def numpy_errors(fn, *args, **kwargs):
    """Call ``fn`` turning numpy's ValueError/IndexError/TypeError into OpError."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, IndexError, TypeError) as exc:
        raise OpError(str(exc)) from None


def int_tuple(values):
    """A tuple of Python ints from an int, a sequence, an ndarray or a Var."""
    if hasattr(values, "read"):
        values = values.read()
    return tuple(int(v) for v in np.atleast_1d(np.asarray(values)).ravel())
