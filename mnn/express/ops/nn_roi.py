"""Region ops over NCHW inputs: roi_align, roi_pooling, crop_and_resize.

Ops (attributes are plain values):

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

Gradients: each op is differentiable with respect to the feature map ``x`` through a
grad op of its own (``roi_align_grad``, ``roi_pooling_grad``, ``crop_and_resize_grad``:
inputs are the forward's inputs plus the output gradient, attributes the forward's),
whose kernel (mnn/_cython/roi.pyx) scatter-adds the output gradient with the forward's
sampling weights: ``avg`` RoIAlign and crop_and_resize spread it over the bilinear
corners, ``max`` RoIAlign and roi_pooling send it to the term or pixel that won the max.
Boxes, batch indices and box indices get no gradient (torchvision's ``roi_align`` and
``roi_pool`` give none for boxes either); the grad ops of the linear cases (``avg``
RoIAlign, crop_and_resize) are differentiable again, the max ones are not.

Batch indices are checked against N before any gather; gathered pixel indices are
clamped, and samples outside the image are masked. roi_align and roi_pooling refuse
non-finite boxes (their sample grids would be undefined); crop_and_resize treats a
non-finite sample position as outside the image (it takes ``extrapolation_value``).
"""
import numpy as np

from ..._cython import roi as _roi_k
from ..enums import Interp_Method, Pooling_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc

__all__ = ["crop_and_resize", "roi_align", "roi_pooling"]

# Samples per RoIAlign bin (grid_h * grid_w) beyond which a box is refused: such a box is
# far larger than any image, and its sample grid would not fit in memory.
_MAX_BIN_SAMPLES = 1 << 20


def _check_x(x, what):
    if x.dtype.kind != "f" or len(x.shape) != 4:
        raise OpError(f"{what}: input must be a float (N, C, H, W) tensor, got "
                      f"{list(x.shape)} {x.dtype}")


def _check_batch(batch, n, what):
    batch = np.asarray(batch)
    if batch.size and (batch.min() < 0 or batch.max() >= n):
        raise OpError(f"{what}: batch index {int(batch.min())}..{int(batch.max())} outside "
                      f"0..{n - 1}")
    return np.ascontiguousarray(batch, dtype=np.int64)


def _kernel_dtype(x):
    """The dtype a region kernel runs in: float32/float64 as they are, other floats in
    float64."""
    return x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)


def _check_dy(x_meta, dy_meta, out_shape, what):
    if dy_meta.dtype.kind != "f" or tuple(dy_meta.shape) != tuple(out_shape):
        raise OpError(f"{what}: output gradient must be float {list(out_shape)}, got "
                      f"{list(dy_meta.shape)} {dy_meta.dtype}")


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


def _roi_align_geometry(boxes, out_hw, spatial_scale, sampling_ratio, aligned):
    """Per region ``[y1, x1, bin_h, bin_w]`` (float64, scaled and offset) and the sample
    grid ``[grid_h, grid_w]`` (int64) of each bin."""
    ph, pw = out_hw
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4) * spatial_scale
    if not np.isfinite(b).all():
        bad = int(np.flatnonzero(~np.isfinite(b).all(1))[0])
        raise OpError(f"roi_align: box {bad} is not finite after spatial_scale "
                      f"{spatial_scale}: {b[bad].tolist()}")
    offset = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (b[:, k] - offset for k in range(4))
    rw, rh = x2 - x1, y2 - y1
    if not aligned:
        rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)
    if sampling_ratio > 0:
        gh = gw = np.full(len(b), float(sampling_ratio))
    else:
        gh, gw = np.ceil(rh / ph), np.ceil(rw / pw)
    gh, gw = np.maximum(gh, 0.0), np.maximum(gw, 0.0)
    if len(b) and (gh * gw).max() > _MAX_BIN_SAMPLES:
        bad = int(np.argmax(gh * gw))
        raise OpError(f"roi_align: box {bad} {np.asarray(boxes)[bad].tolist()} needs "
                      f"{int(gh[bad])}x{int(gw[bad])} samples per bin (more than "
                      f"{_MAX_BIN_SAMPLES}); pass a sampling_ratio")
    geom = np.ascontiguousarray(np.stack([y1, x1, rh / ph, rw / pw], 1).reshape(-1, 4))
    grid = np.ascontiguousarray(np.stack([gh, gw], 1).reshape(-1, 2).astype(np.int64))
    return geom, grid


