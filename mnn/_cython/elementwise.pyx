# cython: language_level=3
"""Elementwise and reduction kernels on contiguous float32/float64 buffers.

Python (mnn/express/ops/elementwise.py, reduce.py) checks shapes, dtypes and contiguity
and allocates the output; these loops only compute, without the GIL, split over
``nthreads`` OpenMP threads. They exist where numpy is single-threaded or makes a
temporary: ``fma`` computes ``a * b + c`` in one pass (numpy needs two), the binary loops
and ``sum`` use both cores on large arrays.
"""
from cython.parallel cimport prange
from libc.string cimport memcpy

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


def add_relu(const real_t[::1] a, const real_t[::1] b, real_t[::1] out, int nthreads):
    """out[i] = max(a[i] + b[i], 0) in one pass (NaN stays NaN, as numpy's maximum);
    ``out`` may be ``a`` (in place)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef real_t r
    if a.shape[0] != n or b.shape[0] != n:
        raise ValueError(f"add_relu: lengths {a.shape[0]}, {b.shape[0]} and {n} differ")
    for i in prange(n, nogil=True, num_threads=nthreads, schedule="static"):
        r = a[i] + b[i]
        out[i] = 0 if r < 0 else r


cdef extern from *:
    """
    /* Sum of n elements in 16 independent lanes (one AVX-512 register of floats), the
       lanes added pairwise at the end: vectorizable without reassociation flags, and as
       accurate as numpy's pairwise blocks for the 4096-element blocks it is used on. */
    static double mnn_block_sum_f32(const float *x, Py_ssize_t n) {
        float acc[16] = {0};
        Py_ssize_t i = 0;
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++) acc[j] += x[i + j];
        for (int j = 0; i < n; i++, j++) acc[j] += x[i];
        for (int w = 8; w > 0; w /= 2)
            for (int j = 0; j < w; j++) acc[j] += acc[j + w];
        return acc[0];
    }
    static double mnn_block_sum_f64(const double *x, Py_ssize_t n) {
        double acc[8] = {0};
        Py_ssize_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) acc[j] += x[i + j];
        for (int j = 0; i < n; i++, j++) acc[j] += x[i];
        for (int w = 4; w > 0; w /= 2)
            for (int j = 0; j < w; j++) acc[j] += acc[j + w];
        return acc[0];
    }
    """
    double mnn_block_sum_f32(const float *x, Py_ssize_t n) nogil
    double mnn_block_sum_f64(const double *x, Py_ssize_t n) nogil


def sum_all(const real_t[::1] x, int nthreads):
    """Sum of all elements: 4096-element blocks summed in SIMD lanes of real_t, the
    block sums added in double (about as accurate as numpy's pairwise sum)."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t block = 4096
    cdef Py_ssize_t nblocks = (n + block - 1) // block
    cdef Py_ssize_t k, start, length
    cdef double total = 0.0
    for k in prange(nblocks, nogil=True, num_threads=nthreads, schedule="static"):
        start = k * block
        length = n - start
        if length > block:
            length = block
        if real_t is float:
            total += mnn_block_sum_f32(&x[start], length)
        else:
            total += mnn_block_sum_f64(&x[start], length)
    return total


cdef extern from "simd_exp.h":
    void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) nogil


def exp_f32(const float[::1] x, float[::1] out, int nthreads):
    """out = exp(x) for float32, in chunks split over ``nthreads`` (within 2 ulp of the
    correctly rounded value)."""
    cdef Py_ssize_t n = out.shape[0]
    cdef Py_ssize_t chunk = 16384
    cdef Py_ssize_t nchunks = (n + chunk - 1) // chunk
    cdef Py_ssize_t k, start, length
    for k in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = k * chunk
        length = n - start
        if length > chunk:
            length = chunk
        mnn_exp_f32(&x[start], &out[start], length)


def copy_bytes(const unsigned char[::1] src, unsigned char[::1] dst, int nthreads):
    """``dst[:] = src`` in ``nthreads`` contiguous pieces, one ``memcpy`` per thread (a
    large input written into a graph, ``Var.write``)."""
    cdef Py_ssize_t n = src.shape[0], per, t, a, b
    if dst.shape[0] != n:
        raise ValueError(f"copy_bytes: {n} bytes into {dst.shape[0]}")
    if nthreads < 1:
        raise ValueError("copy_bytes: nthreads must be >= 1")
    if n == 0:
        return
    # pieces on 64-byte lines, so no line is written by both threads
    per = ((n + nthreads - 1) // nthreads + 63) // 64 * 64
    for t in prange(nthreads, nogil=True, num_threads=nthreads, schedule="static"):
        a = t * per
        b = a + per if a + per < n else n
        if a < b:
            memcpy(&dst[a], &src[a], <size_t>(b - a))
