# cython: language_level=3
"""Geometric warping kernels (warpAffine, warpPerspective, remap) for mnn.cv.

Each destination row first gets its source positions, then every pixel mixes a K x K
source neighbourhood (K = 1, 2, 4 or 8). Two position forms, as OpenCV 5 uses them:

* float positions (nearest, bilinear, bicubic): weights are computed per pixel from the
  exact fractional position;
* 1/32-pixel fixed-point positions (Lanczos and fixed-point maps): weights come from a
  table with ``K * K`` entries per fraction pair, 15-bit integers for uint8.

Neighbours outside the image follow the border mode; reads are always clamped or
replaced, never out of bounds.
"""
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport lrint, floor, isnan, nearbyintf

ctypedef unsigned char uchar

cdef extern from *:
    """
    #include <string.h>
    #ifdef __SSE4_1__
    #include <smmintrin.h>
    #endif
    /* Bilinear 3-channel uint8 pixel as one 4-lane float vector, the same arithmetic as
       the scalar _lerp_px: it reads 4 bytes at p0, p0 + 3, p0 + stride, p0 + stride + 3
       and writes 4 bytes at d (the fourth byte belongs to the next pixel, written after).
       Returns 0 without SSE4.1 so the caller takes the scalar path. */
    static inline int mnn_lerp3_u8(const unsigned char* p0, unsigned char* d, long stride,
                                   float ax, float ay) {
    #ifdef __SSE4_1__
        int a, b, c, e;
        memcpy(&a, p0, 4);
        memcpy(&b, p0 + 3, 4);
        memcpy(&c, p0 + stride, 4);
        memcpy(&e, p0 + stride + 3, 4);
        __m128 f00 = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(a)));
        __m128 f01 = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(b)));
        __m128 f10 = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(c)));
        __m128 f11 = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(e)));
        __m128 vx = _mm_set1_ps(ax);
        __m128 t0 = _mm_add_ps(f00, _mm_mul_ps(vx, _mm_sub_ps(f01, f00)));
        __m128 t1 = _mm_add_ps(f10, _mm_mul_ps(vx, _mm_sub_ps(f11, f10)));
        t0 = _mm_add_ps(t0, _mm_mul_ps(_mm_set1_ps(ay), _mm_sub_ps(t1, t0)));
        /* Truncation of t + 0.5 as the scalar path; t lies in [0, 255]. */
        __m128i v = _mm_cvttps_epi32(_mm_add_ps(t0, _mm_set1_ps(0.5f)));
        v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
        int word = _mm_cvtsi128_si32(v);
        memcpy(d, &word, 4);
        return 1;
    #else
        return 0;
    #endif
    }
    """
    int mnn_lerp3_u8(const uchar* p0, uchar* d, long stride, float ax, float ay) nogil

ctypedef fused pix_t:
    uchar
    unsigned short
    short
    float
    double

cdef enum:
    BORDER_CONSTANT = 0
    BORDER_REPLICATE = 1
    BORDER_REFLECT = 2
    BORDER_WRAP = 3
    BORDER_REFLECT_101 = 4
    BORDER_TRANSPARENT = 5

cdef enum:
    TILE_H = 16
    TILE_W = 64

# Positions beyond this many pixels are all equally outside; clamping keeps integer
# conversions and neighbourhood sums far from overflow.
cdef double FAR = 1e7


cdef inline Py_ssize_t border_index(Py_ssize_t p, Py_ssize_t n, int mode) noexcept nogil:
    """Map p into [0, n) by the border rule, or -1 for a constant border."""
    cdef Py_ssize_t period
    if 0 <= p < n:
        return p
    if mode == BORDER_REPLICATE:
        return 0 if p < 0 else n - 1
    if mode == BORDER_WRAP:
        p = p % n
        return p + n if p < 0 else p
    if mode == BORDER_REFLECT:
        period = 2 * n
        p = p % period
        if p < 0:
            p += period
        return period - 1 - p if p >= n else p
    if mode == BORDER_REFLECT_101:
        if n == 1:
            return 0
        period = 2 * (n - 1)
        p = p % period
        if p < 0:
            p += period
        return period - p if p >= n else p
    return -1


cdef inline double clamp_pos(double v) noexcept nogil:
    if isnan(v):
        return -FAR
    return -FAR if v < -FAR else (FAR if v > FAR else v)


