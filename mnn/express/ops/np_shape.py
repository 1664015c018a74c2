"""numpy's element-moving functions as ops: flip, roll, diff, diagonal, diag, repeat,
and the shape-changing edits (delete, insert, resize). Index-driven picks (take,
take_along_axis, choose) are in np_take.py.

Movement ops carry gradient rules that move the gradient back.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .np_common import axis_of, int_tuple, numpy_errors, run_on_proxies

__all__ = ["flip", "roll", "diff", "diagonal", "diag", "repeat", "delete", "insert",
           "resize_np"]


# -- flip -------------------------------------------------------------------------------

def _flip_infer(metas, axes):
    for a in axes:
        axis_of(a, len(metas[0].shape))
    return [(metas[0].shape, metas[0].dtype)]


def _flip_compute(arrays, axes):
    return np.flip(arrays[0], axis=axes)


def _flip_grad(inputs, outputs, grads, axes):
    return [flip(grads[0], axes)]


register(OpDef("flip", _flip_infer, _flip_compute, _flip_grad))


def flip(x, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None).

    Parameters
    ----------
    x : Var or array_like
    axis : int or tuple of int, optional

    Returns
    -------
    Var
    """
    x = to_var(x)
    axes = tuple(range(x.ndim)) if axis is None else int_tuple(axis)
    axes = tuple(axis_of(a, x.ndim) for a in axes)
    return apply("flip", [x], axes=axes)[0]


# -- roll -------------------------------------------------------------------------------

def _roll_infer(metas, shifts, axes):
    ndim = len(metas[0].shape)
    if axes is not None:
        if len(shifts) != len(axes) and len(shifts) != 1 and len(axes) != 1:
            raise OpError(f"shift {list(shifts)} and axis {list(axes)} differ in length")
        for a in axes:
            axis_of(a, ndim)
    return [(metas[0].shape, metas[0].dtype)]


def _roll_compute(arrays, shifts, axes):
    shift = shifts if len(shifts) > 1 else shifts[0]
    return np.roll(arrays[0], shift, axis=axes)


def _roll_grad(inputs, outputs, grads, shifts, axes):
    return [apply("roll", [grads[0]], shifts=tuple(-s for s in shifts), axes=axes)[0]]


register(OpDef("roll", _roll_infer, _roll_compute, _roll_grad))


def roll(x, shift, axis=None):
    """Shift elements along ``axis`` cyclically (flattened when ``axis`` is None).

    Parameters
    ----------
    x : Var or array_like
    shift : int or tuple of int
    axis : int or tuple of int, optional

    Returns
    -------
    Var
    """
    x = to_var(x)
    axes = None if axis is None else int_tuple(axis)
    return apply("roll", [x], shifts=int_tuple(shift), axes=axes)[0]


# -- diff -------------------------------------------------------------------------------

def _diff_infer(metas, n, axis):
    shape = list(metas[0].shape)
    if not shape:
        raise OpError("diff needs at least a 1-d input")
    if n < 0:
        raise OpError(f"order n={n} must be non-negative")
    ax = axis_of(axis, len(shape))
    shape[ax] = max(shape[ax] - n, 0)
    dtype = metas[0].dtype
    return [(tuple(shape), dtype)]


def _diff_compute(arrays, n, axis):
    x = arrays[0]
    if x.dtype == np.bool_:
        return np.diff(x, n=n, axis=axis)
    return np.diff(x, n=n, axis=axis).astype(x.dtype, copy=False)


register(OpDef("diff", _diff_infer, _diff_compute))


def diff(x, n=1, axis=-1):
    """The ``n``-th discrete difference along ``axis`` (numpy's ``diff``; bool inputs
    give ``!=`` of neighbours).

    Parameters
    ----------
    x : Var or array_like
    n : int
    axis : int

    Returns
    -------
    Var
    """
    return apply("diff", [to_var(x)], n=int(n), axis=int(axis))[0]


# -- diagonal / diag --------------------------------------------------------------------

def _diagonal_infer(metas, offset, axis1, axis2):
    shape = metas[0].shape
    if len(shape) < 2:
        raise OpError("diagonal needs at least a 2-d input")
    a1, a2 = axis_of(axis1, len(shape)), axis_of(axis2, len(shape))
    if a1 == a2:
        raise OpError("axis1 and axis2 cannot be the same")
    return [run_on_proxies(np.diagonal, metas[:1], offset=offset, axis1=a1, axis2=a2)]


