# cython: language_level=3
"""Separable resampling kernels for mnn.cv.resize.

A resize is two passes over tap tables built in Python: a horizontal pass turns each
needed source row into ``dw`` filtered pixels, a vertical pass mixes ``K`` of those rows
per output row. Tables hold source indices already clamped into the image, so the
kernels never read out of bounds. Inner loops walk raw row pointers so the compiler can
vectorise them.

uint8 with fixed-point weights (OpenCV's 11-bit coefficients) follows OpenCV's integer
rounding: the horizontal sums stay exact and the vertical pass rounds once,
``(sum + 2^21) >> 22``.
"""
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport lrintf

cdef extern from *:
    """
    #include <string.h>
    #ifdef __SSE4_1__
    #include <smmintrin.h>
    #endif
    /* Bilinear mixes of two neighbouring pixels (cn = 3 or 4 channels, the right one at
       o + cn), one pixel per 4-lane vector. For cn = 3 a vector reads one element past
       the pair and writes one past the pixel (overwritten by the next pixel): the vector
       loop then stops one pixel early and the caller guarantees one readable element
       past the row. For cn = 4 every read and write is exact. */

    /* out[cn x + c] = (row[o + c] w0[x] + row[o + cn + c] w1[x] + 2^21) >> 22, clamped:
       the vertical-first uint8 resize, row holding exact vertically blended sums. */
    static void mnn_mix_u8(const int* row, const int* ofs, const int* w0, const int* w1,
                           int dw, int cn, unsigned char* out) {
        int x = 0;
    #ifdef __SSE4_1__
        const __m128i half = _mm_set1_epi32(1 << 21);
        const int vend = cn == 4 ? dw : dw - 1;
        for (; x < vend; x++) {
            const int* p = row + ofs[x];
            __m128i a = _mm_loadu_si128((const __m128i*)p);
            __m128i b = _mm_loadu_si128((const __m128i*)(p + cn));
            __m128i v = _mm_add_epi32(_mm_mullo_epi32(a, _mm_set1_epi32(w0[x])),
                                      _mm_mullo_epi32(b, _mm_set1_epi32(w1[x])));
            v = _mm_srai_epi32(_mm_add_epi32(v, half), 22);
            v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
            int word = _mm_cvtsi128_si32(v);
            memcpy(out + cn * x, &word, 4);
        }
    #endif
        for (; x < dw; x++) {
            const int* p = row + ofs[x];
            for (int c = 0; c < cn; c++) {
                /* Weights are non-negative, so only the top needs a clamp. */
                int v = (p[c] * w0[x] + p[c + cn] * w1[x] + (1 << 21)) >> 22;
                out[cn * x + c] = (unsigned char)(v < 255 ? v : 255);
            }
        }
    }

    /* out[cn x + c] = row[o + c] w0[x] + row[o + cn + c] w1[x] (exact integers): the
       horizontal pass of a uint8 resize with 11-bit weights. */
    static void mnn_hmix_u8(const unsigned char* row, const int* ofs, const int* w0,
                            const int* w1, int dw, int cn, int* out) {
        int x = 0;
    #ifdef __SSE4_1__
        const int vend = cn == 4 ? dw : dw - 1;
        for (; x < vend; x++) {
            const unsigned char* p = row + ofs[x];
            int a, b;
            memcpy(&a, p, 4);
            memcpy(&b, p + cn, 4);
            __m128i v = _mm_add_epi32(
                _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(a)),
                                _mm_set1_epi32(w0[x])),
                _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(b)),
                                _mm_set1_epi32(w1[x])));
            _mm_storeu_si128((__m128i*)(out + cn * x), v);
        }
    #endif
        for (; x < dw; x++) {
            const unsigned char* p = row + ofs[x];
            for (int c = 0; c < cn; c++)
                out[cn * x + c] = p[c] * w0[x] + p[c + cn] * w1[x];
        }
    }

    /* out[cn x + c] = row[o + c] w0[x] + row[o + cn + c] w1[x] in float. */
    static void mnn_mix_f32(const float* row, const int* ofs, const float* w0,
                            const float* w1, int dw, int cn, float* out, const float* next) {
        int x = 0;
    #ifdef __SSE4_1__
        const int vend = cn == 4 ? dw : dw - 1;
        for (; x < vend; x++) {
            const float* p = row + ofs[x];
            if (next) __builtin_prefetch(next + ofs[x]);
            __m128 v = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p), _mm_set1_ps(w0[x])),
                                  _mm_mul_ps(_mm_loadu_ps(p + cn), _mm_set1_ps(w1[x])));
            _mm_storeu_ps(out + cn * x, v);
        }
    #endif
        for (; x < dw; x++) {
            const float* p = row + ofs[x];
            for (int c = 0; c < cn; c++)
                out[cn * x + c] = p[c] * w0[x] + p[c + cn] * w1[x];
        }
    }

    /* One output row of a 3-channel uint8 halving: out[3x + c] = (the four bytes c of
       pixels 2x and 2x + 1 of rows r0 and r1 + 2) >> 2. The vector loop reads 8 bytes
       at 6x of each row (two past the pair) and writes 4 bytes at 3x, so it stops one
       pixel early and the scalar loop writes the last pixel. */
    static void mnn_half3_u8(const unsigned char* r0, const unsigned char* r1, int dw,
                             unsigned char* out) {
        int x = 0;
    #ifdef __SSE4_1__
        const __m128i two = _mm_set1_epi16(2);
        for (; x < dw - 1; x++) {
            __m128i a = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i*)(r0 + 6 * x)));
            __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i*)(r1 + 6 * x)));
            __m128i v = _mm_add_epi16(a, b);
            v = _mm_add_epi16(v, _mm_srli_si128(v, 6));
            v = _mm_srli_epi16(_mm_add_epi16(v, two), 2);
            v = _mm_packus_epi16(v, v);
            int word = _mm_cvtsi128_si32(v);
            memcpy(out + 3 * x, &word, 4);
        }
    #endif
        for (; x < dw; x++) {
            for (int c = 0; c < 3; c++) {
                int i = 6 * x + c;
                out[3 * x + c] = (unsigned char)((r0[i] + r0[i + 3] + r1[i] + r1[i + 3] + 2) >> 2);
            }
        }
    }
    """
    void mnn_half3_u8(const unsigned char* r0, const unsigned char* r1, int dw,
                      unsigned char* out) nogil
    void mnn_mix_u8(const int* row, const int* ofs, const int* w0, const int* w1,
                    int dw, int cn, unsigned char* out) nogil
    void mnn_hmix_u8(const unsigned char* row, const int* ofs, const int* w0, const int* w1,
                     int dw, int cn, int* out) nogil
    void mnn_mix_f32(const float* row, const int* ofs, const float* w0, const float* w1,
                     int dw, int cn, float* out, const float* next) nogil

