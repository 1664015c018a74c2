"""Samples of roi_align, roi_pooling (referenced by onnxruntime's RoiAlign / MaxRoiPool)
and crop_and_resize (referenced by a per-pixel transcription of TensorFlow's
CropAndResize definition) from mnn/express/ops/nn_roi.py; their grad ops against torch
autograd of pure-torch formulations (torch's grid_sample for the bilinear averages,
gathers for the max and nearest cases; torchvision is not importable here)."""
import math

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as TF
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


def _align_points(box, out_hw, spatial_scale, sampling_ratio, aligned):
    """ONNX RoiAlign's sample coordinates of one box: ys (PH, GH), xs (PW, GW)."""
    ph, pw = out_hw
    off = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (float(v) * spatial_scale - off for v in box)
    rh, rw = y2 - y1, x2 - x1
    if not aligned:
        rh, rw = max(rh, 1.0), max(rw, 1.0)
    gh = sampling_ratio or math.ceil(rh / ph)
    gw = sampling_ratio or math.ceil(rw / pw)
    ys = y1 + np.arange(ph)[:, None] * rh / ph + (np.arange(gh)[None, :] + 0.5) * rh / ph / gh
    xs = x1 + np.arange(pw)[:, None] * rw / pw + (np.arange(gw)[None, :] + 0.5) * rw / pw / gw
    return ys, xs


def _roi_align_torch(tx, boxes, batch, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    _, c, h, w = tx.shape
    outs = []
    for box, b in zip(boxes, batch):
        ys, xs = _align_points(box, out_hw, spatial_scale, sampling_ratio, aligned)
        (ph, gh), (pw, gw) = ys.shape, xs.shape
        yy = np.broadcast_to(ys[:, :, None, None], (ph, gh, pw, gw)).ravel()
        xx = np.broadcast_to(xs[None, None], (ph, gh, pw, gw)).ravel()
        inside = torch.tensor((yy >= -1) & (yy <= h) & (xx >= -1) & (xx <= w))
        if mode == "avg":
            # Border-clamped bilinear sampling is RoiAlign's inside the [-1, size] band.
            gy = yy / (h - 1) * 2 - 1 if h > 1 else 0 * yy
            gx = xx / (w - 1) * 2 - 1 if w > 1 else 0 * xx
            grid = torch.tensor(np.stack([gx, gy], -1)[None, None], dtype=tx.dtype)
            v = TF.grid_sample(tx[int(b):int(b) + 1], grid, "bilinear", "border", True)[0, :, 0]
            v = torch.where(inside, v, torch.zeros_like(v))
            outs.append(v.reshape(c, ph, gh, pw, gw).mean((2, 4)))
            continue
        y, x = np.maximum(yy, 0), np.maximum(xx, 0)
        y0 = np.minimum(np.floor(y), h - 1).astype(int)
        x0 = np.minimum(np.floor(x), w - 1).astype(int)
        y = np.where(y0 == h - 1, y0, y)
        x = np.where(x0 == w - 1, x0, x)
        y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        ly, lx = y - y0, x - x0
        plane = tx[int(b)]
        terms = []
        for yi, xi, wt in ((y0, x0, (1 - ly) * (1 - lx)), (y0, x1, (1 - ly) * lx),
                           (y1, x0, ly * (1 - lx)), (y1, x1, ly * lx)):
            t = plane[:, yi, xi] * torch.tensor(wt, dtype=tx.dtype)
            terms.append(torch.where(inside, t, torch.zeros_like(t)))
        t = torch.stack(terms).reshape(4, c, ph, gh, pw, gw).permute(1, 2, 4, 0, 3, 5)
        outs.append(t.reshape(c, ph, pw, -1).max(-1).values)
    return torch.stack(outs)


def _roi_align_grad_ref(x, boxes, batch, dy, **attrs):
    tx = torch.tensor(x, requires_grad=True)
    _roi_align_torch(tx, boxes, batch, **attrs).backward(torch.tensor(dy))
    return tx.grad.numpy()


def _roi_pool_grad_ref(x, rois, dy, out_hw, spatial_scale):
    tx = torch.tensor(x, requires_grad=True)
    _, c, h, w = x.shape
    ph, pw = out_hw
    outs = []
    for roi in rois:
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) + 0.5))
                          for v in roi[1:].astype(np.float64) * spatial_scale)
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bins = []
        for i in range(ph):
            hs = min(max(math.floor(i * rh / ph) + y1, 0), h)
            he = min(max(math.ceil((i + 1) * rh / ph) + y1, 0), h)
            for j in range(pw):
                ws = min(max(math.floor(j * rw / pw) + x1, 0), w)
                we = min(max(math.ceil((j + 1) * rw / pw) + x1, 0), w)
                win = tx[int(roi[0]), :, hs:he, ws:we].reshape(c, -1)
                bins.append(win.max(1).values if win.shape[1] else tx.new_zeros(c))
        outs.append(torch.stack(bins, 1).reshape(c, ph, pw))
    torch.stack(outs).backward(torch.tensor(dy))
    return tx.grad.numpy()


