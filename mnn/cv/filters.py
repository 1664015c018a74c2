"""Linear filters and kernels: blur, boxFilter, sqrBoxFilter, GaussianBlur, filter2D,
sepFilter2D, Sobel, Scharr, Laplacian, spatialGradient, bilateralFilter, pyrDown, pyrUp,
getGaussianKernel, getDerivKernels, getGaborKernel (cv2's names, arguments and rules).

Filters correlate (as OpenCV does, no kernel flip). Sums are taken in single precision
and rounded to nearest for integer outputs, so uint8 results match cv2 to within one.
"""
import math

import numpy as np

from . import constants as C
from ._image import as_array, as_image, check_int, threads, wrap
from .._cython import image_filter as _k

__all__ = ["blur", "boxFilter", "sqrBoxFilter", "GaussianBlur", "filter2D", "sepFilter2D",
           "Sobel", "Scharr", "Laplacian", "spatialGradient", "bilateralFilter", "pyrDown",
           "pyrUp", "getGaussianKernel", "getDerivKernels", "getGaborKernel"]

_DEPTHS = {C.CV_8U: np.uint8, C.CV_16U: np.uint16, C.CV_16S: np.int16, C.CV_32S: np.int32,
           C.CV_32F: np.float32, C.CV_64F: np.float64}
_FILTER_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)
_BORDERS = (C.BORDER_CONSTANT, C.BORDER_REPLICATE, C.BORDER_REFLECT, C.BORDER_WRAP,
            C.BORDER_REFLECT_101)


# ---------------------------------------------------------------- shared plumbing
def border_table(n, before, after, mode):
    """Source index for each padded position -before .. n+after-1 (-1: constant border)."""
    p = np.arange(-before, n + after, dtype=np.int64)
    if mode == C.BORDER_CONSTANT:
        idx = np.where((p >= 0) & (p < n), p, -1)
    elif mode == C.BORDER_REPLICATE:
        idx = np.clip(p, 0, n - 1)
    elif mode == C.BORDER_WRAP:
        idx = np.mod(p, n)
    elif mode == C.BORDER_REFLECT:
        q = np.mod(p, 2 * n)
        idx = np.where(q >= n, 2 * n - 1 - q, q)
    elif n == 1:
        idx = np.zeros_like(p)
    else:  # BORDER_REFLECT_101
        q = np.mod(p, 2 * (n - 1))
        idx = np.where(q >= n, 2 * (n - 1) - q, q)
    return np.ascontiguousarray(idx, dtype=np.intc)


def border_mode(border, func):
    mode = int(border) & ~C.BORDER_ISOLATED
    if mode not in _BORDERS:
        raise ValueError(f"mnn.cv.{func}: borderType {border} is not supported (use "
                         f"BORDER_CONSTANT, REPLICATE, REFLECT, WRAP or REFLECT_101)")
    return mode


def _out_dtype(ddepth, src_dtype, func):
    ddepth = int(ddepth)
    if ddepth < 0:
        return np.dtype(src_dtype)
    if ddepth not in _DEPTHS:
        raise ValueError(f"mnn.cv.{func}: ddepth {ddepth} is not supported")
    return np.dtype(_DEPTHS[ddepth])


def _limits(dtype):
    if dtype.kind == "f":
        return 0.0, 0.0
    info = np.iinfo(dtype)
    return float(info.min), float(info.max)


def _anchor(anchor, kw, kh, func):
    ax, ay = (-1, -1) if anchor is None else (int(anchor[0]), int(anchor[1]))
    ax = kw // 2 if ax < 0 else ax
    ay = kh // 2 if ay < 0 else ay
    if not (0 <= ax < kw and 0 <= ay < kh):
        raise ValueError(f"mnn.cv.{func}: anchor {anchor} is outside the {kw}x{kh} kernel")
    return ax, ay


def _flat(arr):
    h, w = arr.shape[:2]
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    return np.ascontiguousarray(arr).reshape(h, w * cn), cn


