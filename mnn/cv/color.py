"""Colour conversions: cvtColor and cvtColorTwoPlane with OpenCV's codes and formulas.

uint8 images use OpenCV's value ranges (H in [0, 180) or [0, 256) for *_FULL, L scaled to
[0, 255], chroma offset by 128); float images use the unscaled ranges (H in degrees, S, V,
L in [0, 1] for HSV/HLS, L in [0, 100] for Lab/Luv). Luma, channel reordering, HSV from
RGB, 5x5 packing and the YUV 4:2:0 / 4:2:2 formats follow OpenCV's integer arithmetic
exactly; the other conversions are computed in double precision and rounded.
"""
import numpy as np

from . import constants as C
from ._image import as_image, threads, wrap
from .._cython import image_color as _k

__all__ = ["cvtColor", "cvtColorTwoPlane"]

# sRGB (D65) <-> XYZ, the matrices OpenCV uses.
_RGB2XYZ = np.array([[0.412453, 0.357580, 0.180423],
                     [0.212671, 0.715160, 0.072169],
                     [0.019334, 0.119193, 0.950227]])
_XYZ2RGB = np.array([[3.240479, -1.53715, -0.498535],
                     [-0.969256, 1.875991, 0.041556],
                     [0.055648, -0.204043, 1.057311]])
_WHITE = (0.950456, 1.0, 1.088754)
_UN, _VN = 0.19793943, 0.46831096
# Per sector of the hue circle: which of the four candidate values goes to (b, g, r).
_SECTOR = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])

# BT.601 video-range YUV 4:2:0 / 4:2:2 coefficients in 20-bit fixed point (OpenCV's).
_SHIFT = 20
_CY, _CUB, _CUG, _CVG, _CVR = 1220542, 2116026, -409993, -852492, 1673527
_CRY, _CGY, _CBY = 269484, 528482, 102760
_CRU, _CGU, _CBU, _CGV, _CBV = -155188, -305135, 460324, -385875, -74448


def _alpha_value(dtype):
    return 1.0 if dtype.kind == "f" else float(np.iinfo(dtype).max)


def _check_channels(arr, allowed, code_name):
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    if cn not in allowed:
        raise ValueError(f"mnn.cv.cvtColor: {code_name} needs an image with "
                         f"{' or '.join(map(str, allowed))} channels, got shape "
                         f"{tuple(arr.shape)}")
    return cn


def _check_dtype(arr, allowed, code_name):
    if arr.dtype not in [np.dtype(d) for d in allowed]:
        names = ", ".join(np.dtype(d).name for d in allowed)
        raise TypeError(f"mnn.cv.cvtColor: {code_name} supports {names} images, "
                        f"got {arr.dtype}")


def _unit_scale(dtype):
    # Values are brought to [0, 1] for the non-linear conversions; floats already are.
    return 1.0 / 255.0 if dtype == np.uint8 else (1.0 / 65535.0 if dtype == np.uint16 else 1.0)


def _out(values, dtype):
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


# ---------------------------------------------------------------- channel order / gray
def _reorder(arr, order, dst_cn, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32, np.float64), name)
    src = arr if arr.ndim == 3 else arr[:, :, np.newaxis]
    src = np.ascontiguousarray(src)
    dst = np.empty(src.shape[:2] + (dst_cn,), dtype=src.dtype)
    # A channel shuffle is a memory-bound copy: a second core brings its own load/store
    # bandwidth (1080p BGR->RGB: 0.13 ms on one thread, 0.07 ms on two), so it is split
    # from a million values on, although each value is far under a nanosecond of work.
    _k.reorder(src, dst, np.asarray(order, dtype=np.intc), _alpha_value(src.dtype),
               threads(dst.size))
    return dst


