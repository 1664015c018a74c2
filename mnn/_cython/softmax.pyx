# cython: language_level=3
"""Softmax and log-softmax over one axis of a float32 array viewed as (outer, n, inner).

Python (mnn/express/ops/nn_activation.py) checks dtype and contiguity and allocates the
output. Per slice: the max over the axis, ``exp(x - max)`` with the SIMD exp of
include/simd_exp.h (shared with elementwise.pyx; within 2 ulp of libm), its sum, then
``e * (1 / sum)`` or ``(x - max) - log(sum)``, each pass a contiguous vectorizable loop
(rows along the last axis: include/softmax_row.h, AVX-512 reductions). Slices are split
over OpenMP threads.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport logf

cdef extern from "simd_exp.h":
    void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) nogil

cdef extern from "softmax_row.h":
    # One contiguous row (inner == 1); tmp holds MNN_SOFTMAX_BLOCK floats.
    void mnn_softmax_row(const float *x, float *y, float *tmp, Py_ssize_t n,
                         int log_out) nogil
    const Py_ssize_t MNN_SOFTMAX_BLOCK


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
    cdef Py_ssize_t width = MNN_SOFTMAX_BLOCK if inner == 1 else 3 * inner
    scratch = np.empty((nthreads, width), dtype=np.float32)
    cdef float[:, ::1] buf = scratch
    cdef Py_ssize_t o, tid
    for o in prange(outer, nogil=True, num_threads=nthreads, schedule="static"):
        tid = openmp.omp_get_thread_num()
        if inner == 1:
            mnn_softmax_row(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, log_out)
        else:
            _cols(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, inner, log_out)
