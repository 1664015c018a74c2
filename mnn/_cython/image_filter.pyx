# cython: language_level=3
"""Filtering kernels for mnn.cv: separable (row then column pass, in strips of rows) and
general 2-D correlation, morphology (min/max over a structuring element) and the bilateral
filter.

Borders are handled with index tables built in Python: ``xidx[j]`` is the source column
read for padded column ``j`` (``-1`` reads the constant border value 0), likewise
``yidx`` for rows, so the kernels never read outside the image. Results go through
``scale * sum + delta``, rounded to nearest and saturated for integer outputs.
"""
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport lrint, nearbyintf

ctypedef unsigned char uchar

ctypedef fused src_t:
    uchar
    unsigned short
    short
    float
    double

ctypedef fused out_t:
    uchar
    unsigned short
    short
    int
    float
    double


cdef inline double saturate_to(double v, double lo, double hi) noexcept nogil:
    v = <double>lrint(v)
    return lo if v < lo else (hi if v > hi else v)


cdef inline bint _plain(const int[::1] xidx, Py_ssize_t x, Py_ssize_t K,
                        Py_ssize_t w) noexcept nogil:
    """True when column x reads K consecutive in-range source columns."""
    cdef Py_ssize_t k, first = xidx[x]
    if first < 0 or first + K > w:
        return False
    for k in range(1, K):
        if xidx[x + k] != first + k:
            return False
    return True


cdef enum:
    STRIP = 32  # output rows per strip: the strip's row-pass buffer stays in cache


cdef inline void _border_px(const src_t* row, float* out, Py_ssize_t cn, const int* xidx,
                            const float* kx, Py_ssize_t K, Py_ssize_t x) noexcept nogil:
    cdef Py_ssize_t c, k, sx
    cdef float acc
    for c in range(cn):
        acc = 0
        for k in range(K):
            sx = xidx[x + k]
            if sx >= 0:
                acc = acc + kx[k] * <float>row[sx * cn + c]
        out[x * cn + c] = acc


cdef inline void _row_filter(const src_t* row, float* out, Py_ssize_t w, Py_ssize_t cn,
                             const int* xidx, const float* kx, Py_ssize_t K,
                             Py_ssize_t lo_x, Py_ssize_t hi_x, Py_ssize_t off) noexcept nogil:
    """One row of the horizontal pass (see row_pass)."""
    cdef Py_ssize_t x, c, k, sx, j
    cdef float acc, kk
    # Border columns only: [0, lo_x) and [hi_x, w) (lo_x <= hi_x).
    for x in range(lo_x):
        _border_px(row, out, cn, xidx, kx, K, x)
    for x in range(hi_x, w):
        _border_px(row, out, cn, xidx, kx, K, x)
    if hi_x > lo_x:
        kk = kx[0]
        for j in range(lo_x * cn, hi_x * cn):
            out[j] = kk * <float>row[j + off * cn]
        for k in range(1, K):
            kk = kx[k]
            for j in range(lo_x * cn, hi_x * cn):
                out[j] = out[j] + kk * <float>row[j + (off + k) * cn]


