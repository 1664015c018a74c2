"""mnn.numpy.linalg: norms, solving, inverses, determinants and the SVD (numpy.linalg's
names; batched over leading axes). Integer inputs compute in float64.

``solve``, ``inv``, ``det`` and every ``norm`` except the spectral ones are
differentiable.
"""
import numpy as np

from ...express.errors import OpError
from ...express.ops import elementwise as _ew
from ...express.ops import np_linalg as _nla
from ...express.ops import reduce as _red
from ...express.ops.elementwise import cast
from .._util import asvar, axes_tuple, axis_index

__all__ = ["norm", "solve", "inv", "det", "slogdet", "svd", "LinAlgError"]

LinAlgError = OpError


def _float(x):
    return x if x.dtype.kind == "f" else cast(x, np.float64)


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002 - numpy's name
    absx = _ew.abs(x)
    ax = [axis]
    if ord is None or ord == 2:
        return _ew.sqrt(_red.reduce_sum(x * x, ax, keepdims=keepdims))
    if ord == np.inf:
        return _red.reduce_max(absx, ax, keepdims=keepdims)
    if ord == -np.inf:
        return _red.reduce_min(absx, ax, keepdims=keepdims)
    if ord == 0:
        return _red.reduce_sum(cast(_ew.not_equal(x, 0), x.dtype), ax, keepdims=keepdims)
    if ord == 1:
        return _red.reduce_sum(absx, ax, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    p = float(ord)
    return _ew.pow(_red.reduce_sum(_ew.pow(absx, p), ax, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x, ord, row, col, keepdims):  # noqa: A002
    from ...express.ops.movement import reshape, transpose

    if ord in (None, "fro", "f"):
        return _ew.sqrt(_red.reduce_sum(x * x, [row, col], keepdims=keepdims))
    absx = _ew.abs(x)
    if ord in (1, -1, np.inf, -np.inf):
        # 1: largest column sum (sum over rows); inf: largest row sum.
        sum_axis, other = (row, col) if ord in (1, -1) else (col, row)
        sums = _red.reduce_sum(absx, [sum_axis], keepdims=True)
        pick = _red.reduce_max if ord in (1, np.inf) else _red.reduce_min
        out = pick(sums, [other], keepdims=True)
    elif ord in (2, -2, "nuc"):
        # Move the two axes last for the batched SVD.
        rest = [i for i in range(x.ndim) if i not in (row, col)]
        s = _nla.linalg_svd(transpose(x, rest + [row, col]), compute_uv=False)[0]
        if ord == "nuc":
            red = _red.reduce_sum(s, [-1])
        elif ord == 2:
            red = _red.reduce_max(s, [-1])
        else:
            red = _red.reduce_min(s, [-1])
        if not keepdims:
            return red
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        return reshape(red, shape)
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices")
    if keepdims:
        return out
    return reshape(out, [d for i, d in enumerate(out.shape) if i not in (row, col)])


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - numpy's name
    """Vector or matrix norm (numpy.linalg.norm's orders).

    Parameters
    ----------
    x : Var or array_like
    ord : {None, 'fro', 'nuc', inf, -inf, int or float}, optional
    axis : int or 2-tuple of int, optional
        None: the whole (1-d or 2-d) array, or the flattened array when ``ord`` is None.
    keepdims : bool

    Returns
    -------
    Var
    """
    x = _float(asvar(x))
    if axis is None:
        if ord is None:
            from ...express.ops.movement import reshape

            out = _ew.sqrt(_red.reduce_sum(x * x))
            return reshape(out, [1] * x.ndim) if keepdims else out
        if x.ndim == 1:
            return _vector_norm(x, ord, 0, keepdims)
        if x.ndim == 2:
            return _matrix_norm(x, ord, 0, 1, keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (int, np.integer)):
        return _vector_norm(x, ord, axis_index(axis, x.ndim), keepdims)
    axis = tuple(axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis_index(axis[0], x.ndim), keepdims)
    if len(axis) == 2:
        row, col = axis_index(axis[0], x.ndim), axis_index(axis[1], x.ndim)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
    axes_tuple(axis, x.ndim)
    raise ValueError("Improper number of dimensions to norm.")


def solve(a, b):
    """The solution ``x`` of ``a @ x = b``."""
    return _nla.linalg_solve(asvar(a), asvar(b))


def inv(a):
    """The inverse of square ``a``."""
    return _nla.linalg_inv(asvar(a))


def det(a):
    """The determinant of square ``a``."""
    return _nla.linalg_det(asvar(a))


def slogdet(a):
    """``(sign, logabsdet)`` of the determinant."""
    return _nla.linalg_slogdet(asvar(a))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition ``a = u @ diag(s) @ vh``: ``(u, s, vh)``, or ``s``
    alone when ``compute_uv`` is False (numpy's order; MNN's ``F.svd`` returns
    ``(s, u, vh)``)."""
    outs = _nla.linalg_svd(asvar(a), full_matrices, compute_uv)
    if not compute_uv:
        return outs[0]
    return tuple(outs)
