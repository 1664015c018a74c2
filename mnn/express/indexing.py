"""``Var.__getitem__`` / ``Var.__setitem__`` with numpy's semantics.

Keys of ints, slices (any step), ``...`` and ``None`` become one ``strided_slice`` op.
Keys holding int lists, ndarrays or Vars (gather) or bool masks become one ``index`` op
(numpy advanced indexing, several index arrays included). ``x[key] = v`` builds an
``index_put`` op and the Var then stands for the new value (numpy's semantics for the
user; the old graph is not modified). Every path has a gradient.
"""
import numbers

import numpy as np

from .errors import OpError
from .graph import apply
from .var import Var, to_var

__all__ = ["getitem", "setitem"]


def _as_tuple(key):
    if isinstance(key, tuple):
        return key
    return (key,)


def _index_var(item):
    """An array-like key item as an integer or bool Var, or None if it is not one."""
    if isinstance(item, Var):
        var = item
    elif isinstance(item, (list, np.ndarray)):
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)  # numpy treats [] as an empty integer index
        var = to_var(arr)
    else:
        return None
    if var.dtype.kind not in "iub":
        raise OpError(f"index: arrays used as indices must be integers or bools, got "
                      f"{var.dtype}")
    return var


def _parse(key):
    """(basic numpy key or None, spec, index Vars) for a key."""
    spec, index_vars, basic = [], [], []
    for item in _as_tuple(key):
        if item is None:
            spec.append(("none",))
            basic.append(None)
        elif item is Ellipsis:
            spec.append(("ellipsis",))
            basic.append(Ellipsis)
        elif isinstance(item, slice):
            parts = []
            for part in (item.start, item.stop, item.step):
                if part is not None and not isinstance(part, (numbers.Integral, Var)):
                    raise OpError(f"index: slice bounds must be integers or None, got "
                                  f"{part!r}")
                parts.append(None if part is None else int(part))
            if parts[2] == 0:
                raise OpError("index: slice step cannot be zero")
            spec.append(("slice",) + tuple(parts))
            basic.append(slice(*parts))
        elif isinstance(item, (bool, np.bool_)):
            var = to_var(np.asarray(bool(item)))
            spec.append(("mask",))
            index_vars.append(var)
        elif isinstance(item, (numbers.Integral, np.integer)):
            spec.append(("int", int(item)))
            basic.append(int(item))
        else:
            var = _index_var(item)
            if var is None:
                raise OpError(f"index: cannot index with {type(item).__name__} {item!r}; "
                              "use ints, slices, ..., None, integer or bool arrays/Vars")
            spec.append(("mask",) if var.dtype.kind == "b" else ("array",))
            index_vars.append(var)
    if index_vars:
        basic = None
    return basic, tuple(spec), index_vars


def getitem(var, key):
    """``var[key]`` with numpy's indexing rules.

    Parameters
    ----------
    var : Var
    key : int, slice, Ellipsis, None, list, ndarray, Var or a tuple of them
        Integer lists/arrays/Vars gather; bool arrays/Vars select where true.

    Returns
    -------
    Var
    """
    from .ops.slicing import basic_index

    basic, spec, index_vars = _parse(key)
    if basic is not None:
        return basic_index(var, tuple(basic))
    return apply("index", [var] + index_vars, spec=spec)[0]


def setitem(var, key, value):
    """The value of ``var`` after numpy's ``var[key] = value``, as a new Var.

    ``value`` broadcasts to the indexed shape and is cast to ``var``'s dtype (numpy's
    assignment casting). With repeated indices the last assignment wins, as in numpy.

    Returns
    -------
    Var
    """
    _, spec, index_vars = _parse(key)
    # Var.__setitem__ makes ``var`` itself stand for the result: the op must hold the old
    # value through a Var of its own, or the graph would feed on itself.
    old = Var(var.expr, var.index)
    if isinstance(value, Var):
        value_var = old if value is var else value
    else:
        value_var = to_var(np.asarray(value, dtype=var.dtype))
    index_vars = [old if v is var else v for v in index_vars]
    _pin_old_value(var, old, [value_var] + index_vars)
    return apply("index_put", [old, value_var] + index_vars, spec=spec)[0]


def _pin_old_value(var, old, roots):
    """Make the key and value graphs read ``var``'s current value through ``old``.

    ``x[x > 0] = -x`` computes the mask and the value from x before the assignment
    (numpy); since Var.__setitem__ then makes ``var`` stand for the result, consumers of
    ``var`` inside these graphs must hold the old value, or the graph would feed on itself.
    """
    from .graph import _ancestors

    seen = set()
    for root in roots:
        if root.expr.id in seen:
            continue
        for expr in _ancestors(root.expr):
            seen.add(expr.id)
            for i, v in enumerate(expr.inputs):
                if v is var:
                    expr.inputs[i] = old
