"""Drawing: line, arrowedLine, rectangle, circle, ellipse, ellipse2Poly, polylines,
fillPoly, fillConvexPoly, drawContours (cv2's names and arguments).

As in cv2, a numpy image is drawn on in place and returned. A Var's values are
read-only, so for a Var image the drawing goes to a copy, returned as a new Var.
Rasterisation follows OpenCV's rules closely (Bresenham lines, thick lines as filled
rectangles with round caps, ellipses as polygons with OpenCV's angular step) but is not
bit-identical: tests compare by pixel agreement ratio. ``shift`` (fractional bits of the
coordinates) is supported; anti-aliased lines (LINE_AA) are drawn as LINE_8.
"""
import math

import numpy as np

from . import constants as C
from ._image import as_array, is_var, scalar4
from ..express.var import const

__all__ = ["line", "arrowedLine", "rectangle", "circle", "ellipse", "ellipse2Poly",
           "polylines", "fillPoly", "fillConvexPoly", "drawContours"]


# ---------------------------------------------------------------- target and colour
def _target(img, func):
    if is_var(img):
        arr = np.array(np.asarray(img), copy=True)
    else:
        arr = img
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"mnn.cv.{func}: img must be an ndarray or Var, got "
                            f"{type(img).__name__}")
        if not arr.flags.writeable:
            raise ValueError(f"mnn.cv.{func}: img is read-only")
    if arr.ndim == 4 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim not in (2, 3):
        raise ValueError(f"mnn.cv.{func}: img must be HW or HWC, got shape {arr.shape}")
    return arr


def _result(img, arr):
    return const(arr) if is_var(img) else img


def _color(color, arr):
    vals = np.array(scalar4(color, "color"))
    cn = 1 if arr.ndim == 2 else arr.shape[2]
    if arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        vals = np.clip(np.rint(vals), info.min, info.max)
    return vals[:cn].astype(arr.dtype) if arr.ndim == 3 else arr.dtype.type(vals[0])


def _plot(arr, xs, ys, color):
    h, w = arr.shape[:2]
    keep = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    arr[ys[keep], xs[keep]] = color


def _pt(p, shift):
    x, y = p
    if shift:
        return float(x) / (1 << shift), float(y) / (1 << shift)
    return float(x), float(y)


def _thickness(thickness, func):
    t = int(thickness)
    if t == 0 or t > 32767:
        raise ValueError(f"mnn.cv.{func}: thickness must be -1 (filled) or 1..32767, got {t}")
    return t


# ---------------------------------------------------------------- primitives
def _segment_pixels(x0, y0, x1, y1, connectivity=8):
    x0, y0, x1, y1 = (int(round(v)) for v in (x0, y0, x1, y1))
    dx, dy = x1 - x0, y1 - y0
    n = max(abs(dx), abs(dy))
    if n == 0:
        return np.array([x0]), np.array([y0])
    t = np.arange(n + 1)
    # Bresenham: the major axis steps by one, the minor rounds half away from the start.
    xs = x0 + np.floor(t * dx / n + 0.5).astype(int) if abs(dx) != n else x0 + np.sign(dx) * t
    ys = y0 + np.floor(t * dy / n + 0.5).astype(int) if abs(dy) != n else y0 + np.sign(dy) * t
    xs, ys = np.asarray(xs, dtype=int), np.asarray(ys, dtype=int)
    if connectivity == 4 and n > 0:
        # A 4-connected line: each diagonal step gets the corner pixel before it.
        diag = (np.diff(xs) != 0) & (np.diff(ys) != 0)
        cx, cy = xs[:-1][diag], ys[1:][diag]
        xs = np.concatenate([xs, cx])
        ys = np.concatenate([ys, cy])
    return xs, ys


