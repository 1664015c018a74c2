"""ONNX detection and sampling handlers: NonMaxSuppression, RoiAlign, MaxRoiPool,
GridSample."""
import numpy as np

import mnn.express as F
from mnn.express.enums import Pooling_Mode

from .registry import onnx_op


def _scalar(ctx, var, what, default, cast):
    if var is None:
        return default
    return cast(np.asarray(ctx.require_value(var, what)).reshape(-1)[0])


@onnx_op("NonMaxSuppression", since=10)
def non_max_suppression(ctx, boxes, scores, max_output_boxes_per_class=None,
                        iou_threshold=None, score_threshold=None, center_point_box=0):
    """One nms per (batch, class); rows ``[batch, class, box]`` in that order."""
    bshape, sshape = ctx.known_shape(boxes), ctx.known_shape(scores)
    if bshape is None or sshape is None:
        raise ctx.static_needed("the shapes of boxes and scores must be known")
    limit = _scalar(ctx, max_output_boxes_per_class, "max_output_boxes_per_class", 0, int)
    iou = _scalar(ctx, iou_threshold, "iou_threshold", 0.0, float)
    score = _scalar(ctx, score_threshold, "score_threshold", -np.inf, float)
    batches, classes = sshape[0], sshape[1]
    if limit <= 0 or bshape[1] == 0:
        return F.const(np.zeros((0, 3), np.int64))
    if center_point_box:
        # [x_center, y_center, width, height] -> [y1, x1, y2, x2]
        xc, yc, w, h = F.split(boxes, [4], 2)
        half_w, half_h = F.multiply(w, 0.5), F.multiply(h, 0.5)
        boxes = F.concat([F.subtract(yc, half_h), F.subtract(xc, half_w),
                          F.add(yc, half_h), F.add(xc, half_w)], 2)
    rows = []
    for b in range(batches):
        batch_boxes = F.reshape(boxes[b], [bshape[1], 4])
        for c in range(classes):
            keep = F.cast(F.nms(batch_boxes, scores[b, c], limit, iou, score), np.int64)
            keep = F.reshape(keep, [-1, 1])
            ones = F.cast(F.ones_like(keep), np.int64)
            rows.append(F.concat([F.multiply(ones, b), F.multiply(ones, c), keep], 1))
    return F.concat(rows, 0)


@onnx_op("RoiAlign", since=10)
def roi_align(ctx, X, rois, batch_indices, coordinate_transformation_mode="half_pixel",
              mode="avg", output_height=1, output_width=1, sampling_ratio=0,
              spatial_scale=1.0):
    if mode not in ("avg", "max"):
        raise ctx.error(f"mode must be avg or max, got {mode!r}")
    if ctx.opset.get("", 1) < 16:
        coordinate_transformation_mode = "output_half_pixel"
    aligned = coordinate_transformation_mode == "half_pixel"
    idx = F.reshape(F.cast(batch_indices, rois.dtype), [-1, 1])
    boxes = F.concat([idx, rois], 1)  # [batch, x1, y1, x2, y2]
    pooling = Pooling_Mode.AVEPOOL if mode == "avg" else Pooling_Mode.MAXPOOL
    return F.roi_align(X, boxes, int(output_height), int(output_width), float(spatial_scale),
                       int(sampling_ratio), aligned, pooling)


@onnx_op("GridSample", since=16)
def grid_sample(ctx, X, grid, align_corners=0, mode="linear", padding_mode="zeros"):
    # Opset 16 named the modes bilinear/bicubic, opset 20 linear/cubic.
    modes = {"linear": "linear", "bilinear": "linear", "nearest": "nearest",
             "cubic": "cubic", "bicubic": "cubic"}
    if mode not in modes:
        raise ctx.error(f"attribute 'mode' {mode!r} is not supported (linear, nearest, "
                        "cubic)")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ctx.error(f"attribute 'padding_mode' {padding_mode!r} is not supported "
                        "(zeros, border, reflection)")
    rank = len(ctx.known_shape(X) or [])
    if rank == 4 and modes[mode] != "cubic":
        return F.grid_sample(X, grid, "bilinear" if modes[mode] == "linear" else "nearest",
                             padding_mode, bool(align_corners))
    # Volumetric (or higher) inputs and cubic interpolation.
    return F.onnx_grid_sample(X, grid, modes[mode], padding_mode, bool(align_corners))


@onnx_op("MaxRoiPool", since=1)
def max_roi_pool(ctx, X, rois, pooled_shape=None, spatial_scale=1.0):
    if pooled_shape is None or len(pooled_shape) != 2:
        raise ctx.error(f"attribute 'pooled_shape' must be [height, width], got "
                        f"{pooled_shape}")
    return F.roi_pooling(X, rois, int(pooled_shape[0]), int(pooled_shape[1]),
                         float(spatial_scale))
