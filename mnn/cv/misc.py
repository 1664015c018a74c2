"""Per-pixel and array helpers: threshold, adaptiveThreshold, addWeighted, blendLinear,
normalize, merge, split, hconcat, vconcat, copyTo, bitwise ops with masks, mean
(cv2's names, arguments and rounding)."""
import numpy as np

from . import constants as cvc
from ._image import as_array, as_image, saturate, scalar4, wrap
from .filters import _separable, boxFilter, getGaussianKernel

__all__ = ["threshold", "adaptiveThreshold", "addWeighted", "blendLinear", "normalize",
           "merge", "split", "hconcat", "vconcat", "copyTo", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "mean"]

_ANY = (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)


# ---------------------------------------------------------------- thresholds
def _otsu(img):
    hist = np.bincount(img.reshape(-1), minlength=256).astype(np.float64)
    p = hist / img.size
    mu = float((np.arange(256) * p).sum())
    q1 = mu1 = 0.0
    best, best_t = 0.0, 0
    eps = np.finfo(np.float32).eps
    for i in range(256):
        p_i = p[i]
        q1_new = q1 + p_i
        q2 = 1.0 - q1_new
        if min(q1_new, q2) < eps or max(q1_new, q2) > 1.0 - eps:
            q1 = q1_new
            continue
        mu1 = (mu1 * q1 + i * p_i) / q1_new
        q1 = q1_new
        mu2 = (mu - q1 * mu1) / q2
        sigma = q1 * q2 * (mu1 - mu2) ** 2
        if sigma > best:
            best, best_t = sigma, i
    return float(best_t)


def _triangle(img):
    hist = np.bincount(img.reshape(-1), minlength=256)
    nz = np.nonzero(hist)[0]
    left, right = int(nz[0]), int(nz[-1])
    left = left - 1 if left > 0 else left
    right = right + 1 if right < 255 else right
    peak = int(np.argmax(hist))
    flipped = False
    if peak - left < right - peak:
        flipped = True
        hist = hist[::-1]
        left = 255 - right
        peak = 255 - peak
    thresh = left
    a, b = float(hist[peak]), float(left - peak)
    dist = 0.0
    for i in range(left + 1, peak + 1):
        d = a * i + b * hist[i]
        if d > dist:
            dist, thresh = d, i
    thresh -= 1
    return float(255 - thresh if flipped else thresh)


def threshold(src, thresh, maxval, type, dst=None):  # noqa: A002 - cv2's keyword name
    """Fixed-level threshold (``cv2.threshold``); returns ``(retval, dst)``.

    ``type`` is THRESH_BINARY, _BINARY_INV, _TRUNC, _TOZERO or _TOZERO_INV, optionally or-ed
    with THRESH_OTSU or THRESH_TRIANGLE (uint8 single-channel images), which pick the
    threshold and return it as ``retval``.
    """
    arr, batch = as_image(src, "threshold", dtypes=(np.uint8, np.int16, np.uint16,
                                                    np.float32, np.float64))
    kind = int(type) & 7
    auto = int(type) & (cvc.THRESH_OTSU | cvc.THRESH_TRIANGLE)
    if kind > cvc.THRESH_TOZERO_INV:
        raise ValueError(f"mnn.cv.threshold: unknown threshold type {type}")
    if auto:
        if arr.dtype != np.uint8 or (arr.ndim == 3 and arr.shape[2] != 1):
            raise ValueError("mnn.cv.threshold: THRESH_OTSU/THRESH_TRIANGLE need a uint8 "
                             "single-channel image")
        thresh = _otsu(arr) if auto & cvc.THRESH_OTSU else _triangle(arr)
    thresh, maxval = float(thresh), float(maxval)
    if arr.dtype.kind in "iu":
        # OpenCV compares integer pixels with floor(thresh) and writes round(maxval).
        thresh = float(np.floor(thresh))
        info = np.iinfo(arr.dtype)
        maxval = float(np.clip(np.rint(maxval), info.min, info.max))
    above = arr > thresh
    mx = np.asarray(maxval).astype(arr.dtype)
    zero = np.zeros((), dtype=arr.dtype)
    if kind == cvc.THRESH_BINARY:
        out = np.where(above, mx, zero)
    elif kind == cvc.THRESH_BINARY_INV:
        out = np.where(above, zero, mx)
    elif kind == cvc.THRESH_TRUNC:
        out = np.where(above, saturate(np.asarray(thresh), arr.dtype), arr)
    elif kind == cvc.THRESH_TOZERO:
        out = np.where(above, arr, zero)
    else:
        out = np.where(above, zero, arr)
    return thresh, wrap(out.astype(arr.dtype), src, batch)


