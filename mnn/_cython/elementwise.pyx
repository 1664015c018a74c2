# cython: language_level=3
"""Elementwise and reduction kernels on contiguous float32/float64 buffers.

Python (mnn/express/ops/elementwise.py, reduce.py) checks shapes, dtypes and contiguity
and allocates the output; these loops only compute, without the GIL, split over
``nthreads`` OpenMP threads. They exist where numpy is single-threaded or makes a
temporary: ``fma`` computes ``a * b + c`` in one pass (numpy needs two), the binary loops
and ``sum`` use both cores on large arrays.
"""
from cython.parallel cimport prange

ctypedef fused real_t:
    float
    double

# Binary op codes (kept in step with mnn/express/ops/elementwise.py).
DEF ADD = 0
DEF SUB = 1
DEF MUL = 2
DEF DIV = 3
DEF MAX = 4
DEF MIN = 5


def binary(int op, const real_t[::1] a, const real_t[::1] b, real_t[::1] out, int nthreads):
    """out[i] = a[i] (op) b[i] for op in ADD, SUB, MUL, DIV, MAX, MIN (same length)."""
    cdef Py_ssize_t i, n = out.shape[0]
    if op == ADD:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] + b[i]
    elif op == SUB:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] - b[i]
    elif op == MUL:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] * b[i]
    elif op == DIV:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] / b[i]
    elif op == MAX:
        # numpy's maximum propagates NaN from either side: a != a tests NaN.
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] if (a[i] >= b[i] or a[i] != a[i]) else b[i]
    elif op == MIN:
        for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
            out[i] = a[i] if (a[i] <= b[i] or a[i] != a[i]) else b[i]
    else:
        raise ValueError(f"mnn: unknown binary kernel code {op}")


cdef extern from *:
    """
    /* a * b + c with the product rounded first, as numpy computes it: contracting into
       a fused multiply-add (the build uses -ffp-contract=fast) would change the last bit. */
    #pragma GCC push_options
    #pragma GCC optimize ("fp-contract=off")
    static void mnn_fma_f32(const float *a, const float *b, const float *c, float *out,
                            Py_ssize_t n) {
        for (Py_ssize_t i = 0; i < n; i++) out[i] = a[i] * b[i] + c[i];
    }
    static void mnn_fma_f64(const double *a, const double *b, const double *c, double *out,
                            Py_ssize_t n) {
        for (Py_ssize_t i = 0; i < n; i++) out[i] = a[i] * b[i] + c[i];
    }
    #pragma GCC pop_options
    """
    void mnn_fma_f32(const float *a, const float *b, const float *c, float *out,
                     Py_ssize_t n) nogil
    void mnn_fma_f64(const double *a, const double *b, const double *c, double *out,
                     Py_ssize_t n) nogil


def fma(const real_t[::1] a, const real_t[::1] b, const real_t[::1] c, real_t[::1] out,
        int nthreads):
    """out[i] = a[i] * b[i] + c[i] in one pass, rounded exactly like numpy's two steps."""
    cdef Py_ssize_t n = out.shape[0]
    cdef Py_ssize_t chunk = 16384
    cdef Py_ssize_t nchunks = (n + chunk - 1) // chunk
    cdef Py_ssize_t k, start, length
    if n == 0:
        return
    for k in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = k * chunk
        length = n - start
        if length > chunk:
            length = chunk
        if real_t is float:
            mnn_fma_f32(&a[start], &b[start], &c[start], &out[start], length)
        else:
            mnn_fma_f64(&a[start], &b[start], &c[start], &out[start], length)


def sum_all(const real_t[::1] x, int nthreads):
    """Sum of all elements, accumulated in double with 8 independent partial sums per
    thread (more accurate than float32 pairwise summation, and vectorizable)."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nblocks = (n + 4095) // 4096
    cdef Py_ssize_t blk, i, start, stop
    cdef double total = 0.0
    cdef double s0, s1, s2, s3, s4, s5, s6, s7
    for blk in prange(nblocks, nogil=True, num_threads=nthreads, schedule="static"):
        start = blk * 4096
        stop = start + 4096
        if stop > n:
            stop = n
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        s5 = 0.0
        s6 = 0.0
        s7 = 0.0
        i = start
        while i + 8 <= stop:
            s0 = s0 + x[i]
            s1 = s1 + x[i + 1]
            s2 = s2 + x[i + 2]
            s3 = s3 + x[i + 3]
            s4 = s4 + x[i + 4]
            s5 = s5 + x[i + 5]
            s6 = s6 + x[i + 6]
            s7 = s7 + x[i + 7]
            i = i + 8
        while i < stop:
            s0 = s0 + x[i]
            i = i + 1
        total += ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    return total