def _shape_back(out2d, arr):
    return out2d.reshape(arr.shape)


def _separable(arr, kx, ky, anchor, dtype, scale, delta, border, func):
    kx = np.ascontiguousarray(np.asarray(kx, dtype=np.float32).reshape(-1))
    ky = np.ascontiguousarray(np.asarray(ky, dtype=np.float32).reshape(-1))
    ax, ay = _anchor(anchor, len(kx), len(ky), func)
    h, w = arr.shape[:2]
    src, cn = _flat(arr)
    xidx = border_table(w, ax, len(kx) - 1 - ax, border)
    yidx = border_table(h, ay, len(ky) - 1 - ay, border)
    out = np.empty((h, w * cn), dtype=dtype)
    lo, hi = _limits(dtype)
    _k.sep_filter(src, cn, xidx, yidx, kx, ky, out, float(scale), float(delta), lo, hi,
                  threads(out.size * (len(kx) + len(ky))))
    return _shape_back(out, arr)


def _image(src, func, dtypes=_FILTER_DTYPES):
    return as_image(src, func, dtypes=dtypes)


def _ksize(ksize, func):
    try:
        kw, kh = (int(v) for v in ksize)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mnn.cv.{func}: ksize must be a (width, height) pair, "
                        f"got {ksize!r}") from exc
    return kw, kh


# ---------------------------------------------------------------- kernels
def getGaussianKernel(ksize, sigma, ktype=C.CV_64F):
    """The ksize x 1 Gaussian kernel OpenCV uses (fixed tables for small ksize, sigma <= 0).

    Returns
    -------
    ndarray
        Shape (ksize, 1), float64 (or float32 with ``ktype=CV_32F``).
    """
    ksize = check_int(ksize, "getGaussianKernel", "ksize", minimum=1)
    if ksize % 2 == 0:
        raise ValueError(f"mnn.cv.getGaussianKernel: ksize must be odd, got {ksize}")
    sigma = float(sigma)
    small = {1: [1.0], 3: [0.25, 0.5, 0.25], 5: [0.0625, 0.25, 0.375, 0.25, 0.0625],
             7: [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125],
             9: [v / 256.0 for v in (4, 13, 30, 51, 60, 51, 30, 13, 4)]}
    if sigma <= 0 and ksize in small:
        kernel = np.array(small[ksize])
    else:
        if sigma <= 0:
            sigma = ((ksize - 1) * 0.5 - 1) * 0.3 + 0.8
        x = np.arange(ksize) - (ksize - 1) * 0.5
        kernel = np.exp(-(x * x) / (2 * sigma * sigma))
        kernel /= kernel.sum()
    dtype = np.float32 if int(ktype) == C.CV_32F else np.float64
    return kernel.astype(dtype).reshape(-1, 1)


def _sobel_1d(order, ksize):
    if ksize == 1:
        ksize = 3 if order > 0 else 1
    if order >= ksize and not (ksize == 1 and order == 0):
        raise ValueError(f"mnn.cv: derivative order {order} needs an aperture larger "
                         f"than {ksize}")
    kernel = np.array([1.0])
    for _ in range(ksize - order - 1):  # binomial smoothing
        kernel = np.convolve(kernel, [1.0, 1.0])
    for _ in range(order):  # finite differences
        kernel = np.convolve(kernel, [-1.0, 1.0])
    return kernel, ksize


