"""The op mapping between the .mnn file and the express op table.

Two tables, filled by the per-family modules (``map_math``, ``map_shape``, ``map_nn``,
``map_control``) with one explicit decorator call per entry:

- ``DECODERS``: MNN OpType name -> ``decode(ctx, op, inputs) -> list of Var``. ``op`` is the
  decoded ``Op`` dict (its parameter table in ``op["main"]``), ``inputs`` the Vars of its
  input tensors; ``ctx`` is a :class:`DecodeContext`.
- ``ENCODERS``: express op name -> ``encode(ctx, expr)``, which emits one or more MNN ops
  through the :class:`EncodeContext` and binds the Expr's outputs to tensors.

Data types: MNN's ``DataType`` numbers map to numpy dtypes here (:func:`dtype_of`,
:func:`datatype_of`).
"""

import numpy as np

from .errors import ModelFileError, RuntimeValueNeeded

__all__ = [
    "DECODERS",
    "ENCODERS",
    "DecodeContext",
    "array_to_blob",
    "blob_to_array",
    "datatype_of",
    "decoder",
    "dtype_of",
    "encoder",
]

DECODERS = {}
ENCODERS = {}


def decoder(*type_names):
    """Register a decoder for the MNN op types ``type_names``."""

    def register(fn):
        for name in type_names:
            if name in DECODERS:
                raise RuntimeError(f"mnn.format: decoder for {name} registered twice")
            DECODERS[name] = fn
        return fn

    return register


def encoder(*op_names):
    """Register an encoder for the express ops ``op_names``."""

    def register(fn):
        for name in op_names:
            if name in ENCODERS:
                raise RuntimeError(f"mnn.format: encoder for {name} registered twice")
            ENCODERS[name] = fn
        return fn

    return register


# DataType number <-> numpy dtype. MNN keeps booleans as int32 at run time; files mark
# them DT_BOOL.
_DTYPES = {
    1: np.float32,
    2: np.float64,
    3: np.int32,
    4: np.uint8,
    5: np.int16,
    6: np.int8,
    9: np.int64,
    10: np.bool_,
    17: np.uint16,
    19: np.float16,
}
_DATATYPES = {np.dtype(v): k for k, v in _DTYPES.items()}
# MNN has no unsigned 32/64-bit types: its converter stores them as int32/int64.
_DATATYPES.update({np.dtype(np.uint32): 3, np.dtype(np.uint64): 9})


def dtype_of(datatype, where="DataType"):
    """numpy dtype of MNN DataType number ``datatype``."""
    try:
        return np.dtype(_DTYPES[int(datatype)])
    except KeyError:
        raise ModelFileError(
            f"mnn: {where}: data type {datatype} is not supported "
            "(float, double, int8/16/32/64, uint8/16, bool, half)"
        ) from None


def datatype_of(dtype, where="dtype"):
    """MNN DataType number of numpy dtype ``dtype``."""
    try:
        return _DATATYPES[np.dtype(dtype)]
    except KeyError:
        raise ModelFileError(
            f"mnn: {where}: {np.dtype(dtype)} cannot be stored in a .mnn file"
        ) from None


def blob_to_array(blob, where, external=None):
    """The array held by a decoded ``Blob`` dict.

    ``external`` is a callable ``(offset, size) -> bytes`` for blobs whose data lives in the
    ``.mnn.weight`` file.
    """
    dims = [] if blob.get("dims") is None else [int(d) for d in blob["dims"]]
    if any(d < 0 for d in dims):
        raise ModelFileError(f"mnn: {where}: constant has negative dimension in {dims}")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    dtype = dtype_of(blob["dataType"], where)
    stored = None
    for field in ("float32s", "int32s", "uint8s", "int8s", "int64s"):
        if blob.get(field) is not None:
            stored = blob[field]
            break
    if stored is None and blob.get("external") is not None and external is not None:
        ext = blob["external"]
        if len(ext) < 2:
            raise ModelFileError(
                f"mnn: {where}: external data needs [offset, size], got {list(ext)}"
            )
        raw = external(int(ext[0]), int(ext[1]), where)
        store_dtype = np.dtype(np.float32) if dtype == np.float64 else dtype
        if dtype == np.bool_:
            store_dtype = np.dtype(np.int32)
        stored = np.frombuffer(raw, dtype=store_dtype.newbyteorder("<"))
    if stored is None:
        if count == 0:
            return np.zeros(dims, dtype)
        raise ModelFileError(f"mnn: {where}: constant of shape {dims} holds no data")
    if stored.size != count:
        if stored.size == 1 and not dims:
            count = 1
        else:
            raise ModelFileError(
                f"mnn: {where}: constant of shape {dims} needs {count} "
                f"values, the file holds {stored.size}"
            )
    if dtype == np.float16 and stored.dtype != np.float16:
        # Half constants are stored as their raw 16-bit patterns in the byte vectors.
        stored = np.ascontiguousarray(stored).view(np.uint8).view("<f2")[:count]
    arr = np.array(stored, dtype=dtype).reshape(dims)
    return arr


