# cython: language_level=3
"""Softmax and log-softmax over one axis of a float32 array viewed as (outer, n, inner).

Python (mnn/express/ops/nn_activation.py) checks dtype and contiguity and allocates the
output. Per slice: the max over the axis, ``exp(x - max)`` with a SIMD exp (the same
polynomial as elementwise.pyx's, within 2 ulp of libm), its sum, then ``e / sum`` or
``(x - max) - log(sum)``, each pass a contiguous vectorizable loop. Slices are split
over OpenMP threads.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange
from libc.math cimport INFINITY, logf

cdef extern from *:
    """
    #include <math.h>
    /* exp on float32 in SIMD lanes: n = round(x / ln2), r = x - n ln2 (two-part ln2),
       exp(r) by Cephes' degree-5 polynomial (about 1 ulp), times 2^n built from the
       exponent bits. Valid for -87 <= x <= 88; a chunk holding anything else (overflow,
       underflow to subnormals, inf, nan) is redone element by element with libm's expf. */
    #pragma GCC push_options
    /* Compares may not raise FP exceptions (nobody reads the flags here): lets the
       clamps become SIMD selects. */
    #pragma GCC optimize ("no-trapping-math")
    static void sm_exp_f32(const float *x, float *out, Py_ssize_t n) {
        int outside = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            float v = x[i];
            outside |= (v < -87.0f) | (v > 88.0f) | (v != v);  /* no branches: SIMD */
            v = v < -87.0f ? -87.0f : v;  /* selects, not fminf: they vectorize */
            v = v > 88.0f ? 88.0f : v;
            float k = floorf(v * 1.44269504088896341f + 0.5f);
            float r = v - k * 0.693359375f;
            r = r - k * -2.12194440e-4f;
            float p = 1.9875691500e-4f;
            p = p * r + 1.3981999507e-3f;
            p = p * r + 8.3334519073e-3f;
            p = p * r + 4.1665795894e-2f;
            p = p * r + 1.6666665459e-1f;
            p = p * r + 5.0000001201e-1f;
            p = p * (r * r) + r + 1.0f;
            int bits = ((int)k + 127) << 23;
            float scale;
            __builtin_memcpy(&scale, &bits, sizeof scale);
            out[i] = p * scale;
        }
        if (outside)
            for (Py_ssize_t i = 0; i < n; i++)
                if (!(x[i] >= -87.0f && x[i] <= 88.0f)) out[i] = expf(x[i]);
    }
    #pragma GCC pop_options
    """
    void sm_exp_f32(const float *x, float *out, Py_ssize_t n) nogil


cdef void _rows(const float* x, float* y, float* tmp, Py_ssize_t n, bint log_out) noexcept nogil:
    # One contiguous row of length n (inner == 1).
    cdef Py_ssize_t i, k
    cdef float lanes[16]
    cdef float m, s
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
    if log_out:
        for i in range(n):
            y[i] = x[i] - m
        sm_exp_f32(y, tmp, n)
    else:
        for i in range(n):
            tmp[i] = x[i] - m
        sm_exp_f32(tmp, y, n)
        tmp = y
    for k in range(16):
        lanes[k] = 0
    for i in range(0, n - n % 16, 16):
        for k in range(16):
            lanes[k] = lanes[k] + tmp[i + k]
    s = 0
    for k in range(16):
        s = s + lanes[k]
    for i in range(n - n % 16, n):
        s = s + tmp[i]
    if log_out:
        s = logf(s)
        for i in range(n):
            y[i] = y[i] - s
    else:
        for i in range(n):
            y[i] = y[i] / s


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
            sm_exp_f32(y + k * inner, tmp, inner)
            for i in range(inner):
                s[i] = s[i] + tmp[i]
        else:
            for i in range(inner):
                tmp[i] = x[k * inner + i] - m[i]
            sm_exp_f32(tmp, y + k * inner, inner)
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
    cdef Py_ssize_t width = n if inner == 1 else 3 * inner
    scratch = np.empty((nthreads, width), dtype=np.float32)
    cdef float[:, ::1] buf = scratch
    cdef Py_ssize_t o, tid
    for o in prange(outer, nogil=True, num_threads=nthreads, schedule="static"):
        tid = openmp.omp_get_thread_num()
        if inner == 1:
            _rows(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, log_out)
        else:
            _cols(&x[o, 0, 0], &y[o, 0, 0], &buf[tid, 0], n, inner, log_out)
