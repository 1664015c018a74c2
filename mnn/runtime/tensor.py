"""``mnn.Tensor``: the legacy session API's host tensor, with MNN's names.

A Tensor holds one numpy array laid out as its dimension type says: ``Tensorflow`` is
NHWC, ``Caffe`` is NCHW and ``Caffe_C4`` is NCHW too (MNN's packed NC4HW4 is a label here,
with logical NCHW data, as everywhere in mnn). ``copyFrom`` and ``copyToHostTensor``
convert between layouts of 4-d tensors as MNN does. Unlike the real wheel,
``copyFrom`` also takes a numpy array, and ``getNumpyData`` returns a copy that later runs
never overwrite.
"""
import numpy as np

from ..express.errors import MnnError
from ..express.formats import NC4HW4, NHWC

__all__ = [
    "HalideType",
    "Halide_Type_Double",
    "Halide_Type_Float",
    "Halide_Type_Int",
    "Halide_Type_Int64",
    "Halide_Type_String",
    "Halide_Type_Uint8",
    "Tensor",
    "Tensor_DimensionType_Caffe",
    "Tensor_DimensionType_Caffe_C4",
    "Tensor_DimensionType_Tensorflow",
]

Tensor_DimensionType_Tensorflow = 0
Tensor_DimensionType_Caffe = 1
Tensor_DimensionType_Caffe_C4 = 2
_DIM_TYPES = (0, 1, 2)


class HalideType:
    """An element type of the session API (MNN's ``Halide_Type_*`` constants)."""

    __slots__ = ("dtype", "name")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = None if dtype is None else np.dtype(dtype)

    def __repr__(self):
        return f"Halide_Type_{self.name}"


Halide_Type_Int = HalideType("Int", np.int32)
Halide_Type_Int64 = HalideType("Int64", np.int64)
Halide_Type_Float = HalideType("Float", np.float32)
# MNN creates float32 storage for Halide_Type_Double (its session API has no double
# tensors); we keep that behaviour so scripts give the same dtypes.
Halide_Type_Double = HalideType("Double", np.float32)
Halide_Type_Uint8 = HalideType("Uint8", np.uint8)
Halide_Type_String = HalideType("String", None)

_BY_DTYPE = {np.dtype(np.int32): Halide_Type_Int, np.dtype(np.int64): Halide_Type_Int64,
             np.dtype(np.float32): Halide_Type_Float, np.dtype(np.float64): Halide_Type_Double,
             np.dtype(np.uint8): Halide_Type_Uint8}


def halide_type_of(dtype):
    """The Halide type constant of a numpy dtype (None when the session API has none)."""
    return _BY_DTYPE.get(np.dtype(dtype))


def dim_type_of(data_format):
    """The dimension type a tensor of express ``data_format`` gets in a session."""
    if data_format == NHWC:
        return Tensor_DimensionType_Tensorflow
    if data_format == NC4HW4:
        return Tensor_DimensionType_Caffe_C4
    return Tensor_DimensionType_Caffe


def _relayout(array, src_type, dst_type):
    """Convert a 4-d array between NHWC (Tensorflow) and NCHW (Caffe, Caffe_C4)."""
    if array.ndim != 4 or (src_type == 0) == (dst_type == 0):
        return array
    if src_type == 0:
        return array.transpose(0, 3, 1, 2)
    return array.transpose(0, 2, 3, 1)


def _shape_for(shape, src_type, dst_type):
    shape = tuple(shape)
    if len(shape) != 4 or (src_type == 0) == (dst_type == 0):
        return shape
    n, a, b, c = shape
    return (n, c, a, b) if src_type == 0 else (n, b, c, a)


def _check_dim_type(value):
    value = int(value)
    if value not in _DIM_TYPES:
        raise MnnError(f"mnn: Tensor: dimension type {value} is not one of "
                       "Tensor_DimensionType_Tensorflow (0), Caffe (1), Caffe_C4 (2)")
    return value


def _halide(value):
    if isinstance(value, HalideType):
        if value.dtype is None:
            raise MnnError("mnn: Tensor: string tensors are not supported")
        return value
    raise MnnError(f"mnn: Tensor: data type must be a Halide_Type_* constant, got "
                   f"{value!r}")


