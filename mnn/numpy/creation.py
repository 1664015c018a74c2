"""Array creation: from values, from shapes, ranges, grids, matrices, files and buffers.

Defaults follow MNN.numpy: Python floats give float32 and Python ints int32, and
``zeros``/``ones``/``empty``/``eye`` default to float32 (numpy: float64). numpy arrays
keep their dtype. Explicit ``dtype=float`` means float64, as in numpy.
"""
import builtins

import numpy as np

from ..express.errors import OpError
from ..express.ops import creation as _creation
from ..express.ops.elementwise import cast
from ..express.ops.movement import broadcast_to, reshape
from ..express.ops.selection import select
from ..express.ops.np_shape import diag as _diag
from ..express.var import Var, _default_array, const
from ._util import asvar, npdtype, shape_tuple

__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
           "asarray_chkfinite", "asfarray", "asmatrix", "mat", "matrix", "asscalar",
           "require", "copy", "copyto", "empty", "empty_like", "zeros", "zeros_like",
           "ones", "ones_like", "full", "full_like", "eye", "identity", "arange",
           "linspace", "logspace", "geomspace", "meshgrid", "frombuffer", "fromfile",
           "fromstring", "fromiter", "fromfunction", "loadtxt", "diag", "diagflat", "tri",
           "tril", "triu", "vander", "bmat", "repmat", "indices", "ix_"]

_F32 = np.dtype(np.float32)


def _check_device_like(device, like):
    # numpy accepts only the CPU device; ``like`` dispatches to other array libraries.
    if device not in (None, "cpu"):
        raise ValueError(f"mnn.numpy: device must be 'cpu' or None, got {device!r}")
    if like is not None and not isinstance(like, (Var, np.ndarray)):
        raise TypeError(f"mnn.numpy: like= must be a Var or ndarray, got {type(like).__name__}")


def _check_order(order):
    if order is not None and order not in ("C", "F", "A", "K"):
        raise OpError(f"mnn.numpy: order must be one of C, F, A, K; got {order!r}")


# -- from values ------------------------------------------------------------------------

def array(object, dtype=None, copy=True, order="K", subok=False, ndmin=0,  # noqa: A002
          like=None):
    """A Var holding ``object`` (numpy's ``array``).

    Parameters
    ----------
    object : array_like or Var
        Lists, scalars and numpy arrays of any common dtype (uint8 included).
    dtype : dtype, optional
        numpy dtype or MNN enum member; default: numpy arrays keep theirs, Python floats
        give float32 and ints int32 (MNN's defaults).
    copy : bool
        A Var input is copied into a new node (writes to the original do not reach it).
    order : {'K', 'A', 'C', 'F'}
        Accepted; a Var's logical layout is always C.
    ndmin : int
        Prepend size-1 axes up to this many dimensions.

    Returns
    -------
    Var
    """
    _check_order(order)
    if isinstance(object, Var):
        x = _copy_var(object) if copy else object
    else:
        if isinstance(object, (bytes, str)):
            raise TypeError("mnn.numpy.array: strings are not numbers; use frombuffer or "
                            "fromstring")
        x = asvar(object)
    if dtype is not None and npdtype(dtype) != x.dtype:
        x = cast(x, npdtype(dtype))
    if ndmin > x.ndim:
        x = reshape(x, [1] * (ndmin - x.ndim) + x.shape, zero_copies=False)
    return x


def _copy_var(x):
    # A new Var object on the same node: a later ``replace`` of ``x`` (numpy-style
    # in-place edits) does not reach the copy.
    return cast(Var(x.expr, x.index), x.dtype)


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``a`` as a Var, without copying a Var of the right dtype."""
    _check_device_like(device, like)
    return array(a, dtype, copy=bool(copy), order=order)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """Same as :func:`asarray` (there are no Var subclasses)."""
    _check_device_like(device, like)
    return array(a, dtype, copy=bool(copy), order=order)


def ascontiguousarray(a, dtype=None):
    """Same as :func:`asarray`: a Var's logical layout is always C-contiguous."""
    return array(a, dtype, copy=False)