def _fill_polygons(arr, polys, color):
    """Fill polygons (lists of float (x, y) vertices) by pixel-centre inclusion (even-odd)
    and include their outlines, as OpenCV's fill does."""
    h, w = arr.shape[:2]
    edges = []
    for poly in polys:
        p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
        if len(p) == 0:
            continue
        for i in range(len(p)):
            a, b = p[i], p[(i + 1) % len(p)]
            if a[1] != b[1]:
                edges.append((a[0], a[1], b[0], b[1]))
    if edges:
        e = np.array(edges)
        ymin = max(int(math.floor(e[:, [1, 3]].min())), 0)
        ymax = min(int(math.ceil(e[:, [1, 3]].max())), h - 1)
        for y in range(ymin, ymax + 1):
            y0, y1 = e[:, 1], e[:, 3]
            lo, hi = np.minimum(y0, y1), np.maximum(y0, y1)
            active = (y >= lo) & (y < hi)
            if not active.any():
                continue
            ea = e[active]
            xs = ea[:, 0] + (y - ea[:, 1]) * (ea[:, 2] - ea[:, 0]) / (ea[:, 3] - ea[:, 1])
            xs = np.sort(xs)
            for xa, xb in zip(xs[0::2], xs[1::2]):
                x_start = max(int(math.ceil(xa - 0.5)), 0)
                x_end = min(int(math.floor(xb + 0.5)), w - 1)
                if x_end >= x_start:
                    arr[y, x_start:x_end + 1] = color
    for poly in polys:
        p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
        _polyline(arr, p, True, color, 1, 8)


def _disc(arr, cx, cy, radius, color):
    h, w = arr.shape[:2]
    r = max(radius, 0.0)
    y0, y1 = max(int(math.floor(cy - r)), 0), min(int(math.ceil(cy + r)), h - 1)
    x0, x1 = max(int(math.floor(cx - r)), 0), min(int(math.ceil(cx + r)), w - 1)
    if y1 < y0 or x1 < x0:
        return
    ys, xs = np.mgrid[y0:y1 + 1, x0:x1 + 1]
    inside = (xs - cx) ** 2 + (ys - cy) ** 2 <= r * r + 0.25
    arr[ys[inside], xs[inside]] = color


def _thick_segment(arr, p0, p1, color, thickness, connectivity):
    if thickness == 1:
        xs, ys = _segment_pixels(p0[0], p0[1], p1[0], p1[1], connectivity)
        _plot(arr, xs, ys, color)
        return
    # OpenCV's lines of thickness 3 and more come out about one pixel wider than nominal
    # (its convex fill adds the rasterised edges); match that footprint.
    half = thickness / 2.0 + (0.5 if thickness >= 3 else 0.0)
    dx, dy = p1[0] - p0[0], p1[1] - p0[1]
    length = math.hypot(dx, dy)
    if length > 0:
        nx, ny = -dy / length * half, dx / length * half
        quad = [(p0[0] + nx, p0[1] + ny), (p1[0] + nx, p1[1] + ny),
                (p1[0] - nx, p1[1] - ny), (p0[0] - nx, p0[1] - ny)]
        _fill_polygons(arr, [quad], color)
    # Round caps, as OpenCV draws thick lines.
    _disc(arr, p0[0], p0[1], half, color)
    _disc(arr, p1[0], p1[1], half, color)


def _polyline(arr, pts, closed, color, thickness, connectivity):
    n = len(pts)
    if n == 0:
        return
    if n == 1:
        _thick_segment(arr, pts[0], pts[0], color, thickness, connectivity)
        return
    for i in range(n - 1 + int(closed)):
        _thick_segment(arr, pts[i], pts[(i + 1) % n], color, thickness, connectivity)


def _connectivity(line_type):
    return 4 if int(line_type) == C.LINE_4 else 8


# ---------------------------------------------------------------- public functions
def line(img, pt1, pt2, color, thickness=1, lineType=C.LINE_8, shift=0):
    """Draw a segment from ``pt1`` to ``pt2``."""
    arr = _target(img, "line")
    t = _thickness(thickness, "line")
    _thick_segment(arr, _pt(pt1, shift), _pt(pt2, shift), _color(color, arr), abs(t),
                   _connectivity(lineType))
    return _result(img, arr)


