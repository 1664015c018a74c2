"""findContours: Suzuki-Abe border following, with OpenCV's conventions.

The image is binarised (non-zero is foreground) and padded with one background pixel.
A raster scan starts an outer border at a 0 -> 1 step and a hole border at a
foreground -> 0 step; each border is followed with 8-connected chain codes, marking
its pixels with the border's number (negative where the border leaves towards the
right, so the scan does not start it again). The last border met on the row gives the
new border's parent (Suzuki's rule), which yields RETR_LIST / EXTERNAL / CCOMP / TREE.
CHAIN_APPROX_SIMPLE keeps only the points where the chain direction changes.
"""
import numpy as np

from . import constants as C
from ._image import as_image

__all__ = ["findContours"]

# Chain-code directions 0..7: right, up-right, up, up-left, left, down-left, down,
# down-right (x, y steps).
_DX = (1, 1, 0, -1, -1, -1, 0, 1)
_DY = (0, -1, -1, -1, 0, 1, 1, 1)


def _follow(lab, y0, x0, is_hole, nbd, approx):
    """Trace one border from (y0, x0); returns its points (x, y) in padded coordinates."""
    # Find the first foreground neighbour, searching clockwise from the start direction.
    s = s_end = 0 if is_hole else 4
    while True:
        s = (s - 1) & 7
        if lab[y0 + _DY[s], x0 + _DX[s]] != 0:
            break
        if s == s_end:
            lab[y0, x0] = -nbd
            return [(x0, y0)]
    y1, x1 = y0 + _DY[s], x0 + _DX[s]
    y3, x3 = y0, x0
    pts = []
    prev_s = s ^ 4
    while True:
        s_end = s
        while True:  # counter-clockwise search for the next border pixel
            s = (s + 1) & 7
            y4, x4 = y3 + _DY[s], x3 + _DX[s]
            if lab[y4, x4] != 0:
                break
        # The search passed direction 0 (the pixel to the right is background): mark the
        # pixel negative so the raster scan does not start a border there again.
        if 0 < s <= s_end:
            lab[y3, x3] = -nbd
        elif lab[y3, x3] == 1:
            lab[y3, x3] = nbd
        if not approx or s != prev_s:
            pts.append((x3, y3))
            prev_s = s
        if y4 == y0 and x4 == x0 and y3 == y1 and x3 == x1:
            break
        y3, x3 = y4, x4
        s = (s + 4) & 7
    return pts


def findContours(image, mode, method, contours=None, hierarchy=None, offset=(0, 0)):
    """Find the borders of the non-zero regions (``cv2.findContours``).

    Parameters
    ----------
    image : ndarray or Var
        Single-channel 8-bit (or int32 with RETR_CCOMP/FLOODFILL as cv2) image; non-zero
        pixels are foreground.
    mode : int
        RETR_EXTERNAL, RETR_LIST, RETR_CCOMP or RETR_TREE.
    method : int
        CHAIN_APPROX_NONE or CHAIN_APPROX_SIMPLE.
    offset : (int, int)
        Added to every point.

    Returns
    -------
    (tuple of ndarray, ndarray)
        Contours as int32 (n, 1, 2) arrays and the (1, N, 4) int32 hierarchy
        ``[next, previous, first_child, parent]`` (None when there are no contours).
    """
    arr, _ = as_image(image, "findContours", dtypes=(np.uint8, np.int8, np.int32))
    if arr.ndim == 3:
        if arr.shape[2] != 1:
            raise ValueError("mnn.cv.findContours: needs a single-channel image")
        arr = arr[..., 0]
    mode, method = int(mode), int(method)
    if mode not in (C.RETR_EXTERNAL, C.RETR_LIST, C.RETR_CCOMP, C.RETR_TREE):
        raise ValueError(f"mnn.cv.findContours: mode {mode} is not supported")
    if method not in (C.CHAIN_APPROX_NONE, C.CHAIN_APPROX_SIMPLE):
        raise ValueError(f"mnn.cv.findContours: method {method} is not supported "
                         f"(CHAIN_APPROX_NONE or CHAIN_APPROX_SIMPLE)")
    approx = method == C.CHAIN_APPROX_SIMPLE
    h, w = arr.shape
    lab = np.zeros((h + 2, w + 2), dtype=np.int64)
    lab[1:-1, 1:-1] = arr != 0
    borders = []  # (points, is_hole, parent index or -1)
    border_of = {1: -1}  # nbd -> border index; 1 stands for the frame
    nbd = 1
    binary = lab != 0
    for y in range(1, h + 1):
        row_b = binary[y]
        steps = np.nonzero(row_b[1:] != row_b[:-1])[0] + 1  # x where the value changes
        lnbd = 1
        last_x = 0
        for x in steps:
            # Update LNBD with labelled pixels passed since the last step.
            seg = lab[y, last_x:x]
            marked = np.nonzero((seg != 0) & (seg != 1))[0]
            if len(marked):
                lnbd = abs(int(seg[marked[-1]]))
            last_x = x
            cur, prev = lab[y, x], lab[y, x - 1]
            if prev == 0 and cur == 1:
                is_hole, sx = False, x
            elif cur == 0 and prev >= 1:
                is_hole, sx = True, x - 1
                if prev != 1:
                    lnbd = abs(int(prev))
            else:
                continue
            parent_border = border_of.get(lnbd, -1)
            if parent_border >= 0:
                lnbd_is_hole = borders[parent_border][1]
                if is_hole == lnbd_is_hole:
                    parent_border = borders[parent_border][2]
            nbd += 1
            pts = _follow(lab, y, sx, is_hole, nbd, approx)
            border_of[nbd] = len(borders)
            borders.append((pts, is_hole, parent_border))
            val = lab[y, x]
            if val != 0 and val != 1:
                lnbd = abs(int(val))
    return _select(borders, mode, offset)


def _select(borders, mode, offset):
    ox, oy = int(offset[0]) - 1, int(offset[1]) - 1  # undo the padding
    keep = list(range(len(borders)))
    parent = [b[2] for b in borders]
    if mode == C.RETR_EXTERNAL:
        keep = [i for i in keep if parent[i] < 0 and not borders[i][1]]
        parent = [-1] * len(borders)
    elif mode == C.RETR_LIST:
        parent = [-1] * len(borders)
    elif mode == C.RETR_CCOMP:
        # Two levels: outer borders at the top, each hole under its outer border.
        parent = [(b[2] if b[1] else -1) for b in borders]
    if not keep:
        return (), None
    # Each new border becomes the first child of its parent (OpenCV's tree insertion), so
    # siblings run last-found first; contours are listed depth-first from the top level.
    children = {}
    for b in keep:
        children.setdefault(parent[b], []).insert(0, b)
    order = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b, [])))
    index = {b: i for i, b in enumerate(order)}
    hier = np.full((len(order), 4), -1, dtype=np.int32)
    for par, kids in children.items():
        for j, b in enumerate(kids):
            hier[index[b], 0] = index[kids[j + 1]] if j + 1 < len(kids) else -1
            hier[index[b], 1] = index[kids[j - 1]] if j > 0 else -1
            hier[index[b], 3] = index[par] if par >= 0 else -1
        if par >= 0:
            hier[index[par], 2] = index[kids[0]]
    out = []
    for b in order:
        pts = np.array(borders[b][0], dtype=np.int32).reshape(-1, 1, 2)
        pts[..., 0] += ox
        pts[..., 1] += oy
        out.append(pts)
    return tuple(out), hier[np.newaxis]