def asfortranarray(a, dtype=None):
    """Same as :func:`asarray`: the memory order of a Var is not observable."""
    return array(a, dtype, copy=False)


def asarray_chkfinite(a, dtype=None, order=None):
    """:func:`asarray`, raising ValueError if ``a`` holds inf or NaN (computes ``a``)."""
    x = array(a, dtype, copy=False, order=order)
    value = np.asarray(x)
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise ValueError("array must not contain infs or NaNs")
    return x


def asfarray(a, dtype=np.float32):
    """``a`` as a float Var (float32 by default, MNN's float; integer dtypes become
    float32)."""
    want = npdtype(dtype)
    if want.kind != "f":
        want = _F32
    return array(a, want, copy=False)


def asmatrix(data, dtype=None):
    """``data`` as an at-least-2-d Var (there is no matrix class)."""
    x = array(data, dtype, copy=False, ndmin=2)
    if x.ndim > 2:
        raise ValueError(f"mnn.numpy.asmatrix: a matrix must be 2-d, got {x.ndim}-d")
    return x


def mat(data, dtype=None):
    """Alias of :func:`asmatrix`."""
    return asmatrix(data, dtype)


matrix = mat


def asscalar(a):
    """The single element of ``a`` as a Python number."""
    return asvar(a).item()


def require(a, dtype=None, requirements=None):
    """``a`` as a Var of ``dtype``; every memory requirement (C, F, A, W, O, E) is met
    by a Var's logical layout."""
    valid = {"C", "C_CONTIGUOUS", "CONTIGUOUS", "F", "F_CONTIGUOUS", "FORTRAN", "A",
             "ALIGNED", "W", "WRITEABLE", "O", "OWNDATA", "E", "ENSUREARRAY"}
    for r in requirements or ():
        if r.upper() not in valid:
            raise KeyError(f"mnn.numpy.require: unknown requirement {r!r}")
    return array(a, dtype, copy=False)


def copy(a, order="K", subok=False):
    """A copy of ``a`` as a new Var."""
    _check_order(order)
    return array(a, copy=True)


def copyto(dst, src, casting="same_kind", where=True):
    """Write ``src`` (broadcast) into the Var ``dst`` where ``where`` is true.

    ``dst`` then stands for the new values everywhere it is used (``Var.replace``).
    """
    if not isinstance(dst, Var):
        raise TypeError("mnn.numpy.copyto: dst must be a Var")
    src = asvar(src)
    if not np.can_cast(src.dtype, dst.dtype, casting=casting):
        raise TypeError(f"mnn.numpy.copyto: cannot cast {src.dtype} to {dst.dtype} with "
                        f"casting={casting!r}")
    value = broadcast_to(cast(src, dst.dtype), dst.shape)
    if where is not True:
        value = select(asvar(where), value, Var(dst.expr, dst.index))
    dst.replace(value)


# -- from shapes ------------------------------------------------------------------------

def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """A Var of ``shape`` filled with ``fill_value`` (its dtype by MNN's defaults unless
    ``dtype`` is given)."""
    _check_device_like(device, like)
    _check_order(order)
    shape = shape_tuple(shape)
    if not isinstance(fill_value, Var) and np.ndim(fill_value) == 0:
        # A number: one scalar constant of the final dtype (no cast or reshape nodes).
        value = const(np.asarray(fill_value, npdtype(dtype)) if dtype is not None
                      else _default_array(fill_value).reshape(()))
        return _creation.fill(shape, value)
    value = asvar(fill_value, dtype)
    if value.size != 1:
        # numpy broadcasts an array fill value over the shape.
        return broadcast_to(value, shape)
    return _creation.fill(shape, reshape(value, []))


def zeros(shape, dtype=np.float32, order="C", *, device=None, like=None):
    """A Var of zeros (float32 by default)."""
    _check_device_like(device, like)
    return full(shape, 0, npdtype(dtype) if dtype is not None else _F32, order)


def ones(shape, dtype=np.float32, order="C", *, device=None, like=None):
    """A Var of ones (float32 by default)."""
    _check_device_like(device, like)
    return full(shape, 1, npdtype(dtype) if dtype is not None else _F32, order)


