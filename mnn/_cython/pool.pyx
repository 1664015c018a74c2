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
cimport openmp
import numpy as np
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


cdef inline real_t _nanmax(real_t a, real_t b) noexcept nogil:
    # max that propagates NaN from either side (torch's and numpy's max pooling do).
    # Two selects and no branch, so the band loops vectorize.
    cdef real_t m = a if a > b else b
    return a if a != a else m


def max_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y,
                        Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                        Py_ssize_t pt, Py_ssize_t pl, int nthreads=1):
    """Max pooling with a regular window grid (``y`` overwritten).

    Each (n, c) plane is copied into a scratch plane padded with -inf that covers every
    window (rows ``0 .. (OH-1)*sh + kh``), so the loops have no bounds tests: first the
    max over the ``kh`` rows of a window band, then over ``kw`` columns of that band.
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3]
    if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output batch/channels differ")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or pt < 0 or pl < 0 or nthreads < 1:
        raise ValueError("pool kernel: bad window geometry")
    if N == 0 or C == 0 or OH == 0 or OW == 0:
        return
    cdef Py_ssize_t Hp = (OH - 1) * sh + kh, Wp = (OW - 1) * sw + kw
    dt = np.float32 if real_t is float else np.float64
    scratch = np.empty((nthreads, Hp * Wp + Wp), dtype=dt)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, r, q, iy, oy, ox, i, j, tid, q0, q1
    cdef real_t* plane
    cdef real_t* band
    cdef real_t v
    q0 = min(pl, Wp)
    q1 = max(min(W + pl, Wp), q0)
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // C
            c = job % C
            plane = &buf[tid, 0]
            band = plane + Hp * Wp
            for r in range(Hp):
                iy = r - pt
                if iy < 0 or iy >= H:
                    for q in range(Wp):
                        plane[r * Wp + q] = -INFINITY
                    continue
                for q in range(q0):
                    plane[r * Wp + q] = -INFINITY
                for q in range(q0, q1):
                    plane[r * Wp + q] = x[n, c, iy, q - pl]
                for q in range(q1, Wp):
                    plane[r * Wp + q] = -INFINITY
            for oy in range(OH):
                for q in range(Wp):
                    band[q] = plane[oy * sh * Wp + q]
                for i in range(1, kh):
                    for q in range(Wp):
                        band[q] = _nanmax(plane[(oy * sh + i) * Wp + q], band[q])
                for ox in range(OW):
                    v = band[ox * sw]
                    for j in range(1, kw):
                        v = _nanmax(band[ox * sw + j], v)
                    y[n, c, oy, ox] = v


def avg_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y,
                        Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                        Py_ssize_t pt, Py_ssize_t pl, const real_t[::1] divh,
                        const real_t[::1] divw, int nthreads=1):
    """Average pooling with a regular window grid (``y`` overwritten): window sums over
    a zero-padded scratch plane (band of ``kh`` rows, then ``kw`` columns), divided by
    ``divh[oy] * divw[ox]``."""
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3]
    if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output batch/channels differ")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or pt < 0 or pl < 0 or nthreads < 1:
        raise ValueError("pool kernel: bad window geometry")
    if divh.shape[0] != OH or divw.shape[0] != OW:
        raise ValueError("pool kernel: divisor tables do not match the output size")
    if N == 0 or C == 0 or OH == 0 or OW == 0:
        return
    cdef Py_ssize_t Hp = (OH - 1) * sh + kh, Wp = (OW - 1) * sw + kw
    dt = np.float32 if real_t is float else np.float64
    scratch = np.empty((nthreads, Hp * Wp + Wp), dtype=dt)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, r, q, iy, oy, ox, i, j, tid, q0, q1
    cdef real_t* plane
    cdef real_t* band
    cdef real_t v, d
    q0 = min(pl, Wp)
    q1 = max(min(W + pl, Wp), q0)
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // C
            c = job % C
            plane = &buf[tid, 0]
            band = plane + Hp * Wp
            for r in range(Hp):
                iy = r - pt
                if iy < 0 or iy >= H:
                    for q in range(Wp):
                        plane[r * Wp + q] = 0
                    continue
                for q in range(q0):
                    plane[r * Wp + q] = 0
                for q in range(q0, q1):
                    plane[r * Wp + q] = x[n, c, iy, q - pl]
                for q in range(q1, Wp):
                    plane[r * Wp + q] = 0
            for oy in range(OH):
                for q in range(Wp):
                    band[q] = plane[oy * sh * Wp + q]
                for i in range(1, kh):
                    for q in range(Wp):
                        band[q] = band[q] + plane[(oy * sh + i) * Wp + q]
                for ox in range(OW):
                    v = band[ox * sw]
                    for j in range(1, kw):
                        v = v + band[ox * sw + j]
                    d = divh[oy] * divw[ox]
                    y[n, c, oy, ox] = v / d if d > 0 else 0
