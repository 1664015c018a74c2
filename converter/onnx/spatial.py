"""ONNX layout and resampling handlers: Pad, DepthToSpace, SpaceToDepth, Resize, Upsample,
Trilu, CumSum, Einsum, ReverseSequence."""
import numpy as np

import mnn.express as F
from mnn.express.enums import PadValue_Mode
from mnn.express.graph import apply
from mnn.express.ops.np_linalg import einsum as np_einsum

from .common import ints
from .registry import onnx_op


def _shape(ctx, var, what="input"):
    shape = ctx.known_shape(var)
    if shape is None:
        raise ctx.static_needed(f"the shape of the {what} must be known at conversion time")
    return shape


_PAD_MODES = {"constant": PadValue_Mode.CONSTANT, "reflect": PadValue_Mode.REFLECT}


def _pad(ctx, data, pads, mode, value, axes=None):
    partial = ctx.partial_shape(data)
    if ctx.known_shape(data) is None and partial is not None and mode in _PAD_MODES and \
            all(p >= 0 for p in pads):
        # Dynamic dims with constant, non-negative pads: only the rank is needed (the pad
        # op takes any size), so the rank and static dims stay known after it.
        shape = partial
    else:
        shape = _shape(ctx, data)
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    if len(pads) != 2 * len(axes):
        raise ctx.error(f"pads {pads} need 2 entries per padded axis ({len(axes)} axes)")
    before, after = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = pads[i], pads[i + len(axes)]
    if mode not in _PAD_MODES and mode not in ("edge", "wrap"):
        raise ctx.error(f"pad mode {mode!r} is not supported (constant, reflect, edge, "
                        "wrap)")
    # Negative pads crop: slice those away first.
    if any(p < 0 for p in before + after):
        key = tuple(slice(-b if b < 0 else 0, d + a if a < 0 else d)
                    for b, a, d in zip(before, after, shape))
        data = data[key]
        before, after = [max(b, 0) for b in before], [max(a, 0) for a in after]
    if mode == "edge":
        return _pad_edge(data, before, after)
    if mode == "wrap":
        return _pad_wrap(ctx, data, before, after)
    pads_attr = tuple((b, a) for b, a in zip(before, after))
    fill = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
    return apply("pad", [data], pads=pads_attr, mode=_PAD_MODES[mode], value=fill)[0]


def _pad_edge(data, before, after):
    """Edge padding: repeat each border slice (broadcast, then concatenate)."""
    for axis, (b, a) in enumerate(zip(before, after)):
        if not b and not a:
            continue
        shape = data.shape
        parts = []
        if b:
            first = data[(slice(None),) * axis + (slice(0, 1),)]
            parts.append(F.broadcast_to(first, shape[:axis] + [b] + shape[axis + 1:]))
        parts.append(data)
        if a:
            last = data[(slice(None),) * axis + (slice(shape[axis] - 1, shape[axis]),)]
            parts.append(F.broadcast_to(last, shape[:axis] + [a] + shape[axis + 1:]))
        data = F.concat(parts, axis)
    return data


def _pad_wrap(ctx, data, before, after):
    """Wrap padding: the axis repeated periodically (tile three times, then slice)."""
    for axis, (b, a) in enumerate(zip(before, after)):
        if not b and not a:
            continue
        dim = data.shape[axis]
        if b > dim or a > dim:
            raise ctx.error(f"wrap pads {b}, {a} exceed the axis size {dim}")
        tripled = F.concat([data, data, data], axis)
        key = (slice(None),) * axis + (slice(dim - b, 2 * dim + a),)
        data = tripled[key]
    return data


@onnx_op("Pad", since=2, until=11)
def pad_attr(ctx, data, mode="constant", pads=None, value=0.0):
    if pads is None:
        raise ctx.error("attribute 'pads' is required")
    return _pad(ctx, data, list(pads), mode, np.array(value, dtype=data.dtype))


@onnx_op("Pad", since=11)
def pad(ctx, data, pads, constant_value=None, axes=None, mode="constant"):
    p = ints(ctx.require_value(pads, "pads"))
    value = None if constant_value is None else ctx.require_value(constant_value,
                                                                   "constant_value")
    ax = None if axes is None else ints(ctx.require_value(axes, "axes"))
    return _pad(ctx, data, p, mode, value, ax)