def sep_filter(const src_t[:, ::1] src, Py_ssize_t cn, const int[::1] xidx,
               const int[::1] yidx, const float[::1] kx, const float[::1] ky,
               out_t[:, ::1] dst, double scale, double delta, double lo, double hi,
               int nthreads):
    """Separable correlation in strips of rows: each strip runs the horizontal pass on
    the source rows it needs into a small buffer, then the vertical pass from it.

    dst[y, x*cn + c] = scale * sum_i ky[i] * sum_k kx[k] * src[yidx[y+i], xidx[x+k]*cn+c]
    + delta, saturated for integer outputs; -1 in an index table reads 0.
    """
    cdef Py_ssize_t h = dst.shape[0], w = dst.shape[1] // cn, m = dst.shape[1]
    cdef Py_ssize_t K = kx.shape[0], KY = ky.shape[0], nstrips = (h + STRIP - 1) // STRIP
    cdef Py_ssize_t t, y, y0, y1, i, j, lo_x, hi_x, off, sy
    cdef float v, kk, fs = <float>scale, fd = <float>delta, flo = <float>lo, fhi = <float>hi
    cdef float* buf
    cdef float* acc
    cdef float* r
    cdef out_t* o
    cdef const int* xi = &xidx[0]
    cdef const float* kxp = &kx[0]
    lo_x = 0
    while lo_x < w and not _plain(xidx, lo_x, K, w):
        lo_x += 1
    hi_x = w
    while hi_x > lo_x and not _plain(xidx, hi_x - 1, K, w):
        hi_x -= 1
    off = xidx[lo_x] - lo_x if lo_x < w else 0
    with nogil, parallel(num_threads=nthreads):
        buf = <float*>malloc((STRIP + KY - 1) * m * sizeof(float))
        acc = <float*>malloc(m * sizeof(float))
        for t in prange(nstrips, schedule="static"):
            y0 = t * STRIP
            y1 = y0 + STRIP if y0 + STRIP < h else h
            # Horizontal pass of the rows this strip reads (padded row y0 .. y1 + KY - 2).
            for i in range(y1 - y0 + KY - 1):
                sy = yidx[y0 + i]
                r = buf + i * m
                if sy < 0:
                    for j in range(m):
                        r[j] = 0
                else:
                    _row_filter(&src[sy, 0], r, w, cn, xi, kxp, K, lo_x, hi_x, off)
            for y in range(y0, y1):
                r = buf + (y - y0) * m
                kk = ky[0]
                for j in range(m):
                    acc[j] = kk * r[j]
                for i in range(1, KY):
                    r = buf + (y - y0 + i) * m
                    kk = ky[i]
                    for j in range(m):
                        acc[j] = acc[j] + kk * r[j]
                o = &dst[y, 0]
                for j in range(m):
                    v = fs * acc[j] + fd
                    if out_t is float or out_t is double:
                        o[j] = <out_t>v
                    else:
                        v = nearbyintf(v)
                        o[j] = <out_t>(flo if v < flo else (fhi if v > fhi else v))
        free(buf)
        free(acc)


def filter2d(const src_t[:, ::1] src, Py_ssize_t cn, const int[::1] xidx,
             const int[::1] yidx, const float[:, ::1] kernel, out_t[:, ::1] dst,
             double delta, double lo, double hi, int nthreads):
    """dst[y, x*cn + c] = sum_ij kernel[i, j] * src[yidx[y+i], xidx[x+j]*cn + c] + delta."""
    cdef Py_ssize_t h = dst.shape[0], w = dst.shape[1] // cn
    cdef Py_ssize_t kh = kernel.shape[0], kw = kernel.shape[1], y, x, c, i, j, sy, sx
    cdef double acc
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            for c in range(cn):
                acc = 0
                for i in range(kh):
                    sy = yidx[y + i]
                    if sy < 0:
                        continue
                    for j in range(kw):
                        sx = xidx[x + j]
                        if sx >= 0:
                            acc = acc + kernel[i, j] * <double>src[sy, sx * cn + c]
                acc = acc + delta
                if out_t is float or out_t is double:
                    dst[y, x * cn + c] = <out_t>acc
                else:
                    dst[y, x * cn + c] = <out_t>saturate_to(acc, lo, hi)


def morph(const src_t[:, ::1] src, Py_ssize_t cn, const int[::1] xidx, const int[::1] yidx,
          const int[:, ::1] taps, src_t[:, ::1] dst, int dilate, const double[::1] border,
          int nthreads):
    """Min (erode) or max (dilate) over the structuring element's taps (dy, dx pairs in
    padded coordinates); an index of -1 reads the channel's ``border`` value."""
    cdef Py_ssize_t h = dst.shape[0], w = dst.shape[1] // cn, nt = taps.shape[0]
    cdef Py_ssize_t y, x, c, t, sy, sx
    cdef src_t v, best
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            for c in range(cn):
                best = <src_t>border[c]
                for t in range(nt):
                    sy = yidx[y + taps[t, 0]]
                    sx = xidx[x + taps[t, 1]]
                    if sy < 0 or sx < 0:
                        v = <src_t>border[c]
                    else:
                        v = src[sy, sx * cn + c]
                    if t == 0:
                        best = v
                    elif dilate:
                        if v > best:
                            best = v
                    elif v < best:
                        best = v
                dst[y, x * cn + c] = best


