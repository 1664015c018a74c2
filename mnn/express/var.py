"""Var: one output of an Expr, with numpy-style operators.

Python scalars, lists and numpy arrays are accepted wherever a Var is (see
:func:`to_var`). Defaults follow MNN: Python floats become float32 and Python ints int32;
numpy arrays keep their dtype. Arithmetic promotes like numpy (NEP 50: a Python scalar
does not widen a Var's dtype), so ``int_var / int_var`` is a true division giving
float64, where MNN floors; ``int_var // int_var`` floors.
"""
import math
import numbers

import numpy as np

from . import dtypes as _dt
from .errors import OpError
from .formats import NCHW, data_format as _data_format
from .runtime import get_thread_number

__all__ = ["Var", "to_var", "const", "scalar", "placeholder", "is_var"]


class Var:
    """A lazily computed tensor: output ``index`` of ``expr``.

    Build Vars with :func:`const`, :func:`placeholder` or ops; read values with
    :meth:`read` or ``np.asarray(var)``.
    """

    __slots__ = ("expr", "index", "__weakref__")
    # numpy defers binary operators to us (``ndarray + Var`` gives a Var).
    __array_priority__ = 100

    def __init__(self, expr, index=0):
        self.expr = expr
        self.index = index

    # -- static information --------------------------------------------------------------
    @property
    def _meta(self):
        expr = self.expr
        expr.refresh_metas()
        return expr.metas[self.index]

    @property
    def shape(self):
        """The shape as a list of ints (MNN returns a list); computes when data decides."""
        meta = self._meta
        if meta.shape is None:
            self.expr.evaluate()
            meta = self.expr.metas[self.index]
        return list(meta.shape)

    @property
    def dtype(self):
        """The numpy dtype of the elements."""
        meta = self._meta
        if meta.dtype is None:
            self.expr.evaluate()
            meta = self.expr.metas[self.index]
        return meta.dtype

    @property
    def data_format(self):
        """MNN's data-format label (NCHW, NHWC or NC4HW4; logical layout NCHW for NC4HW4)."""
        return self.expr.data_format

    @property
    def size(self):
        """Number of elements."""
        # Python ints: exact at any size, and no array round trip (a training step
        # asks for its loss's size every step).
        return math.prod(self.shape)

    @property
    def ndim(self):
        """Number of dimensions (known without computing when only some dims are
        dynamic)."""
        if self._meta.shape is None:
            from .graph import partial_shape

            known = partial_shape(self)
            if known is not None:
                return len(known)
        return len(self.shape)

    @property
    def name(self):
        """The Expr's name (outputs after the first get ``name:index``)."""
        base = self.expr.name
        if base is None:
            base = f"{self.expr.op_type}_{self.expr.id}"
        return base if self.index == 0 else f"{base}:{self.index}"

    @name.setter
    def name(self, value):
        self.expr.name = str(value)

    @property
    def op_type(self):
        """The op name of the producing Expr (``placeholder``/``const``/``trainable`` for
        sources)."""
        return self.expr.op_type

    @property
    def inputs(self):
        """The producing Expr's input Vars."""
        return list(self.expr.inputs)

    # -- values ------------------------------------------------------------------------
    def _value(self):
        return self.expr.evaluate()[self.index]

    def read(self):
        """Compute (if stale) and return the value as a new numpy array.

        The array is the caller's: later computations never overwrite it.
        """
        value = self._value()
        return _copy_of(value, value.dtype)

    def read_as_tuple(self):
        """The values as a flat tuple of Python numbers."""
        return tuple(self._value().ravel().tolist())

    def __array__(self, dtype=None, copy=None):
        value = self._value()  # read-only: the engine's cached value
        if copy:
            value = value.copy()
        if dtype is not None:
            value = value.astype(dtype, copy=False)
        return value

    def item(self):
        """The single element as a Python number."""
        value = self._value()
        if value.size != 1:
            raise ValueError(f"mnn: item() needs a Var of one element, shape is "
                             f"{list(value.shape)}")
        return value.reshape(()).item()

    def write(self, value):
        """Replace the value of a placeholder, constant or trainable Var.

        Everything computed from it is recomputed on its next read. The value must have
        this Var's shape (or its number of elements, or fill the unknown ``-1`` dims of a
        placeholder) and is cast to its dtype.
        """
        expr = self.expr
        if expr.op is not None:
            raise OpError(f"mnn: write() needs a placeholder, const or trainable Var; "
                          f"{self.name} is computed by op {expr.op_type}")
        arr = _copy_of(value, self.dtype)
        # A placeholder declared with -1 dims takes any value that fills them, each write.
        want = expr.attrs.get("declared_shape", expr.metas[0].shape)
        if want is not None and tuple(arr.shape) != tuple(want):
            if all(d >= 0 for d in want):
                if arr.size != int(np.prod(want, dtype=np.int64)):
                    raise OpError(f"mnn: write() to {self.name}: value of shape "
                                  f"{list(arr.shape)} does not fit shape {list(want)}; "
                                  "call resize() first to change the shape")
                arr = _reshaped_frozen(arr, want)
            elif len(want) != arr.ndim or any(w >= 0 and w != a
                                               for w, a in zip(want, arr.shape)):
                raise OpError(f"mnn: write() to {self.name}: value of shape "
                              f"{list(arr.shape)} does not fit shape {list(want)}")
        shape_changed = want is None or tuple(arr.shape) != tuple(want)
        expr.set_source_value(arr)
        if shape_changed:
            from .graph import bump_shape_epoch  # here: an import per write cost 0.5 us

            bump_shape_epoch()

    def resize(self, shape):
        """Give a placeholder a new shape; its value is dropped until the next write."""
        expr = self.expr
        if expr.kind != "placeholder":
            raise OpError(f"mnn: resize() needs a placeholder; {self.name} is "
                          f"{expr.op_type}")
        from .graph import bump_shape_epoch
        from .optable import TensorMeta

        shape = tuple(int(d) for d in shape)
        expr.values = None
        expr.metas = [TensorMeta(shape, self.dtype)]
        expr.version += 1
        bump_shape_epoch()

    def fix_as_const(self):
        """Compute this Var now and turn it into a constant (consumers see the constant)."""
        self._fix("const")

    def fix_as_placeholder(self):
        """Turn this Var into a placeholder holding its current value."""
        self._fix("placeholder")

    def fix_as_trainable(self):
        """Turn this Var into a trainable parameter holding its current value."""
        self._fix("trainable")

    def _fix(self, kind):
        from .graph import Expr, bump_structure_epoch

        value = np.array(self._value(), copy=True)
        old = self.expr
        expr = Expr(None, kind, [], {}, [], name=old.name, data_format=old.data_format)
        expr.outputs = [self]
        self.expr, self.index = expr, 0
        expr.set_source_value(value)
        bump_structure_epoch()

    def set_inputs(self, inputs):
        """Replace the producing op's inputs (same op and attributes)."""
        from .graph import apply

        expr = self.expr
        if expr.op is None:
            raise OpError(f"mnn: set_inputs() needs a Var computed by an op; {self.name} is "
                          f"a {expr.kind}")
        new = apply(expr.op.name, [to_var(v) for v in inputs], **expr.attrs)
        self.replace(new[self.index])

    def replace(self, other):
        """Make this Var stand for ``other`` everywhere it is used."""
        from .graph import bump_structure_epoch

        other = to_var(other)
        self.expr, self.index = other.expr, other.index
        bump_structure_epoch()

    # -- Python protocol ---------------------------------------------------------------
    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("mnn: len() of a 0-d Var")
        return shape[0]

    def __iter__(self):
        from .ops.movement import unstack

        if not self.shape:
            raise TypeError("mnn: iteration over a 0-d Var")
        return iter(unstack(self, 0))

    def __bool__(self):
        value = self._value()
        if value.size != 1:
            raise ValueError("mnn: the truth value of a Var with more than one element is "
                             "ambiguous; use reduce_any/reduce_all")
        return bool(value.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"mnn: only integer Vars can be used as an index, got {self.dtype}")
        return int(self.item())

    def __repr__(self):
        try:
            body = np.array2string(self._value(), separator=", ", prefix="var(")
        except OpError:
            meta = self.expr.metas[self.index]
            shape = "?" if meta.shape is None else list(meta.shape)
            return f"var(<{self.op_type}: not computable yet>, shape={shape}, dtype={meta.dtype})"
        return f"var({body}, dtype={self.dtype})"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    # -- operators (each one an op of the table) ----------------------------------------
    def __add__(self, other):
        return _ops().add(self, other)

    def __radd__(self, other):
        return _ops().add(other, self)

    def __sub__(self, other):
        return _ops().subtract(self, other)

    def __rsub__(self, other):
        return _ops().subtract(other, self)

    def __mul__(self, other):
        return _ops().multiply(self, other)

    def __rmul__(self, other):
        return _ops().multiply(other, self)

    def __truediv__(self, other):
        return _ops().divide(self, other)

    def __rtruediv__(self, other):
        return _ops().divide(other, self)

    def __floordiv__(self, other):
        return _ops().floordiv(self, other)

    def __rfloordiv__(self, other):
        return _ops().floordiv(other, self)

    def __mod__(self, other):
        return _ops().mod(self, other)

    def __rmod__(self, other):
        return _ops().mod(other, self)

    def __pow__(self, other):
        return _ops().pow(self, other)

    def __rpow__(self, other):
        return _ops().pow(other, self)

    def __matmul__(self, other):
        from .ops.linalg import matmul

        return matmul(self, other)

    def __rmatmul__(self, other):
        from .ops.linalg import matmul

        return matmul(other, self)

    def __neg__(self):
        return _ops().negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops().abs(self)

    def __invert__(self):
        return _ops().bitwise_not(self)

    def __and__(self, other):
        return _ops().bitwise_and(self, other)

    def __rand__(self, other):
        return _ops().bitwise_and(other, self)

    def __or__(self, other):
        return _ops().bitwise_or(self, other)

    def __ror__(self, other):
        return _ops().bitwise_or(other, self)

    def __xor__(self, other):
        return _ops().bitwise_xor(self, other)

    def __rxor__(self, other):
        return _ops().bitwise_xor(other, self)

    def __eq__(self, other):
        return _ops().equal(self, other)

    def __ne__(self, other):
        return _ops().not_equal(self, other)

    def __lt__(self, other):
        return _ops().less(self, other)

    def __le__(self, other):
        return _ops().less_equal(self, other)

    def __gt__(self, other):
        return _ops().greater(self, other)

    def __ge__(self, other):
        return _ops().greater_equal(self, other)

    def __getitem__(self, key):
        from .indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key, value):
        from .indexing import setitem

        self.replace(setitem(self, key, value))