ctypedef fused src_t:
    unsigned char
    unsigned short
    short
    float
    double

ctypedef fused out_t:
    unsigned char
    unsigned short
    short
    float
    double


cdef inline void _hrow2_u8(const unsigned char* row, int* out, const int* xo, const int* wt,
                           Py_ssize_t dw, Py_ssize_t cn) noexcept nogil:
    # Two taps per output pixel; called with a literal cn so the channel loop unrolls.
    cdef Py_ssize_t x, c, o0, o1
    cdef int w0, w1
    for x in range(dw):
        o0 = xo[2 * x] * cn
        o1 = xo[2 * x + 1] * cn
        w0 = wt[2 * x]
        w1 = wt[2 * x + 1]
        for c in range(cn):
            out[x * cn + c] = row[o0 + c] * w0 + row[o1 + c] * w1


cdef inline void _hrow2_f(const float* row, float* out, const int* xo, const float* wt,
                          Py_ssize_t dw, Py_ssize_t cn) noexcept nogil:
    cdef Py_ssize_t x, c, o0, o1
    cdef float w0, w1
    for x in range(dw):
        o0 = xo[2 * x] * cn
        o1 = xo[2 * x + 1] * cn
        w0 = wt[2 * x]
        w1 = wt[2 * x + 1]
        for c in range(cn):
            out[x * cn + c] = row[o0 + c] * w0 + row[o1 + c] * w1


