"""Statistics: extremes, means, variances, order statistics, correlation, histograms.

Means, variances and quantiles of integers are float64 (numpy); float inputs keep their
dtype. Full reductions return 0-d Vars.
"""
import numpy as np

from ..express.ops import elementwise as _ew
from ..express.ops import movement as _mv
from ..express.ops import np_math as _nm
from ..express.ops import np_sorting as _nsort
from ..express.ops import np_stats as _nst
from ..express.ops import reduce as _red
from ..express.ops.elementwise import cast
from ..express.ops.linalg import matmul
from ..express.ops.selection import select
from ..express.var import Var, const
from ._util import asvar, axes_tuple, float_dtype, no_out, npdtype

__all__ = ["amax", "amin", "max", "min", "nanmax", "nanmin", "ptp", "mean", "nanmean",
           "average", "var", "nanvar", "std", "nanstd", "median", "nanmedian",
           "percentile", "nanpercentile", "quantile", "nanquantile", "cov", "corrcoef",
           "histogram", "histogram2d", "histogramdd", "histogram_bin_edges", "bincount",
           "digitize"]


def _masked(x, where, fill):
    if where is True:
        return x
    return select(asvar(where), x, const(np.asarray(fill, x.dtype)))


def _extreme(fn, a, axis, keepdims, initial, where, fill):
    x = asvar(a)
    axes = axes_tuple(axis, x.ndim)
    if where is not True and initial is None:
        raise ValueError("reduction operation has no identity: give initial= with where=")
    x = _masked(x, where, initial if initial is not None else fill)
    if not axes:
        out = cast(x, x.dtype)
    else:
        if any(x.shape[i] == 0 for i in axes) and initial is None:
            raise ValueError("zero-size array to reduction operation which has no "
                             "identity")
        out = fn(x, list(axes), keepdims=bool(keepdims))
    if initial is not None:
        pick = _ew.maximum if fn is _red.reduce_max else _ew.minimum
        out = pick(out, initial)
    return out


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The maximum along ``axis`` (all axes when None); NaN propagates."""
    no_out(out)
    return _extreme(_red.reduce_max, a, axis, keepdims, initial, where, -np.inf)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The minimum along ``axis`` (all axes when None); NaN propagates."""
    no_out(out)
    return _extreme(_red.reduce_min, a, axis, keepdims, initial, where, np.inf)


max = amax  # noqa: A001 - numpy's name
min = amin  # noqa: A001


def _nan_extreme(fn, a, axis, keepdims, fill):
    x = asvar(a)
    if x.dtype.kind != "f":
        return _extreme(fn, x, axis, keepdims, None, True, fill)
    nan = _nm.isnan(x)
    filled = select(nan, const(np.asarray(fill, x.dtype)), x)
    result = _extreme(fn, filled, axis, keepdims, None, True, fill)
    axes = axes_tuple(axis, x.ndim)
    all_nan = _red.reduce_all(nan, list(axes), keepdims=bool(keepdims)) if axes else nan
    # numpy returns NaN for an all-NaN slice (with a warning).
    return select(all_nan, const(np.asarray(np.nan, x.dtype)), result)


def _nan_reduce_args(a, where):
    x = asvar(a)
    if where is not True:
        if x.dtype.kind != "f":
            x = cast(x, np.float64)
        x = select(asvar(where), x, const(np.asarray(np.nan, x.dtype)))
    return x


