# cython: language_level=3
"""Row-major matrix products through BLAS: the only kernel file that calls BLAS.

BLAS is column-major; a row-major ``C (m x n) = op(A) op(B)`` is the column-major product
``C^T = op(B)^T op(A)^T``, so the operands are passed swapped and no data is copied.
Callers (Python) have checked shapes; the wrapper re-checks them because a wrong leading
dimension would make BLAS read past the buffers.
"""
import numpy as np
from cython.parallel cimport prange
from scipy.linalg.cython_blas cimport dgemm, dgemv, sgemm, sgemv

from mnn._cython.batch_maps cimport check_batched_product

ctypedef fused real_t:
    float
    double


cdef inline void _gemv(char op, int rows, int cols, real_t alpha, const real_t* x, int ldx,
                       const real_t* v, int incv, real_t beta, real_t* y,
                       int incy) noexcept nogil:
    # y = alpha * op(X) v + beta * y, X column-major (rows x cols, leading dim ldx)
    if real_t is float:
        sgemv(&op, &rows, &cols, &alpha, <float*>x, &ldx, <float*>v, &incv, &beta, y, &incy)
    else:
        dgemv(&op, &rows, &cols, &alpha, <double*>x, &ldx, <double*>v, &incv, &beta, y,
              &incy)


cdef inline void _gemm_rm(bint ta, bint tb, int m, int n, int k, real_t alpha,
                          const real_t* a, int lda, const real_t* b, int ldb, real_t beta,
                          real_t* c, int ldc) noexcept nogil:
    cdef char op_b = b'T' if tb else b'N'
    cdef char op_a = b'T' if ta else b'N'
    # A row or column vector result is a matrix-vector product: OpenBLAS's sgemm with
    # m == 1 took 6x the time of its sgemv (1x1280 @ 1280x1000, a classifier layer).
    if m == 1:
        # c (1 x n) = op(b)^T op(a)^T; row-major b is column-major b^T (ld ldb).
        if tb:
            _gemv(c'T', k, n, alpha, b, ldb, a, lda if ta else 1, beta, c, 1)
        else:
            _gemv(c'N', n, k, alpha, b, ldb, a, lda if ta else 1, beta, c, 1)
        return
    if n == 1:
        # c (m x 1, stride ldc) = op(a) op(b)
        if ta:
            _gemv(c'N', m, k, alpha, a, lda, b, 1 if tb else ldb, beta, c, ldc)
        else:
            _gemv(c'T', k, m, alpha, a, lda, b, 1 if tb else ldb, beta, c, ldc)
        return
    if real_t is float:
        sgemm(&op_b, &op_a, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc)
    else:
        dgemm(&op_b, &op_a, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc)


def gemm(const real_t[:, ::1] a, const real_t[:, ::1] b, real_t[:, ::1] c, bint trans_a=False,
         bint trans_b=False, double alpha=1.0, double beta=0.0):
    """``c = alpha * op(a) @ op(b) + beta * c`` on C-contiguous 2-D arrays, in place.

    ``op(x)`` is ``x.T`` when the matching ``trans_*`` flag is set. All three arrays share
    one dtype (float32 or float64); ``c`` must be ``(m, n)`` where ``op(a)`` is ``(m, k)``
    and ``op(b)`` is ``(k, n)``.
    """
    cdef int m = a.shape[1] if trans_a else a.shape[0]
    cdef int k = a.shape[0] if trans_a else a.shape[1]
    cdef int kb = b.shape[1] if trans_b else b.shape[0]
    cdef int n = b.shape[0] if trans_b else b.shape[1]
    if k != kb or c.shape[0] != m or c.shape[1] != n:
        raise ValueError(f"gemm: op(a) is ({m}, {k}), op(b) is ({kb}, {n}), c is "
                         f"({c.shape[0]}, {c.shape[1]}): shapes do not match")
    if m == 0 or n == 0:
        return
    if k == 0:
        # BLAS leaves c untouched when k == 0 only if beta == 1; be explicit.
        for i in range(m):
            for j in range(n):
                c[i, j] = <real_t>(beta * c[i, j])
        return
    # Leading dimensions are the row lengths (at least 1 for BLAS's argument checks).
    cdef int lda = max(a.shape[1], 1)
    cdef int ldb = max(b.shape[1], 1)
    cdef int ldc = max(c.shape[1], 1)
    with nogil:
        _gemm_rm(trans_a, trans_b, m, n, k, <real_t>alpha, &a[0, 0], lda, &b[0, 0], ldb,
                 <real_t>beta, &c[0, 0], ldc)


# A vector times a matrix of at least this many rows per thread (a classifier layer) is
# split by rows instead of columns (see _gemv_split_rows).
_GEMV_MIN_ROWS = 64


