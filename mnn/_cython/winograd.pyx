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


cdef inline void _bt16(real_t* p, Py_ssize_t s) noexcept nogil:
    # In place B^T along one axis for 16 tiles at once: value r of lane l is p[r*s + l].
    # The lane loop is innermost and contiguous, so it vectorizes.
    cdef Py_ssize_t l
    cdef real_t d0, d1, d2, d3, d4, d5
    for l in range(16):
        d0 = p[l]
        d1 = p[s + l]
        d2 = p[2 * s + l]
        d3 = p[3 * s + l]
        d4 = p[4 * s + l]
        d5 = p[5 * s + l]
        p[l] = 4 * d0 - 5 * d2 + d4
        p[s + l] = -4 * d1 - 4 * d2 + d3 + d4
        p[2 * s + l] = 4 * d1 - 4 * d2 - d3 + d4
        p[3 * s + l] = -2 * d1 - d2 + 2 * d3 + d4
        p[4 * s + l] = 2 * d1 - d2 - 2 * d3 + d4
        p[5 * s + l] = 4 * d1 - 5 * d3 + d5


cdef inline void _at16(const real_t* p, Py_ssize_t s, real_t* o,
                       Py_ssize_t os) noexcept nogil:
    # o <- A^T p along one axis for 16 lanes (6 values at stride s -> 4 at stride os).
    cdef Py_ssize_t l
    cdef real_t m0, m1, m2, m3, m4, m5, a, b, c, e
    for l in range(16):
        m0 = p[l]
        m1 = p[s + l]
        m2 = p[2 * s + l]
        m3 = p[3 * s + l]
        m4 = p[4 * s + l]
        m5 = p[5 * s + l]
        a = m1 + m2
        b = m1 - m2
        c = m3 + m4
        e = m3 - m4
        o[l] = m0 + a + c
        o[os + l] = b + 2 * e
        o[2 * os + l] = a + 4 * c
        o[3 * os + l] = b + 8 * e + m5


def tiles(Py_ssize_t oh, Py_ssize_t ow):
    """Tile grid ``(TH, TW)`` covering an ``oh x ow`` output."""
    return (oh + 3) // 4, (ow + 3) // 4