def _with_initial(result, initial, pick):
    if initial is None:
        return result
    # fmax/fmin: an all-NaN (or fully masked) slice gives the initial value.
    return pick(result, initial)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The maximum ignoring NaN (NaN for all-NaN slices unless ``initial`` is given)."""
    no_out(out)
    x = _nan_reduce_args(a, where)
    result = _nan_extreme(_red.reduce_max, x, axis, keepdims, -np.inf)
    return _with_initial(result, initial, _nm.fmax)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The minimum ignoring NaN (NaN for all-NaN slices unless ``initial`` is given)."""
    no_out(out)
    x = _nan_reduce_args(a, where)
    result = _nan_extreme(_red.reduce_min, x, axis, keepdims, np.inf)
    return _with_initial(result, initial, _nm.fmin)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (maximum - minimum) along ``axis``."""
    no_out(out)
    return amax(a, axis, keepdims=keepdims) - amin(a, axis, keepdims=keepdims)


# -- means and spreads ------------------------------------------------------------------

def _float_input(a, dtype):
    x = asvar(a)
    if dtype is not None:
        return cast(x, npdtype(dtype))
    if x.dtype.kind != "f":
        return cast(x, float_dtype(x.dtype))
    return x


def _count(x, axes):
    return int(np.prod([x.shape[i] for i in axes], dtype=np.int64))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean along ``axis`` (all axes when None)."""
    no_out(out)
    x = _float_input(a, dtype)
    axes = axes_tuple(axis, x.ndim)
    if where is not True:
        w = cast(_mv.broadcast_to(asvar(where), x.shape), x.dtype)
        return _red.reduce_sum(x * w, list(axes), keepdims=bool(keepdims)) / \
            _red.reduce_sum(w, list(axes), keepdims=bool(keepdims))
    if not axes:
        return cast(x, x.dtype)
    return _red.reduce_mean(x, list(axes), keepdims=bool(keepdims))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted mean along ``axis``; with ``returned``, also the sum of weights."""
    x = _float_input(a, None)
    axes = axes_tuple(axis, x.ndim)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        if returned:
            count = float(_count(x, axes))
            return avg, _mv.broadcast_to(const(np.asarray(count, avg.dtype)), avg.shape)
        return avg
    w = asvar(weights)
    if w.shape != x.shape:
        if axis is None or isinstance(axis, (tuple, list)) and len(axes) != 1:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1 or w.shape[0] != x.shape[axes[0]]:
            raise ValueError("Length of weights not compatible with specified axis.")
        shape = [1] * x.ndim
        shape[axes[0]] = w.shape[0]
        w = _mv.reshape(w, shape)
    dt = np.result_type(x.dtype, w.dtype)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    x, w = cast(x, dt), cast(w, dt)
    wsum = _red.reduce_sum(_mv.broadcast_to(w, x.shape), list(axes), keepdims=bool(keepdims))
    avg = _red.reduce_sum(x * w, list(axes), keepdims=bool(keepdims)) / wsum
    if returned:
        return avg, wsum
    return avg


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):  # noqa: A002 - numpy's keyword names
    """Variance along ``axis``, dividing by ``N - ddof``."""
    no_out(out)
    if correction is not None:
        ddof = correction
    x = _float_input(a, dtype)
    axes = axes_tuple(axis, x.ndim)
    if where is not True:
        w = cast(_mv.broadcast_to(asvar(where), x.shape), x.dtype)
        n = _red.reduce_sum(w, list(axes), keepdims=True)
        mu = _red.reduce_sum(x * w, list(axes), keepdims=True) / n
        sq = _red.reduce_sum(_ew.square(x - mu) * w, list(axes), keepdims=bool(keepdims))
        n_out = n if keepdims else _red.reduce_sum(w, list(axes))
        return sq / (n_out - float(ddof))
    mu = asvar(mean) if mean is not None else \
        (_red.reduce_mean(x, list(axes), keepdims=True) if axes else x)
    sq = _ew.square(x - mu)
    total = _red.reduce_sum(sq, list(axes), keepdims=bool(keepdims)) if axes else sq
    return total / float(_count(x, axes) - ddof)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):  # noqa: A002
    """Standard deviation along ``axis``, dividing by ``N - ddof``."""
    return _ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


def _nan_parts(a, dtype):
    x = _float_input(a, dtype)
    valid = _ew.logical_not(_nm.isnan(x))
    filled = select(valid, x, const(np.zeros((), x.dtype)))
    return x, valid, filled


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean ignoring NaN (NaN for all-NaN slices)."""
    no_out(out)
    x, valid, filled = _nan_parts(a, dtype)
    valid = _masked(valid, where, False)
    filled = select(valid, filled, const(np.zeros((), x.dtype)))
    axes = list(axes_tuple(axis, x.ndim))
    count = _red.reduce_sum(cast(valid, x.dtype), axes, keepdims=bool(keepdims))
    return _red.reduce_sum(filled, axes, keepdims=bool(keepdims)) / count


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):  # noqa: A002
    """Variance ignoring NaN."""
    no_out(out)
    if correction is not None:
        ddof = correction
    x, valid, filled = _nan_parts(a, dtype)
    valid = _masked(valid, where, False)
    axes = list(axes_tuple(axis, x.ndim))
    zero = const(np.zeros((), x.dtype))
    count_k = _red.reduce_sum(cast(valid, x.dtype), axes, keepdims=True)
    mu = asvar(mean) if mean is not None else \
        _red.reduce_sum(select(valid, filled, zero), axes, keepdims=True) / count_k
    sq = select(valid, _ew.square(filled - mu), zero)
    count = _red.reduce_sum(cast(valid, x.dtype), axes, keepdims=bool(keepdims))
    return _red.reduce_sum(sq, axes, keepdims=bool(keepdims)) / (count - float(ddof))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):  # noqa: A002
    """Standard deviation ignoring NaN."""
    return _ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                           correction=correction))


