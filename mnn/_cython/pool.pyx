# cython: language_level=3
"""Max and average pooling over (N, C, D, H, W) and their gradients (2-D pooling is D = 1).

Two kernel kinds:

- *Table* kernels (any window layout: regular with dilation, global, adaptive, 3-D). Each
  spatial axis has a table ``win[0, o] <= i < win[1, o]`` of the input positions output
  ``o`` reads, stepping by the axis's dilation (``win[0, o]`` is the first tap inside the
  input, already on the dilation grid; Python builds the tables). Average pooling divides
  by ``divd[od] * divh[oy] * divw[ox]`` (the tap counts, with or without padding, which
  Python decides). The tables are checked against the input size before any loop runs.
- *Regular* kernels for a 2-D regular window grid (forward and max backward), which need
  no tables and vectorize along the contiguous width axis.

An empty window (only padding) gives -inf for max pooling (index -1) and 0 for average
pooling, and passes no gradient back. Max pooling propagates NaN, as torch and numpy do.
Every kernel parallelizes over the N * C planes (a thread owns whole planes of its output,
so there are no races) and releases the GIL.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.string cimport memset

ctypedef fused real_t:
    float
    double


# ---------------------------------------------------------------------------------------
# checks (Python level, before any nogil loop)


def _check_tables(in_shape, out_shape, tables, steps):
    """Raise unless every table row lies inside its input axis and matches the output."""
    if len(tables) != 3 or len(steps) != 3:
        raise ValueError("pool kernel: need three window tables and three steps")
    for axis in range(3):
        win = tables[axis]
        size, out = in_shape[2 + axis], out_shape[2 + axis]
        if win.ndim != 2 or win.shape[0] != 2 or win.shape[1] != out:
            raise ValueError(f"pool kernel: window table {axis} does not match the output "
                             f"size {out}")
        if steps[axis] < 1:
            raise ValueError(f"pool kernel: step {steps[axis]} must be positive")
        if out and (win[0].min() < 0 or win[1].max() > size or (win[1] < win[0]).any()):
            raise ValueError(f"pool kernel: window table {axis} outside 0..{size}")


def _check_pair(x, y, what):
    if x.ndim != 5 or y.ndim != 5 or x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError(f"pool kernel: {what} must be 5-D with equal batch and channels")


def _check_divisors(divs, out_shape):
    for axis in range(3):
        if divs[axis].shape[0] != out_shape[2 + axis]:
            raise ValueError("pool kernel: divisor tables do not match the output size")


# ---------------------------------------------------------------------------------------
# table kernels


def max_forward(const real_t[:, :, :, :, ::1] x, real_t[:, :, :, :, ::1] y,
                long[:, :, :, :, ::1] idx, tables, steps, int nthreads=1):
    """``y`` = max of ``x`` over each window (overwritten); ``idx`` (or None) gets the
    flat in-plane position ``(iz * H + iy) * W + ix`` of the first maximum (of the first
    NaN when the window holds one)."""
    _check_pair(x, y, "input and output")
    _check_tables(x.shape, y.shape, tables, steps)
    if idx is not None and tuple(idx.shape) != tuple(y.shape):
        raise ValueError("pool kernel: index output must have the output's shape")
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = y.shape[2], OH = y.shape[3], OW = y.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef bint want_idx = idx is not None
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, best_at, o
    cdef real_t best, v
    cdef const real_t* xp
    cdef real_t* yp
    cdef long* ibase = NULL
    cdef long* ip
    if N * C == 0 or oplane == 0:
        return
    if want_idx:
        ibase = &idx[0, 0, 0, 0, 0]
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            yp = &y[0, 0, 0, 0, 0] + job * oplane
            ip = ibase + job * oplane if want_idx else NULL
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        best = -INFINITY
                        best_at = -1
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    v = xp[at + ix]
                                    if v > best or (v != v and best == best) or best_at < 0:
                                        best = v
                                        best_at = at + ix
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        yp[o] = best
                        if want_idx:
                            ip[o] = best_at
                        o = o + 1


def max_backward(const real_t[:, :, :, :, ::1] x, const real_t[:, :, :, :, ::1] dy,
                 real_t[:, :, :, :, ::1] dx, tables, steps, int nthreads=1):
    """``dx`` (overwritten): each ``dy`` entry goes to the first maximum of its window
    (the first NaN when there is one, where torch's gradient goes too)."""
    _check_pair(x, dy, "input and gradient")
    _check_tables(x.shape, dy.shape, tables, steps)
    if tuple(dx.shape) != tuple(x.shape):
        raise ValueError("pool kernel: dx must have the input's shape")
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = dy.shape[2], OH = dy.shape[3], OW = dy.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, best_at, o
    cdef real_t best, v
    cdef const real_t* xp
    cdef const real_t* gp
    cdef real_t* dp
    if N * C == 0 or plane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            dp = &dx[0, 0, 0, 0, 0] + job * plane
            gp = &dy[0, 0, 0, 0, 0] + job * oplane if oplane else NULL
            memset(dp, 0, plane * sizeof(real_t))
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        best = -INFINITY
                        best_at = -1
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    v = xp[at + ix]
                                    if v > best or (v != v and best == best) or best_at < 0:
                                        best = v
                                        best_at = at + ix
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        if best_at >= 0:
                            dp[best_at] += gp[o]
                        o = o + 1


def avg_forward(const real_t[:, :, :, :, ::1] x, real_t[:, :, :, :, ::1] y, tables, steps,
                divs, int nthreads=1):
    """``y`` = window sum / (divd[od] * divh[oy] * divw[ox]) (overwritten; 0 where the
    divisor is 0)."""
    _check_pair(x, y, "input and output")
    _check_tables(x.shape, y.shape, tables, steps)
    _check_divisors(divs, y.shape)
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef const real_t[::1] dd = divs[0]
    cdef const real_t[::1] dh = divs[1]
    cdef const real_t[::1] dw = divs[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = y.shape[2], OH = y.shape[3], OW = y.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, o
    cdef real_t acc, d
    cdef const real_t* xp
    cdef real_t* yp
    if N * C == 0 or oplane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            yp = &y[0, 0, 0, 0, 0] + job * oplane
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        acc = 0
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    acc = acc + xp[at + ix]
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        d = dd[od] * dh[oy] * dw[ox]
                        yp[o] = acc / d if d > 0 else 0
                        o = o + 1


def avg_backward(const real_t[:, :, :, :, ::1] dy, real_t[:, :, :, :, ::1] dx, tables,
                 steps, divs, int nthreads=1):
    """``dx`` (overwritten): each ``dy / divisor`` spread over the taps of its window."""
    _check_pair(dx, dy, "gradient and input gradient")
    _check_tables(dx.shape, dy.shape, tables, steps)
    _check_divisors(divs, dy.shape)
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef const real_t[::1] dd = divs[0]
    cdef const real_t[::1] dh = divs[1]
    cdef const real_t[::1] dw = divs[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[3], W = dx.shape[4]
    cdef Py_ssize_t OD = dy.shape[2], OH = dy.shape[3], OW = dy.shape[4]
    cdef Py_ssize_t plane = dx.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, o
    cdef real_t g, d
    cdef const real_t* gp
    cdef real_t* dp
    if N * C == 0 or plane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            dp = &dx[0, 0, 0, 0, 0] + job * plane
            gp = &dy[0, 0, 0, 0, 0] + job * oplane if oplane else NULL
            memset(dp, 0, plane * sizeof(real_t))
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        d = dd[od] * dh[oy] * dw[ox]
                        if d > 0:
                            g = gp[o] / d
                            iz = wd[0, od]
                            while iz < wd[1, od]:
                                iy = wh[0, oy]
                                while iy < wh[1, oy]:
                                    at = (iz * H + iy) * W
                                    ix = ww[0, ox]
                                    while ix < ww[1, ox]:
                                        dp[at + ix] += g
                                        ix = ix + sw
                                    iy = iy + sh
                                iz = iz + sd
                        o = o + 1


# ---------------------------------------------------------------------------------------
# regular 2-D kernels


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


def _check_regular(x, y, kh, kw, sh, sw, pt, pl, dh, dw, nthreads):
    if x.ndim != 4 or y.ndim != 4 or x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output must be 4-D with equal batch and "
                         "channels")
    if min(kh, kw, sh, sw, dh, dw, nthreads) < 1 or pt < 0 or pl < 0:
        raise ValueError("pool kernel: bad window geometry")


def pool_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y, bint is_max,
                         Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                         Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw,
                         const real_t[::1] divh, const real_t[::1] divw, int nthreads=1):
    """Max (``is_max``) or average pooling with a regular window grid (``y`` overwritten).

    Window ``(oy, ox)`` reads input rows ``oy*sh - pt + i*dh`` (``i < kh``) and columns
    ``ox*sw - pl + j*dw`` (``j < kw``); padding is -inf for max and 0 for the sum, which
    average pooling divides by ``divh[oy] * divw[ox]`` (unused for max).

    Per output row: the reduction of the window's rows that lie inside the image, written
    de-interleaved into ``sw`` phase rows (phase ``p`` holds padded columns ``p + sw*i``,
    the fill value outside the image), so that tap ``j`` of output ``ox`` is
    ``phase[(j*dw) % sw][ox + (j*dw) // sw]``: the column reduction is then ``kw``
    contiguous, vectorizable passes written straight into ``y``. Max and average share
    this structure; the branch on ``is_max`` sits outside every inner loop.
    """
    _check_regular(x, y, kh, kw, sh, sw, pt, pl, dh, dw, nthreads)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3]
    if not is_max and (divh.shape[0] != OH or divw.shape[0] != OW):
        raise ValueError("pool kernel: divisor tables do not match the output size")
    if N == 0 or C == 0 or OH == 0 or OW == 0:
        return
    # Padded width covering every window; phase p has L >= ceil((Wp - p) / sw) slots.
    cdef Py_ssize_t Wp = (OW - 1) * sw + (kw - 1) * dw + 1, L = Wp // sw + 1
    dt = np.float32 if real_t is float else np.float64
    scratch = np.empty((nthreads, sw * L + W + 1), dtype=dt)
    cdef real_t[:, ::1] buf = scratch
    cdef real_t fill = -INFINITY if is_max else 0
    cdef Py_ssize_t job, n, c, r, i, p, j, oy, ox, ix, tid, rows, i0, i1, off, q
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
                # Rows of the window inside the image, reduced contiguously first.
                rows = 0
                for i in range(kh):
                    r = oy * sh - pt + i * dh
                    if r < 0 or r >= H or W == 0:
                        continue
                    src = &x[n, c, r, 0]
                    if rows == 0:
                        for ix in range(W):
                            rb[ix] = src[ix]
                    elif is_max:
                        for ix in range(W):
                            rb[ix] = _nanmax(src[ix], rb[ix])
                    else:
                        for ix in range(W):
                            rb[ix] = rb[ix] + src[ix]
                    rows = rows + 1
                for p in range(sw):
                    dst = ph + p * L
                    # Assigned here so Cython makes them thread-private: written only
                    # through pointers, they were shared between threads (a race).
                    i0 = 0
                    i1 = 0
                    _phase_bounds(p, sw, pl, W, L, &i0, &i1)
                    if rows == 0:
                        i1 = i0
                    for i in range(i0):
                        dst[i] = fill
                    for i in range(i1, L):
                        dst[i] = fill
                    off = p - pl
                    for i in range(i0, i1):
                        dst[i] = rb[off + sw * i]
                out = &y[n, c, oy, 0]
                for ox in range(OW):
                    out[ox] = ph[ox]
                for j in range(1, kw):
                    q = j * dw
                    src = ph + (q % sw) * L + q // sw
                    if is_max:
                        for ox in range(OW):
                            out[ox] = _nanmax(src[ox], out[ox])
                    else:
                        for ox in range(OW):
                            out[ox] = out[ox] + src[ox]
                if not is_max:
                    for ox in range(OW):
                        d = divh[oy] * divw[ox]
                        out[ox] = out[ox] / d if d > 0 else 0


