"""grid_sample: sample an NCHW input at normalized grid locations (torch ``grid_sample``,
ONNX ``GridSample``), and its gradient op ``grid_sample_grad``.

Op attributes: ``mode`` (``"bilinear"`` or ``"nearest"``), ``padding_mode``
(``"zeros"``, ``"border"``, ``"reflection"``), ``align_corners`` bool. The grid is
``(N, OH, OW, 2)`` holding ``(x, y)`` in [-1, 1]; ``align_corners`` maps -1/1 to the
centres of the corner pixels (True) or to their outer edges (False). Every gathered index
is clamped into the image and out-of-image taps are masked, so nothing is read outside.

``grid_sample_grad`` (inputs: input, grid, output gradient) returns the gradients of
the input and (bilinear only) of the grid; nearest sampling has zero grid gradient.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc

__all__ = ["grid_sample"]

_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border", "reflection")


def _unnormalize(coord, size, align_corners):
    """Pixel coordinate of a normalized one, and d(pixel)/d(normalized)."""
    if align_corners:
        return (coord + 1) * 0.5 * (size - 1), 0.5 * (size - 1)
    return ((coord + 1) * size - 1) * 0.5, 0.5 * size


def _reflect(c, lo, hi):
    """Reflect ``c`` into [lo, hi] (torch's rule); also returns dc_out/dc_in (+-1)."""
    span = hi - lo
    if span <= 0:
        return np.zeros_like(c), np.zeros_like(c)
    d = np.abs(c - lo)
    flips = np.floor(d / span)
    extra = d - flips * span
    out = np.where(flips % 2 == 0, lo + extra, hi - extra)
    sign = np.where(c < lo, -1.0, 1.0) * np.where(flips % 2 == 0, 1.0, -1.0)
    return out, sign


def _source(coord, size, padding_mode, align_corners):
    """Pixel coordinates for one axis and their derivative w.r.t. the grid value."""
    pix, scale = _unnormalize(coord, size, align_corners)
    deriv = np.full_like(pix, scale)
    if padding_mode == "reflection":
        if align_corners:
            pix, sign = _reflect(pix, 0.0, size - 1.0)
        else:
            pix, sign = _reflect(pix, -0.5, size - 0.5)
        deriv = deriv * sign
    if padding_mode in ("border", "reflection"):
        inside = (pix > 0) & (pix < size - 1)
        pix = np.clip(pix, 0, size - 1)
        deriv = np.where(inside, deriv, 0.0)
    return pix, deriv


def _taps(x_shape, grid, mode, padding_mode, align_corners):
    """Per tap: (iy, ix, weight, valid, dweight/dgx, dweight/dgy), each (N, OH, OW)."""
    h, w = x_shape[2], x_shape[3]
    gx = grid[..., 0].astype(np.float64)
    gy = grid[..., 1].astype(np.float64)
    px, dpx = _source(gx, w, padding_mode, align_corners)
    py, dpy = _source(gy, h, padding_mode, align_corners)
    if mode == "nearest":
        ix, iy = np.rint(px), np.rint(py)  # torch rounds half to even
        one, zero = np.ones_like(px), np.zeros_like(px)
        return [(iy, ix, one, zero, zero)]
    x0, y0 = np.floor(px), np.floor(py)
    fx, fy = px - x0, py - y0
    taps = []
    for oy, wy, dwy in ((0, 1 - fy, -1.0), (1, fy, 1.0)):
        for ox, wx, dwx in ((0, 1 - fx, -1.0), (1, fx, 1.0)):
            taps.append((y0 + oy, x0 + ox, wy * wx, wy * dwx * dpx, wx * dwy * dpy))
    return taps


def _gather_index(x_shape, iy, ix):
    h, w = x_shape[2], x_shape[3]
    valid = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    return (np.clip(iy, 0, h - 1).astype(np.int64), np.clip(ix, 0, w - 1).astype(np.int64),
            valid)


def _check(metas, mode, padding_mode):
    x, grid = metas[0], metas[1]
    if x.dtype.kind != "f" or grid.dtype != x.dtype:
        raise OpError(f"input and grid must be float of one dtype, got {x.dtype}, "
                      f"{grid.dtype}")
    if len(x.shape) != 4 or len(grid.shape) != 4 or grid.shape[3] != 2 \
            or grid.shape[0] != x.shape[0]:
        raise OpError(f"needs input (N, C, H, W) and grid (N, OH, OW, 2), got "
                      f"{list(x.shape)} and {list(grid.shape)}")
    if min(x.shape[2:]) < 1:
        raise OpError(f"input {list(x.shape)} has an empty image")
    if mode not in _MODES or padding_mode not in _PADDINGS:
        raise OpError(f"mode must be one of {_MODES} and padding_mode one of {_PADDINGS}, "
                      f"got {mode!r}, {padding_mode!r}")


def _gs_infer(metas, mode, padding_mode, align_corners):
    _check(metas, mode, padding_mode)
    x, grid = metas
    return [((x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]), x.dtype)]


