"""1-d signal and index arithmetic as ops: convolve, interp, unwrap, gradient, packbits,
unpackbits, ravel_multi_index, unravel_index, and numpy's ``pad`` in all its modes.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from .np_common import axis_of, int_tuple

__all__ = ["convolve", "interp", "unwrap", "gradient", "packbits", "unpackbits",
           "np_ravel_multi_index", "np_unravel_index", "np_pad"]

_INDEX = np.dtype(np.int32)


# -- convolve ---------------------------------------------------------------------------

def _conv_len(n, m, mode):
    if mode == "full":
        return n + m - 1
    if mode == "same":
        return max(n, m)
    if mode == "valid":
        return max(n, m) - min(n, m) + 1
    raise OpError(f"mode {mode!r} is not one of full, same, valid")


def _convolve_infer(metas, mode):
    a, v = metas
    if len(a.shape) != 1 or len(v.shape) != 1:
        raise OpError("convolve needs two 1-d inputs")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise OpError("convolve inputs cannot be empty")
    return [((_conv_len(a.shape[0], v.shape[0], mode),), np.result_type(a.dtype, v.dtype))]


def _convolve_compute(arrays, mode):
    a, v = arrays
    return np.convolve(a, v, mode=mode).astype(np.result_type(a, v), copy=False)


register(OpDef("convolve", _convolve_infer, _convolve_compute))


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d sequences (numpy's ``convolve``).

    Parameters
    ----------
    a, v : Var or array_like, 1-d
    mode : {'full', 'same', 'valid'}

    Returns
    -------
    Var
    """
    return apply("convolve", [to_var(a), to_var(v)], mode=str(mode))[0]


# -- interp -----------------------------------------------------------------------------

def _interp_dtype(fp):
    return fp if fp.kind == "f" else np.dtype(np.float64)


def _interp_infer(metas, left, right, period):
    x, xp, fp = metas
    if len(xp.shape) != 1 or len(fp.shape) != 1 or xp.shape != fp.shape:
        raise OpError("xp and fp must be 1-d of the same length")
    if xp.shape[0] == 0:
        raise OpError("xp and fp cannot be empty")
    if period is not None and period == 0:
        raise OpError("period must be non-zero")
    return [(x.shape, _interp_dtype(fp.dtype))]


def _interp_compute(arrays, left, right, period):
    x, xp, fp = arrays
    out = np.interp(x, xp, fp, left=left, right=right, period=period)
    return np.asarray(out, dtype=_interp_dtype(fp.dtype))


register(OpDef("interp", _interp_infer, _interp_compute))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x``.

    Parameters
    ----------
    x : Var or array_like
    xp : Var or array_like, 1-d, increasing (unless ``period`` is given)
    fp : Var or array_like, 1-d, same length
    left, right : float, optional
        Values below ``xp[0]`` / above ``xp[-1]`` (default: the end values).
    period : float, optional

    Returns
    -------
    Var
        ``fp``'s dtype when float, else float64.
    """
    return apply("interp", [to_var(x), to_var(xp), to_var(fp)],
                 left=None if left is None else float(left),
                 right=None if right is None else float(right),
                 period=None if period is None else float(period))[0]


# -- unwrap -----------------------------------------------------------------------------

def _unwrap_infer(metas, discont, axis, period):
    x = metas[0]
    if not x.shape:
        raise OpError("unwrap needs at least a 1-d input")
    axis_of(axis, len(x.shape))
    return [(x.shape, x.dtype if x.dtype.kind == "f" else np.dtype(np.float64))]


def _unwrap_compute(arrays, discont, axis, period):
    x = arrays[0]
    out = np.unwrap(x, discont=discont, axis=axis, period=period)
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)


def _unwrap_grad(inputs, outputs, grads, discont, axis, period):
    # Unwrapping adds piecewise-constant multiples of the period: the derivative is 1.
    return [grads[0]]


register(OpDef("unwrap", _unwrap_infer, _unwrap_compute, _unwrap_grad))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap phase jumps larger than ``discont`` by adding multiples of ``period``.

    Returns
    -------
    Var
    """
    return apply("unwrap", [to_var(p)], discont=None if discont is None else float(discont),
                 axis=int(axis), period=float(period))[0]


# -- gradient ---------------------------------------------------------------------------

