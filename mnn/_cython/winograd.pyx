# cython: language_level=3
"""Winograd F(4x4, 3x3) transforms for 3x3 stride-1 convolution.

A 3x3 convolution producing a 4x4 output tile reads a 6x6 input tile ``d``. With the
transforms of Lavin & Gray (interpolation points 0, +-1, +-2, infinity), the tile of
output channel ``o`` is ``A^T [ sum_c (G g_oc G^T) * (B^T d_c B) ] A``: the sum over
input channels is, for each of the 36 positions of the 6x6 transformed tile, one matrix
product ``U[k] (O x C) @ V[k] (C x tiles)``, done by BLAS in the caller. That is 36
multiply-adds per 16 outputs and channel pair instead of 144.

``input_transform`` fills ``V`` (36, C, N*TH*TW) from the zero-padded input;
``output_transform`` turns ``M`` (36, O, N*TH*TW) into the output (plus bias, clamp).
Tiles are numbered ``t = (n*TH + th)*TW + tw``; tile ``(th, tw)`` covers outputs
``4*th .. 4*th+3`` by ``4*tw .. 4*tw+3`` (those past the output edge are dropped).
Array shapes are checked before any loop; the 6x6 patch reads test every pixel index.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport INFINITY

ctypedef fused real_t:
    float
    double


cdef inline void _bt_rows(real_t* d, Py_ssize_t s) noexcept nogil:
    # In place d <- B^T d along one axis (6 values at stride s).
    cdef real_t d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s]
    cdef real_t d5 = d[5 * s]
    d[0] = 4 * d0 - 5 * d2 + d4
    d[s] = -4 * d1 - 4 * d2 + d3 + d4
    d[2 * s] = 4 * d1 - 4 * d2 - d3 + d4
    d[3 * s] = -2 * d1 - d2 + 2 * d3 + d4
    d[4 * s] = 2 * d1 - d2 - 2 * d3 + d4
    d[5 * s] = 4 * d1 - 5 * d3 + d5


cdef inline void _at_rows(const real_t* m, Py_ssize_t s, real_t* o,
                          Py_ssize_t os) noexcept nogil:
    # o <- A^T m along one axis (6 values at stride s -> 4 values at stride os).
    cdef real_t m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s], m4 = m[4 * s]
    cdef real_t m5 = m[5 * s]
    cdef real_t a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4
    o[0] = m0 + a + c
    o[os] = b + 2 * e
    o[2 * os] = a + 4 * c
    o[3 * os] = b + 8 * e + m5


def tiles(Py_ssize_t oh, Py_ssize_t ow):
    """Tile grid ``(TH, TW)`` covering an ``oh x ow`` output."""
    return (oh + 3) // 4, (ow + 3) // 4


def input_transform(const real_t[:, :, :, ::1] x, real_t[:, :, ::1] v, Py_ssize_t pt,
                    Py_ssize_t pl, Py_ssize_t th_count, Py_ssize_t tw_count,
                    int nthreads=1):
    """``v[:, c, t]`` = B^T d B of the 6x6 input patch of tile ``t`` in channel ``c``."""
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    if (v.shape[0] != 36 or v.shape[1] != C or v.shape[2] != N * th_count * tw_count
            or nthreads < 1):
        raise ValueError("winograd: transformed input buffer has the wrong shape")
    if N == 0 or C == 0 or th_count == 0 or tw_count == 0:
        return
    scratch = np.empty((nthreads, 36), dtype=np.float32 if real_t is float else np.float64)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, th, tw, t, i, j, iy, ix, y0, x0, tid
    cdef real_t* d
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            d = &buf[tid, 0]
            n = job // C
            c = job % C
            for th in range(th_count):
                y0 = th * 4 - pt
                for tw in range(tw_count):
                    x0 = tw * 4 - pl
                    t = (n * th_count + th) * tw_count + tw
                    if y0 >= 0 and y0 + 6 <= H and x0 >= 0 and x0 + 6 <= W:
                        for i in range(6):
                            for j in range(6):
                                d[i * 6 + j] = x[n, c, y0 + i, x0 + j]
                    else:
                        for i in range(6):
                            iy = y0 + i
                            for j in range(6):
                                ix = x0 + j
                                if iy < 0 or iy >= H or ix < 0 or ix >= W:
                                    d[i * 6 + j] = 0
                                else:
                                    d[i * 6 + j] = x[n, c, iy, ix]
                    for j in range(6):
                        _bt_rows(d + j, 6)      # columns: B^T d
                    for i in range(6):
                        _bt_rows(d + i * 6, 1)  # rows: (B^T d) B
                    for i in range(36):
                        v[i, c, t] = d[i]


def output_transform(const real_t[:, :, ::1] m, real_t[:, :, :, ::1] y,
                     const real_t[::1] bias, Py_ssize_t th_count, Py_ssize_t tw_count,
                     int nthreads=1, double clamp_lo=-INFINITY, double clamp_hi=INFINITY):
    """``y[n, o]`` tiles = A^T m A (+ bias, clipped to [clamp_lo, clamp_hi])."""
    cdef Py_ssize_t N = y.shape[0], O = y.shape[1], OH = y.shape[2], OW = y.shape[3]
    if (m.shape[0] != 36 or m.shape[1] != O or m.shape[2] != N * th_count * tw_count
            or bias.shape[0] != O or th_count * 4 < OH or tw_count * 4 < OW
            or nthreads < 1):
        raise ValueError("winograd: product buffer, bias or output has the wrong shape")
    if N == 0 or O == 0 or OH == 0 or OW == 0:
        return
    scratch = np.empty((nthreads, 60), dtype=np.float32 if real_t is float else np.float64)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, o, th, tw, t, i, j, oy, ox, tid
    cdef real_t* s
    cdef real_t v, b, lo_v = <real_t>clamp_lo, hi_v = <real_t>clamp_hi
    with nogil:
        for job in prange(N * O, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            s = &buf[tid, 0]
            n = job // O
            o = job % O
            b = bias[o]
            for th in range(th_count):
                for tw in range(tw_count):
                    t = (n * th_count + th) * tw_count + tw
                    for i in range(36):
                        s[i] = m[i, o, t]
                    for j in range(6):
                        _at_rows(s + j, 6, s + 36 + j, 6)   # 4x6 into s[36:60]
                    for i in range(4):
                        _at_rows(s + 36 + i * 6, 1, s + i * 4, 1)  # 4x4 into s[0:16]
                    for i in range(4):
                        oy = th * 4 + i
                        if oy >= OH:
                            break
                        for j in range(4):
                            ox = tw * 4 + j
                            if ox >= OW:
                                break
                            v = s[i * 4 + j] + b
                            if v < lo_v:
                                v = lo_v
                            elif v > hi_v:
                                v = hi_v
                            y[n, o, oy, ox] = v