def bilateral(const src_t[:, ::1] src, Py_ssize_t cn, const int[::1] xidx,
              const int[::1] yidx, const int[:, ::1] offs, const float[::1] space_w,
              const float[::1] color_w, double color_scale, Py_ssize_t radius,
              src_t[:, ::1] dst, double lo, double hi, int nthreads):
    """OpenCV's bilateral filter: weights space_w[k] * color_w[index of the colour
    distance], the distance being |dv| (1 channel) or |db|+|dg|+|dr| (3 channels),
    scaled by ``color_scale`` into the color_w table."""
    cdef Py_ssize_t h = dst.shape[0], w = dst.shape[1] // cn, nk = offs.shape[0]
    cdef Py_ssize_t y, x, c, k, sy, sx, idx, ncw = color_w.shape[0]
    cdef double wsum, s0, s1, s2, wk, d, v0, v1, v2, c0, c1, c2, fi
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="dynamic"):
        for x in range(w):
            c0 = src[y, x * cn]
            c1 = src[y, x * cn + 1] if cn == 3 else 0
            c2 = src[y, x * cn + 2] if cn == 3 else 0
            wsum = 0
            s0 = 0
            s1 = 0
            s2 = 0
            for k in range(nk):
                sy = yidx[y + radius + offs[k, 0]]
                sx = xidx[x + radius + offs[k, 1]]
                if sy < 0 or sx < 0:
                    continue
                v0 = src[sy, sx * cn]
                if cn == 3:
                    v1 = src[sy, sx * cn + 1]
                    v2 = src[sy, sx * cn + 2]
                    d = (v0 - c0 if v0 > c0 else c0 - v0) + (v1 - c1 if v1 > c1 else c1 - v1) \
                        + (v2 - c2 if v2 > c2 else c2 - v2)
                else:
                    v1 = 0
                    v2 = 0
                    d = v0 - c0 if v0 > c0 else c0 - v0
                fi = d * color_scale
                if not (fi < <double>(ncw - 1)):  # also catches NaN: never index with it
                    wk = space_w[k] * color_w[ncw - 1]
                    wsum = wsum + wk
                    s0 = s0 + wk * v0
                    s1 = s1 + wk * v1
                    s2 = s2 + wk * v2
                    continue
                idx = <Py_ssize_t>fi
                if idx >= ncw - 1:
                    wk = space_w[k] * color_w[ncw - 1]
                elif src_t is uchar:
                    wk = space_w[k] * color_w[idx]
                else:
                    fi = fi - idx
                    wk = space_w[k] * (color_w[idx] + (color_w[idx + 1] - color_w[idx]) * fi)
                wsum = wsum + wk
                s0 = s0 + wk * v0
                s1 = s1 + wk * v1
                s2 = s2 + wk * v2
            if wsum <= 0:
                wsum = 1
                s0 = c0
                s1 = c1
                s2 = c2
            if src_t is float or src_t is double:
                dst[y, x * cn] = <src_t>(s0 / wsum)
                if cn == 3:
                    dst[y, x * cn + 1] = <src_t>(s1 / wsum)
                    dst[y, x * cn + 2] = <src_t>(s2 / wsum)
            else:
                dst[y, x * cn] = <src_t>saturate_to(s0 / wsum, lo, hi)
                if cn == 3:
                    dst[y, x * cn + 1] = <src_t>saturate_to(s1 / wsum, lo, hi)
                    dst[y, x * cn + 2] = <src_t>saturate_to(s2 / wsum, lo, hi)


cdef inline void _border_px_u8q(const uchar* row, unsigned short* out, Py_ssize_t cn,
                                const int* xidx, const unsigned short* kx, Py_ssize_t K,
                                Py_ssize_t x) noexcept nogil:
    cdef Py_ssize_t c, k, sx
    cdef unsigned int acc
    for c in range(cn):
        acc = 0
        for k in range(K):
            sx = xidx[x + k]
            if sx >= 0:
                acc = acc + kx[k] * row[sx * cn + c]
        out[x * cn + c] = <unsigned short>acc


