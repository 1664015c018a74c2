"""Matrix products: ``matmul`` (batched, broadcasting, transposeA/B)."""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["matmul"]


def _matmul_shape(a, b, ta, tb):
    if len(a) < 1 or len(b) < 1:
        raise OpError("inputs must be at least 1-d")
    a1, b1 = len(a) == 1, len(b) == 1
    a2 = (1,) + tuple(a) if a1 else tuple(a)
    b2 = tuple(b) + (1,) if b1 else tuple(b)
    if ta and not a1:
        a2 = a2[:-2] + (a2[-1], a2[-2])
    if tb and not b1:
        b2 = b2[:-2] + (b2[-1], b2[-2])
    if a2[-1] != b2[-2]:
        raise OpError(f"inner dimensions differ: {a2[-1]} vs {b2[-2]}")
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise OpError("batch dimensions cannot be broadcast") from None
    out = tuple(batch) + ((a2[-2],) if not a1 else ()) + ((b2[-1],) if not b1 else ())
    return out


def _matmul_infer(metas, transpose_a, transpose_b):
    a, b = metas
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype == np.bool_:
        raise OpError("matmul of bool tensors is not defined")
    return [(_matmul_shape(a.shape, b.shape, transpose_a, transpose_b), dtype)]


def _t(x, flag):
    return np.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x


def _matmul_compute(arrays, transpose_a, transpose_b):
    a, b = arrays
    dtype = np.result_type(a, b)
    return np.matmul(_t(a, transpose_a).astype(dtype, copy=False),
                     _t(b, transpose_b).astype(dtype, copy=False))


def _matmul_grad(inputs, outputs, grads, transpose_a, transpose_b):
    from .elementwise import _unbroadcast
    from .movement import reshape

    a, b = inputs
    g = grads[0]
    a_shape, b_shape = a.shape, b.shape
    # Promote 1-d operands to matrices so one rule covers every case.
    a2 = reshape(a, [1] + a_shape, zero_copies=False) if len(a_shape) == 1 else a
    b2 = reshape(b, b_shape + [1], zero_copies=False) if len(b_shape) == 1 else b
    g2 = g
    if len(a_shape) == 1 or len(b_shape) == 1:
        # A 1-d operand dropped an axis from the output: put it back (only then, so
        # the gradient graph carries no identity reshapes).
        g2 = reshape(g, _matmul_shape(a2.shape, b2.shape, transpose_a, transpose_b),
                     zero_copies=False)
    if transpose_a:
        ga = matmul(b2, g2, transposeA=transpose_b, transposeB=True)
    else:
        ga = matmul(g2, b2, transposeB=not transpose_b)
    if transpose_b:
        gb = matmul(g2, a2, transposeA=True, transposeB=transpose_a)
    else:
        gb = matmul(a2, g2, transposeA=not transpose_a)
    ga = _unbroadcast(ga, a2.shape)
    gb = _unbroadcast(gb, b2.shape)
    if len(a_shape) == 1:
        ga = reshape(ga, a_shape, zero_copies=False)
    if len(b_shape) == 1:
        gb = reshape(gb, b_shape, zero_copies=False)
    return [ga, gb]


register(OpDef("matmul", _matmul_infer, _matmul_compute, _matmul_grad))


def matmul(a, b, transposeA=False, transposeB=False):  # noqa: N803 - MNN's names
    """Matrix product of ``a`` and ``b`` (numpy's ``matmul`` rules; MNN's transpose flags
    swap the last two axes of an operand first).

    Parameters
    ----------
    a, b : Var or array_like
    transposeA, transposeB : bool
    """
    return apply("matmul", [to_var(a), to_var(b)], transpose_a=bool(transposeA),
                 transpose_b=bool(transposeB))[0]