def empty(shape, dtype=np.float32, order="C", *, device=None, like=None):
    """A Var of ``shape`` (numpy leaves it uninitialized; here it holds zeros)."""
    _check_device_like(device, like)
    return zeros(shape, dtype, order)


def _like(prototype, dtype, shape):
    proto = asvar(prototype)
    dt = npdtype(dtype) if dtype is not None else proto.dtype
    sh = shape_tuple(shape) if shape is not None else tuple(proto.shape)
    return dt, sh


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``fill_value`` in the shape and dtype of ``a`` (or the given ones)."""
    _check_device_like(device, None)
    dt, sh = _like(a, dtype, shape)
    return full(sh, np.asarray(fill_value).astype(dt) if not isinstance(fill_value, Var)
                else cast(fill_value, dt), dt)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros in the shape and dtype of ``a``."""
    _check_device_like(device, None)
    return full_like(a, 0, dtype, order, subok, shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones in the shape and dtype of ``a``."""
    _check_device_like(device, None)
    return full_like(a, 1, dtype, order, subok, shape)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A Var in the shape and dtype of ``prototype`` (zeros here)."""
    _check_device_like(device, None)
    return zeros_like(prototype, dtype, order, subok, shape)


def eye(N, M=None, k=0, dtype=np.float32, order="C", *, device=None,  # noqa: N803
        like=None):
    """A 2-d Var with ones on diagonal ``k`` (float32 by default)."""
    _check_device_like(device, like)
    _check_order(order)
    dt = npdtype(dtype) if dtype is not None else _F32
    return const(np.eye(int(N), None if M is None else int(M), int(k), dtype=dt))


def identity(n, dtype=np.float32, *, like=None):
    """The ``n`` x ``n`` identity (float32 by default)."""
    _check_device_like(None, like)
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=np.float32):  # noqa: N803
    """Ones at and below diagonal ``k`` (float32 by default)."""
    dt = npdtype(dtype) if dtype is not None else _F32
    return const(np.tri(int(N), None if M is None else int(M), int(k), dtype=dt))


def _tri_mask(x, k, lower):
    shape = x.shape
    if not shape:
        raise OpError(f"mnn.numpy.{'tril' if lower else 'triu'}: needs at least 1-d, got "
                      "a 0-d input")
    if len(shape) == 1:
        # numpy: a 1-d input is a row, broadcast against an n x n mask.
        shape = [shape[0], shape[0]]
    keep = np.tri(shape[-2], shape[-1], k, dtype=bool)
    if not lower:
        keep = ~np.tri(shape[-2], shape[-1], k - 1, dtype=bool)
    return const(keep)


def tril(m, k=0):
    """``m`` with elements above diagonal ``k`` zeroed (last two axes)."""
    x = asvar(m)
    return select(_tri_mask(x, int(k), True), x, const(np.zeros((), x.dtype)))


def triu(m, k=0):
    """``m`` with elements below diagonal ``k`` zeroed (last two axes)."""
    x = asvar(m)
    return select(_tri_mask(x, int(k), False), x, const(np.zeros((), x.dtype)))


def diag(v, k=0):
    """Diagonal ``k`` of a 2-d ``v``, or a 2-d Var with 1-d ``v`` on diagonal ``k``."""
    return _diag(asvar(v), k)


def diagflat(v, k=0):
    """A 2-d Var with the flattened ``v`` on diagonal ``k``."""
    return _diag(reshape(asvar(v), [-1]), k)