def adaptiveThreshold(src, maxValue, adaptiveMethod, thresholdType, blockSize, C, dst=None):  # noqa: N803
    """Threshold against the local (box or Gaussian) mean minus ``C``
    (``cv2.adaptiveThreshold``; uint8 single-channel images)."""
    arr, batch = as_image(src, "adaptiveThreshold", dtypes=(np.uint8,))
    if arr.ndim == 3 and arr.shape[2] != 1:
        raise ValueError("mnn.cv.adaptiveThreshold: needs a single-channel image")
    arr = arr.reshape(arr.shape[:2])
    block = int(blockSize)
    if block % 2 == 0 or block <= 1:
        raise ValueError(f"mnn.cv.adaptiveThreshold: blockSize must be odd and > 1, got {block}")
    method, kind = int(adaptiveMethod), int(thresholdType)
    if method == cvc.ADAPTIVE_THRESH_MEAN_C:
        local = boxFilter(arr, -1, (block, block), borderType=cvc.BORDER_REPLICATE)
    elif method == cvc.ADAPTIVE_THRESH_GAUSSIAN_C:
        # Float weights rounded to nearest: OpenCV's adaptiveThreshold does not take
        # GaussianBlur's bit-exact 8-bit fixed-point path.
        kernel = getGaussianKernel(block, 0)
        local = _separable(arr, kernel, kernel, None, arr.dtype, 1.0, 0.0,
                           cvc.BORDER_REPLICATE, "adaptiveThreshold")
    else:
        raise ValueError(f"mnn.cv.adaptiveThreshold: unknown adaptiveMethod {method}")
    if kind not in (cvc.THRESH_BINARY, cvc.THRESH_BINARY_INV):
        raise ValueError("mnn.cv.adaptiveThreshold: thresholdType must be THRESH_BINARY or "
                         "THRESH_BINARY_INV")
    imax = np.uint8(np.clip(np.rint(maxValue), 0, 255))
    delta = np.ceil(C) if kind == cvc.THRESH_BINARY else np.floor(C)
    diff = arr.astype(np.int32) - local.astype(np.int32)
    passed = diff > -delta if kind == cvc.THRESH_BINARY else diff <= -delta
    out = np.where(passed, imax, np.uint8(0)).astype(np.uint8)
    return wrap(out, src, batch)


# ---------------------------------------------------------------- arithmetic
def _pair(src1, src2, func):
    a, batch = as_image(src1, func, "src1", dtypes=_ANY)
    b, _ = as_image(src2, func, "src2", dtypes=_ANY)
    if a.shape != b.shape:
        raise ValueError(f"mnn.cv.{func}: src1 {a.shape} and src2 {b.shape} differ in shape")
    return a, b, batch


def addWeighted(src1, alpha, src2, beta, gamma, dst=None, dtype=-1):
    """saturate(src1 * alpha + src2 * beta + gamma) (``cv2.addWeighted``)."""
    a, b, batch = _pair(src1, src2, "addWeighted")
    if a.dtype != b.dtype and int(dtype) < 0:
        raise TypeError(f"mnn.cv.addWeighted: src1 {a.dtype} and src2 {b.dtype} differ; "
                        "give dtype")
    from .filters import _out_dtype

    out_dtype = _out_dtype(dtype, a.dtype, "addWeighted")
    work = np.float32 if a.dtype.itemsize <= 2 and out_dtype.itemsize <= 4 else np.float64
    val = a.astype(work) * work(alpha) + b.astype(work) * work(beta) + work(gamma)
    return wrap(saturate(val, out_dtype), src1, batch)