def _roi_align_compute(arrays, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    x, boxes, batch = arrays
    batch = _check_batch(batch, x.shape[0], "roi_align")
    geom, grid = _roi_align_geometry(boxes, out_hw, spatial_scale, sampling_ratio, aligned)
    ph, pw = out_hw
    out = np.zeros((boxes.shape[0], x.shape[1], ph, pw))
    for r in range(boxes.shape[0]):
        y1, x1, bh, bw = geom[r]
        gh, gw = (int(v) for v in grid[r])
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


def _roi_align_grad(inputs, outputs, grads, **attrs):
    x, boxes, batch = inputs
    return [apply("roi_align_grad", [x, boxes, batch, grads[0]], **attrs)[0], None, None]


register(OpDef("roi_align", _roi_align_infer, _roi_align_compute, _roi_align_grad))


def _roi_align_grad_infer(metas, **attrs):
    (out_shape, _), = _roi_align_infer(metas[:3], **attrs)
    _check_dy(metas[0], metas[3], out_shape, "roi_align_grad")
    return [(metas[0].shape, metas[0].dtype)]


def _roi_align_grad_compute(arrays, out_hw, spatial_scale, sampling_ratio, aligned, mode):
    x, boxes, batch, dy = arrays
    batch = _check_batch(batch, x.shape[0], "roi_align_grad")
    geom, grid = _roi_align_geometry(boxes, out_hw, spatial_scale, sampling_ratio, aligned)
    dt = _kernel_dtype(x)
    xk = np.ascontiguousarray(x, dtype=dt)
    dx = np.zeros(x.shape, dt)
    # Work: every output bin visits its samples' four corners.
    samples = int(grid.prod(axis=1).max(initial=1))
    _roi_k.roi_align_grad(xk, np.ascontiguousarray(dy, dtype=dt), dx, geom, grid, batch,
                          mode == "max", nc.threads(dy.size * 4 * samples))
    return dx.astype(x.dtype, copy=False)


def _roi_align_grad_grad(inputs, outputs, grads, **attrs):
    # avg: the grad op is the forward's adjoint, linear in dy and free of x, so its own
    # gradient (w.r.t. dy) is the forward applied to the incoming gradient.
    if attrs["mode"] != "avg":
        raise OpError("roi_align_grad: max mode has no second-order gradient (its "
                      "gradient is a selection of the input)")
    _, boxes, batch, _ = inputs
    return [None, None, None, apply("roi_align", [grads[0], boxes, batch], **attrs)[0]]


register(OpDef("roi_align_grad", _roi_align_grad_infer, _roi_align_grad_compute,
               _roi_align_grad_grad))


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
        ``(R, C, pooled_height, pooled_width)``. Differentiable with respect to
        ``input`` only (no gradient for the boxes, as torchvision).
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


def _roi_pool_windows(rois, out_hw, spatial_scale, h, w):
    """Window bounds of every bin, clamped to the image: rows ``hs:he`` ``(R, PH)``,
    columns ``ws:we`` ``(R, PW)`` (int64)."""
    ph, pw = out_hw
    corners = _round_half_away(np.asarray(rois[:, 1:], dtype=np.float64) * spatial_scale)
    if not np.isfinite(corners).all():
        bad = int(np.flatnonzero(~np.isfinite(corners).all(1))[0])
        raise OpError(f"roi_pooling: roi {bad} is not finite after spatial_scale "
                      f"{spatial_scale}: {np.asarray(rois[bad]).tolist()}")
    x1, y1, x2, y2 = (corners[:, k:k + 1] for k in range(4))
    rh, rw = np.maximum(y2 - y1 + 1, 1), np.maximum(x2 - x1 + 1, 1)
    i, j = np.arange(ph)[None, :], np.arange(pw)[None, :]

    def bound(v, size):
        return np.ascontiguousarray(np.clip(v, 0, size).astype(np.int64))

    return (bound(np.floor(i * rh / ph) + y1, h), bound(np.ceil((i + 1) * rh / ph) + y1, h),
            bound(np.floor(j * rw / pw) + x1, w), bound(np.ceil((j + 1) * rw / pw) + x1, w))


def _roi_pool_batch(rois, n, what):
    col = np.asarray(rois[:, 0])
    if not np.isfinite(col).all() or not np.array_equal(np.floor(col), col):
        raise OpError(f"{what}: batch indices (column 0 of rois) must be integers")
    return _check_batch(col.astype(np.int64), n, what)


def _roi_pool_compute(arrays, out_hw, spatial_scale):
    x, rois = arrays
    batch = _roi_pool_batch(rois, x.shape[0], "roi_pooling")
    ph, pw = out_hw
    hs, he, ws, we = _roi_pool_windows(rois, out_hw, spatial_scale, *x.shape[2:])
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), x.dtype)
    for r in range(rois.shape[0]):
        for i in range(ph):
            for j in range(pw):
                if he[r, i] > hs[r, i] and we[r, j] > ws[r, j]:
                    window = x[batch[r], :, hs[r, i]:he[r, i], ws[r, j]:we[r, j]]
                    out[r, :, i, j] = window.max(axis=(1, 2))
    return out


