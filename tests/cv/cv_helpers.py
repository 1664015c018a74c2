"""Helpers shared by the mnn.cv tests: generated images and cv2 comparisons."""
import numpy as np

import mnn.expr as F


def photo_like(h, w, channels=3, seed=0):
    """Smooth gradients, blobs, hard edges and mild noise: what real photos mix."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    planes = []
    for c in range(channels):
        fx, fy = rng.uniform(0.5, 4.0, size=2)
        base = 127 + 90 * np.sin(2 * np.pi * (fx * xx / w + c * 0.3)) * np.cos(
            2 * np.pi * fy * yy / h)
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.3) * min(h, w)
        base += 60 * ((xx - cx) ** 2 + (yy - cy) ** 2 < r * r)
        base[h // 3: h // 2, w // 4: w // 2] = 20 + 50 * c  # a flat rectangle with hard edges
        base += rng.normal(0, 6, size=(h, w))
        planes.append(base)
    img = np.clip(np.stack(planes, axis=2), 0, 255).astype(np.uint8)
    return img[..., 0] if channels == 1 else img


def as_var(arr):
    return F.const(arr)


def assert_close_u8(ours, theirs, tol=1, frac=1.0):
    """uint8 results within ``tol`` of cv2 (on at least ``frac`` of the values)."""
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    diff = np.abs(ours.astype(np.int64) - theirs.astype(np.int64))
    if frac >= 1.0:
        where = np.unravel_index(diff.argmax(), diff.shape)
        assert diff.max() <= tol, f"max diff {diff.max()} at {where}"
    else:
        assert np.mean(diff <= tol) >= frac, f"only {np.mean(diff <= tol):.4f} within {tol}"