# -- order statistics -------------------------------------------------------------------

def _q_var(q, scale):
    if isinstance(q, Var):
        return cast(q, np.float64) / scale
    return const(np.asarray(q, dtype=np.float64) / scale)


def _quantile(a, q, axis, keepdims, method, interpolation, ignore_nan, scale, out):
    no_out(out)
    if interpolation is not None:
        method = interpolation
    x = asvar(a)
    qv = _q_var(q, scale)
    axes = axes_tuple(axis, x.ndim)
    return _nst.quantile(x, qv, axes, method, keepdims, ignore_nan)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles (``q`` in [0, 1]) along ``axis``."""
    _no_weights(weights)
    return _quantile(a, q, axis, keepdims, method, interpolation, False, 1.0, out)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """:func:`quantile` ignoring NaN."""
    _no_weights(weights)
    return _quantile(a, q, axis, keepdims, method, interpolation, True, 1.0, out)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles (``q`` in [0, 100]) along ``axis``."""
    _no_weights(weights)
    return _quantile(a, q, axis, keepdims, method, interpolation, False, 100.0, out)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """:func:`percentile` ignoring NaN."""
    _no_weights(weights)
    return _quantile(a, q, axis, keepdims, method, interpolation, True, 100.0, out)


def _no_weights(weights):
    if weights is not None:
        raise TypeError("mnn.numpy: weighted quantiles (weights=) are not supported")


