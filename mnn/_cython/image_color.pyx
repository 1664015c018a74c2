# cython: language_level=3
"""Colour-conversion kernels for mnn.cv (hot paths: luma, channel reorder).

Python validates shapes and allocates outputs; these loops run without the GIL, one
image row per OpenMP iteration, over raw row pointers so the compiler vectorises the
interleaved channel reads.
"""
from cython.parallel cimport prange

ctypedef fused pix_t:
    unsigned char
    unsigned short
    float
    double


def gray_u8(const unsigned char[:, :, ::1] src, unsigned char[:, ::1] dst,
            int r_idx, int b_idx, int nthreads):
    """dst = (9798 R + 19235 G + 3735 B + 2^14) >> 15, OpenCV's 15-bit luma."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], cn = src.shape[2], y, x
    cdef const unsigned char* s
    cdef unsigned char* d
    cdef int wr = 9798, wb = 3735
    if r_idx == 0:
        wr, wb = 3735, 9798  # channel 0 is red: swap the weights instead of the reads
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        s = &src[y, 0, 0]
        d = &dst[y, 0]
        if cn == 3:
            for x in range(w):
                d[x] = <unsigned char>((s[3 * x] * wb + s[3 * x + 1] * 19235
                                        + s[3 * x + 2] * wr + 16384) >> 15)
        else:
            for x in range(w):
                d[x] = <unsigned char>((s[4 * x] * wb + s[4 * x + 1] * 19235
                                        + s[4 * x + 2] * wr + 16384) >> 15)


def gray_u16(const unsigned short[:, :, ::1] src, unsigned short[:, ::1] dst,
             int r_idx, int b_idx, int nthreads):
    """16-bit luma with the same 15-bit weights."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], y, x
    cdef long long v
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            v = (<long long>src[y, x, r_idx] * 9798 + <long long>src[y, x, 1] * 19235
                 + <long long>src[y, x, b_idx] * 3735 + 16384)
            dst[y, x] = <unsigned short>(v >> 15)


def gray_float(const float[:, :, ::1] src, float[:, ::1] dst,
               int r_idx, int b_idx, int nthreads):
    """dst = 0.299 R + 0.587 G + 0.114 B in single precision."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], cn = src.shape[2], y, x
    cdef const float* s
    cdef float* d
    cdef float wr = 0.299, wg = 0.587, wb = 0.114
    if r_idx == 0:
        wr, wb = wb, wr
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        s = &src[y, 0, 0]
        d = &dst[y, 0]
        for x in range(w):
            d[x] = s[cn * x] * wb + s[cn * x + 1] * wg + s[cn * x + 2] * wr


def reorder(const pix_t[:, :, ::1] src, pix_t[:, :, ::1] dst, const int[::1] order,
            double fill, int nthreads):
    """dst[..., k] = src[..., order[k]], or ``fill`` where order[k] < 0 (new alpha)."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], sc = src.shape[2]
    cdef Py_ssize_t dc = dst.shape[2], y, x, k
    cdef int o0 = order[0], o1 = order[1] if dc > 1 else 0
    cdef int o2 = order[2] if dc > 2 else 0
    cdef int o3 = order[3] if dc > 3 else 0
    cdef pix_t f = <pix_t>fill
    cdef const pix_t* s
    cdef pix_t* d
    if dc == 3 and sc == 3 and o0 == 2 and o1 == 1 and o2 == 0:
        # The common BGR <-> RGB swap with literal offsets, which the compiler vectorises.
        for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
            s = &src[y, 0, 0]
            d = &dst[y, 0, 0]
            for x in range(w):
                d[3 * x] = s[3 * x + 2]
                d[3 * x + 1] = s[3 * x + 1]
                d[3 * x + 2] = s[3 * x]
        return
    if dc == 3 and sc == 3 and o0 >= 0 and o1 >= 0 and o2 >= 0:
        for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
            s = &src[y, 0, 0]
            d = &dst[y, 0, 0]
            for x in range(w):
                d[3 * x] = s[3 * x + o0]
                d[3 * x + 1] = s[3 * x + o1]
                d[3 * x + 2] = s[3 * x + o2]
        return
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        s = &src[y, 0, 0]
        d = &dst[y, 0, 0]
        for x in range(w):
            for k in range(dc):
                if order[k] >= 0:
                    d[dc * x + k] = s[sc * x + order[k]]
                else:
                    d[dc * x + k] = f