cdef inline void float_coords(int mode, Py_ssize_t y, Py_ssize_t dw, const double* m,
                              const float* mx, const float* my, double* xs,
                              double* ys) noexcept nogil:
    """Exact source positions of destination row y."""
    cdef Py_ssize_t x
    cdef double w
    if mode == 0:
        for x in range(dw):
            xs[x] = clamp_pos(m[0] * x + m[1] * y + m[2])
            ys[x] = clamp_pos(m[3] * x + m[4] * y + m[5])
    elif mode == 1:
        for x in range(dw):
            w = m[6] * x + m[7] * y + m[8]
            w = 1.0 / w if w != 0 else 0.0
            xs[x] = clamp_pos((m[0] * x + m[1] * y + m[2]) * w)
            ys[x] = clamp_pos((m[3] * x + m[4] * y + m[5]) * w)
    else:
        for x in range(dw):
            xs[x] = clamp_pos(mx[y * dw + x])
            ys[x] = clamp_pos(my[y * dw + x])


cdef inline void fixed_coords(int mode, Py_ssize_t y, Py_ssize_t dw, const int* adelta,
                              const int* bdelta, const int* x0, const int* y0,
                              const double* m, const int* mx, const int* my, int* xs,
                              int* ys) noexcept nogil:
    """Source positions of destination row y in 1/32 pixel (OpenCV's fixed point)."""
    cdef Py_ssize_t x
    cdef double w
    if mode == 0:
        for x in range(dw):
            xs[x] = <int>((<long long>x0[y] + adelta[x]) >> 5)
            ys[x] = <int>((<long long>y0[y] + bdelta[x]) >> 5)
    elif mode == 1:
        for x in range(dw):
            w = m[6] * x + m[7] * y + m[8]
            w = 32.0 / w if w != 0 else 0.0
            xs[x] = <int>lrint(clamp_pos((m[0] * x + m[1] * y + m[2]) * w))
            ys[x] = <int>lrint(clamp_pos((m[3] * x + m[4] * y + m[5]) * w))
    else:
        for x in range(dw):
            xs[x] = mx[y * dw + x]
            ys[x] = my[y * dw + x]


cdef inline void kernel_weights(int ksize, double f, double* w) noexcept nogil:
    """1-D weights at fraction f: bilinear, or bicubic with OpenCV's A = -0.75."""
    cdef double a = -0.75, t
    if ksize == 2:
        w[0] = 1.0 - f
        w[1] = f
    else:
        t = f + 1.0
        w[0] = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
        w[1] = ((a + 2) * f - (a + 3)) * f * f + 1
        t = 1.0 - f
        w[2] = ((a + 2) * t - (a + 3)) * t * t + 1
        w[3] = 1.0 - w[0] - w[1] - w[2]