def _to_gray(arr, bidx, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32, np.float64), name)
    src = np.ascontiguousarray(arr)
    ridx = 2 - bidx
    dst = np.empty(src.shape[:2], dtype=src.dtype)
    nthreads = threads(dst.size // 4)  # a few cheap operations per pixel
    if src.dtype == np.uint8:
        _k.gray_u8(src, dst, ridx, bidx, nthreads)
    elif src.dtype == np.uint16:
        _k.gray_u16(src, dst, ridx, bidx, nthreads)
    elif src.dtype == np.float32:
        _k.gray_float(src, dst, ridx, bidx, nthreads)
    else:
        dst = src[..., ridx] * 0.299 + src[..., 1] * 0.587 + src[..., bidx] * 0.114
    return dst


# ---------------------------------------------------------------- 16-bit packed BGR
def _to_5x5(arr, bidx, green_bits, name):
    _check_dtype(arr, (np.uint8,), name)
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    if cn == 1:
        b = g = r = arr.astype(np.int32) if arr.ndim == 2 else arr[..., 0].astype(np.int32)
    else:
        b = arr[..., bidx].astype(np.int32)
        g = arr[..., 1].astype(np.int32)
        r = arr[..., 2 - bidx].astype(np.int32)
    if green_bits == 6:
        t = (b >> 3) | ((g & ~3) << 3) | ((r & ~7) << 8)
    else:
        t = (b >> 3) | ((g & ~7) << 2) | ((r & ~7) << 7)
        if cn == 4:
            t = t | np.where(arr[..., 3] != 0, 0x8000, 0)
    return np.stack([(t & 0xFF).astype(np.uint8), ((t >> 8) & 0xFF).astype(np.uint8)], axis=2)


def _from_5x5(arr, bidx, green_bits, dst_cn, name):
    _check_dtype(arr, (np.uint8,), name)
    t = arr[..., 0].astype(np.int32) | (arr[..., 1].astype(np.int32) << 8)
    b = (t << 3) & 0xF8
    if green_bits == 6:
        g = (t >> 3) & 0xFC
        r = (t >> 8) & 0xF8
        a = np.full_like(t, 255)
    else:
        g = (t >> 2) & 0xF8
        r = (t >> 7) & 0xF8
        a = np.where(t & 0x8000, 255, 0)
    if dst_cn == 1:
        return ((b * 3735 + g * 19235 + r * 9798 + (1 << 14)) >> 15).astype(np.uint8)
    chans = [None, g, None]
    chans[bidx], chans[2 - bidx] = b, r
    if dst_cn == 4:
        chans.append(a)
    return np.stack(chans, axis=2).astype(np.uint8)


# ---------------------------------------------------------------- linear colour spaces
def _rgb_planes(arr, bidx):
    x = arr.astype(np.float64)
    return x[..., 2 - bidx], x[..., 1], x[..., bidx]


def _to_ycc(arr, bidx, kind, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32), name)
    r, g, b = _rgb_planes(arr, bidx)
    delta = 0.5 if arr.dtype.kind == "f" else float(np.iinfo(arr.dtype).max // 2 + 1)
    y = 0.299 * r + 0.587 * g + 0.114 * b
    if kind == "ycrcb":
        c1, c2 = (r - y) * 0.713 + delta, (b - y) * 0.564 + delta
    else:  # YUV: U from blue, V from red
        c1, c2 = (b - y) * 0.492 + delta, (r - y) * 0.877 + delta
    return _out(np.stack([y, c1, c2], axis=2), arr.dtype)


def _from_ycc(arr, bidx, kind, dst_cn, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32), name)
    x = arr.astype(np.float64)
    delta = 0.5 if arr.dtype.kind == "f" else float(np.iinfo(arr.dtype).max // 2 + 1)
    y, c1, c2 = x[..., 0], x[..., 1] - delta, x[..., 2] - delta
    if kind == "ycrcb":
        r = y + 1.403 * c1
        g = y - 0.714 * c1 - 0.344 * c2
        b = y + 1.773 * c2
    else:
        b = y + 2.032 * c1
        g = y - 0.395 * c1 - 0.581 * c2
        r = y + 1.140 * c2
    return _assemble(r, g, b, bidx, dst_cn, arr.dtype)


def _assemble(r, g, b, bidx, dst_cn, dtype):
    chans = [None, g, None]
    chans[bidx], chans[2 - bidx] = b, r
    if dst_cn == 4:
        chans.append(np.full_like(g, _alpha_value(dtype)))
    return _out(np.stack(chans, axis=2), dtype)


def _to_xyz(arr, bidx, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32), name)
    r, g, b = _rgb_planes(arr, bidx)
    rgb = np.stack([r, g, b], axis=2)
    return _out(rgb @ _RGB2XYZ.T, arr.dtype)


def _from_xyz(arr, bidx, name):
    _check_dtype(arr, (np.uint8, np.uint16, np.float32), name)
    rgb = arr.astype(np.float64) @ _XYZ2RGB.T
    return _assemble(rgb[..., 0], rgb[..., 1], rgb[..., 2], bidx, 3, arr.dtype)


# ---------------------------------------------------------------- HSV / HLS
def _to_hsv_u8(arr, bidx, hrange):
    # OpenCV's integer algorithm with its 12-bit reciprocal tables: exact agreement.
    r, g, b = (arr[..., 2 - bidx].astype(np.int64), arr[..., 1].astype(np.int64),
               arr[..., bidx].astype(np.int64))
    v = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = v - vmin
    idx = np.arange(256, dtype=np.float64)
    with np.errstate(divide="ignore"):
        sdiv = np.where(idx > 0, np.rint((255 << 12) / np.maximum(idx, 1)), 0).astype(np.int64)
        hdiv = np.where(idx > 0, np.rint((hrange << 12) / (6.0 * np.maximum(idx, 1))),
                        0).astype(np.int64)
    vr = v == r
    vg = (v == g) & ~vr
    h = np.where(vr, g - b, np.where(vg, b - r + 2 * diff, r - g + 4 * diff))
    s = (diff * sdiv[v] + (1 << 11)) >> 12
    h = (h * hdiv[diff] + (1 << 11)) >> 12
    h = np.where(h < 0, h + hrange, h)
    return np.stack([h, s, v], axis=2).astype(np.uint8)


def _hue_sat(r, g, b, vmax, diff):
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 60.0 / (diff + np.finfo(np.float32).eps)
    h = np.where(vmax == r, (g - b) * scale,
                 np.where(vmax == g, (b - r) * scale + 120.0, (r - g) * scale + 240.0))
    return np.where(h < 0, h + 360.0, h)


