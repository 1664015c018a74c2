"""Argument handling shared by the mnn.numpy families (not public)."""
import builtins

import numpy as np

from ..express import dtypes as _dt
from ..express.errors import OpError
from ..express.var import Var, to_var

__all__ = []


def asvar(x, dtype=None):
    """``x`` as a Var: Vars pass through (cast if ``dtype`` differs); anything else
    becomes a constant with MNN's defaults (Python floats float32, ints int32; numpy
    arrays keep their dtype)."""
    if isinstance(x, Var):
        var = x
    elif isinstance(x, (list, tuple)) and any(isinstance(e, Var) for e in _flat(x)):
        from ..express.ops.movement import stack

        var = stack([asvar(e) for e in x], 0)
    else:
        var = to_var(x)
    if dtype is not None:
        want = npdtype(dtype)
        if var.dtype != want:
            from ..express.ops.elementwise import cast

            var = cast(var, want)
    return var


def _flat(seq):
    for e in seq:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def npdtype(dtype):
    """The numpy dtype for an MNN enum member, numpy dtype, Python type or name; None
    passes through. Python's ``float``/``int`` mean float64/int64 as in numpy."""
    if dtype is None:
        return None
    return _dt.to_numpy_dtype(dtype)


def shape_tuple(shape, what="shape"):
    """A shape given as an int or a sequence, as a tuple of non-negative ints."""
    if isinstance(shape, Var):
        shape = shape.read()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise OpError(f"mnn.numpy: {what} {list(shape)} has a negative dimension")
    return shape


def axis_index(axis, ndim, name="axis"):
    """One axis as a non-negative int (numpy's AxisError as OpError)."""
    axis = int(axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise OpError(f"mnn.numpy: {name} {axis} is out of bounds for array of "
                      f"dimension {ndim}")
    return axis % ndim if ndim else 0


def axes_tuple(axis, ndim):
    """``axis`` (None, int or sequence) as a sorted tuple of axes; None means all."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    out = tuple(axis_index(a, ndim) for a in axis)
    if len(set(out)) != len(out):
        raise OpError(f"mnn.numpy: repeated axis in {list(axis)}")
    return tuple(sorted(out))


def no_out(out):
    """numpy's ``out=`` writes into an existing array; Vars are immutable values."""
    if out is not None:
        raise TypeError("mnn.numpy: out= is not supported: Vars are values, use the "
                        "returned Var")


def float_dtype(dt):
    """The float dtype numpy computes means/roots in for ``dt``."""
    return dt if dt.kind == "f" else np.dtype(np.float64)


def is_python_scalar(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)
