"""Detection helpers: topk, non-maximum suppression (``nms``) and SSD's
``detection_post_process`` (TensorFlow Lite's DetectionPostProcess, MNN's op).

Op ``nms``: inputs ``boxes (num, 4)`` as corners ``[y1, x1, y2, x2]`` (either corner
order, as TensorFlow and ONNX ``center_point_box=0``) and ``scores (num,)``; attributes
``max_detections`` int, ``iou_threshold`` float, ``score_threshold`` float. Output: the
int32 indices of the kept boxes, best score first (ties: lower index first); its length
is known only after computing. A box is dropped when its IoU with a kept box exceeds
``iou_threshold`` or its score is not above ``score_threshold``.

Gradients: ``nms`` and ``detection_post_process`` select boxes, so they have no gradient
rule. ``nms``'s output is an int index, which carries no gradient (as any int Var):
gathering boxes or scores with it is differentiable (the gradient flows through the
gather to the gathered Var), and anything computed from the indices themselves gets a
zero gradient. A gradient that must pass through ``detection_post_process``'s float
boxes or scores raises an error naming the op.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["detection_post_process", "nms", "topk"]


def topk(x, k, axis=-1, largest=True):
    """The ``k`` largest (or smallest) entries along ``axis`` and their indices.

    Ties keep the lower index first (ONNX ``TopK``, sorted output).

    Returns
    -------
    [Var, Var]
        ``[values, indices]`` (indices int32).
    """
    from .arg_sort import sort
    from .slicing import slice as _slice

    x = to_var(x)
    nd = len(x.shape)
    if nd == 0:
        raise OpError("topk: needs at least a 1-D input")
    axis = int(axis)
    if not -nd <= axis < nd:
        raise OpError(f"topk: axis {axis} out of range for {x.shape}")
    axis %= nd
    k = int(k)
    if not 0 <= k <= x.shape[axis]:
        raise OpError(f"topk: k={k} is not within 0..{x.shape[axis]} (axis {axis} of "
                      f"{x.shape})")
    order = sort(x, axis, arg=True, descend=bool(largest))
    sizes = list(x.shape)
    sizes[axis] = k
    idx = _slice(order, [0] * nd, sizes)
    values = apply("gather_along_axis", [x, idx], axis=axis)[0]
    return [values, idx]


def _nms_infer(metas, max_detections, iou_threshold, score_threshold):
    boxes, scores = metas
    if boxes.dtype.kind != "f" or scores.dtype.kind != "f":
        raise OpError(f"boxes and scores must be float, got {boxes.dtype}, {scores.dtype}")
    if len(boxes.shape) != 2 or boxes.shape[1] != 4:
        raise OpError(f"boxes must be (num, 4), got {list(boxes.shape)}")
    if tuple(scores.shape) != (boxes.shape[0],):
        raise OpError(f"scores must be ({boxes.shape[0]},), got {list(scores.shape)}")
    if max_detections < 0:
        raise OpError(f"max_detections must be >= 0, got {max_detections}")
    return [(None, np.dtype(np.int32))]


def _nms_compute(arrays, max_detections, iou_threshold, score_threshold):
    boxes, scores = (a.astype(np.float64) for a in arrays)
    y1 = np.minimum(boxes[:, 0], boxes[:, 2])
    y2 = np.maximum(boxes[:, 0], boxes[:, 2])
    x1 = np.minimum(boxes[:, 1], boxes[:, 3])
    x2 = np.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] > score_threshold]
    keep = []
    alive = np.ones(len(order), bool)
    for pos, i in enumerate(order):
        if len(keep) >= max_detections:
            break
        if not alive[pos]:
            continue
        keep.append(i)
        rest = order[pos + 1:]
        ih = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        iw = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        inter = ih * iw
        union = area[i] + area[rest] - inter
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
        alive[pos + 1:] &= ~(iou > iou_threshold)
    return np.asarray(keep, dtype=np.int32)


register(OpDef("nms", _nms_infer, _nms_compute))


def nms(boxes, scores, max_detections, iou_threshold=-1.0, score_threshold=-np.inf):
    """Greedy non-maximum suppression (MNN's ``nms``; TF NonMaxSuppressionV3, ONNX
    NonMaxSuppression for one class).

    Parameters
    ----------
    boxes : Var
        ``(num, 4)`` corners ``[y1, x1, y2, x2]``.
    scores : Var
        ``(num,)``.
    max_detections : int
    iou_threshold : float
        Boxes overlapping a kept box by IoU more than this are dropped (MNN's default
        -1 drops every other box: only the best one is kept).
    score_threshold : float
        Boxes scoring at or below this are ignored.

    Returns
    -------
    Var
        int32 indices of the kept boxes, best first.
    """
    return apply("nms", [to_var(boxes), to_var(scores)], max_detections=int(max_detections),
                 iou_threshold=float(iou_threshold), score_threshold=float(score_threshold))[0]


# ---------------------------------------------------------------------------------------
# detection_post_process


def _decode(boxes, anchors, scales):
    """Centre-size decoding: anchors and boxes are (ycenter, xcenter, h, w) and
    (ty, tx, th, tw); returns corners (ymin, xmin, ymax, xmax)."""
    ys, xs, hs, ws = scales
    yc = boxes[:, 0] / ys * anchors[:, 2] + anchors[:, 0]
    xc = boxes[:, 1] / xs * anchors[:, 3] + anchors[:, 1]
    hh = 0.5 * np.exp(boxes[:, 2] / hs) * anchors[:, 2]
    hw = 0.5 * np.exp(boxes[:, 3] / ws) * anchors[:, 3]
    return np.stack([yc - hh, xc - hw, yc + hh, xc + hw], axis=1)


def _greedy(boxes, scores, limit, iou_threshold, score_threshold):
    """Indices kept by greedy NMS: scores >= threshold, best first, IoU > threshold
    suppresses (TensorFlow Lite's rule)."""
    cand = np.nonzero(scores >= score_threshold)[0]
    cand = cand[np.argsort(-scores[cand], kind="stable")]
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep = []
    alive = np.ones(len(cand), bool)
    for pos, i in enumerate(cand):
        if len(keep) >= limit:
            break
        if not alive[pos]:
            continue
        keep.append(i)
        rest = cand[pos + 1:]
        ih = np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0])
        iw = np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1])
        inter = np.clip(ih, 0, None) * np.clip(iw, 0, None)
        union = area[i] + area[rest] - inter
        ok = (area[i] > 0) & (area[rest] > 0) & (union > 0)
        iou = np.where(ok, inter / np.where(union > 0, union, 1), 0.0)
        alive[pos + 1:] &= ~(iou > iou_threshold)
    return np.asarray(keep, dtype=np.int64)