def warp(const pix_t[:, :, ::1] src, pix_t[:, :, ::1] dst, int mode, int fixed,
         const int[::1] adelta, const int[::1] bdelta, const int[::1] x0, const int[::1] y0,
         const double[::1] matrix, const float[:, ::1] fmapx, const float[:, ::1] fmapy,
         const int[:, ::1] imapx, const int[:, ::1] imapy, int ksize, int border,
         const double[::1] bval, const int[::1] itab, const float[::1] ftab, double lo,
         double hi, int nthreads):
    """Sample ``src`` at the source position of each ``dst`` pixel.

    mode 0: affine (``matrix`` holds the 2x3 destination -> source map; with ``fixed`` the
    positions are x0[y] + adelta[x] and y0[y] + bdelta[x] in 1/1024 pixel); mode 1:
    perspective with the 3x3 ``matrix``; mode 2: explicit maps (float ``fmapx/fmapy`` in
    pixels, or with ``fixed`` int ``imapx/imapy`` in 1/32 pixel). ``ksize`` 1 is nearest
    (float positions rounded), 2 bilinear, 4 bicubic, 8 Lanczos (fixed positions only).
    """
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], cn = src.shape[2]
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], y, x, c, i, j, half
    cdef Py_ssize_t sx, sy, px, py, kk = ksize * ksize
    cdef double* fxs
    cdef double* fys
    cdef double* fxb
    cdef double* fyb
    cdef int* ixb
    cdef int* iyb
    cdef Py_ssize_t t, ty0, ty1, xb, xe, xbi, ntiles = (dst.shape[0] + TILE_H - 1) // TILE_H
    cdef Py_ssize_t nxb = (dst.shape[1] + TILE_W - 1) // TILE_W
    cdef int* ixs
    cdef int* iys
    cdef double* wx
    cdef double* wy
    cdef double fac, v, posx, posy, fl
    cdef long long iac
    cdef int fidx, bmode
    cdef bint inside, outside
    cdef const pix_t* s = &src[0, 0, 0]
    cdef const pix_t* p0
    cdef const pix_t* p1
    cdef float ax, ay, ft, fb
    cdef pix_t* d
    cdef const int* ad = &adelta[0]
    cdef const int* bd = &bdelta[0]
    cdef const int* xr = &x0[0]
    cdef const int* yr = &y0[0]
    cdef const double* mt = &matrix[0]
    cdef const float* fmx = &fmapx[0, 0]
    cdef const float* fmy = &fmapy[0, 0]
    cdef const int* imx = &imapx[0, 0]
    cdef const int* imy = &imapy[0, 0]
    cdef const int* itp = &itab[0]
    cdef const float* ftp = &ftab[0]
    cdef const double* bv = &bval[0]
    half = (ksize - 1) // 2 if ksize > 1 else 0
    with nogil, parallel(num_threads=nthreads):
        # Work in tiles of TILE_H x TILE_W destination pixels: a rotated or scaled tile
        # reads a compact source area, which stays in cache (row by row would sweep a
        # slanted band of hundreds of source rows).
        fxb = <double*>malloc(TILE_H * dw * sizeof(double))
        fyb = <double*>malloc(TILE_H * dw * sizeof(double))
        ixb = <int*>malloc(TILE_H * dw * sizeof(int))
        iyb = <int*>malloc(TILE_H * dw * sizeof(int))
        wx = <double*>malloc(8 * sizeof(double))
        wy = <double*>malloc(8 * sizeof(double))
        for t in prange(ntiles, schedule="static"):
            ty0 = t * TILE_H
            ty1 = ty0 + TILE_H if ty0 + TILE_H < dh else dh
            for y in range(ty0, ty1):
                if fixed:
                    fixed_coords(mode, y, dw, ad, bd, xr, yr, mt, imx, imy,
                                 ixb + (y - ty0) * dw, iyb + (y - ty0) * dw)
                else:
                    float_coords(mode, y, dw, mt, fmx, fmy, fxb + (y - ty0) * dw,
                                 fyb + (y - ty0) * dw)
            for xbi in range(nxb):
                xb = xbi * TILE_W
                xe = xb + TILE_W if xb + TILE_W < dw else dw
                for y in range(ty0, ty1):
                    fxs = fxb + (y - ty0) * dw
                    fys = fyb + (y - ty0) * dw
                    ixs = ixb + (y - ty0) * dw
                    iys = iyb + (y - ty0) * dw
                    d = &dst[y, 0, 0]
                    for x in range(xb, xe):
                        fidx = 0
                        if fixed:
                            sx = (ixs[x] >> 5) - half
                            sy = (iys[x] >> 5) - half
                            fidx = ((iys[x] & 31) * 32 + (ixs[x] & 31)) * kk
                        elif ksize == 1:
                            sx = lrint(fxs[x])
                            sy = lrint(fys[x])
                        else:
                            posx = floor(fxs[x])
                            posy = floor(fys[x])
                            sx = <Py_ssize_t>posx - half
                            sy = <Py_ssize_t>posy - half
                            if ksize == 2 and sx >= 0 and sy >= 0 and sx + 2 <= w and sy + 2 <= h:
                                # Fast path: bilinear fully inside the image.
                                ax = <float>(fxs[x] - posx)
                                ay = <float>(fys[x] - posy)
                                p0 = s + (sy * w + sx) * cn
                                p1 = p0 + w * cn
                                for c in range(cn):
                                    ft = <float>p0[c] + ax * (<float>p0[c + cn] - <float>p0[c])
                                    fb = <float>p1[c] + ax * (<float>p1[c + cn] - <float>p1[c])
                                    ft = ft + ay * (fb - ft)
                                    if pix_t is float or pix_t is double:
                                        d[x * cn + c] = <pix_t>ft
                                    elif pix_t is uchar:
                                        d[x * cn + c] = <uchar>(ft + <float>0.5)
                                    else:
                                        ft = nearbyintf(ft)
                                        d[x * cn + c] = <pix_t>(lo if ft < lo else (hi if ft > hi else ft))
                                continue
                            kernel_weights(ksize, fxs[x] - posx, wx)
                            kernel_weights(ksize, fys[x] - posy, wy)
                        inside = sx >= 0 and sy >= 0 and sx + ksize <= w and sy + ksize <= h
                        bmode = border
                        if not inside:
                            outside = sx >= w or sy >= h or sx + ksize <= 0 or sy + ksize <= 0
                            if border == BORDER_TRANSPARENT:
                                # OpenCV's rules: exact-position kernels keep the destination where
                                # the whole neighbourhood is outside and read the destination pixel
                                # for outside taps; the table kernels keep it when the centre tap
                                # (bilinear: any tap) is outside and reflect otherwise.
                                if ksize == 1 or outside:
                                    continue
                                if fixed:
                                    if ksize == 2 or not (0 <= sx + half < w and 0 <= sy + half < h):
                                        continue
                                    bmode = BORDER_REFLECT_101
                            elif outside and border == BORDER_CONSTANT:
                                for c in range(cn):
                                    d[x * cn + c] = <pix_t>bv[c if c < 4 else 3]
                                continue
                        if ksize == 1:
                            px = border_index(sx, w, border)
                            py = border_index(sy, h, border)
                            for c in range(cn):
                                if px < 0 or py < 0:
                                    d[x * cn + c] = <pix_t>bv[c if c < 4 else 3]
                                else:
                                    d[x * cn + c] = s[(py * w + px) * cn + c]
                            continue
                        for c in range(cn):
                            iac = 0
                            fac = 0
                            for i in range(ksize):
                                py = sy + i if inside else border_index(sy + i, h, bmode)
                                for j in range(ksize):
                                    px = sx + j if inside else border_index(sx + j, w, bmode)
                                    if px < 0 or py < 0:
                                        if bmode == BORDER_TRANSPARENT:
                                            v = <double>d[x * cn + c]
                                        else:
                                            v = bv[c if c < 4 else 3]
                                    else:
                                        v = <double>s[(py * w + px) * cn + c]
                                    if fixed and pix_t is uchar:
                                        iac = iac + <long long>itp[fidx + i * ksize + j] * <long long>v
                                    elif fixed:
                                        fac = fac + ftp[fidx + i * ksize + j] * v
                                    else:
                                        fac = fac + wy[i] * wx[j] * v
                            if fixed and pix_t is uchar:
                                iac = (iac + (1 << 14)) >> 15
                                d[x * cn + c] = <uchar>(0 if iac < 0 else (255 if iac > 255 else iac))
                            elif pix_t is float or pix_t is double:
                                d[x * cn + c] = <pix_t>fac
                            else:
                                v = <double>lrint(fac)
                                d[x * cn + c] = <pix_t>(lo if v < lo else (hi if v > hi else v))
        free(fxb)
        free(fyb)
        free(ixb)
        free(iyb)
        free(wx)
        free(wy)


