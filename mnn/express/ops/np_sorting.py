"""numpy's set, search and counting functions as ops: unique, searchsorted, digitize,
partition, argpartition, lexsort, bincount, trim_zeros, compress.

Results that are positions or counts are int32 (MNN's integer type; numpy uses int64).
Ops whose output size depends on the data report an unknown shape until computed,
unless their inputs are constants.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .np_common import axis_of, int_tuple, known_values

__all__ = ["unique", "searchsorted", "digitize", "partition", "argpartition", "lexsort",
           "bincount", "trim_zeros", "compress"]

_INDEX = np.dtype(np.int32)


# -- unique -----------------------------------------------------------------------------

def _unique_numpy(x, axis, equal_nan, extras):
    """numpy's unique with only the requested extras computed (each costs a sort or a
    pass); an extra not requested is an empty int32 array, so the op always has four
    outputs and can follow ops whose output sizes are only known once computed."""
    with_index, with_inverse, with_counts = extras
    out = np.unique(x, return_index=with_index, return_inverse=with_inverse,
                    return_counts=with_counts, axis=axis, equal_nan=equal_nan)
    rest = iter(out[1:]) if any(extras) else iter(())
    values = out[0] if any(extras) else out
    result = [values]
    for wanted in extras:
        result.append(next(rest).astype(_INDEX).reshape(-1) if wanted
                      else np.zeros(0, _INDEX))
    return result


def _unique_infer(metas, axis, equal_nan, extras):
    x = metas[0]
    if axis is not None:
        axis_of(axis, len(x.shape))
    # Sizes depend on the data; even for constants they are left to the compute, which
    # would otherwise sort twice.
    return [(None, x.dtype)] + [(None if wanted else (0,), _INDEX) for wanted in extras]


def _unique_compute(arrays, axis, equal_nan, extras):
    return _unique_numpy(arrays[0], axis, equal_nan, extras)


register(OpDef("unique", _unique_infer, _unique_compute, n_outputs=4))


def unique(x, axis=None, equal_nan=True, return_index=False, return_inverse=False,
           return_counts=False):
    """Sorted unique values of ``x`` and, as requested, the first index of each, the
    inverse map (flat) and the counts (numpy's ``unique``; extras int32).

    Parameters
    ----------
    x : Var or array_like
    axis : int, optional
        Unique sub-arrays along this axis; flattened input when None.
    equal_nan : bool
    return_index, return_inverse, return_counts : bool

    Returns
    -------
    list of Var
        ``[values]`` followed by the requested extras in that order.
    """
    x = to_var(x)
    extras = (bool(return_index), bool(return_inverse), bool(return_counts))
    outs = apply("unique", [x], axis=None if axis is None else axis_of(axis, x.ndim),
                 equal_nan=bool(equal_nan), extras=extras)
    return [outs[0]] + [o for o, wanted in zip(outs[1:], extras) if wanted]


# -- searchsorted / digitize ------------------------------------------------------------

def _search_infer(metas, side):
    a, v = metas
    if len(a.shape) != 1:
        raise OpError(f"the sorted array must be 1-d, got shape {list(a.shape)}")
    if side not in ("left", "right"):
        raise OpError(f"side must be 'left' or 'right', got {side!r}")
    return [(v.shape, _INDEX)]


def _search_compute(arrays, side):
    a, v = arrays
    return np.searchsorted(a, v, side=side).astype(_INDEX)


register(OpDef("searchsorted", _search_infer, _search_compute))


def searchsorted(a, v, side="left"):
    """Indices where ``v`` would be inserted into sorted 1-d ``a`` to keep it sorted.

    Parameters
    ----------
    a : Var or array_like
        1-d, ascending.
    v : Var or array_like
    side : {'left', 'right'}

    Returns
    -------
    Var of int32, shape of ``v``
    """
    return apply("searchsorted", [to_var(a), to_var(v)], side=str(side))[0]


def _digitize_infer(metas, right):
    x, bins = metas
    if len(bins.shape) != 1:
        raise OpError(f"bins must be 1-d, got shape {list(bins.shape)}")
    return [(x.shape, _INDEX)]


def _digitize_compute(arrays, right):
    x, bins = arrays
    if bins.size > 1:
        steps = np.diff(bins)
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise OpError("bins must be monotonically increasing or decreasing")
    return np.digitize(x, bins, right=right).astype(_INDEX)


register(OpDef("digitize", _digitize_infer, _digitize_compute))


def digitize(x, bins, right=False):
    """Index of the bin each value of ``x`` falls in (numpy's ``digitize``).

    Parameters
    ----------
    x : Var or array_like
    bins : Var or array_like
        1-d, monotonic.
    right : bool
        Whether intervals include their right edge.

    Returns
    -------
    Var of int32
    """
    return apply("digitize", [to_var(x), to_var(bins)], right=bool(right))[0]


# -- partition / argpartition / lexsort -------------------------------------------------

def _kth_check(kth, length):
    for k in kth:
        if not -length <= k < length:
            raise OpError(f"kth {k} is out of bounds for an axis of size {length}")


def _partition_infer(metas, kth, axis, arg):
    x = metas[0]
    if axis is None:
        n = int(np.prod(x.shape, dtype=np.int64))
        _kth_check(kth, n)
        shape = (n,)
    else:
        ax = axis_of(axis, len(x.shape))
        _kth_check(kth, x.shape[ax])
        shape = x.shape
    return [(shape, _INDEX if arg else x.dtype)]


def _partition_compute(arrays, kth, axis, arg):
    x = arrays[0]
    if arg:
        return np.argpartition(x, list(kth), axis=axis).astype(_INDEX)
    return np.partition(x, list(kth), axis=axis)


register(OpDef("partition", _partition_infer, _partition_compute))


def partition(x, kth, axis=-1):
    """Partially sort ``x`` so that each ``kth`` element is where a full sort puts it,
    smaller ones before it and larger ones after (numpy's ``partition``).

    Parameters
    ----------
    x : Var or array_like
    kth : int or sequence of int
    axis : int or None
        None partitions the flattened input.

    Returns
    -------
    Var
    """
    return apply("partition", [to_var(x)], kth=int_tuple(kth),
                 axis=None if axis is None else int(axis), arg=False)[0]


def argpartition(x, kth, axis=-1):
    """The indices that would partition ``x`` (see :func:`partition`), int32.

    Parameters
    ----------
    x : Var or array_like
    kth : int or sequence of int
    axis : int or None

    Returns
    -------
    Var
    """
    return apply("partition", [to_var(x)], kth=int_tuple(kth),
                 axis=None if axis is None else int(axis), arg=True)[0]


def _lexsort_infer(metas, axis):
    keys = metas[0]
    if len(keys.shape) < 1:
        raise OpError("keys must be at least 1-d")
    shape = keys.shape[1:]
    if not shape:
        raise OpError("each key must be at least 1-d")
    axis_of(axis, len(shape))
    return [(shape, _INDEX)]


def _lexsort_compute(arrays, axis):
    return np.lexsort(arrays[0], axis=axis).astype(_INDEX)


register(OpDef("lexsort", _lexsort_infer, _lexsort_compute))


def lexsort(keys, axis=-1):
    """Indirect stable sort by several keys, the last key primary (numpy's ``lexsort``).

    Parameters
    ----------
    keys : Var or array_like
        Shape ``(k, ...)``: ``k`` keys of one shape.
    axis : int

    Returns
    -------
    Var of int32
    """
    return apply("lexsort", [to_var(keys)], axis=int(axis))[0]


# -- bincount ---------------------------------------------------------------------------

def _bincount_infer(metas, minlength):
    x = metas[0]
    if len(x.shape) != 1:
        raise OpError(f"bincount needs a 1-d input, got shape {list(x.shape)}")
    if x.dtype.kind not in "iub":
        raise OpError(f"bincount needs non-negative integers, got {x.dtype}")
    if len(metas) == 2 and tuple(metas[1].shape) != tuple(x.shape):
        raise OpError("weights must have the shape of the input")
    if minlength < 0:
        raise OpError("minlength must be non-negative")
    dtype = np.dtype(np.float64) if len(metas) == 2 else _INDEX
    if x.value is not None:
        n = max(int(x.value.max()) + 1 if x.value.size else 0, minlength)
        return [((n,), dtype)]
    return [(None, dtype)]


def _bincount_compute(arrays, minlength):
    x = arrays[0]
    if x.size and x.min() < 0:
        raise OpError(f"bincount got a negative value {int(x.min())}")
    if len(arrays) == 2:
        return np.bincount(x, weights=arrays[1], minlength=minlength).astype(np.float64)
    return np.bincount(x, minlength=minlength).astype(_INDEX)


register(OpDef("bincount", _bincount_infer, _bincount_compute))


def bincount(x, weights=None, minlength=0):
    """Count of each value in non-negative integer ``x`` (weighted sums with
    ``weights``), at least ``minlength`` long.

    Parameters
    ----------
    x : Var or array_like of int
    weights : Var or array_like, optional
    minlength : int

    Returns
    -------
    Var
        int32 counts, or float64 weighted sums.
    """
    inputs = [to_var(x)]
    if weights is not None:
        inputs.append(to_var(weights))
    return apply("bincount", inputs, minlength=int(minlength))[0]


# -- trim_zeros / compress --------------------------------------------------------------

def _trim_infer(metas, trim, axis):
    x = metas[0]
    if not set(trim.lower()) <= {"f", "b"}:
        raise OpError(f"trim must contain only 'f' and 'b', got {trim!r}")
    if axis is not None:
        for a in axis:
            axis_of(a, len(x.shape))
    if x.value is not None:
        return [(_trim_compute([x.value], trim, axis).shape, x.dtype)]
    return [(None, x.dtype)]


def _trim_compute(arrays, trim, axis):
    return np.trim_zeros(arrays[0], trim, axis=axis)


register(OpDef("trim_zeros", _trim_infer, _trim_compute))


def trim_zeros(x, trim="fb", axis=None):
    """``x`` without leading (``f``) and/or trailing (``b``) all-zero slices along
    ``axis`` (every axis when None; numpy's ``trim_zeros``).

    Parameters
    ----------
    x : Var or array_like
    trim : str
    axis : int or sequence of int, optional

    Returns
    -------
    Var
    """
    axes = None if axis is None else int_tuple(axis)
    return apply("trim_zeros", [to_var(x)], trim=str(trim), axis=axes)[0]


def _compress_infer(metas, axis):
    cond, x = metas
    if len(cond.shape) != 1:
        raise OpError("condition must be 1-d")
    length = int(np.prod(x.shape, dtype=np.int64)) if axis is None \
        else x.shape[axis_of(axis, len(x.shape))]
    if cond.shape[0] > length:
        raise OpError(f"condition of length {cond.shape[0]} is longer than the axis "
                      f"({length})")
    values = known_values(metas)
    if values is not None:
        out = _compress_compute(values, axis)
        return [(out.shape, out.dtype)]
    return [(None, x.dtype)]


def _compress_compute(arrays, axis):
    cond, x = arrays
    return np.compress(cond.astype(bool), x, axis=axis)


register(OpDef("compress", _compress_infer, _compress_compute))


def compress(condition, x, axis=None):
    """Slices of ``x`` along ``axis`` where ``condition`` is true (flattened when None).

    Parameters
    ----------
    condition : Var or array_like, 1-d
    x : Var or array_like
    axis : int, optional

    Returns
    -------
    Var
    """
    return apply("compress", [to_var(condition), to_var(x)],
                 axis=None if axis is None else int(axis))[0]