def blendLinear(src1, src2, weights1, weights2, dst=None):
    """(w1 * src1 + w2 * src2) / (w1 + w2 + 1e-5) per pixel (``cv2.blendLinear``)."""
    a, b, batch = _pair(src1, src2, "blendLinear")
    w1 = np.asarray(as_array(weights1, "blendLinear", "weights1"), dtype=np.float32)
    w2 = np.asarray(as_array(weights2, "blendLinear", "weights2"), dtype=np.float32)
    if w1.shape != a.shape[:2] or w2.shape != a.shape[:2]:
        raise ValueError(f"mnn.cv.blendLinear: weights must have shape {a.shape[:2]}, got "
                         f"{w1.shape} and {w2.shape}")
    if a.ndim == 3:
        w1, w2 = w1[..., None], w2[..., None]
    val = (a.astype(np.float32) * w1 + b.astype(np.float32) * w2) / (w1 + w2 + np.float32(1e-5))
    return wrap(saturate(val, a.dtype), src1, batch)


def _mask(mask, shape, func):
    if mask is None:
        return None
    m = np.asarray(as_array(mask, func, "mask"))
    if m.ndim == 3 and m.shape[2] == 1:
        m = m[..., 0]
    if m.shape != tuple(shape[:2]):
        raise ValueError(f"mnn.cv.{func}: mask must have shape {tuple(shape[:2])}, got "
                         f"{m.shape}")
    return m != 0


def normalize(src, dst=None, alpha=1, beta=0, norm_type=cvc.NORM_L2, dtype=-1, mask=None):
    """Scale to a norm or a [alpha, beta] range (``cv2.normalize``)."""
    arr, batch = as_image(src, "normalize", dtypes=_ANY)
    from .filters import _out_dtype

    out_dtype = _out_dtype(dtype, arr.dtype, "normalize")
    m = _mask(mask, arr.shape, "normalize")
    x = arr.astype(np.float64)
    sel = x if m is None else x[m]
    kind = int(norm_type)
    if kind == cvc.NORM_MINMAX:
        smin, smax = (float(sel.min()), float(sel.max())) if sel.size else (0.0, 0.0)
        dmin, dmax = min(alpha, beta), max(alpha, beta)
        scale = (dmax - dmin) * (1.0 / (smax - smin) if smax - smin > np.finfo(float).eps
                                 else 0.0)
        shift = dmin - smin * scale
    elif kind in (cvc.NORM_INF, cvc.NORM_L1, cvc.NORM_L2):
        if kind == cvc.NORM_INF:
            norm = float(np.abs(sel).max()) if sel.size else 0.0
        elif kind == cvc.NORM_L1:
            norm = float(np.abs(sel).sum())
        else:
            norm = float(np.sqrt((sel * sel).sum()))
        scale = float(alpha) / norm if norm > np.finfo(float).eps else 0.0
        shift = 0.0
    else:
        raise ValueError(f"mnn.cv.normalize: norm_type {norm_type} is not supported")
    out = saturate(x * scale + shift, out_dtype)
    if m is not None:
        base = np.zeros_like(out) if dst is None else np.array(as_array(dst, "normalize", "dst"),
                                                               dtype=out_dtype)
        base[m] = out[m]
        out = base
    return wrap(out, src, batch)


# ---------------------------------------------------------------- channels and tiling
def merge(mv):
    """Stack single-channel images (or multi-channel ones) into one HWC image."""
    planes = [np.asarray(as_array(p, "merge", "mv")) for p in mv]
    if not planes:
        raise ValueError("mnn.cv.merge: mv is empty")
    parts = [p[..., None] if p.ndim == 2 else p for p in planes]
    shapes = {p.shape[:2] for p in parts}
    dtypes = {p.dtype for p in parts}
    if len(shapes) != 1 or len(dtypes) != 1:
        raise ValueError(f"mnn.cv.merge: planes differ in size or dtype: "
                         f"{[p.shape for p in planes]} {[str(p.dtype) for p in planes]}")
    out = np.concatenate(parts, axis=2)
    return wrap(out, mv[0])


def split(m):
    """The channels of an image as a tuple of HW arrays."""
    arr, _ = as_image(m, "split", dtypes=_ANY)
    if arr.ndim == 2:
        return (wrap(arr.copy(), m),)
    return tuple(wrap(np.ascontiguousarray(arr[..., c]), m) for c in range(arr.shape[2]))