def _car_grad_ref(img, boxes, ind, dy, crop_hw, method, extrapolation_value):
    tx = torch.tensor(img, requires_grad=True)
    h, w = img.shape[2:]
    ch, cw = crop_hw
    outs = []
    for (y1, x1, y2, x2), b in zip(boxes.astype(np.float64), ind):
        yy = (y1 * (h - 1) + np.arange(ch) * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1
              else np.array([0.5 * (y1 + y2) * (h - 1)]))
        xx = (x1 * (w - 1) + np.arange(cw) * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1
              else np.array([0.5 * (x1 + x2) * (w - 1)]))
        ok = torch.tensor(((yy >= 0) & (yy <= h - 1))[:, None]
                          & ((xx >= 0) & (xx <= w - 1))[None, :])
        if method == "nearest":
            iy = np.clip(np.floor(yy + 0.5), 0, h - 1).astype(int)
            ix = np.clip(np.floor(xx + 0.5), 0, w - 1).astype(int)
            v = tx[int(b)][:, iy[:, None], ix[None, :]]
        else:
            gy = np.broadcast_to((yy / max(h - 1, 1) * 2 - 1)[:, None], (ch, cw))
            gx = np.broadcast_to((xx / max(w - 1, 1) * 2 - 1)[None, :], (ch, cw))
            grid = torch.tensor(np.stack([gx, gy], -1)[None], dtype=tx.dtype)
            v = TF.grid_sample(tx[int(b):int(b) + 1], grid, "bilinear", "zeros", True)[0]
        outs.append(torch.where(ok, v, torch.full_like(v, extrapolation_value)))
    torch.stack(outs).backward(torch.tensor(dy))
    return tx.grad.numpy()


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

_DY_ALIGN = values((3, 2, 2, 3), np.float32, seed=5)
SAMPLES["roi_align_grad"] = [
    Sample([v, _BOXES.astype(v.dtype), _BATCH, _DY_ALIGN.astype(v.dtype)],
           dict(out_hw=(2, 3), spatial_scale=1.0, sampling_ratio=s, aligned=a, mode=m),
           _roi_align_grad_ref, rtol=1e-5, atol=1e-5)
    for v in (_X, _X.astype(np.float64)) for s in (0, 2) for a in (True, False)
    for m in ("avg", "max")]
SAMPLES["roi_pooling_grad"] = [
    Sample([v, _ROIS.astype(v.dtype), values((3, 2) + hw, v.dtype, seed=6)],
           dict(out_hw=hw, spatial_scale=0.5), _roi_pool_grad_ref)
    for v in (_X, _X.astype(np.float64)) for hw in ((2, 2), (3, 1))]
SAMPLES["crop_and_resize_grad"] = [
    Sample([v, np.array([[0.1, 0.2, 0.9, 0.7], [1.0, 0.8, -0.1, 0.05]], v.dtype),
            np.array([1, 0], np.int32), values((2, 2) + hw, v.dtype, seed=7)],
           dict(crop_hw=hw, method=m, extrapolation_value=-2.0), _car_grad_ref,
           rtol=1e-5, atol=1e-5)
    for v in (_X, _X.astype(np.float64)) for hw in ((3, 4), (1, 2))
    for m in ("bilinear", "nearest")]

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
    "roi_align_grad": [Sample([_X, _BOXES, _BATCH, values((3, 2, 2, 2), np.float32)],
                              dict(out_hw=(2, 3), spatial_scale=1.0, sampling_ratio=0,
                                   aligned=True, mode="avg")),
                       Sample([_X, np.array([[0, 0, np.nan, 3]], np.float32),
                               np.array([0], np.int32), values((1, 2, 2, 3), np.float32)],
                              dict(out_hw=(2, 3), spatial_scale=1.0, sampling_ratio=0,
                                   aligned=True, mode="avg"))],
    # batch indices 2 and 3 for a batch of 2
    "roi_pooling_grad": [Sample([_X, _ROIS + np.float32([2, 0, 0, 0, 0]),
                                 values((3, 2, 2, 2), np.float32)],
                                dict(out_hw=(2, 2), spatial_scale=0.5))],
    "crop_and_resize_grad": [Sample([_X, _BOXES, np.array([0, 2, 1], np.int32),
                                     values((3, 2, 2, 2), np.float32)],
                                    dict(crop_hw=(2, 2), method="bilinear",
                                         extrapolation_value=0.0))],
}
