"""Resizing the last two axes (H, W): ``interpolate`` (ONNX Resize semantics), MNN's
``resize``. Ops: ``resize`` (MNN's Interp) and its gradient ``resize_grad``.

Op attributes of ``resize`` (plain values):

- ``out_hw`` ``(OH, OW)``; ``scales`` ``(sh, sw)`` or None (when given, coordinates use
  them instead of ``OH / H``, as ONNX does when a model gives scales);
- ``mode``: ``"nearest"``, ``"linear"`` or ``"cubic"``;
- ``coord``: ``"half_pixel"``, ``"half_pixel_symmetric"``, ``"pytorch_half_pixel"``,
  ``"align_corners"``, ``"asymmetric"``, ``"tf_crop_and_resize"`` (ONNX
  ``coordinate_transformation_mode``);
- ``nearest_mode``: ``"round_prefer_floor"``, ``"round_prefer_ceil"``, ``"floor"``,
  ``"ceil"``;
- ``cubic_a`` (-0.75 as torch and ONNX), ``exclude_outside`` bool;
- optional (absent means the default): ``antialias`` bool (linear/cubic downscaling
  widen the filter by ``1 / scale``, ONNX opset 18), ``roi`` ``(h0, w0, h1, w1)``
  normalized crop window of ``tf_crop_and_resize``, ``extrapolation_value`` for its
  samples outside the image.

``resize_grad`` has the same attributes plus ``in_hw``. Each axis is resampled
separately: output ``i`` takes a weighted sum of a few input positions (1 nearest,
2 linear, 4 cubic, more with antialias) with indices clamped to the edge, so values
outside the taps are never read. As in ONNX, a resized length given by scales is
``in * scale`` (not the floored output size) in the coordinate formulas, except in
``align_corners``, which uses the output size as onnxruntime, torch and MNN do.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc

__all__ = ["interpolate", "resize"]

_MODES = {"nearest": "nearest", "linear": "linear", "bilinear": "linear", "cubic": "cubic",
          "bicubic": "cubic"}
_COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
           "asymmetric", "tf_crop_and_resize")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _source(out_size, in_size, scale, coord, roi):
    """Input coordinate of every output index, and the mask of outputs that take the
    extrapolation value (``tf_crop_and_resize`` only, else None)."""
    dst = np.arange(out_size, dtype=np.float64)
    s = float(scale) if scale is not None else out_size / in_size
    # ONNX's resized length: in * scale when scales are given (it may not be an integer).
    length = out_size if scale is None else in_size * s
    if coord == "asymmetric":
        return dst / s, None
    if coord == "align_corners":
        # The integer output size, as onnxruntime, torch and MNN do; onnx's reference
        # uses in * scale here, so its two downscaling align_corners node tests differ.
        if out_size == 1:
            return np.zeros(out_size), None
        return dst * ((in_size - 1) / (out_size - 1)), None
    if coord == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            src = np.full(out_size, (end - start) * (in_size - 1) / 2)
        else:
            src = dst * ((end - start) * (in_size - 1) / (length - 1))
        src = src + start * (in_size - 1)
        with np.errstate(invalid="ignore"):
            outside = ~((src >= 0) & (src <= in_size - 1))
        return np.where(outside, 0.0, src), outside
    src = (dst + 0.5) / s - 0.5
    if coord == "pytorch_half_pixel" and out_size == 1:
        return np.zeros(1), None
    if coord == "half_pixel_symmetric":
        # Centres the implicit crop: matters only when out_size != in * scale.
        src = src + in_size / 2 * (1 - out_size / length)
    return src, None


def _filter(d, mode, a):
    """The linear (triangle) or cubic kernel at distances ``d`` (0 outside its support)."""
    d = np.abs(d)
    if mode == "linear":
        return np.clip(1 - d, 0.0, 1.0)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _taps(in_size, out_size, scale, mode, coord, nearest_mode, cubic_a, exclude_outside,
          antialias=False, roi=None):
    """``(indices, weights, outside)`` for one axis: indices and weights ``(taps,
    out_size)``; ``outside`` marks the outputs that take the extrapolation value (or is
    None)."""
    src, outside = _source(out_size, in_size, scale, coord, roi)
    if mode == "nearest":
        if nearest_mode == "round_prefer_floor":
            idx = np.ceil(src - 0.5)
        elif nearest_mode == "round_prefer_ceil":
            idx = np.floor(src + 0.5)
        elif nearest_mode == "floor":
            idx = np.floor(src)
        else:
            idx = np.ceil(src)
        idx = np.clip(idx, 0, in_size - 1).astype(np.int64)
        return idx[None], np.ones((1, out_size)), outside
    base = np.floor(src)
    s = float(scale) if scale is not None else out_size / in_size
    if antialias and s < 1:
        # Downscaling with antialias: the kernel stretched by 1 / scale, normalized.
        support = (1.0 if mode == "linear" else 2.0) / s
        offsets = np.arange(np.floor(-support), np.ceil(support) + 1)
        raw = base[None, :] + offsets[:, None]
        weights = _filter((raw - src[None, :]) * s, mode, cubic_a)
        weights = weights / np.sum(weights, axis=0, keepdims=True)
        raw = raw.astype(np.int64)
    else:
        t = src - base
        if mode == "linear":
            offsets, weights = (0, 1), [1 - t, t]
        else:
            offsets = (-1, 0, 1, 2)
            weights = [_filter(d, "cubic", cubic_a) for d in (t + 1, t, 1 - t, 2 - t)]
        raw = np.stack([base + o for o in offsets]).astype(np.int64)
        weights = np.stack(weights)
    if exclude_outside:
        weights = np.where((raw >= 0) & (raw < in_size), weights, 0.0)
        total = np.sum(weights, axis=0, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(raw, 0, in_size - 1), weights, outside


def _axis_matrix(in_size, out_size, **kw):
    """The dense ``(out, in)`` interpolation matrix of one axis (used by the gradient);
    extrapolated outputs are constants: their rows are zero."""
    idx, w, outside = _taps(in_size, out_size, **kw)
    if outside is not None:
        w = np.where(outside[None, :], 0.0, w)
    m = np.zeros((out_size, in_size))
    for k in range(idx.shape[0]):
        np.add.at(m, (np.arange(out_size), idx[k]), w[k])
    return m


def _resample(x, axis, idx, w, outside=None, fill=0.0):
    out = None
    shape = [1] * x.ndim
    shape[axis] = idx.shape[1]
    for k in range(idx.shape[0]):
        term = np.take(x, idx[k], axis=axis)
        if not (w[k] == 1).all():
            term = term * w[k].astype(x.dtype).reshape(shape)
        out = term if out is None else out + term
    if outside is not None and outside.any():
        out = np.where(outside.reshape(shape), x.dtype.type(fill), out)
    return out


def _check(metas, out_hw, mode, coord, nearest_mode, scales, roi=None):
    x = metas[0]
    if x.dtype.kind != "f":
        raise OpError(f"needs a floating point input, got {x.dtype}")
    if len(x.shape) < 2:
        raise OpError(f"needs at least 2-D input (resizes the last two axes), got {x.shape}")
    if mode not in ("nearest", "linear", "cubic"):
        raise OpError(f"mode must be nearest, linear or cubic, got {mode!r}")
    if coord not in _COORDS:
        raise OpError(f"coordinate mode must be one of {', '.join(_COORDS)}, got {coord!r}")
    if nearest_mode not in _NEAREST:
        raise OpError(f"nearest_mode must be one of {', '.join(_NEAREST)}, got "
                      f"{nearest_mode!r}")
    if min(out_hw) < 1 or min(x.shape[-2:]) < 1:
        raise OpError(f"cannot resize {list(x.shape[-2:])} to {list(out_hw)}")
    if scales is not None and not min(scales) > 0:
        raise OpError(f"scales must be positive, got {list(scales)}")
    if coord == "tf_crop_and_resize" and (roi is None or len(roi) != 4
                                          or not np.isfinite(roi).all()):
        raise OpError(f"tf_crop_and_resize needs a finite roi (h0, w0, h1, w1), got {roi}")


def _axis_kw(attrs, i):
    scales, roi = attrs["scales"], attrs.get("roi")
    return dict(scale=None if scales is None else scales[i], mode=attrs["mode"],
                coord=attrs["coord"], nearest_mode=attrs["nearest_mode"],
                cubic_a=attrs["cubic_a"], exclude_outside=attrs["exclude_outside"],
                antialias=bool(attrs.get("antialias", False)),
                roi=None if roi is None else (roi[i], roi[i + 2]))


def _interp_infer(metas, **attrs):
    _check(metas, attrs["out_hw"], attrs["mode"], attrs["coord"], attrs["nearest_mode"],
           attrs["scales"], attrs.get("roi"))
    x = metas[0]
    return [(tuple(x.shape[:-2]) + tuple(attrs["out_hw"]), x.dtype)]


def _interp_compute(arrays, **attrs):
    x = arrays[0]
    y = x
    for i, axis in enumerate((x.ndim - 2, x.ndim - 1)):
        idx, w, outside = _taps(x.shape[axis], attrs["out_hw"][i], **_axis_kw(attrs, i))
        y = _resample(y, axis, idx, w, outside, attrs.get("extrapolation_value", 0.0))
    return np.ascontiguousarray(y, dtype=x.dtype)


def _interp_grad(inputs, outputs, grads, **attrs):
    x = inputs[0]
    return [apply("resize_grad", [grads[0]], in_hw=tuple(x.shape[-2:]), **attrs)[0]]


register(OpDef("resize", _interp_infer, _interp_compute, _interp_grad))


def _interp_grad_infer(metas, in_hw, **attrs):
    g = metas[0]
    _check(metas, in_hw, attrs["mode"], attrs["coord"], attrs["nearest_mode"],
           attrs["scales"], attrs.get("roi"))
    if tuple(g.shape[-2:]) != tuple(attrs["out_hw"]):
        raise OpError(f"gradient {list(g.shape)} does not end with the resized size "
                      f"{list(attrs['out_hw'])}")
    return [(tuple(g.shape[:-2]) + tuple(in_hw), g.dtype)]


def _interp_grad_compute(arrays, in_hw, **attrs):
    g = arrays[0]
    # The adjoint of y = Rh x Rw^T is Rh^T g Rw.
    rh = _axis_matrix(in_hw[0], attrs["out_hw"][0], **_axis_kw(attrs, 0)).astype(g.dtype)
    rw = _axis_matrix(in_hw[1], attrs["out_hw"][1], **_axis_kw(attrs, 1)).astype(g.dtype)
    return np.ascontiguousarray(np.matmul(np.matmul(rh.T, g), rw))


def _interp_grad_grad(inputs, outputs, grads, in_hw, **attrs):
    # The grad op is the adjoint of the forward's linear part: extrapolated outputs
    # are constants, so its own gradient is the forward with a zero fill.
    if attrs.get("extrapolation_value", 0.0) != 0.0:
        attrs = dict(attrs, extrapolation_value=0.0)
    return [apply("resize", [grads[0]], **attrs)[0]]


register(OpDef("resize_grad", _interp_grad_infer, _interp_grad_compute, _interp_grad_grad))


def interpolate(x, output_size=None, scales=None, mode="linear",
                coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor",
                cubic_coeff_a=-0.75, exclude_outside=False, antialias=False, roi=None,
                extrapolation_value=0.0):
    """Resize the last two axes of ``x`` (ONNX ``Resize``; torch ``interpolate``).

    Parameters
    ----------
    x : Var
        Float, at least 2-D (NCHW images: H and W are resized).
    output_size : (int, int), optional
        ``(OH, OW)``. Default: ``floor(H * sh), floor(W * sw)`` from ``scales``.
    scales : (float, float), optional
        ``(sh, sw)``; when given they also drive the coordinate mapping (ONNX rule).
    mode : {"nearest", "linear", "bilinear", "cubic", "bicubic"}
    coordinate_transformation_mode : {"half_pixel", "half_pixel_symmetric",
        "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}
        torch ``align_corners=False`` is ``half_pixel``, ``align_corners=True`` is
        ``align_corners``; torch's ``nearest`` is ``asymmetric`` with
        ``nearest_mode="floor"``. (``pytorch_half_pixel`` maps an output of size 1 to
        input coordinate 0, as ONNX defines it.) ``tf_crop_and_resize`` samples the
        window ``roi`` as TensorFlow's CropAndResize does.
    nearest_mode : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
    cubic_coeff_a : float
    exclude_outside : bool
        Cubic taps outside the image get weight 0 (the others renormalized).
    antialias : bool
        Linear and cubic downscaling use the filter stretched by ``1 / scale`` (as
        ``torch.nn.functional.interpolate(antialias=True)`` and ONNX opset 18); no
        effect on nearest or on upscaling.
    roi : (float, float, float, float), optional
        ``(h_start, w_start, h_end, w_end)`` in normalized coordinates; needed by
        ``tf_crop_and_resize`` and ignored by the other modes.
    extrapolation_value : float
        ``tf_crop_and_resize``'s value for samples outside the image.

    The gradient w.r.t. ``x`` is defined in every mode (extrapolated outputs take none).
    """
    x, nhwc = nc.as_nchw(to_var(x))
    if mode not in _MODES:
        raise OpError(f"interpolate: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if scales is not None:
        scales = tuple(float(s) for s in scales)
        if len(scales) != 2:
            raise OpError(f"interpolate: scales must be (sh, sw), got {list(scales)}")
    if output_size is None:
        if scales is None:
            raise OpError("interpolate: give output_size or scales")
        output_size = (int(np.floor(x.shape[-2] * scales[0])),
                       int(np.floor(x.shape[-1] * scales[1])))
    out_hw = tuple(int(v) for v in output_size)
    if len(out_hw) != 2:
        raise OpError(f"interpolate: output_size must be (OH, OW), got {list(output_size)}")
    extra = {}
    if antialias and _MODES[mode] != "nearest":
        extra["antialias"] = True
    if coordinate_transformation_mode == "tf_crop_and_resize":
        if roi is None:
            raise OpError("interpolate: tf_crop_and_resize needs roi (h0, w0, h1, w1)")
        extra["roi"] = tuple(float(v) for v in roi)
        extra["extrapolation_value"] = float(extrapolation_value)
    y = apply("resize", [x], out_hw=out_hw, scales=scales, mode=_MODES[mode],
              coord=str(coordinate_transformation_mode), nearest_mode=str(nearest_mode),
              cubic_a=float(cubic_coeff_a), exclude_outside=bool(exclude_outside),
              **extra)[0]
    return nc.restore(y, nhwc)


def resize(x, x_scale, y_scale):
    """Bilinear resize of (H, W) to ``(floor(H * y_scale), floor(W * x_scale))`` (MNN's
    ``resize``): output pixel ``i`` samples input coordinate ``i * H / OH`` (asymmetric
    mapping, edge clamped), as the real wheel does."""
    x = to_var(x)
    if len(x.shape) < 2:
        raise OpError(f"resize: needs at least 2-D input, got {x.shape}")
    h, w = nc.as_nchw(x)[0].shape[-2:]
    out_hw = (int(np.floor(h * float(y_scale))), int(np.floor(w * float(x_scale))))
    return interpolate(x, out_hw, None, "linear", "asymmetric")
