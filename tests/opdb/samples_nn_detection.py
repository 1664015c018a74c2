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


def _dpp_ref(enc, cls, anchors, num_classes, max_detections, max_classes_per_detection,
             detections_per_class, score_threshold, iou_threshold, use_regular_nms, scales):
    """TensorFlow Lite's DetectionPostProcess, written out loop by loop (float32 data)."""
    ys, xs, hs, ws = scales
    boxes = []
    for (ty, tx, th, tw), (ay, ax, ah, aw) in zip(enc[0], anchors):
        yc, xc = ty / ys * ah + ay, tx / xs * aw + ax
        h, w = np.exp(th / hs) * ah, np.exp(tw / ws) * aw
        boxes.append(np.array([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], np.float32))
    scores = cls[0, :, cls.shape[2] - num_classes:]

    def greedy(s, limit):
        order = sorted((i for i in range(len(s)) if s[i] >= score_threshold),
                       key=lambda i: (-s[i], i))
        kept = []
        for i in order:
            if len(kept) < limit and all(_iou(boxes[i], boxes[j]) <= iou_threshold
                                         for j in kept):
                kept.append(i)
        return kept

    picks = []
    if use_regular_nms:
        for c in range(num_classes):
            picks += [(scores[i, c], i, c) for i in greedy(scores[:, c], detections_per_class)]
        picks = sorted(picks, key=lambda p: -p[0])[:max_detections]
    else:
        per_box = min(max_classes_per_detection, num_classes)
        for i in greedy(scores.max(1), max(max_detections // per_box, 1)):
            for c in sorted(range(num_classes), key=lambda c: (-scores[i, c], c))[:per_box]:
                if len(picks) < max_detections:
                    picks.append((scores[i, c], i, c))
    out = [np.zeros((1, max_detections, 4), np.float32), np.zeros((1, max_detections), np.float32),
           np.zeros((1, max_detections), np.float32), np.array([len(picks)], np.float32)]
    for k, (s, i, c) in enumerate(picks):
        out[0][0, k], out[1][0, k], out[2][0, k] = boxes[i], c, s
    return out


def _dpp_inputs(n, classes, seed):
    anchors = np.concatenate([values((n, 2), np.float32, 0.2, 0.8, seed=seed),
                              values((n, 2), np.float32, 0.1, 0.3, seed=seed + 1)], 1)
    return [values((1, n, 4), np.float32, -1, 1, seed=seed + 2),
            values((1, n, classes + 1), np.float32, 0, 1, seed=seed + 3), anchors]


def _dpp_attrs(classes, max_det, per_det, per_class, score, iou, regular):
    return dict(num_classes=classes, max_detections=max_det, max_classes_per_detection=per_det,
                detections_per_class=per_class, score_threshold=score, iou_threshold=iou,
                use_regular_nms=regular, scales=(10.0, 10.0, 5.0, 5.0))


SAMPLES["detection_post_process"] = [
    Sample(_dpp_inputs(16, 3, 10), _dpp_attrs(3, 5, 1, 5, 0.3, 0.5, False), _dpp_ref,
           rtol=1e-5, atol=1e-6),
    Sample(_dpp_inputs(16, 2, 20), _dpp_attrs(2, 6, 2, 5, 0.2, 0.4, False), _dpp_ref,
           rtol=1e-5, atol=1e-6),
    Sample(_dpp_inputs(12, 3, 30), _dpp_attrs(3, 7, 1, 3, 0.2, 0.4, True), _dpp_ref,
           rtol=1e-5, atol=1e-6),
]
REJECTS["detection_post_process"] = [
    Sample(_dpp_inputs(8, 3, 40)[:2] + [values((5, 4), np.float32)],
           _dpp_attrs(3, 5, 1, 5, 0.3, 0.5, False)),
    Sample(_dpp_inputs(8, 3, 50), _dpp_attrs(5, 5, 1, 5, 0.3, 0.5, False)),
]
