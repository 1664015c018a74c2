"""``deform_conv2d``: deformable 2-d convolution (ONNX DeformConv; torchvision's
``deform_conv2d``), with an optional modulation mask (DCNv2).

Inputs ``x`` ``[N, C, H, W]``, ``weight`` ``[O, C / group, kH, kW]``, ``offset``
``[N, G * 2 * kH * kW, oH, oW]`` (per offset group ``G`` and kernel tap, the (y, x) shift),
optional ``bias`` ``[O]`` and ``mask`` ``[N, G * kH * kW, oH, oW]``. Tap ``(i, j)`` of output
``(oh, ow)`` reads the input at ``(oh * sh - pad_top + i * dh + dy,
ow * sw - pad_left + j * dw + dx)`` by bilinear interpolation, corners outside the image
reading 0, times the mask; the sampled columns are then multiplied with the weights as an
ordinary (grouped) convolution. ``oH``/``oW`` are a plain convolution's output sizes.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["deform_conv2d"]


def _out_size(size, k, s, d, pb, pe):
    return (size + pb + pe - (d * (k - 1) + 1)) // s + 1


def _check(shapes, strides, pads, dilations, group, offset_group):
    xs, ws, offs = shapes[0], shapes[1], shapes[2]
    if len(xs) != 4 or len(ws) != 4 or len(offs) != 4:
        raise OpError(f"deform_conv2d: input {list(xs)}, weight {list(ws)} and offset "
                      f"{list(offs)} must be 4-d")
    if group < 1 or offset_group < 1 or xs[1] % group or ws[0] % group or \
            xs[1] % offset_group:
        raise OpError(f"deform_conv2d: group {group} / offset_group {offset_group} do not "
                      f"divide the channels ({xs[1]} in, {ws[0]} out)")
    if ws[1] * group != xs[1]:
        raise OpError(f"deform_conv2d: weight {list(ws)} expects {ws[1] * group} input "
                      f"channels, input has {xs[1]}")
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0:
        raise OpError("deform_conv2d: strides and dilations must be positive, pads not "
                      "negative")
    oh = _out_size(xs[2], ws[2], strides[0], dilations[0], pads[0], pads[2])
    ow = _out_size(xs[3], ws[3], strides[1], dilations[1], pads[1], pads[3])
    if oh < 1 or ow < 1:
        raise OpError(f"deform_conv2d: the kernel does not fit the padded input {list(xs)}")
    k = ws[2] * ws[3]
    if list(offs) != [xs[0], offset_group * 2 * k, oh, ow]:
        raise OpError(f"deform_conv2d: offset must be {[xs[0], offset_group * 2 * k, oh, ow]}"
                      f", got {list(offs)}")
    if len(shapes) > 3 and shapes[3] is not None and list(shapes[3]) != [ws[0]]:
        raise OpError(f"deform_conv2d: bias must be [{ws[0]}], got {list(shapes[3])}")
    if len(shapes) > 4 and list(shapes[4]) != [xs[0], offset_group * k, oh, ow]:
        raise OpError(f"deform_conv2d: mask must be {[xs[0], offset_group * k, oh, ow]}, "
                      f"got {list(shapes[4])}")
    return oh, ow


def _infer(metas, strides, pads, dilations, group, offset_group, has_bias):
    for m in metas:
        if m.dtype is not None and m.dtype.kind != "f":
            raise OpError(f"deform_conv2d: inputs must be float, got {m.dtype}")
    if any(m.shape is None for m in metas):
        return [(None, metas[0].dtype)]
    shapes = [m.shape for m in metas]
    if not has_bias:
        shapes = shapes[:3] + [None] + shapes[3:]
    oh, ow = _check(shapes, strides, pads, dilations, group, offset_group)
    return [((metas[0].shape[0], metas[1].shape[0], oh, ow), metas[0].dtype)]


def _bilinear(img, y, x):
    """``img`` [N, Cg, H, W] sampled at ``y``/``x`` [N, K, oH, oW] -> [N, Cg, K, oH, oW]."""
    n, _, h, w = img.shape
    y0, x0 = np.floor(y), np.floor(x)
    fy, fx = y - y0, x - x0
    y0, x0 = y0.astype(np.int64), x0.astype(np.int64)
    batch = np.arange(n).reshape(n, 1, 1, 1)
    out = 0.0
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yy, xx = y0 + dy, x0 + dx
            valid = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            vals = img[batch, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            # vals: [N, K, oH, oW, Cg]
            out = out + np.moveaxis(vals * (wy * wx * valid)[..., None], -1, 1)
    return out


def _compute(arrays, strides, pads, dilations, group, offset_group, has_bias):
    x, weight, offset = arrays[:3]
    bias = arrays[3] if has_bias else None
    mask = arrays[4 if has_bias else 3] if len(arrays) > (4 if has_bias else 3) else None
    shapes = [a.shape for a in (x, weight, offset)] + [None if bias is None else bias.shape]
    if mask is not None:
        shapes.append(mask.shape)
    oh, ow = _check(shapes, strides, pads, dilations, group, offset_group)
    n, c = x.shape[:2]
    o, _, kh, kw = weight.shape
    k = kh * kw
    xd = x.astype(np.float64)
    ki, kj = np.divmod(np.arange(k), kw)
    base_y = (np.arange(oh) * strides[0] - pads[0])[None, :, None] + \
        (ki * dilations[0])[:, None, None]
    base_x = (np.arange(ow) * strides[1] - pads[1])[None, None, :] + \
        (kj * dilations[1])[:, None, None]
    off = offset.astype(np.float64).reshape(n, offset_group, k, 2, oh, ow)
    cg = c // offset_group
    cols = np.empty((n, c, k, oh, ow), np.float64)
    for g in range(offset_group):
        sampled = _bilinear(xd[:, g * cg:(g + 1) * cg], base_y + off[:, g, :, 0],
                            base_x + off[:, g, :, 1])
        if mask is not None:
            m = mask.astype(np.float64).reshape(n, offset_group, k, oh, ow)[:, g]
            sampled = sampled * m[:, None]
        cols[:, g * cg:(g + 1) * cg] = sampled
    cin = c // group
    og = o // group
    cols = cols.reshape(n, group, cin * k, oh * ow)
    wmat = weight.astype(np.float64).reshape(group, og, cin * k)
    out = np.einsum("gok,ngkp->ngop", wmat, cols).reshape(n, o, oh, ow)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(1, o, 1, 1)
    return out.astype(x.dtype)


register(OpDef("deform_conv2d", _infer, _compute))


def deform_conv2d(x, weight, offset, bias=None, mask=None, strides=(1, 1),
                  pads=(0, 0, 0, 0), dilations=(1, 1), group=1, offset_group=1):
    """Deformable 2-d convolution (see the module docstring).

    ``pads`` is ``(top, left, bottom, right)`` (ONNX order).
    """
    args = [to_var(x), to_var(weight), to_var(offset)]
    if bias is not None:
        args.append(to_var(bias))
    if mask is not None:
        args.append(to_var(mask))
    return apply("deform_conv2d", args, strides=tuple(int(v) for v in strides),
                 pads=tuple(int(v) for v in pads),
                 dilations=tuple(int(v) for v in dilations), group=int(group),
                 offset_group=int(offset_group), has_bias=bias is not None)[0]
