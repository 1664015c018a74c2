"""Padding and tiling: ``pad`` (CONSTANT / REFLECT / SYMMETRIC) and ``tile``.

REFLECT mirrors without repeating the edge element (numpy's ``"reflect"``, so a pad must
be smaller than its axis); SYMMETRIC mirrors with it (numpy's ``"symmetric"``, a pad at
most the axis size). The gradient of every mode folds the padded gradient back onto the
positions each border element was copied from.
"""
import numpy as np

from ..enums import PadValue_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["pad", "tile"]

_NUMPY_MODE = {PadValue_Mode.CONSTANT: "constant", PadValue_Mode.REFLECT: "reflect",
               PadValue_Mode.SYMMETRIC: "symmetric"}


def _check_pads(shape, pads, mode):
    if len(pads) != len(shape):
        raise OpError(f"paddings give {len(pads)} axes for a {len(shape)}-d input "
                      "(need shape [ndim, 2])")
    for axis, ((before, after), dim) in enumerate(zip(pads, shape)):
        if before < 0 or after < 0:
            raise OpError(f"paddings {list(pads[axis])} of axis {axis} are negative")
        if mode == PadValue_Mode.REFLECT and max(before, after) >= max(dim, 1) and (
                before or after):
            raise OpError(f"REFLECT padding {[before, after]} of axis {axis} must be smaller "
                          f"than its size {dim}")
        if mode == PadValue_Mode.SYMMETRIC and max(before, after) > dim:
            raise OpError(f"SYMMETRIC padding {[before, after]} of axis {axis} must not "
                          f"exceed its size {dim}")


def _pad_infer(metas, pads, mode, value):
    x = metas[0]
    _check_pads(x.shape, pads, mode)
    return [(tuple(d + b + a for d, (b, a) in zip(x.shape, pads)), x.dtype)]


def _pad_compute(arrays, pads, mode, value):
    x = arrays[0]
    _check_pads(x.shape, pads, mode)
    if x.ndim == 0:
        return x.copy()
    if mode == PadValue_Mode.CONSTANT:
        return np.pad(x, pads, mode="constant", constant_values=np.asarray(value, x.dtype))
    return np.pad(x, pads, mode=_NUMPY_MODE[mode])


def _pad_grad(inputs, outputs, grads, pads, mode, value):
    return [apply("pad_grad", [grads[0]], pads=pads, mode=mode,
                  shape=tuple(inputs[0].shape))[0]]


register(OpDef("pad", _pad_infer, _pad_compute, _pad_grad))


def _source_positions(dim, before, after, mode):
    """For each position of a padded axis, the input position it copies (-1: constant)."""
    if mode == PadValue_Mode.CONSTANT:
        return np.concatenate([np.full(before, -1), np.arange(dim), np.full(after, -1)])
    return np.pad(np.arange(dim), (before, after), mode=_NUMPY_MODE[mode])


def _pad_grad_infer(metas, pads, mode, shape):
    g = metas[0]
    _check_pads(shape, pads, mode)
    want = tuple(d + b + a for d, (b, a) in zip(shape, pads))
    if tuple(g.shape) != want:
        raise OpError(f"gradient of shape {list(g.shape)} does not match padded shape "
                      f"{list(want)}")
    return [(tuple(shape), g.dtype)]


def _pad_grad_compute(arrays, pads, mode, shape):
    g = arrays[0]
    for axis, (dim, (before, after)) in enumerate(zip(shape, pads)):
        src = _source_positions(dim, before, after, mode)
        keep = src >= 0
        out_shape = list(g.shape)
        out_shape[axis] = dim
        out = np.zeros(out_shape, g.dtype)
        lead = (slice(None),) * axis
        np.add.at(out, lead + (src[keep],), g[lead + (keep,)])
        g = out
    return g


def _pad_grad_grad(inputs, outputs, grads, pads, mode, shape):
    return [apply("pad", [grads[0]], pads=pads, mode=mode, value=0)[0]]


register(OpDef("pad_grad", _pad_grad_infer, _pad_grad_compute, _pad_grad_grad))


def pad(x, paddings, mode=PadValue_Mode.CONSTANT):
    """Pad ``x`` by ``paddings`` (MNN's ``pad``).

    Parameters
    ----------
    x : Var or array_like
    paddings : array_like of int or const Var, shape ``[x.ndim, 2]``
        ``paddings[i] = [before, after]`` for axis i.
    mode : PadValue_Mode
        ``CONSTANT`` (zeros), ``REFLECT`` or ``SYMMETRIC``.

    Returns
    -------
    Var
    """
    x = to_var(x)
    if hasattr(paddings, "read"):
        paddings = paddings.read()
    arr = np.asarray(paddings)
    if arr.size and arr.dtype.kind not in "iu":
        raise OpError(f"pad: paddings must be integers, got {arr.dtype}")
    try:
        arr = arr.reshape(-1, 2)
    except ValueError:
        raise OpError(f"pad: paddings of shape {list(arr.shape)} must be [ndim, 2]") from None
    try:
        mode = PadValue_Mode(int(mode))
    except ValueError:
        raise OpError(f"pad: mode {mode!r} is not CONSTANT, REFLECT or SYMMETRIC") from None
    pads = tuple((int(b), int(a)) for b, a in arr)
    return apply("pad", [x], pads=pads, mode=mode, value=0)[0]


# -- tile ---------------------------------------------------------------------------------

def _tile_infer(metas, multiples):
    x = metas[0]
    if len(multiples) != len(x.shape):
        raise OpError(f"multiples {list(multiples)} must have one entry per axis of the "
                      f"{len(x.shape)}-d input")
    if any(m < 0 for m in multiples):
        raise OpError(f"multiples {list(multiples)} must not be negative")
    return [(tuple(d * m for d, m in zip(x.shape, multiples)), x.dtype)]


def _tile_compute(arrays, multiples):
    return np.tile(arrays[0], multiples)


def _tile_grad(inputs, outputs, grads, multiples):
    # Output axis i is (multiples[i], shape[i]) laid out consecutively: sum the copies.
    from .movement import reshape
    from .reduce import reduce_sum

    shape = inputs[0].shape
    split = []
    for m, d in zip(multiples, shape):
        split += [m, d]
    g = reshape(grads[0], split, zero_copies=False)  # a 0 here is a size, not "copy"
    if not shape:
        return [g]
    g = reduce_sum(g, list(range(0, 2 * len(shape), 2)), keepdims=False)
    return [g]


register(OpDef("tile", _tile_infer, _tile_compute, _tile_grad))


def tile(x, multiples):
    """Repeat ``x`` ``multiples[i]`` times along axis i (MNN's ``tile``; numpy's ``tile``
    with one multiple per axis).

    Parameters
    ----------
    x : Var or array_like
    multiples : sequence of int or const Var
    """
    x = to_var(x)
    if hasattr(multiples, "read"):
        multiples = multiples.read()
    arr = np.atleast_1d(np.asarray(multiples))
    if arr.size and arr.dtype.kind not in "iu":
        raise OpError(f"tile: multiples must be integers, got {arr.dtype}")
    return apply("tile", [x], multiples=tuple(int(m) for m in arr.ravel()))[0]
