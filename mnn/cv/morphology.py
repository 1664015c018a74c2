"""Morphology: erode, dilate and getStructuringElement (cv2's names and rules)."""
import numpy as np

from . import constants as C
from ._image import as_array, as_image, check_int, threads, wrap
from .filters import border_mode, border_table
from .._cython import image_filter as _k

__all__ = ["erode", "dilate", "getStructuringElement"]

_MORPH_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def getStructuringElement(shape, ksize, anchor=(-1, -1)):
    """A uint8 MORPH_RECT, MORPH_CROSS or MORPH_ELLIPSE element of size (w, h)."""
    shape = int(shape)
    kw, kh = (int(v) for v in ksize)
    if kw < 1 or kh < 1:
        raise ValueError(f"mnn.cv.getStructuringElement: ksize must be positive, got {ksize}")
    ax, ay = (int(anchor[0]), int(anchor[1])) if anchor is not None else (-1, -1)
    ax = kw // 2 if ax < 0 else ax
    ay = kh // 2 if ay < 0 else ay
    if kw == 1 and kh == 1:
        shape = C.MORPH_RECT
    elem = np.zeros((kh, kw), dtype=np.uint8)
    if shape == C.MORPH_RECT:
        elem[:] = 1
    elif shape == C.MORPH_CROSS:
        elem[ay, :] = 1
        elem[:, ax] = 1
    elif shape == C.MORPH_ELLIPSE:
        r, c = kh // 2, kw // 2
        inv_r2 = 1.0 / (r * r) if r else 0.0
        for i in range(kh):
            dy = i - r
            if abs(dy) <= r:
                dx = int(np.rint(c * np.sqrt((r * r - dy * dy) * inv_r2)))
                elem[i, max(c - dx, 0):min(c + dx + 1, kw)] = 1
    else:
        raise ValueError(f"mnn.cv.getStructuringElement: shape must be MORPH_RECT, "
                         f"MORPH_CROSS or MORPH_ELLIPSE, got {shape}")
    return elem


def _morph(src, kernel, anchor, iterations, border_type, border_value, dilate, func):
    arr, batch = as_image(src, func, dtypes=_MORPH_DTYPES)
    iterations = check_int(iterations, func, "iterations", minimum=0)
    if kernel is None or np.asarray(kernel).size == 0:
        # OpenCV: an empty kernel means a centred 3x3 square, iterations folded in.
        k = np.ones((1 + 2 * iterations, 1 + 2 * iterations), dtype=np.uint8)
        anchor, iterations = (iterations, iterations), min(iterations, 1)
    else:
        k = np.asarray(as_array(kernel, func, "kernel"))
        if k.ndim != 2 or k.size == 0:
            raise ValueError(f"mnn.cv.{func}: kernel must be a non-empty 2-D array, got shape "
                             f"{k.shape}")
    kh, kw = k.shape
    ax, ay = (-1, -1) if anchor is None else (int(anchor[0]), int(anchor[1]))
    ax = kw // 2 if ax < 0 else ax
    ay = kh // 2 if ay < 0 else ay
    if not (0 <= ax < kw and 0 <= ay < kh):
        raise ValueError(f"mnn.cv.{func}: anchor {anchor} is outside the {kw}x{kh} kernel")
    if iterations > 1 and np.count_nonzero(k) == k.size:
        # A full rectangle applied n times is one rectangle n-1 times wider (OpenCV does
        # this, and it changes the result near non-constant borders).
        ax, ay = ax * iterations, ay * iterations
        kw, kh = kw + (iterations - 1) * (kw - 1), kh + (iterations - 1) * (kh - 1)
        k = np.ones((kh, kw), dtype=np.uint8)
        iterations = 1
    taps = np.ascontiguousarray(np.argwhere(k != 0), dtype=np.intc)
    mode = border_mode(border_type, func)
    if arr.dtype.kind == "f":
        lo, hi = -np.inf, np.inf
    else:
        info = np.iinfo(arr.dtype)
        lo, hi = float(info.min), float(info.max)
    h, w = arr.shape[:2]
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    vals = None if border_value is None else \
        [float(v) for v in np.asarray(border_value, dtype=np.float64).reshape(-1)]
    if vals is None or abs(vals[0]) >= 1e300:
        # OpenCV's default (DBL_MAX): a constant border that never wins the min / max.
        bval = np.full(cn, lo if dilate else hi)
    else:
        # A cv::Scalar: missing channels are 0.
        vals = (vals + [0.0] * cn)[:cn] if len(vals) > 1 else [vals[0]] + [0.0] * (cn - 1)
        bval = np.clip(np.array(vals), lo, hi)
    bval = np.ascontiguousarray(bval, dtype=np.float64)
    cur = np.ascontiguousarray(arr).reshape(h, w * cn)
    if len(taps) == 0 or iterations == 0:
        return wrap(arr.copy(), src, batch)
    xidx = border_table(w, ax, kw - 1 - ax, mode)
    yidx = border_table(h, ay, kh - 1 - ay, mode)
    for _ in range(iterations):
        out = np.empty_like(cur)
        _k.morph(cur, cn, xidx, yidx, taps, out, int(dilate), bval,
                 threads(out.size * len(taps)))
        cur = out
    return wrap(cur.reshape(arr.shape), src, batch)


def erode(src, kernel, dst=None, anchor=(-1, -1), iterations=1,
          borderType=C.BORDER_CONSTANT, borderValue=None):
    """Minimum over the structuring element (``cv2.erode``); ``kernel=None`` is 3x3."""
    return _morph(src, kernel, anchor, iterations, borderType, borderValue, False, "erode")


def dilate(src, kernel, dst=None, anchor=(-1, -1), iterations=1,
           borderType=C.BORDER_CONSTANT, borderValue=None):
    """Maximum over the structuring element (``cv2.dilate``); ``kernel=None`` is 3x3."""
    return _morph(src, kernel, anchor, iterations, borderType, borderValue, True, "dilate")
