"""Element types of Vars: MNN's ``dtype`` enum names beside numpy's.

MNN scripts write ``F.float``, ``F.int``, ``F.double``; numpy users write ``np.float32``.
Both name the same numpy dtype here, and every API that takes a dtype accepts either.
"""
import enum

import numpy as np

__all__ = ["dtype", "float", "double", "int", "int64", "uint8", "int8", "bool",
           "float32", "float64", "int32", "to_numpy_dtype", "from_numpy_dtype",
           "SUPPORTED_DTYPES"]


class dtype(enum.IntEnum):
    """MNN's element-type enum (``MNN.expr.dtype``); values follow pymnn's order."""

    float = 0
    double = 1
    int = 2
    int64 = 3
    uint8 = 4
    int8 = 5
    bool = 6

    @property
    def numpy(self):
        return _ENUM_TO_NP[self]


_ENUM_TO_NP = {
    dtype.float: np.dtype(np.float32),
    dtype.double: np.dtype(np.float64),
    dtype.int: np.dtype(np.int32),
    dtype.int64: np.dtype(np.int64),
    dtype.uint8: np.dtype(np.uint8),
    dtype.int8: np.dtype(np.int8),
    dtype.bool: np.dtype(np.bool_),
}
_NP_TO_ENUM = {v: k for k, v in _ENUM_TO_NP.items()}

#: numpy dtypes a Var may hold.
SUPPORTED_DTYPES = tuple(_ENUM_TO_NP.values())

# Module-level names as pymnn exposes them (``F.float`` is the enum member).
float = dtype.float  # noqa: A001 - MNN's public name
double = dtype.double
int = dtype.int  # noqa: A001
int64 = dtype.int64
uint8 = dtype.uint8
int8 = dtype.int8
bool = dtype.bool  # noqa: A001
float32 = dtype.float
float64 = dtype.double
int32 = dtype.int

# numpy dtypes we store in a wider or narrower supported type on input.
_COERCE = {
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(np.uint64): np.dtype(np.int64),
}


def to_numpy_dtype(dt):
    """Return the numpy dtype for an MNN enum member, numpy dtype, type or name.

    Raises
    ------
    TypeError
        If ``dt`` names no type a Var can hold.
    """
    if isinstance(dt, dtype):
        return _ENUM_TO_NP[dt]
    try:
        npdt = np.dtype(dt)
    except TypeError as exc:
        raise TypeError(f"mnn: {dt!r} is not a dtype") from exc
    npdt = _COERCE.get(npdt, npdt)
    if npdt not in _NP_TO_ENUM:
        raise TypeError(f"mnn: dtype {npdt} is not supported; supported: "
                        + ", ".join(str(d) for d in SUPPORTED_DTYPES))
    return npdt


def from_numpy_dtype(npdt):
    """Return MNN's enum member for a numpy dtype."""
    return _NP_TO_ENUM[to_numpy_dtype(npdt)]
