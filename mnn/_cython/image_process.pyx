# cython: language_level=3
"""The sampling step of MNN's ImageProcess (mnn.cv.ImageProcess).

MNN walks each destination row in tiles of 512 pixels: it maps the tile's two ends
through the destination -> source matrix (with perspective divide) and steps linearly
between them in single precision. With ZERO wrap the step range is clipped to the image
(Cohen-Sutherland) and the rest gets the padding value. Positions are then clamped into
the image (REPEAT wraps them instead); nearest rounds half away from zero; bilinear and
bicubic (a = -0.5) results are rounded to uint8 before any format conversion.
"""
from cython.parallel cimport prange
from libc.math cimport floor, floorf, roundf, fabsf

ctypedef unsigned char uchar

cdef extern from *:
    """
    #include <string.h>
    #ifdef __SSE4_1__
    #include <smmintrin.h>
    #endif
    /* The bilinear sample of the first four bytes at x0 and x1 of rows r0 and r1, rounded as
       round_u8 does (clamp, add 0.5, truncate), into px[0..3]: all channels of a pixel in
       one vector. It reads 4 bytes at each of the four places, so a 3-byte pixel reads one
       byte past itself (the caller checks that byte is inside the image). Returns 0
       without SSE4.1 so the caller takes the scalar path. */
    static inline int mnn_bilerp4(const unsigned char* r0, const unsigned char* r1,
                                  long x0, long x1, float w00, float w01, float w10,
                                  float w11, float* px) {
    #ifdef __SSE4_1__
        int a, b, c, d;
        memcpy(&a, r0 + x0, 4);
        memcpy(&b, r0 + x1, 4);
        memcpy(&c, r1 + x0, 4);
        memcpy(&d, r1 + x1, 4);
        __m128 v = _mm_mul_ps(_mm_set1_ps(w00),
                              _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(a))));
        v = _mm_add_ps(v, _mm_mul_ps(_mm_set1_ps(w01),
                                     _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(b)))));
        v = _mm_add_ps(v, _mm_mul_ps(_mm_set1_ps(w10),
                                     _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(c)))));
        v = _mm_add_ps(v, _mm_mul_ps(_mm_set1_ps(w11),
                                     _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(d)))));
        v = _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(255.0f));
        v = _mm_cvtepi32_ps(_mm_cvttps_epi32(_mm_add_ps(v, _mm_set1_ps(0.5f))));
        _mm_storeu_ps(px, v);
        return 1;
    #else
        return 0;
    #endif
    }
    """
    int mnn_bilerp4(const uchar* r0, const uchar* r1, long x0, long x1, float w00, float w01,
                    float w10, float w11, float* px) nogil

cdef enum:
    WRAP_CLAMP = 0
    WRAP_ZERO = 1
    WRAP_REPEAT = 2


cdef inline double wrap_pos(double p, Py_ssize_t n) noexcept nogil:
    cdef double r = p - floor(p / n) * n
    # Rounding (huge p) or NaN can leave [0, n): such positions read pixel 0.
    return r if (r >= 0 and r < n) else 0.0


cdef inline Py_ssize_t tap(Py_ssize_t i, Py_ssize_t n, int wrap) noexcept nogil:
    if wrap == WRAP_REPEAT:
        i = i % n
        return i + n if i < 0 else i
    return 0 if i < 0 else (n - 1 if i > n - 1 else i)


cdef inline float cubic_w(float x) noexcept nogil:
    cdef float a = -0.5
    x = fabsf(x)
    if x <= 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    if x < 2.0:
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return 0.0


cdef inline uchar round_u8(float v) noexcept nogil:
    # Clamped to [0, 255] first, so adding 0.5 and truncating rounds half away from zero
    # (roundf) without a library call.
    v = 0 if v < 0 else (255 if v > 255 else v)
    return <uchar>(<int>(v + <float>0.5))


