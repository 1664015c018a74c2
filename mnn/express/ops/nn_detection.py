"""Detection helpers: topk and non-maximum suppression (``nms``).

Op ``nms``: inputs ``boxes (num, 4)`` as corners ``[y1, x1, y2, x2]`` (either corner
order, as TensorFlow and ONNX ``center_point_box=0``) and ``scores (num,)``; attributes
``max_detections`` int, ``iou_threshold`` float, ``score_threshold`` float. Output: the
int32 indices of the kept boxes, best score first (ties: lower index first); its length
is known only after computing. A box is dropped when its IoU with a kept box exceeds
``iou_threshold`` or its score is not above ``score_threshold``.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["topk", "nms"]


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