_ELEMENTWISE = []


def _ops():
    # Imported on first use (the op modules import this one); cached, since every
    # operator goes through here.
    if not _ELEMENTWISE:
        from .ops import elementwise

        _ELEMENTWISE.append(elementwise)
    return _ELEMENTWISE[0]


def is_var(x):
    """True if ``x`` is a Var."""
    return isinstance(x, Var)


def _default_array(value, dtype=None):
    """numpy array for a Python value with MNN's defaults (float32, int32)."""
    if dtype is not None:
        return np.asarray(value, dtype=_dt.to_numpy_dtype(dtype))
    if isinstance(value, np.ndarray):
        return value.astype(_dt.to_numpy_dtype(value.dtype), copy=False)
    if isinstance(value, np.generic):
        return np.asarray(value, dtype=_dt.to_numpy_dtype(value.dtype))
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        return arr.astype(np.int32) if _fits_int32(arr) else arr
    if arr.dtype.kind in "US" or arr.dtype == object:
        raise TypeError(f"mnn: cannot make a Var from {type(value).__name__} "
                        f"({arr.dtype}); expected numbers")
    return arr.astype(_dt.to_numpy_dtype(arr.dtype), copy=False)


def _fits_int32(arr):
    return arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)


def const(value, shape=None, data_format=NCHW, dtype=None):
    """A constant Var holding ``value``.

    Parameters
    ----------
    value : array_like
        Scalar, (nested) list or ndarray.
    shape : sequence of int, optional
        Reshape the value to this shape (must hold the same number of elements).
    data_format : data_format, optional
        Label only (NC4HW4 is laid out as NCHW).
    dtype : dtype, optional
        Element type; default: the array's dtype for ndarrays, else float32 / int32.
    """
    arr = np.array(_default_array(value, dtype), copy=True)
    if shape is not None:
        shape = [int(d) for d in shape]
        if int(np.prod(shape, dtype=np.int64)) != arr.size:
            raise OpError(f"mnn: const: value with {arr.size} elements does not fit shape "
                          f"{shape}")
        arr = _reshaped_frozen(arr, shape)
    return _source("const", arr, data_format)