cdef enum:
    TILE = 512  # MNN walks each row in tiles of this many pixels
    LEFT = 1
    RIGHT = 2
    TOP = 4
    BOTTOM = 8


cdef inline int out_code(float x, float y, float xmax, float ymax) noexcept nogil:
    cdef int code = 0
    if x < 0:
        code |= LEFT
    if x > xmax:
        code |= RIGHT
    if y < 0:
        code |= TOP
    if y > ymax:
        code |= BOTTOM
    return code


cdef inline void map_point(const float* m, bint persp, float x, float y, float* ox,
                           float* oy) noexcept nogil:
    cdef float w
    ox[0] = m[0] * x + m[1] * y + m[2]
    oy[0] = m[3] * x + m[4] * y + m[5]
    if persp:
        w = m[6] * x + m[7] * y + m[8]
        w = <float>1.0 / w if w != 0 else <float>0.0
        ox[0] = ox[0] * w
        oy[0] = oy[0] * w


cdef inline void clip_span(float x1, float y1, float x2, float y2, float xmax, float ymax,
                           const float* inv, Py_ssize_t start, Py_ssize_t count,
                           Py_ssize_t* sta, Py_ssize_t* end) noexcept nogil:
    """Cohen-Sutherland clip of the segment p1-p2 against [0, xmax] x [0, ymax]; the
    surviving part, mapped back through ``inv``, gives destination pixels [sta, end)."""
    cdef int c1 = out_code(x1, y1, xmax, ymax), c2 = out_code(x2, y2, xmax, ymax)
    cdef int code, which, rounds = 0
    cdef float slope_y, slope_x, bx, by, px, py
    cdef Py_ssize_t s = 0, e = count
    slope_y = y2 - y1
    slope_x = x2 - x1
    if slope_x > <float>0.01 or slope_x < <float>-0.01:
        slope_y = (y2 - y1) / (x2 - x1)
    else:
        slope_y = 0
    if slope_y > <float>0.01 or slope_y < <float>-0.01:
        slope_x = (x2 - x1) / (y2 - y1)
    else:
        slope_x = 0
    while c1 != 0 or c2 != 0:
        rounds = rounds + 1
        if (c1 & c2) != 0 or rounds > 16:
            s = e
            break
        if c1 != 0:
            code = c1
            which = 0
            px = x1
            py = y1
        else:
            code = c2
            which = 1
            px = x2
            py = y2
        if code & LEFT:
            py = py + slope_y * (0 - px)
            px = 0
        elif code & RIGHT:
            py = py + slope_y * (xmax - px)
            px = xmax
        elif code & BOTTOM:
            px = px + slope_x * (ymax - py)
            py = ymax
        elif code & TOP:
            px = px + slope_x * (0 - py)
            py = 0
        map_point(inv, False, px, py, &bx, &by)
        if which == 0:
            x1 = px
            y1 = py
            c1 = out_code(px, py, xmax, ymax)
            s = <Py_ssize_t>roundf(bx) - start
        else:
            x2 = px
            y2 = py
            c2 = out_code(px, py, xmax, ymax)
            e = <Py_ssize_t>floorf(bx) - start + 1
    if e > count:
        e = count
    if s < 0:
        s = 0
    if s > e:
        s = e
    if e < 0:
        e = 0
        s = 0
    sta[0] = s
    end[0] = e


