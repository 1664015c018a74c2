# cython: language_level=3
"""Max and average pooling over (N, C, H, W) and their gradients.

Windows are given as tables computed in Python: output row ``oy`` covers input rows
``hs[oy] <= iy < he[oy]`` and output column ``ox`` covers ``ws[ox] <= ix < we[ox]``
(already clipped to the image), so regular pooling (any stride, padding, ceil mode),
global pooling and adaptive pooling share one kernel. Average pooling divides by
``divh[oy] * divw[ox]`` (the window's height and width, counting padding or not, which
Python decides). The tables are checked against the image size before any loop runs.
An empty window (only padding) gives -inf for max pooling and 0 for average pooling.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY

ctypedef fused real_t:
    float
    double


def _check(x, y, const long[::1] hs, const long[::1] he, const long[::1] ws,
           const long[::1] we):
    cdef Py_ssize_t k, H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3]
    if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output batch/channels differ")
    if hs.shape[0] != OH or he.shape[0] != OH or ws.shape[0] != OW or we.shape[0] != OW:
        raise ValueError("pool kernel: window tables do not match the output size")
    for k in range(OH):
        if not 0 <= hs[k] <= he[k] <= H:
            raise ValueError(f"pool kernel: row window {hs[k]}..{he[k]} outside 0..{H}")
    for k in range(OW):
        if not 0 <= ws[k] <= we[k] <= W:
            raise ValueError(f"pool kernel: column window {ws[k]}..{we[k]} outside 0..{W}")


def max_forward(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y, const long[::1] hs,
                const long[::1] he, const long[::1] ws, const long[::1] we, int nthreads=1):
    """``y[n, c, oy, ox]`` = max of ``x[n, c]`` over the window (overwritten)."""
    _check(x, y, hs, he, ws, we)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], OH = y.shape[2], OW = y.shape[3]
    cdef Py_ssize_t job, n, c, oy, ox, iy, ix
    cdef real_t best, v
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for oy in range(OH):
                for ox in range(OW):
                    best = -INFINITY
                    for iy in range(hs[oy], he[oy]):
                        for ix in range(ws[ox], we[ox]):
                            v = x[n, c, iy, ix]
                            # NaN propagates, as in torch and numpy's max.
                            if v > best or v != v:
                                best = v
                                if v != v:
                                    break
                    y[n, c, oy, ox] = best


def max_backward(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                 real_t[:, :, :, ::1] dx, const long[::1] hs, const long[::1] he,
                 const long[::1] ws, const long[::1] we, int nthreads=1):
    """``dx`` (overwritten): each ``dy`` entry goes to the first maximum of its window."""
    _check(x, dy, hs, he, ws, we)
    if (dx.shape[0] != x.shape[0] or dx.shape[1] != x.shape[1] or dx.shape[2] != x.shape[2]
            or dx.shape[3] != x.shape[3]):
        raise ValueError("pool kernel: dx must have the input's shape")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3]
    cdef Py_ssize_t job, n, c, oy, ox, iy, ix, by, bx
    cdef real_t best, v
    with nogil:
        # A thread owns whole (n, c) planes of dx: no races.
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for iy in range(H):
                for ix in range(W):
                    dx[n, c, iy, ix] = 0
            for oy in range(OH):
                for ox in range(OW):
                    best = -INFINITY
                    by = -1
                    bx = -1
                    for iy in range(hs[oy], he[oy]):
                        for ix in range(ws[ox], we[ox]):
                            v = x[n, c, iy, ix]
                            if by < 0 or v > best or (v != v and best == best):
                                best = v
                                by = iy
                                bx = ix
                    if by >= 0:
                        dx[n, c, by, bx] += dy[n, c, oy, ox]


def avg_forward(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y, const long[::1] hs,
                const long[::1] he, const long[::1] ws, const long[::1] we,
                const real_t[::1] divh, const real_t[::1] divw, int nthreads=1):
    """``y`` = window sum / (divh[oy] * divw[ox]) (overwritten)."""
    _check(x, y, hs, he, ws, we)
    if divh.shape[0] != y.shape[2] or divw.shape[0] != y.shape[3]:
        raise ValueError("pool kernel: divisor tables do not match the output size")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], OH = y.shape[2], OW = y.shape[3]
    cdef Py_ssize_t job, n, c, oy, ox, iy, ix
    cdef real_t acc, d
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for oy in range(OH):
                for ox in range(OW):
                    acc = 0
                    for iy in range(hs[oy], he[oy]):
                        for ix in range(ws[ox], we[ox]):
                            acc = acc + x[n, c, iy, ix]
                    d = divh[oy] * divw[ox]
                    y[n, c, oy, ox] = acc / d if d > 0 else 0


def avg_backward(const real_t[:, :, :, ::1] dy, real_t[:, :, :, ::1] dx,
                 const long[::1] hs, const long[::1] he, const long[::1] ws,
                 const long[::1] we, const real_t[::1] divh, const real_t[::1] divw,
                 int nthreads=1):
    """``dx`` (overwritten): each ``dy / divisor`` spread over its window."""
    _check(dx, dy, hs, he, ws, we)
    if divh.shape[0] != dy.shape[2] or divw.shape[0] != dy.shape[3]:
        raise ValueError("pool kernel: divisor tables do not match the output size")
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[2], W = dx.shape[3]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3]
    cdef Py_ssize_t job, n, c, oy, ox, iy, ix
    cdef real_t g, d
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for iy in range(H):
                for ix in range(W):
                    dx[n, c, iy, ix] = 0
            for oy in range(OH):
                for ox in range(OW):
                    d = divh[oy] * divw[ox]
                    if d <= 0:
                        continue
                    g = dy[n, c, oy, ox] / d
                    for iy in range(hs[oy], he[oy]):
                        for ix in range(ws[ox], we[ox]):
                            dx[n, c, iy, ix] += g