def arrowedLine(img, pt1, pt2, color, thickness=1, line_type=C.LINE_8, shift=0,
                tipLength=0.1):
    """A line with two tip strokes at ``pt2`` of length ``tipLength`` times the line's."""
    arr = _target(img, "arrowedLine")
    t = abs(_thickness(thickness, "arrowedLine"))
    col = _color(color, arr)
    p1, p2 = _pt(pt1, shift), _pt(pt2, shift)
    conn = _connectivity(line_type)
    _thick_segment(arr, p1, p2, col, t, conn)
    tip = math.hypot(p1[0] - p2[0], p1[1] - p2[1]) * float(tipLength)
    angle = math.atan2(p1[1] - p2[1], p1[0] - p2[0])
    for side in (math.pi / 4, -math.pi / 4):
        end = (round(p2[0] + tip * math.cos(angle + side)),
               round(p2[1] + tip * math.sin(angle + side)))
        _thick_segment(arr, p2, end, col, t, conn)
    return _result(img, arr)


def rectangle(img, pt1, pt2=None, color=None, thickness=1, lineType=C.LINE_8, shift=0,
              rec=None):
    """Draw an upright rectangle given two opposite corners (or ``rec=(x, y, w, h)``)."""
    arr = _target(img, "rectangle")
    if rec is not None or len(np.atleast_1d(pt1)) == 4:
        # cv2.rectangle(img, rec, color, ...) form: rec = (x, y, w, h).
        box = pt1 if rec is None else rec
        if rec is None:
            color, thickness = pt2, (thickness if color is None else color)
        x, y, w, h = (int(v) for v in box)
        pt1, pt2 = (x, y), (x + w - 1, y + h - 1)
    if color is None:
        raise TypeError("mnn.cv.rectangle: color is required")
    t = _thickness(thickness, "rectangle")
    col = _color(color, arr)
    (x0, y0), (x1, y1) = _pt(pt1, shift), _pt(pt2, shift)
    if t < 0:
        h, w = arr.shape[:2]
        xa, xb = sorted((int(round(x0)), int(round(x1))))
        ya, yb = sorted((int(round(y0)), int(round(y1))))
        arr[max(ya, 0):max(min(yb, h - 1) + 1, 0), max(xa, 0):max(min(xb, w - 1) + 1, 0)] = col
    else:
        corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        _polyline(arr, corners, True, col, t, _connectivity(lineType))
    return _result(img, arr)


def ellipse2Poly(center, axes, angle, arcStart, arcEnd, delta):
    """Polygon (int32 (n, 2)) approximating an elliptic arc, OpenCV's construction."""
    cx, cy = (float(v) for v in center)
    a, b = (float(v) for v in axes)
    angle = int(round(angle))
    while angle < 0:
        angle += 360
    while angle > 360:
        angle -= 360
    start, end = int(arcStart), int(arcEnd)
    if start > end:
        start, end = end, start
    while start < 0:
        start += 360
        end += 360
    while end > 360:
        end -= 360
        start -= 360
    if end - start > 360:
        start, end = 0, 360
    alpha, beta = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    pts = []
    delta = max(int(delta), 1)
    for i in list(range(start, end + 1, delta)) + ([end] if (end - start) % delta else []):
        x, y = a * math.cos(math.radians(i)), b * math.sin(math.radians(i))
        p = (int(round(cx + x * alpha - y * beta)), int(round(cy + x * beta + y * alpha)))
        if not pts or p != pts[-1]:
            pts.append(p)
    if len(pts) == 1:
        pts.append(pts[0])
    return np.array(pts, dtype=np.int32)


def _ellipse_delta(axes):
    m = max(axes)
    return 90 if m < 3 else (30 if m < 10 else (18 if m < 15 else 5))


def _draw_ellipse(arr, center, axes, angle, start, end, col, t, conn):
    axes = (abs(axes[0]), abs(axes[1]))
    pts = ellipse2Poly(center, axes, angle, start, end, _ellipse_delta(axes)).astype(float)
    if t < 0:
        if end - start < 360:
            pts = np.vstack([pts, [center]])
        _fill_polygons(arr, [pts], col)
    else:
        _polyline(arr, pts, False, col, t, conn)


def _thin_circle(arr, cx, cy, r, col):
    # Midpoint circle: walk one octant with an integer error term, mirror it 8 ways.
    xs, ys = [], []
    err, dx, dy, plus, minus = 0, r, 0, 1, 2 * r - 1
    while dx >= dy:
        for px, py in ((dx, dy), (dy, dx)):
            xs += [cx + px, cx - px, cx + px, cx - px]
            ys += [cy + py, cy + py, cy - py, cy - py]
        dy += 1
        err += plus
        plus += 2
        if err > 0:
            err -= minus
            dx -= 1
            minus -= 2
    _plot(arr, np.array(xs), np.array(ys), col)


