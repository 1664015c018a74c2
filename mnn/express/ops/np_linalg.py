"""Dense linear algebra as ops: solve, inv, det, slogdet, svd, einsum.

Batched over leading axes as numpy.linalg. ``solve``/``inv``/``det``/``einsum`` carry
gradient rules written with express ops (so gradients are graphs): for ``X = A^-1 B``,
dB = A^-T G and dA = -dB X^T; for ``inv``, dA = -Y^T G Y^T; for ``det``,
dA = g det(A) A^-T; an einsum's operand gradient is another einsum.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["linalg_solve", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_svd",
           "einsum", "linalg_cholesky", "linalg_qr", "linalg_eigh", "linalg_eigvalsh",
           "linalg_pinv", "linalg_lstsq"]


def _float_dtype(dt):
    if dt.kind == "f":
        return dt
    return np.dtype(np.float64)


def _square(meta, what="matrix"):
    shape = meta.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise OpError(f"needs a square {what} (..., n, n), got shape {list(shape)}")


def _linalg_errors(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError as exc:
        raise OpError(f"linear algebra failed: {exc}") from None


def _t(x):
    from .movement import transpose

    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


# -- solve ------------------------------------------------------------------------------

def _solve_infer(metas):
    a, b = metas
    _square(a)
    n = a.shape[-1]
    if len(b.shape) == 1:
        if b.shape[0] != n:
            raise OpError(f"b of length {b.shape[0]} does not match a {n}x{n} matrix")
        if len(a.shape) != 2:
            raise OpError("a 1-d b needs a single 2-d matrix")
        shape = (n,)
    else:
        if b.shape[-2] != n:
            raise OpError(f"b's rows ({b.shape[-2]}) do not match a {n}x{n} matrix")
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise OpError("batch dimensions cannot be broadcast") from None
        shape = tuple(batch) + (n, b.shape[-1])
    return [(shape, _float_dtype(np.result_type(a.dtype, b.dtype)))]


def _solve_compute(arrays):
    a, b = arrays
    dtype = _float_dtype(np.result_type(a, b))
    return _linalg_errors(np.linalg.solve, a.astype(dtype), b.astype(dtype)).astype(dtype)


def _solve_grad(inputs, outputs, grads):
    from .elementwise import _unbroadcast
    from .linalg import matmul
    from .movement import reshape

    a, b = inputs
    x, g = outputs[0], grads[0]
    vector = b.ndim == 1
    gb = linalg_solve(_t(a), g)
    if vector:
        ga = matmul(reshape(gb, [-1, 1]), reshape(x, [1, -1])) * -1.0
        return [ga, gb]
    ga = matmul(gb, _t(x)) * -1.0
    return [_unbroadcast(ga, a.shape), _unbroadcast(gb, b.shape)]


register(OpDef("linalg_solve", _solve_infer, _solve_compute, _solve_grad))


def linalg_solve(a, b):
    """Solve ``a @ x = b`` for ``x`` (numpy.linalg.solve; batched).

    Parameters
    ----------
    a : Var, shape (..., n, n)
    b : Var, shape (n,) or (..., n, k)

    Returns
    -------
    Var
    """
    return apply("linalg_solve", [to_var(a), to_var(b)])[0]


# -- inv / det / slogdet ----------------------------------------------------------------

def _inv_infer(metas):
    _square(metas[0])
    return [(metas[0].shape, _float_dtype(metas[0].dtype))]


def _inv_compute(arrays):
    a = arrays[0]
    return _linalg_errors(np.linalg.inv, a).astype(_float_dtype(a.dtype))


def _inv_grad(inputs, outputs, grads):
    from .linalg import matmul

    yt = _t(outputs[0])
    return [matmul(matmul(yt, grads[0]), yt) * -1.0]


register(OpDef("linalg_inv", _inv_infer, _inv_compute, _inv_grad))


def linalg_inv(a):
    """The inverse of square ``a`` (batched); a singular matrix is an error."""
    return apply("linalg_inv", [to_var(a)])[0]


def _det_infer(metas):
    _square(metas[0])
    return [(metas[0].shape[:-2], _float_dtype(metas[0].dtype))]


def _det_compute(arrays):
    a = arrays[0]
    return np.asarray(np.linalg.det(a), dtype=_float_dtype(a.dtype))


def _det_grad(inputs, outputs, grads):
    from .movement import reshape

    a = inputs[0]
    scale = reshape(grads[0] * outputs[0], list(a.shape[:-2]) + [1, 1])
    return [scale * _t(linalg_inv(a))]


register(OpDef("linalg_det", _det_infer, _det_compute, _det_grad))


def linalg_det(a):
    """The determinant of square ``a`` (batched)."""
    return apply("linalg_det", [to_var(a)])[0]


def _slogdet_infer(metas):
    _square(metas[0])
    dtype = _float_dtype(metas[0].dtype)
    return [(metas[0].shape[:-2], dtype), (metas[0].shape[:-2], dtype)]


def _slogdet_compute(arrays):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    sign, logdet = np.linalg.slogdet(a)
    return [np.asarray(sign, dtype=dtype), np.asarray(logdet, dtype=dtype)]


register(OpDef("linalg_slogdet", _slogdet_infer, _slogdet_compute, n_outputs=2))


def linalg_slogdet(a):
    """Sign and natural log of the absolute determinant (batched)."""
    return tuple(apply("linalg_slogdet", [to_var(a)]))


# -- svd --------------------------------------------------------------------------------

def _svd_shapes(meta, full_matrices):
    shape = meta.shape
    if len(shape) < 2:
        raise OpError(f"svd needs at least a 2-d input, got shape {list(shape)}")
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    batch = tuple(shape[:-2])
    dtype = _float_dtype(meta.dtype)
    u = (batch + (m, m if full_matrices else k), dtype)
    s = (batch + (k,), dtype)
    vh = (batch + (n if full_matrices else k, n), dtype)
    return u, s, vh


def _svd_infer(metas, full_matrices):
    return list(_svd_shapes(metas[0], full_matrices))


def _svd_compute(arrays, full_matrices):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    out = _linalg_errors(np.linalg.svd, a.astype(dtype), full_matrices=full_matrices)
    return [np.asarray(o, dtype=dtype) for o in out]


register(OpDef("linalg_svd", _svd_infer, _svd_compute, n_outputs=3))


def _svdvals_infer(metas):
    return [_svd_shapes(metas[0], False)[1]]


def _svdvals_compute(arrays):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    out = _linalg_errors(np.linalg.svd, a.astype(dtype), compute_uv=False)
    return np.asarray(out, dtype=dtype)


register(OpDef("linalg_svdvals", _svdvals_infer, _svdvals_compute))


def linalg_svd(a, full_matrices=True, compute_uv=True):
    """Singular value decomposition ``a = u @ diag(s) @ vh`` (numpy.linalg.svd).

    Returns
    -------
    list of Var
        ``[u, s, vh]``, or ``[s]`` when ``compute_uv`` is False.
    """
    if not compute_uv:
        return apply("linalg_svdvals", [to_var(a)])
    return apply("linalg_svd", [to_var(a)], full_matrices=bool(full_matrices))


# -- einsum -----------------------------------------------------------------------------

def _parse_einsum(subscripts, ndims):
    """Explicit form ``in1,in2->out`` with ellipses expanded to letters."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
    else:
        lhs, rhs = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise OpError(f"subscripts name {len(terms)} operands, got {len(ndims)}")
    used = {c for c in subscripts if c.isalpha()}
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             if c not in used]
    n_ell = max([nd - (len(t) - 3) for t, nd in zip(terms, ndims) if "..." in t] or [0])
    ell = "".join(spare[:n_ell])
    out_terms = []
    for t, nd in zip(terms, ndims):
        if "..." in t:
            k = nd - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:] if k else "")
        if len(t) != nd:
            raise OpError(f"term {t!r} has {len(t)} letters for a {nd}-d operand")
        out_terms.append(t)
    if rhs is None:
        letters = "".join(out_terms)
        rhs = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return out_terms, rhs