def _to_hsv(arr, bidx, full, name):
    _check_dtype(arr, (np.uint8, np.float32), name)
    if arr.dtype == np.uint8:
        return _to_hsv_u8(arr, bidx, 256 if full else 180)
    r, g, b = _rgb_planes(arr, bidx)
    v = np.maximum(np.maximum(r, g), b)
    diff = v - np.minimum(np.minimum(r, g), b)
    s = diff / (np.abs(v) + np.finfo(np.float32).eps)
    h = _hue_sat(r, g, b, v, diff)
    return np.stack([h, s, v], axis=2).astype(arr.dtype)


def _to_hls(arr, bidx, full, name):
    _check_dtype(arr, (np.uint8, np.float32), name)
    r, g, b = _rgb_planes(arr, bidx)
    if arr.dtype == np.uint8:
        r, g, b = r / 255.0, g / 255.0, b / 255.0
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    lum = (vmax + vmin) * 0.5
    flat = diff <= np.finfo(np.float32).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(lum < 0.5, diff / (vmax + vmin), diff / (2.0 - vmax - vmin))
        h = np.where(vmax == r, (g - b) * 60.0 / diff,
                     np.where(vmax == g, (b - r) * 60.0 / diff + 120.0,
                              (r - g) * 60.0 / diff + 240.0))
    h = np.where(h < 0, h + 360.0, h)
    h = np.where(flat, 0.0, h)
    s = np.where(flat, 0.0, s)
    if arr.dtype == np.uint8:
        hrange = 256 if full else 180
        return _out(np.stack([h * hrange / 360.0, lum * 255.0, s * 255.0], axis=2), arr.dtype)
    return np.stack([h, lum, s], axis=2).astype(arr.dtype)


def _sector_pick(h6, tab):
    h6 = np.mod(h6, 6.0)
    sector = np.clip(np.floor(h6).astype(np.int64), 0, 5)
    picks = _SECTOR[sector]
    stacked = np.stack(tab, axis=-1)
    chans = [np.take_along_axis(stacked, picks[..., k:k + 1], axis=-1)[..., 0] for k in range(3)]
    return chans  # b, g, r


def _hsv_like_to_rgb(arr, bidx, full, kind, dst_cn, name):
    _check_dtype(arr, (np.uint8, np.float32), name)
    x = arr.astype(np.float64)
    if arr.dtype == np.uint8:
        # OpenCV reads *_FULL hue back with a range of 255 (it writes it with 256).
        hscale = 6.0 / (255 if full else 180)
        h, c1, c2 = x[..., 0] * hscale, x[..., 1] / 255.0, x[..., 2] / 255.0
    else:
        h, c1, c2 = x[..., 0] * (6.0 / 360.0), x[..., 1], x[..., 2]
    h = np.mod(h, 6.0)
    frac = h - np.floor(h)
    if kind == "hsv":
        s, v = c1, c2
        tab = (v, v * (1 - s), v * (1 - s * frac), v * (1 - s * (1 - frac)))
        b, g, r = _sector_pick(h, tab)
        b, g, r = (np.where(s == 0, v, b), np.where(s == 0, v, g), np.where(s == 0, v, r))
    else:
        lum, s = c1, c2
        p2 = np.where(lum <= 0.5, lum * (1 + s), lum + s - lum * s)
        p1 = 2 * lum - p2
        tab = (p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac)
        b, g, r = _sector_pick(h, tab)
        b, g, r = (np.where(s == 0, lum, b), np.where(s == 0, lum, g), np.where(s == 0, lum, r))
    if arr.dtype == np.uint8:
        r, g, b = r * 255.0, g * 255.0, b * 255.0
    return _assemble(r, g, b, bidx, dst_cn, arr.dtype)


# ---------------------------------------------------------------- Lab / Luv
def _gamma(x):
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def _inv_gamma(x):
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1.0 / 2.4) - 0.055)


def _lightness(y):
    return np.where(y > 0.008856, 116.0 * np.cbrt(y) - 16.0, 903.3 * y)


def _to_lab_luv(arr, bidx, srgb, kind, name):
    _check_dtype(arr, (np.uint8, np.float32), name)
    r, g, b = _rgb_planes(arr, bidx)
    if arr.dtype == np.uint8:
        r, g, b = r / 255.0, g / 255.0, b / 255.0
    if srgb:
        r, g, b = _gamma(r), _gamma(g), _gamma(b)
    xyz = np.stack([r, g, b], axis=2) @ _RGB2XYZ.T
    X, Y, Z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    L = _lightness(Y)
    if kind == "lab":
        def f(t):
            return np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16.0 / 116.0)
        fx, fy, fz = f(X / _WHITE[0]), f(Y), f(Z / _WHITE[2])
        c1, c2 = 500.0 * (fx - fy), 200.0 * (fy - fz)
        if arr.dtype == np.uint8:
            L, c1, c2 = L * 255.0 / 100.0, c1 + 128.0, c2 + 128.0
    else:
        d = X + 15.0 * Y + 3.0 * Z
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(d > 0, 4.0 * X / d, 0.0)
            vp = np.where(d > 0, 9.0 * Y / d, 0.0)
        c1, c2 = 13.0 * L * (up - _UN), 13.0 * L * (vp - _VN)
        if arr.dtype == np.uint8:
            L = L * 255.0 / 100.0
            c1 = (c1 + 134.0) * 255.0 / 354.0
            c2 = (c2 + 140.0) * 255.0 / 262.0
    return _out(np.stack([L, c1, c2], axis=2), arr.dtype)


