"""MNN.expr's smaller ops: ``one_hot``, ``setdiff1d``, ``unravel_index``, ``histogram``,
``shape``, ``rank``, ``size``, ``matrix_band_part``, ``svd``.

Shape queries return int32 (MNN). ``setdiff1d`` keeps ``x``'s order and repeats
(TensorFlow's and MNN's, not numpy's sorted unique ``setdiff1d``). ``one_hot`` gives an
all-``offValue`` row for an index outside ``[0, depth)`` (TensorFlow's rule).
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = [
    "histogram",
    "matrix_band_part",
    "one_hot",
    "rank",
    "setdiff1d",
    "shape",
    "size",
    "svd",
    "unravel_index",
]


# -- one_hot --------------------------------------------------------------------------------

def _one_hot_axis(axis, ndim):
    out_ndim = ndim + 1
    if not -out_ndim <= axis < out_ndim:
        raise OpError(f"axis {axis} is out of range for a {out_ndim}-d result")
    return axis % out_ndim


def _one_hot_infer(metas, depth, on_value, off_value, axis, dtype):
    idx = metas[0]
    if idx.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {idx.dtype}")
    if depth < 0:
        raise OpError(f"depth {depth} must not be negative")
    ax = _one_hot_axis(axis, len(idx.shape))
    shape = list(idx.shape)
    shape.insert(ax, depth)
    return [(tuple(shape), dtype)]


def _one_hot_compute(arrays, depth, on_value, off_value, axis, dtype):
    idx = arrays[0]
    ax = _one_hot_axis(axis, idx.ndim)
    hot = idx[..., None] == np.arange(depth)  # out-of-range indices match nothing
    out = np.where(hot, np.asarray(on_value, dtype), np.asarray(off_value, dtype))
    return np.moveaxis(out, -1, ax).astype(dtype, copy=False)


register(OpDef("one_hot", _one_hot_infer, _one_hot_compute))


def one_hot(indices, depth, onValue=1.0, offValue=0.0, axis=-1):
    """One-hot encode ``indices`` into a new axis of size ``depth`` at ``axis``.

    Parameters
    ----------
    indices : Var or array_like of int
    depth : int
    onValue, offValue : float
        Values at and away from the index (the result is float32, as MNN).
    axis : int
        Position of the new axis (-1: last).
    """
    return apply("one_hot", [to_var(indices)], depth=int(depth), on_value=float(onValue),
                 off_value=float(offValue), axis=int(axis),
                 dtype=np.dtype(np.float32))[0]


# -- setdiff1d ------------------------------------------------------------------------------

def _setdiff_values(x, y):
    return x[~np.isin(x, y)]


def _setdiff_infer(metas):
    x, y = metas
    if len(x.shape) != 1 or len(y.shape) != 1:
        raise OpError("x and y must be 1-d")
    if x.value is not None and y.value is not None:
        return [(_setdiff_values(x.value, y.value).shape, x.dtype)]
    return [(None, x.dtype)]


def _setdiff_compute(arrays):
    x, y = arrays
    if x.ndim != 1 or y.ndim != 1:
        raise OpError("x and y must be 1-d")
    return _setdiff_values(x, y)


register(OpDef("setdiff1d", _setdiff_infer, _setdiff_compute))


def setdiff1d(x, y):
    """The elements of 1-d ``x`` not in ``y``, in ``x``'s order, repeats kept."""
    return apply("setdiff1d", [to_var(x), to_var(y)])[0]


# -- unravel_index --------------------------------------------------------------------------

def _unravel_infer(metas, dims):
    idx = metas[0]
    if idx.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {idx.dtype}")
    if any(d < 1 for d in dims):
        raise OpError(f"shape {list(dims)} must be positive")
    if idx.value is not None:
        _check_flat(idx.value, dims)
    return [((len(dims),) + tuple(idx.shape), np.dtype(np.int32))]


def _check_flat(idx, dims):
    total = int(np.prod(dims, dtype=np.int64))
    if idx.size and (idx.min() < 0 or idx.max() >= total):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise OpError(f"flat index {int(bad)} is out of range for shape {list(dims)} "
                      f"({total} elements)")


def _unravel_compute(arrays, dims):
    idx = arrays[0]
    _check_flat(idx, dims)
    return np.stack(np.unravel_index(idx, dims)).astype(np.int32).reshape(
        (len(dims),) + idx.shape)


register(OpDef("unravel_index", _unravel_infer, _unravel_compute))


def unravel_index(indices, shape):
    """Coordinates of flat ``indices`` in an array of ``shape``: an int32 Var of shape
    ``[len(shape)] + indices.shape`` (numpy's tuple, stacked)."""
    if hasattr(shape, "read"):
        shape = shape.read()
    dims = tuple(int(d) for d in np.atleast_1d(np.asarray(shape)).ravel())
    return apply("unravel_index", [to_var(indices)], dims=dims)[0]


# -- histogram ------------------------------------------------------------------------------

