"""Samples of nms (mnn/express/ops/nn_detection.py), referenced by a brute-force
enumeration: a box is kept iff no higher-ranked kept box overlaps it by IoU above the
threshold, checked box by box in score order (ties: lower index first)."""
import numpy as np

from opdb_core import Sample, values


def _iou(a, b):
    ya, xa = sorted(a[[0, 2]]), sorted(a[[1, 3]])
    yb, xb = sorted(b[[0, 2]]), sorted(b[[1, 3]])
    ih = max(0.0, min(ya[1], yb[1]) - max(ya[0], yb[0]))
    iw = max(0.0, min(xa[1], xb[1]) - max(xa[0], xb[0]))
    inter = ih * iw
    union = (ya[1] - ya[0]) * (xa[1] - xa[0]) + (yb[1] - yb[0]) * (xb[1] - xb[0]) - inter
    return inter / union if union > 0 else 0.0


def _nms_ref(boxes, scores, max_detections, iou_threshold, score_threshold):
    boxes, scores = boxes.astype(np.float64), scores.astype(np.float64)
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    kept = []
    for i in ranked:
        if len(kept) == max_detections or scores[i] <= score_threshold:
            continue
        if all(_iou(boxes[i], boxes[j]) <= iou_threshold for j in kept):
            kept.append(i)
    return np.asarray(kept, dtype=np.int32)


def _boxes(n, seed):
    c = values((n, 2), np.float32, 0, 8, seed=seed)
    return np.concatenate([c, c + values((n, 2), np.float32, 0.5, 3, seed=seed + 1)], 1)


SAMPLES = {"nms": [
    Sample([_boxes(12, 1), values((12,), np.float32, 0, 1, seed=2)],
           dict(max_detections=20, iou_threshold=0.4, score_threshold=0.1), _nms_ref),
    Sample([_boxes(9, 3).astype(np.float64), values((9,), np.float64, 0, 1, seed=4)],
           dict(max_detections=3, iou_threshold=0.2, score_threshold=-np.inf), _nms_ref),
    Sample([_boxes(1, 5), values((1,), np.float32, seed=6)],
           dict(max_detections=1, iou_threshold=-1.0, score_threshold=-np.inf), _nms_ref),
    Sample([_boxes(0, 7), values((0,), np.float32, seed=8)],
           dict(max_detections=5, iou_threshold=0.5, score_threshold=0.0), _nms_ref),
]}

REJECTS = {"nms": [
    Sample([values((3, 3), np.float32), values((3,), np.float32)],
           dict(max_detections=2, iou_threshold=0.5, score_threshold=0.0)),
    Sample([values((3, 4), np.int32), values((3,), np.int32)],
           dict(max_detections=2, iou_threshold=0.5, score_threshold=0.0)),
    Sample([values((3, 4), np.float32), values((3,), np.float32)],
           dict(max_detections=-1, iou_threshold=0.5, score_threshold=0.0)),
]}
