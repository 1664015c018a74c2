"""Sorting, searching and counting (numpy's names). Index results are int32."""
import numpy as np

from .. import express as _F
from ..express.ops import elementwise as _ew
from ..express.ops import movement as _mv
from ..express.ops import np_math as _nm
from ..express.ops import np_sorting as _nsort
from ..express.ops import np_take as _ntk
from ..express.ops import reduce as _red
from ..express.ops.elementwise import cast
from ..express.ops.selection import select
from ..express.var import const
from ._util import asvar, axes_tuple, axis_index

__all__ = ["sort", "argsort", "msort", "lexsort", "partition", "argpartition", "argmax",
           "argmin", "nanargmax", "nanargmin", "searchsorted", "count_nonzero", "isin",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _prepare(a, axis, kind, order, flatten_scalar=False):
    if order is not None:
        raise ValueError("mnn.numpy: order= needs structured arrays, which Vars are not")
    if kind not in _KINDS:
        raise ValueError(f"mnn.numpy: sort kind must be one of {_KINDS[1:]}, got {kind!r}")
    x = asvar(a)
    if axis is None or (x.ndim == 0 and flatten_scalar):
        # numpy's argsort takes a 0-d input as the 1-element array it flattens to.
        return _mv.reshape(x, [-1]), 0
    return x, axis_index(axis, x.ndim)


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """A sorted copy of ``a`` along ``axis`` (the flattened ``a`` when None); NaN sorts
    last."""
    x, ax = _prepare(a, axis, kind, order)
    return _F.sort(x, ax)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` along ``axis``; ties keep their order (stable)."""
    x, ax = _prepare(a, axis, kind, order, flatten_scalar=True)
    return _F.sort(x, ax, True)


def msort(a):
    """``a`` sorted along the first axis."""
    return sort(a, axis=0)


def lexsort(keys, axis=-1):
    """Indirect stable sort by several keys, the last key primary."""
    if isinstance(keys, (list, tuple)):
        keys = _mv.stack([asvar(k) for k in keys], 0)
    return _nsort.lexsort(asvar(keys), axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the ``kth`` elements in sorted position, smaller before and
    larger after."""
    if kind != "introselect":
        raise ValueError(f"mnn.numpy.partition: kind must be 'introselect', got {kind!r}")
    if order is not None:
        raise ValueError("mnn.numpy: order= needs structured arrays")
    return _nsort.partition(asvar(a), kth, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that would partition ``a`` (see :func:`partition`)."""
    if kind != "introselect":
        raise ValueError(f"mnn.numpy.argpartition: kind must be 'introselect', got {kind!r}")
    if order is not None:
        raise ValueError("mnn.numpy: order= needs structured arrays")
    return _nsort.argpartition(asvar(a), kth, axis)


def _arg_extreme(name, a, axis, keepdims):
    x = asvar(a)
    if axis is None:
        flat = _mv.reshape(x, [-1])
        if flat.shape[0] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        out = getattr(_F, name)(flat, 0)
        if keepdims:
            out = _mv.reshape(out, [1] * x.ndim)
        return out
    ax = axis_index(axis, x.ndim)
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    out = getattr(_F, name)(x, ax)
    if keepdims:
        out = _mv.unsqueeze(out, [ax])
    return out


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the largest value (the first one on ties; NaN counts as largest) along
    ``axis``, in the flattened ``a`` when None."""
    if out is not None:
        raise TypeError("mnn.numpy.argmax: out= is not supported")
    return _arg_extreme("argmax", a, axis, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the smallest value (the first one on ties) along ``axis``."""
    if out is not None:
        raise TypeError("mnn.numpy.argmin: out= is not supported")
    return _arg_extreme("argmin", a, axis, keepdims)


def _nan_filled(a, fill):
    x = asvar(a)
    if x.dtype.kind != "f":
        return x
    return select(_nm.isnan(x), const(np.asarray(fill, x.dtype)), x)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """:func:`argmax` ignoring NaN."""
    return argmax(_nan_filled(a, -np.inf), axis, out, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """:func:`argmin` ignoring NaN."""
    return argmin(_nan_filled(a, np.inf), axis, out, keepdims=keepdims)


def searchsorted(a, v, side="left", sorter=None):
    """Where ``v`` would be inserted into 1-d sorted ``a`` (or ``a[sorter]``)."""
    a = asvar(a)
    if sorter is not None:
        a = _ntk.take(a, asvar(sorter), 0)
    return _nsort.searchsorted(a, asvar(v), side)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of nonzero elements (along ``axis``), int32."""
    x = asvar(a)
    mask = _ew.not_equal(x, 0) if x.dtype != np.bool_ else x
    axes = axes_tuple(axis, x.ndim)
    if not axes:
        return cast(mask, np.int32)
    return _red.reduce_sum(cast(mask, np.int32), list(axes), keepdims=bool(keepdims))


# -- set routines -----------------------------------------------------------------------

def _sorted_unique(x):
    return _nsort.unique(_mv.reshape(asvar(x), [-1]))[0]


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` occurs in ``test_elements`` (shape of
    ``element``)."""
    elem = asvar(element)
    table = _sorted_unique(test_elements)
    if table.shape[0] == 0:
        from .creation import zeros

        found = zeros(elem.shape, np.bool_)
    else:
        pos = _nsort.searchsorted(table, elem, "left")
        pos = _ew.minimum(pos, table.shape[0] - 1)
        found = _ew.equal(_ntk.take(table, pos, 0), elem)
    return _ew.logical_not(found) if invert else found


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """Sorted unique values found in both inputs (with their first indices in each when
    ``return_indices``)."""
    a = _mv.reshape(asvar(ar1), [-1])
    b = _mv.reshape(asvar(ar2), [-1])
    ua, ia = _nsort.unique(a, return_index=True)
    common = _nsort.compress(isin(ua, b), ua, None)
    if not return_indices:
        return common
    ub, ib = _nsort.unique(b, return_index=True)
    pick_a = _nsort.compress(isin(ua, b), ia, None)
    pick_b = _nsort.compress(isin(ub, a), ib, None)
    return common, pick_a, pick_b


def union1d(ar1, ar2):
    """Sorted unique values found in either input."""
    both = _mv.concat([_mv.reshape(asvar(ar1), [-1]), _mv.reshape(asvar(ar2), [-1])], 0)
    return _nsort.unique(both)[0]


def setdiff1d(ar1, ar2, assume_unique=False):
    """Sorted unique values of ``ar1`` that are not in ``ar2``."""
    ua = _sorted_unique(ar1) if not assume_unique else _mv.reshape(asvar(ar1), [-1])
    return _nsort.compress(isin(ua, ar2, invert=True), ua, None)


def setxor1d(ar1, ar2, assume_unique=False):
    """Sorted unique values found in exactly one of the inputs."""
    ua, ub = _sorted_unique(ar1), _sorted_unique(ar2)
    values, counts = _nsort.unique(_mv.concat([ua, ub], 0), return_counts=True)
    return _nsort.compress(_ew.equal(counts, 1), values, None)