def _hist_infer(metas, bins, low, high):
    if bins < 1:
        raise OpError(f"bin count {bins} must be at least 1")
    if not high > low:
        raise OpError(f"range [{low}, {high}] is empty")
    if metas[0].dtype == np.bool_:
        raise OpError("needs numbers, got bool")
    return [((bins,), np.dtype(np.float32))]


def _hist_compute(arrays, bins, low, high):
    counts, _ = np.histogram(arrays[0], bins=bins, range=(low, high))
    return counts.astype(np.float32)


register(OpDef("histogram", _hist_infer, _hist_compute))


def histogram(x, bins, min, max):
    """Counts of ``x`` in ``bins`` equal bins over ``[min, max]`` (values outside are
    ignored; ``max`` falls in the last bin), as float32 (MNN).

    Parameters
    ----------
    x : Var or array_like
    bins : int
    min, max : number
    """
    return apply("histogram", [to_var(x)], bins=int(bins), low=float(min), high=float(max))[0]


# -- shape, rank, size ----------------------------------------------------------------------

def _query_op(name, fn, out_shape):
    def infer(metas):
        return [(out_shape(metas[0].shape), np.dtype(np.int32))]

    def compute(arrays):
        return np.asarray(fn(arrays[0].shape), dtype=np.int32)

    register(OpDef(name, infer, compute))


_query_op("shape", lambda s: list(s), lambda s: (len(s),))
_query_op("rank", lambda s: len(s), lambda s: ())
_query_op("size", lambda s: int(np.prod(s, dtype=np.int64)), lambda s: ())


def shape(x):
    """The shape of ``x`` as a 1-d int32 Var."""
    return apply("shape", [to_var(x)])[0]


def rank(x):
    """The number of dimensions of ``x`` as a 0-d int32 Var."""
    return apply("rank", [to_var(x)])[0]


def size(x):
    """The number of elements of ``x`` as a 0-d int32 Var."""
    return apply("size", [to_var(x)])[0]


# -- matrix_band_part -----------------------------------------------------------------------

def _band_mask(rows, cols, lower, upper):
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if lower >= 0:
        keep &= (i - j) <= lower
    if upper >= 0:
        keep &= (j - i) <= upper
    return keep


def _band_infer(metas, lower, upper):
    x = metas[0]
    if len(x.shape) < 2:
        raise OpError(f"needs at least a 2-d input, got {len(x.shape)}-d")
    return [(x.shape, x.dtype)]


def _band_compute(arrays, lower, upper):
    x = arrays[0]
    mask = _band_mask(x.shape[-2], x.shape[-1], lower, upper)
    return np.where(mask, x, np.zeros((), x.dtype))


def _band_grad(inputs, outputs, grads, lower, upper):
    return [apply("matrix_band_part", [grads[0]], lower=lower, upper=upper)[0]]


register(OpDef("matrix_band_part", _band_infer, _band_compute, _band_grad))


def matrix_band_part(x, num_lower, num_upper):
    """Zero everything outside a band of each innermost matrix of ``x``.

    Parameters
    ----------
    x : Var
        At least 2-d.
    num_lower, num_upper : int or 0-d int Var
        Subdiagonals / superdiagonals kept; negative keeps the whole triangle.
    """
    def _int(v, name):
        arr = np.asarray(v.read() if hasattr(v, "read") else v)
        if arr.ndim != 0 or arr.dtype.kind not in "iu":
            raise OpError(f"matrix_band_part: {name} must be a 0-d integer, got {v!r}")
        return int(arr)

    return apply("matrix_band_part", [to_var(x)], lower=_int(num_lower, "num_lower"),
                 upper=_int(num_upper, "num_upper"))[0]


# -- svd ------------------------------------------------------------------------------------

def _svd_infer(metas):
    x = metas[0]
    if len(x.shape) != 2:
        raise OpError(f"needs a 2-d matrix, got {len(x.shape)}-d")
    if x.dtype.kind != "f":
        raise OpError(f"needs a float matrix, got {x.dtype}")
    m, n = x.shape
    k = min(m, n)
    return [((k,), x.dtype), ((m, k), x.dtype), ((k, n), x.dtype)]


def _svd_compute(arrays):
    x = arrays[0]
    if not np.all(np.isfinite(x)):
        raise OpError("the matrix holds inf or nan")
    u, w, vt = np.linalg.svd(x, full_matrices=False)
    return [w.astype(x.dtype), u.astype(x.dtype), vt.astype(x.dtype)]


register(OpDef("svd", _svd_infer, _svd_compute, n_outputs=3))


def svd(x):
    """Reduced singular value decomposition of a 2-d matrix: ``[w, u, vt]`` with
    ``x = u @ diag(w) @ vt``, ``w`` descending (MNN's order of results). Integer input is
    converted to float32, as pymnn does. No gradient rule."""
    x = to_var(x)
    if x.dtype.kind != "f":
        from .elementwise import cast

        x = cast(x, np.float32)
    return apply("svd", [x])
