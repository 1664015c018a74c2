"""Resizing, flipping and rotating by multiples of 90 degrees (cv2's names and rules)."""
import functools

import numpy as np

from . import _resize_tables as tables
from . import constants as C
from ._image import as_hwc, as_image, size_pair, threads, wrap
from .._cython import image_resize as _k

__all__ = ["resize", "flip", "rotate"]

_RESIZE_MODES = (C.INTER_NEAREST, C.INTER_LINEAR, C.INTER_CUBIC, C.INTER_AREA,
                 C.INTER_LANCZOS4, C.INTER_LINEAR_EXACT, C.INTER_NEAREST_EXACT)
_RESIZE_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def _axis_scales(ssize, dsize, factor):
    # OpenCV: inv_scale = dsize / ssize unless the factor was given explicitly.
    inv_scale = factor if factor > 0 else dsize / ssize
    return 1.0 / inv_scale, inv_scale


@functools.lru_cache(maxsize=64)
def _axis_taps(ssize, dsize, factor, interpolation, use_area, fixed):
    # Tables depend only on sizes and mode; repeated preprocessing reuses them.
    scale, inv_scale = _axis_scales(ssize, dsize, factor)
    if use_area:
        offs, weights = tables.area(ssize, dsize, scale)
    else:
        offs, weights = tables.linear_like(ssize, dsize, scale, inv_scale, interpolation)
    weights = tables.fixed_point(weights) if fixed else weights.astype(np.float32)
    offs.setflags(write=False)
    weights.setflags(write=False)
    return offs, weights


@functools.lru_cache(maxsize=64)
def _row_tables(ssize, dsize, factor, interpolation, use_area, fixed):
    # The source rows the vertical pass reads, and the taps renumbered into that list.
    yofs, yw = _axis_taps(ssize, dsize, factor, interpolation, use_area, fixed)
    rows = np.unique(yofs).astype(np.intc)
    remapped = np.ascontiguousarray(np.searchsorted(rows, yofs).astype(np.intc))
    rows.setflags(write=False)
    remapped.setflags(write=False)
    return rows, remapped, yw


@functools.lru_cache(maxsize=64)
def _value_taps(ssize, dsize, factor, cn):
    # Per output value j = x * cn + c of a bilinear uint8 resize: the two row offsets
    # it reads and their weights.
    xofs, xw = _axis_taps(ssize, dsize, factor, C.INTER_LINEAR, False, True)
    chan = np.arange(cn, dtype=np.intc)
    tabs = [(xofs[:, k:k + 1] * cn + chan).reshape(-1) for k in (0, 1)]
    tabs += [np.repeat(xw[:, k], cn) for k in (0, 1)]
    tabs = tuple(np.ascontiguousarray(t, dtype=np.intc) for t in tabs)
    for t in tabs:
        t.setflags(write=False)
    return tabs


@functools.lru_cache(maxsize=64)
def _pixel_taps(ssize, dsize, factor, fixed, cn):
    # Per output pixel of a bilinear resize: the offset of its left source pixel in a row
    # of cn-channel pixels and the two weights, with the right neighbour always the next
    # pixel. Edge taps that read one pixel twice (x clamped to the last column) become
    # the pair (last - 1, last) with all the weight on the last, so every read stays in
    # the row. Needs ssize >= 2.
    xofs, xw = _axis_taps(ssize, dsize, factor, C.INTER_LINEAR, False, fixed)
    left = xofs[:, 0].astype(np.intc)
    w0 = xw[:, 0].copy()
    w1 = xw[:, 1].copy()
    edge = left >= ssize - 1
    left[edge] = ssize - 2
    w1[edge] = w0[edge] + w1[edge]
    w0[edge] = 0
    ofs = np.ascontiguousarray(left * cn, dtype=np.intc)
    if ofs.min() < 0 or ofs.max() > cn * (ssize - 2):
        raise AssertionError("mnn.cv.resize: pixel taps outside the source row")
    tabs = (ofs, np.ascontiguousarray(w0), np.ascontiguousarray(w1))
    for t in tabs:
        t.setflags(write=False)
    return tabs


def _vertical_first(sw, dw, rows, dh):
    # A strong bilinear downscale reads about two source rows per output row: blending
    # those two whole rows first (contiguous, vectorised) and then sampling one row is
    # cheaper than filtering both rows horizontally, as long as the source row is not
    # much wider than the output row.
    return len(rows) > 1.5 * dh and sw <= 16 * dw