def _roi_pool_grad(inputs, outputs, grads, out_hw, spatial_scale):
    x, rois = inputs
    return [apply("roi_pooling_grad", [x, rois, grads[0]], out_hw=out_hw,
                  spatial_scale=spatial_scale)[0], None]


register(OpDef("roi_pooling", _roi_pool_infer, _roi_pool_compute, _roi_pool_grad))


def _roi_pool_grad_infer(metas, out_hw, spatial_scale):
    (out_shape, _), = _roi_pool_infer(metas[:2], out_hw, spatial_scale)
    _check_dy(metas[0], metas[2], out_shape, "roi_pooling_grad")
    return [(metas[0].shape, metas[0].dtype)]


def _roi_pool_grad_compute(arrays, out_hw, spatial_scale):
    x, rois, dy = arrays
    batch = _roi_pool_batch(rois, x.shape[0], "roi_pooling_grad")
    hs, he, ws, we = _roi_pool_windows(rois, out_hw, spatial_scale, *x.shape[2:])
    dt = _kernel_dtype(x)
    dx = np.zeros(x.shape, dt)
    _roi_k.roi_pool_grad(np.ascontiguousarray(x, dtype=dt), np.ascontiguousarray(dy, dtype=dt),
                         dx, hs, he, ws, we, batch, nc.threads(x.size))
    return dx.astype(x.dtype, copy=False)