def hpass_u8_fixed(const unsigned char[:, :, ::1] src, const int[::1] rows,
                   const int[:, ::1] xofs, const int[:, ::1] xw, int[:, :, ::1] tmp,
                   int nthreads):
    """tmp[i, x, c] = sum_k xw[x, k] * src[rows[i], xofs[x, k], c] (exact integers)."""
    cdef Py_ssize_t n = rows.shape[0], dw = xofs.shape[0], K = xofs.shape[1]
    cdef Py_ssize_t cn = src.shape[2], i, x, k, c, o0, o1
    cdef const int* xo = &xofs[0, 0]
    cdef const int* wt = &xw[0, 0]
    cdef const unsigned char* row
    cdef int* out
    cdef int acc, w0, w1
    for i in prange(n, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        row = &src[rows[i], 0, 0]
        out = &tmp[i, 0, 0]
        if K == 2 and cn == 3:
            _hrow2_u8(row, out, xo, wt, dw, 3)
        elif K == 2 and cn == 1:
            _hrow2_u8(row, out, xo, wt, dw, 1)
        elif K == 2 and cn == 4:
            _hrow2_u8(row, out, xo, wt, dw, 4)
        elif K == 2:
            _hrow2_u8(row, out, xo, wt, dw, cn)
        else:
            for x in range(dw):
                for c in range(cn):
                    acc = 0
                    for k in range(K):
                        acc = acc + wt[x * K + k] * row[xo[x * K + k] * cn + c]
                    out[x * cn + c] = acc


def vpass_u8_fixed(const int[:, :, ::1] tmp, const int[:, ::1] yofs, const int[:, ::1] yw,
                   unsigned char[:, :, ::1] dst, int nthreads):
    """dst[y, x, c] = clamp((sum_k yw[y, k] * tmp[yofs[y, k], x, c] + 2^21) >> 22)."""
    cdef Py_ssize_t dh = dst.shape[0], m = dst.shape[1] * dst.shape[2]
    cdef Py_ssize_t K = yofs.shape[1], y, j, k, plane = tmp.shape[1] * tmp.shape[2]
    cdef const int* base = &tmp[0, 0, 0]
    cdef const int* r0
    cdef const int* r1
    cdef const int* r2
    cdef const int* r3
    cdef unsigned char* out
    cdef int w0, w1, v
    cdef long long acc
    for y in prange(dh, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        out = &dst[y, 0, 0]
        if K == 2:
            # Linear weights sum to 2^11 and rows hold at most 255 * 2^11: int32 is exact.
            r0 = base + yofs[y, 0] * plane
            r1 = base + yofs[y, 1] * plane
            w0 = yw[y, 0]
            w1 = yw[y, 1]
            for j in range(m):
                v = (r0[j] * w0 + r1[j] * w1 + (1 << 21)) >> 22
                out[j] = <unsigned char>(0 if v < 0 else (255 if v > 255 else v))
        elif K == 4:
            r0 = base + yofs[y, 0] * plane
            r1 = base + yofs[y, 1] * plane
            r2 = base + yofs[y, 2] * plane
            r3 = base + yofs[y, 3] * plane
            for j in range(m):
                acc = (<long long>r0[j] * yw[y, 0] + <long long>r1[j] * yw[y, 1]
                       + <long long>r2[j] * yw[y, 2] + <long long>r3[j] * yw[y, 3] + (1 << 21))
                acc = acc >> 22
                out[j] = <unsigned char>(0 if acc < 0 else (255 if acc > 255 else acc))
        else:
            for j in range(m):
                acc = 0
                for k in range(K):
                    acc = acc + <long long>yw[y, k] * base[yofs[y, k] * plane + j]
                acc = (acc + (1 << 21)) >> 22
                out[j] = <unsigned char>(0 if acc < 0 else (255 if acc > 255 else acc))


def hpass_float(const src_t[:, :, ::1] src, const int[::1] rows, const int[:, ::1] xofs,
                const float[:, ::1] xw, float[:, :, ::1] tmp, int nthreads):
    """tmp[i, x, c] = sum_k xw[x, k] * src[rows[i], xofs[x, k], c] in float."""
    cdef Py_ssize_t n = rows.shape[0], dw = xofs.shape[0], K = xofs.shape[1]
    cdef Py_ssize_t cn = src.shape[2], i, x, k, c, o0, o1
    cdef const int* xo = &xofs[0, 0]
    cdef const float* wt = &xw[0, 0]
    cdef const src_t* row
    cdef float* out
    cdef float acc, w0, w1
    for i in prange(n, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        row = &src[rows[i], 0, 0]
        out = &tmp[i, 0, 0]
        if src_t is float and K == 2 and cn == 3:
            _hrow2_f(row, out, xo, wt, dw, 3)
        elif src_t is float and K == 2 and cn == 1:
            _hrow2_f(row, out, xo, wt, dw, 1)
        elif K == 2:
            for x in range(dw):
                o0 = xo[2 * x] * cn
                o1 = xo[2 * x + 1] * cn
                w0 = wt[2 * x]
                w1 = wt[2 * x + 1]
                for c in range(cn):
                    out[x * cn + c] = <float>row[o0 + c] * w0 + <float>row[o1 + c] * w1
        else:
            for x in range(dw):
                for c in range(cn):
                    acc = 0
                    for k in range(K):
                        acc = acc + wt[x * K + k] * <float>row[xo[x * K + k] * cn + c]
                    out[x * cn + c] = acc


def vpass_float(const float[:, :, ::1] tmp, const int[:, ::1] yofs, const float[:, ::1] yw,
                out_t[:, :, ::1] dst, double lo, double hi, int nthreads):
    """dst = sum_k yw[y, k] * tmp[yofs[y, k]], rounded and clamped to [lo, hi] for ints."""
    cdef Py_ssize_t dh = dst.shape[0], m = dst.shape[1] * dst.shape[2]
    cdef Py_ssize_t K = yofs.shape[1], y, j, k, plane = tmp.shape[1] * tmp.shape[2]
    cdef const float* base = &tmp[0, 0, 0]
    cdef const float* r0
    cdef const float* r1
    cdef out_t* out
    cdef float acc, w0, w1, flo = <float>lo, fhi = <float>hi
    for y in prange(dh, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        out = &dst[y, 0, 0]
        if K == 2 and (out_t is float or out_t is double):
            # Row pointers and weights fixed per output row, so the loop vectorises.
            r0 = base + yofs[y, 0] * plane
            r1 = base + yofs[y, 1] * plane
            w0 = yw[y, 0]
            w1 = yw[y, 1]
            for j in range(m):
                out[j] = <out_t>(w0 * r0[j] + w1 * r1[j])
            continue
        for j in range(m):
            if K == 2:
                acc = (yw[y, 0] * base[yofs[y, 0] * plane + j]
                       + yw[y, 1] * base[yofs[y, 1] * plane + j])
            else:
                acc = 0
                for k in range(K):
                    acc = acc + yw[y, k] * base[yofs[y, k] * plane + j]
            if out_t is float or out_t is double:
                out[j] = <out_t>acc
            else:
                acc = <float>lrintf(acc)
                out[j] = <out_t>(flo if acc < flo else (fhi if acc > fhi else acc))


def gather(const src_t[:, :, ::1] src, const int[::1] ys, const int[::1] xs,
           src_t[:, :, ::1] dst, int nthreads):
    """dst[y, x] = src[ys[y], xs[x]] (nearest-neighbour resampling)."""
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], cn = dst.shape[2], y, x, c, sx
    cdef const src_t* row
    cdef src_t* out
    for y in prange(dh, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        row = &src[ys[y], 0, 0]
        out = &dst[y, 0, 0]
        for x in range(dw):
            sx = xs[x] * cn
            for c in range(cn):
                out[x * cn + c] = row[sx + c]


def resize_linear_u8_vfirst(const unsigned char[:, :, ::1] src, const int[:, ::1] yofs,
                            const int[:, ::1] yw, const int[::1] idx0, const int[::1] idx1,
                            const int[::1] w0, const int[::1] w1,
                            unsigned char[:, :, ::1] dst, int nthreads):
    """Bilinear uint8 resize, vertical pass first (for strong downscales).

    Per output row, ``buf = yw[y, 0] * src[yofs[y, 0]] + yw[y, 1] * src[yofs[y, 1]]``
    over the whole row (contiguous, vectorised), then for each output value j,
    ``dst = clamp((w0[j] * buf[idx0[j]] + w1[j] * buf[idx1[j]] + 2^21) >> 22)``.
    Both passes are exact integers (at most 255 * 2^11 * 2^11 < 2^31), so the result is
    the same sum as the horizontal-first order. ``idx0/idx1`` hold per-value offsets
    into the row (``xofs * cn + c``), validated by the caller to lie in the row.
    """
    cdef Py_ssize_t dh = dst.shape[0], m = dst.shape[1] * dst.shape[2]
    cdef Py_ssize_t rowlen = src.shape[1] * src.shape[2], y, j
    cdef const unsigned char* r0
    cdef const unsigned char* r1
    cdef const int* i0 = &idx0[0]
    cdef const int* i1 = &idx1[0]
    cdef const int* c0 = &w0[0]
    cdef const int* c1 = &w1[0]
    cdef unsigned char* out
    cdef int* buf
    cdef int a, b, v
    with nogil, parallel(num_threads=nthreads):
        buf = <int*>malloc(rowlen * sizeof(int))
        for y in prange(dh, schedule="dynamic", chunksize=8):
            r0 = &src[yofs[y, 0], 0, 0]
            r1 = &src[yofs[y, 1], 0, 0]
            a = yw[y, 0]
            b = yw[y, 1]
            for j in range(rowlen):
                buf[j] = r0[j] * a + r1[j] * b
            out = &dst[y, 0, 0]
            for j in range(m):
                v = (c0[j] * buf[i0[j]] + c1[j] * buf[i1[j]] + (1 << 21)) >> 22
                # Linear weights are non-negative, so v >= 0: only the top needs a clamp.
                out[j] = <unsigned char>(v if v < 255 else 255)
        free(buf)


cdef int _check_pixel_tables(Py_ssize_t cn, Py_ssize_t sw, Py_ssize_t dw, Py_ssize_t nofs,
                             Py_ssize_t nw0, Py_ssize_t nw1) except -1:
    # Cheap shape checks for the one-pixel-per-vector kernels (the caller checks the
    # table values: 0 <= ofs[x] <= cn * (width - 2)).
    if (cn != 3 and cn != 4) or sw < 2 or nofs != dw or nw0 != dw or nw1 != dw:
        raise ValueError(f"mnn.cv.resize kernel: pixel tables for {nofs} pixels, {cn} "
                         f"channels and source width {sw} do not fit an output of {dw}")
    return 0


def resize_linear_px_u8_vfirst(const unsigned char[:, :, ::1] src, const int[:, ::1] yofs,
                               const int[:, ::1] yw, const int[::1] ofs, const int[::1] w0,
                               const int[::1] w1, unsigned char[:, :, ::1] dst,
                               int nthreads):
    """Bilinear 3- or 4-channel uint8 resize, vertical pass first, one pixel per vector.

    Per output row, ``row = yw[y, 0] * src[yofs[y, 0]] + yw[y, 1] * src[yofs[y, 1]]``
    (exact integers), then ``dst[y, x, c] = clamp((w0[x] * row[ofs[x] + c]
    + w1[x] * row[ofs[x] + cn + c] + 2^21) >> 22)``: the same sums as the
    horizontal-first order. The caller checks ``0 <= ofs[x] <= cn * (width - 2)`` and
    the row tables' values.
    """
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], cn = src.shape[2]
    cdef Py_ssize_t rowlen = src.shape[1] * src.shape[2], y, j
    cdef const unsigned char* r0
    cdef const unsigned char* r1
    cdef int* row
    cdef int a, b
    _check_pixel_tables(cn, src.shape[1], dw, ofs.shape[0], w0.shape[0], w1.shape[0])
    if dst.shape[2] != cn or yofs.shape[0] != dh or yw.shape[0] != dh \
            or yofs.shape[1] != 2 or yw.shape[1] != 2:
        raise ValueError("mnn.cv.resize kernel: row tables do not fit the output")
    with nogil, parallel(num_threads=nthreads):
        # One spare element: a 3-channel vector mix reads one past the pair it mixes.
        row = <int*>malloc((rowlen + 1) * sizeof(int))
        row[rowlen] = 0
        for y in prange(dh, schedule="dynamic", chunksize=8):
            r0 = &src[yofs[y, 0], 0, 0]
            r1 = &src[yofs[y, 1], 0, 0]
            a = yw[y, 0]
            b = yw[y, 1]
            for j in range(rowlen):
                row[j] = r0[j] * a + r1[j] * b
            mnn_mix_u8(row, &ofs[0], &w0[0], &w1[0], <int>dw, <int>cn, &dst[y, 0, 0])
        free(row)


def hpass_linear_px_u8(const unsigned char[:, :, ::1] src, const int[::1] rows,
                       const int[::1] ofs, const int[::1] w0, const int[::1] w1,
                       int[:, :, ::1] tmp, int nthreads):
    """tmp[i, x, c] = w0[x] * src[rows[i], p, c] + w1[x] * src[rows[i], p + 1, c] with
    p = ofs[x] / cn: the horizontal bilinear pass of a 3- or 4-channel uint8 image with
    11-bit weights (exact integers).

    A 3-channel vector reads one byte past the pixel pair; inside the image that is the
    next row's first byte, so only the image's last row takes the scalar loop. The caller
    checks ``0 <= ofs[x] <= cn * (width - 2)`` and ``0 <= rows[i] < height``.
    """
    cdef Py_ssize_t n = rows.shape[0], dw = ofs.shape[0], sh = src.shape[0], cn = src.shape[2]
    cdef Py_ssize_t i, x, c
    cdef const unsigned char* row
    cdef int* out
    _check_pixel_tables(cn, src.shape[1], tmp.shape[1], dw, w0.shape[0], w1.shape[0])
    if tmp.shape[0] != n or tmp.shape[2] != cn:
        raise ValueError("mnn.cv.resize kernel: row buffer does not fit the row table")
    for i in prange(n, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        row = &src[rows[i], 0, 0]
        out = &tmp[i, 0, 0]
        if cn == 4 or rows[i] < sh - 1:
            mnn_hmix_u8(row, &ofs[0], &w0[0], &w1[0], <int>dw, <int>cn, out)
        else:
            for x in range(dw):
                for c in range(cn):
                    out[cn * x + c] = row[ofs[x] + c] * w0[x] + row[ofs[x] + cn + c] * w1[x]


def hpass_linear_px_f32(const float[:, :, ::1] src, const int[::1] rows, const int[::1] ofs,
                        const float[::1] w0, const float[::1] w1, float[:, :, ::1] tmp,
                        int nthreads):
    """tmp[i, x, c] = w0[x] * src[rows[i], p, c] + w1[x] * src[rows[i], p + 1, c] with
    p = ofs[x] / cn: the horizontal bilinear pass of a 3- or 4-channel float32 image.

    Same reading rule and caller checks as ``hpass_linear_px_u8``.
    """
    cdef Py_ssize_t n = rows.shape[0], dw = ofs.shape[0], sh = src.shape[0], cn = src.shape[2]
    cdef Py_ssize_t i, x, c
    cdef const float* row
    cdef float* out
    _check_pixel_tables(cn, src.shape[1], tmp.shape[1], dw, w0.shape[0], w1.shape[0])
    if tmp.shape[0] != n or tmp.shape[2] != cn:
        raise ValueError("mnn.cv.resize kernel: row buffer does not fit the row table")
    for i in prange(n, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        row = &src[rows[i], 0, 0]
        out = &tmp[i, 0, 0]
        if cn == 4 or rows[i] < sh - 1:
            mnn_mix_f32(row, &ofs[0], &w0[0], &w1[0], <int>dw, <int>cn, out,
                        &src[rows[i + 1], 0, 0] if i + 1 < n else NULL)
        else:
            for x in range(dw):
                for c in range(cn):
                    out[cn * x + c] = row[ofs[x] + c] * w0[x] + row[ofs[x] + cn + c] * w1[x]


ctypedef unsigned char uchar

ctypedef fused half_t:
    uchar
    float


cdef inline void _half_row(const half_t* r0, const half_t* r1, half_t* o, Py_ssize_t dw,
                           Py_ssize_t cn) noexcept nogil:
    # Called with a literal cn for the common counts, so the loops unroll and vectorise.
    cdef Py_ssize_t x, c, i
    for x in range(dw):
        for c in range(cn):
            i = 2 * x * cn + c
            if half_t is float:
                o[x * cn + c] = ((r0[i] + r0[i + cn]) + (r1[i] + r1[i + cn])) * <float>0.25
            else:
                o[x * cn + c] = <unsigned char>((r0[i] + r0[i + cn] + r1[i] + r1[i + cn] + 2)
                                                >> 2)


def resize_half(const half_t[:, :, ::1] src, half_t[:, :, ::1] dst, int nthreads):
    """Bilinear (or area) resize to exactly half the size in both directions: each output
    pixel is the mean of a 2x2 block, ``(a + b + c + d + 2) >> 2`` for uint8 (the
    bilinear fixed-point sum with weights 1/2 gives the same value).
    """
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], cn = dst.shape[2], y
    cdef const half_t* r0
    cdef const half_t* r1
    cdef half_t* o
    if src.shape[0] != 2 * dh or src.shape[1] != 2 * dw or src.shape[2] != cn:
        raise ValueError(f"mnn.cv.resize kernel: a {src.shape[0]}x{src.shape[1]}x"
                         f"{src.shape[2]} image does not halve into {dh}x{dw}x{cn}")
    for y in prange(dh, nogil=True, num_threads=nthreads, schedule="dynamic", chunksize=8):
        r0 = &src[2 * y, 0, 0]
        r1 = &src[2 * y + 1, 0, 0]
        o = &dst[y, 0, 0]
        if cn == 1:
            _half_row(r0, r1, o, dw, 1)
        elif cn == 3:
            if half_t is uchar:
                mnn_half3_u8(r0, r1, <int>dw, o)
            else:
                _half_row(r0, r1, o, dw, 3)
        elif cn == 4:
            _half_row(r0, r1, o, dw, 4)
        else:
            _half_row(r0, r1, o, dw, cn)


def resize_linear_px_f32_down(const float[:, :, ::1] src, const int[:, ::1] yofs,
                              const float[:, ::1] yw, const int[::1] ofs, const float[::1] w0,
                              const float[::1] w1, float[:, :, ::1] dst, int nthreads):
    """Bilinear 3- or 4-channel float32 downscale, both passes per output row.

    For a strong downscale every output row has its own two source rows, so each row is
    filtered horizontally (one pixel per vector, the next output row's first source row
    prefetched) into a small buffer and the two buffers are blended straight into
    ``dst``: no intermediate image. Same values as the horizontal-first order. The
    caller checks ``0 <= ofs[x] <= cn * (width - 2)`` and ``0 <= yofs < height``.
    """
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], cn = src.shape[2]
    cdef Py_ssize_t sh = src.shape[0], m = dw * cn, y, k, j, sy
    cdef float* bufs
    cdef float* h
    cdef float* o
    cdef const float* row
    cdef const float* nxt
    cdef float a, b
    _check_pixel_tables(cn, src.shape[1], dw, ofs.shape[0], w0.shape[0], w1.shape[0])
    if dst.shape[2] != cn or yofs.shape[0] != dh or yw.shape[0] != dh \
            or yofs.shape[1] != 2 or yw.shape[1] != 2:
        raise ValueError("mnn.cv.resize kernel: row tables do not fit the output")
    with nogil, parallel(num_threads=nthreads):
        # Two filtered rows, each with one spare element for the 3-channel vector store.
        bufs = <float*>malloc(2 * (m + 1) * sizeof(float))
        for y in prange(dh, schedule="dynamic", chunksize=8):
            for k in range(2):
                sy = yofs[y, k]
                row = &src[sy, 0, 0]
                h = bufs + k * (m + 1)
                nxt = &src[yofs[y + 1, 0], 0, 0] if k == 1 and y + 1 < dh else NULL
                if cn == 4 or sy < sh - 1:
                    mnn_mix_f32(row, &ofs[0], &w0[0], &w1[0], <int>dw, <int>cn, h, nxt)
                else:
                    for j in range(dw):
                        for sy in range(cn):
                            h[cn * j + sy] = (row[ofs[j] + sy] * w0[j]
                                              + row[ofs[j] + cn + sy] * w1[j])
            a = yw[y, 0]
            b = yw[y, 1]
            o = &dst[y, 0, 0]
            h = bufs + (m + 1)
            for j in range(m):
                o[j] = a * bufs[j] + b * h[j]
        free(bufs)