def input_transform(const real_t[:, :, :, ::1] x, real_t[:, :, ::1] v, Py_ssize_t pt,
                    Py_ssize_t pl, Py_ssize_t th_count, Py_ssize_t tw_count,
                    int nthreads=1):
    """``v[:, c, t]`` = B^T d B of the 6x6 input patch of tile ``t`` in channel ``c``.

    Tiles are transformed 16 at a time (one row of tiles), lanes innermost, and each of
    the 36 results is stored as one contiguous run of up to 16 tiles.
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    if (v.shape[0] != 36 or v.shape[1] != C or v.shape[2] != N * th_count * tw_count
            or nthreads < 1):
        raise ValueError("winograd: transformed input buffer has the wrong shape")
    if N == 0 or C == 0 or th_count == 0 or tw_count == 0:
        return
    scratch = np.empty((nthreads, 36 * 16), dtype=np.float32 if real_t is float else np.float64)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, c, th, tw0, lanes, l, t0, i, j, iy, ix, r, q, tid
    cdef Py_ssize_t Hp = th_count * 4 + 2, Wp = (tw_count + 15) // 16 * 64 + 2
    padded = np.empty((nthreads, Hp * Wp), dtype=scratch.dtype)
    cdef real_t[:, ::1] pbuf = padded
    # Padded columns q hold input column q - pl: inside the image for q0 <= q < q1.
    cdef Py_ssize_t q0 = min(max(pl, 0), Wp), q1 = max(min(W + pl, Wp), min(max(pl, 0), Wp))
    cdef real_t* d
    cdef real_t* plane
    cdef const real_t* row
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            d = &buf[tid, 0]
            n = job // C
            c = job % C
            # Zero-padded copy of the plane covering every tile of 16-lane blocks, so
            # the patch loads need no bounds tests: padded (r, q) is input
            # (r - pt, q - pl).
            plane = &pbuf[tid, 0]
            for r in range(Hp):
                iy = r - pt
                if iy < 0 or iy >= H:
                    for q in range(Wp):
                        plane[r * Wp + q] = 0
                    continue
                # Columns [q0, q1) are inside the image: one branch-free run per row.
                for q in range(q0):
                    plane[r * Wp + q] = 0
                for q in range(q0, q1):
                    plane[r * Wp + q] = x[n, c, iy, q - pl]
                for q in range(q1, Wp):
                    plane[r * Wp + q] = 0
            for th in range(th_count):
                for tw0 in range(0, tw_count, 16):
                    lanes = tw_count - tw0 if tw_count - tw0 < 16 else 16
                    t0 = (n * th_count + th) * tw_count + tw0
                    for i in range(6):
                        row = plane + (th * 4 + i) * Wp + tw0 * 4
                        for j in range(6):
                            for l in range(16):
                                d[(i * 6 + j) * 16 + l] = row[l * 4 + j]
                    for j in range(6):
                        _bt16(d + j * 16, 6 * 16)   # columns: B^T d
                    for i in range(6):
                        _bt16(d + i * 6 * 16, 16)   # rows: (B^T d) B
                    for i in range(36):
                        for l in range(lanes):
                            v[i, c, t0 + l] = d[i * 16 + l]


def output_transform(const real_t[:, :, ::1] m, real_t[:, :, :, ::1] y,
                     const real_t[::1] bias, Py_ssize_t th_count, Py_ssize_t tw_count,
                     int nthreads=1, double clamp_lo=-INFINITY, double clamp_hi=INFINITY):
    """``y[n, o]`` tiles = A^T m A (+ bias, clipped to [clamp_lo, clamp_hi]); 16 tiles of
    a tile row at a time, lanes innermost."""
    cdef Py_ssize_t N = y.shape[0], O = y.shape[1], OH = y.shape[2], OW = y.shape[3]
    if (m.shape[0] != 36 or m.shape[1] != O or m.shape[2] != N * th_count * tw_count
            or bias.shape[0] != O or th_count * 4 < OH or tw_count * 4 < OW
            or nthreads < 1):
        raise ValueError("winograd: product buffer, bias or output has the wrong shape")
    if N == 0 or O == 0 or OH == 0 or OW == 0:
        return
    scratch = np.empty((nthreads, 76 * 16), dtype=np.float32 if real_t is float else np.float64)
    cdef real_t[:, ::1] buf = scratch
    cdef Py_ssize_t job, n, o, th, tw0, lanes, l, t0, i, j, oy, ox, tid
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
                for tw0 in range(0, tw_count, 16):
                    lanes = tw_count - tw0 if tw_count - tw0 < 16 else 16
                    t0 = (n * th_count + th) * tw_count + tw0
                    for i in range(36):
                        for l in range(16):
                            s[i * 16 + l] = m[i, o, t0 + l] if l < lanes else 0
                    # s[0:576] 6x6 -> s[576:960] 4x6 (columns) -> s[960:1216] 4x4 (rows)
                    for j in range(6):
                        _at16(s + j * 16, 6 * 16, s + 576 + j * 16, 6 * 16)
                    for i in range(4):
                        _at16(s + 576 + i * 6 * 16, 16, s + 960 + i * 4 * 16, 16)
                    for i in range(4):
                        oy = th * 4 + i
                        if oy >= OH:
                            break
                        for l in range(lanes):
                            for j in range(4):
                                ox = (tw0 + l) * 4 + j
                                if ox >= OW:
                                    break
                                v = s[960 + (i * 4 + j) * 16 + l] + b
                                if v < lo_v:
                                    v = lo_v
                                elif v > hi_v:
                                    v = hi_v
                                y[n, o, oy, ox] = v
