"""Selection by a condition: ``select`` (ternary) and ``where`` (indices of true)."""
import numpy as np

from ..dtypes import to_numpy_dtype
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["select", "where"]


def _select_infer(metas):
    c, x, y = metas
    try:
        shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
    except ValueError:
        raise OpError("condition, x and y cannot be broadcast together") from None
    return [(shape, to_numpy_dtype(np.result_type(x.dtype, y.dtype)))]


def _select_compute(arrays):
    c, x, y = arrays
    out = to_numpy_dtype(np.result_type(x.dtype, y.dtype))
    return np.where(c.astype(bool, copy=False), x, y).astype(out, copy=False)


def _select_grad(inputs, outputs, grads):
    from .creation import zeros_like
    from .elementwise import _unbroadcast

    c, x, y = inputs
    g = grads[0]
    zero = zeros_like(g)
    return [None,
            _unbroadcast(select(c, g, zero), x.shape),
            _unbroadcast(select(c, zero, g), y.shape)]


register(OpDef("select", _select_infer, _select_compute, _select_grad))


def select(cond, x, y):
    """Elementwise ``x if cond else y`` with broadcasting (numpy's 3-argument ``where``)."""
    from .elementwise import _operands

    x, y = _operands(x, y)
    return apply("select", [to_var(cond), x, y])[0]


def _where_infer(metas):
    m = metas[0]
    if m.value is None:
        return [(None, np.dtype(np.int32))]
    return [((int(np.count_nonzero(m.value)), len(m.shape)), np.dtype(np.int32))]


def _where_compute(arrays):
    return np.argwhere(arrays[0]).astype(np.int32)


register(OpDef("where", _where_infer, _where_compute))


def where(x):
    """Coordinates of the nonzero elements of ``x``, shape ``[count, ndim]`` (MNN's and
    TensorFlow's ``where``; numpy's ``argwhere``)."""
    return apply("where", [to_var(x)])[0]
