"""Ops that create tensors: ``fill``, ``zeros_like``, ``ones_like``, ``range``."""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["fill", "zeros_like", "ones_like", "range"]


def _shape_arg(shape):
    if hasattr(shape, "read"):
        shape = shape.read()
    shape = tuple(int(d) for d in np.atleast_1d(np.asarray(shape)).ravel())
    if any(d < 0 for d in shape):
        raise OpError(f"fill: shape {list(shape)} has a negative dimension")
    return shape


def _fill_infer(metas, shape):
    return [(shape, metas[0].dtype)]


def _fill_compute(arrays, shape):
    value = arrays[0]
    if value.size != 1:
        raise OpError(f"fill value must have one element, got shape {list(value.shape)}")
    return np.full(shape, value.reshape(()), dtype=value.dtype)


def _fill_grad(inputs, outputs, grads, shape):
    from .reduce import reduce_sum
    from .movement import reshape

    return [reshape(reduce_sum(grads[0]), inputs[0].shape, zero_copies=False)]


register(OpDef("fill", _fill_infer, _fill_compute, _fill_grad))


def fill(shape, value):
    """A tensor of ``shape`` filled with the scalar ``value`` (its dtype kept)."""
    return apply("fill", [to_var(value)], shape=_shape_arg(shape))[0]


def _like_infer(metas, value):
    return [(metas[0].shape, metas[0].dtype)]


def _like_compute(arrays, value):
    return np.full(arrays[0].shape, value, dtype=arrays[0].dtype)


def _no_grad(inputs, outputs, grads, value):
    return [None]


register(OpDef("full_like", _like_infer, _like_compute, _no_grad))


def zeros_like(x):
    """Zeros with the shape and dtype of ``x``."""
    return apply("full_like", [to_var(x)], value=0)[0]


def ones_like(x):
    """Ones with the shape and dtype of ``x``."""
    return apply("full_like", [to_var(x)], value=1)[0]


def _range_len(start, limit, delta):
    if delta == 0:
        raise OpError("range: delta must not be 0")
    return max(int(np.ceil((limit - start) / delta)), 0)


def _range_infer(metas):
    start, limit, delta = metas
    dtype = np.result_type(start.dtype, limit.dtype, delta.dtype)
    if any(m.value is None for m in metas):
        return [(None, dtype)]
    n = _range_len(*(m.value.reshape(()).item() for m in metas))
    return [((n,), dtype)]


def _range_compute(arrays):
    start, limit, delta = (a.reshape(()).item() for a in arrays)
    _range_len(start, limit, delta)
    return np.arange(start, limit, delta, dtype=np.result_type(*arrays))


register(OpDef("range", _range_infer, _range_compute))


def range(start, limit, delta):  # noqa: A001 - MNN's name
    """Values from ``start`` up to (not including) ``limit`` in steps of ``delta``."""
    return apply("range", [to_var(start), to_var(limit), to_var(delta)])[0]
