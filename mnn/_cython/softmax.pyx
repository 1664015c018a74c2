# cython: language_level=3
"""Softmax and log-softmax over one axis of a float32 array viewed as (outer, n, inner).

Python (mnn/express/ops/nn_activation.py) checks dtype and contiguity and allocates the
output. Per slice: the max over the axis, ``exp(x - max)`` with the SIMD exp of
include/simd_exp.h (shared with elementwise.pyx; within 2 ulp of libm), its sum, then
``e / sum`` or ``(x - max) - log(sum)``, each pass a contiguous vectorizable loop. Slices
are split over OpenMP threads.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport INFINITY, logf

cdef extern from "simd_exp.h":
    void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) nogil

# Row block of the fused exp-and-sum pass (floats; 2 KB, well inside L1).
DEF _BLOCK = 512


cdef void _rows(const float* x, float* y, float* tmp, Py_ssize_t n, bint log_out) noexcept nogil:
    # One contiguous row of length n (inner == 1): max, then exp(x - max) and its sum in
    # L1-sized blocks (the block is still in cache when it is summed), then one scaling
    # pass (a multiply by 1 / sum: a vector divide costs several multiplies).
    cdef Py_ssize_t i, k, b, end, width
    cdef float lanes[16]
    cdef float m, s, inv
    cdef float* e
    for k in range(16):
        lanes[k] = -INFINITY
    for i in range(0, n - n % 16, 16):
        for k in range(16):
            lanes[k] = x[i + k] if x[i + k] > lanes[k] else lanes[k]
    m = -INFINITY
    for k in range(16):
        m = lanes[k] if lanes[k] > m else m
    for i in range(n - n % 16, n):
        m = x[i] if x[i] > m else m
    for k in range(16):
        lanes[k] = 0
    s = 0
    for b in range(0, n, _BLOCK):
        end = b + _BLOCK if b + _BLOCK < n else n
        width = end - b
        if log_out:
            for i in range(width):
                y[b + i] = x[b + i] - m
            mnn_exp_f32(y + b, tmp, width)
            e = tmp
        else:
            for i in range(width):
                tmp[i] = x[b + i] - m
            mnn_exp_f32(tmp, y + b, width)
            e = y + b
        for i in range(0, width - width % 16, 16):
            for k in range(16):
                lanes[k] = lanes[k] + e[i + k]
        for i in range(width - width % 16, width):
            s = s + e[i]
    for k in range(16):
        s = s + lanes[k]
    if log_out:
        s = logf(s)
        for i in range(n):
            y[i] = y[i] - s
    else:
        inv = 1.0 / s
        for i in range(n):
            y[i] = y[i] * inv


cdef void _cols(const float* x, float* y, float* buf, Py_ssize_t n, Py_ssize_t inner,
                bint log_out) noexcept nogil:
    # An (n, inner) slice, reduced over n: every pass runs along the contiguous inner axis.
    cdef float* m = buf
    cdef float* s = buf + inner
    cdef float* tmp = buf + 2 * inner
    cdef Py_ssize_t i, k
    for i in range(inner):
        m[i] = x[i]
        s[i] = 0
    for k in range(1, n):
        for i in range(inner):
            m[i] = x[k * inner + i] if x[k * inner + i] > m[i] else m[i]
    for k in range(n):
        if log_out:
            for i in range(inner):
                y[k * inner + i] = x[k * inner + i] - m[i]
            mnn_exp_f32(y + k * inner, tmp, inner)
            for i in range(inner):
                s[i] = s[i] + tmp[i]
        else:
            for i in range(inner):
                tmp[i] = x[k * inner + i] - m[i]
            mnn_exp_f32(tmp, y + k * inner, inner)
            for i in range(inner):
                s[i] = s[i] + y[k * inner + i]
    if log_out:
        for i in range(inner):
            s[i] = logf(s[i])
        for k in range(n):
            for i in range(inner):
                y[k * inner + i] = y[k * inner + i] - s[i]
    else:
        for k in range(n):
            for i in range(inner):
                y[k * inner + i] = y[k * inner + i] / s[i]


def softmax_f32(const float[:, :, ::1] x, float[:, :, ::1] y, bint log_out, int nthreads=1):
    """``y = softmax(x)`` (or log-softmax when ``log_out``) over axis 1 of (outer, n, inner),
    ``y`` overwritten."""
    cdef Py_ssize_t outer = x.shape[0], n = x.shape[1], inner = x.shape[2]
    if y.shape[0] != outer or y.shape[1] != n or y.shape[2] != inner:
        raise ValueError("softmax kernel: input and output shapes differ")
    if nthreads < 1:
        raise ValueError("softmax kernel: nthreads must be positive")
    if outer == 0 or n == 0 or inner == 0:
        return
    cdef Py_ssize_t width = (n if n < _BLOCK else _BLOCK) if inner == 1 else 3 * inner
    scratch = np.empty((nthreads, width), dtype=np.float32)
    cdef float[:, ::1] buf = scratch
    cdef Py_ssize_t o, tid
    for o in prange(outer, nogil=True, num_threads=nthreads, schedule="static"):
        tid = openmp.omp_get_thread_num()
        if inner == 1:
            _rows(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, log_out)
        else:
            _cols(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, inner, log_out)