def vander(x, N=None, increasing=False):  # noqa: N803
    """The Vandermonde matrix of 1-d ``x``: columns are powers of ``x``."""
    x = asvar(x)
    if x.ndim != 1:
        raise ValueError("mnn.numpy.vander: x must be a one-dimensional array")
    n = x.shape[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    base = reshape(x, [-1, 1])
    from ..express.ops.elementwise import pow as _pow

    dt = x.dtype if x.dtype != np.bool_ else np.dtype(np.int32)
    return _pow(cast(base, dt), const(powers.astype(dt)))


def bmat(obj, ldict=None, gdict=None):
    """A 2-d Var assembled from blocks: a nested list, or numpy's string form
    (``"A, B; C, D"``) naming Vars/arrays in ``ldict``/``gdict`` or, when both are None,
    in the caller's variables."""
    from .manipulation import block

    if isinstance(obj, str):
        if gdict is None:
            import sys

            frame = sys._getframe(1)
            ldict, gdict = frame.f_locals, frame.f_globals
        ldict = ldict or {}
        rows = []
        for row_text in obj.split(";"):
            row = []
            for name in row_text.replace(",", " ").split():
                if name in ldict:
                    row.append(ldict[name])
                elif name in gdict:
                    row.append(gdict[name])
                else:
                    raise KeyError(f"mnn.numpy.bmat: name {name!r} is not defined")
            rows.append(row)
        obj = rows
    return asmatrix(block(obj))


def repmat(a, m, n):
    """``a`` (as 2-d) tiled ``m`` times down and ``n`` times across."""
    from .manipulation import tile

    return tile(asmatrix(a), (int(m), int(n)))


def indices(dimensions, dtype=np.int32, sparse=False):
    """A Var holding the index grid of a ``dimensions``-shaped array (one Var per axis
    stacked first, or a tuple of broadcastable Vars when ``sparse``)."""
    dims = shape_tuple(dimensions)
    dt = npdtype(dtype)
    grids = np.indices(dims, dtype=dt, sparse=sparse)
    if sparse:
        return tuple(const(g) for g in grids)
    return const(grids)


def ix_(*args):
    """Open-mesh index Vars: the i-th of N 1-d sequences shaped to broadcast on axis i
    (bool sequences become the positions of their true entries)."""
    out = []
    n = len(args)
    for i, seq in enumerate(args):
        x = asvar(seq)
        if x.ndim != 1:
            raise ValueError("mnn.numpy.ix_: cross index must be 1 dimensional")
        if x.dtype == np.bool_:
            from .indexing import nonzero

            x = nonzero(x)[0]
        out.append(reshape(x, [1] * i + [-1] + [1] * (n - i - 1)))
    return tuple(out)


# -- ranges -----------------------------------------------------------------------------

def _default_number_dtype(*values):
    # MNN's defaults: integers give int32, anything with a fraction float32.
    if all(np.asarray(v).dtype.kind in "iub" for v in values):
        return np.dtype(np.int32)
    return _F32


def _number(v):
    if isinstance(v, Var):
        return v.item()
    return v


def arange(*args, dtype=None, device=None, like=None, **kwargs):
    """Evenly spaced values in ``[start, stop)`` (numpy's ``arange``).

    ``arange(stop)``, ``arange(start, stop)``, ``arange(start, stop, step)``, or the
    keywords ``start``/``stop``/``step``. Integer arguments give int32 and floats float32
    (MNN's defaults) unless ``dtype`` is given.
    """
    _check_device_like(device, like)
    names = ("start", "stop", "step")
    for key in kwargs:
        if key not in names:
            raise TypeError(f"mnn.numpy.arange: unexpected keyword {key!r}")
    args = [_number(a) for a in args]
    if len(args) > 3:
        raise TypeError("mnn.numpy.arange takes at most 3 positional arguments")
    if len(args) == 1 and "stop" not in kwargs:
        start, stop, step = kwargs.get("start", 0), args[0], kwargs.get("step", 1)
        if "start" in kwargs:
            start, stop = kwargs["start"], args[0]
    else:
        vals = dict(zip(names, args))
        vals.update(kwargs)
        if "stop" not in vals:
            start, stop = 0, vals.get("start")
        else:
            start, stop = vals.get("start", 0), vals["stop"]
        step = vals.get("step", 1)
    if stop is None:
        raise TypeError("mnn.numpy.arange: missing stop")
    if step == 0:
        raise ValueError("mnn.numpy.arange: step must not be zero")
    dt = npdtype(dtype) if dtype is not None else _default_number_dtype(start, stop, step)
    return const(np.arange(start, stop, step).astype(dt))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced samples over ``[start, stop]`` (numpy's ``linspace``;
    float32 by default)."""
    _check_device_like(device, None)
    num = int(num)
    if num < 0:
        raise ValueError(f"mnn.numpy.linspace: number of samples {num} must be "
                         "non-negative")
    start, stop = _number(start), _number(stop)
    values, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True,
                               axis=axis)
    dt = npdtype(dtype) if dtype is not None else _range_float(start, stop)
    if dt.kind in "iu":
        values = np.floor(values)
    out = const(values.astype(dt))
    if retstep:
        return out, step
    return out


def _range_float(*values):
    # float64 only when the caller passed float64 arrays; Python numbers give float32.
    if any(isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype == np.float64
           for v in values):
        return np.dtype(np.float64)
    return _F32


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)`` (float32 by default)."""
    start, stop = _number(start), _number(stop)
    values = np.logspace(start, stop, int(num), endpoint=endpoint, base=base, axis=axis)
    dt = npdtype(dtype) if dtype is not None else _range_float(start, stop)
    return const(values.astype(dt))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (both nonzero)."""
    start, stop = _number(start), _number(stop)
    if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
        raise ValueError("mnn.numpy.geomspace: geometric sequence cannot include zero")
    values = np.geomspace(start, stop, int(num), endpoint=endpoint, axis=axis)
    dt = npdtype(dtype) if dtype is not None else _range_float(start, stop)
    return const(values.astype(dt))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):  # noqa: A002
    """Coordinate Vars from 1-d coordinate vectors (numpy's ``meshgrid``).

    Returns
    -------
    tuple of Var
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    vecs = [reshape(asvar(x), [-1]) for x in xi]
    shapes = [[1] * n for _ in vecs]
    for i, v in enumerate(vecs):
        shapes[i][i] = v.shape[0]
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    outs = [reshape(v, s) for v, s in zip(vecs, shapes)]
    if not sparse:
        full_shape = [builtins.max(s[d] for s in shapes) for d in range(n)]
        outs = [broadcast_to(o, full_shape) for o in outs]
    return tuple(outs)


# -- from files and buffers -------------------------------------------------------------

def frombuffer(buffer, dtype=np.float32, count=-1, offset=0):
    """A 1-d Var from the bytes of ``buffer`` (float32 by default, MNN's default)."""
    values = np.frombuffer(buffer, dtype=npdtype(dtype), count=int(count),
                           offset=int(offset))
    return const(values.copy())


def fromfile(file, dtype=np.float32, count=-1, sep="", offset=0):
    """A 1-d Var from a binary (``sep=''``) or text file."""
    values = np.fromfile(file, dtype=npdtype(dtype), count=int(count), sep=sep,
                         offset=int(offset))
    return const(values)


def fromstring(string, dtype=np.float32, count=-1, sep=" "):
    """A 1-d Var from numbers written in ``string`` separated by ``sep``."""
    if not sep:
        raise ValueError("mnn.numpy.fromstring: binary mode (sep='') is removed in "
                         "numpy; use frombuffer")
    return const(np.fromstring(string, dtype=npdtype(dtype), count=int(count), sep=sep))


def fromiter(iter, dtype, count=-1):  # noqa: A002 - numpy's name
    """A 1-d Var from the numbers an iterable yields."""
    values = np.fromiter((_number(v) for v in iter), dtype=npdtype(dtype), count=int(count))
    return const(values)


def fromfunction(function, shape, dtype=np.float32, **kwargs):
    """``function(*index_vars)``: the function receives one index Var per axis (of
    ``dtype``) and builds the result with Var operations."""
    grids = np.indices(shape_tuple(shape), dtype=npdtype(dtype))
    return function(*[const(g) for g in grids], **kwargs)


def loadtxt(fname, dtype=np.float32, comments="#", delimiter=None, converters=None,
            skiprows=0, usecols=None, unpack=False, ndmin=0, encoding=None,
            max_rows=None):
    """A Var from a text file of numbers (numpy's ``loadtxt``; float32 by default)."""
    values = np.loadtxt(fname, dtype=npdtype(dtype), comments=comments, delimiter=delimiter,
                        converters=converters, skiprows=skiprows, usecols=usecols,
                        unpack=unpack, ndmin=ndmin, encoding=encoding, max_rows=max_rows)
    if unpack:
        return tuple(const(np.ascontiguousarray(v)) for v in values)
    return const(values)

