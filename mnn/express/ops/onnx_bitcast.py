"""``bitcast``: reinterpret the bits of each element as another type of the same width.

ONNX BitCast reinterprets bits; some ONNX types are held wider in a Var (float16,
bfloat16 as float32; int16, uint16 as int32; uint32, uint64 as int64 — see
``onnx_narrow``). ``bitcast(x; src, dst)`` therefore takes the ONNX type names: it narrows
``x`` to ``src``, reinterprets the bits as ``dst`` and widens the result to ``dst``'s
storage type. bfloat16 is the upper half of a float32 pattern, so no extra package is
needed for it.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["bitcast"]

# Type name -> (bit width, storage dtype of a Var holding it).
_TYPES = {
    "float32": (32, np.float32), "float64": (64, np.float64), "float16": (16, np.float32),
    "bfloat16": (16, np.float32), "int8": (8, np.int8), "uint8": (8, np.uint8),
    "int16": (16, np.int32), "uint16": (16, np.int32), "int32": (32, np.int32),
    "uint32": (32, np.int64), "int64": (64, np.int64), "uint64": (64, np.int64),
    "bool": (8, np.bool_),
}


def _check(src, dst, x_dtype=None):
    for name in (src, dst):
        if name not in _TYPES:
            raise OpError(f"bitcast: type {name!r} is not one of {sorted(_TYPES)}")
    if _TYPES[src][0] != _TYPES[dst][0]:
        raise OpError(f"bitcast: {src} ({_TYPES[src][0]} bits) and {dst} "
                      f"({_TYPES[dst][0]} bits) differ in width")
    if x_dtype is not None and np.dtype(x_dtype) != np.dtype(_TYPES[src][1]):
        raise OpError(f"bitcast: {src} values are held as {np.dtype(_TYPES[src][1])}, got "
                      f"{x_dtype}")


def _infer(metas, src, dst):
    _check(src, dst, metas[0].dtype)
    return [(metas[0].shape, np.dtype(_TYPES[dst][1]))]


def _bits(x, src):
    """Unsigned integers holding the bit patterns of ``x`` as type ``src``."""
    width = _TYPES[src][0]
    if src == "bfloat16":
        return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = x.astype(np.dtype(src))
    return narrow.view(np.dtype(f"u{width // 8}"))


def _compute(arrays, src, dst):
    bits = _bits(arrays[0], src)
    if dst == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if dst == "bool":
        # Only 0 and 1 are valid bools; any other byte reads as true.
        return bits != 0
    return bits.view(np.dtype(dst)).astype(_TYPES[dst][1])


register(OpDef("bitcast", _infer, _compute))


def bitcast(x, src, dst):
    """The bits of ``x`` (holding ``src`` values) reinterpreted as type ``dst``.

    Parameters
    ----------
    x : Var or array_like
        Values of ONNX type ``src`` in their Var dtype.
    src, dst : str
        numpy type names of equal width (``bfloat16`` included).

    Returns
    -------
    Var
        ``dst`` values in their Var dtype (float16/bfloat16 as float32 ...).
    """
    return apply("bitcast", [to_var(x)], src=str(src), dst=str(dst))[0]
