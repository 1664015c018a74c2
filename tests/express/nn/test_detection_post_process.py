"""detection_post_process against the real MNN wheel (fast NMS, one class per box; run
in a subprocess: the wheel crashes on some settings) and, for the settings the wheel
cannot run, against decoding by formula plus onnxruntime's NonMaxSuppression."""
import os
import subprocess
import sys
import textwrap

import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

SCALES = [10.0, 10.0, 5.0, 5.0]


def _inputs(seed, n=30, classes=3):
    rng = np.random.default_rng(seed)
    anchors = np.concatenate([rng.uniform(0.2, 0.8, (n, 2)), rng.uniform(0.1, 0.3, (n, 2))],
                             1).astype(np.float32)
    boxes = rng.normal(0, 0.5, (1, n, 4)).astype(np.float32)
    cls = rng.uniform(0, 1, (1, n, classes + 1)).astype(np.float32)
    return boxes, cls, anchors


def _wheel(tmp_path, boxes, cls, anchors, args):
    np.savez(tmp_path / "in.npz", b=boxes, c=cls, a=anchors)
    code = textwrap.dedent(f"""
        import numpy as np, MNN.expr as F
        d = np.load({str(tmp_path / 'in.npz')!r})
        res = F.detection_post_process(
            F.const(d['b'], list(d['b'].shape)), F.const(d['c'], list(d['c'].shape)),
            F.const(d['a'], list(d['a'].shape)), *{args!r}, {SCALES!r})
        np.savez({str(tmp_path / 'out.npz')!r}, *[np.array(r.read()) for r in res])
    """)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                   cwd=tmp_path, env=dict(os.environ))
    out = np.load(tmp_path / "out.npz")
    return [out[f"arr_{k}"] for k in range(4)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("args", [(3, 5, 1, 5, 0.3, 0.5, False), (3, 9, 1, 5, 0.1, 0.3, False)])
def test_fast_nms_matches_the_real_mnn_wheel(tmp_path, seed, args):
    boxes, cls, anchors = _inputs(seed)
    theirs = _wheel(tmp_path, boxes, cls, anchors, args)
    ours = F.detection_post_process(F.const(boxes), F.const(cls), F.const(anchors), *args,
                                    SCALES)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.read(), t.reshape(o.shape), rtol=1e-5, atol=1e-6)


def _decode(boxes, anchors):
    ys, xs, hs, ws = SCALES
    b, a = boxes[0].astype(np.float64), anchors.astype(np.float64)
    yc, xc = b[:, 0] / ys * a[:, 2] + a[:, 0], b[:, 1] / xs * a[:, 3] + a[:, 1]
    h, w = np.exp(b[:, 2] / hs) * a[:, 2], np.exp(b[:, 3] / ws) * a[:, 3]
    return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], 1).astype(np.float32)


def _ort_nms(boxes, scores, limit, iou, score):
    node = helper.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, None, 4]),
                      helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, None])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [helper.make_tensor("m", TensorProto.INT64, [1], [limit]),
         helper.make_tensor("i", TensorProto.FLOAT, [1], [iou]),
         helper.make_tensor("t", TensorProto.FLOAT, [1], [score])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"b": boxes[None], "s": scores[None, None].astype(np.float32)})[0][:, 2]


@pytest.mark.parametrize("seed", range(3))
def test_regular_nms_matches_per_class_onnxruntime_nms(seed):
    boxes, cls, anchors = _inputs(seed)
    decoded = _decode(boxes, anchors)
    picks = []
    for c in range(3):
        for i in _ort_nms(decoded, cls[0, :, 1 + c], 4, 0.4, 0.2):
            picks.append((-cls[0, i, 1 + c], c, i))
    picks = sorted(picks)[:7]
    b, k, s, num = F.detection_post_process(F.const(boxes), F.const(cls), F.const(anchors), 3,
                                            7, 1, 4, 0.2, 0.4, True, SCALES)
    assert int(num.read()[0]) == len(picks)
    for row, (neg, c, i) in enumerate(picks):
        assert k.read()[0, row] == c
        np.testing.assert_allclose(s.read()[0, row], -neg)
        np.testing.assert_allclose(b.read()[0, row], decoded[i], rtol=1e-5, atol=1e-6)


def test_fast_nms_with_two_classes_per_box_expands_each_kept_box():
    boxes, cls, anchors = _inputs(5)
    decoded = _decode(boxes, anchors)
    scores = cls[0, :, 1:]
    best = scores.max(1)
    kept = _ort_nms(decoded, best, 4, 0.5, 0.3)  # max_detections 8 // 2 classes per box
    b, k, s, num = F.detection_post_process(F.const(boxes), F.const(cls), F.const(anchors), 3,
                                            8, 2, 5, 0.3, 0.5, False, SCALES)
    rows = [(i, c) for i in kept for c in np.argsort(-scores[i], kind="stable")[:2]]
    assert int(num.read()[0]) == len(rows)
    for row, (i, c) in enumerate(rows):
        assert k.read()[0, row] == c
        np.testing.assert_allclose(s.read()[0, row], scores[i, c])


def test_detection_post_process_errors():
    boxes, cls, anchors = _inputs(0)
    with pytest.raises(F.OpError, match="anchors"):
        F.detection_post_process(F.const(boxes), F.const(cls), F.const(anchors[:5]), 3, 5, 1,
                                 5, 0.3, 0.5, False, SCALES)
    with pytest.raises(F.OpError, match="centersize"):
        F.detection_post_process(F.const(boxes), F.const(cls), F.const(anchors), 3, 5, 1, 5,
                                 0.3, 0.5, False, [1.0, 1.0])