def scalar(value, dtype=None):
    """A 0-d constant (pymnn's ``scalar``)."""
    return const(np.asarray(_default_array(value, dtype)).reshape(()))


def placeholder(shape=(), format=NCHW, dtype=_dt.float):  # noqa: A002 - pymnn's name
    """An input Var to be written later; ``-1`` in ``shape`` marks a dimension given by
    the first write.

    Parameters
    ----------
    shape : sequence of int
    format : data_format
        Label (NC4HW4 is laid out as NCHW).
    dtype : dtype
    """
    from .graph import Expr
    from .optable import TensorMeta

    shape = tuple(int(d) for d in shape)
    if any(d < -1 for d in shape):
        raise OpError(f"mnn: placeholder: shape {list(shape)} has a dimension below -1")
    npdt = _dt.to_numpy_dtype(dtype)
    fmt = _data_format(format)
    expr = Expr(None, "placeholder", [], {},
                [TensorMeta(shape if all(d >= 0 for d in shape) else shape, npdt)],
                data_format=fmt)
    if any(d < 0 for d in shape):
        # Unknown dims: consumers infer once a value is written.
        expr.metas = [TensorMeta(None, npdt)]
        expr.attrs = {"declared_shape": shape}
    return expr.outputs[0]


def _source(kind, arr, data_format=NCHW):
    from .graph import Expr

    expr = Expr(None, kind, [], {}, [], data_format=_data_format(data_format))
    expr.outputs = [Var(expr, 0)]
    expr.set_source_value(arr)
    return expr.outputs[0]