def _exact_half(interpolation, dtype, sw, sh, dw, dh, fx, fy):
    # A downscale to exactly half in both directions (by size or by factors of 0.5).
    return (interpolation in (C.INTER_LINEAR, C.INTER_LINEAR_EXACT, C.INTER_AREA)
            and dtype in (np.uint8, np.float32) and sw == 2 * dw and sh == 2 * dh
            and _axis_scales(sw, dw, fx)[0] == 2.0 and _axis_scales(sh, dh, fy)[0] == 2.0)


def _separable(src, dh, dw, xtab, ytab, fixed, vfirst=None, pixel_taps=None,
               vfirst_rows=None):
    # pixel_taps: _pixel_taps tables when the resize is bilinear on 3 or 4 channels
    # (uint8 or float32), for the one-pixel-per-vector kernels; vfirst_rows: the source
    # rows of each output row for a strong float32 downscale (see _vertical_first).
    xofs, xw = xtab
    rows, yofs, yw = ytab
    cn = src.shape[2]
    n = threads(dh * dw * cn)
    dst = np.empty((dh, dw, cn), dtype=src.dtype)
    if vfirst is not None:
        yabs, sx_factor = vfirst
        if pixel_taps is not None:
            _k.resize_linear_px_u8_vfirst(src, yabs, yw, *pixel_taps, dst, n)
        else:
            # Offsets come from tables clamped into the image, so every index is in the row.
            i0, i1, w0, w1 = _value_taps(src.shape[1], dw, sx_factor, cn)
            _k.resize_linear_u8_vfirst(src, yabs, yw, i0, i1, w0, w1, dst, n)
        return dst
    if fixed:
        tmp = np.empty((len(rows), dw, cn), dtype=np.intc)
        if pixel_taps is not None:
            _k.hpass_linear_px_u8(src, rows, *pixel_taps, tmp, n)
        else:
            _k.hpass_u8_fixed(src, rows, xofs, xw, tmp, n)
        _k.vpass_u8_fixed(tmp, yofs, yw, dst, n)
        return dst
    if pixel_taps is not None and vfirst_rows is not None:
        # A strong float32 downscale: both passes per output row, no intermediate image.
        _k.resize_linear_px_f32_down(src, vfirst_rows, yw, *pixel_taps, dst, n)
        return dst
    tmp = np.empty((len(rows), dw, cn), dtype=np.float32)
    if pixel_taps is not None:
        _k.hpass_linear_px_f32(src, rows, *pixel_taps, tmp, n)
    else:
        _k.hpass_float(src, rows, xofs, xw, tmp, n)
    if dst.dtype.kind == "f":
        lo, hi = 0.0, 0.0
    else:
        info = np.iinfo(dst.dtype)
        lo, hi = float(info.min), float(info.max)
    _k.vpass_float(tmp, yofs, yw, dst, lo, hi, n)
    return dst