def _median(a, axis, out, keepdims, ignore_nan):
    x = asvar(a)
    if x.dtype == np.bool_:
        # numpy's median averages the middle values, which works for bools too.
        x = cast(x, np.float64)
    axes = axes_tuple(axis, x.ndim)
    if any(x.shape[i] == 0 for i in axes):
        no_out(out)
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keepdims else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        from .creation import full

        return full(shape, np.nan, float_dtype(x.dtype))
    return _quantile(x, 0.5, axis, keepdims, "linear", None, ignore_nan, 1.0, out)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (NaN over an empty axis, as numpy's)."""
    return _median(a, axis, out, keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaN."""
    return _median(a, axis, out, keepdims, True)


# -- covariance -------------------------------------------------------------------------

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        *, dtype=None):
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``
    (and ``y``), with optional frequency and analytic weights."""
    x = asvar(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    dt = npdtype(dtype) if dtype is not None else np.result_type(x.dtype, np.float64)
    x = cast(x, dt)
    if x.ndim == 1:
        x = _mv.reshape(x, [1, -1])
    if not rowvar and x.shape[0] != 1:
        x = _mv.transpose(x)
    if y is not None:
        yv = cast(asvar(y), dt)
        if yv.ndim == 1:
            yv = _mv.reshape(yv, [1, -1])
        if not rowvar and yv.shape[0] != 1:
            yv = _mv.transpose(yv)
        x = _mv.concat([x, yv], 0)
    n = x.shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = cast(asvar(fweights), dt)
    if aweights is not None:
        aw = cast(asvar(aweights), dt)
        w = aw if w is None else w * aw
    if w is None:
        avg = _red.reduce_mean(x, [1], keepdims=True)
        fact = float(n - ddof)
        xc = x - avg
        c = matmul(xc, xc, transposeB=True) / fact
    else:
        wsum = _red.reduce_sum(w)
        avg = _red.reduce_sum(x * w, [1], keepdims=True) / wsum
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = wsum - float(ddof)
        else:
            fact = wsum - float(ddof) * _red.reduce_sum(w * aw) / wsum
        xc = x - avg
        c = matmul(xc * w, xc, transposeB=True) / fact
    if c.shape == [1, 1]:
        return _mv.reshape(c, [])
    return c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (values clipped to [-1, 1] as numpy does)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _mv.reshape(_nsort_diag(c), [-1])
    s = _ew.sqrt(d)
    c = c / _mv.reshape(s, [-1, 1]) / _mv.reshape(s, [1, -1])
    return _ew.minimum(_ew.maximum(c, -1.0), 1.0)


def _nsort_diag(c):
    from ..express.ops.np_shape import diagonal

    return diagonal(c)


# -- histograms -------------------------------------------------------------------------

def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Counts of ``a`` in ``bins`` and the bin edges (numpy's ``histogram``; a string
    ``bins`` names numpy's estimator and computes ``a`` to choose the edges)."""
    x = asvar(a)
    if isinstance(bins, str):
        w = None if weights is None else np.asarray(asvar(weights))
        bins = np.histogram_bin_edges(np.asarray(x), bins, range, w)
    elif isinstance(bins, Var):
        bins = np.asarray(bins)
    return _nst.np_histogram(x, bins, range, bool(density),
                             None if weights is None else asvar(weights))


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges :func:`histogram` would use."""
    return histogram(a, bins, range, None, weights)[1]


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Multidimensional histogram of (N, D) samples (or a sequence of D 1-d arrays):
    float64 counts and a tuple of D edge Vars."""
    if isinstance(sample, (list, tuple)) and sample and not np.isscalar(sample[0]):
        s = _mv.stack([asvar(v) for v in sample], 1)
    else:
        s = asvar(sample)
        if s.ndim == 1:
            s = _mv.reshape(s, [-1, 1])
    if isinstance(bins, (int, np.integer)):
        spec = (int(bins),)
    else:
        spec = tuple(int(b) if isinstance(b, (int, np.integer))
                     else tuple(float(e) for e in np.asarray(b).ravel()) for b in bins)
    ranges = None if range is None else tuple(
        None if r is None else (float(r[0]), float(r[1])) for r in range)
    outs = _nst.np_histogramdd(s, spec, ranges, bool(density),
                               None if weights is None else asvar(weights))
    return outs[0], tuple(outs[1:])


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """2-d histogram of the points ``(x, y)``: counts and x and y edges."""
    if not isinstance(bins, (int, np.integer)) and len(bins) != 2:
        edges = np.asarray(bins)
        bins = (edges, edges)
    hist, edges = histogramdd([asvar(x), asvar(y)], bins, range, density, weights)
    return hist, edges[0], edges[1]


def bincount(x, weights=None, minlength=0):
    """Occurrences of each value of non-negative integer ``x`` (weighted sums with
    ``weights``)."""
    return _nsort.bincount(asvar(x), None if weights is None else asvar(weights), minlength)


def digitize(x, bins, right=False):
    """Index of the bin of each value of ``x``."""
    return _nsort.digitize(asvar(x), asvar(bins), right)