def _einsum_infer(metas, subscripts):
    lhs, rhs = subscripts.split("->")
    terms = lhs.split(",")
    sizes = {}
    for term, m in zip(terms, metas):
        if len(term) != len(m.shape):
            raise OpError(f"term {term!r} has {len(term)} letters for a "
                          f"{len(m.shape)}-d operand")
        for letter, d in zip(term, m.shape):
            seen = sizes.get(letter)
            if seen is None or seen == 1:
                sizes[letter] = d
            elif d != 1 and d != seen:
                raise OpError(f"index {letter!r} has sizes {seen} and {d}")
    for letter in rhs:
        if letter not in sizes:
            raise OpError(f"output index {letter!r} appears in no operand")
    if len(set(rhs)) != len(rhs):
        raise OpError(f"output subscripts {rhs!r} repeat an index")
    dtype = np.result_type(*[m.dtype for m in metas])
    return [(tuple(sizes[c] for c in rhs), dtype)]


def _einsum_compute(arrays, subscripts):
    dtype = np.result_type(*arrays)
    return np.asarray(np.einsum(subscripts, *arrays, optimize=len(arrays) > 2), dtype=dtype)


def _einsum_grad(inputs, outputs, grads, subscripts):
    from .movement import broadcast_to

    terms, rhs = _parse_einsum(subscripts, [v.ndim for v in inputs])
    result = []
    for i, x in enumerate(inputs):
        if x.dtype.kind != "f":
            result.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != i]
        target = terms[i]
        # Letters of the operand that appear nowhere else were summed out: the
        # gradient is broadcast back over them; repeated letters (diagonals) are not
        # expressible this way.
        if len(set(target)) != len(target):
            raise OpError("einsum gradient through a repeated index (a diagonal) is not "
                          "supported")
        available = set(rhs) | set("".join(others))
        kept = "".join(c for c in target if c in available)
        spec = ",".join([rhs] + others) + "->" + kept
        g = einsum(spec, [grads[0]] + [v for j, v in enumerate(inputs) if j != i])
        if kept != target:
            from .movement import reshape

            shape = [x.shape[k] if c in available else 1 for k, c in enumerate(target)]
            order = [c for c in target if c in available]
            # kept is already in target order, so a reshape inserts the summed axes.
            assert "".join(order) == kept
            g = broadcast_to(reshape(g, shape), x.shape)
        result.append(g)
    return result