def sample(const uchar[:, ::1] src, Py_ssize_t iw, Py_ssize_t bpp, uchar[:, :, ::1] out,
           const float[::1] mat, const float[::1] inverse, int filt, int wrap, int pad,
           int nthreads):
    """out[y, x] = src sampled along each row as MNN walks it (see the module docstring);
    ``src`` rows are ``stride`` bytes long."""
    cdef Py_ssize_t ih = src.shape[0], oh = out.shape[0], ow = out.shape[1]
    cdef Py_ssize_t y, x, b, i, j, x0, y0, x1, y1, sx, sy, t, start, count, sta, end
    cdef float px, py, qx, qy, dx, dy, bx, by, xf, yf, v, xmax = iw - 1, ymax = ih - 1
    cdef float wx0, wx1, wx2, wx3, wy0, wy1, wy2, wy3, wyv, wxv
    cdef Py_ssize_t i2, stride = src.shape[1]
    cdef float w00, w01, w10, w11
    cdef const uchar* base = &src[0, 0]
    cdef const uchar* r0
    cdef const uchar* r1
    cdef uchar* o
    cdef const float* m = &mat[0]
    cdef const float* inv = &inverse[0]
    cdef bint persp = m[6] != 0 or m[7] != 0 or m[8] != 1
    cdef Py_ssize_t tiles = (ow + TILE - 1) // TILE
    for y in prange(oh, nogil=True, num_threads=nthreads, schedule="static"):
        for t in range(tiles):
            start = t * TILE
            count = ow - start if ow - start < TILE else TILE
            map_point(m, persp, <float>start, <float>y, &px, &py)
            map_point(m, persp, <float>(start + count), <float>y, &qx, &qy)
            dx = (qx - px) / <float>count
            dy = (qy - py) / <float>count
            sta = 0
            end = count
            if wrap == WRAP_ZERO:
                clip_span(px, py, qx, qy, xmax, ymax, inv, start, count, &sta, &end)
                for i in range(sta):
                    for b in range(bpp):
                        out[y, start + i, b] = <uchar>pad
                for i in range(end, count):
                    for b in range(bpp):
                        out[y, start + i, b] = <uchar>pad
                map_point(m, persp, <float>(start + sta), <float>y, &px, &py)
            bx = px
            by = py
            for i in range(sta, end):
                x = start + i
                if bpp == 4 and filt == 0:
                    # MNN's 4-channel nearest sampler steps in blocks of 4 pixels: the block
                    # start accumulates 4 * step, pixels inside it add j * step.
                    if (i - sta) % 4 == 0 and i > sta:
                        bx = bx + 4 * dx
                        by = by + 4 * dy
                    px = bx + <float>((i - sta) % 4) * dx
                    py = by + <float>((i - sta) % 4) * dy
                if wrap == WRAP_REPEAT:
                    qx = <float>wrap_pos(px, iw)
                    qy = <float>wrap_pos(py, ih)
                else:
                    qx = 0 if not px >= 0 else (xmax if px > xmax else px)
                    qy = 0 if not py >= 0 else (ymax if py > ymax else py)
                px = px + dx
                py = py + dy
                if filt == 0:
                    # qx, qy >= 0 here (clamped or wrapped): truncating q + 0.5 is roundf.
                    sx = tap(<Py_ssize_t>(qx + <float>0.5), iw, wrap)
                    sy = tap(<Py_ssize_t>(qy + <float>0.5), ih, wrap)
                    for b in range(bpp):
                        out[y, x, b] = src[sy, sx * bpp + b]
                elif filt == 1 and wrap != WRAP_REPEAT:
                    # Positions are clamped into the image: no tap can leave it.
                    x0 = <Py_ssize_t>qx
                    y0 = <Py_ssize_t>qy
                    xf = qx - <float>x0
                    yf = qy - <float>y0
                    x1 = x0 + 1 if xf > 0 else x0
                    y1 = y0 + 1 if yf > 0 else y0
                    r0 = base + y0 * stride
                    r1 = base + y1 * stride
                    w00 = (1 - xf) * (1 - yf)
                    w01 = xf * (1 - yf)
                    w10 = yf * (1 - xf)
                    w11 = xf * yf
                    o = &out[y, x, 0]
                    if bpp == 3:
                        x0 = x0 * 3
                        x1 = x1 * 3
                        o[0] = round_u8(w00 * r0[x0] + w01 * r0[x1] + w10 * r1[x0] + w11 * r1[x1])
                        o[1] = round_u8(w00 * r0[x0 + 1] + w01 * r0[x1 + 1]
                                        + w10 * r1[x0 + 1] + w11 * r1[x1 + 1])
                        o[2] = round_u8(w00 * r0[x0 + 2] + w01 * r0[x1 + 2]
                                        + w10 * r1[x0 + 2] + w11 * r1[x1 + 2])
                    else:
                        for b in range(bpp):
                            v = (w00 * r0[x0 * bpp + b] + w01 * r0[x1 * bpp + b]
                                 + w10 * r1[x0 * bpp + b] + w11 * r1[x1 * bpp + b])
                            o[b] = round_u8(v)
                elif filt == 1:
                    x0 = <Py_ssize_t>qx
                    y0 = <Py_ssize_t>qy
                    xf = qx - <float>x0
                    yf = qy - <float>y0
                    x1 = tap(x0 + 1, iw, wrap) if xf > 0 else x0
                    y1 = tap(y0 + 1, ih, wrap) if yf > 0 else y0
                    for b in range(bpp):
                        v = <float>((1 - xf) * (1 - yf) * src[y0, x0 * bpp + b]
                                    + xf * (1 - yf) * src[y0, x1 * bpp + b]
                                    + yf * (1.0 - xf) * src[y1, x0 * bpp + b]
                                    + xf * yf * src[y1, x1 * bpp + b])
                        out[y, x, b] = round_u8(v)
                else:
                    x0 = <Py_ssize_t>floorf(qx)
                    y0 = <Py_ssize_t>floorf(qy)
                    xf = qx - <float>x0
                    yf = qy - <float>y0
                    wx0 = cubic_w(-1 - xf)
                    wx1 = cubic_w(-xf)
                    wx2 = cubic_w(1 - xf)
                    wx3 = cubic_w(2 - xf)
                    wy0 = cubic_w(-1 - yf)
                    wy1 = cubic_w(-yf)
                    wy2 = cubic_w(1 - yf)
                    wy3 = cubic_w(2 - yf)
                    for b in range(bpp):
                        v = 0
                        for i2 in range(4):
                            sy = tap(y0 + i2 - 1, ih, wrap)
                            wyv = wy0 if i2 == 0 else (wy1 if i2 == 1 else (wy2 if i2 == 2 else wy3))
                            for j in range(4):
                                sx = tap(x0 + j - 1, iw, wrap)
                                wxv = wx0 if j == 0 else (wx1 if j == 1 else (wx2 if j == 2 else wx3))
                                v = v + wyv * wxv * src[sy, sx * bpp + b]
                        out[y, x, b] = round_u8(v)


