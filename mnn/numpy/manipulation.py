"""Shape manipulation, joining, splitting, tiling and rearranging (numpy's names).

``reshape`` follows numpy: a 0 in the new shape is a real zero-size dimension (MNN's
``F.reshape`` copies the input's dimension there instead).
"""
import builtins

import numpy as np

from ..express.errors import OpError
from ..express.ops import movement as _mv
from ..express.ops import np_shape as _nps
from ..express.ops import np_take as _ntk
from ..express.ops import np_sorting as _nsort
from ..express.ops.elementwise import cast
from ..express.var import Var, const
from ._util import asvar, axes_tuple, axis_index, npdtype, shape_tuple

__all__ = ["shape", "ndim", "size", "reshape", "ravel", "moveaxis", "rollaxis", "swapaxes",
           "transpose", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast",
           "broadcast_to", "broadcast_arrays", "broadcast_shapes", "expand_dims", "squeeze",
           "concatenate", "concat", "stack", "block", "vstack", "hstack", "dstack",
           "column_stack", "row_stack", "split", "array_split", "dsplit", "hsplit",
           "vsplit", "tile", "repeat", "delete", "insert", "append", "resize",
           "trim_zeros", "unique", "flip", "fliplr", "flipud", "roll", "rot90"]


def shape(a):
    """The shape of ``a`` as a tuple."""
    return tuple(asvar(a).shape)