register(OpDef("einsum", _einsum_infer, _einsum_compute, _einsum_grad))


def einsum(subscripts, operands):
    """Einstein summation over ``operands`` as numpy's ``einsum`` (explicit or implicit
    output, ellipses allowed).

    Parameters
    ----------
    subscripts : str
    operands : sequence of Var or array_like

    Returns
    -------
    Var
    """
    operands = [to_var(o) for o in operands]
    if not operands:
        raise OpError("einsum: needs at least one operand")
    terms, rhs = _parse_einsum(str(subscripts), [o.ndim for o in operands])
    return apply("einsum", operands, subscripts=",".join(terms) + "->" + rhs)[0]


# -- cholesky / qr / eigh / pinv / lstsq ------------------------------------------------

def _cholesky_infer(metas, upper):
    _square(metas[0])
    return [(metas[0].shape, _float_dtype(metas[0].dtype))]


def _cholesky_compute(arrays, upper):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    low = _linalg_errors(np.linalg.cholesky, a.astype(dtype))
    return np.swapaxes(low, -1, -2).copy() if upper else low


register(OpDef("linalg_cholesky", _cholesky_infer, _cholesky_compute))


def linalg_cholesky(a, upper=False):
    """The Cholesky factor of a symmetric positive-definite ``a`` (lower, or upper)."""
    return apply("linalg_cholesky", [to_var(a)], upper=bool(upper))[0]


def _qr_infer(metas, mode):
    shape = metas[0].shape
    if len(shape) < 2:
        raise OpError(f"qr needs at least a 2-d input, got shape {list(shape)}")
    if mode not in ("reduced", "complete"):
        raise OpError(f"mode must be 'reduced' or 'complete', got {mode!r}")
    m, n = shape[-2], shape[-1]
    k = m if mode == "complete" else min(m, n)
    dtype = _float_dtype(metas[0].dtype)
    batch = tuple(shape[:-2])
    return [(batch + (m, k), dtype), (batch + (k, n), dtype)]


def _qr_compute(arrays, mode):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    q, r = _linalg_errors(np.linalg.qr, a.astype(dtype), mode=mode)
    return [q.astype(dtype), r.astype(dtype)]


