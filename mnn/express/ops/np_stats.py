"""Order statistics and histograms as ops: ``quantile`` (which also gives median and
percentile, NaN-ignoring or not) and numpy's ``histogram``.

Float inputs keep their dtype; integer inputs give float64, as numpy.
"""
import warnings

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .reduce import normalize_axes

__all__ = ["quantile", "np_histogram", "np_histogramdd"]

_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _float_dtype(dt):
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _quantile_infer(metas, axis, method, keepdims, ignore_nan):
    a, q = metas
    if method not in _METHODS:
        raise OpError(f"method {method!r} is not one of {', '.join(_METHODS)}")
    if a.dtype.kind not in "iubf":
        raise OpError(f"needs numbers, got {a.dtype}")
    if q.value is not None and (np.any(q.value < 0) or np.any(q.value > 1)):
        raise OpError("quantiles must be in the range [0, 1]")
    axes = normalize_axes(axis, len(a.shape))
    if any(a.shape[i] == 0 for i in axes):
        raise OpError("cannot take a quantile over an empty axis")
    if keepdims:
        rest = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    else:
        rest = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    return [(tuple(q.shape) + rest, _float_dtype(a.dtype))]


def _quantile_compute(arrays, axis, method, keepdims, ignore_nan):
    a, q = arrays
    if np.any(q < 0) or np.any(q > 1):
        raise OpError("quantiles must be in the range [0, 1]")
    fn = np.nanquantile if ignore_nan else np.quantile
    axes = normalize_axes(axis, a.ndim)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # An all-NaN slice gives NaN, as numpy's result says; its warning is noise.
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            out = fn(a, q.astype(np.float64), axis=axes, method=method, keepdims=keepdims)
        except (ValueError, TypeError) as exc:
            raise OpError(str(exc)) from None
    return np.asarray(out, dtype=_float_dtype(a.dtype))


register(OpDef("quantile", _quantile_infer, _quantile_compute))


def quantile(a, q, axis=None, method="linear", keepdims=False, ignore_nan=False):
    """The ``q``-th quantiles of ``a`` over ``axis`` (numpy's ``quantile``).

    Parameters
    ----------
    a : Var or array_like
    q : float or array_like in [0, 1]
        The result's leading axes have ``q``'s shape.
    axis : int or tuple of int, optional
        All axes when None.
    method : str
        One of numpy's 13 estimation methods.
    keepdims : bool
    ignore_nan : bool
        Skip NaN values (``nanquantile``).

    Returns
    -------
    Var
    """
    a = to_var(a)
    q = to_var(np.asarray(q, dtype=np.float64) if not hasattr(q, "read") else q)
    axes = normalize_axes(axis, a.ndim)
    return apply("quantile", [a, q], axis=axes, method=str(method), keepdims=bool(keepdims),
                 ignore_nan=bool(ignore_nan))[0]


# -- histogram --------------------------------------------------------------------------

def _hist_infer(metas, nbins, lo, hi, density):
    a = metas[0]
    if a.dtype.kind not in "iubf":
        raise OpError(f"needs numbers, got {a.dtype}")
    weighted = len(metas) == (2 if nbins else 3)
    if nbins is None:
        edges = metas[1]
        if len(edges.shape) != 1 or edges.shape[0] < 2:
            raise OpError("bin edges must be 1-d with at least 2 entries")
        n = edges.shape[0] - 1
        edge_dtype = _float_dtype(edges.dtype) if density else edges.dtype
    else:
        if nbins < 1:
            raise OpError(f"bins must be positive, got {nbins}")
        if lo is not None and not lo <= hi:
            raise OpError(f"max must be larger than min in range ({lo}, {hi})")
        n = nbins
        edge_dtype = _float_dtype(a.dtype)
    if weighted and tuple(metas[-1].shape) != tuple(a.shape):
        raise OpError("weights must have the shape of the input")
    if density:
        count_dtype = np.dtype(np.float64)
    elif weighted:
        count_dtype = metas[-1].dtype if metas[-1].dtype.kind == "f" else np.dtype(np.int64)
    else:
        count_dtype = np.dtype(np.int64)
    return [((n,), count_dtype), ((n + 1,), edge_dtype)]