def _gradient_infer(metas, spacing, axes, edge_order):
    f = metas[0]
    if edge_order not in (1, 2):
        raise OpError("edge_order must be 1 or 2")
    dtype = f.dtype if f.dtype.kind == "f" else np.dtype(np.float64)
    for ax in axes:
        n = f.shape[axis_of(ax, len(f.shape))]
        if n < edge_order + 1:
            raise OpError(f"an axis of size {n} is too short for edge_order={edge_order}")
    for sp, ax in zip(spacing, axes):
        if isinstance(sp, tuple) and len(sp) != f.shape[ax]:
            raise OpError(f"coordinates of length {len(sp)} for an axis of size "
                          f"{f.shape[ax]}")
    return [(f.shape, dtype)] * len(axes)


def _gradient_compute(arrays, spacing, axes, edge_order):
    f = arrays[0]
    dtype = f.dtype if f.dtype.kind == "f" else np.float64
    args = [np.asarray(s) if isinstance(s, tuple) else s for s in spacing]
    out = np.gradient(f, *args, axis=axes, edge_order=edge_order)
    if len(axes) == 1:
        out = [out]
    return [np.asarray(o, dtype=dtype) for o in out]


register(OpDef("gradient", _gradient_infer, _gradient_compute, n_outputs=-1))


def gradient(f, spacing=(1.0,), axes=None, edge_order=1):
    """numpy's ``gradient``: central differences inside, one-sided at the edges.

    Parameters
    ----------
    f : Var or array_like
    spacing : sequence
        One scalar step for every axis, or one entry (scalar or coordinate sequence)
        per axis.
    axes : sequence of int, optional
    edge_order : {1, 2}

    Returns
    -------
    list of Var
        One derivative per axis.
    """
    f = to_var(f)
    axes = tuple(range(f.ndim)) if axes is None else tuple(axis_of(a, f.ndim)
                                                            for a in int_tuple(axes))
    spacing = list(spacing)
    if len(spacing) == 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes):
        raise OpError(f"gradient: {len(spacing)} spacings for {len(axes)} axes")
    spacing = tuple(tuple(float(c) for c in np.ravel(np.asarray(s)))
                    if np.ndim(np.asarray(s)) else float(s) for s in spacing)
    return apply("gradient", [f], spacing=spacing, axes=axes, edge_order=int(edge_order))


# -- packbits / unpackbits --------------------------------------------------------------

def _bitorder(bitorder):
    if bitorder not in ("big", "little"):
        raise OpError(f"bitorder must be 'big' or 'little', got {bitorder!r}")


