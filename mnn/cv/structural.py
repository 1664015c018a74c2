"""Shape analysis: contourArea, boundingRect, convexHull, minAreaRect, boxPoints,
connectedComponentsWithStats (cv2's names, arguments and output conventions)."""
import math

import numpy as np

from ._image import as_array, as_image

__all__ = ["contourArea", "boundingRect", "convexHull", "minAreaRect", "boxPoints",
           "connectedComponentsWithStats"]


def _points(points, func):
    arr = np.asarray(as_array(points, func, "points"))
    if arr.size == 0 or arr.size % 2:
        raise ValueError(f"mnn.cv.{func}: points must be N x 2 coordinates, got shape "
                         f"{arr.shape}")
    return arr.reshape(-1, 2)


def contourArea(contour, oriented=False):
    """Polygon area by the shoelace formula; signed when ``oriented`` is True."""
    pts = _points(contour, "contourArea").astype(np.float64)
    if len(pts) < 3:
        return 0.0
    x, y = pts[:, 0], pts[:, 1]
    xp, yp = np.roll(x, 1), np.roll(y, 1)
    area = 0.5 * float(np.sum(xp * y - x * yp))
    return area if oriented else abs(area)


def boundingRect(array):
    """Upright bounding box ``(x, y, w, h)`` of a point set or of a mask's non-zero pixels."""
    arr = np.asarray(as_array(array, "boundingRect", "array"))
    if arr.ndim == 2 and arr.shape[1] != 2:
        ys, xs = np.nonzero(arr)
        if len(xs) == 0:
            return (0, 0, 0, 0)
        return (int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1),
                int(ys.max() - ys.min() + 1))
    pts = _points(arr, "boundingRect")
    if pts.dtype.kind == "f":
        lo = np.floor(pts.min(axis=0)).astype(int)
        hi = np.floor(pts.max(axis=0)).astype(int)
    else:
        lo, hi = pts.min(axis=0).astype(int), pts.max(axis=0).astype(int)
    return (int(lo[0]), int(lo[1]), int(hi[0] - lo[0] + 1), int(hi[1] - lo[1] + 1))


def _hull_indices(pts):
    # Andrew's monotone chain; returns indices in counter-clockwise order (y up), i.e.
    # clockwise on screen, starting from the lowest-x (then lowest-y) point.
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    if len(order) < 3:
        return list(dict.fromkeys(order.tolist()))

    def cross(o, a, b):
        return ((pts[a, 0] - pts[o, 0]) * (pts[b, 1] - pts[o, 1])
                - (pts[a, 1] - pts[o, 1]) * (pts[b, 0] - pts[o, 0]))
    lower, upper = [], []
    for i in order:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], i) <= 0:
            lower.pop()
        lower.append(int(i))
    for i in order[::-1]:
        while len(upper) >= 2 and cross(upper[-2], upper[-1], i) <= 0:
            upper.pop()
        upper.append(int(i))
    return lower[:-1] + upper[:-1]


def convexHull(points, hull=None, clockwise=False, returnPoints=True):
    """Convex hull of a point set (``cv2.convexHull``).

    Returns the hull points as (n, 1, 2) in the input's dtype (or their indices as (n, 1)
    int32 with ``returnPoints=False``), counter-clockwise on screen by default and starting
    from the point of greatest x, as OpenCV orders them.
    """
    pts = _points(points, "convexHull")
    p64 = pts.astype(np.float64)
    idx = _hull_indices(p64)
    if clockwise:
        idx = idx[::-1]
    # OpenCV starts at the point with the largest x (largest y among ties) for the
    # default order, and at the smallest x (smallest y among ties) for the clockwise one.
    key = [(-p64[i, 0], -p64[i, 1]) if not clockwise else (p64[i, 0], p64[i, 1])
           for i in idx]
    start = min(range(len(idx)), key=lambda j: key[j])
    idx = idx[start:] + idx[:start]
    # When the point indices run monotonically around the hull, OpenCV starts the hull at
    # the extreme index so that they are sorted.
    for pick, ordered in ((min, lambda s: all(a < b for a, b in zip(s, s[1:]))),
                          (max, lambda s: all(a > b for a, b in zip(s, s[1:])))):
        k = idx.index(pick(idx))
        rotated = idx[k:] + idx[:k]
        if ordered(rotated):
            idx = rotated
            break
    if not returnPoints:
        return np.array(idx, dtype=np.int32).reshape(-1, 1)
    return pts[idx].reshape(-1, 1, 2)