def _hist_compute(arrays, nbins, lo, hi, density):
    a = arrays[0]
    weighted = len(arrays) == (2 if nbins else 3)
    weights = arrays[-1] if weighted else None
    bins = nbins if nbins else arrays[1]
    rng = None if lo is None else (lo, hi)
    try:
        hist, edges = np.histogram(a, bins=bins, range=rng, weights=weights,
                                   density=density)
    except ValueError as exc:
        raise OpError(str(exc)) from None
    if nbins:
        edges = edges.astype(_float_dtype(a.dtype), copy=False)
    return [hist, edges]


register(OpDef("np_histogram", _hist_infer, _hist_compute, n_outputs=2))


def np_histogram(a, bins=10, range=None, density=False, weights=None):  # noqa: A002
    """numpy's ``histogram``: counts of ``a`` in ``bins`` and the bin edges.

    Parameters
    ----------
    a : Var or array_like
    bins : int or array_like
        A number of equal bins over ``range``, or the edges themselves.
    range : (float, float), optional
        Defaults to ``(a.min(), a.max())``.
    density : bool
    weights : Var or array_like, optional

    Returns
    -------
    (Var, Var)
        The counts (int64, or the weights' type, or float64 densities) and the edges.
    """
    a = to_var(a)
    inputs = [a]
    if isinstance(bins, (int, np.integer)):
        nbins = int(bins)
    else:
        nbins = None
        inputs.append(to_var(bins))
    if weights is not None:
        inputs.append(to_var(weights))
    lo = hi = None
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    return tuple(apply("np_histogram", inputs, nbins=nbins, lo=lo, hi=hi,
                       density=bool(density)))


# -- histogramdd ------------------------------------------------------------------------

def _histdd_bins(bins, ndim):
    if len(bins) not in (1, ndim):
        raise OpError(f"{len(bins)} bin specifications for {ndim}-d samples")
    return bins * ndim if len(bins) == 1 else bins


def _histdd_infer(metas, bins, ranges, density):
    sample = metas[0]
    if len(sample.shape) != 2:
        raise OpError(f"samples must be (N, D), got shape {list(sample.shape)}")
    ndim = sample.shape[1]
    if len(metas) == 2 and tuple(metas[1].shape) != (sample.shape[0],):
        raise OpError("weights must have one entry per sample")
    if ranges is not None and len(ranges) != ndim:
        raise OpError(f"{len(ranges)} ranges for {ndim}-d samples")
    counts, edges = [], []
    for b in _histdd_bins(bins, ndim):
        n = b if isinstance(b, int) else len(b) - 1
        if n < 1:
            raise OpError("every dimension needs at least one bin")
        counts.append(n)
        edges.append(((n + 1,), np.dtype(np.float64)))
    return [(tuple(counts), np.dtype(np.float64))] + edges


def _histdd_compute(arrays, bins, ranges, density):
    sample = arrays[0]
    weights = arrays[1] if len(arrays) == 2 else None
    spec = [b if isinstance(b, int) else np.asarray(b)
            for b in _histdd_bins(bins, sample.shape[1])]
    try:
        hist, edges = np.histogramdd(sample, bins=spec, range=ranges, density=density,
                                     weights=weights)
    except ValueError as exc:
        raise OpError(str(exc)) from None
    return [hist.astype(np.float64)] + [e.astype(np.float64) for e in edges]


register(OpDef("np_histogramdd", _histdd_infer, _histdd_compute, n_outputs=-1))


def np_histogramdd(sample, bins=(10,), ranges=None, density=False, weights=None):
    """numpy's ``histogramdd`` on (N, D) samples: float64 counts and D edge arrays.

    ``bins`` holds one int or one tuple of edges per dimension (or one for all);
    ``ranges`` one ``(lo, hi)`` pair per dimension or None.
    """
    inputs = [to_var(sample)]
    if weights is not None:
        inputs.append(to_var(weights))
    return apply("np_histogramdd", inputs, bins=tuple(bins), ranges=ranges,
                 density=bool(density))
