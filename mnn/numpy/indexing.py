"""Indexing routines: index arrays, picking and placing values, iterators (numpy's names).

numpy's ``put``/``putmask``/``place``/``fill_diagonal``/``put_along_axis`` modify their
first argument. Here that argument must be a Var; it is rebound to the edited values
(``Var.replace``), so every later read, including through Vars built from it earlier,
sees them (MNN's ``Var.fill`` and ``__setitem__`` behave the same way). Index results
are int32.
"""
import numpy as np

from ..express.errors import OpError
from ..express.ops import elementwise as _ew
from ..express.ops import movement as _mv
from ..express.ops import np_edit as _ned
from ..express.ops import np_shape as _nps
from ..express.ops import np_take as _ntk
from ..express.ops import np_signal as _nsig
from ..express.ops import np_sorting as _nsort
from ..express.ops import selection as _sel
from ..express.var import Var, const
from ._util import asvar, axis_index, npdtype

__all__ = ["where", "nonzero", "argwhere", "flatnonzero", "ravel_multi_index",
           "unravel_index", "diag_indices", "diag_indices_from", "mask_indices",
           "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from", "take",
           "take_along_axis", "choose", "compress", "diagonal", "select", "place", "put",
           "put_along_axis", "putmask", "fill_diagonal", "extract", "nditer", "ndenumerate",
           "ndindex", "nested_iters", "flatiter"]

_INDEX = np.dtype(np.int32)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y`` (broadcast); with only ``condition``, the
    indices of its nonzero elements (:func:`nonzero`)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    cond = asvar(condition)
    if cond.dtype != np.bool_:
        cond = _ew.not_equal(cond, 0)
    return _sel.select(cond, x if not isinstance(x, (list, tuple)) else asvar(x),
                       y if not isinstance(y, (list, tuple)) else asvar(y))


def argwhere(a):
    """Coordinates of the nonzero elements, shape ``(count, a.ndim)``."""
    x = asvar(a)
    if x.ndim == 0:
        # numpy: one row of zero coordinates if the scalar is nonzero, else none.
        coords = _sel.where(_mv.reshape(x, [1]))
        return _mv.broadcast_to(coords, [1, 0])
    return _sel.where(x)


def nonzero(a):
    """A tuple with, per axis, the coordinates of the nonzero elements."""
    x = asvar(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    coords = _sel.where(x)
    if x.ndim == 1:
        return (_mv.reshape(coords, [-1]),)
    # The row count is only known once computed, so columns are taken one by one.
    return tuple(_ntk.take(coords, const(np.int32(i)), 1) for i in range(x.ndim))


def flatnonzero(a):
    """Indices of the nonzero elements of the flattened ``a``."""
    return _mv.reshape(_sel.where(_mv.reshape(asvar(a), [-1])), [-1])


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays in an array of shape ``dims``."""
    return _nsig.np_ravel_multi_index([asvar(m) for m in multi_index], dims, mode, order)


def unravel_index(indices, shape, order="C"):
    """A tuple of coordinate Vars for flat ``indices`` in an array of ``shape``."""
    shape = tuple(int(d) for d in np.atleast_1d(shape))
    coords = _nsig.np_unravel_index(asvar(indices), shape, order)
    return tuple(_ntk.take(coords, const(np.int32(i)), 0) for i in range(len(shape)))


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``n``-by-...-by-``n`` array."""
    return tuple(const(i.astype(_INDEX)) for i in np.diag_indices(int(n), int(ndim)))


def diag_indices_from(arr):
    """Indices of the main diagonal of ``arr`` (all dimensions equal)."""
    x = asvar(arr)
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], x.ndim)


def mask_indices(n, mask_func, k=0):
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``triu``)."""
    from .creation import ones

    m = asvar(mask_func(ones((int(n), int(n)), np.int32), k))
    return nonzero(_ew.not_equal(m, 0))


def tril_indices(n, k=0, m=None):
    """Indices of the lower triangle of an ``(n, m)`` array."""
    return tuple(const(i.astype(_INDEX)) for i in np.tril_indices(int(n), int(k), m))


def triu_indices(n, k=0, m=None):
    """Indices of the upper triangle of an ``(n, m)`` array."""
    return tuple(const(i.astype(_INDEX)) for i in np.triu_indices(int(n), int(k), m))


def _shape2(arr):
    x = asvar(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    return x.shape


def tril_indices_from(arr, k=0):
    """Indices of the lower triangle of 2-d ``arr``."""
    n, m = _shape2(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """Indices of the upper triangle of 2-d ``arr``."""
    n, m = _shape2(arr)
    return triu_indices(n, k, m)


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of ``a`` at ``indices`` along ``axis`` (the flattened ``a`` when None)."""
    if out is not None:
        raise TypeError("mnn.numpy.take: out= is not supported")
    return _ntk.take(asvar(a), asvar(indices), axis, mode)


def take_along_axis(arr, indices, axis=-1):
    """Values of ``arr`` at ``indices`` along ``axis`` (matching shapes)."""
    return _ntk.take_along_axis(asvar(arr), asvar(indices), axis)