register(OpDef("linalg_qr", _qr_infer, _qr_compute, n_outputs=2))


def linalg_qr(a, mode="reduced"):
    """QR decomposition ``a = q @ r`` (batched): ``[q, r]``."""
    return apply("linalg_qr", [to_var(a)], mode=str(mode))


def _eigh_infer(metas, uplo, vectors):
    _square(metas[0])
    if uplo not in ("L", "U"):
        raise OpError(f"UPLO must be 'L' or 'U', got {uplo!r}")
    shape, dtype = metas[0].shape, _float_dtype(metas[0].dtype)
    w = (shape[:-1], dtype)
    return [w, (shape, dtype)] if vectors else [w]


def _eigh_compute(arrays, uplo, vectors):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    if vectors:
        w, v = _linalg_errors(np.linalg.eigh, a.astype(dtype), UPLO=uplo)
        return [w.astype(dtype), v.astype(dtype)]
    return _linalg_errors(np.linalg.eigvalsh, a.astype(dtype), UPLO=uplo).astype(dtype)


register(OpDef("linalg_eigh", _eigh_infer, _eigh_compute, n_outputs=2))
register(OpDef("linalg_eigvalsh", _eigh_infer, _eigh_compute))


def linalg_eigh(a, uplo="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric ``a``: ``[w, v]``."""
    return apply("linalg_eigh", [to_var(a)], uplo=str(uplo), vectors=True)


def linalg_eigvalsh(a, uplo="L"):
    """Eigenvalues (ascending) of symmetric ``a``."""
    return apply("linalg_eigvalsh", [to_var(a)], uplo=str(uplo), vectors=False)[0]


def _pinv_infer(metas, rcond, hermitian):
    shape = metas[0].shape
    if len(shape) < 2:
        raise OpError(f"pinv needs at least a 2-d input, got shape {list(shape)}")
    return [(tuple(shape[:-2]) + (shape[-1], shape[-2]), _float_dtype(metas[0].dtype))]


def _pinv_compute(arrays, rcond, hermitian):
    a = arrays[0]
    dtype = _float_dtype(a.dtype)
    out = _linalg_errors(np.linalg.pinv, a.astype(dtype), rcond=rcond, hermitian=hermitian)
    return out.astype(dtype)


register(OpDef("linalg_pinv", _pinv_infer, _pinv_compute))


def linalg_pinv(a, rcond=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse (singular values below ``rcond`` times the
    largest are treated as zero; numpy's default cutoff when None)."""
    return apply("linalg_pinv", [to_var(a)], rcond=None if rcond is None else float(rcond),
                 hermitian=bool(hermitian))[0]


def _lstsq_infer(metas, rcond):
    a, b = metas
    if len(a.shape) != 2 or len(b.shape) not in (1, 2) or a.shape[0] != b.shape[0]:
        raise OpError(f"lstsq needs a (m, n) matrix and b of m rows, got {list(a.shape)} "
                      f"and {list(b.shape)}")
    dtype = _float_dtype(np.result_type(a.dtype, b.dtype))
    n = a.shape[1]
    x_shape = (n,) + tuple(b.shape[1:])
    # Residuals exist only for full-rank, over-determined systems: known once computed.
    return [(x_shape, dtype), (None, dtype), ((), np.dtype(np.int32)),
            ((min(a.shape),), dtype)]


def _lstsq_compute(arrays, rcond):
    a, b = arrays
    dtype = _float_dtype(np.result_type(a, b))
    x, res, rank, sv = _linalg_errors(np.linalg.lstsq, a.astype(dtype), b.astype(dtype),
                                      rcond=rcond)
    return [x.astype(dtype), res.astype(dtype), np.asarray(rank, np.int32),
            sv.astype(dtype)]


register(OpDef("linalg_lstsq", _lstsq_infer, _lstsq_compute, n_outputs=4))


def linalg_lstsq(a, b, rcond=None):
    """Least-squares solution of ``a @ x = b``: ``[x, residuals, rank, singular values]``."""
    return apply("linalg_lstsq", [to_var(a), to_var(b)],
                 rcond=None if rcond is None else float(rcond))