def to_var(x, dtype=None):
    """Return ``x`` as a Var: Vars pass through; scalars, lists and arrays become consts."""
    if isinstance(x, Var):
        return x
    if isinstance(x, (numbers.Number, np.generic, np.ndarray, list, tuple, bool)):
        return const(x, dtype=dtype)
    if hasattr(x, "__array__"):
        return const(np.asarray(x), dtype=dtype)
    raise TypeError(f"mnn: expected a Var, number, list or ndarray, got {type(x).__name__}")


# A written (or read) array of at least this many bytes is copied by the kernel threads,
# a piece each: for a 1x3x224x224 image that saved 0.6-1.2% of a MobileNetV2 or ResNet18
# run at 2 threads (in-process A/B); reading a 64x112x112 activation's 3.2 MB took 45 us
# instead of 80.
_PARALLEL_COPY_BYTES = 1 << 18


def _reshaped_frozen(arr, shape):
    """``arr`` (a new array of the engine's own) reshaped, read-only down to its memory.

    A source's value is made read-only when stored; a reshaped view would keep a
    writeable base, and the weights prepared from values nobody can write are the only
    ones cached (ops/pack_cache.py): a conv weight given as ``const(w, shape)`` was
    packed again on every run."""
    arr.flags.writeable = False
    return arr.reshape(shape)


def _copy_of(value, dtype):
    """A new array of ``value``'s values as ``dtype`` (what ``write`` stores and ``read``
    returns)."""
    threads = get_thread_number()
    if type(value) is np.ndarray and value.dtype == dtype and value.flags.c_contiguous \
            and value.nbytes >= _PARALLEL_COPY_BYTES and threads > 1:
        from .._cython import elementwise as kernels

        arr = np.empty(value.shape, dtype)
        kernels.copy_bytes(value.reshape(-1).view(np.uint8), arr.reshape(-1).view(np.uint8),
                           threads)
        return arr
    return np.array(value, dtype=dtype, copy=True)
