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


cdef inline void _phase_bounds(Py_ssize_t p, Py_ssize_t sw, Py_ssize_t pl, Py_ssize_t W,
                               Py_ssize_t L, Py_ssize_t* i0, Py_ssize_t* i1) noexcept nogil:
    # Phase p holds padded columns q = p + sw*i, i.e. input columns ix = p + sw*i - pl.
    # [i0, i1) are the i whose ix lies inside 0..W-1 (clipped to the phase length L).
    cdef Py_ssize_t a = pl - p
    cdef Py_ssize_t lo = 0 if a <= 0 else (a + sw - 1) // sw
    cdef Py_ssize_t b = W + pl - p
    cdef Py_ssize_t hi = 0 if b <= 0 else (b + sw - 1) // sw
    if lo > L:
        lo = L
    if hi > L:
        hi = L
    if hi < lo:
        hi = lo
    i0[0] = lo
    i1[0] = hi


def max_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y,
                        Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                        Py_ssize_t pt, Py_ssize_t pl, int nthreads=1):
    """Max pooling with a regular window grid (``y`` overwritten).

    Per output row: the max over the window's rows that lie inside the image (padding
    rows are -inf and cannot win), written de-interleaved into ``sw`` phase rows (phase
    ``p`` holds padded columns ``p + sw*i``, -inf outside the image), so that window
    column ``j`` of output ``ox`` is ``phase[j % sw][ox + j // sw]``: the column max is
    then ``kw`` contiguous, vectorizable passes written straight into ``y``.
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3]
    if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output batch/channels differ")
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or pt < 0 or pl < 0 or nthreads < 1:
        raise ValueError("pool kernel: bad window geometry")
    if N == 0 or C == 0 or OH == 0 or OW == 0:
        return
    # Padded width covering every window; phase p has L >= ceil((Wp - p) / sw) slots.
    cdef Py_ssize_t Wp = (OW - 1) * sw + kw, L = Wp // sw + 1
    dt = np.float32 if real_t is float else np.float64
    scratch = np.empty((nthreads, sw * L + W), dtype=dt)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, r, i, p, j, oy, ox, ix, tid, r0, r1, i0, i1, off
    cdef real_t* ph
    cdef real_t* rb
    cdef real_t* dst
    cdef real_t* out
    cdef const real_t* src
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // C
            c = job % C
            ph = &buf[tid, 0]
            rb = ph + sw * L
            for oy in range(OH):
                r0 = oy * sh - pt
                r1 = r0 + kh
                if r0 < 0:
                    r0 = 0
                if r1 > H:
                    r1 = H
                if r0 < r1 and W > 0:
                    # Rows of the window inside the image, reduced contiguously first.
                    src = &x[n, c, r0, 0]
                    for ix in range(W):
                        rb[ix] = src[ix]
                    for r in range(r0 + 1, r1):
                        src = &x[n, c, r, 0]
                        for ix in range(W):
                            rb[ix] = _nanmax(src[ix], rb[ix])
                for p in range(sw):
                    dst = ph + p * L
                    # Assigned here so Cython makes them thread-private: written only
                    # through pointers, they were shared between threads (a race).
                    i0 = 0
                    i1 = 0
                    _phase_bounds(p, sw, pl, W, L, &i0, &i1)
                    for i in range(i0):
                        dst[i] = -INFINITY
                    for i in range(i1, L):
                        dst[i] = -INFINITY
                    if r0 >= r1 or W == 0:
                        for i in range(i0, i1):
                            dst[i] = -INFINITY
                        continue
                    off = p - pl
                    for i in range(i0, i1):
                        dst[i] = rb[off + sw * i]
                out = &y[n, c, oy, 0]
                for ox in range(OW):
                    out[ox] = ph[ox]
                for j in range(1, kw):
                    src = ph + (j % sw) * L + j // sw
                    for ox in range(OW):
                        out[ox] = _nanmax(src[ox], out[ox])


def avg_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y,
                        Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                        Py_ssize_t pt, Py_ssize_t pl, const real_t[::1] divh,
                        const real_t[::1] divw, int nthreads=1):
    """Average pooling with a regular window grid (``y`` overwritten): per output row the
    sum of the window's rows inside the image (padding adds zeros), de-interleaved into
    ``sw`` phase rows as in ``max_forward_regular``; then the ``kw`` column sums in
    window order, divided by ``divh[oy] * divw[ox]``."""
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
    cdef Py_ssize_t Wp = (OW - 1) * sw + kw, L = Wp // sw + 1
    dt = np.float32 if real_t is float else np.float64
    scratch = np.empty((nthreads, sw * L + W), dtype=dt)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, r, i, p, j, oy, ox, ix, tid, r0, r1, i0, i1, off
    cdef real_t* ph
    cdef real_t* rb
    cdef real_t* dst
    cdef real_t* out
    cdef const real_t* src
    cdef real_t d
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // C
            c = job % C
            ph = &buf[tid, 0]
            rb = ph + sw * L
            for oy in range(OH):
                r0 = oy * sh - pt
                r1 = r0 + kh
                if r0 < 0:
                    r0 = 0
                if r1 > H:
                    r1 = H
                if r0 < r1 and W > 0:
                    # Rows of the window inside the image, reduced contiguously first.
                    src = &x[n, c, r0, 0]
                    for ix in range(W):
                        rb[ix] = src[ix]
                    for r in range(r0 + 1, r1):
                        src = &x[n, c, r, 0]
                        for ix in range(W):
                            rb[ix] = rb[ix] + src[ix]
                for p in range(sw):
                    dst = ph + p * L
                    # Assigned here so Cython makes them thread-private: written only
                    # through pointers, they were shared between threads (a race).
                    i0 = 0
                    i1 = 0
                    _phase_bounds(p, sw, pl, W, L, &i0, &i1)
                    for i in range(i0):
                        dst[i] = 0
                    for i in range(i1, L):
                        dst[i] = 0
                    if r0 >= r1 or W == 0:
                        for i in range(i0, i1):
                            dst[i] = 0
                        continue
                    off = p - pl
                    for i in range(i0, i1):
                        dst[i] = rb[off + sw * i]
                out = &y[n, c, oy, 0]
                for ox in range(OW):
                    out[ox] = ph[ox]
                for j in range(1, kw):
                    src = ph + (j % sw) * L + j // sw
                    for ox in range(OW):
                        out[ox] = out[ox] + src[ox]
                for ox in range(OW):
                    d = divh[oy] * divw[ox]
                    out[ox] = out[ox] / d if d > 0 else 0