def minAreaRect(points):
    """Smallest rotated rectangle ``((cx, cy), (w, h), angle)`` enclosing the points,
    with OpenCV 5's convention: angle in [-90, 0), width along the angle's direction."""
    pts = _points(points, "minAreaRect").astype(np.float64)
    hull = pts[_hull_indices(pts)]
    if len(hull) == 1:
        return ((float(hull[0, 0]), float(hull[0, 1])), (0.0, 0.0), 0.0)
    if len(hull) == 2:
        d = hull[1] - hull[0]
        centre = hull.mean(axis=0)
        angle = math.degrees(math.atan2(d[1], d[0]))
        return _canonical(centre, float(np.hypot(*d)), 0.0, angle)
    best = None
    for i in range(len(hull)):
        edge = hull[(i + 1) % len(hull)] - hull[i]
        length = np.hypot(*edge)
        if length == 0:
            continue
        u = edge / length
        v = np.array([-u[1], u[0]])
        pu, pv = hull @ u, hull @ v
        area = (pu.max() - pu.min()) * (pv.max() - pv.min())
        if best is None or area < best[0] - 1e-9:
            centre = u * (pu.max() + pu.min()) / 2 + v * (pv.max() + pv.min()) / 2
            best = (area, centre, pu.max() - pu.min(), pv.max() - pv.min(),
                    math.degrees(math.atan2(u[1], u[0])))
    _, centre, w, h, angle = best
    return _canonical(centre, w, h, angle)


def _canonical(centre, w, h, angle):
    # Bring the angle into [-90, 0) by swapping sides, as OpenCV 5 reports it.
    angle = angle % 180.0
    if angle >= 90.0:
        angle -= 90.0
        w, h = h, w
    # Now in [0, 90): the same rectangle seen from its other side.
    angle -= 90.0
    w, h = h, w
    return ((float(centre[0]), float(centre[1])), (float(w), float(h)), float(angle))


def boxPoints(box):
    """The 4 corners (float32, (4, 2)) of a rotated rectangle ``((cx, cy), (w, h), angle)``,
    in OpenCV's order."""
    (cx, cy), (w, h), angle = box
    a = math.radians(float(angle))
    b, s = math.cos(a) * 0.5, math.sin(a) * 0.5
    p0 = (cx - s * h - b * w, cy + b * h - s * w)
    p1 = (cx + s * h - b * w, cy - b * h - s * w)
    p2 = (2 * cx - p0[0], 2 * cy - p0[1])
    p3 = (2 * cx - p1[0], 2 * cy - p1[1])
    return np.array([p0, p1, p2, p3], dtype=np.float32)


def connectedComponentsWithStats(image, labels=None, stats=None, centroids=None,
                                 connectivity=8, ltype=4):
    """Label the non-zero pixels' connected components (``cv2.connectedComponentsWithStats``).

    Returns
    -------
    (int, ndarray, ndarray, ndarray)
        Label count (background included), int32 labels in raster order of each
        component's first pixel, stats rows ``[left, top, width, height, area]`` and
        float64 centroids.
    """
    from scipy import ndimage

    arr, _ = as_image(image, "connectedComponentsWithStats")
    if arr.ndim == 3:
        if arr.shape[2] != 1:
            raise ValueError("mnn.cv.connectedComponentsWithStats: needs a single-channel "
                             "image")
        arr = arr[..., 0]
    if int(connectivity) not in (4, 8):
        raise ValueError(f"mnn.cv.connectedComponentsWithStats: connectivity must be 4 or 8, "
                         f"got {connectivity}")
    structure = np.ones((3, 3), int) if int(connectivity) == 8 else None
    lab, n = ndimage.label(arr != 0, structure=structure)
    lab = lab.astype(np.int32)
    count = n + 1
    if structure is not None and n > 1:
        # OpenCV's 8-connected labelling scans 2x2 blocks: components are numbered in the
        # raster order of the first block they touch.
        h, w = lab.shape
        ys, xs = np.nonzero(lab)
        key = (ys // 2) * ((w + 1) // 2) + xs // 2
        first = np.full(count, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(first, lab[ys, xs], key)
        order = np.argsort(first[1:], kind="stable") + 1
        remap = np.zeros(count, np.int32)
        remap[order] = np.arange(1, count, dtype=np.int32)
        lab = remap[lab]
    h, w = lab.shape
    ys, xs = np.indices((h, w))
    flat = lab.ravel()
    area = np.bincount(flat, minlength=count)
    big = np.iinfo(np.int64).max
    left = np.full(count, big, np.int64)
    top = np.full(count, big, np.int64)
    right = np.full(count, -1, np.int64)
    bottom = np.full(count, -1, np.int64)
    np.minimum.at(left, flat, xs.ravel())
    np.minimum.at(top, flat, ys.ravel())
    np.maximum.at(right, flat, xs.ravel())
    np.maximum.at(bottom, flat, ys.ravel())
    present = area > 0
    width = np.where(present, right - left + 1, 0)
    height = np.where(present, bottom - top + 1, 0)
    left = np.where(present, left, -1)
    top = np.where(present, top, -1)
    st = np.stack([left, top, width, height, area], axis=1).astype(np.int32)
    with np.errstate(invalid="ignore", divide="ignore"):
        cx = np.bincount(flat, weights=xs.ravel(), minlength=count) / area
        cy = np.bincount(flat, weights=ys.ravel(), minlength=count) / area
    cents = np.stack([cx, cy], axis=1)
    return count, lab, st, cents
