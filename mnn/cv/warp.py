"""Warps and coordinate maps: warpAffine, warpPerspective, remap, convertMaps, and the
transform helpers (getAffineTransform, getPerspectiveTransform, getRotationMatrix2D,
invertAffineTransform, getRectSubPix).

As in OpenCV 5, nearest, bilinear and bicubic sampling use exact (floating-point) source
positions; Lanczos and fixed-point maps quantise positions to 1/32 pixel and use
OpenCV's weight tables (15-bit integers for uint8). uint8 results match cv2 to within
one level.
"""
import functools

import numpy as np

from . import _resize_tables as rt
from . import constants as C
from ._image import as_array, as_hwc, as_image, scalar4, size_pair, threads, wrap
from .._cython import image_warp as _k

__all__ = ["warpAffine", "warpPerspective", "remap", "convertMaps", "getAffineTransform",
           "getPerspectiveTransform", "getRotationMatrix2D", "invertAffineTransform",
           "getRectSubPix"]

_BORDERS = (C.BORDER_CONSTANT, C.BORDER_REPLICATE, C.BORDER_REFLECT, C.BORDER_WRAP,
            C.BORDER_REFLECT_101, C.BORDER_TRANSPARENT)
_WARP_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)
_TAB = 32          # INTER_TAB_SIZE: positions are kept in 1/32 pixel
_REMAP_SCALE = 1 << 15
_EMPTY_I = np.zeros(1, dtype=np.intc)
_EMPTY_D = np.zeros(9, dtype=np.float64)
_EMPTY_MAP = np.zeros((1, 1), dtype=np.intc)
_EMPTY_FMAP = np.zeros((1, 1), dtype=np.float32)
_KSIZE = {C.INTER_NEAREST: 1, C.INTER_LINEAR: 2, C.INTER_CUBIC: 4, C.INTER_LANCZOS4: 8}


def _kernel_1d(interpolation, frac):
    f = np.array([frac], dtype=np.float32)
    if interpolation == C.INTER_LINEAR:
        return np.array([1.0 - frac, frac], dtype=np.float32)
    if interpolation == C.INTER_CUBIC:
        return rt._cubic_weights(f)[0]
    return rt._lanczos4_weights(f)[0]


@functools.lru_cache(maxsize=8)
def _weight_tables(interpolation):
    """(ksize, int table, float table): K*K weights for each of 32x32 fraction pairs."""
    one_d = [_kernel_1d(interpolation, i / _TAB) for i in range(_TAB)]
    k = len(one_d[0])
    ftab = np.empty((_TAB, _TAB, k, k), dtype=np.float32)
    itab = np.empty((_TAB, _TAB, k, k), dtype=np.intc)
    half = k // 2
    for fy in range(_TAB):
        for fx in range(_TAB):
            w = np.outer(one_d[fy], one_d[fx]).astype(np.float32)
            iw = np.rint(w * _REMAP_SCALE).astype(np.intc)
            diff = int(iw.sum()) - _REMAP_SCALE
            if diff:
                # Put the rounding error on the largest (or smallest) central weight, as
                # OpenCV does, so the integer weights sum to exactly 2^15.
                centre = iw[half:half + 2, half:half + 2]
                pos = np.unravel_index(centre.argmax() if diff < 0 else centre.argmin(),
                                       centre.shape)
                iw[half + pos[0], half + pos[1]] -= diff
            ftab[fy, fx] = w
            itab[fy, fx] = iw
    ftab.setflags(write=False)
    itab.setflags(write=False)
    return k, itab.reshape(-1), ftab.reshape(-1)


def _interp_mode(flags, func):
    interp = int(flags) & C.INTER_MAX
    if interp in (C.INTER_AREA, C.INTER_LINEAR_EXACT):
        interp = C.INTER_LINEAR  # OpenCV warps treat these as bilinear
    if interp not in (C.INTER_NEAREST, C.INTER_LINEAR, C.INTER_CUBIC, C.INTER_LANCZOS4):
        raise ValueError(f"mnn.cv.{func}: interpolation {interp} is not supported "
                         f"(use INTER_NEAREST, INTER_LINEAR, INTER_CUBIC or INTER_LANCZOS4)")
    return interp


