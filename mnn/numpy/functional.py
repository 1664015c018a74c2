"""Applying Python functions over Vars, and numpy's dtype helpers that accept MNN's
dtype names (``mnn.numpy.float32`` is MNN's enum member)."""
import numpy as np

from ..express.ops import movement as _mv
from ..express.ops.elementwise import cast, logical_not
from ..express.ops.selection import select
from ..express.dtypes import dtype as _mnn_dtype
from ..express.var import Var
from ._util import asvar, axis_index, npdtype

__all__ = ["apply_along_axis", "apply_over_axes", "piecewise", "finfo", "iinfo",
           "result_type", "promote_types", "can_cast", "issubdtype"]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-d slice of ``arr`` along ``axis``; the slices are
    Vars, so ``func1d`` builds with Var operations and the result stays differentiable.
    The function's result replaces the axis (scalars remove it)."""
    x = asvar(arr)
    ax = axis_index(axis, x.ndim)
    moved = _mv.transpose(x, [i for i in range(x.ndim) if i != ax] + [ax])
    outer = moved.shape[:-1]
    rows = _mv.reshape(moved, [-1, moved.shape[-1]], zero_copies=False)
    count = rows.shape[0]
    if count == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [asvar(func1d(r, *args, **kwargs)) for r in _mv.unstack(rows, 0)]
    stacked = _mv.stack(results, 0)
    res_shape = results[0].shape
    out = _mv.reshape(stacked, outer + res_shape, zero_copies=False)
    # numpy puts the function's result axes where ``axis`` was.
    n_res = len(res_shape)
    order = list(range(ax)) + list(range(len(outer), len(outer) + n_res)) + \
        list(range(ax, len(outer)))
    return _mv.transpose(out, order)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the reduced axes."""
    x = asvar(a)
    for axis in np.atleast_1d(axes):
        ax = axis_index(int(axis), x.ndim)
        res = asvar(func(x, ax))
        if res.ndim == x.ndim:
            x = res
        elif res.ndim == x.ndim - 1:
            x = _mv.unsqueeze(res, [ax])
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return x


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i]`` (a function of ``x`` or a constant) where ``condlist[i]`` is
    true; one extra function is the default where no condition holds (else 0)."""
    x = asvar(x)
    # numpy's rule: a scalar or a 1-d sequence of truth values is one condition; an
    # n-d array is a sequence of conditions (its rows).
    if isinstance(condlist, (Var, np.ndarray)):
        c = asvar(condlist)
        condlist = [c] if c.ndim <= 1 else list(_mv.unstack(c, 0))
    elif np.isscalar(condlist) or (len(condlist) and x.ndim != 0 and not isinstance(
            condlist[0], (list, tuple, np.ndarray, Var))):
        condlist = [condlist]
    conds = [asvar(c) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected")
    if len(funclist) == n + 1:
        # The extra function applies where no condition holds.
        from .logic import any as _any

        conds.append(logical_not(_any(_mv.stack(conds, 0), axis=0)))
    result = asvar(np.zeros((), x.dtype))
    for cond, fn in zip(conds, funclist):
        value = fn(x, *args, **kw) if callable(fn) else fn
        result = select(cond, cast(asvar(value), x.dtype), result)
    return _mv.broadcast_to(result, x.shape)


def finfo(dtype):
    """numpy's float type information for a dtype (MNN names accepted)."""
    if isinstance(dtype, Var):
        dtype = dtype.dtype
    return np.finfo(npdtype(dtype))


def iinfo(dtype):
    """numpy's integer type information for a dtype (MNN names accepted)."""
    if isinstance(dtype, Var):
        dtype = dtype.dtype
    return np.iinfo(npdtype(dtype))


def _dt(x):
    if isinstance(x, _mnn_dtype):
        return npdtype(x)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return x  # a Python scalar stays weak in numpy's promotion (NEP 50)
    if isinstance(x, Var):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    try:
        return npdtype(x)
    except TypeError:
        return np.asarray(x).dtype


def result_type(*arrays_and_dtypes):
    """The dtype numpy's promotion gives (Vars and MNN dtype names accepted)."""
    return np.result_type(*[_dt(a) for a in arrays_and_dtypes])


def promote_types(type1, type2):
    """The smallest dtype both can be cast to safely."""
    return np.promote_types(npdtype(type1), npdtype(type2))


def can_cast(from_, to, casting="safe"):
    """Whether a cast is allowed under ``casting``."""
    return bool(np.can_cast(_dt(from_), npdtype(to), casting=casting))


def issubdtype(arg1, arg2):
    """numpy's ``issubdtype``; MNN dtype names are resolved first."""
    def resolve(a):
        if isinstance(a, type) and issubclass(a, np.generic):
            return a
        return _dt(a)
    return bool(np.issubdtype(resolve(arg1), resolve(arg2)))