def fits_int32(arr):
    """Whether every value of integer array ``arr`` fits in int32."""
    return arr.size == 0 or (int(arr.min()) >= -(2**31) and int(arr.max()) < 2**31)


def file_dtype(dtype):
    """The dtype MNN computes with for ``dtype``: int32 for booleans and 64-bit or
    unsigned 32-bit integers (as MNN's converter narrows them), else ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype in (np.bool_, np.int64, np.uint64, np.uint32):
        return np.dtype(np.int32)
    return dtype


def array_to_blob(array, data_format=0):
    """A ``Blob`` dict holding ``array``.

    MNN has no doubles (float64 is stored as float32) and computes with int32 where
    ONNX has int64 (its converter narrows them; the real wheel crashes on int64 arithmetic
    and on a DT_BOOL loop condition): 64-bit integers that fit are stored as int32, and
    bools as int32 0/1.
    """
    arr = np.asarray(array)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.int32)
    if arr.dtype in (np.int64, np.uint64, np.uint32) and fits_int32(arr):
        arr = arr.astype(np.int32)
    blob = {
        "dims": np.asarray(arr.shape, np.int32),
        "dataFormat": data_format,
        "dataType": datatype_of(arr.dtype),
    }
    flat = arr.reshape(-1)
    if arr.dtype == np.float32:
        blob["float32s"] = flat
    elif (
        arr.dtype in (np.int32, np.int16, np.uint16)
        or arr.dtype == np.bool_
        or arr.dtype == np.uint32
    ):
        blob["int32s"] = flat.astype(np.int32)
    elif arr.dtype in (np.int64, np.uint64):
        blob["int64s"] = flat.astype(np.int64)
    elif arr.dtype == np.uint8:
        blob["uint8s"] = flat
    elif arr.dtype == np.int8:
        blob["int8s"] = flat
    elif arr.dtype == np.float16:
        blob["uint8s"] = flat.view(np.uint8)
    else:
        raise ModelFileError(f"mnn: {arr.dtype} constants cannot be stored in a .mnn file")
    return blob


class DecodeContext:
    """What a decoder may ask while the reader builds the graph."""

    def __init__(self, source, external=None, subgraphs=None):
        self.source = source
        self.external = external
        self.subgraphs = subgraphs or {}
        self.building = set()
        self.external_files = {}

    def fail(self, op, message):
        """Raise a ModelFileError naming the file, the op and its type."""
        raise ModelFileError(
            f"mnn: {self.source}: op {op.get('name')!r} ({op.get('_type_name')}): {message}"
        )

    def weights(self, op):
        """The external weight file of ``op``: its ``externalPath`` (which must stay inside
        the model's folder) or the model's ``.weight`` file."""
        if self.external is None:
            self.fail(
                op,
                "weights are stored in an external file, which a model given as bytes cannot have",
            )
        path = op.get("externalPath")
        if not path:
            return self.external
        from .external import ExternalWeights

        where = f"op {op.get('name')!r}"
        full = self.external.resolve(path, where)
        if full not in self.external_files:
            self.external_files[full] = ExternalWeights(full, self.external.model_name)
        return self.external_files[full]

    def static(self, var):
        """The value of ``var`` when it is a constant, else None."""
        if var.expr.kind == "const":
            return np.asarray(var.expr.values[var.index])
        return None

    def need_static(self, op, var, what):
        value = self.static(var)
        if value is None:
            raise RuntimeValueNeeded(
                f"mnn: {self.source}: op {op.get('name')!r} ({op.get('_type_name')}): "
                f"{what} must be a constant here (it is computed at run time)")
        return value

    def param(self, op, table):
        """The op's parameter table, checking it has the expected type."""
        main = op.get("main")
        if op.get("main_type") != table or main is None:
            self.fail(op, f"expected a {table} parameter table, found {op.get('main_type')}")
        return main

    def n_inputs(self, op, inputs, low, high=None):
        high = low if high is None else high
        if not low <= len(inputs) <= high:
            want = str(low) if low == high else f"{low} to {high}"
            self.fail(op, f"takes {want} inputs, the file gives {len(inputs)}")