def _border_args(border_mode, border_value, dtype, func):
    border_mode = int(border_mode)
    if border_mode not in _BORDERS:
        raise ValueError(f"mnn.cv.{func}: borderMode {border_mode} is not supported")
    vals = np.array(scalar4(border_value, func), dtype=np.float64)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        vals = np.clip(np.rint(vals), info.min, info.max)
    return border_mode, vals


def _run(hwc, dsize, mode, interp, border_mode, bval, dst_init, fixed, **coords):
    dw, dh = dsize
    if dst_init is not None:
        dst = dst_init
    else:
        dst = np.zeros((dh, dw, hwc.shape[2]), dtype=hwc.dtype)
    ksize = _KSIZE[interp]
    if fixed:
        ksize, itab, ftab = _weight_tables(interp)
    else:
        itab, ftab = _EMPTY_I, np.zeros(1, dtype=np.float32)
    if not fixed and ksize == 2 and dst.dtype == np.uint8 and mode == 0:
        # The commonest case (bilinear affine on uint8) has its own fast kernel.
        _k.warp_affine_linear_u8(hwc, dst, coords["matrix"], border_mode, bval,
                                 threads(dst.size * 4))
        return dst
    if not fixed and ksize == 2 and dst.dtype == np.uint8:
        # Other bilinear uint8 warps have their own small kernel.
        _k.warp_linear_u8(hwc, dst, mode, coords.get("matrix", _EMPTY_D),
                          coords.get("fmapx", _EMPTY_FMAP), coords.get("fmapy", _EMPTY_FMAP),
                          border_mode, bval, threads(dst.size * 4))
        return dst
    if dst.dtype.kind in "iu":
        info = np.iinfo(dst.dtype)
        lo, hi = float(info.min), float(info.max)
    else:
        lo = hi = 0.0
    _k.warp(hwc, dst, mode, int(fixed),
            coords.get("adelta", _EMPTY_I), coords.get("bdelta", _EMPTY_I),
            coords.get("x0", _EMPTY_I), coords.get("y0", _EMPTY_I),
            coords.get("matrix", _EMPTY_D), coords.get("fmapx", _EMPTY_FMAP),
            coords.get("fmapy", _EMPTY_FMAP), coords.get("mapx", _EMPTY_MAP),
            coords.get("mapy", _EMPTY_MAP), ksize, border_mode, bval,
            itab, ftab, lo, hi, threads(dst.size * ksize * ksize))
    return dst


def _saturate_int(values):
    return np.clip(np.rint(values), -2 ** 31, 2 ** 31 - 1).astype(np.int64)