cdef inline void _row5_u8q(const uchar* r, unsigned short* o, Py_ssize_t n, Py_ssize_t cn,
                           const unsigned short* kx) noexcept nogil:
    # o[j] = sum_k kx[k] * r[j + k * cn], exact in 16 bits (weights sum to 256).
    cdef Py_ssize_t j
    cdef unsigned short k0 = kx[0], k1 = kx[1], k2 = kx[2], k3 = kx[3], k4 = kx[4]
    cdef const uchar* r1 = r + cn
    cdef const uchar* r2 = r + 2 * cn
    cdef const uchar* r3 = r + 3 * cn
    cdef const uchar* r4 = r + 4 * cn
    for j in range(n):
        o[j] = <unsigned short>(k0 * r[j] + k1 * r1[j] + k2 * r2[j] + k3 * r3[j]
                                + k4 * r4[j])


cdef inline void _row3_u8q(const uchar* r, unsigned short* o, Py_ssize_t n, Py_ssize_t cn,
                           const unsigned short* kx) noexcept nogil:
    cdef Py_ssize_t j
    cdef unsigned short k0 = kx[0], k1 = kx[1], k2 = kx[2]
    cdef const uchar* r1 = r + cn
    cdef const uchar* r2 = r + 2 * cn
    for j in range(n):
        o[j] = <unsigned short>(k0 * r[j] + k1 * r1[j] + k2 * r2[j])


cdef inline void _col3_u8q(const unsigned short* b, Py_ssize_t m, uchar* o,
                           const unsigned short* ky) noexcept nogil:
    cdef Py_ssize_t j
    cdef unsigned int k0 = ky[0], k1 = ky[1], k2 = ky[2]
    cdef const unsigned short* b1 = b + m
    cdef const unsigned short* b2 = b + 2 * m
    for j in range(m):
        o[j] = <uchar>((k0 * b[j] + k1 * b1[j] + k2 * b2[j] + (1 << 15)) >> 16)


cdef inline void _col5_u8q(const unsigned short* b, Py_ssize_t m, uchar* o,
                           const unsigned short* ky) noexcept nogil:
    # o[j] = (sum_i ky[i] * b[i * m + j] + 2^15) >> 16 for five consecutive buffer rows.
    cdef Py_ssize_t j
    cdef unsigned int k0 = ky[0], k1 = ky[1], k2 = ky[2], k3 = ky[3], k4 = ky[4]
    cdef const unsigned short* b1 = b + m
    cdef const unsigned short* b2 = b + 2 * m
    cdef const unsigned short* b3 = b + 3 * m
    cdef const unsigned short* b4 = b + 4 * m
    for j in range(m):
        o[j] = <uchar>((k0 * b[j] + k1 * b1[j] + k2 * b2[j] + k3 * b3[j] + k4 * b4[j]
                        + (1 << 15)) >> 16)


cdef inline void _row_filter_u8q(const uchar* row, unsigned short* out, Py_ssize_t w,
                                 Py_ssize_t cn, const int* xidx, const unsigned short* kx,
                                 Py_ssize_t K, Py_ssize_t lo_x, Py_ssize_t hi_x,
                                 Py_ssize_t off) noexcept nogil:
    """One row of the 8-bit fixed-point horizontal pass (see sep_filter_u8q)."""
    cdef Py_ssize_t x, c, k, sx, j, n = (hi_x - lo_x) * cn
    cdef unsigned int acc
    cdef unsigned short kk
    cdef unsigned short* o
    cdef const uchar* r
    # Border columns only: [0, lo_x) and [hi_x, w) (lo_x <= hi_x).
    for x in range(lo_x):
        _border_px_u8q(row, out, cn, xidx, kx, K, x)
    for x in range(hi_x, w):
        _border_px_u8q(row, out, cn, xidx, kx, K, x)
    if n > 0 and K == 5:
        # The usual 5- and 3-tap kernels in one pass over the row (the general loop below
        # makes one load-add-store pass per tap).
        _row5_u8q(row + (lo_x + off) * cn, out + lo_x * cn, n, cn, kx)
    elif n > 0 and K == 3:
        _row3_u8q(row + (lo_x + off) * cn, out + lo_x * cn, n, cn, kx)
    elif n > 0:
        # 16-bit sums: the weights add up to 256, so a sum is at most 255 * 256.
        o = out + lo_x * cn
        r = row + (lo_x + off) * cn
        kk = kx[0]
        for j in range(n):
            o[j] = <unsigned short>(kk * r[j])
        for k in range(1, K):
            kk = kx[k]
            r = row + (lo_x + off + k) * cn
            for j in range(n):
                o[j] = <unsigned short>(o[j] + kk * r[j])