def getDerivKernels(dx, dy, ksize, normalize=False, ktype=C.CV_32F):
    """Separable Sobel (or Scharr, ``ksize=FILTER_SCHARR`` = -1) derivative kernels.

    Returns
    -------
    (kx, ky) : ndarrays of shape (n, 1)
    """
    dx, dy, ksize = int(dx), int(dy), int(ksize)
    dtype = np.float64 if int(ktype) == C.CV_64F else np.float32
    if ksize == -1:
        if not ((dx == 1 and dy == 0) or (dx == 0 and dy == 1)):
            raise ValueError("mnn.cv.getDerivKernels: Scharr needs (dx, dy) = (1, 0) or (0, 1)")
        kernels = []
        for order in (dx, dy):
            k = np.array([-1.0, 0.0, 1.0]) if order else np.array([3.0, 10.0, 3.0])
            if normalize:
                # OpenCV puts the whole 1/32 on the smoothing kernel.
                k = k if order else k / 32.0
            kernels.append(k.astype(dtype).reshape(-1, 1))
        return tuple(kernels)
    if ksize <= 0 or ksize % 2 == 0 or ksize > 31:
        raise ValueError(f"mnn.cv.getDerivKernels: ksize must be odd in 1..31 (or -1 for "
                         f"Scharr), got {ksize}")
    kernels = []
    for order in (dx, dy):
        k, size = _sobel_1d(order, ksize)
        if normalize:
            k = k / float(1 << (size - order - 1))
        kernels.append(k.astype(dtype).reshape(-1, 1))
    return tuple(kernels)


def getGaborKernel(ksize, sigma, theta, lambd, gamma, psi=math.pi * 0.5, ktype=C.CV_64F):
    """OpenCV's Gabor kernel: exp(-(x'^2 + gamma^2 y'^2) / 2 sigma^2) cos(2 pi x' / lambd +
    psi) with (x', y') rotated by ``theta``."""
    kw, kh = _ksize(ksize, "getGaborKernel")
    sigma_x, sigma_y = float(sigma), float(sigma) / float(gamma)
    c, s = math.cos(theta), math.sin(theta)
    nstds = 3
    xmax = kw // 2 if kw > 0 else int(round(max(abs(nstds * sigma_x * c),
                                                abs(nstds * sigma_y * s))))
    ymax = kh // 2 if kh > 0 else int(round(max(abs(nstds * sigma_x * s),
                                                abs(nstds * sigma_y * c))))
    ys, xs = np.mgrid[-ymax:ymax + 1, -xmax:xmax + 1].astype(np.float64)
    xr = xs * c + ys * s
    yr = -xs * s + ys * c
    k = np.exp(-0.5 / sigma_x ** 2 * xr * xr - 0.5 / sigma_y ** 2 * yr * yr) * \
        np.cos(2 * math.pi / lambd * xr + psi)
    k = k[::-1, ::-1]  # OpenCV stores (ymax - y, xmax - x)
    dtype = np.float32 if int(ktype) == C.CV_32F else np.float64
    return np.ascontiguousarray(k.astype(dtype))


# ---------------------------------------------------------------- linear filters
def sepFilter2D(src, ddepth, kernelX, kernelY, dst=None, anchor=(-1, -1), delta=0,
                borderType=C.BORDER_DEFAULT):
    """Row kernel then column kernel (``cv2.sepFilter2D``)."""
    arr, batch = _image(src, "sepFilter2D")
    dtype = _out_dtype(ddepth, arr.dtype, "sepFilter2D")
    mode = border_mode(borderType, "sepFilter2D")
    kx = as_array(kernelX, "sepFilter2D", "kernelX")
    ky = as_array(kernelY, "sepFilter2D", "kernelY")
    out = _separable(arr, kx, ky, anchor, dtype, 1.0, delta, mode, "sepFilter2D")
    return wrap(out, src, batch)