def warp_linear_u8(const uchar[:, :, ::1] src, uchar[:, :, ::1] dst, int mode,
                   const double[::1] matrix, const float[:, ::1] fmapx,
                   const float[:, ::1] fmapy, int border, const double[::1] bval,
                   int nthreads):
    """Bilinear uint8 warp at exact positions (the common case, kept small so the
    compiler holds it in registers): same rules as ``warp`` with ksize 2, float maps."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], cn = src.shape[2]
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], y, x, c, sx, sy, px, py, i, j
    cdef double fx, fy, wgt, fl
    cdef float ax, ay, t0, t1, v
    cdef const uchar* s = &src[0, 0, 0]
    cdef const uchar* p0
    cdef const uchar* p1
    cdef uchar* d
    cdef const double* m = &matrix[0]
    cdef const float* mx = &fmapx[0, 0]
    cdef const float* my = &fmapy[0, 0]
    cdef bint outside
    for y in prange(dh, nogil=True, num_threads=nthreads, schedule="static"):
        d = &dst[y, 0, 0]
        for x in range(dw):
            if mode == 0:
                fx = m[0] * x + m[1] * y + m[2]
                fy = m[3] * x + m[4] * y + m[5]
            elif mode == 1:
                wgt = m[6] * x + m[7] * y + m[8]
                wgt = 1.0 / wgt if wgt != 0 else 0.0
                fx = (m[0] * x + m[1] * y + m[2]) * wgt
                fy = (m[3] * x + m[4] * y + m[5]) * wgt
            else:
                fx = mx[y * dw + x]
                fy = my[y * dw + x]
            fx = clamp_pos(fx)
            fy = clamp_pos(fy)
            fl = floor(fx)
            sx = <Py_ssize_t>fl
            ax = <float>(fx - fl)
            fl = floor(fy)
            sy = <Py_ssize_t>fl
            ay = <float>(fy - fl)
            if sx >= 0 and sy >= 0 and sx + 1 < w and sy + 1 < h:
                p0 = s + (sy * w + sx) * cn
                p1 = p0 + w * cn
                for c in range(cn):
                    t0 = <float>p0[c] + ax * (<float>p0[c + cn] - <float>p0[c])
                    t1 = <float>p1[c] + ax * (<float>p1[c + cn] - <float>p1[c])
                    v = t0 + ay * (t1 - t0)
                    d[x * cn + c] = <uchar>(v + <float>0.5)
                continue
            outside = sx >= w or sy >= h or sx + 2 <= 0 or sy + 2 <= 0
            if outside and border == BORDER_TRANSPARENT:
                continue
            if outside and border == BORDER_CONSTANT:
                for c in range(cn):
                    d[x * cn + c] = <uchar>bv_at(bval, c)
                continue
            for c in range(cn):
                t0 = 0
                for i in range(2):
                    py = border_index(sy + i, h, border)
                    t1 = 0
                    for j in range(2):
                        px = border_index(sx + j, w, border)
                        if px < 0 or py < 0:
                            v = <float>d[x * cn + c] if border == BORDER_TRANSPARENT \
                                else <float>bv_at(bval, c)
                        else:
                            v = <float>s[(py * w + px) * cn + c]
                        t1 = t1 + (ax if j == 1 else 1 - ax) * v
                    t0 = t0 + (ay if i == 1 else 1 - ay) * t1
                t0 = 0 if t0 < 0 else (255 if t0 > 255 else t0)
                d[x * cn + c] = <uchar>(t0 + <float>0.5)


cdef inline double bv_at(const double[::1] bval, Py_ssize_t c) noexcept nogil:
    return bval[c if c < 4 else 3]


cdef inline void _linear_border_u8(const uchar* s, uchar* dpix, Py_ssize_t w, Py_ssize_t h,
                                   Py_ssize_t cn, Py_ssize_t sx, Py_ssize_t sy, float ax,
                                   float ay, int border, const double* bv) noexcept nogil:
    """One bilinear pixel whose 2x2 neighbourhood is not inside the image."""
    cdef Py_ssize_t c, i, j, px, py
    cdef float t0, t1, v
    cdef bint outside = sx >= w or sy >= h or sx + 2 <= 0 or sy + 2 <= 0
    if outside and border == BORDER_TRANSPARENT:
        return
    if outside and border == BORDER_CONSTANT:
        for c in range(cn):
            dpix[c] = <uchar>bv[c if c < 4 else 3]
        return
    for c in range(cn):
        t0 = 0
        for i in range(2):
            py = border_index(sy + i, h, border)
            t1 = 0
            for j in range(2):
                px = border_index(sx + j, w, border)
                if px < 0 or py < 0:
                    v = <float>dpix[c] if border == BORDER_TRANSPARENT \
                        else <float>bv[c if c < 4 else 3]
                else:
                    v = <float>s[(py * w + px) * cn + c]
                t1 = t1 + (ax if j == 1 else 1 - ax) * v
            t0 = t0 + (ay if i == 1 else 1 - ay) * t1
        t0 = 0 if t0 < 0 else (255 if t0 > 255 else t0)
        dpix[c] = <uchar>(t0 + <float>0.5)


cdef inline void _lerp_px(const uchar* p0, uchar* d, Py_ssize_t cn, Py_ssize_t stride,
                          float ax, float ay) noexcept nogil:
    # Called with a literal cn so the channel loop unrolls; same arithmetic as
    # warp_linear_u8's interior path.
    cdef const uchar* p1 = p0 + stride
    cdef Py_ssize_t c
    cdef float t0, t1
    for c in range(cn):
        t0 = <float>p0[c] + ax * (<float>p0[c + cn] - <float>p0[c])
        t1 = <float>p1[c] + ax * (<float>p1[c + cn] - <float>p1[c])
        t0 = t0 + ay * (t1 - t0)
        d[c] = <uchar>(t0 + <float>0.5)


cdef inline void _lerp_row(const uchar* s, uchar* d, const int* ixs, const int* iys,
                           const float* axs, const float* ays, Py_ssize_t dw, Py_ssize_t w,
                           Py_ssize_t h, Py_ssize_t cn, Py_ssize_t stride, int border,
                           const double* bv) noexcept nogil:
    """One destination row of warp_affine_linear_u8 from its source cells."""
    cdef Py_ssize_t x, sx, sy
    for x in range(dw):
        sx = ixs[x]
        sy = iys[x]
        if sx >= 0 and sy >= 0 and sx + 1 < w and sy + 1 < h:
            # The vector pixel reads one byte past its cell and writes one past the pixel:
            # both stay inside unless the cell ends the image or the pixel ends the row,
            # and the byte written past is rewritten by the next pixel unless the border
            # is transparent (a pixel outside then keeps the destination's value).
            if (cn == 3 and x + 1 < dw and (sx + 2 < w or sy + 2 < h)
                    and border != BORDER_TRANSPARENT):
                if mnn_lerp3_u8(s + sy * stride + sx * 3, d + x * 3, stride, axs[x], ays[x]):
                    continue
            _lerp_px(s + sy * stride + sx * cn, d + x * cn, cn, stride, axs[x], ays[x])
        else:
            _linear_border_u8(s, d + x * cn, w, h, cn, sx, sy, axs[x], ays[x], border, bv)


cdef inline void _affine_row_cells(double step, double start, Py_ssize_t n, int* cell,
                                   float* frac) noexcept nogil:
    # Source cell and fraction of positions step * x + start; a separate function with
    # local constants so the loop vectorises. Positions beyond 1e7 pixels are all
    # equally outside (the matrix is finite, so there is no NaN).
    cdef int x, i
    cdef double v, fl, far = 1e7, last = step * <double>(n - 1) + start
    if -far <= start <= far and -far <= last <= far:
        # Linear in x, so inside the range at both ends means inside everywhere: no
        # clamp, no branch, and the loop vectorises.
        for x in range(<int>n):
            v = step * <double>x + start
            # floor(v) from truncation (exact for |v| < 2^31): GCC vectorises this,
            # not floor() itself.
            i = <int>v
            i = i - (<double>i > v)
            cell[x] = i
            frac[x] = <float>(v - <double>i)
        return
    for x in range(<int>n):
        v = step * <double>x + start
        v = -far if v < -far else (far if v > far else v)
        fl = floor(v)
        cell[x] = <int>fl
        frac[x] = <float>(v - fl)


def warp_affine_linear_u8(const uchar[:, :, ::1] src, uchar[:, :, ::1] dst,
                          const double[::1] matrix, int border, const double[::1] bval,
                          int nthreads):
    """Bilinear uint8 affine warp (``matrix`` maps destination to source).

    Same results as ``warp_linear_u8`` with mode 0, organised for speed: per row, a first
    loop computes every pixel's source cell and fractions (vectorised), a second one
    blends the pixels whose 2x2 cell lies inside, with the channel loop unrolled; the few
    pixels near or beyond the edges go through the border rules.
    """
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], cn = src.shape[2]
    cdef Py_ssize_t dh = dst.shape[0], dw = dst.shape[1], y, x, sx, sy
    cdef Py_ssize_t stride = w * cn
    cdef double m0 = matrix[0], m1 = matrix[1], m2 = matrix[2]
    cdef double m3 = matrix[3], m4 = matrix[4], m5 = matrix[5]
    cdef const uchar* s = &src[0, 0, 0]
    cdef const double* bv = &bval[0]
    cdef uchar* d
    cdef int* ixs
    cdef int* iys
    cdef float* axs
    cdef float* ays
    with nogil, parallel(num_threads=nthreads):
        ixs = <int*>malloc(dw * sizeof(int))
        iys = <int*>malloc(dw * sizeof(int))
        axs = <float*>malloc(dw * sizeof(float))
        ays = <float*>malloc(dw * sizeof(float))
        # Dynamic in chunks of rows: on a loaded machine a descheduled thread leaves its
        # rows to the other instead of making it wait.
        for y in prange(dh, schedule="dynamic", chunksize=16):
            _affine_row_cells(m0, m1 * y + m2, dw, ixs, axs)
            _affine_row_cells(m3, m4 * y + m5, dw, iys, ays)
            d = &dst[y, 0, 0]
            # A literal cn for the common counts, so each gets its own unrolled loop.
            if cn == 3:
                _lerp_row(s, d, ixs, iys, axs, ays, dw, w, h, 3, stride, border, bv)
            elif cn == 1:
                _lerp_row(s, d, ixs, iys, axs, ays, dw, w, h, 1, stride, border, bv)
            elif cn == 4:
                _lerp_row(s, d, ixs, iys, axs, ays, dw, w, h, 4, stride, border, bv)
            else:
                _lerp_row(s, d, ixs, iys, axs, ays, dw, w, h, cn, stride, border, bv)
        free(ixs)
        free(iys)
        free(axs)
        free(ays)
