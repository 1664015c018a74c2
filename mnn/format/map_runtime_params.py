"""ONNX nodes whose parameters are tensors only run time fills (a Resize's scales, a
CumSum's axis, a Pad's pads, a OneHot's depth given as graph inputs), written as the MNN
ops that take those parameters as input tensors, as MNN's converter writes them.

The converter keeps such a node as one ``onnx_deferred`` op (it builds the node when the
values are known); here the op's ONNX node is mapped to the MNN op directly. Reading the
file back, the decoders of these ops meet a parameter that is not a constant and decode
the op when it runs (see :mod:`mnn.format.deferred`).
"""

import numpy as np

from ..express.ops import elementwise as ew
from ..express.ops import movement
from ..express.ops.gather_scatter import gather
from ..express.ops.selection import select
from ..express.var import const
from .mapping import datatype_of, file_dtype

__all__ = ["RUNTIME_PARAM_WRITERS"]


def _inputs(expr, node):
    """The ONNX inputs by position (None where the node leaves one out)."""
    it = iter(expr.inputs)
    return [next(it) if p else None for p in node.present]


def _write_cumsum(ctx, expr, node):
    x, axis = _inputs(expr, node)[:2]
    a = node.attrs
    ctx.emit(expr, "CumSum", "CumSum",
             {"exclusive": bool(a.get("exclusive", 0)), "reverse": bool(a.get("reverse", 0))},
             [x, axis])


# ONNX Pad modes MNN's Padding takes (PadValueMode).
_PAD_MODES = {"constant": 0, "reflect": 1}


def _pads_of_all_axes(pads, axes, rank):
    """ONNX pads given for ``axes`` only, spread over every axis (zeros elsewhere): a
    scatter of the begins and ends into a zero vector of ``2 * rank``."""
    from ..express.graph import apply
    from ..express.ops.movement import concat

    ax = ew.cast(axes, pads.dtype)
    zero = const(np.asarray(0, pads.dtype))
    ax = select(ew.less(ax, zero), ew.add(ax, const(np.asarray(rank, pads.dtype))), ax)
    positions = concat([ax, ew.add(ax, const(np.asarray(rank, pads.dtype)))], 0)
    zeros = const(np.zeros(2 * rank, pads.dtype))
    return apply("onnx_scatter_elements", [zeros, positions, pads], axis=0,
                 reduction="none")[0]


def _write_pad(ctx, expr, node):
    args = _inputs(expr, node)
    x, pads = args[0], args[1]
    value = args[2] if len(args) > 2 else None
    rank = x.ndim
    if len(args) > 3 and args[3] is not None:
        pads = _pads_of_all_axes(pads, args[3], rank)
    mode = node.attrs.get("mode", "constant")
    if isinstance(mode, bytes):
        mode = mode.decode()
    if mode not in _PAD_MODES:
        ctx.fail(expr, f"Pad mode {mode!r} with run-time pads has no MNN Padding form "
                 "(constant and reflect do)")
    # ONNX lists all begins then all ends; MNN wants (begin, end) per axis.
    pairs = movement.reshape(movement.transpose(movement.reshape(pads, [2, rank]), [1, 0]),
                             [2 * rank])
    ctx.encode_vars([pairs])
    inputs = [x, pairs]
    if value is not None and mode == "constant":
        inputs.append(value)
    ctx.emit(expr, "Padding", "PadParam", {"mode": _PAD_MODES[mode]}, inputs)


def _write_one_hot(ctx, expr, node):
    indices, depth, values = _inputs(expr, node)[:3]
    axis = int(node.attrs.get("axis", -1))
    d = ew.cast(movement.reshape(depth, []), indices.dtype)
    zero = const(np.asarray(0, indices.dtype))
    # ONNX counts negative indices from the end of the depth.
    wrapped = select(ew.less(indices, zero), ew.add(indices, d), indices)
    flat = movement.reshape(values, [2])
    off = gather(flat, const(np.int32(0)), 0)
    on = gather(flat, const(np.int32(1)), 0)
    parts = [wrapped, ew.cast(d, np.int32), on, off]
    ctx.encode_vars(parts)
    dtype = file_dtype(expr.metas[0].dtype or values.dtype)
    ctx.emit(expr, "OneHot", "OneHotParam", {"axis": axis, "dType": datatype_of(dtype)}, parts)


# Interp's coordinate modes and resize types (as the Interp encoder of map_nn writes them).
_CTM_CODES = {"align_corners": 1, "half_pixel": 2, "pytorch_half_pixel": 3, "asymmetric": 4}
_NEAREST_TYPES = {"floor": 1, "round_prefer_floor": 4}


def _text(value, default):
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


def _interp(ctx, expr, x, size, mode, coord, nearest, cubic_a):
    if x.ndim != 4:
        ctx.fail(expr, f"Resize with run-time scales/sizes needs a 4-d input, got rank {x.ndim}")
    if coord not in _CTM_CODES:
        ctx.fail(expr, f"coordinate mode {coord!r} has no MNN Interp form")
    if mode == "nearest":
        if nearest not in _NEAREST_TYPES:
            ctx.fail(expr, f"nearest rounding {nearest!r} has no MNN Interp form (floor and "
                     "round_prefer_floor do)")
        resize_type = _NEAREST_TYPES[nearest]
    elif mode in ("linear", "bilinear", "cubic"):
        resize_type = 3 if mode == "cubic" else 2
    else:
        ctx.fail(expr, f"resize mode {mode!r} is not supported")
    param = {"resizeType": resize_type, "ctm": _CTM_CODES[coord],
             "alignCorners": coord == "align_corners",
             "halfPixelCenters": coord == "half_pixel", "cubicCoeffA": float(cubic_a)}
    out = ctx.new_tensor(expr.outputs[0].name + "__c4")
    ctx.emit(expr, "Interp", "Interp", param, [ctx.to_nc4hw4(x), size], outputs=[out])
    ctx.from_nc4hw4(expr, out)