def ndim(a):
    """The number of dimensions of ``a``."""
    return asvar(a).ndim


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis`` if given)."""
    x = asvar(a)
    if axis is None:
        return x.size
    return x.shape[axis_index(axis, x.ndim)]


def reshape(a, *dims, order="C", shape=None, newshape=None, copy=None):  # noqa: A002
    """``a`` with a new shape (numpy's rules: one -1 is inferred, 0 is a zero size).

    ``reshape(a, (2, 3))``, ``reshape(a, 2, 3)``, ``reshape(a, shape=(2, 3))`` and numpy
    1's ``newshape=`` all work. ``copy`` is accepted: a Var's values are never shared
    with the caller, so whether numpy would copy is not observable.
    """
    if order not in ("C", "A"):
        raise OpError(f"mnn.numpy.reshape: only C order is supported, got {order!r}")
    given = [d for d in (dims or None, shape, newshape) if d is not None]
    if len(given) != 1:
        raise TypeError("mnn.numpy.reshape: give the shape exactly once")
    target = given[0]
    if isinstance(target, tuple) and len(target) == 1 and dims:
        target = target[0]
    if isinstance(target, (int, np.integer)):
        target = (int(target),)
    return _mv.reshape(asvar(a), [int(d) for d in target], zero_copies=False)


def ravel(a, order="C"):
    """``a`` flattened to 1-d."""
    return reshape(a, -1, order=order)


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    x = asvar(a)
    if axes is None:
        return _mv.transpose(x)
    axes = [axis_index(ax, x.ndim) for ax in axes]
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"mnn.numpy.transpose: axes {list(axes)} don't match array")
    return _mv.transpose(x, axes)


def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to positions ``destination``."""
    x = asvar(a)
    src = [axis_index(s, x.ndim, "source") for s in np.atleast_1d(source)]
    dst = [axis_index(d, x.ndim, "destination") for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _mv.transpose(x, order)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` rolled back until it lies before position ``start``."""
    x = asvar(a)
    n = x.ndim
    axis = axis_index(axis, n)
    if not -n <= start <= n:
        raise OpError(f"mnn.numpy.rollaxis: start {start} is out of bounds for {n}-d")
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return x
    order = list(range(n))
    order.remove(axis)
    order.insert(start, axis)
    return _mv.transpose(x, order)


def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged."""
    x = asvar(a)
    order = list(range(x.ndim))
    i, j = axis_index(axis1, x.ndim), axis_index(axis2, x.ndim)
    order[i], order[j] = order[j], order[i]
    return _mv.transpose(x, order)


def _atleast(arys, fn):
    res = [fn(asvar(a)) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    """Inputs viewed with at least one dimension (a tuple for several inputs)."""
    return _atleast(arys, lambda x: reshape(x, [1]) if x.ndim == 0 else x)


def atleast_2d(*arys):
    """Inputs viewed with at least two dimensions (new axes in front)."""
    return _atleast(arys, lambda x: reshape(x, [1] * (2 - x.ndim) + x.shape)
                    if x.ndim < 2 else x)


def atleast_3d(*arys):
    """Inputs viewed with at least three dimensions: (N,) -> (1, N, 1), (M, N) ->
    (M, N, 1)."""
    def to3(x):
        if x.ndim == 0:
            return reshape(x, [1, 1, 1])
        if x.ndim == 1:
            return reshape(x, [1, x.shape[0], 1])
        if x.ndim == 2:
            return reshape(x, x.shape + [1])
        return x
    return _atleast(arys, to3)


class broadcast:  # noqa: N801 - numpy's name
    """The broadcast of several arrays: ``shape``, ``ndim``/``nd``, ``size``,
    ``numiter``, and iteration over tuples of broadcast elements (computes the inputs)."""

    def __init__(self, *args):
        self._vars = [asvar(a) for a in args]
        try:
            self.shape = np.broadcast_shapes(*[tuple(v.shape) for v in self._vars])
        except ValueError:
            raise ValueError("shape mismatch: objects cannot be broadcast to a single "
                             "shape") from None
        self.ndim = self.nd = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.numiter = len(self._vars)

    def __iter__(self):
        arrays = [np.asarray(v) for v in self._vars]
        return iter(np.broadcast(*arrays))


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return np.broadcast_shapes(*[shape_tuple(s) for s in shapes])


def broadcast_to(array, shape, subok=False):  # noqa: A002
    """``array`` broadcast to ``shape`` (which must be reachable by numpy's rules)."""
    x = asvar(array)
    target = shape_tuple(shape)
    if np.broadcast_shapes(tuple(x.shape), target) != target:
        raise ValueError(f"mnn.numpy.broadcast_to: cannot broadcast shape {x.shape} to "
                         f"{list(target)}")
    return _mv.broadcast_to(x, target)


def broadcast_arrays(*args, subok=False):
    """Inputs broadcast against each other (a tuple)."""
    xs = [asvar(a) for a in args]
    try:
        target = np.broadcast_shapes(*[tuple(x.shape) for x in xs])
    except ValueError:
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")\
            from None
    return tuple(_mv.broadcast_to(x, target) for x in xs)


def expand_dims(a, axis):
    """``a`` with size-1 axes inserted at ``axis`` (positions in the result)."""
    x = asvar(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    n = x.ndim + len(axes)
    axes = axes_tuple(axes, n)
    return _mv.unsqueeze(x, list(axes))


def squeeze(a, axis=None):
    """``a`` without size-1 axes (only ``axis`` if given; it must have size 1)."""
    x = asvar(a)
    if axis is None:
        return _mv.squeeze(x, [])
    axes = axes_tuple(axis, x.ndim)
    for ax in axes:
        if x.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    if not axes:
        return x
    return _mv.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes],
                       zero_copies=False)


# -- joining ----------------------------------------------------------------------------

def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join ``arrays`` along an existing ``axis`` (flattened first when None)."""
    if out is not None:
        raise TypeError("mnn.numpy.concatenate: out= is not supported")
    xs = [asvar(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if dtype is not None:
        xs = [cast(x, npdtype(dtype)) for x in xs]
    return _mv.concat(xs, axis_index(axis, xs[0].ndim))


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Join same-shaped ``arrays`` along a new ``axis``."""
    if out is not None:
        raise TypeError("mnn.numpy.stack: out= is not supported")
    xs = [asvar(a, dtype) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    return _mv.stack(xs, axis_index(axis, xs[0].ndim + 1))


def vstack(tup, dtype=None):
    """Stack arrays vertically (rows; 1-d inputs become rows)."""
    return concatenate(_as_list(atleast_2d(*tup)), 0, dtype=dtype)


row_stack = vstack


def hstack(tup, dtype=None):
    """Stack arrays horizontally (columns; 1-d inputs are joined end to end)."""
    arrs = _as_list(atleast_1d(*tup))
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup):
    """Stack arrays along the third axis."""
    return concatenate(_as_list(atleast_3d(*tup)), 2)


def column_stack(tup):
    """Stack 1-d arrays as columns of a 2-d array (2-d inputs as they are)."""
    cols = []
    for v in tup:
        x = asvar(v)
        if x.ndim < 2:
            x = reshape(x, [-1, 1])
        cols.append(x)
    return concatenate(cols, 1)


def _as_list(x):
    return list(x) if isinstance(x, tuple) else [x]


def block(arrays):
    """Assemble an array from nested lists of blocks (numpy's ``block``)."""
    def depth(obj):
        if isinstance(obj, list):
            if not obj:
                raise ValueError("mnn.numpy.block: lists cannot be empty")
            depths = {depth(o) for o in obj}
            if len(depths) != 1:
                raise ValueError("mnn.numpy.block: list depths are mismatched")
            return 1 + depths.pop()
        return 0

    list_depth = depth(arrays)

    def leaves(obj):
        if isinstance(obj, list):
            for o in obj:
                yield from leaves(o)
        else:
            yield asvar(obj)

    result_ndim = builtins.max([list_depth] + [v.ndim for v in leaves(arrays)])

    def assemble(obj, level):
        if not isinstance(obj, list):
            x = asvar(obj)
            return reshape(x, [1] * (result_ndim - x.ndim) + x.shape)
        parts = [assemble(o, level + 1) for o in obj]
        return _mv.concat(parts, result_ndim - (list_depth - level))

    return assemble(arrays, 0)


# -- splitting --------------------------------------------------------------------------

def _pieces(x, bounds, axis):
    """Slices ``[bounds[i], bounds[i+1])`` of ``x`` along ``axis`` (numpy's slicing rules
    for out-of-order or out-of-range indices)."""
    n = x.shape[axis]
    clipped = [builtins.min(builtins.max(b, 0), n) for b in bounds]
    sizes = [builtins.max(b - a, 0) for a, b in zip(clipped[:-1], clipped[1:])]
    if len(sizes) == 1:
        return [_copy(x)]
    if sum(sizes) == n and all(b >= a for a, b in zip(clipped[:-1], clipped[1:])):
        return list(_mv.split(x, sizes, axis))
    out = []
    for a, s in zip(clipped[:-1], sizes):
        out.append(_ntk.take(x, const(np.arange(a, a + s, dtype=np.int32)), axis))
    return out


def _copy(x):
    from .creation import copy

    return copy(x)


def _resolve_index(i, n):
    i = int(i)
    return i + n if i < 0 else i


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int that must divide the axis) or at the given
    indices."""
    x = asvar(ary)
    ax = axis_index(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if n % k:
            raise ValueError("array split does not result in an equal division")
        return array_split(x, k, ax)
    bounds = [0] + [_resolve_index(i, n) for i in indices_or_sections] + [n]
    return _pieces(x, bounds, ax)


def array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split`, but ``k`` sections need not divide the axis: the first
    ``n % k`` sections get one element more."""
    x = asvar(ary)
    ax = axis_index(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        bounds = [0] + list(np.cumsum(sizes))
        return _pieces(x, [int(b) for b in bounds], ax)
    return split(x, indices_or_sections, ax)


def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-d)."""
    x = asvar(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along the first axis (needs at least 2-d)."""
    x = asvar(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis (needs at least 3-d)."""
    x = asvar(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


# -- tiling and editing -----------------------------------------------------------------

def tile(A, reps):  # noqa: N803 - numpy's name
    """``A`` repeated ``reps`` times along each axis (numpy's ``tile``), built as a
    broadcast so it is differentiable."""
    x = asvar(A)
    reps = shape_tuple(reps, "reps")
    n = builtins.max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    dims = [1] * (n - x.ndim) + x.shape
    interleaved = []
    expanded = []
    for r, d in zip(reps, dims):
        interleaved += [1, d]
        expanded += [r, d]
    y = _mv.reshape(x, interleaved, zero_copies=False)
    y = _mv.broadcast_to(y, expanded)
    return _mv.reshape(y, [r * d for r, d in zip(reps, dims)], zero_copies=False)


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times (one count, or one per element) along
    ``axis`` (the flattened input when None)."""
    return _nps.repeat(asvar(a), repeats, axis)


def delete(arr, obj, axis=None):
    """``arr`` without the sub-arrays at ``obj`` along ``axis`` (flattened when None)."""
    if isinstance(obj, Var):
        obj = obj.read()
    if isinstance(obj, np.ndarray) and obj.dtype == np.bool_:
        obj = np.flatnonzero(obj)
    return _nps.delete(asvar(arr), obj, axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before index/indices ``obj`` along ``axis``."""
    if isinstance(obj, Var):
        obj = obj.read()
    return _nps.insert(asvar(arr), obj, values, axis)


def append(arr, values, axis=None):
    """``values`` appended to the end of ``arr`` (both flattened when ``axis`` is
    None)."""
    x, v = asvar(arr), asvar(values)
    if axis is None:
        return concatenate([ravel(x), ravel(v)], 0)
    return concatenate([x, v], axis)


def resize(a, new_shape):
    """A new Var of ``new_shape`` filled by repeating ``a``'s elements (numpy's
    ``resize``)."""
    return _nps.resize_np(asvar(a), new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without leading/trailing zeros (all-zero slices along ``axis`` for
    n-d input)."""
    return _nsort.trim_zeros(asvar(filt), trim, axis)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           equal_nan=True, sorted=True):  # noqa: A002 - numpy's name
    """Sorted unique elements of ``ar`` (numpy's ``unique``): a Var, or a tuple with the
    requested index (int32), inverse (int32) and count (int32) Vars."""
    x = asvar(ar)
    outs = _nsort.unique(x, axis, equal_nan, return_index, return_inverse, return_counts)
    if len(outs) == 1:
        return outs[0]
    outs = list(outs)
    if axis is None and return_inverse:
        at = 2 if return_index else 1
        outs[at] = _mv.reshape(outs[at], x.shape, zero_copies=False)
    return tuple(outs)


def flip(m, axis=None):
    """``m`` with the order of elements reversed along ``axis`` (all axes when None)."""
    return _nps.flip(asvar(m), axis)


def fliplr(m):
    """``m`` reversed left to right (axis 1)."""
    x = asvar(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _nps.flip(x, 1)


def flipud(m):
    """``m`` reversed up to down (axis 0)."""
    x = asvar(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _nps.flip(x, 0)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along ``axis`` (flattened when None)."""
    return _nps.roll(asvar(a), shift, axis)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    x = asvar(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = axis_index(axes[0], x.ndim), axis_index(axes[1], x.ndim)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = int(k) % 4
    if k == 0:
        return _copy(x)
    if k == 2:
        return _nps.flip(x, (a0, a1))
    order = list(range(x.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return _mv.transpose(_nps.flip(x, a1), order)
    return _nps.flip(_mv.transpose(x, order), a1)
