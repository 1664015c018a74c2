"""roi_align and roi_pooling against onnxruntime (RoiAlign, MaxRoiPool); crop_and_resize
against a per-pixel reference of TensorFlow's CropAndResize definition."""
import math

import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

RNG = np.random.default_rng(17)


def _run(node, inputs, opset):
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, TensorProto.INT64 if v.dtype == np.int64
                                       else TensorProto.FLOAT, v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


def _rois(r, n, h, w, scale):
    x1 = RNG.uniform(-2, w / scale, r)
    y1 = RNG.uniform(-2, h / scale, r)
    x2 = x1 + RNG.uniform(0.5, w / scale, r)
    y2 = y1 + RNG.uniform(0.5, h / scale, r)
    b = RNG.integers(0, n, r)
    return np.stack([b, x1, y1, x2, y2], 1).astype(np.float32)


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_onnxruntime(aligned, mode, ratio):
    x = RNG.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois = _rois(6, 2, 9, 11, 0.5)
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], mode=mode,
                            output_height=3, output_width=4, sampling_ratio=ratio,
                            spatial_scale=0.5, coordinate_transformation_mode=(
                                "half_pixel" if aligned else "output_half_pixel"))
    ref = _run(node, {"x": x, "rois": rois[:, 1:].copy(), "b": rois[:, 0].astype(np.int64)},
               16)
    pool = F.MAXPOOL if mode == "max" else F.AVEPOOL
    y = F.roi_align(F.const(x), F.const(rois), 3, 4, 0.5, ratio, aligned, pool)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


def test_roi_pooling_matches_onnxruntime_max_roi_pool():
    x = RNG.standard_normal((2, 3, 10, 12)).astype(np.float32)
    rois = _rois(7, 2, 10, 12, 0.5)
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[3, 2],
                            spatial_scale=0.5)
    ref = _run(node, {"x": x, "rois": rois}, 13)
    y = F.roi_pooling(F.const(x), F.const(rois), 3, 2, 0.5)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-6)


def _tf_crop_and_resize(img, boxes, ind, ch, cw, method, extrap):
    """TensorFlow's CropAndResize, one output pixel at a time (NCHW)."""
    n_c, h, w = img.shape[1:]
    out = np.zeros((len(boxes), n_c, ch, cw))
    for r, (y1, x1, y2, x2) in enumerate(boxes):
        for i in range(ch):
            in_y = (y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1
                    else 0.5 * (y1 + y2) * (h - 1))
            for j in range(cw):
                in_x = (x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1
                        else 0.5 * (x1 + x2) * (w - 1))
                if not (0 <= in_y <= h - 1 and 0 <= in_x <= w - 1):
                    out[r, :, i, j] = extrap
                    continue
                plane = img[ind[r]]
                if method == "nearest":
                    yy = int(math.floor(in_y + 0.5))
                    xx = int(math.floor(in_x + 0.5))
                    out[r, :, i, j] = plane[:, yy, xx]
                    continue
                t, b = math.floor(in_y), math.ceil(in_y)
                lft, rgt = math.floor(in_x), math.ceil(in_x)
                fy, fx = in_y - t, in_x - lft
                top = plane[:, t, lft] + (plane[:, t, rgt] - plane[:, t, lft]) * fx
                bot = plane[:, b, lft] + (plane[:, b, rgt] - plane[:, b, lft]) * fx
                out[r, :, i, j] = top + (bot - top) * fy
    return out


@pytest.mark.parametrize("method", [F.BILINEAR, F.NEAREST])
@pytest.mark.parametrize("crop", [(4, 5), (1, 3)])
def test_crop_and_resize_matches_tf_definition(method, crop):
    img = RNG.standard_normal((2, 3, 6, 7))
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.7, 0.0, 0.1], [-0.2, 0.3, 1.3, 0.6]])
    ind = np.array([1, 0, 1], np.int32)
    y = F.crop_and_resize(F.const(img), F.const(boxes), F.const(ind), crop, method, -1.5)
    name = "nearest" if method == F.NEAREST else "bilinear"
    ref = _tf_crop_and_resize(img, boxes, ind, crop[0], crop[1], name, -1.5)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-12, atol=1e-12)


def test_region_ops_reject_bad_batch_indices():
    x = F.const(np.zeros((1, 1, 4, 4), np.float32))
    with pytest.raises(F.OpError, match="batch index"):
        F.roi_align(x, F.const(np.array([[1, 0, 0, 2, 2]], np.float32)), 2, 2, 1.0, 1,
                    True).read()
    with pytest.raises(F.OpError, match="batch index"):
        F.roi_pooling(x, F.const(np.array([[-1, 0, 0, 2, 2]], np.float32)), 2, 2, 1.0).read()
    with pytest.raises(F.OpError, match="batch index"):
        F.crop_and_resize(x, F.const(np.zeros((1, 4), np.float32)),
                          F.const(np.array([3], np.int32)), (2, 2)).read()
