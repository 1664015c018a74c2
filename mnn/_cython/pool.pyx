# cython: language_level=3
"""Max and average pooling on a regular 2-D window grid over (N, C, H, W), and their
gradients. Other window layouts (3-D, global, adaptive) use ``pool_table.pyx``.

Window ``(oy, ox)`` reads input rows ``oy*sh - pt + i*dh`` (``i < kh``) and columns
``ox*sw - pl + j*dw`` (``j < kw``); taps in the padding are -inf for max and 0 for the sum,
which average pooling divides by ``divh[oy] * divw[ox]`` (Python's tap counts).

Per output row the kernels first reduce the window's rows that lie inside the image into
one row (one pass for up to three rows), placed in a row buffer padded with the fill value
so that the column reduction reads ``row[ox*sw + j*dw]`` without bounds tests, with
constant-stride loops for the common strides 1 and 2. Max and average share this
structure (``is_max``; the branch sits outside every inner loop). Max pooling propagates
NaN, as torch and numpy do, and its gradient goes where torch's goes: the first maximum
of each window in row-major tap order, or the last NaN when the window holds NaNs. The
window maxima are recomputed per row and matched tap by tap without data-dependent
branches.

Every kernel parallelizes over the N * C planes (a thread owns whole planes of its output)
and releases the GIL; per-thread scratch rows come from Python.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.string cimport memcpy, memset

ctypedef fused real_t:
    float
    double


cdef inline real_t _nanmax(real_t a, real_t b) noexcept nogil:
    # max that propagates NaN from either side; two selects and no branch, so the loops
    # vectorize.
    cdef real_t m = a if a > b else b
    return a if a != a else m


cdef inline real_t _plane_reduce(const real_t* src, Py_ssize_t S, bint is_max) noexcept nogil:
    # Sixteen partial results (one vector register of floats) so the loop vectorizes
    # without reassociating a single accumulator; then the partials and the tail.
    cdef real_t part[16]
    cdef Py_ssize_t i, l, full = S - S % 16
    cdef real_t acc
    if full == 0:
        acc = src[0]
        for i in range(1, S):
            acc = _nanmax(src[i], acc) if is_max else acc + src[i]
        return acc if is_max else acc / S
    for l in range(16):
        part[l] = src[l]
    if is_max:
        for i in range(16, full, 16):
            for l in range(16):
                part[l] = _nanmax(src[i + l], part[l])
    else:
        for i in range(16, full, 16):
            for l in range(16):
                part[l] = part[l] + src[i + l]
    acc = part[0]
    for l in range(1, 16):
        acc = _nanmax(part[l], acc) if is_max else acc + part[l]
    for i in range(full, S):
        acc = _nanmax(src[i], acc) if is_max else acc + src[i]
    return acc if is_max else acc / S


cdef inline void _reduce_rows(const real_t* plane, Py_ssize_t H, Py_ssize_t W,
                              Py_ssize_t r0, Py_ssize_t kh, Py_ssize_t dh, bint is_max,
                              real_t fill, real_t* rb) noexcept nogil:
    """``rb[0:W]`` = max or sum over the taps ``r0 + i*dh`` (``i < kh``) inside the image
    (``fill`` when there are none); up to three rows in one pass."""
    cdef const real_t* rows[3]
    cdef const real_t* src
    cdef Py_ssize_t i, r, ix, n = 0
    for i in range(kh):
        r = r0 + i * dh
        if 0 <= r < H:
            if n < 3:
                rows[n] = plane + r * W
            n = n + 1
    if n == 0:
        for ix in range(W):
            rb[ix] = fill
        return
    if n == 1:
        for ix in range(W):
            rb[ix] = rows[0][ix]
    elif n == 2 and is_max:
        for ix in range(W):
            rb[ix] = _nanmax(rows[1][ix], rows[0][ix])
    elif n == 2:
        for ix in range(W):
            rb[ix] = rows[0][ix] + rows[1][ix]
    elif is_max:
        for ix in range(W):
            rb[ix] = _nanmax(rows[2][ix], _nanmax(rows[1][ix], rows[0][ix]))
    else:
        for ix in range(W):
            rb[ix] = rows[0][ix] + rows[1][ix] + rows[2][ix]
    if n <= 3:
        return
    n = 0
    for i in range(kh):
        r = r0 + i * dh
        if 0 <= r < H:
            n = n + 1
            if n > 3:
                src = plane + r * W
                if is_max:
                    for ix in range(W):
                        rb[ix] = _nanmax(src[ix], rb[ix])
                else:
                    for ix in range(W):
                        rb[ix] = rb[ix] + src[ix]


cdef inline void _reduce_cols(const real_t* rp, real_t* out, Py_ssize_t OW, Py_ssize_t kw,
                              Py_ssize_t sw, Py_ssize_t dw, bint is_max) noexcept nogil:
    """``out[ox]`` = max or sum of ``rp[ox*sw + j*dw]`` over ``j < kw`` (``rp`` padded)."""
    cdef Py_ssize_t ox, j, q
    if dw == 1 and sw == 2 and kw == 2:
        if is_max:
            for ox in range(OW):
                out[ox] = _nanmax(rp[2 * ox + 1], rp[2 * ox])
        else:
            for ox in range(OW):
                out[ox] = rp[2 * ox] + rp[2 * ox + 1]
        return
    if dw == 1 and sw == 2 and kw == 3:
        if is_max:
            for ox in range(OW):
                out[ox] = _nanmax(rp[2 * ox + 2], _nanmax(rp[2 * ox + 1], rp[2 * ox]))
        else:
            for ox in range(OW):
                out[ox] = rp[2 * ox] + rp[2 * ox + 1] + rp[2 * ox + 2]
        return
    if sw == 1:
        for ox in range(OW):
            out[ox] = rp[ox]
        for j in range(1, kw):
            q = j * dw
            if is_max:
                for ox in range(OW):
                    out[ox] = _nanmax(rp[ox + q], out[ox])
            else:
                for ox in range(OW):
                    out[ox] = out[ox] + rp[ox + q]
        return
    for ox in range(OW):
        out[ox] = rp[ox * sw]
    for j in range(1, kw):
        q = j * dw
        if is_max:
            for ox in range(OW):
                out[ox] = _nanmax(rp[ox * sw + q], out[ox])
        else:
            for ox in range(OW):
                out[ox] = out[ox] + rp[ox * sw + q]


cdef inline void _fill_borders(real_t* rp, Py_ssize_t pl, Py_ssize_t W, Py_ssize_t Wp,
                               real_t fill) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(pl):
        rp[i] = fill
    for i in range(pl + W, Wp):
        rp[i] = fill


def _col_ranges(kw, dw, pl, sw, W, OW):
    """Per window column j: the outputs ``lo[j] <= ox < hi[j]`` whose tap
    ``ox*sw + j*dw - pl`` lies inside ``0..W-1`` (computed once per call: the divisions
    cost more than a row's work when done per row)."""
    coff = np.arange(kw, dtype=np.int64) * dw - pl
    lo = np.where(coff >= 0, 0, (-coff + sw - 1) // sw)
    hi = np.where(W - coff <= 0, 0, (W - coff + sw - 1) // sw)
    hi = np.minimum(hi, OW)
    lo = np.minimum(lo, hi)
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


def _geometry(x, y, kh, kw, sh, sw, pt, pl, dh, dw, nthreads):
    """Checks; returns the padded row width (every window's columns, and the input)."""
    if x.ndim != 4 or y.ndim != 4 or x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError("pool kernel: input and output must be 4-D with equal batch and "
                         "channels")
    if min(kh, kw, sh, sw, dh, dw, nthreads) < 1 or pt < 0 or pl < 0:
        raise ValueError("pool kernel: bad window geometry")
    return max((y.shape[3] - 1) * sw + (kw - 1) * dw + 1, pl + x.shape[3])


def _scratch(nthreads, width, dtype):
    # Per-thread rows, 64-byte apart so threads never share a cache line.
    width = (width + 15) // 16 * 16 + 16
    return np.empty((nthreads, width), dtype=dtype)


def pool_forward_regular(const real_t[:, :, :, ::1] x, real_t[:, :, :, ::1] y, bint is_max,
                         Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                         Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw,
                         const real_t[::1] divh, const real_t[::1] divw, int nthreads=1):
    """Max (``is_max``) or average pooling (``y`` overwritten); ``divh``/``divw`` are
    used by average pooling only."""
    cdef Py_ssize_t Wp = _geometry(x, y, kh, kw, sh, sw, pt, pl, dh, dw, nthreads)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3]
    if not is_max and (divh.shape[0] != OH or divw.shape[0] != OW):
        raise ValueError("pool kernel: divisor tables do not match the output size")
    if N == 0 or C == 0 or OH == 0 or OW == 0:
        return
    cdef real_t[:, ::1] buf = _scratch(nthreads, Wp, np.float32 if real_t is float
                                       else np.float64)
    cdef real_t fill = -INFINITY if is_max else 0
    cdef Py_ssize_t job, oy, ox, p, band
    # Jobs are bands of output rows, band b of every plane before band b + 1: thread t
    # then reads the rows a convolution before it wrote on the same core (the direct and
    # fused conv kernels split an image's pixels, top rows first) instead of half its
    # planes from the other core's cache.
    cdef Py_ssize_t parts = min(nthreads, OH)
    cdef Py_ssize_t per = (OH + parts - 1) // parts
    cdef real_t* rp
    cdef real_t* out
    cdef const real_t* plane
    cdef real_t d
    with nogil:
        for job in prange(N * C * parts, num_threads=nthreads, schedule="static"):
            rp = &buf[openmp.omp_get_thread_num(), 0]
            p = job % (N * C)
            band = job // (N * C)
            plane = &x[0, 0, 0, 0] + p * H * W
            _fill_borders(rp, pl, W, Wp, fill)
            for oy in range(band * per, min(OH, band * per + per)):
                out = &y[0, 0, 0, 0] + (p * OH + oy) * OW
                _reduce_rows(plane, H, W, oy * sh - pt, kh, dh, is_max, fill, rp + pl)
                _reduce_cols(rp, out, OW, kw, sw, dw, is_max)
                if not is_max:
                    for ox in range(OW):
                        d = divh[oy] * divw[ox]
                        out[ox] = out[ox] / d if d > 0 else 0


cdef extern from "plane_reduce.h":
    const int MNN_PLANE_REDUCE_AVX512
    void mnn_plane_mean_f32(const float* x, Py_ssize_t P, Py_ssize_t S, float* y) nogil
    void mnn_plane_max_f32(const float* x, Py_ssize_t P, Py_ssize_t S, float* y) nogil


cdef extern from *:
    int __builtin_ctz(unsigned int x) nogil
    int __builtin_ctzll(unsigned long long x) nogil
    int __builtin_clz(unsigned int x) nogil
    int __builtin_clzll(unsigned long long x) nogil


cdef inline void _max_backward_2x2(const real_t* plane, const real_t* g, real_t* dplane,
                                   Py_ssize_t W, Py_ssize_t OH,
                                   Py_ssize_t OW) noexcept nogil:
    # 2x2 windows, stride 2, every window inside the image (LeNet's and VGG's pooling).
    # Small planes leave no room for vectors along a row, and a chain of compare-and-
    # select per window becomes mispredicted branches. Instead: the window max m, one bit
    # per tap equal to m and one per NaN tap; the lowest equal bit is the first maximum
    # in row-major order, the highest NaN bit the last NaN (torch's choice).
    cdef Py_ssize_t oy, ox, first
    cdef const real_t* r0
    cdef const real_t* r1
    cdef real_t a, b, c, d, m
    cdef unsigned int eq, nan
    for oy in range(OH):
        r0 = plane + 2 * oy * W
        r1 = r0 + W
        for ox in range(OW):
            a = r0[2 * ox]
            b = r0[2 * ox + 1]
            c = r1[2 * ox]
            d = r1[2 * ox + 1]
            m = _nanmax(_nanmax(a, b), _nanmax(c, d))
            eq = (a == m) | ((b == m) << 1) | ((c == m) << 2) | ((d == m) << 3)
            nan = (a != a) | ((b != b) << 1) | ((c != c) << 2) | ((d != d) << 3)
            if nan:
                first = 31 - __builtin_clz(nan)
            else:
                first = __builtin_ctz(eq)
            dplane[(2 * oy + (first >> 1)) * W + 2 * ox + (first & 1)] += g[oy * OW + ox]


cdef inline void _first_max_32(const real_t* plane, Py_ssize_t H, Py_ssize_t W,
                               Py_ssize_t r0, real_t* rp, const real_t* m, const real_t* g,
                               real_t* dplane, unsigned int* bits, const long* tap_r,
                               const long* tap_c, Py_ssize_t kh, Py_ssize_t kw,
                               Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t sw,
                               Py_ssize_t pl, Py_ssize_t OW,
                               Py_ssize_t OWpad) noexcept nogil:
    # The common case of max_backward_regular: at most 32 taps and every window max of
    # this row finite or +inf (no NaN, no -inf, so a padded tap, -inf, never equals it).
    # Each window row is copied into the padded row ``rp``, so the mask loops run over
    # ``OWpad`` (a multiple of 16) windows with no scalar remainder: one 32-bit mask per
    # window (the lane width of float), then the scatter of dy.
    cdef Py_ssize_t i, j, t, ox, r, f, q
    cdef unsigned int b
    for ox in range(OWpad):
        bits[ox] = 0
    for i in range(kh):
        r = r0 + i * dh
        if r < 0 or r >= H:
            continue
        memcpy(rp + pl, plane + r * W, W * sizeof(real_t))
        for j in range(kw):
            t = i * kw + j
            q = j * dw
            if sw == 1:
                for ox in range(OWpad):
                    bits[ox] |= <unsigned int>(rp[ox + q] == m[ox]) << t
            elif sw == 2:
                for ox in range(OWpad):
                    bits[ox] |= <unsigned int>(rp[2 * ox + q] == m[ox]) << t
            else:
                for ox in range(OWpad):
                    bits[ox] |= <unsigned int>(rp[ox * sw + q] == m[ox]) << t
    for ox in range(OW):
        b = bits[ox]
        if b != 0:
            f = __builtin_ctz(b)
            dplane[(r0 + tap_r[f]) * W + ox * sw - pl + tap_c[f]] += g[ox]


def max_backward_regular(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                         real_t[:, :, :, ::1] dx, Py_ssize_t kh, Py_ssize_t kw,
                         Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                         Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dx`` (overwritten) of max pooling: each ``dy`` entry goes to the first maximum of
    its window in row-major tap order, or to its last NaN (torch's choices).

    Per output row: the window maxima ``m`` (as the forward kernel); then, vector-wide
    over the windows, one bit per tap inside the image that equals ``m`` and one per NaN
    tap, in row-major tap order, 64 taps per pass; the lowest equal bit is the first
    maximum, the highest NaN bit of the last pass with one the last NaN. Then one
    scatter of ``dy`` per window. No data-dependent branch in the vector loops.
    """
    cdef Py_ssize_t Wp = _geometry(x, dy, kh, kw, sh, sw, pt, pl, dh, dw, nthreads)
    if tuple(dx.shape) != tuple(x.shape):
        raise ValueError("pool kernel: dx must have the input's shape")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3]
    if N == 0 or C == 0 or H == 0 or W == 0:
        return
    if OH == 0 or OW == 0:
        dx[...] = 0
        return
    cdef Py_ssize_t nt = kh * kw
    # Tap t's row and column offsets inside its window (row-major order).
    taps = np.arange(nt, dtype=np.int64)
    cdef const long[::1] tap_r = (taps // kw) * dh
    cdef const long[::1] tap_j = taps % kw
    cdef const long[::1] tap_c = (taps % kw) * dw
    lo_arr, hi_arr = _col_ranges(kw, dw, pl, sw, W, OW)
    cdef const long[::1] col_lo = lo_arr
    cdef const long[::1] col_hi = hi_arr
    # Per thread: the padded row and the window maxima; the tap bits; the first taps.
    # The padded row also covers OWpad windows (OW rounded up to 16: see _first_max_32).
    cdef Py_ssize_t OWpad = (OW + 15) // 16 * 16  # (C division: no -(-a // b) here)
    Wp = max(Wp, (OWpad - 1) * sw + (kw - 1) * dw + 1)
    cdef Py_ssize_t stride = (Wp + 15) // 16 * 16 + 16
    cdef Py_ssize_t ostride = OWpad + 16
    cdef real_t[:, ::1] buf = _scratch(nthreads, stride + ostride,
                                       np.float32 if real_t is float else np.float64)
    cdef unsigned long long[:, ::1] bitbuf = np.empty((nthreads, 2 * ostride), np.uint64)
    cdef long[:, ::1] firstbuf = np.empty((nthreads, ostride), np.int64)
    cdef unsigned int[:, ::1] bit32buf = np.empty((nthreads, ostride), np.uint32)
    cdef unsigned int* bits32
    cdef bint row_odd
    cdef real_t fill = -INFINITY
    cdef Py_ssize_t job, oy, ox, t, t0, t1, r, r0, coff, lo, hi, tid, f
    cdef unsigned int shift
    cdef real_t* rp
    cdef real_t* m
    cdef unsigned long long* bits
    cdef unsigned long long* nans
    cdef long* first
    cdef const real_t* plane
    cdef const real_t* xrow
    cdef const real_t* g
    cdef real_t* dplane
    cdef real_t v
    cdef bint two_by_two = (kh == 2 and kw == 2 and sh == 2 and sw == 2 and dh == 1
                            and dw == 1 and pt == 0 and pl == 0 and 2 * OH <= H
                            and 2 * OW <= W)
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            rp = &buf[tid, 0]
            m = rp + stride
            bits = &bitbuf[tid, 0]
            nans = bits + ostride
            first = &firstbuf[tid, 0]
            bits32 = &bit32buf[tid, 0]
            for ox in range(OW, ostride):
                m[ox] = 0  # read (and ignored) by the padded mask loops
            plane = &x[0, 0, 0, 0] + job * H * W
            dplane = &dx[0, 0, 0, 0] + job * H * W
            memset(dplane, 0, H * W * sizeof(real_t))
            if two_by_two:
                _max_backward_2x2(plane, &dy[0, 0, 0, 0] + job * OH * OW, dplane, W, OH, OW)
                continue
            _fill_borders(rp, pl, W, Wp, fill)
            for oy in range(OH):
                g = &dy[0, 0, 0, 0] + (job * OH + oy) * OW
                r0 = oy * sh - pt
                _reduce_rows(plane, H, W, r0, kh, dh, True, fill, rp + pl)
                _reduce_cols(rp, m, OW, kw, sw, dw, True)
                row_odd = 0
                for ox in range(OW):
                    row_odd = row_odd | (m[ox] != m[ox]) | (m[ox] == fill)
                if nt <= 32 and not row_odd:
                    _first_max_32(plane, H, W, r0, rp, m, g, dplane, bits32, &tap_r[0],
                                  &tap_c[0], kh, kw, dh, dw, sw, pl, OW, OWpad)
                    continue
                for ox in range(OW):
                    first[ox] = -1
                t0 = 0
                while t0 < nt:
                    t1 = t0 + 64 if t0 + 64 < nt else nt
                    for ox in range(OW):
                        bits[ox] = 0
                        nans[ox] = 0
                    for t in range(t0, t1):
                        r = r0 + tap_r[t]
                        if r < 0 or r >= H:
                            continue
                        coff = tap_c[t] - pl
                        lo = col_lo[tap_j[t]]
                        hi = col_hi[tap_j[t]]
                        xrow = plane + r * W + coff
                        shift = <unsigned int>(t - t0)
                        if sw == 1:
                            for ox in range(lo, hi):
                                v = xrow[ox]
                                bits[ox] |= <unsigned long long>(v == m[ox]) << shift
                                nans[ox] |= <unsigned long long>(v != v) << shift
                        elif sw == 2:
                            for ox in range(lo, hi):
                                v = xrow[2 * ox]
                                bits[ox] |= <unsigned long long>(v == m[ox]) << shift
                                nans[ox] |= <unsigned long long>(v != v) << shift
                        else:
                            for ox in range(lo, hi):
                                v = xrow[ox * sw]
                                bits[ox] |= <unsigned long long>(v == m[ox]) << shift
                                nans[ox] |= <unsigned long long>(v != v) << shift
                    for ox in range(OW):
                        # m is NaN exactly when the window holds a NaN; then no tap
                        # equals m and each pass with a NaN moves the choice on.
                        if nans[ox] != 0:
                            first[ox] = t0 + 63 - __builtin_clzll(nans[ox])
                        elif first[ox] < 0 and bits[ox] != 0:
                            first[ox] = t0 + __builtin_ctzll(bits[ox])
                    t0 = t1
                for ox in range(OW):
                    f = first[ox]
                    if f >= 0:
                        dplane[(r0 + tap_r[f]) * W + ox * sw - pl + tap_c[f]] += g[ox]


def avg_backward_regular(const real_t[:, :, :, ::1] dy, real_t[:, :, :, ::1] dx,
                         Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                         Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw,
                         const real_t[::1] divh, const real_t[::1] divw, int nthreads=1):
    """``dx`` (overwritten) of average pooling: ``dy / (divh[oy] * divw[ox])`` added to
    every tap of its window inside the image."""
    _geometry(dx, dy, kh, kw, sh, sw, pt, pl, dh, dw, nthreads)
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[2], W = dx.shape[3]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3]
    if divh.shape[0] != OH or divw.shape[0] != OW:
        raise ValueError("pool kernel: divisor tables do not match the output size")
    if N == 0 or C == 0 or H == 0 or W == 0:
        return
    if OH == 0 or OW == 0:
        dx[...] = 0
        return
    cdef real_t[:, ::1] buf = _scratch(nthreads, OW,
                                       np.float32 if real_t is float else np.float64)
    lo_arr, hi_arr = _col_ranges(kw, dw, pl, sw, W, OW)
    cdef const long[::1] col_lo = lo_arr
    cdef const long[::1] col_hi = hi_arr
    cdef Py_ssize_t job, oy, ox, i, j, r, coff, lo, hi
    cdef real_t* gd
    cdef real_t* drow
    cdef const real_t* g
    cdef real_t* dplane
    cdef real_t d
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            gd = &buf[openmp.omp_get_thread_num(), 0]
            dplane = &dx[0, 0, 0, 0] + job * H * W
            memset(dplane, 0, H * W * sizeof(real_t))
            for oy in range(OH):
                g = &dy[0, 0, 0, 0] + (job * OH + oy) * OW
                for ox in range(OW):
                    d = divh[oy] * divw[ox]
                    gd[ox] = g[ox] / d if d > 0 else 0
                for i in range(kh):
                    r = oy * sh - pt + i * dh
                    if r < 0 or r >= H:
                        continue
                    drow = dplane + r * W
                    for j in range(kw):
                        coff = j * dw - pl
                        lo = col_lo[j]
                        hi = col_hi[j]
                        if sw == 1:
                            for ox in range(lo, hi):
                                drow[ox + coff] += gd[ox]
                        elif sw == 2:
                            for ox in range(lo, hi):
                                drow[2 * ox + coff] += gd[ox]
                        else:
                            for ox in range(lo, hi):
                                drow[ox * sw + coff] += gd[ox]


def global_forward(const real_t[:, ::1] x, real_t[::1] y, bint is_max, int nthreads=1):
    """``y[p]`` = max or mean of the contiguous plane ``x[p, :]`` (global pooling)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("pool kernel: one output per plane")
    if nthreads < 1:
        raise ValueError("pool kernel: bad thread count")
    cdef Py_ssize_t P = x.shape[0], S = x.shape[1], p
    if P == 0:
        return
    if S == 0:
        raise ValueError("pool kernel: empty planes")
    cdef Py_ssize_t part, parts, p0, p1
    if real_t is float and MNN_PLANE_REDUCE_AVX512 and S >= 16:
        # float32 planes 16 lanes at a time (include/plane_reduce.h), in one contiguous
        # range of planes per thread. Planes under 16 values keep the loop below: it adds
        # them in order, as numpy does.
        parts = nthreads if nthreads < P else P
        with nogil:
            for part in prange(parts, num_threads=nthreads, schedule="static"):
                p0 = P * part // parts
                p1 = P * (part + 1) // parts
                if is_max:
                    mnn_plane_max_f32(&x[p0, 0], p1 - p0, S, &y[p0])
                else:
                    mnn_plane_mean_f32(&x[p0, 0], p1 - p0, S, &y[p0])
        return
    with nogil:
        for p in prange(P, num_threads=nthreads, schedule="static"):
            y[p] = _plane_reduce(&x[p, 0], S, is_max)