# The gradient routes dy to each window's maximum: a selection of x, not differentiable
# again (autodiff raises naming this op).
register(OpDef("roi_pooling_grad", _roi_pool_grad_infer, _roi_pool_grad_compute))


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

    Returns
    -------
    Var
        ``(R, C, pooled_height, pooled_width)``; empty bins are 0. Differentiable with
        respect to ``input`` only (the gradient goes to each bin's first maximum).
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


def _car_taps(lo, hi, size, n, method):
    """Per-axis taps of every box: ``(i0, i1, frac, valid)``, each ``(R, n)``. Sample
    ``k`` reads ``i0`` with weight ``1 - frac`` and ``i1`` with ``frac``; ``valid`` is
    False where it falls outside ``[0, size - 1]`` (NaN included); indices are always
    inside the axis."""
    lo, hi = lo[:, None], hi[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        if n > 1:
            pos = lo * (size - 1) + np.arange(n)[None, :] * ((hi - lo) * (size - 1) / (n - 1))
        else:
            pos = 0.5 * (lo + hi) * (size - 1)
        valid = (pos >= 0) & (pos <= size - 1)
    pos = np.where(valid, pos, 0.0)
    if method == "nearest":
        i0 = np.floor(pos + 0.5)  # pos >= 0: TensorFlow's round, half away from zero
        i1, frac = i0, np.zeros_like(pos)
    else:
        i0, i1 = np.floor(pos), np.ceil(pos)
        frac = pos - i0
    i0, i1 = (np.ascontiguousarray(np.clip(v, 0, size - 1).astype(np.int64)) for v in (i0, i1))
    return i0, i1, np.ascontiguousarray(frac), np.ascontiguousarray(valid, dtype=np.uint8)


def _car_all_taps(boxes, h, w, crop_hw, method):
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return (_car_taps(b[:, 0], b[:, 2], h, crop_hw[0], method),
            _car_taps(b[:, 1], b[:, 3], w, crop_hw[1], method))


def _car_compute(arrays, crop_hw, method, extrapolation_value):
    x, boxes, ind = arrays
    ind = _check_batch(ind, x.shape[0], "crop_and_resize")
    (t, b, fy, vy), (lft, rgt, fx, vx) = _car_all_taps(boxes, *x.shape[2:], crop_hw, method)
    out = np.empty((boxes.shape[0], x.shape[1]) + tuple(crop_hw))
    for r in range(boxes.shape[0]):
        plane = x[ind[r]].astype(np.float64)
        tr, br = t[r][:, None], b[r][:, None]
        if method == "nearest":
            vals = plane[:, tr, lft[r]]
        else:
            fxr = fx[r][None, :]
            top = plane[:, tr, lft[r]] + (plane[:, tr, rgt[r]] - plane[:, tr, lft[r]]) * fxr
            bot = plane[:, br, lft[r]] + (plane[:, br, rgt[r]] - plane[:, br, lft[r]]) * fxr
            vals = top + (bot - top) * fy[r][:, None]
        ok = vy[r].astype(bool)[:, None] & vx[r].astype(bool)[None, :]
        out[r] = np.where(ok, vals, extrapolation_value)
    return out.astype(x.dtype)


def _car_grad(inputs, outputs, grads, **attrs):
    x, boxes, ind = inputs
    return [apply("crop_and_resize_grad", [x, boxes, ind, grads[0]], **attrs)[0], None, None]


register(OpDef("crop_and_resize", _car_infer, _car_compute, _car_grad))


def _car_grad_infer(metas, **attrs):
    (out_shape, _), = _car_infer(metas[:3], **attrs)
    _check_dy(metas[0], metas[3], out_shape, "crop_and_resize_grad")
    return [(metas[0].shape, metas[0].dtype)]


def _car_grad_compute(arrays, crop_hw, method, extrapolation_value):
    x, boxes, ind, dy = arrays
    ind = _check_batch(ind, x.shape[0], "crop_and_resize_grad")
    (t, b, fy, vy), (lft, rgt, fx, vx) = _car_all_taps(boxes, *x.shape[2:], crop_hw, method)
    dt = _kernel_dtype(x)
    dx = np.zeros(x.shape, dt)
    _roi_k.crop_and_resize_grad(np.ascontiguousarray(dy, dtype=dt), dx, t, b, fy, vy, lft,
                                rgt, fx, vx, ind, nc.threads(dy.size * 4))
    return dx.astype(x.dtype, copy=False)


def _car_grad_grad(inputs, outputs, grads, crop_hw, method, extrapolation_value):
    # The grad op is the adjoint of the forward's linear part (extrapolated samples are
    # constants), so its gradient w.r.t. dy is that linear part: the forward with 0 fill.
    _, boxes, ind, _ = inputs
    return [None, None, None, apply("crop_and_resize", [grads[0], boxes, ind],
                                    crop_hw=crop_hw, method=method,
                                    extrapolation_value=0.0)[0]]


register(OpDef("crop_and_resize_grad", _car_grad_infer, _car_grad_compute, _car_grad_grad))


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
        ``(R, C, crop_h, crop_w)``. Differentiable with respect to ``x`` only
        (extrapolated samples take no gradient; none for the boxes).
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