def sep_filter_u8q(const uchar[:, ::1] src, Py_ssize_t cn, const int[::1] xidx,
                   const int[::1] yidx, const unsigned short[::1] kx,
                   const unsigned short[::1] ky, uchar[:, ::1] dst, int nthreads):
    """Separable uint8 smoothing with 8-bit fixed-point weights (OpenCV's bit-exact rule).

    ``kx`` and ``ky`` are non-negative and each sums to 256. The row pass gives exact
    16-bit sums, the column pass exact 32-bit sums (scale 2^16), rounded half up:
    dst = (sum_i ky[i] * sum_k kx[k] * src[yidx[y+i], xidx[x+k]*cn+c] + 2^15) >> 16.
    Same strip and border-table scheme as ``sep_filter``.
    """
    cdef Py_ssize_t h = dst.shape[0], w = dst.shape[1] // cn, m = dst.shape[1]
    cdef Py_ssize_t K = kx.shape[0], KY = ky.shape[0], nstrips = (h + STRIP - 1) // STRIP
    cdef Py_ssize_t t, y, y0, y1, i, j, lo_x, hi_x, off, sy
    cdef unsigned short* buf
    cdef unsigned int* acc
    cdef unsigned short* r
    cdef unsigned int kk
    cdef uchar* o
    cdef const int* xi = &xidx[0]
    cdef const unsigned short* kxp = &kx[0]
    lo_x = 0
    while lo_x < w and not _plain(xidx, lo_x, K, w):
        lo_x += 1
    hi_x = w
    while hi_x > lo_x and not _plain(xidx, hi_x - 1, K, w):
        hi_x -= 1
    off = xidx[lo_x] - lo_x if lo_x < w else 0
    with nogil, parallel(num_threads=nthreads):
        buf = <unsigned short*>malloc((STRIP + KY - 1) * m * sizeof(unsigned short))
        acc = <unsigned int*>malloc(m * sizeof(unsigned int))
        # Dynamic: on a loaded machine a descheduled thread leaves its strips to the other.
        for t in prange(nstrips, schedule="dynamic"):
            y0 = t * STRIP
            y1 = y0 + STRIP if y0 + STRIP < h else h
            for i in range(y1 - y0 + KY - 1):
                sy = yidx[y0 + i]
                r = buf + i * m
                if sy < 0:
                    for j in range(m):
                        r[j] = 0
                else:
                    _row_filter_u8q(&src[sy, 0], r, w, cn, xi, kxp, K, lo_x, hi_x, off)
            for y in range(y0, y1):
                r = buf + (y - y0) * m
                if KY == 5:
                    _col5_u8q(r, m, &dst[y, 0], &ky[0])
                    continue
                if KY == 3:
                    _col3_u8q(r, m, &dst[y, 0], &ky[0])
                    continue
                kk = ky[0]
                for j in range(m):
                    acc[j] = kk * r[j]
                for i in range(1, KY - 1):
                    r = buf + (y - y0 + i) * m
                    kk = ky[i]
                    for j in range(m):
                        acc[j] = acc[j] + kk * r[j]
                # The last row is fused with the rounding and the store.
                r = buf + (y - y0 + KY - 1) * m
                kk = ky[KY - 1]
                o = &dst[y, 0]
                if KY == 1:
                    for j in range(m):
                        o[j] = <uchar>((acc[j] + (1 << 15)) >> 16)
                else:
                    for j in range(m):
                        o[j] = <uchar>((acc[j] + kk * r[j] + (1 << 15)) >> 16)
        free(buf)
        free(acc)