def _diagonal_compute(arrays, offset, axis1, axis2):
    return np.diagonal(arrays[0], offset, axis1, axis2).copy()


register(OpDef("diagonal", _diagonal_infer, _diagonal_compute))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal of ``x`` over ``axis1``/``axis2`` (appended as the last axis).

    Parameters
    ----------
    x : Var or array_like
    offset : int
    axis1, axis2 : int

    Returns
    -------
    Var
    """
    return apply("diagonal", [to_var(x)], offset=int(offset), axis1=int(axis1),
                 axis2=int(axis2))[0]


def _diag_infer(metas, k):
    shape = metas[0].shape
    if len(shape) not in (1, 2):
        raise OpError("diag needs a 1-d or 2-d input")
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return [((n, n), metas[0].dtype)]
    rows, cols = shape
    length = min(rows, cols - k) if k >= 0 else min(rows + k, cols)
    return [((max(length, 0),), metas[0].dtype)]


def _diag_compute(arrays, k):
    return np.diag(arrays[0], k).copy()


def _diag_grad(inputs, outputs, grads, k):
    if inputs[0].ndim == 1:
        return [diagonal(grads[0], k)]
    # Taking diagonal k of an (m, n) matrix: the gradient is g laid on diagonal k of an
    # (m, n) zero matrix. diag(g, k) is square; crop and zero-pad it to (m, n).
    from .padding import pad

    m, n = inputs[0].shape
    square = diag(grads[0], k)
    s = square.shape[0]
    cropped = square[:min(s, m), :min(s, n)]
    return [pad(cropped, [[0, m - min(s, m)], [0, n - min(s, n)]])]


register(OpDef("diag", _diag_infer, _diag_compute, _diag_grad))


def diag(v, k=0):
    """A 2-d array with ``v`` on diagonal ``k`` (1-d ``v``), or the diagonal ``k`` of a
    2-d ``v``.

    Parameters
    ----------
    v : Var or array_like
    k : int

    Returns
    -------
    Var
    """
    return apply("diag", [to_var(v)], k=int(k))[0]


# -- repeat -----------------------------------------------------------------------------

def _repeat_counts(counts, length):
    if len(counts) not in (1, length):
        raise OpError(f"{len(counts)} repeat counts for an axis of length {length}")
    if any(c < 0 for c in counts):
        raise OpError("repeat counts must be non-negative")
    return counts if len(counts) > 1 else counts * length


def _repeat_infer(metas, repeats, axis):
    shape = metas[0].shape
    if axis is None:
        n = int(np.prod(shape, dtype=np.int64))
        return [((sum(_repeat_counts(repeats, n)),), metas[0].dtype)]
    ax = axis_of(axis, len(shape))
    out = list(shape)
    out[ax] = sum(_repeat_counts(repeats, shape[ax]))
    return [(tuple(out), metas[0].dtype)]


def _repeat_compute(arrays, repeats, axis):
    reps = repeats if len(repeats) > 1 else repeats[0]
    return np.repeat(arrays[0], reps, axis=axis)


def _repeat_grad(inputs, outputs, grads, repeats, axis):
    # Each input element receives the sum of the gradients of its copies.
    from .reduce import reduce_sum
    from .movement import concat, reshape, split

    x = inputs[0]
    g = grads[0]
    if axis is None:
        g = reshape(g, [-1])
        ax, length, in_shape = 0, x.size, [x.size]
    else:
        ax = axis_of(axis, x.ndim)
        length, in_shape = x.shape[ax], x.shape
    counts = _repeat_counts(repeats, length)
    if len(set(counts)) == 1 and counts[0] > 0:
        gshape = list(g.shape)
        gshape[ax:ax + 1] = [length, counts[0]]
        return [reshape(reduce_sum(reshape(g, gshape), [ax + 1]), x.shape)]
    parts = split(g, list(counts), ax) if len(counts) > 1 else [g]
    sums = []
    for part, c in zip(parts, counts):
        if c == 0:
            shape = list(part.shape)
            shape[ax] = 1
            from .creation import fill

            sums.append(fill(shape, to_var(np.zeros((), g.dtype))))
        else:
            sums.append(reduce_sum(part, [ax], keepdims=True))
    return [reshape(concat(sums, ax), in_shape if axis is not None else x.shape)]


register(OpDef("repeat", _repeat_infer, _repeat_compute, _repeat_grad))


def repeat(x, repeats, axis=None):
    """Repeat each element ``repeats`` times (a count per element, or one for all) along
    ``axis``; the flattened input when ``axis`` is None.

    Parameters
    ----------
    x : Var or array_like
    repeats : int or sequence of int
    axis : int, optional

    Returns
    -------
    Var
    """
    x = to_var(x)
    return apply("repeat", [x], repeats=int_tuple(repeats),
                 axis=None if axis is None else axis_of(axis, x.ndim))[0]


# -- delete / insert / resize -----------------------------------------------------------

def _delete_infer(metas, obj, axis):
    return [run_on_proxies(lambda x: np.delete(x, list(obj), axis=axis), metas[:1])]


def _delete_compute(arrays, obj, axis):
    return numpy_errors(np.delete, arrays[0], list(obj), axis=axis)


register(OpDef("delete", _delete_infer, _delete_compute))


def delete(x, obj, axis=None):
    """``x`` without the entries at ``obj`` along ``axis`` (flattened when None).

    Parameters
    ----------
    x : Var or array_like
    obj : int, slice or sequence of int
    axis : int, optional

    Returns
    -------
    Var
    """
    x = to_var(x)
    length = x.size if axis is None else x.shape[axis_of(axis, x.ndim)]
    if isinstance(obj, slice):
        obj = range(length)[obj]
    obj = int_tuple(obj)
    for i in obj:
        if not -length <= i < length:
            raise OpError(f"delete: index {i} is out of bounds for an axis of size {length}")
    return apply("delete", [x], obj=obj, axis=None if axis is None else int(axis))[0]


def _insert_infer(metas, obj, scalar_obj, axis):
    x, values = metas

    def run(a, v):
        return np.insert(a, obj[0] if scalar_obj else list(obj), v, axis=axis)
    shape, _ = run_on_proxies(run, [x, values])
    return [(shape, x.dtype)]


def _insert_compute(arrays, obj, scalar_obj, axis):
    x, values = arrays
    where = obj[0] if scalar_obj else list(obj)
    return numpy_errors(np.insert, x, where, values.astype(x.dtype), axis=axis)


register(OpDef("insert", _insert_infer, _insert_compute))


def insert(x, obj, values, axis=None):
    """``x`` with ``values`` inserted before the indices ``obj`` along ``axis``.

    Parameters
    ----------
    x : Var or array_like
    obj : int, slice or sequence of int
    values : Var or array_like
        Cast to ``x``'s dtype (numpy's rule).
    axis : int, optional
        Flattened input when None.

    Returns
    -------
    Var
    """
    x = to_var(x)
    length = x.size if axis is None else x.shape[axis_of(axis, x.ndim)]
    scalar_obj = isinstance(obj, (int, np.integer))
    if isinstance(obj, slice):
        obj = range(length)[obj]
    obj = int_tuple(obj)
    for i in obj:
        if not -length <= i <= length:
            raise OpError(f"insert: index {i} is out of bounds for an axis of size {length}")
    return apply("insert", [x, to_var(values)], obj=obj, scalar_obj=scalar_obj,
                 axis=None if axis is None else int(axis))[0]


def _resize_infer(metas, new_shape):
    return [(new_shape, metas[0].dtype)]


def _resize_compute(arrays, new_shape):
    return np.resize(arrays[0], new_shape)


register(OpDef("resize_np", _resize_infer, _resize_compute))


def resize_np(x, new_shape):
    """numpy's ``resize``: a new array of ``new_shape`` filled by repeating ``x``'s
    flattened elements (zeros when ``x`` is empty).

    Parameters
    ----------
    x : Var or array_like
    new_shape : int or sequence of int

    Returns
    -------
    Var
    """
    new_shape = int_tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise OpError(f"resize: shape {list(new_shape)} has a negative dimension")
    return apply("resize_np", [to_var(x)], new_shape=new_shape)[0]