class Tensor:
    """A host tensor (MNN's ``Tensor``).

    Forms (as pymnn): ``Tensor()``; ``Tensor(var)``; ``Tensor(tensor_or_var, dim_type)``
    (same dimensions in ``dim_type``'s layout, zero-filled, to copy into);
    ``Tensor(shape, halide_type, dim_type)`` (zeros); ``Tensor(shape, halide_type, data,
    dim_type)`` with ``data`` an ndarray, list, tuple or bytes of ``prod(shape)`` elements.
    """

    __slots__ = ("_array", "_dim_type", "_halide", "_owner")

    def __init__(self, *args):
        self._owner = None  # the Session whose input this is (resizeTensor needs it)
        if len(args) == 0:
            self._set(np.zeros((0,), np.float32), 1)
        elif len(args) == 1:
            self._from_var(args[0], None)
        elif len(args) == 2:
            src, dim_type = args
            dim_type = _check_dim_type(dim_type)
            if isinstance(src, Tensor):
                shape = _shape_for(src._array.shape, src._dim_type, dim_type)
                self._set(np.zeros(shape, src._array.dtype), dim_type)
            else:
                self._from_var(src, dim_type)
        elif len(args) in (3, 4):
            shape, halide = args[0], _halide(args[1])
            dim_type = _check_dim_type(args[-1])
            shape = tuple(int(d) for d in shape)
            if any(d < 0 for d in shape):
                raise MnnError(f"mnn: Tensor: shape {list(shape)} has a negative dimension")
            if len(args) == 3:
                self._set(np.zeros(shape, halide.dtype), dim_type)
            else:
                self._set(_data_array(args[2], shape, halide.dtype), dim_type)
        else:
            raise MnnError("mnn: Tensor takes (), (var), (tensor_or_var, dim_type), "
                           "(shape, halide_type, dim_type) or (shape, halide_type, data, "
                           "dim_type)")

    def _from_var(self, var, dim_type):
        from ..express.var import Var

        if not isinstance(var, Var):
            raise MnnError(f"mnn: Tensor(var): expected a Var, got {type(var).__name__}")
        own = dim_type_of(var.data_format)
        array = np.array(var.read())
        if dim_type is None:
            dim_type = own
        else:
            array = np.ascontiguousarray(_relayout(array, own, dim_type))
        self._set(array, dim_type)

    def _set(self, array, dim_type):
        # Arrays are replaced, never written in place: a Tensor may share a run's output.
        self._array = array
        self._dim_type = dim_type
        self._halide = _BY_DTYPE.get(array.dtype)  # None for types MNN's API lacks (bool)

    # -- information -----------------------------------------------------------------
    def getShape(self):
        """The shape as a tuple, in this tensor's layout."""
        return tuple(int(d) for d in self._array.shape)

    def getDataType(self):
        """The Halide type constant (``Halide_Type_Float`` ...), None for other types."""
        return self._halide

    def getDimensionType(self):
        """0 (Tensorflow, NHWC), 1 (Caffe, NCHW) or 2 (Caffe_C4)."""
        return self._dim_type

    # -- data ------------------------------------------------------------------------
    def getData(self):
        """The elements as a flat tuple of Python numbers."""
        return tuple(self._array.ravel().tolist())

    def getNumpyData(self):
        """The data as a new ndarray (never overwritten by later runs)."""
        return np.array(self._array, copy=True)

    def fromNumpy(self, array):
        """Copy ``array`` in (same number of elements; cast to this tensor's type)."""
        array = np.asarray(array)
        if array.size != self._array.size:
            raise MnnError(f"mnn: Tensor.fromNumpy: {array.size} elements for a tensor of "
                           f"shape {list(self._array.shape)}")
        self._array = array.astype(self._array.dtype).reshape(self._array.shape)

    def copyFrom(self, source):
        """Copy another Tensor (converting NHWC/NCHW layouts) or an ndarray in.

        Returns True; a shape that does not fit raises naming both shapes.
        """
        if isinstance(source, Tensor):
            data = _relayout(source._array, source._dim_type, self._dim_type)
            what = f"tensor of shape {list(source.getShape())}"
        else:
            data = np.asarray(source)
            what = f"array of shape {list(data.shape)}"
        if data.shape != self._array.shape:
            if data.size != self._array.size:
                raise MnnError(f"mnn: Tensor.copyFrom: a {what} does not fit a tensor of "
                               f"shape {list(self._array.shape)}")
            data = np.reshape(data, self._array.shape)
        self._array = np.array(data, dtype=self._array.dtype, copy=True)
        return True

    copyFromHostTensor = copyFrom

    def copyToHostTensor(self, target):
        """Copy this tensor into ``target`` (converting layouts); returns True."""
        if not isinstance(target, Tensor):
            raise MnnError(f"mnn: copyToHostTensor needs a Tensor, got "
                           f"{type(target).__name__}")
        return target.copyFrom(self)

    def printTensorData(self):
        """Print the data."""
        print(self._array)

    def __repr__(self):
        return repr(self._array)

    # -- for the session ---------------------------------------------------------------
    def _layout_array(self, data_format):
        """The data laid out for an express tensor of ``data_format``."""
        return _relayout(self._array, self._dim_type, dim_type_of(data_format))


def _data_array(data, shape, dtype):
    size = int(np.prod(shape, dtype=np.int64))
    if isinstance(data, (bytes, bytearray)):
        if len(data) != size * np.dtype(dtype).itemsize:
            raise MnnError(f"mnn: Tensor: {len(data)} bytes for shape {list(shape)} of "
                           f"{np.dtype(dtype)}")
        return np.frombuffer(bytes(data), dtype=dtype).reshape(shape).copy()
    if not isinstance(data, (np.ndarray, list, tuple)):
        raise MnnError(f"mnn: Tensor: data must be an ndarray, list, tuple or bytes, got "
                       f"{type(data).__name__}")
    array = np.asarray(data)
    if array.size != size:
        raise MnnError(f"mnn: Tensor: {array.size} values for shape {list(shape)}")
    return np.array(array.reshape(shape), dtype=dtype, copy=True)