def filter2D(src, ddepth, kernel, dst=None, anchor=(-1, -1), delta=0,
             borderType=C.BORDER_DEFAULT):
    """Correlate with a 2-D kernel (``cv2.filter2D``)."""
    arr, batch = _image(src, "filter2D")
    dtype = _out_dtype(ddepth, arr.dtype, "filter2D")
    mode = border_mode(borderType, "filter2D")
    k = np.asarray(as_array(kernel, "filter2D", "kernel"), dtype=np.float64)
    if k.ndim == 1:
        k = k.reshape(1, -1)
    if k.ndim != 2 or k.size == 0:
        raise ValueError(f"mnn.cv.filter2D: kernel must be 2-D, got shape {k.shape}")
    kh, kw = k.shape
    ax, ay = _anchor(anchor, kw, kh, "filter2D")
    h, w = arr.shape[:2]
    flat, cn = _flat(arr)
    out = np.empty((h, w * cn), dtype=dtype)
    lo, hi = _limits(dtype)
    _k.filter2d(flat, cn, border_table(w, ax, kw - 1 - ax, mode),
                border_table(h, ay, kh - 1 - ay, mode),
                np.ascontiguousarray(k, dtype=np.float32), out, float(delta), lo, hi,
                threads(out.size * kh * kw))
    return wrap(_shape_back(out, arr), src, batch)


def boxFilter(src, ddepth, ksize, dst=None, anchor=(-1, -1), normalize=True,
              borderType=C.BORDER_DEFAULT):
    """Sum (or mean, with ``normalize``) over a ksize box (``cv2.boxFilter``)."""
    arr, batch = _image(src, "boxFilter")
    dtype = _out_dtype(ddepth, arr.dtype, "boxFilter")
    kw, kh = _ksize(ksize, "boxFilter")
    if kw < 1 or kh < 1:
        raise ValueError(f"mnn.cv.boxFilter: ksize must be positive, got {ksize}")
    mode = border_mode(borderType, "boxFilter")
    scale = 1.0 / (kw * kh) if normalize else 1.0
    out = _separable(arr, np.ones(kw), np.ones(kh), anchor, dtype, scale, 0.0, mode,
                     "boxFilter")
    return wrap(out, src, batch)


def blur(src, ksize, dst=None, anchor=(-1, -1), borderType=C.BORDER_DEFAULT):
    """Normalised box filter (``cv2.blur``)."""
    return boxFilter(src, -1, ksize, anchor=anchor, normalize=True, borderType=borderType)


def sqrBoxFilter(src, ddepth, ksize, dst=None, anchor=(-1, -1), normalize=True,
                 borderType=C.BORDER_DEFAULT):
    """Box filter of the squared pixel values (``cv2.sqrBoxFilter``); integer input gives
    float32 by default (``ddepth=-1``), as cv2."""
    arr, batch = _image(src, "sqrBoxFilter")
    if int(ddepth) < 0:
        dtype = np.dtype(np.float32) if arr.dtype.kind in "iu" else arr.dtype
    else:
        dtype = _out_dtype(ddepth, arr.dtype, "sqrBoxFilter")
    kw, kh = _ksize(ksize, "sqrBoxFilter")
    mode = border_mode(borderType, "sqrBoxFilter")
    sq = arr.astype(np.float64) ** 2
    scale = 1.0 / (kw * kh) if normalize else 1.0
    out = _separable(sq, np.ones(kw), np.ones(kh), anchor, dtype, scale, 0.0, mode,
                     "sqrBoxFilter")
    return wrap(out, src, batch)


def GaussianBlur(src, ksize, sigmaX, dst=None, sigmaY=0, borderType=C.BORDER_DEFAULT):
    """Gaussian smoothing (``cv2.GaussianBlur``).

    ``ksize`` (w, h) must be odd, or (0, 0) to derive it from the sigmas; ``sigmaY = 0``
    means ``sigmaX``.
    """
    arr, batch = _image(src, "GaussianBlur")
    kw, kh = _ksize(ksize, "GaussianBlur")
    sx, sy = float(sigmaX), float(sigmaY)
    if sy <= 0:
        sy = sx
    depth_factor = 3 if arr.dtype == np.uint8 else 4
    if kw <= 0 and sx > 0:
        kw = int(round(sx * depth_factor * 2 + 1)) | 1
    if kh <= 0 and sy > 0:
        kh = int(round(sy * depth_factor * 2 + 1)) | 1
    if kw <= 0 or kh <= 0 or kw % 2 == 0 or kh % 2 == 0:
        raise ValueError(f"mnn.cv.GaussianBlur: ksize must be positive and odd (or 0 with a "
                         f"positive sigma), got {ksize} with sigmaX={sigmaX}")
    mode = border_mode(borderType, "GaussianBlur")
    kx = getGaussianKernel(kw, sx)
    ky = getGaussianKernel(kh, sy)
    qx, qy = _q8(kx), _q8(ky)
    if arr.dtype == np.uint8 and qx is not None and qy is not None:
        out = _separable_u8q(arr, qx, qy, mode)
    else:
        out = _separable(arr, kx, ky, None, arr.dtype, 1.0, 0.0, mode, "GaussianBlur")
    return wrap(out, src, batch)