def choose(a, choices, out=None, mode="raise"):
    """Per element, the value of ``choices[a]``."""
    if out is not None:
        raise TypeError("mnn.numpy.choose: out= is not supported")
    return _ntk.choose(asvar(a), [asvar(c) for c in choices], mode)


def compress(condition, a, axis=None, out=None):
    """Slices of ``a`` along ``axis`` where ``condition`` is true."""
    if out is not None:
        raise TypeError("mnn.numpy.compress: out= is not supported")
    return _nsort.compress(asvar(condition), asvar(a), axis)


def extract(condition, arr):
    """Elements of the flattened ``arr`` where the flattened ``condition`` is true."""
    cond = _mv.reshape(asvar(condition), [-1])
    if cond.dtype != np.bool_:
        cond = _ew.not_equal(cond, 0)
    return _nsort.compress(cond, _mv.reshape(asvar(arr), [-1]), None)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal over ``axis1``/``axis2`` (appended as the last axis)."""
    return _nps.diagonal(asvar(a), offset, axis1, axis2)


def select(condlist, choicelist, default=0):
    """Per element, the choice of the first true condition (``default`` if none)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    conds = [asvar(c) for c in condlist]
    for c in conds:
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry in condlist: should be boolean ndarray, got "
                            f"{c.dtype}")
    choices = [asvar(c) for c in choicelist]
    dtype = np.result_type(*[c.dtype for c in choices], np.asarray(default).dtype
                           if not isinstance(default, Var) else default.dtype)
    if isinstance(default, (bool, int, float)):
        dtype = np.result_type(*[c.dtype for c in choices])
    result = asvar(default, dtype)
    for cond, choice in zip(reversed(conds), reversed(choices)):
        result = _sel.select(cond, _ew.cast(choice, dtype), result)
    shape = np.broadcast_shapes(*[tuple(v.shape) for v in conds + choices])
    return _mv.broadcast_to(result, shape)


def _target(a, name):
    if not isinstance(a, Var):
        raise TypeError(f"mnn.numpy.{name}: the array to modify must be a Var, got "
                        f"{type(a).__name__}")
    return Var(a.expr, a.index)


def put(a, ind, v, mode="raise"):
    """Write ``v`` at flat indices ``ind`` of the Var ``a`` (``a`` is rebound)."""
    target = _target(a, "put")
    a.replace(_ned.put(target, asvar(ind), asvar(v), mode))


def putmask(a, mask, values):
    """Write ``values`` (cycled by position) where ``mask`` is true (``a`` is
    rebound)."""
    target = _target(a, "putmask")
    a.replace(_ned.putmask(target, asvar(mask), asvar(values)))


def place(arr, mask, vals):
    """Write ``vals`` in order into the true positions of ``mask`` (``arr`` is
    rebound)."""
    target = _target(arr, "place")
    arr.replace(_ned.place(target, asvar(mask), asvar(vals)))


def fill_diagonal(a, val, wrap=False):
    """Set the main diagonal of the Var ``a`` to ``val`` (``a`` is rebound)."""
    target = _target(a, "fill_diagonal")
    a.replace(_ned.fill_diagonal(target, asvar(val), wrap))


def put_along_axis(arr, indices, values, axis):
    """Write ``values`` at ``indices`` along ``axis`` (``arr`` is rebound)."""
    target = _target(arr, "put_along_axis")
    arr.replace(_ned.put_along_axis(target, asvar(indices), asvar(values), axis))


def _values(x):
    return np.asarray(x) if isinstance(x, Var) else x


def nditer(op, flags=None, op_flags=None, op_dtypes=None, order="K", casting="safe",
           op_axes=None, itershape=None, buffersize=0):
    """numpy's ``nditer`` over the computed values (read-only: Vars are values)."""
    ops = [_values(o) for o in op] if isinstance(op, (list, tuple)) else _values(op)
    if op_dtypes is not None:
        op_dtypes = [npdtype(d) for d in op_dtypes] if isinstance(op_dtypes, (list, tuple)) \
            else npdtype(op_dtypes)
    return np.nditer(ops, flags=flags, op_flags=op_flags, op_dtypes=op_dtypes, order=order,
                     casting=casting, op_axes=op_axes, itershape=itershape,
                     buffersize=buffersize)


def nested_iters(op, axes, **kwargs):
    """numpy's ``nested_iters`` over the computed values."""
    ops = [_values(o) for o in op]
    return np.nested_iters(ops, axes, **kwargs)


def ndenumerate(arr):
    """Pairs of (index tuple, value) over the computed ``arr``."""
    return np.ndenumerate(np.asarray(asvar(arr)))


def ndindex(*shape):
    """Every index tuple of an array of ``shape``, in C order."""
    return np.ndindex(*shape)


def flatiter(a):
    """An iterator over the computed elements of ``a`` in flat order (numpy's
    ``a.flat``)."""
    return np.asarray(asvar(a)).flat


del OpError, axis_index
