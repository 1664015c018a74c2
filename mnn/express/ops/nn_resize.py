"""Resizing the last two axes (H, W): ``interpolate`` (ONNX Resize semantics), MNN's
``resize``. Ops: ``resize`` (MNN's Interp) and its gradient ``resize_grad``.

Op attributes of ``resize`` (plain values):

- ``out_hw`` ``(OH, OW)``; ``scales`` ``(sh, sw)`` or None (when given, coordinates use
  them instead of ``OH / H``, as ONNX does when a model gives scales);
- ``mode``: ``"nearest"``, ``"linear"`` or ``"cubic"``;
- ``coord``: ``"half_pixel"``, ``"pytorch_half_pixel"``, ``"align_corners"``,
  ``"asymmetric"`` (ONNX ``coordinate_transformation_mode``);
- ``nearest_mode``: ``"round_prefer_floor"``, ``"round_prefer_ceil"``, ``"floor"``,
  ``"ceil"``;
- ``cubic_a`` (-0.75 as torch and ONNX), ``exclude_outside`` bool.

``resize_grad`` has the same attributes plus ``in_hw``. Each axis is resampled
separately: output ``i`` takes a weighted sum of a few input positions (1 nearest,
2 linear, 4 cubic) with indices clamped to the edge, so values outside the taps are
never read.
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
_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _source(out_size, in_size, scale, coord):
    dst = np.arange(out_size, dtype=np.float64)
    s = float(scale) if scale is not None else out_size / in_size
    if coord == "asymmetric":
        return dst / s
    if coord == "align_corners":
        return dst * ((in_size - 1) / (out_size - 1)) if out_size > 1 else np.zeros(out_size)
    src = (dst + 0.5) / s - 0.5
    if coord == "pytorch_half_pixel" and out_size == 1:
        return np.zeros(1)
    return src


def _cubic_weights(t, a):
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(in_size, out_size, scale, mode, coord, nearest_mode, cubic_a, exclude_outside):
    """``(indices, weights)``, each ``(taps, out_size)``, for one axis."""
    src = _source(out_size, in_size, scale, coord)
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
        return idx[None], np.ones((1, out_size))
    base = np.floor(src)
    t = src - base
    if mode == "linear":
        offsets, weights = (0, 1), [1 - t, t]
    else:
        offsets, weights = (-1, 0, 1, 2), _cubic_weights(t, cubic_a)
    raw = np.stack([base + o for o in offsets]).astype(np.int64)
    weights = np.stack(weights)
    if exclude_outside:
        weights = np.where((raw >= 0) & (raw < in_size), weights, 0.0)
        weights = weights / np.sum(weights, axis=0, keepdims=True)
    return np.clip(raw, 0, in_size - 1), weights


def _axis_matrix(in_size, out_size, **kw):
    """The dense ``(out, in)`` interpolation matrix of one axis (used by the gradient)."""
    idx, w = _taps(in_size, out_size, **kw)
    m = np.zeros((out_size, in_size))
    for k in range(idx.shape[0]):
        np.add.at(m, (np.arange(out_size), idx[k]), w[k])
    return m


def _resample(x, axis, idx, w):
    out = None
    for k in range(idx.shape[0]):
        shape = [1] * x.ndim
        shape[axis] = idx.shape[1]
        term = np.take(x, idx[k], axis=axis)
        if not (w[k] == 1).all():
            term = term * w[k].astype(x.dtype).reshape(shape)
        out = term if out is None else out + term
    return out


def _check(metas, out_hw, mode, coord, nearest_mode, scales):
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
    if scales is not None and min(scales) <= 0:
        raise OpError(f"scales must be positive, got {list(scales)}")


def _axis_kw(attrs, i):
    scales = attrs["scales"]
    return dict(scale=None if scales is None else scales[i], mode=attrs["mode"],
                coord=attrs["coord"], nearest_mode=attrs["nearest_mode"],
                cubic_a=attrs["cubic_a"], exclude_outside=attrs["exclude_outside"])


def _interp_infer(metas, **attrs):
    _check(metas, attrs["out_hw"], attrs["mode"], attrs["coord"], attrs["nearest_mode"],
           attrs["scales"])
    x = metas[0]
    return [(tuple(x.shape[:-2]) + tuple(attrs["out_hw"]), x.dtype)]


def _interp_compute(arrays, **attrs):
    x = arrays[0]
    y = x
    for i, axis in enumerate((x.ndim - 2, x.ndim - 1)):
        idx, w = _taps(x.shape[axis], attrs["out_hw"][i], **_axis_kw(attrs, i))
        y = _resample(y, axis, idx, w)
    return np.ascontiguousarray(y, dtype=x.dtype)


def _interp_grad(inputs, outputs, grads, **attrs):
    x = inputs[0]
    return [apply("resize_grad", [grads[0]], in_hw=tuple(x.shape[-2:]), **attrs)[0]]


register(OpDef("resize", _interp_infer, _interp_compute, _interp_grad))


def _interp_grad_infer(metas, in_hw, **attrs):
    g = metas[0]
    _check(metas, in_hw, attrs["mode"], attrs["coord"], attrs["nearest_mode"],
           attrs["scales"])
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
    return [apply("resize", [grads[0]], **attrs)[0]]


register(OpDef("resize_grad", _interp_grad_infer, _interp_grad_compute, _interp_grad_grad))


def interpolate(x, output_size=None, scales=None, mode="linear",
           coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor",
           cubic_coeff_a=-0.75, exclude_outside=False):
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
    coordinate_transformation_mode : {"half_pixel", "pytorch_half_pixel",
        "align_corners", "asymmetric"}
        torch ``align_corners=False`` is ``half_pixel``, ``align_corners=True`` is
        ``align_corners``; torch's ``nearest`` is ``asymmetric`` with
        ``nearest_mode="floor"``. (``pytorch_half_pixel`` maps an output of size 1 to
        input coordinate 0, as ONNX defines it.)
    nearest_mode : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
    cubic_coeff_a : float
    exclude_outside : bool
        Cubic taps outside the image get weight 0 (the others renormalized).
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
    y = apply("resize", [x], out_hw=out_hw, scales=scales, mode=_MODES[mode],
              coord=str(coordinate_transformation_mode), nearest_mode=str(nearest_mode),
              cubic_a=float(cubic_coeff_a), exclude_outside=bool(exclude_outside))[0]
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