def _concat(src, axis, func):
    arrs = [np.asarray(as_array(a, func, "src")) for a in src]
    if not arrs:
        raise ValueError(f"mnn.cv.{func}: src is empty")
    other = 0 if axis == 1 else 1
    if len({a.shape[other] for a in arrs}) != 1 or len({a.shape[2:] for a in arrs}) != 1 \
            or len({a.dtype for a in arrs}) != 1:
        raise ValueError(f"mnn.cv.{func}: images must share "
                         f"{'height' if axis == 1 else 'width'}, channels and dtype, got "
                         f"{[a.shape for a in arrs]}")
    return wrap(np.concatenate(arrs, axis=axis), src[0])


def hconcat(src):
    """Place images side by side."""
    return _concat(src, 1, "hconcat")


def vconcat(src):
    """Stack images vertically."""
    return _concat(src, 0, "vconcat")


def copyTo(src, mask, dst=None):
    """``src`` where ``mask`` is non-zero, ``dst`` (or zeros) elsewhere."""
    arr, batch = as_image(src, "copyTo", dtypes=_ANY)
    m = _mask(mask, arr.shape, "copyTo")
    out = np.zeros_like(arr) if dst is None else np.array(as_array(dst, "copyTo", "dst"),
                                                          dtype=arr.dtype)
    if out.shape != arr.shape:
        raise ValueError(f"mnn.cv.copyTo: dst shape {out.shape} differs from src {arr.shape}")
    if m is None:
        out[...] = arr
    else:
        out[m] = arr[m]
    return wrap(out, src, batch)


def _bitwise(op, src1, src2, dst, mask, func):
    a, batch = as_image(src1, func, "src1", dtypes=_ANY)
    if a.dtype.kind == "f":
        a_bits = a.view(np.uint32 if a.dtype == np.float32 else np.uint64)
    else:
        a_bits = a
    if src2 is None:
        res = np.invert(a_bits)
    else:
        if np.isscalar(src2) or np.asarray(src2).size <= 4 and np.asarray(src2).ndim <= 1:
            b = np.broadcast_to(_scalar_image(src2, a), a.shape)
        else:
            b, _ = as_image(src2, func, "src2", dtypes=_ANY)
            if b.shape != a.shape or b.dtype != a.dtype:
                raise ValueError(f"mnn.cv.{func}: src1 {a.shape} {a.dtype} and src2 "
                                 f"{b.shape} {b.dtype} differ")
        b_bits = b.view(a_bits.dtype) if b.dtype != a_bits.dtype else b
        res = op(a_bits, b_bits)
    res = res.view(a.dtype)
    m = _mask(mask, a.shape, func)
    if m is not None:
        out = np.zeros_like(a) if dst is None else np.array(as_array(dst, func, "dst"),
                                                            dtype=a.dtype)
        out[m] = res[m]
        res = out
    return wrap(res, src1, batch)


def _scalar_image(value, like):
    vals = scalar4(value, "bitwise")
    cn = 1 if like.ndim == 2 else like.shape[2]
    return saturate(np.array(vals[:cn] if like.ndim == 3 else vals[0]), like.dtype)


def bitwise_and(src1, src2, dst=None, mask=None):
    """Per-element AND, optionally only where ``mask`` is non-zero."""
    return _bitwise(np.bitwise_and, src1, src2, dst, mask, "bitwise_and")


def bitwise_or(src1, src2, dst=None, mask=None):
    """Per-element OR, optionally only where ``mask`` is non-zero."""
    return _bitwise(np.bitwise_or, src1, src2, dst, mask, "bitwise_or")


def bitwise_xor(src1, src2, dst=None, mask=None):
    """Per-element XOR, optionally only where ``mask`` is non-zero."""
    return _bitwise(np.bitwise_xor, src1, src2, dst, mask, "bitwise_xor")


def bitwise_not(src, dst=None, mask=None):
    """Per-element NOT, optionally only where ``mask`` is non-zero."""
    return _bitwise(None, src, None, dst, mask, "bitwise_not")


def mean(src, mask=None):
    """Per-channel mean as a 4-tuple (``cv2.mean``)."""
    arr, _ = as_image(src, "mean", dtypes=_ANY)
    m = _mask(mask, arr.shape, "mean")
    x = arr.astype(np.float64).reshape(arr.shape[0], arr.shape[1], -1)
    if m is not None:
        x = x[m]
        if x.size == 0:
            return (0.0, 0.0, 0.0, 0.0)
    vals = x.reshape(-1, x.shape[-1]).mean(axis=0).tolist()
    return tuple(vals + [0.0] * (4 - len(vals)))
