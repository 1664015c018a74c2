"""Region ops over NCHW inputs: roi_align, roi_pooling, crop_and_resize.

Ops (attributes are plain values; none of them is differentiable: autodiff raises):

- ``roi_align``: inputs ``x (N, C, H, W)``, ``boxes (R, 4)`` ``[x1, y1, x2, y2]`` in input
  coordinates (before ``spatial_scale``), ``batch (R,)`` int; attributes ``out_hw``,
  ``spatial_scale``, ``sampling_ratio`` (0: ``ceil(roi / bins)`` samples per bin),
  ``aligned`` (half-pixel offset: ONNX ``half_pixel``, torchvision ``aligned=True``),
  ``mode`` ``"avg"``/``"max"`` (ONNX RoiAlign's max: the largest weighted corner term).
- ``roi_pooling``: inputs ``x``, ``rois (R, 5)`` ``[batch, x1, y1, x2, y2]``; attributes
  ``out_hw``, ``spatial_scale``: Caffe ROIPooling / ONNX MaxRoiPool (corners rounded,
  bins ``floor``/``ceil``, empty bins 0).
- ``crop_and_resize``: inputs ``x``, ``boxes (R, 4)`` normalized ``[y1, x1, y2, x2]``,
  ``box_ind (R,)``; attributes ``crop_hw``, ``method`` ``"bilinear"``/``"nearest"``,
  ``extrapolation_value``: TensorFlow's CropAndResize on NCHW data, output
  ``(R, C, crop_h, crop_w)``.

Batch indices are checked against N before any gather; gathered pixel indices are
clamped, and samples outside the image are masked.
"""
import numpy as np

from ..enums import Interp_Method, Pooling_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc

__all__ = ["crop_and_resize", "roi_align", "roi_pooling"]


def _check_x(x, what):
    if x.dtype.kind != "f" or len(x.shape) != 4:
        raise OpError(f"{what}: input must be a float (N, C, H, W) tensor, got "
                      f"{list(x.shape)} {x.dtype}")


def _check_batch(batch, n, what):
    batch = np.asarray(batch)
    if batch.size and (batch.min() < 0 or batch.max() >= n):
        raise OpError(f"{what}: batch index {int(batch.min())}..{int(batch.max())} outside "
                      f"0..{n - 1}")
    return batch.astype(np.int64)


# ---------------------------------------------------------------------------------------
# roi_align


