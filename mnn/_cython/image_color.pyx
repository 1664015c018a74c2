# cython: language_level=3
"""Colour-conversion kernels for mnn.cv (hot paths: luma, channel reorder).

Python validates shapes and allocates outputs; these loops run without the GIL, one
image row per OpenMP iteration.
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
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], y, x
    cdef int v
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            v = (src[y, x, r_idx] * 9798 + src[y, x, 1] * 19235
                 + src[y, x, b_idx] * 3735 + 16384)
            dst[y, x] = <unsigned char>(v >> 15)


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
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], y, x
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            dst[y, x] = (src[y, x, r_idx] * <float>0.299 + src[y, x, 1] * <float>0.587
                         + src[y, x, b_idx] * <float>0.114)


def reorder(const pix_t[:, :, ::1] src, pix_t[:, :, ::1] dst, const int[::1] order,
            double fill, int nthreads):
    """dst[..., k] = src[..., order[k]], or ``fill`` where order[k] < 0 (new alpha)."""
    cdef Py_ssize_t h = src.shape[0], w = src.shape[1], dc = dst.shape[2], y, x, k
    cdef int o0 = order[0], o1 = order[1] if dc > 1 else 0
    cdef int o2 = order[2] if dc > 2 else 0
    cdef int o3 = order[3] if dc > 3 else 0
    cdef pix_t f = <pix_t>fill
    if dc == 3 and o0 >= 0 and o1 >= 0 and o2 >= 0:
        for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
            for x in range(w):
                dst[y, x, 0] = src[y, x, o0]
                dst[y, x, 1] = src[y, x, o1]
                dst[y, x, 2] = src[y, x, o2]
        return
    if dc == 4 and o0 >= 0 and o1 >= 0 and o2 >= 0:
        for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
            for x in range(w):
                dst[y, x, 0] = src[y, x, o0]
                dst[y, x, 1] = src[y, x, o1]
                dst[y, x, 2] = src[y, x, o2]
                dst[y, x, 3] = src[y, x, o3] if o3 >= 0 else f
        return
    for y in prange(h, nogil=True, num_threads=nthreads, schedule="static"):
        for x in range(w):
            for k in range(dc):
                if order[k] >= 0:
                    dst[y, x, k] = src[y, x, order[k]]
                else:
                    dst[y, x, k] = f