def max_backward_regular(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                         real_t[:, :, :, ::1] dx, Py_ssize_t kh, Py_ssize_t kw,
                         Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                         Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dx`` (overwritten) of max pooling on a regular grid (geometry as
    :func:`pool_forward_regular`): each ``dy`` entry goes to the first maximum of its
    window in row-major tap order (the first NaN when there is one).

    The window's column range is clipped once per output column and its row range once
    per output row, so the inner loops carry no bounds tests.
    """
    _check_regular(x, dy, kh, kw, sh, sw, pt, pl, dh, dw, nthreads)
    if tuple(dx.shape) != tuple(x.shape):
        raise ValueError("pool kernel: dx must have the input's shape")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3]
    if N == 0 or C == 0 or H == 0 or W == 0:
        return
    cdef Py_ssize_t job, oy, ox, r, c0, c1, at, best_at, i, j, cstart, rstart, r0, r1, o
    cdef real_t best, v
    cdef const real_t* xp
    cdef const real_t* gp
    cdef real_t* dp
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0] + job * H * W
            dp = &dx[0, 0, 0, 0] + job * H * W
            gp = &dy[0, 0, 0, 0] + job * OH * OW if OH * OW else NULL
            memset(dp, 0, H * W * sizeof(real_t))
            o = 0
            for oy in range(OH):
                # Taps i in [r0, r1) are the rows inside the image.
                rstart = oy * sh - pt
                r0 = 0 if rstart >= 0 else (-rstart + dh - 1) // dh
                r1 = 0 if H - rstart <= 0 else (H - rstart + dh - 1) // dh
                if r1 > kh:
                    r1 = kh
                for ox in range(OW):
                    cstart = ox * sw - pl
                    c0 = 0 if cstart >= 0 else (-cstart + dw - 1) // dw
                    c1 = 0 if W - cstart <= 0 else (W - cstart + dw - 1) // dw
                    if c1 > kw:
                        c1 = kw
                    best = -INFINITY
                    best_at = -1
                    for i in range(r0, r1):
                        at = (rstart + i * dh) * W + cstart
                        for j in range(c0, c1):
                            v = xp[at + j * dw]
                            if v > best or (v != v and best == best) or best_at < 0:
                                best = v
                                best_at = at + j * dw
                    if best_at >= 0:
                        dp[best_at] += gp[o]
                    o = o + 1