def _bilinear_terms(plane, y, x):
    """ONNX RoiAlign's bilinear sample of ``plane (C, H, W)`` at points ``y, x`` (P,):
    the four weighted corner terms ``(4, C, P)`` (zero for points off the image)."""
    _, h, w = plane.shape
    off = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y = np.maximum(y, 0.0)
    x = np.maximum(x, 0.0)
    y0 = np.floor(y).astype(np.int64)
    x0 = np.floor(x).astype(np.int64)
    top = y0 >= h - 1
    left = x0 >= w - 1
    y0 = np.where(top, h - 1, y0)
    x0 = np.where(left, w - 1, x0)
    y = np.where(top, y0, y)
    x = np.where(left, x0, x)
    y1 = np.where(top, y0, y0 + 1)
    x1 = np.where(left, x0, x0 + 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    terms = np.stack([hy * hx * plane[:, y0, x0], hy * lx * plane[:, y0, x1],
                      ly * hx * plane[:, y1, x0], ly * lx * plane[:, y1, x1]])
    return np.where(off, 0.0, terms)


def _roi_align_infer(metas, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    x, boxes, batch = metas
    _check_x(x, "roi_align")
    if len(boxes.shape) != 2 or boxes.shape[1] != 4 or boxes.dtype.kind != "f":
        raise OpError(f"boxes must be float (R, 4), got {list(boxes.shape)} {boxes.dtype}")
    if tuple(batch.shape) != (boxes.shape[0],) or batch.dtype.kind not in "iu":
        raise OpError(f"batch indices must be int ({boxes.shape[0]},), got "
                      f"{list(batch.shape)} {batch.dtype}")
    if min(out_hw) < 1 or sampling_ratio < 0 or mode not in ("avg", "max"):
        raise OpError(f"bad roi_align attributes: out_hw {list(out_hw)}, sampling_ratio "
                      f"{sampling_ratio}, mode {mode!r}")
    return [((boxes.shape[0], x.shape[1]) + tuple(out_hw), x.dtype)]


def _roi_align_compute(arrays, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    x, boxes, batch = arrays
    batch = _check_batch(batch, x.shape[0], "roi_align")
    ph, pw = out_hw
    out = np.zeros((boxes.shape[0], x.shape[1], ph, pw))
    offset = 0.5 if aligned else 0.0
    for r in range(boxes.shape[0]):
        x1, y1, x2, y2 = (float(v) * spatial_scale - offset for v in boxes[r])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sampling_ratio if sampling_ratio > 0 else int(np.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(np.ceil(rw / pw))
        gh, gw = max(gh, 0), max(gw, 0)
        if gh == 0 or gw == 0:
            continue
        ys = y1 + (np.arange(ph)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh)
        xs = x1 + (np.arange(pw)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw)
        yy = np.broadcast_to(ys[:, :, None, None], (ph, gh, pw, gw)).ravel()
        xx = np.broadcast_to(xs[None, None, :, :], (ph, gh, pw, gw)).ravel()
        terms = _bilinear_terms(x[batch[r]].astype(np.float64), yy, xx)
        terms = terms.reshape(4, x.shape[1], ph, gh, pw, gw)
        if mode == "avg":
            out[r] = terms.sum(0).sum((2, 4)) / (gh * gw)
        else:
            out[r] = terms.max(0).max((2, 4))
    return out.astype(x.dtype)


register(OpDef("roi_align", _roi_align_infer, _roi_align_compute))


def roi_align(input, roi, pooled_height, pooled_width, spatial_scale,
              sampling_ratio, aligned, pooling_mode=Pooling_Mode.AVEPOOL):
    """RoIAlign (MNN's ``roi_align``; torchvision ``roi_align``; ONNX ``RoiAlign``).

    Parameters
    ----------
    input : Var
        ``(N, C, H, W)``.
    roi : Var
        ``(R, 5)``: ``[batch_index, x1, y1, x2, y2]`` per region.
    pooled_height, pooled_width : int
    spatial_scale : float
        Multiplies the box coordinates.
    sampling_ratio : int
        Samples per bin side; 0 picks ``ceil(roi size / bins)``.
    aligned : bool
        Half-pixel offset (torchvision ``aligned=True``).
    pooling_mode : Pooling_Mode
        ``AVEPOOL`` averages the samples; ``MAXPOOL`` takes ONNX RoiAlign's max.

    Returns
    -------
    Var
        ``(R, C, pooled_height, pooled_width)``.
    """
    from .elementwise import cast
    from .movement import squeeze
    from .slicing import slice as _slice

    (x, nhwc), roi = nc.as_nchw(to_var(input)), to_var(roi)
    if len(roi.shape) != 2 or roi.shape[1] != 5:
        raise OpError(f"roi_align: roi must be (R, 5) [batch, x1, y1, x2, y2], got {roi.shape}")
    batch = cast(squeeze(_slice(roi, [0, 0], [-1, 1]), [1]), np.int32)
    boxes = _slice(roi, [0, 1], [-1, 4])
    mode = "max" if int(pooling_mode) == Pooling_Mode.MAXPOOL else "avg"
    y = apply("roi_align", [x, boxes, batch], out_hw=(int(pooled_height), int(pooled_width)),
              spatial_scale=float(spatial_scale), sampling_ratio=int(sampling_ratio),
              aligned=bool(aligned), mode=mode)[0]
    return nc.restore(y, nhwc)


# ---------------------------------------------------------------------------------------
# roi_pooling


def _round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _roi_pool_infer(metas, out_hw, spatial_scale):
    x, rois = metas
    _check_x(x, "roi_pooling")
    if len(rois.shape) != 2 or rois.shape[1] != 5 or rois.dtype.kind != "f":
        raise OpError(f"rois must be float (R, 5), got {list(rois.shape)} {rois.dtype}")
    if min(out_hw) < 1:
        raise OpError(f"pooled size must be positive, got {list(out_hw)}")
    return [((rois.shape[0], x.shape[1]) + tuple(out_hw), x.dtype)]


def _roi_pool_compute(arrays, out_hw, spatial_scale):
    x, rois = arrays
    batch = _check_batch(rois[:, 0].astype(np.int64), x.shape[0], "roi_pooling")
    if not np.array_equal(batch, rois[:, 0]):
        raise OpError("roi_pooling: batch indices (column 0 of rois) must be integers")
    ph, pw = out_hw
    h, w = x.shape[2:]
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), x.dtype)
    for r in range(rois.shape[0]):
        x1, y1, x2, y2 = (int(v) for v in _round_half_away(rois[r, 1:] * spatial_scale))
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph):
            hs = min(max(int(np.floor(i * rh / ph)) + y1, 0), h)
            he = min(max(int(np.ceil((i + 1) * rh / ph)) + y1, 0), h)
            for j in range(pw):
                ws = min(max(int(np.floor(j * rw / pw)) + x1, 0), w)
                we = min(max(int(np.ceil((j + 1) * rw / pw)) + x1, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = x[batch[r], :, hs:he, ws:we].max(axis=(1, 2))
    return out


register(OpDef("roi_pooling", _roi_pool_infer, _roi_pool_compute))


def roi_pooling(input, roi, pooled_height, pooled_width, spatial_scale):
    """Max RoI pooling (MNN's ``roi_pooling``; Caffe ROIPooling; ONNX ``MaxRoiPool``).

    Parameters
    ----------
    input : Var
        ``(N, C, H, W)``.
    roi : Var
        ``(R, 5)``: ``[batch_index, x1, y1, x2, y2]``.
    pooled_height, pooled_width : int
    spatial_scale : float
    """
    x, nhwc = nc.as_nchw(to_var(input))
    y = apply("roi_pooling", [x, to_var(roi)], out_hw=(int(pooled_height), int(pooled_width)),
              spatial_scale=float(spatial_scale))[0]
    return nc.restore(y, nhwc)


# ---------------------------------------------------------------------------------------
# crop_and_resize


def _car_infer(metas, crop_hw, method, extrapolation_value):
    x, boxes, ind = metas
    _check_x(x, "crop_and_resize")
    if len(boxes.shape) != 2 or boxes.shape[1] != 4 or boxes.dtype.kind != "f":
        raise OpError(f"boxes must be float (R, 4), got {list(boxes.shape)} {boxes.dtype}")
    if tuple(ind.shape) != (boxes.shape[0],) or ind.dtype.kind not in "iu":
        raise OpError(f"box_ind must be int ({boxes.shape[0]},), got {list(ind.shape)}")
    if min(crop_hw) < 1 or method not in ("bilinear", "nearest"):
        raise OpError(f"bad crop size {list(crop_hw)} or method {method!r}")
    return [((boxes.shape[0], x.shape[1]) + tuple(crop_hw), x.dtype)]


def _car_axis(lo, hi, size, n):
    if n > 1:
        return lo * (size - 1) + np.arange(n) * ((hi - lo) * (size - 1) / (n - 1))
    return np.array([0.5 * (lo + hi) * (size - 1)])


def _car_compute(arrays, crop_hw, method, extrapolation_value):
    x, boxes, ind = arrays
    ind = _check_batch(ind, x.shape[0], "crop_and_resize")
    h, w = x.shape[2:]
    ch, cw = crop_hw
    out = np.empty((boxes.shape[0], x.shape[1], ch, cw))
    for r in range(boxes.shape[0]):
        y1, x1, y2, x2 = (float(v) for v in boxes[r])
        ys, xs = _car_axis(y1, y2, h, ch), _car_axis(x1, x2, w, cw)
        ok = ((ys >= 0) & (ys <= h - 1))[:, None] & ((xs >= 0) & (xs <= w - 1))[None, :]
        plane = x[ind[r]].astype(np.float64)
        if method == "nearest":
            iy = np.clip(_round_half_away(ys), 0, h - 1).astype(np.int64)
            ix = np.clip(_round_half_away(xs), 0, w - 1).astype(np.int64)
            vals = plane[:, iy[:, None], ix[None, :]]
        else:
            yc, xc = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
            t, b = np.floor(yc).astype(np.int64), np.ceil(yc).astype(np.int64)
            lft, rgt = np.floor(xc).astype(np.int64), np.ceil(xc).astype(np.int64)
            fy, fx = (yc - t)[:, None], (xc - lft)[None, :]
            top = plane[:, t[:, None], lft] + (plane[:, t[:, None], rgt] -
                                               plane[:, t[:, None], lft]) * fx
            bot = plane[:, b[:, None], lft] + (plane[:, b[:, None], rgt] -
                                               plane[:, b[:, None], lft]) * fx
            vals = top + (bot - top) * fy
        out[r] = np.where(ok, vals, extrapolation_value)
    return out.astype(x.dtype)


register(OpDef("crop_and_resize", _car_infer, _car_compute))


def crop_and_resize(x, boxes, box_ind, crop_size, method=Interp_Method.BILINEAR,
                    extrapolation_value=0.0):
    """Crop boxes out of ``x`` and resize each to ``crop_size`` (MNN's
    ``crop_and_resize``; TensorFlow CropAndResize, on NCHW data).

    Parameters
    ----------
    x : Var
        ``(N, C, H, W)``.
    boxes : Var
        ``(R, 4)`` normalized ``[y1, x1, y2, x2]`` (1 is the last pixel; y1 > y2 flips).
    box_ind : Var
        ``(R,)`` int: the image of each box.
    crop_size : (int, int)
        ``(crop_h, crop_w)``.
    method : Interp_Method
        ``BILINEAR`` or ``NEAREST``.
    extrapolation_value : float
        Value of samples falling outside the image.

    Returns
    -------
    Var
        ``(R, C, crop_h, crop_w)``.
    """
    if hasattr(crop_size, "read"):
        crop_size = np.asarray(crop_size.read())
    crop_hw = tuple(int(v) for v in np.asarray(crop_size).reshape(-1))
    if len(crop_hw) != 2:
        raise OpError(f"crop_and_resize: crop_size must be (h, w), got {crop_hw}")
    name = "nearest" if int(method) == Interp_Method.NEAREST else "bilinear"
    x, nhwc = nc.as_nchw(to_var(x))
    y = apply("crop_and_resize", [x, to_var(boxes), to_var(box_ind)], crop_hw=crop_hw,
              method=name, extrapolation_value=float(extrapolation_value))[0]
    return nc.restore(y, nhwc)