def _q8(kernel):
    # The kernel in 1/256 units when that is exact (OpenCV's fixed tables for small
    # ksize): uint8 images then follow OpenCV's bit-exact 8-bit fixed-point rule.
    q = np.asarray(kernel, dtype=np.float64).reshape(-1) * 256.0
    if np.any(q < 0) or np.any(q != np.round(q)) or q.sum() != 256.0:
        return None
    return np.ascontiguousarray(q.astype(np.uint16))


def _separable_u8q(arr, qx, qy, border):
    h, w = arr.shape[:2]
    src, cn = _flat(arr)
    xidx = border_table(w, len(qx) // 2, len(qx) // 2, border)
    yidx = border_table(h, len(qy) // 2, len(qy) // 2, border)
    out = np.empty((h, w * cn), dtype=np.uint8)
    _k.sep_filter_u8q(src, cn, xidx, yidx, qx, qy, out,
                      threads(out.size * (len(qx) + len(qy))))
    return _shape_back(out, arr)


def Sobel(src, ddepth, dx, dy, dst=None, ksize=3, scale=1, delta=0,
          borderType=C.BORDER_DEFAULT):
    """Image derivative with Sobel (or Scharr, ``ksize=-1``) kernels (``cv2.Sobel``)."""
    arr, batch = _image(src, "Sobel")
    dtype = _out_dtype(ddepth, arr.dtype, "Sobel")
    mode = border_mode(borderType, "Sobel")
    kx, ky = getDerivKernels(dx, dy, ksize, False, C.CV_64F)
    out = _separable(arr, kx, ky, None, dtype, scale, delta, mode, "Sobel")
    return wrap(out, src, batch)


def Scharr(src, ddepth, dx, dy, dst=None, scale=1, delta=0, borderType=C.BORDER_DEFAULT):
    """Scharr derivative (``cv2.Scharr``)."""
    return Sobel(src, ddepth, dx, dy, ksize=-1, scale=scale, delta=delta,
                 borderType=borderType)


def Laplacian(src, ddepth, dst=None, ksize=1, scale=1, delta=0,
              borderType=C.BORDER_DEFAULT):
    """Sum of second derivatives (``cv2.Laplacian``)."""
    ksize = int(ksize)
    if ksize in (1, 3):
        kernel = (np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]]) if ksize == 1
                  else np.array([[2, 0, 2], [0, -8, 0], [2, 0, 2]])) * float(scale)
        return filter2D(src, ddepth, kernel, delta=delta, borderType=borderType)
    arr, batch = _image(src, "Laplacian")
    dtype = _out_dtype(ddepth, arr.dtype, "Laplacian")
    mode = border_mode(borderType, "Laplacian")
    kxx, kyx = getDerivKernels(2, 0, ksize, False, C.CV_64F)
    kxy, kyy = getDerivKernels(0, 2, ksize, False, C.CV_64F)
    f64 = np.dtype(np.float64)
    d2x = _separable(arr, kxx, kyx, None, f64, 1.0, 0.0, mode, "Laplacian")
    d2y = _separable(arr, kxy, kyy, None, f64, 1.0, 0.0, mode, "Laplacian")
    total = (d2x + d2y) * float(scale) + float(delta)
    if dtype.kind != "f":
        lo, hi = _limits(dtype)
        total = np.clip(np.rint(total), lo, hi)
    return wrap(total.astype(dtype), src, batch)


