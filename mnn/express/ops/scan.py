"""Scans: ``cumsum`` (with ONNX's exclusive/reverse flags) and ``cumprod``.

Results keep the input's dtype (bool sums give int32), as MNN does; numpy would widen
small integers to int64.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["cumprod", "cumsum"]


def _axis(axis, ndim):
    if ndim == 0:
        raise OpError("needs at least a 1-d input")
    if not -ndim <= axis < ndim:
        raise OpError(f"axis {axis} is out of range for a {ndim}-d input")
    return axis % ndim


def _out_dtype(dt):
    return np.dtype(np.int32) if dt == np.bool_ else dt


def _scan_infer(metas, axis, **flags):
    x = metas[0]
    _axis(axis, len(x.shape))
    return [(x.shape, _out_dtype(x.dtype))]


def _cumsum_compute(arrays, axis, exclusive, reverse):
    x = arrays[0]
    ax = _axis(axis, x.ndim)
    dt = _out_dtype(x.dtype)
    if reverse:
        x = np.flip(x, ax)
    out = np.cumsum(x, axis=ax, dtype=dt)
    if exclusive:
        out = np.roll(out, 1, axis=ax)
        out[(slice(None),) * ax + (0,)] = 0
    if reverse:
        out = np.flip(out, ax)
    return np.ascontiguousarray(out)


def _cumsum_grad(inputs, outputs, grads, axis, exclusive, reverse):
    # Each output sums a window of inputs; the adjoint sums the gradient over the windows
    # containing each input: a scan in the opposite direction with the same exclusivity.
    return [cumsum(grads[0], axis, exclusive=exclusive, reverse=not reverse)]


register(OpDef("cumsum", _scan_infer, _cumsum_compute, _cumsum_grad))


def cumsum(x, axis=0, exclusive=False, reverse=False):
    """Cumulative sum of ``x`` along ``axis`` (MNN's ``cumsum``; ONNX CumSum's flags).

    Parameters
    ----------
    x : Var or array_like
    axis : int
    exclusive : bool
        Leave each element out of its own sum (the first result is 0).
    reverse : bool
        Sum from the end of the axis.
    """
    return apply("cumsum", [to_var(x)], axis=int(axis), exclusive=bool(exclusive),
                 reverse=bool(reverse))[0]


def _cumprod_compute(arrays, axis):
    x = arrays[0]
    ax = _axis(axis, x.ndim)
    return np.cumprod(x, axis=ax, dtype=_out_dtype(x.dtype))


def _cumprod_grad(inputs, outputs, grads, axis):
    # d y_j / d x_i = y_j / x_i for j >= i: written for nonzero inputs (zeros give
    # inf/nan, as in reduce_prod's rule).
    x, y, g = inputs[0], outputs[0], grads[0]
    return [cumsum(g * y, axis, reverse=True) / x]


register(OpDef("cumprod", _scan_infer, _cumprod_compute, _cumprod_grad))


def cumprod(x, axis=0):
    """Cumulative product of ``x`` along ``axis`` (MNN's ``cumprod``).

    Parameters
    ----------
    x : Var or array_like
    axis : int
    """
    return apply("cumprod", [to_var(x)], axis=int(axis))[0]
