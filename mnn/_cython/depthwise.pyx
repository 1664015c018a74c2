# cython: language_level=3
"""Direct depthwise convolution (group == input channels) and its two gradients.

Output channel ``o`` reads input channel ``o // M`` where ``M = O / C`` is the channel
multiplier; the weight is ``(O, KH, KW)``. Output pixel ``(oy, ox)`` sums
``w[o, i, j] * x[c, oy*SH - PT + i*DH, ox*SW - PL + j*DW]`` over the taps inside the
image. For each tap the output columns whose input column lies inside the image form one
contiguous range, computed once per tap, so the inner loop has no bounds tests and
vectorizes. All shapes are checked here before any loop runs.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from mnn._cython.window cimport _ceil_div, _max, _min, _ox_hi, _ox_lo
from libc.math cimport INFINITY

cdef extern from "dw3x3_kernel.h":
    void mnn_dw3x3_plane(const float* x, Py_ssize_t H, Py_ssize_t W, const float* k,
                         float b, float* y, Py_ssize_t OH, Py_ssize_t OW, Py_ssize_t sh,
                         int sw, Py_ssize_t pt, Py_ssize_t pl, const float* zeros,
                         float lo, float hi) nogil
    Py_ssize_t mnn_dw3x3_flat_masks(Py_ssize_t H, Py_ssize_t W, Py_ssize_t OH, Py_ssize_t OW,
                                    Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                                    unsigned short* masks, Py_ssize_t cap) nogil
    void mnn_dw3x3_plane_flat(const float* x, Py_ssize_t W, const float* k, float b,
                              float* y, Py_ssize_t OH, Py_ssize_t pt, Py_ssize_t pl,
                              const unsigned short* masks, Py_ssize_t nvec, float lo,
                              float hi) nogil

# Most 16-lane steps of a plane run as one flat stream (7x7 is 4; 9 masks per step).
cdef enum:
    _FLAT_CAP = 64

ctypedef fused real_t:
    float
    double


def _check(x, w, y, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw):
    if sh < 1 or sw < 1 or dh < 1 or dw < 1:
        raise ValueError("depthwise kernel: stride and dilation must be >= 1")
    C, O = x.shape[1], w.shape[0]
    if C == 0 or O % C != 0 or y.shape[1] != O or y.shape[0] != x.shape[0]:
        raise ValueError(f"depthwise kernel: input {tuple(x.shape[:4])}, weight "
                         f"{tuple(w.shape[:3])} and output {tuple(y.shape[:4])} do not match")


cdef inline void _pad_plane(const real_t* src, Py_ssize_t H, Py_ssize_t W, real_t* dst,
                            Py_ssize_t Hp, Py_ssize_t Wp, Py_ssize_t pt,
                            Py_ssize_t pl) noexcept nogil:
    # dst[r, q] = src[r - pt, q - pl] inside the image, 0 in the padding (Hp x Wp).
    cdef Py_ssize_t r, q, iy
    cdef Py_ssize_t q0 = _min(_max(pl, 0), Wp), q1 = _max(_min(W + pl, Wp), q0)
    for r in range(Hp):
        iy = r - pt
        if iy < 0 or iy >= H:
            for q in range(Wp):
                dst[r * Wp + q] = 0
            continue
        for q in range(q0):
            dst[r * Wp + q] = 0
        for q in range(q0, q1):
            dst[r * Wp + q] = src[iy * W + q - pl]
        for q in range(q1, Wp):
            dst[r * Wp + q] = 0


cdef inline void _row3x3(real_t* yrow, const real_t* r0, const real_t* r1, const real_t* r2,
                         const real_t* k, real_t b, Py_ssize_t OW, Py_ssize_t sw,
                         Py_ssize_t dw) noexcept nogil:
    # One output row of a 3x3 depthwise filter: nine taps in one pass (vectorizes).
    cdef Py_ssize_t ox, q
    cdef Py_ssize_t d2 = 2 * dw
    for ox in range(OW):
        q = ox * sw
        yrow[ox] = (b + k[0] * r0[q] + k[1] * r0[q + dw] + k[2] * r0[q + d2]
                    + k[3] * r1[q] + k[4] * r1[q + dw] + k[5] * r1[q + d2]
                    + k[6] * r2[q] + k[7] * r2[q + dw] + k[8] * r2[q + d2])


def forward(const real_t[:, :, :, ::1] x, const real_t[:, :, ::1] w,
            const real_t[::1] bias, real_t[:, :, :, ::1] y, Py_ssize_t sh, Py_ssize_t sw,
            Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw, int nthreads=1,
            double clamp_lo=-INFINITY, double clamp_hi=INFINITY):
    """``y = clip(depthwise_conv(x, w) + bias, clamp_lo, clamp_hi)`` (``y`` overwritten).

    float32 3x3 filters with dilation 1, column stride 1 or 2 and pads >= 0 run straight
    from the input (include/dw3x3_kernel.h). Other filters first copy each (image,
    channel) plane into a zero-padded scratch plane holding exactly the rows and columns
    the windows touch, so the loops need no bounds tests. The clamp fuses a following
    relu / relu6 (infinite bounds: no clamp).
    """
    _check(x, w, y, sh, sw, dh, dw)
    if bias.shape[0] != w.shape[0]:
        raise ValueError("depthwise kernel: bias length must equal output channels")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = w.shape[0], KH = w.shape[1], KW = w.shape[2]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3], M = O // C
    if N == 0 or O == 0 or OH == 0 or OW == 0:
        return
    if nthreads < 1:
        raise ValueError("depthwise kernel: nthreads must be >= 1")
    cdef Py_ssize_t job, n, o, c, i, j, oy, ox, tid
    if (real_t is float and KH == 3 and KW == 3 and dh == 1 and dw == 1 and sw <= 2
            and pt >= 0 and pl >= 0):
        _forward3x3_f32(x, w, bias, y, sh, sw, pt, pl, nthreads, clamp_lo, clamp_hi)
        return
    # The padded extent every window reads: rows 0 .. (OH-1)*sh + (KH-1)*dh.
    cdef Py_ssize_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1
    cdef Py_ssize_t Wp = (OW - 1) * sw + (KW - 1) * dw + 1
    scratch = np.empty((nthreads, Hp * Wp), dtype=np.float32 if real_t is float else np.float64)
    cdef real_t[:, ::1] buf = scratch
    out_scratch = np.empty((nthreads, OH * Wp), dtype=scratch.dtype)
    cdef real_t[:, ::1] out_buf = out_scratch
    cdef real_t* obuf
    cdef real_t* yrow
    cdef real_t* pbuf
    cdef const real_t* prow
    cdef const real_t* kern
    cdef real_t lo_v = <real_t>clamp_lo, hi_v = <real_t>clamp_hi, v, wv
    cdef bint clamp = clamp_lo > -INFINITY or clamp_hi < INFINITY
    with nogil:
        for job in prange(N * O, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // O
            o = job % O
            c = o // M
            pbuf = &buf[tid, 0]
            _pad_plane(&x[n, c, 0, 0], H, W, pbuf, Hp, Wp, pt, pl)
            kern = &w[o, 0, 0]
            if sh == 1 and sw == 1 and KH == 3 and KW == 3:
                # Stride 1: compute over the padded width as one flat run (long vectors
                # even for 7x7 planes), then keep the OW valid columns of each row.
                # Flat index t = oy*Wp + ox reads at most t + 2*dh*Wp + 2*dw, which for
                # t < (OH-1)*Wp + OW stays inside the Hp*Wp plane.
                obuf = &out_buf[tid, 0]
                _row3x3(obuf, pbuf, pbuf + dh * Wp, pbuf + 2 * dh * Wp, kern, bias[o],
                        (OH - 1) * Wp + OW, 1, dw)
                for oy in range(OH):
                    yrow = &y[n, o, oy, 0]
                    for ox in range(OW):
                        v = obuf[oy * Wp + ox]
                        if clamp:
                            v = lo_v if v < lo_v else (hi_v if v > hi_v else v)
                        yrow[ox] = v
                continue
            for oy in range(OH):
                yrow = &y[n, o, oy, 0]
                prow = pbuf + oy * sh * Wp
                if KH == 3 and KW == 3:
                    _row3x3(yrow, prow, prow + dh * Wp, prow + 2 * dh * Wp, kern, bias[o],
                            OW, sw, dw)
                else:
                    for ox in range(OW):
                        yrow[ox] = bias[o]
                    for i in range(KH):
                        for j in range(KW):
                            wv = kern[i * KW + j]
                            for ox in range(OW):
                                yrow[ox] += wv * prow[i * dh * Wp + j * dw + ox * sw]
                if clamp:
                    for ox in range(OW):
                        v = yrow[ox]
                        yrow[ox] = lo_v if v < lo_v else (hi_v if v > hi_v else v)


cdef void _forward3x3_f32(const float[:, :, :, ::1] x, const float[:, :, ::1] w,
                          const float[::1] bias, float[:, :, :, ::1] y, Py_ssize_t sh,
                          Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl, int nthreads,
                          double clamp_lo, double clamp_hi):
    # 3x3, dilation 1, column stride 1 or 2, pads >= 0 (checked by forward): one plane
    # per job straight from the input, no padded copy (include/dw3x3_kernel.h). The flat
    # stream's tap masks depend only on the geometry: computed once here for all planes.
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = w.shape[0], OH = y.shape[2], OW = y.shape[3], M = O // C
    zeros_arr = np.zeros(max(W, 1), np.float32)
    cdef const float[::1] zeros = zeros_arr
    cdef float lo = <float>clamp_lo, hi = <float>clamp_hi
    cdef Py_ssize_t job, n, o
    cdef unsigned short masks[_FLAT_CAP * 9]
    cdef Py_ssize_t nflat = mnn_dw3x3_flat_masks(H, W, OH, OW, sh, sw, pt, pl, masks,
                                                 _FLAT_CAP)
    with nogil:
        for job in prange(N * O, num_threads=nthreads, schedule="static"):
            n = job // O
            o = job % O
            if nflat > 0:
                mnn_dw3x3_plane_flat(&x[n, o // M, 0, 0], W, &w[o, 0, 0], bias[o],
                                     &y[n, o, 0, 0], OH, pt, pl, masks, nflat, lo, hi)
            else:
                mnn_dw3x3_plane(&x[n, o // M, 0, 0], H, W, &w[o, 0, 0], bias[o],
                                &y[n, o, 0, 0], OH, OW, sh, <int>sw, pt, pl, &zeros[0], lo,
                                hi)


def backward_input(const real_t[:, :, :, ::1] dy, const real_t[:, :, ::1] w,
                   real_t[:, :, :, ::1] dx,
                   Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                   Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dx`` = gradient of the input given the output gradient ``dy`` (overwritten)."""
    _check(dx, w, dy, sh, sw, dh, dw)
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[2], W = dx.shape[3]
    cdef Py_ssize_t O = w.shape[0], KH = w.shape[1], KW = w.shape[2]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3], M = O // C
    cdef Py_ssize_t job, n, o, c, m, i, j, oy, ox, iy, ix, off, lo, hi
    cdef real_t wv
    with nogil:
        # A thread owns whole input channels (and the M outputs reading them): no races.
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for iy in range(H):
                for ix in range(W):
                    dx[n, c, iy, ix] = 0
            for m in range(M):
                o = c * M + m
                for oy in range(OH):
                    for i in range(KH):
                        iy = oy * sh - pt + i * dh
                        if iy < 0 or iy >= H:
                            continue
                        for j in range(KW):
                            wv = w[o, i, j]
                            off = j * dw - pl
                            lo = _ox_lo(OW, sw, off)
                            hi = _ox_hi(W, OW, sw, off, lo)
                            for ox in range(lo, hi):
                                dx[n, c, iy, ox * sw + off] += wv * dy[n, o, oy, ox]


def backward_filter(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                    real_t[:, :, ::1] dw_out,
                    Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                    Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dw_out`` (``(O, KH, KW)``) = gradient of the weight (overwritten)."""
    _check(x, dw_out, dy, sh, sw, dh, dw)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = dw_out.shape[0], KH = dw_out.shape[1], KW = dw_out.shape[2]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3], M = O // C
    cdef Py_ssize_t o, n, c, i, j, oy, ox, iy, off, lo, hi
    cdef real_t acc
    with nogil:
        for o in prange(O, num_threads=nthreads, schedule="static"):
            c = o // M
            for i in range(KH):
                for j in range(KW):
                    acc = 0
                    off = j * dw - pl
                    lo = _ox_lo(OW, sw, off)
                    hi = _ox_hi(W, OW, sw, off, lo)
                    for n in range(N):
                        for oy in range(OH):
                            iy = oy * sh - pt + i * dh
                            if iy < 0 or iy >= H:
                                continue
                            for ox in range(lo, hi):
                                acc = acc + dy[n, o, oy, ox] * x[n, c, iy, ox * sw + off]
                    dw_out[o, i, j] = acc