def _gs_compute(arrays, mode, padding_mode, align_corners):
    x, grid = arrays
    n = np.arange(x.shape[0])[:, None, None]
    out = np.zeros((x.shape[0], grid.shape[1], grid.shape[2], x.shape[1]))
    for iy, ix, wgt, _, _ in _taps(x.shape, grid, mode, padding_mode, align_corners):
        cy, cx, valid = _gather_index(x.shape, iy, ix)
        vals = x[n, :, cy, cx]  # (N, OH, OW, C)
        out += np.where(valid, wgt, 0.0)[..., None] * vals
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2), dtype=x.dtype)


def _gs_grad(inputs, outputs, grads, mode, padding_mode, align_corners):
    dx, dgrid = apply("grid_sample_grad", [inputs[0], inputs[1], grads[0]], mode=mode,
                      padding_mode=padding_mode, align_corners=align_corners)
    return [dx, dgrid]


register(OpDef("grid_sample", _gs_infer, _gs_compute, _gs_grad))


def _gsg_infer(metas, mode, padding_mode, align_corners):
    _check(metas[:2], mode, padding_mode)
    x, grid, g = metas
    if tuple(g.shape) != (x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]) \
            or g.dtype != x.dtype:
        raise OpError(f"output gradient {list(g.shape)} {g.dtype} does not match the "
                      "sampled output")
    return [(x.shape, x.dtype), (grid.shape, grid.dtype)]


def _gsg_compute(arrays, mode, padding_mode, align_corners):
    x, grid, g = arrays
    n = np.arange(x.shape[0])[:, None, None]
    gt = g.transpose(0, 2, 3, 1).astype(np.float64)  # (N, OH, OW, C)
    dx = np.zeros(x.shape)
    dgrid = np.zeros(grid.shape)
    for iy, ix, wgt, dwx, dwy in _taps(x.shape, grid, mode, padding_mode, align_corners):
        cy, cx, valid = _gather_index(x.shape, iy, ix)
        wv = np.where(valid, wgt, 0.0)[..., None]
        # dx[n, :, cy, cx] += w * g, accumulated over repeated pixels
        nn = np.broadcast_to(n, cy.shape)
        contrib = (wv * gt).reshape(-1, x.shape[1])
        np.add.at(dx.transpose(0, 2, 3, 1), (nn.ravel(), cy.ravel(), cx.ravel()), contrib)
        vals = x[n, :, cy, cx]
        dot = np.sum(vals * gt, axis=-1) * valid
        dgrid[..., 0] += dot * dwx
        dgrid[..., 1] += dot * dwy
    return [dx.astype(x.dtype), dgrid.astype(grid.dtype)]


# Second derivatives of sampling are not provided: differentiating this op raises.
register(OpDef("grid_sample_grad", _gsg_infer, _gsg_compute, None, n_outputs=2))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",
                align_corners=False):
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, OH, OW, 2) locations ``(x, y)`` in
    [-1, 1] (torch ``grid_sample``; ONNX ``GridSample`` with ``linear``/``nearest``).

    Parameters
    ----------
    input : Var
    grid : Var
        Same float dtype as ``input``.
    mode : {"bilinear", "nearest"}
    padding_mode : {"zeros", "border", "reflection"}
    align_corners : bool

    Returns
    -------
    Var
        ``(N, C, OH, OW)``.
    """
    x, nhwc = nc.as_nchw(to_var(input))
    y = apply("grid_sample", [x, to_var(grid)], mode=str(mode),
              padding_mode=str(padding_mode), align_corners=bool(align_corners))[0]
    return nc.restore(y, nhwc)