def circle(img, center, radius, color, thickness=1, lineType=C.LINE_8, shift=0):
    """Draw a circle (filled with ``thickness=-1``)."""
    arr = _target(img, "circle")
    t = _thickness(thickness, "circle")
    r = float(radius) / (1 << shift) if shift else float(radius)
    if r < 0:
        raise ValueError(f"mnn.cv.circle: radius must be >= 0, got {radius}")
    col = _color(color, arr)
    cx, cy = _pt(center, shift)
    if t < 0:
        _disc(arr, cx, cy, r, col)
    elif t == 1:
        _thin_circle(arr, int(round(cx)), int(round(cy)), int(round(r)), col)
    else:
        _draw_ellipse(arr, (cx, cy), (r, r), 0, 0, 360, col, t, _connectivity(lineType))
    return _result(img, arr)


def ellipse(img, center, axes, angle, startAngle, endAngle, color, thickness=1,
            lineType=C.LINE_8, shift=0):
    """Draw an elliptic arc (or a filled sector with ``thickness=-1``)."""
    arr = _target(img, "ellipse")
    t = _thickness(thickness, "ellipse")
    c = _pt(center, shift)
    ax = _pt(axes, shift)
    _draw_ellipse(arr, c, ax, angle, startAngle, endAngle, _color(color, arr), t,
                  _connectivity(lineType))
    return _result(img, arr)


def _poly_list(pts, func, shift=0):
    if isinstance(pts, np.ndarray) and pts.ndim in (2, 3) and pts.dtype != object and \
            pts.shape[-1] == 2 and (pts.ndim == 2 or pts.shape[1] == 1):
        pts = [pts]
    out = []
    for p in pts:
        a = np.asarray(as_array(p, func, "pts"), dtype=np.float64).reshape(-1, 2)
        if shift:
            a = a / (1 << shift)
        out.append(a)
    return out


def polylines(img, pts, isClosed, color, thickness=1, lineType=C.LINE_8, shift=0):
    """Draw polygonal chains."""
    arr = _target(img, "polylines")
    t = abs(_thickness(thickness, "polylines"))
    col = _color(color, arr)
    for p in _poly_list(pts, "polylines", shift):
        _polyline(arr, p, bool(isClosed), col, t, _connectivity(lineType))
    return _result(img, arr)


def fillPoly(img, pts, color, lineType=C.LINE_8, shift=0, offset=(0, 0)):
    """Fill the area bounded by one or more polygons (even-odd rule)."""
    arr = _target(img, "fillPoly")
    polys = [p + np.asarray(offset, dtype=np.float64) for p in _poly_list(pts, "fillPoly", shift)]
    _fill_polygons(arr, polys, _color(color, arr))
    return _result(img, arr)


def fillConvexPoly(img, points, color, lineType=C.LINE_8, shift=0):
    """Fill a convex polygon."""
    return fillPoly(img, [points], color, lineType, shift)


def drawContours(image, contours, contourIdx, color, thickness=1, lineType=C.LINE_8,
                 hierarchy=None, maxLevel=None, offset=(0, 0)):
    """Draw contour outlines (or fill them with ``thickness=-1``); ``contourIdx`` -1
    draws all."""
    arr = _target(image, "drawContours")
    t = _thickness(thickness, "drawContours")
    col = _color(color, arr)
    polys = [np.asarray(c, dtype=np.float64).reshape(-1, 2) + np.asarray(offset, float)
             for c in contours]
    idx = int(contourIdx)
    if idx >= len(polys):
        raise ValueError(f"mnn.cv.drawContours: contourIdx {idx} out of range "
                         f"({len(polys)} contours)")
    chosen = polys if idx < 0 else [polys[idx]]
    if t < 0:
        _fill_polygons(arr, chosen, col)
    else:
        for p in chosen:
            _polyline(arr, p, True, col, t, _connectivity(lineType))
    return _result(image, arr)
