"""``onnx_grid_sample``: ONNX GridSample for any number of spatial dims and the cubic mode.

(The 4-d linear/nearest form is ``grid_sample`` in nn_sample.py; this op covers what it
does not: volumetric and higher inputs and bicubic interpolation.)

``x`` is ``[N, C, D_1 … D_k]``, ``grid`` ``[N, O_1 … O_m, k]`` with normalized
coordinates in [-1, 1], the *last* spatial axis first (x, y, z …). Output
``[N, C, O_1 … O_m]``. Per output point and axis:

1. unnormalize: ``(g + 1) / 2 * (D - 1)`` with ``align_corners``, else
   ``((g + 1) * D - 1) / 2``; ``nearest`` then rounds half to even;
2. a coordinate outside the borders (``[0, D - 1]`` with ``align_corners``, else
   ``[-0.5, D - 0.5]``) is clamped to ``[0, D - 1]`` (``border``) or reflected back
   between the borders (``reflection``); ``zeros`` leaves it;
3. interpolate from the neighbouring samples — 1 (nearest, truncated index), 2 per axis
   (linear) or 4 per axis (cubic, Keys' kernel with a = -0.75) — where a neighbour
   outside the image reads 0 (``zeros``), the clamped index (``border``) or the reflected
   index (``reflection``).
"""
import itertools

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_grid_sample"]

_MODES = ("nearest", "linear", "cubic")
_PADDINGS = ("zeros", "border", "reflection")


def _reflect(x, lo, hi):
    """Reflect ``x`` at the borders ``lo``/``hi`` until it lies between them."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    below = lo - x
    n = np.floor(below / span)
    r = below - n * span
    low_side = np.where(n % 2 == 0, lo + r, hi - r)
    above = x - hi
    n = np.floor(above / span)
    r = above - n * span
    high_side = np.where(n % 2 == 0, hi - r, lo + r)
    return np.where(x < lo, low_side, np.where(x > hi, high_side, x))


def _cubic_weights(t):
    """Keys' cubic convolution weights (a = -0.75) of the 4 taps around fraction ``t``."""
    a = -0.75

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _infer(metas, mode, padding_mode, align_corners):
    x, grid = metas
    if mode not in _MODES:
        raise OpError(f"onnx_grid_sample: mode must be one of {_MODES}, got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise OpError(f"onnx_grid_sample: padding_mode must be one of {_PADDINGS}, got "
                      f"{padding_mode!r}")
    for m, what in ((x, "input"), (grid, "grid")):
        if m.dtype is not None and m.dtype.kind != "f":
            raise OpError(f"onnx_grid_sample: {what} must be float, got {m.dtype}")
    if x.shape is None or grid.shape is None:
        return [(None, x.dtype)]
    _check(x.shape, grid.shape)
    return [((x.shape[0], x.shape[1]) + tuple(grid.shape[1:-1]), x.dtype)]


def _check(xs, gs):
    k = len(xs) - 2
    if k < 1 or len(gs) != k + 2 or gs[-1] != k or gs[0] != xs[0]:
        raise OpError(f"onnx_grid_sample: grid {list(gs)} does not fit input {list(xs)} "
                      f"(expected [N, ...{k} output dims..., {k}])")


def _compute(arrays, mode, padding_mode, align_corners):
    x, grid = arrays
    _check(x.shape, grid.shape)
    k = x.ndim - 2
    dims = x.shape[2:]
    n_batch, channels = x.shape[:2]
    out_shape = grid.shape[1:-1]
    g = grid.reshape(n_batch, -1, k).astype(np.float64)[..., ::-1]  # axis order D_1 … D_k
    coords = []
    for i, d in enumerate(dims):
        gi = g[..., i]
        c = (gi + 1) / 2 * (d - 1) if align_corners else ((gi + 1) * d - 1) / 2
        if mode == "nearest":
            c = np.rint(c)
        lo, hi = (0.0, d - 1.0) if align_corners else (-0.5, d - 0.5)
        if padding_mode == "border":
            c = np.where((c < lo) | (c > hi), np.clip(c, 0, d - 1), c)
        elif padding_mode == "reflection":
            c = _reflect(c, lo, hi)
        coords.append((c, lo, hi))

    def tap(i, index):
        """(clamped index, validity) of integer positions ``index`` along axis ``i``."""
        d = dims[i]
        if padding_mode == "zeros":
            return np.clip(index, 0, d - 1), (index >= 0) & (index < d)
        if padding_mode == "reflection":
            _, lo, hi = coords[i]
            index = np.trunc(_reflect(index.astype(np.float64), lo, hi)).astype(np.int64)
        return np.clip(index, 0, d - 1), np.ones(index.shape, bool)

    per_axis = []  # per axis: list of (index, weight) taps
    for i, (c, _, _) in enumerate(coords):
        if mode == "nearest":
            per_axis.append([(np.trunc(c).astype(np.int64), np.ones_like(c))])
            continue
        base = np.floor(c)
        t = c - base
        base = base.astype(np.int64)
        if mode == "linear":
            per_axis.append([(base, 1 - t), (base + 1, t)])
        else:
            per_axis.append(list(zip((base - 1, base, base + 1, base + 2),
                                     _cubic_weights(t))))
    batch = np.arange(n_batch)[:, None]
    out = np.zeros((n_batch, channels, g.shape[1]), np.float64)
    xd = x.astype(np.float64)
    for combo in itertools.product(*per_axis):
        weight = np.ones(g.shape[:2])
        index = []
        for i, (idx, w) in enumerate(combo):
            idx, valid = tap(i, idx)
            weight = weight * w * valid
            index.append(idx)
        # values: [N, P, C] -> [N, C, P]
        vals = np.moveaxis(xd, 1, -1)[(batch,) + tuple(index)]
        out += np.moveaxis(vals, -1, 1) * weight[:, None, :]
    return out.reshape((n_batch, channels) + tuple(out_shape)).astype(x.dtype)


register(OpDef("onnx_grid_sample", _infer, _compute))


def onnx_grid_sample(x, grid, mode="linear", padding_mode="zeros", align_corners=False):
    """ONNX GridSample (see the module docstring)."""
    return apply("onnx_grid_sample", [to_var(x), to_var(grid)], mode=str(mode),
                 padding_mode=str(padding_mode), align_corners=bool(align_corners))[0]