def resize(src, dsize, dst=None, fx=0, fy=0, interpolation=C.INTER_LINEAR):
    """Resize an image (``cv2.resize``).

    Parameters
    ----------
    src : ndarray or Var
        HW, HWC or 1HWC image (uint8, uint16, int16, float32 or float64).
    dsize : (int, int) or None
        Output (width, height); ``(0, 0)`` or None to use ``fx`` and ``fy``.
    dst : None
        Accepted for cv2's positional order; must be None.
    fx, fy : float
        Scale factors along x and y, used when ``dsize`` is empty.
    interpolation : int
        ``INTER_NEAREST``, ``INTER_LINEAR`` (default), ``INTER_CUBIC``, ``INTER_AREA``,
        ``INTER_LANCZOS4``, ``INTER_LINEAR_EXACT`` or ``INTER_NEAREST_EXACT``.

    Returns
    -------
    ndarray or Var
        The resized image, same dtype and channel count.

    Notes
    -----
    Coordinates follow OpenCV (pixel centres aligned, ``x_src = (x + 0.5) / f - 0.5``);
    uint8 images use OpenCV's 11-bit fixed-point weights, so results match cv2 to within
    one level.
    """
    if dst is not None:
        raise TypeError("mnn.cv.resize: dst must be None (the result is returned)")
    arr, batch = as_image(src, "resize", dtypes=_RESIZE_DTYPES)
    interpolation = int(interpolation)
    if interpolation not in _RESIZE_MODES:
        raise ValueError(f"mnn.cv.resize: unknown interpolation {interpolation}")
    sh, sw = arr.shape[:2]
    fx, fy = float(fx), float(fy)
    dw, dh = (0, 0) if dsize is None else size_pair(dsize, "resize")
    if dw == 0 or dh == 0:
        if dw or dh:
            raise ValueError(f"mnn.cv.resize: dsize {dsize!r} has one zero side")
        if fx <= 0 or fy <= 0:
            raise ValueError("mnn.cv.resize: give dsize, or positive fx and fy "
                             f"(got dsize={dsize!r}, fx={fx}, fy={fy})")
        dw, dh = int(round(sw * fx)), int(round(sh * fy))
        if dw <= 0 or dh <= 0:
            raise ValueError(f"mnn.cv.resize: fx={fx}, fy={fy} give an empty image")
    else:
        fx = fy = 0.0
    hwc = as_hwc(arr)
    if (dw, dh) == (sw, sh):
        out = hwc.copy()
    elif interpolation in (C.INTER_NEAREST, C.INTER_NEAREST_EXACT):
        exact = interpolation == C.INTER_NEAREST_EXACT
        xs = tables.nearest(sw, dw, _axis_scales(sw, dw, fx)[0], exact)
        ys = tables.nearest(sh, dh, _axis_scales(sh, dh, fy)[0], exact)
        out = np.empty((dh, dw, hwc.shape[2]), dtype=hwc.dtype)
        _k.gather(hwc, ys, xs, out, threads(out.size))
    elif _exact_half(interpolation, hwc.dtype, sw, sh, dw, dh, fx, fy):
        # Bilinear and area both average 2x2 blocks here (OpenCV's rounding included).
        out = np.empty((dh, dw, hwc.shape[2]), dtype=hwc.dtype)
        _k.resize_half(hwc, out, threads(out.size * 4))
    else:
        if interpolation == C.INTER_LINEAR_EXACT:
            interpolation = C.INTER_LINEAR
        sx_scale = _axis_scales(sw, dw, fx)[0]
        sy_scale = _axis_scales(sh, dh, fy)[0]
        use_area = interpolation == C.INTER_AREA and sx_scale >= 1 and sy_scale >= 1
        fixed = hwc.dtype == np.uint8 and not use_area
        xtab = _axis_taps(sw, dw, fx, interpolation, use_area, fixed)
        ytab = _row_tables(sh, dh, fy, interpolation, use_area, fixed)
        vfirst = None
        if fixed and interpolation == C.INTER_LINEAR and _vertical_first(sw, dw, ytab[0], dh):
            vfirst = (_axis_taps(sh, dh, fy, interpolation, use_area, fixed)[0], fx)
        pixel_taps = None
        if (interpolation == C.INTER_LINEAR and hwc.dtype in (np.uint8, np.float32)
                and hwc.shape[2] in (3, 4) and sw >= 2):
            pixel_taps = _pixel_taps(sw, dw, fx, fixed, hwc.shape[2])
        vfirst_rows = None
        if (not fixed and pixel_taps is not None and hwc.shape[2] in (3, 4)
                and _vertical_first(sw, dw, ytab[0], dh)):
            vfirst_rows = _axis_taps(sh, dh, fy, interpolation, use_area, fixed)[0]
        out = _separable(hwc, dh, dw, xtab, ytab, fixed, vfirst, pixel_taps, vfirst_rows)
    if arr.ndim == 2:
        out = out[:, :, 0]
    return wrap(out, src, batch)


def flip(src, flipCode):
    """Flip around the x axis (0), the y axis (> 0) or both (< 0), as ``cv2.flip``."""
    arr, batch = as_image(src, "flip")
    code = int(flipCode)
    if code == 0:
        out = arr[::-1]
    elif code > 0:
        out = arr[:, ::-1]
    else:
        out = arr[::-1, ::-1]
    return wrap(np.ascontiguousarray(out), src, batch)


def rotate(src, rotateCode):
    """Rotate by 90, 180 or 270 degrees (``ROTATE_90_CLOCKWISE``, ``ROTATE_180``,
    ``ROTATE_90_COUNTERCLOCKWISE``)."""
    arr, batch = as_image(src, "rotate")
    code = int(rotateCode)
    if code == C.ROTATE_90_CLOCKWISE:
        out = np.rot90(arr, k=-1, axes=(0, 1))
    elif code == C.ROTATE_180:
        out = arr[::-1, ::-1]
    elif code == C.ROTATE_90_COUNTERCLOCKWISE:
        out = np.rot90(arr, k=1, axes=(0, 1))
    else:
        raise ValueError(f"mnn.cv.rotate: rotateCode must be ROTATE_90_CLOCKWISE (0), "
                         f"ROTATE_180 (1) or ROTATE_90_COUNTERCLOCKWISE (2), got {code}")
    return wrap(np.ascontiguousarray(out), src, batch)
