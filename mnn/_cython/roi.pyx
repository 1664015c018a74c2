# cython: language_level=3
"""Gradients of the region ops (mnn/express/ops/nn_roi.py) with respect to the feature map.

Each forward output is a weighted sum (or a selected term) of input pixels; its gradient
scatter-adds the output gradient back with the same weights. Python validates and
precomputes the geometry (per-region sample grids, window bounds, tap indices, all
clamped to the image), checks batch indices and allocates ``dx`` (zeroed); the kernels
loop with OpenMP over channels, so two threads never add into the same pixel.

- ``roi_align_grad``: ONNX RoiAlign's bilinear samples; ``avg`` spreads ``dy / count``
  over the four corners of every sample, ``max`` sends ``dy`` times the corner weight to
  the corner term that won the forward's max (first in sample order on ties).
- ``roi_pool_grad``: ``dy`` goes to the first maximum of each non-empty window.
- ``crop_and_resize_grad``: TensorFlow CropAndResize's bilinear (or nearest) taps of the
  in-image samples; extrapolated samples take no gradient.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY, floor
from libc.stdint cimport int64_t, uint8_t

ctypedef fused real_t:
    float
    double


cdef inline int _corners(double y, double x, Py_ssize_t h, Py_ssize_t w,
                         Py_ssize_t* ys, Py_ssize_t* xs, double* wt) noexcept nogil:
    """ONNX RoiAlign's bilinear sample at (y, x): 4 corners and weights, or 0 when the
    point is off the image (NaN included: the comparison is false)."""
    cdef Py_ssize_t y0, x0, y1, x1
    cdef double ly, lx
    if not (y >= -1.0 and y <= h and x >= -1.0 and x <= w):
        return 0
    if y < 0:
        y = 0
    if x < 0:
        x = 0
    y0 = <Py_ssize_t>floor(y)
    x0 = <Py_ssize_t>floor(x)
    if y0 >= h - 1:
        y0 = h - 1
        y1 = h - 1
        y = <double>y0
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = w - 1
        x1 = w - 1
        x = <double>x0
    else:
        x1 = x0 + 1
    ly = y - y0
    lx = x - x0
    ys[0] = y0
    xs[0] = x0
    wt[0] = (1 - ly) * (1 - lx)
    ys[1] = y0
    xs[1] = x1
    wt[1] = (1 - ly) * lx
    ys[2] = y1
    xs[2] = x0
    wt[2] = ly * (1 - lx)
    ys[3] = y1
    xs[3] = x1
    wt[3] = ly * lx
    return 4


cdef void _align_channel(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                         real_t[:, :, :, ::1] dx, const double[:, ::1] geom,
                         const int64_t[:, ::1] grid, const int64_t[::1] batch,
                         Py_ssize_t c, bint is_max) noexcept nogil:
    cdef Py_ssize_t R = dy.shape[0], ph = dy.shape[2], pw = dy.shape[3]
    cdef Py_ssize_t h = x.shape[2], w = x.shape[3]
    cdef Py_ssize_t r, i, j, iy, ix, k, n, b, gh, gw, best_y, best_x
    cdef Py_ssize_t ys[4]
    cdef Py_ssize_t xs[4]
    cdef double wt[4]
    cdef double g, yy, xx, v, best, best_w
    for r in range(R):
        b = batch[r]
        gh = grid[r, 0]
        gw = grid[r, 1]
        if gh <= 0 or gw <= 0:
            continue
        for i in range(ph):
            for j in range(pw):
                g = dy[r, c, i, j]
                best = -INFINITY
                best_y = -1
                best_x = -1
                best_w = 0
                for iy in range(gh):
                    yy = geom[r, 0] + (i * geom[r, 2] + (iy + 0.5) * geom[r, 2] / gh)
                    for ix in range(gw):
                        xx = geom[r, 1] + (j * geom[r, 3] + (ix + 0.5) * geom[r, 3] / gw)
                        n = _corners(yy, xx, h, w, ys, xs, wt)
                        if not is_max:
                            for k in range(n):
                                dx[b, c, ys[k], xs[k]] += <real_t>(wt[k] * g / (gh * gw))
                        elif n == 0:
                            # An off-image sample contributes a zero term to the max.
                            if 0.0 > best:
                                best = 0.0
                                best_y = -1
                        else:
                            for k in range(4):
                                v = wt[k] * x[b, c, ys[k], xs[k]]
                                if v > best:
                                    best = v
                                    best_y = ys[k]
                                    best_x = xs[k]
                                    best_w = wt[k]
                if is_max and best_y >= 0:
                    dx[b, c, best_y, best_x] += <real_t>(best_w * g)


def roi_align_grad(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                   real_t[:, :, :, ::1] dx, const double[:, ::1] geom,
                   const int64_t[:, ::1] grid, const int64_t[::1] batch, bint is_max,
                   int nthreads=1):
    """``dx += d(roi_align)/dx^T dy``. ``geom`` rows: ``[y1, x1, bin_h, bin_w]`` of each
    region (scaled, offset), ``grid`` rows ``[samples_h, samples_w]``; ``dx`` zeroed by
    the caller and shaped like ``x``."""
    cdef Py_ssize_t R = dy.shape[0], C = x.shape[1], n = x.shape[0], r, c
    if dx.shape[0] != n or dx.shape[1] != C or dx.shape[2] != x.shape[2] \
            or dx.shape[3] != x.shape[3] or dy.shape[1] != C:
        raise ValueError("roi_align_grad kernel: x, dx and dy shapes differ")
    if geom.shape[0] != R or geom.shape[1] != 4 or grid.shape[0] != R \
            or grid.shape[1] != 2 or batch.shape[0] != R or nthreads < 1:
        raise ValueError("roi_align_grad kernel: geometry does not match the regions")
    for r in range(R):
        if batch[r] < 0 or batch[r] >= n:
            raise ValueError("roi_align_grad kernel: batch index out of range")
    if x.shape[2] == 0 or x.shape[3] == 0:
        return
    for c in prange(C, nogil=True, num_threads=nthreads, schedule="static"):
        _align_channel(x, dy, dx, geom, grid, batch, c, is_max)


def roi_pool_grad(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                  real_t[:, :, :, ::1] dx, const int64_t[:, ::1] hs,
                  const int64_t[:, ::1] he, const int64_t[:, ::1] ws,
                  const int64_t[:, ::1] we, const int64_t[::1] batch, int nthreads=1):
    """``dx += dy`` at each window's first maximum. Window of bin ``(i, j)`` of region
    ``r``: rows ``hs[r, i]:he[r, i]``, columns ``ws[r, j]:we[r, j]``, within the image."""
    cdef Py_ssize_t R = dy.shape[0], C = x.shape[1], ph = dy.shape[2], pw = dy.shape[3]
    cdef Py_ssize_t n = x.shape[0], h = x.shape[2], w = x.shape[3]
    cdef Py_ssize_t r, c, i, j, yy, xx, by, bx, b
    cdef double best
    if dx.shape[0] != n or dx.shape[1] != C or dx.shape[2] != h or dx.shape[3] != w \
            or dy.shape[1] != C:
        raise ValueError("roi_pool_grad kernel: x, dx and dy shapes differ")
    if hs.shape[0] != R or he.shape[0] != R or ws.shape[0] != R or we.shape[0] != R \
            or hs.shape[1] != ph or he.shape[1] != ph or ws.shape[1] != pw \
            or we.shape[1] != pw or batch.shape[0] != R or nthreads < 1:
        raise ValueError("roi_pool_grad kernel: windows do not match the regions")
    for r in range(R):
        if batch[r] < 0 or batch[r] >= n:
            raise ValueError("roi_pool_grad kernel: batch index out of range")
        for i in range(ph):
            if hs[r, i] < 0 or he[r, i] > h:
                raise ValueError("roi_pool_grad kernel: window rows outside the image")
        for j in range(pw):
            if ws[r, j] < 0 or we[r, j] > w:
                raise ValueError("roi_pool_grad kernel: window columns outside the image")
    for c in prange(C, nogil=True, num_threads=nthreads, schedule="static"):
        for r in range(R):
            b = batch[r]
            for i in range(ph):
                if he[r, i] <= hs[r, i]:
                    continue
                for j in range(pw):
                    if we[r, j] <= ws[r, j]:
                        continue
                    by = hs[r, i]
                    bx = ws[r, j]
                    best = x[b, c, by, bx]
                    for yy in range(hs[r, i], he[r, i]):
                        for xx in range(ws[r, j], we[r, j]):
                            if x[b, c, yy, xx] > best:
                                best = x[b, c, yy, xx]
                                by = yy
                                bx = xx
                    dx[b, c, by, bx] += dy[r, c, i, j]


def crop_and_resize_grad(const real_t[:, :, :, ::1] dy, real_t[:, :, :, ::1] dx,
                         const int64_t[:, ::1] y0, const int64_t[:, ::1] y1,
                         const double[:, ::1] fy, const uint8_t[:, ::1] vy,
                         const int64_t[:, ::1] x0, const int64_t[:, ::1] x1,
                         const double[:, ::1] fx, const uint8_t[:, ::1] vx,
                         const int64_t[::1] batch, int nthreads=1):
    """``dx += d(crop_and_resize)/dx^T dy`` from per-axis taps: output row ``i`` of
    region ``r`` reads rows ``y0[r, i]`` (weight ``1 - fy``) and ``y1[r, i]`` (``fy``)
    when ``vy[r, i]``; columns likewise. Nearest sampling passes ``fy = fx = 0``."""
    cdef Py_ssize_t R = dy.shape[0], C = dy.shape[1], ch = dy.shape[2], cw = dy.shape[3]
    cdef Py_ssize_t n = dx.shape[0], h = dx.shape[2], w = dx.shape[3]
    cdef Py_ssize_t r, c, i, j, b
    cdef double g, wy, wx
    if dx.shape[1] != C:
        raise ValueError("crop_and_resize_grad kernel: dx and dy channels differ")
    if y0.shape[0] != R or y1.shape[0] != R or fy.shape[0] != R or vy.shape[0] != R \
            or x0.shape[0] != R or x1.shape[0] != R or fx.shape[0] != R \
            or vx.shape[0] != R or batch.shape[0] != R or nthreads < 1 \
            or y0.shape[1] != ch or y1.shape[1] != ch or fy.shape[1] != ch \
            or vy.shape[1] != ch or x0.shape[1] != cw or x1.shape[1] != cw \
            or fx.shape[1] != cw or vx.shape[1] != cw:
        raise ValueError("crop_and_resize_grad kernel: taps do not match the regions")
    for r in range(R):
        if batch[r] < 0 or batch[r] >= n:
            raise ValueError("crop_and_resize_grad kernel: batch index out of range")
        for i in range(ch):
            if vy[r, i] and not (0 <= y0[r, i] < h and 0 <= y1[r, i] < h):
                raise ValueError("crop_and_resize_grad kernel: row tap outside the image")
        for j in range(cw):
            if vx[r, j] and not (0 <= x0[r, j] < w and 0 <= x1[r, j] < w):
                raise ValueError("crop_and_resize_grad kernel: column tap outside the image")
    for c in prange(C, nogil=True, num_threads=nthreads, schedule="static"):
        for r in range(R):
            b = batch[r]
            for i in range(ch):
                if not vy[r, i]:
                    continue
                wy = fy[r, i]
                for j in range(cw):
                    if not vx[r, j]:
                        continue
                    wx = fx[r, j]
                    g = dy[r, c, i, j]
                    dx[b, c, y0[r, i], x0[r, j]] += <real_t>(g * (1 - wy) * (1 - wx))
                    dx[b, c, y0[r, i], x1[r, j]] += <real_t>(g * (1 - wy) * wx)
                    dx[b, c, y1[r, i], x0[r, j]] += <real_t>(g * wy * (1 - wx))
                    dx[b, c, y1[r, i], x1[r, j]] += <real_t>(g * wy * wx)
