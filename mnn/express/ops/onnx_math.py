"""Elementwise primitives ONNX defines with C semantics that numpy-style ops lack.

- ``onnx_trunc_div``: integer division rounding toward zero (ONNX ``Div`` on integers).
- ``onnx_fmod``: remainder with the dividend's sign (``Mod`` with ``fmod=1``, C's fmod).
- ``onnx_bit_shift``: ``BitShift`` (``direction`` LEFT or RIGHT); signed right shifts are
  arithmetic; shifting by the width or more (or by a negative count) shifts every bit out.

Not differentiable (integer results, or piecewise constant gradients ONNX never asks for).
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_bit_shift", "onnx_fmod", "onnx_trunc_div"]


def _same_dtype_broadcast(metas, ints_only):
    a, b = metas
    if a.dtype != b.dtype:
        raise OpError(f"both inputs need the same dtype, got {a.dtype} and {b.dtype}")
    if ints_only and a.dtype.kind not in "iu":
        raise OpError(f"needs integer inputs, got {a.dtype}")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise OpError(f"shapes {list(a.shape)} and {list(b.shape)} cannot be broadcast") \
            from None
    return [(shape, a.dtype)]


def _check_divisor(b):
    if b.dtype.kind in "iu" and np.any(b == 0):
        raise OpError("integer division by zero")


def _trunc_div_infer(metas):
    return _same_dtype_broadcast(metas, ints_only=True)


def _trunc_div_compute(arrays):
    a, b = arrays
    _check_divisor(b)
    q = np.floor_divide(a, b)
    # floor and truncation differ when the signs differ and the division is inexact.
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(q.dtype)).astype(a.dtype)


register(OpDef("onnx_trunc_div", _trunc_div_infer, _trunc_div_compute))


def onnx_trunc_div(x, y):
    """Integer division of ``x`` by ``y`` rounded toward zero (C semantics).

    Parameters
    ----------
    x, y : Var
        Integer Vars of one dtype, broadcastable.
    """
    return apply("onnx_trunc_div", [to_var(x), to_var(y)])[0]


def _fmod_infer(metas):
    return _same_dtype_broadcast(metas, ints_only=False)


def _fmod_compute(arrays):
    a, b = arrays
    _check_divisor(b)
    return np.fmod(a, b).astype(a.dtype)


register(OpDef("onnx_fmod", _fmod_infer, _fmod_compute))


def onnx_fmod(x, y):
    """Remainder of ``x / y`` with the sign of ``x`` (C's ``fmod``).

    Parameters
    ----------
    x, y : Var
        Vars of one dtype, broadcastable.
    """
    return apply("onnx_fmod", [to_var(x), to_var(y)])[0]


def _shift_infer(metas, direction):
    if direction not in ("LEFT", "RIGHT"):
        raise OpError(f"direction must be 'LEFT' or 'RIGHT', got {direction!r}")
    return _same_dtype_broadcast(metas, ints_only=True)


def _shift_compute(arrays, direction):
    a, b = arrays
    bits = a.dtype.itemsize * 8
    # Shifts by the width or more, or negative ones, are undefined in C; ONNX's tests
    # want every bit shifted out: 0 to the left, the sign fill to the right.
    too_far = (b >= bits) | (b < 0)
    safe = np.where(too_far, 0, b).astype(a.dtype)
    if direction == "LEFT":
        out, fill = np.left_shift(a, safe), np.zeros((), a.dtype)
    else:
        out = np.right_shift(a, safe)
        fill = np.where(a < 0, -1, 0).astype(a.dtype) if a.dtype.kind == "i" else \
            np.zeros((), a.dtype)
    return np.where(too_far, fill, out).astype(a.dtype)


register(OpDef("onnx_bit_shift", _shift_infer, _shift_compute))


def onnx_bit_shift(x, y, direction="LEFT"):
    """Shift the bits of integer ``x`` by ``y`` places to the ``direction`` side.

    Parameters
    ----------
    x, y : Var
        Integer Vars of one dtype, broadcastable.
    direction : {"LEFT", "RIGHT"}
    """
    return apply("onnx_bit_shift", [to_var(x), to_var(y)], direction=str(direction))[0]