def spatialGradient(src, dx=None, dy=None, ksize=3, borderType=C.BORDER_DEFAULT):
    """(dx, dy) int16 Sobel gradients of a uint8 gray image (``cv2.spatialGradient``)."""
    arr, _ = _image(src, "spatialGradient", dtypes=(np.uint8,))
    if arr.ndim != 2:
        raise ValueError(f"mnn.cv.spatialGradient: needs a single-channel image, got shape "
                         f"{arr.shape}")
    if int(ksize) != 3:
        raise ValueError(f"mnn.cv.spatialGradient: only ksize=3 exists, got {ksize}")
    mode = int(borderType)
    if mode not in (C.BORDER_DEFAULT, C.BORDER_REPLICATE):
        raise ValueError("mnn.cv.spatialGradient: borderType must be BORDER_DEFAULT or "
                         "BORDER_REPLICATE")
    gx = Sobel(arr, C.CV_16S, 1, 0, ksize=3, borderType=mode)
    gy = Sobel(arr, C.CV_16S, 0, 1, ksize=3, borderType=mode)
    return wrap(gx, src), wrap(gy, src)


def bilateralFilter(src, d, sigmaColor, sigmaSpace, dst=None, borderType=C.BORDER_DEFAULT):
    """Edge-preserving smoothing (``cv2.bilateralFilter``) for 1- or 3-channel images."""
    arr, batch = _image(src, "bilateralFilter", dtypes=(np.uint8, np.float32))
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    if cn not in (1, 3):
        raise ValueError(f"mnn.cv.bilateralFilter: needs 1 or 3 channels, got {cn}")
    mode = border_mode(borderType, "bilateralFilter")
    sc = float(sigmaColor) if sigmaColor > 0 else 1.0
    ss = float(sigmaSpace) if sigmaSpace > 0 else 1.0
    d = int(d)
    radius = d // 2 if d > 0 else int(round(ss * 1.5))
    radius = max(radius, 1)
    gauss_color = -0.5 / (sc * sc)
    gauss_space = -0.5 / (ss * ss)
    ys, xs = np.mgrid[-radius:radius + 1, -radius:radius + 1]
    r2 = ys * ys + xs * xs
    inside = np.sqrt(r2) <= radius
    offs = np.ascontiguousarray(np.stack([ys[inside], xs[inside]], axis=1), dtype=np.intc)
    space_w = np.exp(r2[inside] * gauss_space).astype(np.float32)
    if arr.dtype == np.uint8:
        idx = np.arange(cn * 256, dtype=np.float64)
        color_w = np.exp(idx * idx * gauss_color).astype(np.float32)
        color_scale = 1.0
    else:
        if not np.all(np.isfinite(arr)):
            raise ValueError("mnn.cv.bilateralFilter: the image has NaN or infinite values")
        lo, hi = float(arr.min()), float(arr.max())
        span = max(hi - lo, np.finfo(np.float32).eps) * cn
        bins = 2 ** 14
        color_scale = bins / span
        v = np.arange(bins + 2, dtype=np.float64) / color_scale
        color_w = np.exp(v * v * gauss_color).astype(np.float32)
    h, w = arr.shape[:2]
    flat, _ = _flat(arr)
    out = np.empty_like(flat)
    lo_, hi_ = _limits(arr.dtype)
    _k.bilateral(flat, cn, border_table(w, radius, radius, mode),
                 border_table(h, radius, radius, mode), offs, space_w, color_w,
                 float(color_scale), radius, out, lo_, hi_, threads(out.size * len(offs)))
    return wrap(_shape_back(out, arr), src, batch)