def _dpp_infer(metas, num_classes, max_detections, max_classes_per_detection,
               detections_per_class, score_threshold, iou_threshold, use_regular_nms,
               scales):
    boxes, cls, anchors = metas
    for m, name in ((boxes, "box encodings"), (cls, "class predictions"), (anchors, "anchors")):
        if m.dtype.kind != "f":
            raise OpError(f"{name} must be float, got {m.dtype}")
    if len(boxes.shape) != 3 or boxes.shape[0] != 1 or boxes.shape[2] != 4:
        raise OpError(f"box encodings must be (1, anchors, 4), got {list(boxes.shape)}")
    n = boxes.shape[1]
    if tuple(anchors.shape) != (n, 4):
        raise OpError(f"anchors must be ({n}, 4), got {list(anchors.shape)}")
    if len(cls.shape) != 3 or cls.shape[:2] != (1, n) or cls.shape[2] < num_classes \
            or num_classes < 1:
        raise OpError(f"class predictions must be (1, {n}, >= num_classes={num_classes}), "
                      f"got {list(cls.shape)}")
    if max_detections < 1 or max_classes_per_detection < 1 or detections_per_class < 1:
        raise OpError("max_detections, max_classes_per_detection and detections_per_class "
                      "must be >= 1")
    if len(scales) != 4 or min(scales) <= 0:
        raise OpError(f"centersize_encoding must be 4 positive scales, got {list(scales)}")
    f32 = np.dtype(np.float32)
    return [((1, max_detections, 4), f32), ((1, max_detections), f32),
            ((1, max_detections), f32), ((1,), f32)]


