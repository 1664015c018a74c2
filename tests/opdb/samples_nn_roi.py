"""Samples of roi_align, roi_pooling (referenced by onnxruntime's RoiAlign / MaxRoiPool)
and crop_and_resize (referenced by a per-pixel transcription of TensorFlow's
CropAndResize definition) from mnn/express/ops/nn_roi.py."""
import math

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
from opdb_core import Sample, values


def _ort(node, inputs, opset):
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, TensorProto.INT64 if v.dtype == np.int64
                                       else TensorProto.FLOAT, v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


def _roi_align_ref(x, boxes, batch, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    node = helper.make_node(
        "RoiAlign", ["x", "r", "b"], ["y"], mode=mode, output_height=out_hw[0],
        output_width=out_hw[1], sampling_ratio=sampling_ratio, spatial_scale=spatial_scale,
        coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel")
    return _ort(node, {"x": x, "r": boxes, "b": batch.astype(np.int64)}, 16)


def _roi_pool_ref(x, rois, out_hw, spatial_scale):
    node = helper.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=list(out_hw),
                            spatial_scale=spatial_scale)
    return _ort(node, {"x": x, "r": rois}, 13)


def _car_ref(img, boxes, ind, crop_hw, method, extrapolation_value):
    ch, cw = crop_hw
    h, w = img.shape[2:]
    out = np.zeros((len(boxes), img.shape[1], ch, cw))
    for r, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        for i in range(ch):
            yy = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 \
                else 0.5 * (y1 + y2) * (h - 1)
            for j in range(cw):
                xx = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 \
                    else 0.5 * (x1 + x2) * (w - 1)
                if not (0 <= yy <= h - 1 and 0 <= xx <= w - 1):
                    out[r, :, i, j] = extrapolation_value
                    continue
                p = img[ind[r]].astype(np.float64)
                if method == "nearest":
                    out[r, :, i, j] = p[:, int(math.floor(yy + 0.5)), int(math.floor(xx + 0.5))]
                    continue
                t, b, lf, rt = math.floor(yy), math.ceil(yy), math.floor(xx), math.ceil(xx)
                top = p[:, t, lf] + (p[:, t, rt] - p[:, t, lf]) * (xx - lf)
                bot = p[:, b, lf] + (p[:, b, rt] - p[:, b, lf]) * (xx - lf)
                out[r, :, i, j] = top + (bot - top) * (yy - t)
    return out.astype(img.dtype)


_X = values((2, 2, 7, 8), np.float32, seed=1)
_BOXES = np.array([[0.5, 1.0, 6.0, 5.5], [-1.0, 2.0, 3.0, 9.0], [2.0, 2.0, 2.5, 2.2]],
                  np.float32)
_BATCH = np.array([1, 0, 1], np.int32)
_ROIS = np.concatenate([_BATCH[:, None].astype(np.float32), _BOXES * 2], 1)

SAMPLES = {
    "roi_align": [
        Sample([_X, _BOXES, _BATCH], dict(out_hw=(2, 3), spatial_scale=1.0, sampling_ratio=s,
                                          aligned=a, mode=m), _roi_align_ref, rtol=1e-5,
               atol=1e-5)
        for s in (0, 2) for a in (True, False) for m in ("avg", "max")],
    "roi_pooling": [Sample([_X, _ROIS], dict(out_hw=(2, 2), spatial_scale=0.5), _roi_pool_ref),
                    Sample([_X, _ROIS[:1]], dict(out_hw=(3, 1), spatial_scale=0.25),
                           _roi_pool_ref)],
    "crop_and_resize": [
        Sample([v, np.array([[0.1, 0.2, 0.9, 0.7], [1.0, 0.8, -0.1, 0.05]], v.dtype),
                np.array([1, 0], np.int32)],
               dict(crop_hw=hw, method=m, extrapolation_value=-2.0), _car_ref)
        for v in (_X, _X.astype(np.float64)) for hw in ((3, 4), (1, 2))
        for m in ("bilinear", "nearest")],
}

REJECTS = {
    "roi_align": [Sample([_X, _BOXES, np.array([0, 1, 2], np.int32)],
                         dict(out_hw=(2, 2), spatial_scale=1.0, sampling_ratio=0,
                              aligned=True, mode="avg")),
                  Sample([_X, _BOXES, _BATCH], dict(out_hw=(2, 2), spatial_scale=1.0,
                                                   sampling_ratio=0, aligned=True,
                                                   mode="sum"))],
    "roi_pooling": [Sample([_X, _BOXES], dict(out_hw=(2, 2), spatial_scale=1.0))],
    "crop_and_resize": [Sample([_X, _BOXES, _BATCH], dict(crop_hw=(2, 2), method="cubic",
                                                          extrapolation_value=0.0))],
}