def _packbits_infer(metas, axis, bitorder):
    x = metas[0]
    _bitorder(bitorder)
    if x.dtype.kind not in "iub":
        raise OpError(f"packbits needs integers or bools, got {x.dtype}")
    if axis is None:
        n = int(np.prod(x.shape, dtype=np.int64))
        return [(((n + 7) // 8,), np.dtype(np.uint8))]
    ax = axis_of(axis, len(x.shape))
    shape = list(x.shape)
    shape[ax] = (shape[ax] + 7) // 8
    return [(tuple(shape), np.dtype(np.uint8))]


def _packbits_compute(arrays, axis, bitorder):
    return np.packbits(arrays[0], axis=axis, bitorder=bitorder)


register(OpDef("packbits", _packbits_infer, _packbits_compute))


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of each element into bits of uint8 (numpy's ``packbits``)."""
    return apply("packbits", [to_var(a)], axis=None if axis is None else int(axis),
                 bitorder=str(bitorder))[0]


def _unpackbits_infer(metas, axis, count, bitorder):
    x = metas[0]
    _bitorder(bitorder)
    if x.dtype != np.uint8:
        raise OpError(f"unpackbits needs uint8, got {x.dtype}")
    n = int(np.prod(x.shape, dtype=np.int64)) if axis is None \
        else x.shape[axis_of(axis, len(x.shape))]
    bits = n * 8
    if count is not None:
        bits = count if count >= 0 else max(bits + count, 0)
    if axis is None:
        return [((bits,), np.dtype(np.uint8))]
    shape = list(x.shape)
    shape[axis_of(axis, len(shape))] = bits
    return [(tuple(shape), np.dtype(np.uint8))]


def _unpackbits_compute(arrays, axis, count, bitorder):
    return np.unpackbits(arrays[0], axis=axis, count=count, bitorder=bitorder)


register(OpDef("unpackbits", _unpackbits_infer, _unpackbits_compute))


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Expand uint8 elements into their bits (numpy's ``unpackbits``)."""
    return apply("unpackbits", [to_var(a)], axis=None if axis is None else int(axis),
                 count=None if count is None else int(count), bitorder=str(bitorder))[0]


# -- ravel_multi_index / unravel_index --------------------------------------------------

def _ravel_infer(metas, dims, mode, order):
    idx = metas[0]
    if idx.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {idx.dtype}")
    if not idx.shape or idx.shape[0] != len(dims):
        raise OpError(f"needs {len(dims)} index arrays for dims {list(dims)}")
    if order not in ("C", "F"):
        raise OpError(f"order must be 'C' or 'F', got {order!r}")
    modes = mode if isinstance(mode, tuple) else (mode,)
    for m in modes:
        if m not in ("raise", "wrap", "clip"):
            raise OpError(f"mode {m!r} is not one of raise, wrap, clip")
    return [(idx.shape[1:], _INDEX)]


def _ravel_compute(arrays, dims, mode, order):
    idx = arrays[0]
    try:
        out = np.ravel_multi_index(tuple(idx), dims, mode=mode, order=order)
    except ValueError as exc:
        raise OpError(str(exc)) from None
    return np.asarray(out, dtype=_INDEX)


register(OpDef("np_ravel_multi_index", _ravel_infer, _ravel_compute))


def np_ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the coordinate arrays ``multi_index`` in an array of ``dims``.

    Parameters
    ----------
    multi_index : sequence of Var or array_like
        One integer array per dimension (stacked on a new first axis).
    dims : sequence of int
    mode : str or tuple of str
    order : {'C', 'F'}

    Returns
    -------
    Var of int32
    """
    from .movement import stack

    parts = [to_var(m) for m in multi_index]
    if not parts:
        raise OpError("ravel_multi_index: needs one index array per dimension")
    stacked = stack(parts, 0)
    mode = tuple(mode) if isinstance(mode, (list, tuple)) else str(mode)
    return apply("np_ravel_multi_index", [stacked], dims=int_tuple(dims), mode=mode,
                 order=str(order))[0]


def _unravel_infer(metas, dims, order):
    idx = metas[0]
    if idx.dtype.kind not in "iu":
        raise OpError(f"indices must be integers, got {idx.dtype}")
    if order not in ("C", "F"):
        raise OpError(f"order must be 'C' or 'F', got {order!r}")
    return [((len(dims),) + tuple(idx.shape), _INDEX)]


def _unravel_compute(arrays, dims, order):
    try:
        out = np.unravel_index(arrays[0], dims, order=order)
    except ValueError as exc:
        raise OpError(str(exc)) from None
    return np.stack([np.asarray(o, dtype=_INDEX) for o in out]).reshape(
        (len(dims),) + arrays[0].shape)


register(OpDef("np_unravel_index", _unravel_infer, _unravel_compute))


def np_unravel_index(indices, shape, order="C"):
    """Coordinates of the flat ``indices`` in an array of ``shape``, stacked: row ``i``
    holds the coordinates along axis ``i`` (one output, so the op also follows ops whose
    output sizes are only known once computed)."""
    return apply("np_unravel_index", [to_var(indices)], dims=int_tuple(shape),
                 order=str(order))[0]


# -- pad (numpy's modes) ----------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
              "reflect", "symmetric", "wrap", "empty")


def _pad_infer(metas, widths, mode, options):
    x = metas[0]
    if mode not in _PAD_MODES:
        raise OpError(f"mode {mode!r} is not one of {', '.join(_PAD_MODES)}")
    if len(widths) != len(x.shape):
        raise OpError(f"pad widths for {len(widths)} axes, input has {len(x.shape)}")
    shape = []
    for (before, after), d in zip(widths, x.shape):
        if before < 0 or after < 0:
            raise OpError("pad widths must be non-negative")
        if d == 0 and (before or after) and mode not in ("constant", "empty"):
            raise OpError(f"cannot pad an empty axis in mode {mode!r}")
        shape.append(d + before + after)
    return [(tuple(shape), x.dtype)]


def _pad_compute(arrays, widths, mode, options):
    kwargs = {}
    for key, value in options:
        kwargs[key] = value
    try:
        return np.pad(arrays[0], widths, mode=mode, **kwargs)
    except ValueError as exc:
        raise OpError(str(exc)) from None


def _pad_grad(inputs, outputs, grads, widths, mode, options):
    if mode != "constant":
        raise OpError(f"np_pad: no gradient for mode {mode!r} (only 'constant')")
    from .movement import split

    g = grads[0]
    for ax, (before, after) in enumerate(widths):
        n = inputs[0].shape[ax]
        if before or after:
            g = split(g, [before, n, after], ax)[1]
    return [g]


register(OpDef("np_pad", _pad_infer, _pad_compute, _pad_grad))


def np_pad(x, widths, mode="constant", options=()):
    """numpy's ``pad``; ``widths`` is one ``(before, after)`` pair per axis and
    ``options`` the mode's keyword arguments as ``(name, value)`` pairs."""
    return apply("np_pad", [to_var(x)], widths=widths, mode=str(mode),
                 options=tuple(options))[0]
