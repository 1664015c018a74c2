"""numpy's in-place editing functions as pure ops: each returns the edited copy.

numpy's ``put``/``putmask``/``place``/``fill_diagonal``/``put_along_axis`` write into
their first argument; in the graph a Var's value never changes in place, so
``mnn.numpy`` builds one of these ops and makes the target Var stand for the result
(``Var.replace``), which is what a later read sees.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .np_common import axis_of

__all__ = ["put", "putmask", "place", "fill_diagonal", "put_along_axis"]


def _same_as_first(metas, **attrs):
    return [(metas[0].shape, metas[0].dtype)]


def _check_index_range(indices, length):
    if indices.size and (indices.min() < -length or indices.max() >= length):
        bad = int(indices.max() if indices.max() >= length else indices.min())
        raise OpError(f"index {bad} is out of bounds for size {length}")


def _put_infer(metas, mode):
    if metas[1].dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {metas[1].dtype}")
    if mode not in ("raise", "wrap", "clip"):
        raise OpError(f"mode {mode!r} is not one of raise, wrap, clip")
    return _same_as_first(metas)


def _put_compute(arrays, mode):
    a, ind, v = arrays
    out = a.copy()
    if mode == "raise":
        _check_index_range(ind, a.size)
    if a.size == 0 and ind.size:
        raise OpError("cannot put into an empty array")
    if v.size == 0 and ind.size:
        raise OpError("no values to put")
    np.put(out, ind, v.astype(a.dtype), mode=mode)
    return out


register(OpDef("put", _put_infer, _put_compute))


def put(a, ind, v, mode="raise"):
    """``a`` (flattened view) with ``v`` written at ``ind``, ``v`` repeated as needed."""
    return apply("put", [to_var(a), to_var(ind), to_var(v)], mode=str(mode))[0]


def _putmask_infer(metas):
    a, mask, _ = metas
    if tuple(mask.shape) != tuple(a.shape):
        raise OpError(f"mask of shape {list(mask.shape)} must match the array's "
                      f"{list(a.shape)}")
    return _same_as_first(metas)


def _putmask_compute(arrays):
    a, mask, values = arrays
    out = a.copy()
    if values.size == 0 and mask.any():
        raise OpError("no values to put")
    np.putmask(out, mask.astype(bool), values.astype(a.dtype))
    return out


register(OpDef("putmask", _putmask_infer, _putmask_compute))


def putmask(a, mask, values):
    """``a`` with ``values.flat[i]`` (cycled) where ``mask.flat[i]`` is true."""
    return apply("putmask", [to_var(a), to_var(mask), to_var(values)])[0]


def _place_compute(arrays):
    a, mask, vals = arrays
    out = a.copy()
    if vals.size == 0 and mask.any():
        raise OpError("place: cannot place from empty values where the mask is true")
    np.place(out, mask.astype(bool), vals.astype(a.dtype))
    return out


register(OpDef("place", _putmask_infer, _place_compute))


def place(a, mask, vals):
    """``a`` with the true positions of ``mask`` filled by ``vals`` in order (cycled)."""
    return apply("place", [to_var(a), to_var(mask), to_var(vals)])[0]


def _fill_diag_infer(metas, wrap):
    a = metas[0]
    if len(a.shape) < 2:
        raise OpError("fill_diagonal needs at least a 2-d array")
    if len(a.shape) > 2 and len(set(a.shape)) != 1:
        raise OpError("all dimensions must be equal beyond 2-d")
    return _same_as_first(metas)


def _fill_diag_compute(arrays, wrap):
    a, val = arrays
    out = a.copy()
    np.fill_diagonal(out, val.astype(a.dtype), wrap=wrap)
    return out


register(OpDef("fill_diagonal", _fill_diag_infer, _fill_diag_compute))


def fill_diagonal(a, val, wrap=False):
    """``a`` with its main diagonal set to ``val`` (cycled)."""
    return apply("fill_diagonal", [to_var(a), to_var(val)], wrap=bool(wrap))[0]


def _pala_infer(metas, axis):
    a, ind, _ = metas
    if ind.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {ind.dtype}")
    if axis is not None and len(ind.shape) != len(a.shape):
        raise OpError("indices must have as many dimensions as the array")
    if axis is not None:
        axis_of(axis, len(a.shape))
    return _same_as_first(metas)


def _pala_compute(arrays, axis):
    a, ind, values = arrays
    out = a.copy()
    length = a.size if axis is None else a.shape[axis]
    _check_index_range(ind, length)
    try:
        np.put_along_axis(out, ind, values.astype(a.dtype), axis)
    except ValueError as exc:
        raise OpError(str(exc)) from None
    return out


register(OpDef("put_along_axis", _pala_infer, _pala_compute))


def put_along_axis(a, indices, values, axis):
    """``a`` with ``values`` written at ``indices`` along ``axis`` (numpy's rules)."""
    a = to_var(a)
    ax = None if axis is None else axis_of(axis, a.ndim)
    return apply("put_along_axis", [a, to_var(indices), to_var(values)], axis=ax)[0]
