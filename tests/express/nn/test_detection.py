"""topk against torch; nms against onnxruntime's NonMaxSuppression."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("shape,k,axis,largest", [((7,), 3, 0, True), ((4, 9), 4, 1, False),
                                                  ((3, 5, 2), 5, 1, True), ((2, 6), 0, -1, True)])
def test_topk_values_indices_and_grad_match_torch(shape, k, axis, largest):
    x = RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float64)  # no ties
    xv = F.const(x)
    values, idx = F.topk(xv, k, axis, largest)
    tx = torch.tensor(x, requires_grad=True)
    tv, ti = torch.topk(tx, k, axis, largest, sorted=True)
    np.testing.assert_array_equal(values.read(), tv.detach().numpy())
    np.testing.assert_array_equal(idx.read(), ti.numpy())
    assert idx.dtype == np.int32
    if k:
        dy = RNG.standard_normal(tv.shape)
        tv.backward(torch.tensor(dy))
        (gx,) = F.grad([values], [xv], [F.const(dy)])
        np.testing.assert_allclose(gx.read(), tx.grad.numpy())


def test_topk_ties_keep_lower_index_first():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0], np.float32)
    values, idx = F.topk(F.const(x), 3)
    np.testing.assert_array_equal(idx.read(), [1, 2, 4])


def _ort_nms(boxes, scores, max_out, iou, score):
    node = helper.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t"], ["y"],
                            center_point_box=0)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, None, 4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, None])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [helper.make_tensor("m", TensorProto.INT64, [1], [max_out]),
         helper.make_tensor("i", TensorProto.FLOAT, [1], [iou]),
         helper.make_tensor("t", TensorProto.FLOAT, [1], [score])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    out = sess.run(None, {"b": boxes[None], "s": scores[None, None]})[0]
    return out[:, 2]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("iou,score,max_out", [(0.5, 0.0, 100), (0.3, 0.4, 5), (0.7, 0.1, 2)])
def test_nms_matches_onnxruntime(seed, iou, score, max_out):
    rng = np.random.default_rng(seed)
    n = 40
    corner = rng.uniform(0, 10, (n, 2))
    size = rng.uniform(0.5, 4, (n, 2))
    boxes = np.concatenate([corner, corner + size], 1).astype(np.float32)
    flip = rng.random(n) < 0.3  # either corner order
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = rng.random(n).astype(np.float32)
    ours = F.nms(F.const(boxes), F.const(scores), max_out, iou, score).read()
    np.testing.assert_array_equal(ours, _ort_nms(boxes, scores, max_out, iou, score))


def test_nms_errors():
    with pytest.raises(F.OpError, match="num, 4"):
        F.nms(F.const(np.zeros((3, 3), np.float32)), F.const(np.zeros(3, np.float32)), 2)
    with pytest.raises(F.OpError, match="scores"):
        F.nms(F.const(np.zeros((3, 4), np.float32)), F.const(np.zeros(2, np.float32)), 2)
    with pytest.raises(F.OpError, match="within"):
        F.topk(F.const(np.zeros(3, np.float32)), 4)