def _dpp_compute(arrays, num_classes, max_detections, max_classes_per_detection,
                 detections_per_class, score_threshold, iou_threshold, use_regular_nms,
                 scales):
    enc, cls, anchors = (a.astype(np.float32) for a in arrays)
    boxes = _decode(enc[0], anchors, scales).astype(np.float32)
    offset = cls.shape[2] - num_classes  # leading background column(s)
    scores = cls[0, :, offset:offset + num_classes]
    picks = []  # (score, box index, class)
    if use_regular_nms:
        for c in range(num_classes):
            for i in _greedy(boxes, scores[:, c], detections_per_class, iou_threshold,
                             score_threshold):
                picks.append((scores[i, c], i, c))
        picks.sort(key=lambda p: -p[0])
        picks = picks[:max_detections]
    else:
        per_box = min(max_classes_per_detection, num_classes)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :per_box]
        best = scores[np.arange(len(scores)), top[:, 0]]
        limit = max_detections // per_box if per_box else 0
        for i in _greedy(boxes, best, max(limit, 1), iou_threshold, score_threshold):
            for c in top[i]:
                if len(picks) < max_detections:
                    picks.append((scores[i, c], i, c))
    out_boxes = np.zeros((1, max_detections, 4), np.float32)
    out_cls = np.zeros((1, max_detections), np.float32)
    out_scores = np.zeros((1, max_detections), np.float32)
    for k, (score, i, c) in enumerate(picks):
        out_boxes[0, k] = boxes[i]
        out_cls[0, k] = c
        out_scores[0, k] = score
    return [out_boxes, out_cls, out_scores, np.array([len(picks)], np.float32)]


register(OpDef("detection_post_process", _dpp_infer, _dpp_compute, n_outputs=4))


def detection_post_process(encode_boxes, class_predictions, anchors, num_classes,
                           max_detections, max_class_per_detection, detections_per_class,
                           nms_threshold, iou_threshold, use_regular_nms,
                           centersize_encoding):
    """SSD post-processing (MNN's ``detection_post_process``; TensorFlow Lite's
    ``TFLite_Detection_PostProcess``): decode boxes against anchors, then non-maximum
    suppression across classes (fast) or per class (regular).

    Parameters
    ----------
    encode_boxes : Var
        ``(1, anchors, 4)`` encodings ``(ty, tx, th, tw)``.
    class_predictions : Var
        ``(1, anchors, classes + background)``; leading background columns are skipped.
    anchors : Var
        ``(anchors, 4)`` as ``(ycenter, xcenter, h, w)``.
    num_classes, max_detections, max_class_per_detection, detections_per_class : int
    nms_threshold : float
        Score threshold (scores below it are dropped).
    iou_threshold : float
    use_regular_nms : bool
    centersize_encoding : [y_scale, x_scale, h_scale, w_scale]

    Returns
    -------
    [Var, Var, Var, Var]
        Boxes ``(1, max_detections, 4)`` as (ymin, xmin, ymax, xmax), classes and scores
        ``(1, max_detections)``, and the number of detections ``(1,)`` (all float32;
        unused rows are zero).
    """
    scales = tuple(float(v) for v in centersize_encoding)
    return apply("detection_post_process",
                 [to_var(encode_boxes), to_var(class_predictions), to_var(anchors)],
                 num_classes=int(num_classes), max_detections=int(max_detections),
                 max_classes_per_detection=int(max_class_per_detection),
                 detections_per_class=int(detections_per_class),
                 score_threshold=float(nms_threshold), iou_threshold=float(iou_threshold),
                 use_regular_nms=bool(use_regular_nms), scales=scales)
