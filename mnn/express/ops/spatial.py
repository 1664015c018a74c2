"""Spatial rearrangements: ``depth_to_space``, ``space_to_depth``, ``space_to_batch_nd``,
``batch_to_space_nd``, ``reverse``, ``reverse_sequence``.

The layout follows the input's data_format label: NHWC is channels-last, NCHW and NC4HW4
are channels-first (NC4HW4's logical layout is NCHW, see DESIGN.md). depth_to_space uses
the DCR order (TensorFlow, ONNX's default, MNN). Each op's gradient is its inverse.
"""
import numpy as np

from ..errors import OpError
from ..formats import is_channels_last
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = [
    "batch_to_space_nd",
    "depth_to_space",
    "reverse",
    "reverse_sequence",
    "space_to_batch_nd",
    "space_to_depth",
]


def _ints(values, what):
    if hasattr(values, "read"):
        values = values.read()
    arr = np.asarray(values)
    if arr.size and arr.dtype.kind not in "iu":
        raise OpError(f"{what} must be integers, got {arr.dtype}")
    return arr.astype(np.int64)


# -- depth_to_space / space_to_depth -----------------------------------------------------------

def _d2s_shape(shape, block, channels_last):
    if len(shape) != 4:
        raise OpError(f"needs a 4-d input, got {len(shape)}-d")
    if block < 1:
        raise OpError(f"block size {block} must be at least 1")
    n, h, w, c = shape if channels_last else (shape[0], shape[2], shape[3], shape[1])
    if c % (block * block):
        raise OpError(f"channels {c} are not divisible by block size squared {block * block}")
    out = (n, h * block, w * block, c // (block * block))
    return out if channels_last else (out[0], out[3], out[1], out[2])


def _s2d_shape(shape, block, channels_last):
    if len(shape) != 4:
        raise OpError(f"needs a 4-d input, got {len(shape)}-d")
    if block < 1:
        raise OpError(f"block size {block} must be at least 1")
    n, h, w, c = shape if channels_last else (shape[0], shape[2], shape[3], shape[1])
    if h % block or w % block:
        raise OpError(f"height {h} and width {w} must be divisible by block size {block}")
    out = (n, h // block, w // block, c * block * block)
    return out if channels_last else (out[0], out[3], out[1], out[2])


def _to_nhwc(x, channels_last):
    return x if channels_last else x.transpose(0, 2, 3, 1)


def _from_nhwc(x, channels_last):
    return x if channels_last else x.transpose(0, 3, 1, 2)


def _d2s_infer(metas, block, channels_last):
    return [(_d2s_shape(metas[0].shape, block, channels_last), metas[0].dtype)]


def _d2s_compute(arrays, block, channels_last):
    x = _to_nhwc(arrays[0], channels_last)
    n, h, w, c = x.shape
    c_out = c // (block * block)
    y = x.reshape(n, h, w, block, block, c_out).transpose(0, 1, 3, 2, 4, 5)
    y = y.reshape(n, h * block, w * block, c_out)
    return np.ascontiguousarray(_from_nhwc(y, channels_last))


def _d2s_grad(inputs, outputs, grads, block, channels_last):
    return [apply("space_to_depth", [grads[0]], block=block, channels_last=channels_last)[0]]


def _s2d_infer(metas, block, channels_last):
    return [(_s2d_shape(metas[0].shape, block, channels_last), metas[0].dtype)]


def _s2d_compute(arrays, block, channels_last):
    x = _to_nhwc(arrays[0], channels_last)
    _s2d_shape(arrays[0].shape, block, channels_last)
    n, h, w, c = x.shape
    y = x.reshape(n, h // block, block, w // block, block, c).transpose(0, 1, 3, 2, 4, 5)
    y = y.reshape(n, h // block, w // block, c * block * block)
    return np.ascontiguousarray(_from_nhwc(y, channels_last))


def _s2d_grad(inputs, outputs, grads, block, channels_last):
    return [apply("depth_to_space", [grads[0]], block=block, channels_last=channels_last)[0]]


register(OpDef("depth_to_space", _d2s_infer, _d2s_compute, _d2s_grad))
register(OpDef("space_to_depth", _s2d_infer, _s2d_compute, _s2d_grad))


def depth_to_space(x, axis):
    """Move blocks of channels into ``axis`` x ``axis`` spatial blocks (DCR order).

    Parameters
    ----------
    x : Var
        4-d; NHWC when labelled so, else NCHW.
    axis : int
        The block size (MNN's name for it).
    """
    x = to_var(x)
    return apply("depth_to_space", [x], block=int(axis),
                 channels_last=is_channels_last(x.data_format))[0]


def space_to_depth(x, axis):
    """Move ``axis`` x ``axis`` spatial blocks into channels (inverse of depth_to_space)."""
    x = to_var(x)
    return apply("space_to_depth", [x], block=int(axis),
                 channels_last=is_channels_last(x.data_format))[0]


# -- space_to_batch_nd / batch_to_space_nd --------------------------------------------------

def _spatial_axes(ndim, m, channels_last):
    """Axes holding the M spatial dims: 1..M channels-last, 2..M+1 channels-first."""
    first = 1 if channels_last else 2
    if ndim < first + m:
        raise OpError(f"a {ndim}-d input has no {m} spatial axes after the batch"
                      + ("" if channels_last else " and channel") + " axes")
    return list(range(first, first + m))


def _check_blocks(block, pads, what):
    if any(b < 1 for b in block):
        raise OpError(f"block_shape {list(block)} must be positive")
    if len(pads) != len(block):
        raise OpError(f"{what} must have shape [{len(block)}, 2], got {len(pads)} rows")
    if any(p < 0 for row in pads for p in row):
        raise OpError(f"{what} {[list(r) for r in pads]} must not be negative")


def _s2b_shape(shape, block, pads, channels_last):
    _check_blocks(block, pads, "paddings")
    axes = _spatial_axes(len(shape), len(block), channels_last)
    out = list(shape)
    out[0] = shape[0] * int(np.prod(block))
    for ax, b, (lo, hi) in zip(axes, block, pads):
        padded = shape[ax] + lo + hi
        if padded % b:
            raise OpError(f"padded size {padded} of axis {ax} is not divisible by block {b}")
        out[ax] = padded // b
    return tuple(out)


def _b2s_shape(shape, block, crops, channels_last):
    _check_blocks(block, crops, "crops")
    axes = _spatial_axes(len(shape), len(block), channels_last)
    total = int(np.prod(block))
    if shape[0] % total:
        raise OpError(f"batch {shape[0]} is not divisible by the block count {total}")
    out = list(shape)
    out[0] = shape[0] // total
    for ax, b, (lo, hi) in zip(axes, block, crops):
        size = shape[ax] * b - lo - hi
        if size < 0:
            raise OpError(f"crops {[lo, hi]} exceed axis {ax}'s size {shape[ax] * b}")
        out[ax] = size
    return tuple(out)


def _channels_last_perm(ndim, m, channels_last):
    if channels_last:
        return list(range(ndim))
    # Move axis 1 (channels) after the spatial axes: [N, S..., C, rest...].
    return [0] + list(range(2, 2 + m)) + [1] + list(range(2 + m, ndim))


def _s2b_infer(metas, block, pads, channels_last):
    return [(_s2b_shape(metas[0].shape, block, pads, channels_last), metas[0].dtype)]


def _s2b_compute(arrays, block, pads, channels_last):
    x = arrays[0]
    _s2b_shape(x.shape, block, pads, channels_last)
    m = len(block)
    perm = _channels_last_perm(x.ndim, m, channels_last)
    x = x.transpose(perm)
    x = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m))
    n, spatial, rest = x.shape[0], x.shape[1:1 + m], x.shape[1 + m:]
    split = [n]
    for s, b in zip(spatial, block):
        split += [s // b, b]
    y = x.reshape(split + list(rest))
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    order += list(range(1 + 2 * m, y.ndim))
    y = y.transpose(order).reshape([n * int(np.prod(block))]
                                   + [s // b for s, b in zip(spatial, block)] + list(rest))
    return np.ascontiguousarray(y.transpose(np.argsort(perm)))


def _s2b_grad(inputs, outputs, grads, block, pads, channels_last):
    return [apply("batch_to_space_nd", [grads[0]], block=block, crops=pads,
                  channels_last=channels_last)[0]]


def _b2s_infer(metas, block, crops, channels_last):
    return [(_b2s_shape(metas[0].shape, block, crops, channels_last), metas[0].dtype)]


def _b2s_compute(arrays, block, crops, channels_last):
    x = arrays[0]
    _b2s_shape(x.shape, block, crops, channels_last)
    m = len(block)
    perm = _channels_last_perm(x.ndim, m, channels_last)
    x = x.transpose(perm)
    total = int(np.prod(block))
    n, spatial, rest = x.shape[0] // total, x.shape[1:1 + m], x.shape[1 + m:]
    y = x.reshape(list(block) + [n] + list(spatial) + list(rest))
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, y.ndim))
    y = y.transpose(order).reshape([n] + [s * b for s, b in zip(spatial, block)] + list(rest))
    key = [slice(None)] + [slice(lo, s * b - hi) for (lo, hi), s, b in
                           zip(crops, spatial, block)]
    y = y[tuple(key)]
    return np.ascontiguousarray(y.transpose(np.argsort(perm)))


def _b2s_grad(inputs, outputs, grads, block, crops, channels_last):
    return [apply("space_to_batch_nd", [grads[0]], block=block, pads=crops,
                  channels_last=channels_last)[0]]


register(OpDef("space_to_batch_nd", _s2b_infer, _s2b_compute, _s2b_grad))
register(OpDef("batch_to_space_nd", _b2s_infer, _b2s_compute, _b2s_grad))


def _block_args(block_shape, pads):
    block = tuple(int(b) for b in _ints(block_shape, "block_shape").ravel())
    pads = _ints(pads, "paddings/crops")
    try:
        pads = pads.reshape(len(block), 2)
    except ValueError:
        raise OpError(f"paddings/crops of shape {list(pads.shape)} must be "
                      f"[{len(block)}, 2]") from None
    return block, tuple((int(a), int(b)) for a, b in pads)


def space_to_batch_nd(x, block_shape, paddings):
    """Pad the spatial axes, cut them into ``block_shape`` blocks and move the blocks into
    the batch axis (TensorFlow's and MNN's ``space_to_batch_nd``).

    Parameters
    ----------
    x : Var
        ``[N, C, S1.., SM]`` (NCHW/NC4HW4) or ``[N, S1.., SM, C]`` (NHWC).
    block_shape : sequence of int, length M
    paddings : array_like of int, shape ``[M, 2]``
    """
    x = to_var(x)
    block, pads = _block_args(block_shape, paddings)
    return apply("space_to_batch_nd", [x], block=block, pads=pads,
                 channels_last=is_channels_last(x.data_format))[0]


def batch_to_space_nd(x, block_shape, crops):
    """Inverse of :func:`space_to_batch_nd`: move batch blocks back into the spatial axes
    and crop them.

    Parameters
    ----------
    x : Var
    block_shape : sequence of int, length M
    crops : array_like of int, shape ``[M, 2]``
    """
    x = to_var(x)
    block, crops = _block_args(block_shape, crops)
    return apply("batch_to_space_nd", [x], block=block, crops=crops,
                 channels_last=is_channels_last(x.data_format))[0]


# -- reverse / reverse_sequence ------------------------------------------------------------

def _reverse_infer(metas, axes):
    from .reduce import normalize_axes

    normalize_axes(axes, len(metas[0].shape))
    return [(metas[0].shape, metas[0].dtype)]


def _reverse_compute(arrays, axes):
    from .reduce import normalize_axes

    x = arrays[0]
    return np.flip(x, normalize_axes(axes, x.ndim)).copy()


def _reverse_grad(inputs, outputs, grads, axes):
    return [apply("reverse", [grads[0]], axes=axes)[0]]


register(OpDef("reverse", _reverse_infer, _reverse_compute, _reverse_grad))


def reverse(x, axis):
    """Reverse ``x`` along ``axis`` (an int, a list of ints or an int Var)."""
    axes = tuple(int(a) for a in _ints(axis, "reverse: axis").ravel())
    if not axes:
        raise OpError("reverse: needs at least one axis")
    return apply("reverse", [to_var(x)], axes=axes)[0]


def _rs_check(x_shape, len_shape, len_dtype, batch_dim, seq_dim):
    nd = len(x_shape)
    for name, d in (("batch_dim", batch_dim), ("seq_dim", seq_dim)):
        if not 0 <= d < nd:
            raise OpError(f"{name} {d} is out of range for a {nd}-d input")
    if batch_dim == seq_dim:
        raise OpError("batch_dim and seq_dim must differ")
    if len_dtype.kind not in "iu":
        raise OpError(f"sequence lengths must be integers, got {len_dtype}")
    if tuple(len_shape) != (x_shape[batch_dim],):
        raise OpError(f"sequence lengths of shape {list(len_shape)} must be "
                      f"[{x_shape[batch_dim]}] (the batch size)")


def _rs_infer(metas, batch_dim, seq_dim):
    x, lens = metas
    _rs_check(x.shape, lens.shape, lens.dtype, batch_dim, seq_dim)
    return [(x.shape, x.dtype)]


def _rs_compute(arrays, batch_dim, seq_dim):
    x, lens = arrays
    _rs_check(x.shape, lens.shape, lens.dtype, batch_dim, seq_dim)
    if lens.size and (lens.min() < 0 or lens.max() > x.shape[seq_dim]):
        raise OpError(f"sequence lengths {lens.tolist()} must lie in [0, "
                      f"{x.shape[seq_dim]}]")
    out = np.array(x, copy=True)
    for b, n in enumerate(lens.tolist()):
        key = [slice(None)] * x.ndim
        key[batch_dim] = b
        key[seq_dim] = slice(0, n)
        src = list(key)
        src[seq_dim] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
        out[tuple(key)] = x[tuple(src)]
    return out


def _rs_grad(inputs, outputs, grads, batch_dim, seq_dim):
    return [apply("reverse_sequence", [grads[0], inputs[1]], batch_dim=batch_dim,
                  seq_dim=seq_dim)[0], None]


register(OpDef("reverse_sequence", _rs_infer, _rs_compute, _rs_grad))


def reverse_sequence(x, y, batch_dim, seq_dim):
    """Reverse the first ``y[b]`` elements along ``seq_dim`` of each batch entry ``b``
    (along ``batch_dim``), as TensorFlow's and MNN's ``reverse_sequence``.

    Parameters
    ----------
    x : Var
    y : Var or array_like of int, shape ``[x.shape[batch_dim]]``
    batch_dim, seq_dim : int
    """
    x = to_var(x)
    nd = x.ndim
    batch_dim, seq_dim = int(batch_dim), int(seq_dim)
    batch_dim = batch_dim + nd if batch_dim < 0 else batch_dim
    seq_dim = seq_dim + nd if seq_dim < 0 else seq_dim
    return apply("reverse_sequence", [x, to_var(y)], batch_dim=batch_dim, seq_dim=seq_dim)[0]
