"""Tap tables for separable resizing, following OpenCV's coordinate rules.

Each builder returns ``(offsets, weights)`` with shape ``(dst_size, K)``: output index
``d`` reads source indices ``offsets[d]`` (already clamped into ``[0, src_size)``, which
is OpenCV's replicate rule at the image edge) with ``weights[d]``.
"""
import math

import numpy as np

from . import constants as C

_COEF_BITS = 11  # OpenCV's INTER_RESIZE_COEF_BITS for 8-bit images
_COEF_SCALE = 1 << _COEF_BITS


def _source_positions(dsize, scale):
    # fx = (d + 0.5) * scale - 0.5, rounded to float32 as OpenCV stores it.
    d = np.arange(dsize, dtype=np.float64)
    fx = ((d + 0.5) * scale - 0.5).astype(np.float32)
    sx = np.floor(fx).astype(np.int64)
    frac = (fx - sx.astype(np.float32)).astype(np.float32)
    return sx, frac


def _cubic_weights(x):
    a = np.float32(-0.75)
    x = x.astype(np.float32)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    c3 = 1 - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.float32)


def _lanczos4_weights(x):
    x = x.astype(np.float64)
    t = x[:, None] + 3.0 - np.arange(8)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.sin(np.pi * t) * np.sin(np.pi * t / 4.0) / (np.pi * np.pi * t * t / 4.0)
    w = np.where(np.abs(t) < 1e-12, 1.0, w)
    exact = x < np.finfo(np.float32).eps
    w[exact] = 0.0
    w[exact, 3] = 1.0
    w /= w.sum(axis=1, keepdims=True)
    return w.astype(np.float32)


def _clamped(start, k, ssize):
    offs = start[:, None] + np.arange(k)[None, :]
    return np.clip(offs, 0, ssize - 1).astype(np.intc)


def linear_like(ssize, dsize, scale, inv_scale, interpolation):
    """Taps for INTER_LINEAR, INTER_CUBIC, INTER_LANCZOS4 and INTER_AREA upscaling."""
    if interpolation == C.INTER_AREA:
        d = np.arange(dsize, dtype=np.float64)
        sx = np.floor(d * scale).astype(np.int64)
        fx = ((d + 1) - (sx + 1) * inv_scale).astype(np.float32)
        fx = np.where(fx <= 0, np.float32(0), fx - np.floor(fx)).astype(np.float32)
        interpolation = C.INTER_LINEAR
    else:
        sx, fx = _source_positions(dsize, scale)
    if interpolation == C.INTER_LINEAR:
        low = sx < 0
        high = sx >= ssize - 1
        fx = np.where(low | high, np.float32(0), fx).astype(np.float32)
        sx = np.where(low, 0, np.where(high, ssize - 1, sx))
        weights = np.stack([1 - fx, fx], axis=1).astype(np.float32)
        return _clamped(sx, 2, ssize), weights
    if interpolation == C.INTER_CUBIC:
        return _clamped(sx - 1, 4, ssize), _cubic_weights(fx)
    return _clamped(sx - 3, 8, ssize), _lanczos4_weights(fx)


def area(ssize, dsize, scale):
    """Box-filter taps for INTER_AREA downscaling: each output cell averages its footprint."""
    entries = []
    for d in range(dsize):
        fs1 = d * scale
        fs2 = fs1 + scale
        cell = min(scale, ssize - fs1)
        s1 = math.ceil(fs1)
        s2 = min(math.floor(fs2), ssize - 1)
        s1 = min(s1, s2)
        taps = []
        if s1 - fs1 > 1e-3:
            taps.append((s1 - 1, (s1 - fs1) / cell))
        for s in range(s1, s2):
            taps.append((s, 1.0 / cell))
        if fs2 - s2 > 1e-3:
            taps.append((s2, min(min(fs2 - s2, 1.0), cell) / cell))
        entries.append(taps)
    k = max(len(t) for t in entries)
    offs = np.zeros((dsize, k), dtype=np.intc)
    weights = np.zeros((dsize, k), dtype=np.float32)
    for d, taps in enumerate(entries):
        for j, (s, w) in enumerate(taps):
            offs[d, j] = s
            weights[d, j] = w
        # Unused taps repeat the last index with weight 0 (always a valid read).
        offs[d, len(taps):] = taps[-1][0]
    return offs, weights


def nearest(ssize, dsize, scale, exact):
    """Source index per output index for INTER_NEAREST(_EXACT)."""
    d = np.arange(dsize, dtype=np.int64)
    if exact:
        step = ((ssize << 16) + dsize // 2) // dsize
        start = step // 2 - ssize % 2
        idx = (step * d + start) >> 16
    else:
        idx = np.floor(d * scale).astype(np.int64)
    return np.clip(idx, 0, ssize - 1).astype(np.intc)


def fixed_point(weights):
    """OpenCV's 11-bit integer weights for 8-bit images (each weight rounded)."""
    if weights.shape[1] == 2:
        w0 = np.rint(weights[:, 0] * _COEF_SCALE).astype(np.intc)
        return np.stack([w0, _COEF_SCALE - w0], axis=1).astype(np.intc)
    return np.rint(weights * _COEF_SCALE).astype(np.intc)