# ---------------------------------------------------------------- pyramids
_PYR = np.array([1.0, 4.0, 6.0, 4.0, 1.0])


def pyrDown(src, dst=None, dstsize=None, borderType=C.BORDER_DEFAULT):
    """Gaussian blur (5x5 binomial) then drop every other row and column."""
    arr, batch = _image(src, "pyrDown")
    mode = border_mode(borderType, "pyrDown")
    if mode == C.BORDER_CONSTANT:
        raise ValueError("mnn.cv.pyrDown: BORDER_CONSTANT is not supported (as in cv2)")
    h, w = arr.shape[:2]
    dw, dh = ((w + 1) // 2, (h + 1) // 2) if dstsize is None or tuple(dstsize) == (0, 0) \
        else (int(dstsize[0]), int(dstsize[1]))
    if abs(dw * 2 - w) > 2 or abs(dh * 2 - h) > 2 or dw <= 0 or dh <= 0:
        raise ValueError(f"mnn.cv.pyrDown: dstsize {dstsize} does not halve {w}x{h}")
    f64 = np.dtype(np.float64)
    full = _separable(arr, _PYR, _PYR, None, f64, 1.0 / 256.0, 0.0, mode, "pyrDown")
    # Output pixel (x, y) is the blurred source pixel (2x, 2y); beyond the source the
    # border rule picks the pixel, as for the blur itself.
    xs = border_table(w, 0, max(0, 2 * dw - w), mode)[0:2 * dw:2]
    ys = border_table(h, 0, max(0, 2 * dh - h), mode)[0:2 * dh:2]
    out = full[ys][:, xs]
    return wrap(_cast(out, arr.dtype), src, batch)


def _cast(values, dtype):
    if dtype.kind == "f":
        return values.astype(dtype)
    lo, hi = _limits(dtype)
    return np.clip(np.rint(values), lo, hi).astype(dtype)


def _up_axis(x, axis, n_out):
    # Zero-insertion upsampling followed by [1 4 6 4 1] / 8 along one axis: even outputs
    # (x[i-1] + 6 x[i] + x[i+1]) / 8, odd outputs (x[i] + x[i+1]) / 2; reflect-101 on the
    # left, the last pixel repeated on the right (OpenCV's pyrUp border).
    x = np.moveaxis(x, axis, 0)
    n = x.shape[0]
    prev = np.concatenate([x[1:2] if n > 1 else x[:1], x[:-1]], axis=0)
    nxt = np.concatenate([x[1:], x[-1:]], axis=0)
    even = (prev + 6.0 * x + nxt) / 8.0
    odd = (x + nxt) / 2.0
    out = np.empty((2 * n,) + x.shape[1:], dtype=np.float64)
    out[0::2], out[1::2] = even, odd
    if n_out > 2 * n:
        out = np.concatenate([out, out[-1:]], axis=0)
    return np.moveaxis(out[:n_out], 0, axis)


def pyrUp(src, dst=None, dstsize=None, borderType=C.BORDER_DEFAULT):
    """Upsample by 2 and smooth (``cv2.pyrUp``)."""
    arr, batch = _image(src, "pyrUp")
    if int(borderType) != C.BORDER_DEFAULT:
        raise ValueError("mnn.cv.pyrUp: only BORDER_DEFAULT is supported (as in cv2)")
    h, w = arr.shape[:2]
    dw, dh = (2 * w, 2 * h) if dstsize is None or tuple(dstsize) == (0, 0) \
        else (int(dstsize[0]), int(dstsize[1]))
    if abs(dw - 2 * w) > dw % 2 or abs(dh - 2 * h) > dh % 2:
        raise ValueError(f"mnn.cv.pyrUp: dstsize {dstsize} does not double {w}x{h}")
    x = arr.astype(np.float64)
    out = _up_axis(_up_axis(x, 1, dw), 0, dh)
    return wrap(_cast(out, arr.dtype), src, batch)