def _write_resize(ctx, expr, node):
    args = _inputs(expr, node) + [None] * 4
    x, scales, sizes = args[0], args[2], args[3]
    if len(node.present) == 2:  # opset 10: (X, scales)
        scales = args[1]
    a = node.attrs
    if int(a.get("antialias", 0)) or int(a.get("exclude_outside", 0)):
        ctx.fail(expr, "Resize with antialias or exclude_outside has no MNN Interp form")
    if _text(a.get("keep_aspect_ratio_policy"), "stretch") != "stretch":
        ctx.fail(expr, "Resize with a keep_aspect_ratio_policy has no MNN Interp form")
    if _text(a.get("coordinate_transformation_mode"), "half_pixel") == "tf_crop_and_resize":
        ctx.fail(expr, "tf_crop_and_resize has no MNN Interp form")
    size = sizes if sizes is not None else scales
    if size is None:
        ctx.fail(expr, "Resize needs scales or sizes")
    if a.get("axes") is not None:
        # Scales or sizes of the listed axes only: Interp takes (height, width).
        axes = [int(ax) % x.ndim for ax in a["axes"]]
        if sorted(axes) != [x.ndim - 2, x.ndim - 1]:
            ctx.fail(expr, f"Resize over axes {list(a['axes'])} has no MNN Interp form (the "
                     "two spatial axes do)")
        if axes[0] > axes[1]:
            size = gather(size, const(np.array([1, 0], np.int32)), 0)
        if sizes is None:
            # Scales for (N, C) too: the real MNN reads two scales as (N, C).
            from ..express.ops.movement import concat

            size = concat([const(np.ones(2, np.float32)), ew.cast(size, np.float32)], 0)
        ctx.encode_vars([size])
    _interp(ctx, expr, x, size, _text(a.get("mode"), "nearest"),
            _text(a.get("coordinate_transformation_mode"), "half_pixel"),
            _text(a.get("nearest_mode"), "round_prefer_floor"), a.get("cubic_coeff_a", -0.75))


def _write_upsample(ctx, expr, node):
    x, scales = _inputs(expr, node)[:2]
    mode = _text(node.attrs.get("mode"), "nearest")
    # Upsample maps output to input coordinates asymmetrically, rounding down (nearest).
    _interp(ctx, expr, x, scales, mode, "asymmetric", "floor", -0.75)


def _write_top_k(ctx, expr, node):
    x, k = _inputs(expr, node)[:2]
    a = node.attrs
    if not int(a.get("sorted", 1)):
        ctx.fail(expr, "TopK with sorted=0 has no MNN TopKV2 form")
    axis = int(a.get("axis", -1))
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(expr, f"axis {axis} out of range for rank {x.ndim}")
    axis_t = ctx.const_tensor(np.int32(axis % x.ndim), expr, "axis")
    ctx.emit(expr, "TopKV2", "TopKV2",
             {"T": 1, "sorted": True, "largest": bool(a.get("largest", 1))},
             [x, k, axis_t])


def _write_trilu(ctx, expr, node):
    """``select(mask, x, 0)`` with the band mask built from row and column ranges and
    the run-time ``k`` (as MNN's converter writes Trilu)."""
    x, k = _inputs(expr, node)[:2]
    shape = x.expr.metas[x.index].shape
    if shape is None or len(shape) < 2:
        ctx.fail(expr, "Trilu needs an input of known shape with at least 2 dims")
    rows = const(np.arange(shape[-2], dtype=np.int32).reshape(-1, 1))
    cols = const(np.arange(shape[-1], dtype=np.int32).reshape(1, -1))
    k32 = ew.cast(movement.reshape(k, []), np.int32)
    if int(node.attrs.get("upper", 1)):
        mask = ew.greater_equal(cols, ew.add(rows, k32))
    else:
        mask = ew.greater_equal(rows, ew.subtract(cols, k32))
    zero = const(np.zeros((), x.dtype))
    ctx.encode_as(expr, [select(mask, x, zero)])


def _write_non_zero(ctx, expr, node):
    """The coordinates of the non-zero elements, one column each: MNN's Where gives one
    row each."""
    x = _inputs(expr, node)[0]
    from ..express.ops.selection import where

    coords = where(ew.not_equal(x, const(np.zeros((), x.dtype))))
    # int32 coordinates: the int64 ONNX gives are int32 in the file anyway.
    ctx.encode_as(expr, [movement.transpose(coords, [1, 0])])


#: ONNX op type -> writer of a deferred node of that type.
RUNTIME_PARAM_WRITERS = {
    "CumSum": _write_cumsum,
    "NonZero": _write_non_zero,
    "OneHot": _write_one_hot,
    "Pad": _write_pad,
    "Resize": _write_resize,
    "TopK": _write_top_k,
    "Trilu": _write_trilu,
    "Upsample": _write_upsample,
}