def _y_from_l(L):
    fy = (L + 16.0) / 116.0
    return np.where(L <= 8.0, L / 903.3, fy ** 3)


def _from_lab_luv(arr, bidx, srgb, kind, dst_cn, name):
    _check_dtype(arr, (np.uint8, np.float32), name)
    x = arr.astype(np.float64)
    L, c1, c2 = x[..., 0], x[..., 1], x[..., 2]
    if arr.dtype == np.uint8:
        L = L * 100.0 / 255.0
        if kind == "lab":
            c1, c2 = c1 - 128.0, c2 - 128.0
        else:
            c1 = c1 * 354.0 / 255.0 - 134.0
            c2 = c2 * 262.0 / 255.0 - 140.0
    Y = _y_from_l(L)
    if kind == "lab":
        fy = np.where(L <= 8.0, 7.787 * Y + 16.0 / 116.0, (L + 16.0) / 116.0)
        fx, fz = fy + c1 / 500.0, fy - c2 / 200.0

        def finv(t):
            return np.where(t > 0.206893, t ** 3, (t - 16.0 / 116.0) / 7.787)
        X, Z = finv(fx) * _WHITE[0], finv(fz) * _WHITE[2]
    else:
        # OpenCV's form: with U = u + 13 L u_n and V = v + 13 L v_n, X = 9YU / 4V and
        # Z = Y ((156 L - 3U) / 4V - 5), where 1 / 4V is clamped to [-0.25, 0.25].
        up = 3.0 * (c1 + 13.0 * _UN * L)
        with np.errstate(divide="ignore"):
            vp = np.clip(0.25 / (c2 + 13.0 * _VN * L), -0.25, 0.25)
        X = Y * 3.0 * up * vp
        Z = Y * ((156.0 * L - up) * vp - 5.0)
    rgb = np.stack([X, Y, Z], axis=2) @ _XYZ2RGB.T
    if srgb:
        rgb = _inv_gamma(rgb)
    elif arr.dtype == np.uint8:
        rgb = np.clip(rgb, 0.0, 1.0)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    if arr.dtype == np.uint8:
        r, g, b = r * 255.0, g * 255.0, b * 255.0
    return _assemble(r, g, b, bidx, dst_cn, arr.dtype)


# ---------------------------------------------------------------- YUV 4:2:0 and 4:2:2
def _yuv_to_rgb_fixed(y, u, v, bidx, dst_cn):
    u = u.astype(np.int64) - 128
    v = v.astype(np.int64) - 128
    half = 1 << (_SHIFT - 1)
    ruv = half + _CVR * v
    guv = half + _CVG * v + _CUG * u
    buv = half + _CUB * u
    yy = np.maximum(0, y.astype(np.int64) - 16) * _CY
    r = np.clip((yy + ruv) >> _SHIFT, 0, 255)
    g = np.clip((yy + guv) >> _SHIFT, 0, 255)
    b = np.clip((yy + buv) >> _SHIFT, 0, 255)
    chans = [None, g, None]
    chans[bidx], chans[2 - bidx] = b, r
    if dst_cn == 4:
        chans.append(np.full_like(g, 255))
    return np.stack(chans, axis=2).astype(np.uint8)