def _matrix(M, shape, func):
    arr = np.asarray(as_array(M, func, "M"), dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"mnn.cv.{func}: M must be {shape[0]}x{shape[1]}, got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"mnn.cv.{func}: M has non-finite values")
    return arr


def _dst_for_transparent(dst, dsize, like, func):
    if dst is None:
        return None
    out = as_hwc(np.array(as_array(dst, func, "dst"), copy=True))
    if out.shape[:2] != (dsize[1], dsize[0]) or out.dtype != like.dtype \
            or out.shape[2] != like.shape[2]:
        raise ValueError(f"mnn.cv.{func}: dst must be {dsize[1]}x{dsize[0]}x{like.shape[2]} "
                         f"{like.dtype}, got {out.shape} {out.dtype}")
    return out


def warpAffine(src, M, dsize, dst=None, flags=C.INTER_LINEAR, borderMode=C.BORDER_CONSTANT,
               borderValue=0):
    """Apply an affine transform (``cv2.warpAffine``).

    Parameters
    ----------
    src : ndarray or Var
        HW, HWC or 1HWC image.
    M : array_like
        2x3 matrix mapping source to destination (destination to source with
        ``WARP_INVERSE_MAP`` in ``flags``).
    dsize : (int, int)
        Output (width, height).
    dst : ndarray, optional
        Only read with ``BORDER_TRANSPARENT``: pixels mapped from outside keep its values.
    flags : int
        Interpolation (``INTER_*``) optionally or-ed with ``WARP_INVERSE_MAP``.
    borderMode : int
        ``BORDER_CONSTANT`` (default), ``REPLICATE``, ``REFLECT``, ``WRAP``,
        ``REFLECT_101`` or ``TRANSPARENT``.
    borderValue : scalar or sequence
        Fill value for ``BORDER_CONSTANT``.

    Returns
    -------
    ndarray or Var
    """
    arr, batch = as_image(src, "warpAffine", dtypes=_WARP_DTYPES)
    m = _matrix(M, (2, 3), "warpAffine")
    dsize = size_pair(dsize, "warpAffine")
    interp = _interp_mode(flags, "warpAffine")
    border_mode, bval = _border_args(borderMode, borderValue, arr.dtype, "warpAffine")
    if not int(flags) & C.WARP_INVERSE_MAP:
        m = _invert_affine(m)
    hwc = as_hwc(arr)
    if dsize[0] == 0 or dsize[1] == 0:
        raise ValueError(f"mnn.cv.warpAffine: dsize must be positive, got {dsize}")
    init = _dst_for_transparent(dst, dsize, hwc, "warpAffine") \
        if border_mode == C.BORDER_TRANSPARENT else None
    if interp != C.INTER_LANCZOS4:
        out = _run(hwc, dsize, 0, interp, border_mode, bval, init, False,
                   matrix=np.ascontiguousarray(np.append(m.reshape(-1), [0.0, 0.0, 1.0])))
    else:
        # OpenCV's fixed point: positions in 1/1024 pixel, per column and per row, rounded
        # to the nearest 1/32 pixel.
        ab_scale = 1 << 10
        round_delta = ab_scale // _TAB // 2
        xs = np.arange(dsize[0], dtype=np.float64)
        ys = np.arange(dsize[1], dtype=np.float64)
        lim = 2 ** 29  # far outside every image, and far from int32 overflow
        adelta = np.clip(_saturate_int(m[0, 0] * xs * ab_scale), -lim, lim).astype(np.intc)
        bdelta = np.clip(_saturate_int(m[1, 0] * xs * ab_scale), -lim, lim).astype(np.intc)
        x0 = np.clip(_saturate_int((m[0, 1] * ys + m[0, 2]) * ab_scale) + round_delta,
                     -lim, lim).astype(np.intc)
        y0 = np.clip(_saturate_int((m[1, 1] * ys + m[1, 2]) * ab_scale) + round_delta,
                     -lim, lim).astype(np.intc)
        out = _run(hwc, dsize, 0, interp, border_mode, bval, init, True,
                   adelta=adelta, bdelta=bdelta, x0=x0, y0=y0)
    if arr.ndim == 2:
        out = out[:, :, 0]
    return wrap(out, src, batch)


def warpPerspective(src, M, dsize, dst=None, flags=C.INTER_LINEAR,
                    borderMode=C.BORDER_CONSTANT, borderValue=0):
    """Apply a perspective transform with a 3x3 matrix (``cv2.warpPerspective``).

    Arguments as :func:`warpAffine`; ``M`` maps source to destination unless
    ``WARP_INVERSE_MAP`` is set.
    """
    arr, batch = as_image(src, "warpPerspective", dtypes=_WARP_DTYPES)
    m = _matrix(M, (3, 3), "warpPerspective")
    dsize = size_pair(dsize, "warpPerspective")
    if dsize[0] == 0 or dsize[1] == 0:
        raise ValueError(f"mnn.cv.warpPerspective: dsize must be positive, got {dsize}")
    interp = _interp_mode(flags, "warpPerspective")
    border_mode, bval = _border_args(borderMode, borderValue, arr.dtype, "warpPerspective")
    if not int(flags) & C.WARP_INVERSE_MAP:
        try:
            m = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            m = np.zeros((3, 3))  # OpenCV maps everything to the origin for a singular M
    hwc = as_hwc(arr)
    init = _dst_for_transparent(dst, dsize, hwc, "warpPerspective") \
        if border_mode == C.BORDER_TRANSPARENT else None
    out = _run(hwc, dsize, 1, interp, border_mode, bval, init,
               interp == C.INTER_LANCZOS4, matrix=np.ascontiguousarray(m.reshape(-1)))
    if arr.ndim == 2:
        out = out[:, :, 0]
    return wrap(out, src, batch)


def _fixed_from_float(v):
    # Positions far outside the image are clamped: they sample the border all the same.
    v = np.nan_to_num(np.asarray(v, dtype=np.float64), nan=-1e6)
    v = np.clip(v, -(2.0 ** 20), 2.0 ** 20)
    return np.rint(v * _TAB).astype(np.intc)


def _read_maps(map1, map2, func):
    """("float", x, y) in pixels or ("fixed", x, y) in 1/32 pixel, validated."""
    m1 = np.asarray(as_array(map1, func, "map1"))
    m2 = None if map2 is None else np.asarray(as_array(map2, func, "map2"))
    if m2 is not None and m2.size == 0:
        m2 = None
    if m1.ndim == 3 and m1.shape[2] == 2 and m1.dtype == np.int16:
        ix = m1[..., 0].astype(np.int64) << 5
        iy = m1[..., 1].astype(np.int64) << 5
        if m2 is not None:
            if m2.shape != m1.shape[:2]:
                raise ValueError(f"mnn.cv.{func}: map2 must have shape {m1.shape[:2]}, "
                                 f"got {m2.shape}")
            frac = m2.astype(np.int64) & (_TAB * _TAB - 1)
            ix = ix + (frac & (_TAB - 1))
            iy = iy + (frac >> 5)
        return "fixed", ix.astype(np.intc), iy.astype(np.intc)
    if m1.ndim == 3 and m1.shape[2] == 2 and m1.dtype in (np.float32, np.float64):
        return "float", m1[..., 0], m1[..., 1]
    if m1.ndim == 2 and m1.dtype in (np.float32, np.float64):
        if m2 is None or m2.shape != m1.shape or m2.dtype.kind != "f":
            raise ValueError(f"mnn.cv.{func}: a single-channel float map1 needs a float map2 "
                             f"of the same shape {m1.shape}")
        return "float", m1, m2
    raise TypeError(f"mnn.cv.{func}: map1 must be float32 (H,W,2), float32 (H,W) with map2, "
                    f"or int16 (H,W,2) from convertMaps; got {m1.dtype} {m1.shape}")


def remap(src, map1, map2, interpolation, dst=None, borderMode=C.BORDER_CONSTANT,
          borderValue=0):
    """Sample ``src`` at per-pixel positions (``cv2.remap``): dst(x, y) = src(map(x, y)).

    ``map1``/``map2`` are float x and y maps, one float (H, W, 2) map, or the fixed-point
    pair from :func:`convertMaps`.
    """
    arr, batch = as_image(src, "remap", dtypes=_WARP_DTYPES)
    interp = _interp_mode(interpolation, "remap")
    border_mode, bval = _border_args(borderMode, borderValue, arr.dtype, "remap")
    kind, mx, my = _read_maps(map1, map2, "remap")
    dsize = (mx.shape[1], mx.shape[0])
    hwc = as_hwc(arr)
    init = _dst_for_transparent(dst, dsize, hwc, "remap") \
        if border_mode == C.BORDER_TRANSPARENT else None
    if kind == "fixed" and interp == C.INTER_NEAREST:
        # Nearest rounds the 1/32-pixel position. (OpenCV 5.0 swaps the x and y fraction
        # bits on this path; we keep the position the maps describe.)
        kind, mx, my = "float", mx / np.float32(_TAB), my / np.float32(_TAB)
    if kind == "float" and interp == C.INTER_LANCZOS4:
        kind, mx, my = "fixed", _fixed_from_float(mx), _fixed_from_float(my)
    if kind == "fixed":
        out = _run(hwc, dsize, 2, interp, border_mode, bval, init, True,
                   mapx=np.ascontiguousarray(mx), mapy=np.ascontiguousarray(my))
    else:
        out = _run(hwc, dsize, 2, interp, border_mode, bval, init, False,
                   fmapx=np.ascontiguousarray(mx, dtype=np.float32),
                   fmapy=np.ascontiguousarray(my, dtype=np.float32))
    if arr.ndim == 2:
        out = out[:, :, 0]
    return wrap(out, src, batch)


def _maps_to_fixed(map1, map2, func):
    kind, mx, my = _read_maps(map1, map2, func)
    if kind == "float":
        return _fixed_from_float(mx), _fixed_from_float(my)
    return mx, my


def convertMaps(map1, map2, dstmap1type, nninterpolation=False):
    """Convert remap maps between float and fixed-point forms (``cv2.convertMaps``).

    Parameters
    ----------
    map1, map2 : ndarray
        Float x/y maps (or one float (H, W, 2) map and None), or an int16 (H, W, 2) map
        with its uint16 fraction map.
    dstmap1type : int
        ``CV_16SC2`` (fixed point), ``CV_32FC1`` (two float maps) or ``CV_32FC2``.
    nninterpolation : bool
        For ``CV_16SC2``: round to whole pixels and return no fraction map.

    Returns
    -------
    (ndarray, ndarray or None)
    """
    kind = int(dstmap1type)
    if kind == C.CV_16SC2:
        if nninterpolation:
            kind_in, mx, my = _read_maps(map1, map2, "convertMaps")
            if kind_in == "fixed":
                mx, my = mx / _TAB, my / _TAB
            xy = np.stack([np.rint(np.nan_to_num(mx)), np.rint(np.nan_to_num(my))], axis=2)
            return np.clip(xy, -32768, 32767).astype(np.int16), None
        ix, iy = _maps_to_fixed(map1, map2, "convertMaps")
        xy = np.stack([ix.astype(np.int64) >> 5, iy.astype(np.int64) >> 5], axis=2)
        frac = ((iy.astype(np.int64) & 31) * _TAB + (ix.astype(np.int64) & 31))
        return np.clip(xy, -32768, 32767).astype(np.int16), frac.astype(np.uint16)
    if kind in (C.CV_32FC1, C.CV_32FC2):
        ix, iy = _maps_to_fixed(map1, map2, "convertMaps")
        fx = (ix.astype(np.float64) / _TAB).astype(np.float32)
        fy = (iy.astype(np.float64) / _TAB).astype(np.float32)
        if kind == C.CV_32FC2:
            return np.stack([fx, fy], axis=2), None
        return fx, fy
    raise ValueError(f"mnn.cv.convertMaps: dstmap1type must be CV_16SC2, CV_32FC1 or "
                     f"CV_32FC2, got {kind}")


def _invert_affine(m):
    det = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
    inv_det = 1.0 / det if det != 0 else 0.0
    a11, a22 = m[1, 1] * inv_det, m[0, 0] * inv_det
    a12, a21 = -m[0, 1] * inv_det, -m[1, 0] * inv_det
    b1 = -a11 * m[0, 2] - a12 * m[1, 2]
    b2 = -a21 * m[0, 2] - a22 * m[1, 2]
    return np.array([[a11, a12, b1], [a21, a22, b2]])


def invertAffineTransform(M):
    """Inverse of a 2x3 affine matrix (all zeros if it is singular, as OpenCV)."""
    return _invert_affine(_matrix(M, (2, 3), "invertAffineTransform"))


def getRotationMatrix2D(center, angle, scale):
    """2x3 matrix rotating by ``angle`` degrees (counter-clockwise) about ``center``."""
    cx, cy = (float(v) for v in center)
    a = np.deg2rad(float(angle))
    alpha, beta = np.cos(a) * float(scale), np.sin(a) * float(scale)
    return np.array([[alpha, beta, (1 - alpha) * cx - beta * cy],
                     [-beta, alpha, beta * cx + (1 - alpha) * cy]])


def _points(pts, n, func, name):
    arr = np.asarray(as_array(pts, func, name), dtype=np.float64).reshape(-1, 2) \
        if np.asarray(pts).size == 2 * n else None
    if arr is None:
        raise ValueError(f"mnn.cv.{func}: {name} must hold {n} (x, y) points, got shape "
                         f"{np.asarray(pts).shape}")
    return arr


def getAffineTransform(src, dst):
    """The 2x3 affine matrix mapping three ``src`` points onto three ``dst`` points."""
    s = _points(src, 3, "getAffineTransform", "src")
    d = _points(dst, 3, "getAffineTransform", "dst")
    a = np.hstack([s, np.ones((3, 1))])
    try:
        sol = np.linalg.solve(a, d)
    except np.linalg.LinAlgError as exc:
        raise ValueError("mnn.cv.getAffineTransform: the src points are collinear") from exc
    return sol.T


def getPerspectiveTransform(src, dst, solveMethod=C.DECOMP_LU):
    """The 3x3 homography mapping four ``src`` points onto four ``dst`` points."""
    s = _points(src, 4, "getPerspectiveTransform", "src")
    d = _points(dst, 4, "getPerspectiveTransform", "dst")
    a = np.zeros((8, 8))
    b = np.zeros(8)
    for i in range(4):
        x, y = s[i]
        u, v = d[i]
        a[i] = [x, y, 1, 0, 0, 0, -x * u, -y * u]
        a[i + 4] = [0, 0, 0, x, y, 1, -x * v, -y * v]
        b[i], b[i + 4] = u, v
    try:
        h = np.linalg.solve(a, b)
    except np.linalg.LinAlgError as exc:
        raise ValueError("mnn.cv.getPerspectiveTransform: the points are degenerate "
                         "(three of them collinear)") from exc
    return np.append(h, 1.0).reshape(3, 3)


def getRectSubPix(image, patchSize, center, patch=None, patchType=-1):
    """Extract a patch centred on a sub-pixel position, replicating the border.

    Returns the patch in ``image``'s dtype (or float32 with ``patchType=CV_32F``).
    """
    arr, batch = as_image(image, "getRectSubPix", dtypes=(np.uint8, np.float32))
    pw, ph = size_pair(patchSize, "getRectSubPix", "patchSize")
    if pw == 0 or ph == 0:
        raise ValueError(f"mnn.cv.getRectSubPix: patchSize must be positive, got {patchSize}")
    cx, cy = (float(v) for v in center)
    hwc = as_hwc(arr).astype(np.float32)
    h, w = hwc.shape[:2]
    ox = np.float32(cx - (pw - 1) * 0.5)
    oy = np.float32(cy - (ph - 1) * 0.5)
    ix, iy = int(np.floor(ox)), int(np.floor(oy))
    a, b = np.float32(ox - ix), np.float32(oy - iy)
    xs = np.clip(np.arange(ix, ix + pw + 1), 0, w - 1)
    ys = np.clip(np.arange(iy, iy + ph + 1), 0, h - 1)
    block = hwc[ys][:, xs]
    out = ((1 - a) * (1 - b) * block[:-1, :-1] + a * (1 - b) * block[:-1, 1:]
           + (1 - a) * b * block[1:, :-1] + a * b * block[1:, 1:])
    want = np.float32 if int(patchType) == C.CV_32F else arr.dtype
    if np.dtype(want) == np.uint8:
        out = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    else:
        out = out.astype(np.float32)
    if arr.ndim == 2:
        out = out[:, :, 0]
    return wrap(out, image, batch)
