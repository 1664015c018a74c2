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

__all__ = ["norm", "solve", "inv", "det", "slogdet", "svd", "cholesky", "qr", "eigh",
           "eigvalsh", "pinv", "lstsq", "matrix_power", "multi_dot", "matrix_rank", "cond",
           "LinAlgError"]

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


def cholesky(a, /, *, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix (lower by default)."""
    return _nla.linalg_cholesky(asvar(a), upper)


def qr(a, mode="reduced"):
    """QR decomposition: ``(q, r)``, or ``r`` alone for ``mode='r'``."""
    if mode == "r":
        return _nla.linalg_qr(asvar(a), "reduced")[1]
    q, r = _nla.linalg_qr(asvar(a), mode)
    return q, r


def eigh(a, UPLO="L"):  # noqa: N803 - numpy's name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix: ``(w, v)``."""
    w, v = _nla.linalg_eigh(asvar(a), UPLO)
    return w, v


def eigvalsh(a, UPLO="L"):  # noqa: N803
    """Eigenvalues (ascending) of a symmetric matrix."""
    return _nla.linalg_eigvalsh(asvar(a), UPLO)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """The Moore-Penrose pseudo-inverse."""
    return _nla.linalg_pinv(asvar(a), rcond if rcond is not None else rtol, hermitian)


def lstsq(a, b, rcond=None):
    """Least squares: ``(x, residuals, rank, s)`` as numpy.linalg.lstsq."""
    x, res, rank, s = _nla.linalg_lstsq(asvar(a), asvar(b), rcond)
    return x, res, rank, s


def matrix_power(a, n):
    """``a`` multiplied by itself ``n`` times (``inv(a)`` powers for negative ``n``),
    by repeated squaring with differentiable matmuls."""
    from ...express.ops.linalg import matmul

    x = _float(asvar(a)) if int(n) < 0 else asvar(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power needs square matrices, got shape {x.shape}")
    n = int(n)
    if n == 0:
        from ..creation import eye
        from ...express.ops.movement import broadcast_to

        return broadcast_to(eye(x.shape[-1], dtype=x.dtype), x.shape)
    if n < 0:
        x, n = inv(x), -n
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices (first may be 1-d, last may be 1-d)."""
    from ..products import dot

    if out is not None:
        raise TypeError("mnn.numpy.linalg.multi_dot: out= is not supported")
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = asvar(arrays[0])
    for nxt in arrays[1:]:
        result = dot(result, asvar(nxt))
    return result


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    """Number of singular values above ``tol`` (default: ``S.max() * max(M, N) * eps``)."""
    x = _float(asvar(A))
    if x.ndim < 2:
        return cast(_red.reduce_any(_ew.not_equal(x, 0)), np.int32)
    s = _nla.linalg_svd(x, compute_uv=False)[0]
    smax = _red.reduce_max(s, [-1], keepdims=True)
    if tol is None:
        factor = rtol if rtol is not None else \
            max(x.shape[-2:]) * float(np.finfo(x.dtype).eps)
        limit = smax * factor
    else:
        limit = asvar(tol)
    return _red.reduce_sum(cast(_ew.greater(s, limit), np.int32), [-1])


def cond(x, p=None):
    """Condition number: ratio of extreme singular values for ``p`` None/2/-2, else
    ``norm(x, p) * norm(inv(x), p)``."""
    v = _float(asvar(x))
    if p is None or p in (2, -2):
        s = _nla.linalg_svd(v, compute_uv=False)[0]
        hi, lo = _red.reduce_max(s, [-1]), _red.reduce_min(s, [-1])
        return lo / hi if p == -2 else hi / lo
    return norm(v, p, axis=(-2, -1)) * norm(inv(v), p, axis=(-2, -1))