def _split_420(arr, layout, name):
    _check_dtype(arr, (np.uint8,), name)
    if arr.ndim == 3:
        if arr.shape[2] != 1:
            raise ValueError(f"mnn.cv.cvtColor: {name} needs a single-channel (H*3/2, W) "
                             f"buffer, got shape {tuple(arr.shape)}")
        arr = arr[..., 0]
    rows, w = arr.shape
    if rows % 3 or w % 2 or (rows * 2 // 3) % 2:
        raise ValueError(f"mnn.cv.cvtColor: {name} needs a (H*3/2, W) buffer with even H "
                         f"and W, got shape {tuple(arr.shape)}")
    h = rows * 2 // 3
    y = arr[:h]
    chroma = np.ascontiguousarray(arr[h:]).reshape(-1)
    if layout in ("nv12", "nv21"):
        uv = chroma.reshape(h // 2, w // 2, 2)
        u, v = (uv[..., 0], uv[..., 1]) if layout == "nv12" else (uv[..., 1], uv[..., 0])
    else:
        quarter = (h // 2) * (w // 2)
        p1 = chroma[:quarter].reshape(h // 2, w // 2)
        p2 = chroma[quarter:].reshape(h // 2, w // 2)
        u, v = (p1, p2) if layout == "i420" else (p2, p1)
    return y, u, v


def _from_420(arr, layout, bidx, dst_cn, name):
    y, u, v = _split_420(arr, layout, name)
    if dst_cn == 1:
        return np.ascontiguousarray(y)
    up = np.repeat(np.repeat(u, 2, axis=0), 2, axis=1)
    vp = np.repeat(np.repeat(v, 2, axis=0), 2, axis=1)
    return _yuv_to_rgb_fixed(y, up, vp, bidx, dst_cn)


def _two_plane(y, uv, layout, bidx, dst_cn, name):
    if y.ndim == 3:
        y = y[..., 0]
    h, w = y.shape
    uv = np.asarray(uv)
    if uv.dtype != np.uint8 or y.dtype != np.uint8:
        raise TypeError(f"mnn.cv.cvtColorTwoPlane: {name} needs uint8 planes")
    if uv.size != (h // 2) * (w // 2) * 2 or h % 2 or w % 2:
        raise ValueError(f"mnn.cv.cvtColorTwoPlane: {name} needs an interleaved chroma plane of "
                         f"{h // 2}x{w // 2}x2 for a {h}x{w} luma plane, got shape "
                         f"{tuple(uv.shape)}")
    uv = np.ascontiguousarray(uv).reshape(h // 2, w // 2, 2)
    u, v = (uv[..., 0], uv[..., 1]) if layout == "nv12" else (uv[..., 1], uv[..., 0])
    up = np.repeat(np.repeat(u, 2, axis=0), 2, axis=1)
    vp = np.repeat(np.repeat(v, 2, axis=0), 2, axis=1)
    return _yuv_to_rgb_fixed(y, up, vp, bidx, dst_cn)


def _rgb_to_yuv_fixed(r, g, b):
    half = 1 << (_SHIFT - 1)
    y = (_CRY * r + _CGY * g + _CBY * b + half + (16 << _SHIFT)) >> _SHIFT
    u = (_CRU * r + _CGU * g + _CBU * b + half + (128 << _SHIFT)) >> _SHIFT
    v = (_CBU * r + _CGV * g + _CBV * b + half + (128 << _SHIFT)) >> _SHIFT
    return y, u, v


def _to_420(arr, layout, bidx, name):
    _check_dtype(arr, (np.uint8,), name)
    _check_channels(arr, (3, 4), name)
    h, w = arr.shape[:2]
    if h % 2 or w % 2:
        raise ValueError(f"mnn.cv.cvtColor: {name} needs even width and height, got "
                         f"{w}x{h}")
    r = arr[..., 2 - bidx].astype(np.int64)
    g = arr[..., 1].astype(np.int64)
    b = arr[..., bidx].astype(np.int64)
    y, _, _ = _rgb_to_yuv_fixed(r, g, b)
    # OpenCV's 4:2:0 encoder takes each 2x2 block's chroma from its top-left pixel.
    _, u, v = _rgb_to_yuv_fixed(r[0::2, 0::2], g[0::2, 0::2], b[0::2, 0::2])
    first, second = (u, v) if layout == "i420" else (v, u)
    chroma = np.concatenate([first.reshape(-1), second.reshape(-1)]).reshape(h // 2, w)
    return np.clip(np.concatenate([y, chroma], axis=0), 0, 255).astype(np.uint8)


# Byte positions of (y0, u, y1, v) inside each 4-byte pair of pixels.
_PACKED = {"uyvy": (1, 0, 3, 2), "yuy2": (0, 1, 2, 3), "yvyu": (0, 3, 2, 1)}


def _from_422(arr, layout, bidx, dst_cn, name):
    _check_dtype(arr, (np.uint8,), name)
    if arr.ndim != 3 or arr.shape[2] != 2 or arr.shape[1] % 2:
        raise ValueError(f"mnn.cv.cvtColor: {name} needs an (H, W, 2) packed image with even "
                         f"W, got shape {tuple(arr.shape)}")
    h, w = arr.shape[:2]
    quads = np.ascontiguousarray(arr).reshape(h, w // 2, 4)
    iy0, iu, iy1, iv = _PACKED[layout]
    y = np.empty((h, w), dtype=np.uint8)
    y[:, 0::2], y[:, 1::2] = quads[..., iy0], quads[..., iy1]
    if dst_cn == 1:
        return y
    u = np.repeat(quads[..., iu], 2, axis=1)
    v = np.repeat(quads[..., iv], 2, axis=1)
    return _yuv_to_rgb_fixed(y, u, v, bidx, dst_cn)


def _to_422(arr, layout, bidx, name):
    _check_dtype(arr, (np.uint8,), name)
    _check_channels(arr, (3, 4), name)
    h, w = arr.shape[:2]
    if w % 2:
        raise ValueError(f"mnn.cv.cvtColor: {name} needs an even width, got {w}")
    r = arr[..., 2 - bidx].astype(np.int64)
    g = arr[..., 1].astype(np.int64)
    b = arr[..., bidx].astype(np.int64)
    y, _, _ = _rgb_to_yuv_fixed(r, g, b)
    rs, gs, bs = r[:, 0::2] + r[:, 1::2], g[:, 0::2] + g[:, 1::2], b[:, 0::2] + b[:, 1::2]
    half = 1 << _SHIFT
    u = (_CRU * rs + _CGU * gs + _CBU * bs + half + (128 << (_SHIFT + 1))) >> (_SHIFT + 1)
    v = (_CBU * rs + _CGV * gs + _CBV * bs + half + (128 << (_SHIFT + 1))) >> (_SHIFT + 1)
    quads = np.empty((h, w // 2, 4), dtype=np.int64)
    iy0, iu, iy1, iv = _PACKED[layout]
    quads[..., iy0], quads[..., iy1] = y[:, 0::2], y[:, 1::2]
    quads[..., iu], quads[..., iv] = u, v
    return np.clip(quads, 0, 255).astype(np.uint8).reshape(h, w, 2)


def _mrgba(arr, premultiply, name):
    _check_dtype(arr, (np.uint8,), name)
    _check_channels(arr, (4,), name)
    x = arr.astype(np.int64)
    a = x[..., 3:4]
    if premultiply:
        rgb = (x[..., :3] * a + 128) // 255
    else:
        rgb = np.where(a == 0, 0, (x[..., :3] * 255 + a // 2) // np.maximum(a, 1))
    return np.clip(np.concatenate([rgb, a], axis=2), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------- the conversion table
def _entry(src_cn, func, *args):
    return (src_cn, func, args)


def _build_table():
    """code -> (allowed source channel counts, function, extra arguments)."""
    t = {}
    # Channel reordering and alpha (source channels, order of the destination channels).
    for code, src_cn, order, dst_cn in (
            (C.COLOR_BGR2BGRA, 3, (0, 1, 2, -1), 4), (C.COLOR_BGRA2BGR, 4, (0, 1, 2), 3),
            (C.COLOR_BGR2RGBA, 3, (2, 1, 0, -1), 4), (C.COLOR_RGBA2BGR, 4, (2, 1, 0), 3),
            (C.COLOR_BGR2RGB, 3, (2, 1, 0), 3), (C.COLOR_BGRA2RGBA, 4, (2, 1, 0, 3), 4),
            (C.COLOR_GRAY2BGR, 1, (0, 0, 0), 3), (C.COLOR_GRAY2BGRA, 1, (0, 0, 0, -1), 4)):
        t[code] = _entry((src_cn,), _reorder, order, dst_cn)
    for code, src_cn, bidx in ((C.COLOR_BGR2GRAY, 3, 0), (C.COLOR_RGB2GRAY, 3, 2),
                               (C.COLOR_BGRA2GRAY, 4, 0), (C.COLOR_RGBA2GRAY, 4, 2)):
        t[code] = _entry((src_cn,), _to_gray, bidx)
    # 16-bit packed colour.
    for code, src_cn, bidx, bits in (
            (C.COLOR_BGR2BGR565, 3, 0, 6), (C.COLOR_RGB2BGR565, 3, 2, 6),
            (C.COLOR_BGRA2BGR565, 4, 0, 6), (C.COLOR_RGBA2BGR565, 4, 2, 6),
            (C.COLOR_BGR2BGR555, 3, 0, 5), (C.COLOR_RGB2BGR555, 3, 2, 5),
            (C.COLOR_BGRA2BGR555, 4, 0, 5), (C.COLOR_RGBA2BGR555, 4, 2, 5),
            (C.COLOR_GRAY2BGR565, 1, 0, 6), (C.COLOR_GRAY2BGR555, 1, 0, 5)):
        t[code] = _entry((src_cn,), _to_5x5, bidx, bits)
    for code, bidx, bits, dst_cn in (
            (C.COLOR_BGR5652BGR, 0, 6, 3), (C.COLOR_BGR5652RGB, 2, 6, 3),
            (C.COLOR_BGR5652BGRA, 0, 6, 4), (C.COLOR_BGR5652RGBA, 2, 6, 4),
            (C.COLOR_BGR5652GRAY, 0, 6, 1), (C.COLOR_BGR5552BGR, 0, 5, 3),
            (C.COLOR_BGR5552RGB, 2, 5, 3), (C.COLOR_BGR5552BGRA, 0, 5, 4),
            (C.COLOR_BGR5552RGBA, 2, 5, 4), (C.COLOR_BGR5552GRAY, 0, 5, 1)):
        t[code] = _entry((2,), _from_5x5, bidx, bits, dst_cn)
    # Linear spaces.
    for code, bidx in ((C.COLOR_BGR2XYZ, 0), (C.COLOR_RGB2XYZ, 2)):
        t[code] = _entry((3, 4), _to_xyz, bidx)
    for code, bidx in ((C.COLOR_XYZ2BGR, 0), (C.COLOR_XYZ2RGB, 2)):
        t[code] = _entry((3,), _from_xyz, bidx)
    for code, bidx, kind in ((C.COLOR_BGR2YCrCb, 0, "ycrcb"), (C.COLOR_RGB2YCrCb, 2, "ycrcb"),
                             (C.COLOR_BGR2YUV, 0, "yuv"), (C.COLOR_RGB2YUV, 2, "yuv")):
        t[code] = _entry((3, 4), _to_ycc, bidx, kind)
    for code, bidx, kind in ((C.COLOR_YCrCb2BGR, 0, "ycrcb"), (C.COLOR_YCrCb2RGB, 2, "ycrcb"),
                             (C.COLOR_YUV2BGR, 0, "yuv"), (C.COLOR_YUV2RGB, 2, "yuv")):
        t[code] = _entry((3,), _from_ycc, bidx, kind, 3)
    # HSV and HLS.
    for code, bidx, full in ((C.COLOR_BGR2HSV, 0, False), (C.COLOR_RGB2HSV, 2, False),
                             (C.COLOR_BGR2HSV_FULL, 0, True), (C.COLOR_RGB2HSV_FULL, 2, True)):
        t[code] = _entry((3, 4), _to_hsv, bidx, full)
    for code, bidx, full in ((C.COLOR_BGR2HLS, 0, False), (C.COLOR_RGB2HLS, 2, False),
                             (C.COLOR_BGR2HLS_FULL, 0, True), (C.COLOR_RGB2HLS_FULL, 2, True)):
        t[code] = _entry((3, 4), _to_hls, bidx, full)
    for code, bidx, full, kind in (
            (C.COLOR_HSV2BGR, 0, False, "hsv"), (C.COLOR_HSV2RGB, 2, False, "hsv"),
            (C.COLOR_HSV2BGR_FULL, 0, True, "hsv"), (C.COLOR_HSV2RGB_FULL, 2, True, "hsv"),
            (C.COLOR_HLS2BGR, 0, False, "hls"), (C.COLOR_HLS2RGB, 2, False, "hls"),
            (C.COLOR_HLS2BGR_FULL, 0, True, "hls"), (C.COLOR_HLS2RGB_FULL, 2, True, "hls")):
        t[code] = _entry((3,), _hsv_like_to_rgb, bidx, full, kind, 3)
    # Lab and Luv, from sRGB or linear RGB.
    for code, bidx, srgb, kind in (
            (C.COLOR_BGR2Lab, 0, True, "lab"), (C.COLOR_RGB2Lab, 2, True, "lab"),
            (C.COLOR_LBGR2Lab, 0, False, "lab"), (C.COLOR_LRGB2Lab, 2, False, "lab"),
            (C.COLOR_BGR2Luv, 0, True, "luv"), (C.COLOR_RGB2Luv, 2, True, "luv"),
            (C.COLOR_LBGR2Luv, 0, False, "luv"), (C.COLOR_LRGB2Luv, 2, False, "luv")):
        t[code] = _entry((3, 4), _to_lab_luv, bidx, srgb, kind)
    for code, bidx, srgb, kind in (
            (C.COLOR_Lab2BGR, 0, True, "lab"), (C.COLOR_Lab2RGB, 2, True, "lab"),
            (C.COLOR_Lab2LBGR, 0, False, "lab"), (C.COLOR_Lab2LRGB, 2, False, "lab"),
            (C.COLOR_Luv2BGR, 0, True, "luv"), (C.COLOR_Luv2RGB, 2, True, "luv"),
            (C.COLOR_Luv2LBGR, 0, False, "luv"), (C.COLOR_Luv2LRGB, 2, False, "luv")):
        t[code] = _entry((3,), _from_lab_luv, bidx, srgb, kind, 3)
    # YUV 4:2:0 (one (H*3/2, W) buffer) to colour or gray.
    for code, layout, bidx, dst_cn in (
            (C.COLOR_YUV2RGB_NV12, "nv12", 2, 3), (C.COLOR_YUV2BGR_NV12, "nv12", 0, 3),
            (C.COLOR_YUV2RGBA_NV12, "nv12", 2, 4), (C.COLOR_YUV2BGRA_NV12, "nv12", 0, 4),
            (C.COLOR_YUV2RGB_NV21, "nv21", 2, 3), (C.COLOR_YUV2BGR_NV21, "nv21", 0, 3),
            (C.COLOR_YUV2RGBA_NV21, "nv21", 2, 4), (C.COLOR_YUV2BGRA_NV21, "nv21", 0, 4),
            (C.COLOR_YUV2RGB_I420, "i420", 2, 3), (C.COLOR_YUV2BGR_I420, "i420", 0, 3),
            (C.COLOR_YUV2RGBA_I420, "i420", 2, 4), (C.COLOR_YUV2BGRA_I420, "i420", 0, 4),
            (C.COLOR_YUV2RGB_YV12, "yv12", 2, 3), (C.COLOR_YUV2BGR_YV12, "yv12", 0, 3),
            (C.COLOR_YUV2RGBA_YV12, "yv12", 2, 4), (C.COLOR_YUV2BGRA_YV12, "yv12", 0, 4),
            (C.COLOR_YUV2GRAY_420, "i420", 0, 1)):
        t[code] = _entry((1,), _from_420, layout, bidx, dst_cn)
    for code, layout, bidx in (
            (C.COLOR_BGR2YUV_I420, "i420", 0), (C.COLOR_RGB2YUV_I420, "i420", 2),
            (C.COLOR_BGRA2YUV_I420, "i420", 0), (C.COLOR_RGBA2YUV_I420, "i420", 2),
            (C.COLOR_BGR2YUV_YV12, "yv12", 0), (C.COLOR_RGB2YUV_YV12, "yv12", 2),
            (C.COLOR_BGRA2YUV_YV12, "yv12", 0), (C.COLOR_RGBA2YUV_YV12, "yv12", 2)):
        t[code] = _entry((3, 4), _to_420, layout, bidx)
    # YUV 4:2:2 packed (H, W, 2).
    for code, layout, bidx, dst_cn in (
            (C.COLOR_YUV2RGB_UYVY, "uyvy", 2, 3), (C.COLOR_YUV2BGR_UYVY, "uyvy", 0, 3),
            (C.COLOR_YUV2RGBA_UYVY, "uyvy", 2, 4), (C.COLOR_YUV2BGRA_UYVY, "uyvy", 0, 4),
            (C.COLOR_YUV2RGB_YUY2, "yuy2", 2, 3), (C.COLOR_YUV2BGR_YUY2, "yuy2", 0, 3),
            (C.COLOR_YUV2RGBA_YUY2, "yuy2", 2, 4), (C.COLOR_YUV2BGRA_YUY2, "yuy2", 0, 4),
            (C.COLOR_YUV2RGB_YVYU, "yvyu", 2, 3), (C.COLOR_YUV2BGR_YVYU, "yvyu", 0, 3),
            (C.COLOR_YUV2RGBA_YVYU, "yvyu", 2, 4), (C.COLOR_YUV2BGRA_YVYU, "yvyu", 0, 4),
            (C.COLOR_YUV2GRAY_UYVY, "uyvy", 0, 1), (C.COLOR_YUV2GRAY_YUY2, "yuy2", 0, 1)):
        t[code] = _entry((2,), _from_422, layout, bidx, dst_cn)
    for code, layout, bidx in (
            (C.COLOR_BGR2YUV_UYVY, "uyvy", 0), (C.COLOR_RGB2YUV_UYVY, "uyvy", 2),
            (C.COLOR_BGRA2YUV_UYVY, "uyvy", 0), (C.COLOR_RGBA2YUV_UYVY, "uyvy", 2),
            (C.COLOR_BGR2YUV_YUY2, "yuy2", 0), (C.COLOR_RGB2YUV_YUY2, "yuy2", 2),
            (C.COLOR_BGRA2YUV_YUY2, "yuy2", 0), (C.COLOR_RGBA2YUV_YUY2, "yuy2", 2),
            (C.COLOR_BGR2YUV_YVYU, "yvyu", 0), (C.COLOR_RGB2YUV_YVYU, "yvyu", 2),
            (C.COLOR_BGRA2YUV_YVYU, "yvyu", 0), (C.COLOR_RGBA2YUV_YVYU, "yvyu", 2)):
        t[code] = _entry((3, 4), _to_422, layout, bidx)
    t[C.COLOR_RGBA2mRGBA] = _entry((4,), _mrgba, True)
    t[C.COLOR_mRGBA2RGBA] = _entry((4,), _mrgba, False)
    return t


_TABLE = _build_table()
_TWO_PLANE = {
    C.COLOR_YUV2RGB_NV12: ("nv12", 2, 3), C.COLOR_YUV2BGR_NV12: ("nv12", 0, 3),
    C.COLOR_YUV2RGBA_NV12: ("nv12", 2, 4), C.COLOR_YUV2BGRA_NV12: ("nv12", 0, 4),
    C.COLOR_YUV2RGB_NV21: ("nv21", 2, 3), C.COLOR_YUV2BGR_NV21: ("nv21", 0, 3),
    C.COLOR_YUV2RGBA_NV21: ("nv21", 2, 4), C.COLOR_YUV2BGRA_NV21: ("nv21", 0, 4),
}


def _build_names():
    # Shortest constant name per code, for error messages (built once).
    names = {}
    for name in sorted(vars(C), key=len, reverse=True):
        if name.startswith("COLOR_"):
            names[getattr(C, name)] = name
    return names


_NAMES = _build_names()


def _code_name(code):
    return _NAMES.get(code, f"code {code}")


def cvtColor(src, code, dstCn=0):
    """Convert an image from one colour space to another (``cv2.cvtColor``).

    Parameters
    ----------
    src : ndarray or Var
        HW, HWC or 1HWC image, uint8 or float32 (uint16 for the linear conversions).
    code : int
        One of the ``COLOR_*`` constants.
    dstCn : int
        Accepted for cv2 compatibility; the code determines the channel count.

    Returns
    -------
    ndarray or Var
        The converted image, same dtype as ``src``.
    """
    arr, batch = as_image(src, "cvtColor")
    try:
        code = int(code)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mnn.cv.cvtColor: code must be a COLOR_* int, got {code!r}") from exc
    if code not in _TABLE:
        raise ValueError(f"mnn.cv.cvtColor: unknown colour conversion code {code}")
    allowed, func, args = _TABLE[code]
    name = _code_name(code)
    if allowed == (1,) and arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    _check_channels(arr, allowed, name)
    out = func(arr, *args, name)
    return wrap(out, src, batch)


def cvtColorTwoPlane(src1, src2, code):
    """Convert NV12/NV21 given as separate luma and interleaved chroma planes.

    Parameters
    ----------
    src1 : ndarray or Var
        (H, W) luma plane.
    src2 : ndarray or Var
        (H/2, W/2, 2) interleaved chroma plane.
    code : int
        ``COLOR_YUV2{BGR,RGB,BGRA,RGBA}_{NV12,NV21}``.
    """
    y, batch = as_image(src1, "cvtColorTwoPlane", "src1", dtypes=(np.uint8,))
    uv = np.asarray(src2)
    code = int(code)
    if code not in _TWO_PLANE:
        raise ValueError(f"mnn.cv.cvtColorTwoPlane: code {code} is not an NV12/NV21 "
                         f"conversion")
    layout, bidx, dst_cn = _TWO_PLANE[code]
    out = _two_plane(y, uv, layout, bidx, dst_cn, _code_name(code))
    return wrap(out, src1, batch)