cdef void _gemv_split_rows(const real_t[:, ::1] a, const real_t[:, ::1] b, real_t[:, ::1] c,
                           bint trans_a, real_t alpha, real_t beta, int nthreads):
    """``c (1 x n) = alpha * op(a) @ b + beta * c`` with ``b`` row-major ``(k, n)``, the
    threads taking contiguous blocks of b's rows (each a single-threaded BLAS gemv), then
    the partial rows summed into ``c``. The weight streams from memory: split by columns,
    each thread read every row's half, a gap after each piece, which the prefetchers
    follow worse (the 1280 x 1000 and 512 x 1000 classifiers of MobileNetV2 and ResNet18,
    weights coming from memory: 90 -> 78 and 57 -> 44 us at 2 threads). The sums are
    grouped by the threads' row blocks."""
    cdef int k = b.shape[0], n = b.shape[1], ldb = max(n, 1)
    cdef int inca = a.shape[1] if trans_a else 1  # stride between op(a)'s elements
    dtype = np.float32 if real_t is float else np.float64
    partial_arr = np.empty((nthreads - 1, n), dtype)
    cdef real_t[:, ::1] partial = partial_arr
    cdef int t, k0, k1, j
    with nogil:
        for t in prange(nthreads, num_threads=nthreads, schedule="static"):
            k0 = <int>(<long long>k * t // nthreads)
            k1 = <int>(<long long>k * (t + 1) // nthreads)
            if t == 0:
                _gemv(c'N', n, k1 - k0, alpha, &b[k0, 0], ldb, &a[0, 0] + k0 * inca, inca,
                      beta, &c[0, 0], 1)
            else:
                _gemv(c'N', n, k1 - k0, alpha, &b[k0, 0], ldb, &a[0, 0] + k0 * inca, inca,
                      0, &partial[t - 1, 0], 1)
        for t in range(nthreads - 1):
            for j in range(n):
                c[0, j] += partial[t, j]


def gemm_split(const real_t[:, ::1] a, const real_t[:, ::1] b, real_t[:, ::1] c,
               bint trans_a=False, bint trans_b=False, double alpha=1.0, double beta=0.0,
               int nthreads=1):
    """:func:`gemm`, with the columns of ``c`` split into ``nthreads`` blocks computed in
    parallel (OpenMP), each by a single-threaded BLAS call.

    One threading runtime (ours) for every kernel: BLAS's own thread pool, spinning
    between calls, fights OpenMP's for the cores. The caller keeps BLAS at one thread
    while this runs (``nn_common.blas_single_thread``).
    """
    cdef int m = a.shape[1] if trans_a else a.shape[0]
    cdef int k = a.shape[0] if trans_a else a.shape[1]
    cdef int kb = b.shape[1] if trans_b else b.shape[0]
    cdef int n = b.shape[0] if trans_b else b.shape[1]
    if k != kb or c.shape[0] != m or c.shape[1] != n or nthreads < 1:
        raise ValueError(f"gemm: op(a) is ({m}, {k}), op(b) is ({kb}, {n}), c is "
                         f"({c.shape[0]}, {c.shape[1]}): shapes do not match")
    if nthreads == 1 or n < 32 or k == 0 or m == 0:
        gemm(a, b, c, trans_a, trans_b, alpha, beta)
        return
    cdef int lda = max(a.shape[1], 1)
    cdef int ldb = max(b.shape[1], 1)
    cdef int ldc = max(c.shape[1], 1)
    if m == 1 and not trans_b and k >= nthreads * _GEMV_MIN_ROWS:
        _gemv_split_rows(a, b, c, trans_a, <real_t>alpha, <real_t>beta, nthreads)
        return
    # Column blocks of a multiple of 16 (one AVX-512 vector of floats).
    cdef int chunk = ((n + nthreads - 1) // nthreads + 15) // 16 * 16
    cdef int blocks = (n + chunk - 1) // chunk
    cdef int t, j0, width
    with nogil:
        for t in prange(blocks, num_threads=nthreads, schedule="static"):
            j0 = t * chunk
            width = n - j0 if n - j0 < chunk else chunk
            if trans_b:
                _gemm_rm(trans_a, trans_b, m, width, k, <real_t>alpha, &a[0, 0], lda,
                         &b[j0, 0], ldb, <real_t>beta, &c[0, j0], ldc)
            else:
                _gemm_rm(trans_a, trans_b, m, width, k, <real_t>alpha, &a[0, 0], lda,
                         &b[0, j0], ldb, <real_t>beta, &c[0, j0], ldc)


def gemm_indexed(const real_t[:, :, ::1] a, const real_t[:, :, ::1] b, real_t[:, :, ::1] c,
                 const long[::1] ia, const long[::1] ib, bint trans_a=False,
                 bint trans_b=False, int nthreads=1):
    """``c[i] = op(a[ia[i]]) @ op(b[ib[i]])`` for every ``i`` (batched matmul with
    broadcast batch dimensions expressed as index maps, so no operand is copied).

    One product per OpenMP thread at a time, each a single-threaded BLAS call; a single
    product is split by columns instead (:func:`gemm_split`). Every index is checked
    against the operands' batch sizes before any product runs.
    """
    cdef Py_ssize_t batch = c.shape[0], i
    cdef int m = a.shape[2] if trans_a else a.shape[1]
    cdef int k = a.shape[1] if trans_a else a.shape[2]
    cdef int kb = b.shape[2] if trans_b else b.shape[1]
    cdef int n = b.shape[1] if trans_b else b.shape[2]
    if nthreads < 1:
        raise ValueError("gemm_indexed: nthreads must be >= 1")
    check_batched_product("gemm_indexed", a.shape[0], b.shape[0], batch, m, k, kb, n,
                          c.shape[1], c.shape[2], ia, ib)
    if batch == 0 or m == 0 or n == 0:
        return
    cdef Py_ssize_t p, q
    if k == 0:
        for i in range(batch):
            for p in range(m):
                for q in range(n):
                    c[i, p, q] = 0
        return
    if batch == 1:
        gemm_split(a[ia[0]], b[ib[0]], c[0], trans_a, trans_b, 1.0, 0.0, nthreads)
        return
    cdef int lda = max(a.shape[2], 1), ldb = max(b.shape[2], 1), ldc = max(n, 1)
    with nogil:
        for i in prange(batch, num_threads=nthreads, schedule="dynamic"):
            _gemm_rm(trans_a, trans_b, m, n, k, <real_t>1.0, &a[ia[i], 0, 0], lda,
                     &b[ib[i], 0, 0], ldb, <real_t>0.0, &c[i, 0, 0], ldc)