@onnx_op("DepthToSpace", since=1)
def depth_to_space(ctx, input, blocksize=None, mode="DCR"):
    b = int(blocksize)
    if mode == "DCR":
        return F.depth_to_space(input, b)
    if mode != "CRD":
        raise ctx.error(f"mode must be DCR or CRD, got {mode!r}")
    # CRD: channel c*b*b + i*b + j goes to output channel c at (i, j). Only the rank
    # must be static; dynamic dims (the channel count too) come from the run-time shape.
    shape = ctx.partial_shape(input)
    if shape is None or len(shape) != 4:
        shape = _shape(ctx, input)
    n, c, h, w = shape
    if all(d >= 0 for d in shape):
        x = F.reshape(input, [n, c // (b * b), b, b, h, w])
        x = F.transpose(x, [0, 1, 4, 2, 5, 3])
        return F.reshape(x, [n, c // (b * b), h * b, w * b])
    dims = F.cast(F.shape(input), np.int64)
    n_, h_, w_ = (_dim(dims, i) for i in (0, 2, 3))
    groups = _ints([c // (b * b)]) if c >= 0 else F.floordiv(_dim(dims, 1), _ints([b * b]))
    x = F.onnx_reshape(input, F.concat([n_, groups, _ints([b, b]), h_, w_], 0))
    x = F.transpose(x, [0, 1, 4, 2, 5, 3])
    block = _ints([b])
    return F.onnx_reshape(x, F.concat([n_, groups, F.multiply(h_, block),
                                       F.multiply(w_, block)], 0))


def _ints(values):
    return F.const(np.array(values, np.int64))


def _dim(dims, i):
    """Entry ``i`` of a run-time int64 shape, as a 1-element Var."""
    return F.onnx_slice(dims, _ints([i]), _ints([i + 1]))


@onnx_op("SpaceToDepth", since=1)
def space_to_depth(ctx, input, blocksize=None, mode="DCR"):
    b = int(blocksize)
    if mode == "DCR":
        return F.space_to_depth(input, b)
    if mode != "CRD":
        raise ctx.error(f"mode must be DCR or CRD, got {mode!r}")
    # CRD: output channel c*b*b + i*b + j takes input channel c at offset (i, j).
    n, c, h, w = _shape(ctx, input)
    x = F.reshape(input, [n, c, h // b, b, w // b, b])
    x = F.transpose(x, [0, 1, 3, 5, 2, 4])
    return F.reshape(x, [n, c * b * b, h // b, w // b])


def _resize_sizes(ctx, X, scales, sizes, axes, policy="stretch"):
    """Input shape, output shape and per-axis scales (None when sizes drive the
    coordinates) of a Resize, with ONNX's keep_aspect_ratio_policy applied to sizes."""
    shape = _shape(ctx, X)
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    full_scales = [1.0] * rank
    out = list(shape)
    if sizes is not None:
        if policy == "stretch":
            for a, s in zip(axes, sizes):
                out[a] = int(s)
            return shape, out, None
        if policy not in ("not_larger", "not_smaller"):
            raise ctx.error(f"keep_aspect_ratio_policy must be stretch, not_larger or "
                            f"not_smaller, got {policy!r}")
        # One scale for every listed axis; sizes rounded half up from it.
        ratios = [int(s) / shape[a] for a, s in zip(axes, sizes)]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        for a in axes:
            full_scales[a] = scale
            out[a] = int(scale * shape[a] + 0.5)
    elif scales is not None:
        for a, s in zip(axes, scales):
            full_scales[a] = float(s)
            out[a] = int(np.floor(shape[a] * float(s)))
    else:
        raise ctx.error("needs scales or sizes")
    return shape, out, full_scales


def _resize_roi(ctx, roi, rank, axes):
    """tf_crop_and_resize's window as ``(h0, w0, h1, w1)``; the other axes must keep
    the whole range."""
    r = np.asarray(ctx.require_value(roi, "roi"), dtype=np.float64).reshape(-1)
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    if r.size != 2 * len(axes):
        raise ctx.error(f"roi has {r.size} values; {2 * len(axes)} expected (starts and "
                        f"ends of axes {axes})")
    starts, ends = [0.0] * rank, [1.0] * rank
    for i, a in enumerate(axes):
        starts[a], ends[a] = float(r[i]), float(r[i + len(axes)])
    if any((starts[a], ends[a]) != (0.0, 1.0) for a in range(rank - 2)):
        raise ctx.error(f"roi {r.tolist()} crops an axis other than the last two")
    return (starts[-2], starts[-1], ends[-2], ends[-1])


@onnx_op("Resize", since=10)
def resize(ctx, X, roi=None, scales=None, sizes=None, antialias=0, axes=None,
           coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
           exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
           mode="nearest", nearest_mode="round_prefer_floor"):
    if ctx.opset.get("", 1) < 11:
        # Opset 10: the second input is scales, asymmetric coordinates.
        scales, roi = roi, None
        coordinate_transformation_mode = "asymmetric"
    sc = None if scales is None else ctx.require_value(scales, "scales")
    sz = None if sizes is None else ctx.require_value(sizes, "sizes")
    if sc is not None and sc.size == 0:
        sc = None
    if sz is not None and sz.size == 0:
        sz = None
    shape, out, full_scales = _resize_sizes(ctx, X, None if sc is None else list(sc),
                                            None if sz is None else ints(sz), axes,
                                            keep_aspect_ratio_policy)
    if len(shape) < 2 or out[:-2] != shape[:-2]:
        raise ctx.error(f"only the last two axes can be resized ({shape} -> {out})")
    box = None
    if coordinate_transformation_mode == "tf_crop_and_resize":
        if roi is None:
            raise ctx.error("tf_crop_and_resize needs the roi input")
        box = _resize_roi(ctx, roi, len(shape), axes)
    x = X
    if len(shape) == 2 or len(shape) == 3:
        lead = [1] * (4 - len(shape))
        x = F.reshape(X, lead + shape)
    scales_hw = None if full_scales is None else tuple(full_scales[-2:])
    y = F.interpolate(x, tuple(out[-2:]), scales_hw, mode, coordinate_transformation_mode,
                      nearest_mode, cubic_coeff_a, bool(exclude_outside), bool(antialias),
                      box, float(extrapolation_value))
    return F.reshape(y, out) if x is not X else y


@onnx_op("Upsample", since=7, until=10)
def upsample(ctx, X, scales=None, mode="nearest"):
    if not isinstance(scales, (list, tuple)):
        scales = ctx.require_value(scales, "scales")
    sc = [float(s) for s in np.asarray(scales).reshape(-1)]
    _, out, full = _resize_sizes(ctx, X, sc, None, None)
    return F.interpolate(X, tuple(out[-2:]), tuple(full[-2:]), mode, "asymmetric", "floor")


@onnx_op("Trilu", since=14)
def trilu(ctx, input, k=None, upper=1):
    shape = _shape(ctx, input)
    kk = 0 if k is None else int(np.asarray(ctx.require_value(k, "k")).reshape(-1)[0])
    rows, cols = shape[-2], shape[-1]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = (j - i >= kk) if upper else (j - i <= kk)
    mask = F.const(keep)
    return F.select(mask, input, F.zeros_like(input))


@onnx_op("CumSum", since=11)
def cum_sum(ctx, x, axis, exclusive=0, reverse=0):
    a = int(np.asarray(ctx.require_value(axis, "axis")).reshape(-1)[0])
    return F.cumsum(x, a, bool(exclusive), bool(reverse))


@onnx_op("CumProd", since=26)
def cum_prod(ctx, x, axis, exclusive=0, reverse=0):
    """Running products; ``reverse`` runs from the end, ``exclusive`` shifts by one (the
    first product is 1)."""
    a = int(np.asarray(ctx.require_value(axis, "axis")).reshape(-1)[0])
    shape = ctx.known_shape(x)
    if shape is None:
        raise ctx.static_needed("the shape of the input must be known")
    if not -len(shape) <= a < len(shape):
        raise ctx.error(f"axis {a} is out of range for rank {len(shape)}")
    a %= len(shape)
    if reverse:
        x = _flip(x, a)
    y = F.cumprod(x, a)
    if exclusive and shape[a]:
        ones_shape = list(shape)
        ones_shape[a] = 1
        head = F.const(np.ones(ones_shape, dtype=x.dtype))
        key = (slice(None),) * a + (slice(0, shape[a] - 1),)
        y = F.concat([head, y[key]], a)
    return _flip(y, a) if reverse else y


def _flip(x, axis):
    big = np.iinfo(np.int64).max
    return F.onnx_slice(x, F.const(np.array([-1], np.int64)),
                        F.const(np.array([-big], np.int64)),
                        F.const(np.array([axis], np.int64)), F.const(np.array([-1], np.int64)))


@onnx_op("Einsum", since=12)
def einsum(ctx, *inputs, equation=None):
    if equation is None:
        raise ctx.error("attribute 'equation' is required")
    return np_einsum(equation.replace(" ", ""), list(inputs))


@onnx_op("ReverseSequence", since=10)
def reverse_sequence(ctx, input, sequence_lens, batch_axis=1, time_axis=0):
    return F.reverse_sequence(input, sequence_lens, batch_axis, time_axis)