def normalize(const uchar[:, :, ::1] img, float[:, :, ::1] out, const float[::1] mean,
              const float[::1] normal, int nchw, int nthreads):
    """out = normal * (img - mean) per channel, written NHWC (out[h, w, c]) or NCHW
    (out[c, h, w]); channels of ``out`` beyond the image's are zero."""
    cdef Py_ssize_t h = img.shape[0], w = img.shape[1], cn = img.shape[2]
    cdef Py_ssize_t oc = out.shape[2] if not nchw else out.shape[0], y, x, c
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            for c in range(oc):
                if nchw:
                    out[c, y, x] = normal[c] * (img[y, x, c] - mean[c]) if c < cn else 0.0
                else:
                    out[y, x, c] = normal[c] * (img[y, x, c] - mean[c]) if c < cn else 0.0


cdef inline float _bilinear_tap(const uchar* r0, const uchar* r1, Py_ssize_t x0,
                                Py_ssize_t x1, float w00, float w01, float w10,
                                float w11) noexcept nogil:
    # The same expression as sample's bilinear path, so results are identical.
    return <float>round_u8(w00 * r0[x0] + w01 * r0[x1] + w10 * r1[x0] + w11 * r1[x1])


def sample_linear_norm(const uchar[:, ::1] src, Py_ssize_t iw, Py_ssize_t bpp,
                       float[:, :, ::1] out, const float[::1] mat, const int[::1] chan,
                       const float[::1] mean, const float[::1] normal, int nchw,
                       int nthreads):
    """Bilinear sampling (CLAMP wrap, affine matrix) fused with the channel reorder and
    ``normal * (pixel - mean)``, written straight into the float output.

    Output channel c takes source byte ``chan[c]`` of the sampled pixel, 255 when
    ``chan[c] == -1`` (an added alpha), or is 0 when ``chan[c] == -2`` (a channel beyond
    the format's). Pixels are sampled and rounded to uint8 exactly as ``sample`` does, so
    the result equals ``sample`` followed by ``normalize``. ``out`` is (oh, ow, oc), or
    (oc, oh, ow) with ``nchw``; ``chan`` holds values in [-2, bpp).
    """
    cdef Py_ssize_t ih = src.shape[0], stride = src.shape[1]
    cdef Py_ssize_t oc = out.shape[0] if nchw else out.shape[2]
    cdef Py_ssize_t oh = out.shape[1] if nchw else out.shape[0]
    cdef Py_ssize_t ow = out.shape[2] if nchw else out.shape[1]
    cdef Py_ssize_t y, x, c, i, t, start, count, x0, y0, x1, y1, k
    cdef Py_ssize_t tiles = (ow + TILE - 1) // TILE, plane = oh * ow
    cdef float px, py, qx, qy, dx, dy, xf, yf, v, xmax = iw - 1, ymax = ih - 1
    cdef float w00, w01, w10, w11
    cdef const uchar* base = &src[0, 0]
    cdef const uchar* r0
    cdef const uchar* r1
    cdef float* o = &out[0, 0, 0]
    cdef const float* m = &mat[0]
    cdef const int* ch = &chan[0]
    cdef const float* mn = &mean[0]
    cdef const float* nm = &normal[0]
    cdef float px4[4]
    cdef bint vec
    for y in prange(oh, nogil=True, num_threads=nthreads, schedule="static"):
        for t in range(tiles):
            start = t * TILE
            count = ow - start if ow - start < TILE else TILE
            map_point(m, False, <float>start, <float>y, &px, &py)
            map_point(m, False, <float>(start + count), <float>y, &qx, &qy)
            dx = (qx - px) / <float>count
            dy = (qy - py) / <float>count
            for i in range(count):
                x = start + i
                qx = 0 if not px >= 0 else (xmax if px > xmax else px)
                qy = 0 if not py >= 0 else (ymax if py > ymax else py)
                px = px + dx
                py = py + dy
                x0 = <Py_ssize_t>qx
                y0 = <Py_ssize_t>qy
                xf = qx - <float>x0
                yf = qy - <float>y0
                x1 = x0 + 1 if xf > 0 else x0
                y1 = y0 + 1 if yf > 0 else y0
                r0 = base + y0 * stride
                r1 = base + y1 * stride
                w00 = (1 - xf) * (1 - yf)
                w01 = xf * (1 - yf)
                w10 = yf * (1 - xf)
                w11 = xf * yf
                x0 = x0 * bpp
                x1 = x1 * bpp
                # All channels in one vector when its fourth byte is inside the image
                # (3-byte pixels read one byte past themselves).
                vec = ((bpp == 3 or bpp == 4) and (y1 < ih - 1 or x1 + 4 <= stride)
                       and mnn_bilerp4(r0, r1, x0, x1, w00, w01, w10, w11, px4))
                for c in range(oc):
                    k = ch[c]
                    if k >= 0 and vec:
                        v = nm[c] * (px4[k] - mn[c])
                    elif k >= 0:
                        v = nm[c] * (_bilinear_tap(r0 + k, r1 + k, x0, x1, w00, w01, w10, w11)
                                     - mn[c])
                    elif k == -1:
                        v = nm[c] * (<float>255 - mn[c])
                    else:
                        v = 0
                    if nchw:
                        o[c * plane + y * ow + x] = v
                    else:
                        o[(y * ow + x) * oc + c] = v
