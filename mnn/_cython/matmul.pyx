# cython: language_level=3
"""float32 matrix products C = A @ B with B packed once (include/matmul_kernel.h).

The kernel is fast with AVX-512 (:func:`fast`); ``ops/linalg.py`` calls it then for the
float32 products (single and batched) of the shapes where it beats BLAS, and
``ops/nn_conv.py`` for a conv's weight gradient; BLAS otherwise. One product's threads
split its columns by 32-column strips when there are at least two strips per thread,
else its rows by 8-row slabs; a batch's threads take whole products.
"""
cimport openmp
import numpy as np
from cython.parallel cimport prange

from mnn._cython.batch_maps cimport check_batched_product

cdef extern from "matmul_kernel.h":
    int MNN_MM_AVX512
    int MNN_MM_MR
    int MNN_MM_NR
    Py_ssize_t mnn_mm_packed_b_size(Py_ssize_t K, Py_ssize_t N) nogil
    void mnn_mm_pack_b_strip(Py_ssize_t K, Py_ssize_t N, const float *B, Py_ssize_t ldb,
                             float *pb, Py_ssize_t j) nogil
    void mnn_mm_pack_bt_strip(Py_ssize_t K, Py_ssize_t N, const float *Bt,
                              Py_ssize_t ldbt, float *pb, Py_ssize_t j) nogil
    void mnn_mm_block(int ta, Py_ssize_t K, Py_ssize_t N, const float *A, Py_ssize_t lda,
                      const float *pb, float *C, Py_ssize_t ldc, Py_ssize_t r0,
                      Py_ssize_t r1, Py_ssize_t j0, Py_ssize_t j1) nogil


# Columns per packed strip of B: a product's last strip is padded up to it.
STRIP = MNN_MM_NR


def fast():
    """Whether this build has the AVX-512 tile (without it the kernel is plain C, slower
    than BLAS)."""
    return bool(MNN_MM_AVX512)


cdef class PackedB:
    """A right operand packed by :func:`pack_b`: ``k x n``, its strips in ``data``."""
    cdef readonly Py_ssize_t k, n
    cdef readonly object data

    def __init__(self, Py_ssize_t k, Py_ssize_t n, data):
        self.k, self.n, self.data = k, n, data

    @property
    def nbytes(self):
        return self.data.nbytes


def pack_b(const float[:, ::1] b, bint transposed=False, int nthreads=1):
    """``B`` packed for :func:`gemm` (strips of 32 columns, split over ``nthreads``):
    ``B = b`` (``K x N``, float32), or with ``transposed`` ``B = b.T`` (``b`` is
    ``N x K``)."""
    cdef Py_ssize_t K = b.shape[1] if transposed else b.shape[0]
    cdef Py_ssize_t N = b.shape[0] if transposed else b.shape[1]
    if nthreads < 1:
        raise ValueError("matmul kernel: nthreads must be >= 1")
    out = np.empty(max(mnn_mm_packed_b_size(K, N), 1), np.float32)
    cdef float[::1] pb = out
    cdef Py_ssize_t strips = (N + MNN_MM_NR - 1) // MNN_MM_NR, j
    if K > 0 and N > 0:
        with nogil:
            for j in prange(strips, num_threads=nthreads, schedule="static"):
                if transposed:
                    mnn_mm_pack_bt_strip(K, N, &b[0, 0], K, &pb[0], j)
                else:
                    mnn_mm_pack_b_strip(K, N, &b[0, 0], N, &pb[0], j)
    return PackedB(K, N, out)


def gemm(const float[:, ::1] a, PackedB packed, float[:, ::1] c, bint transpose_a=False,
         int nthreads=1):
    """``c = A @ B`` where ``packed = pack_b(...)`` of ``B`` (``K x N``) and ``A`` is
    ``a`` (``M x K``) or with ``transpose_a`` ``a.T`` (``a`` is ``K x M``); ``c``
    (``M x N``) is overwritten."""
    cdef Py_ssize_t M = a.shape[1] if transpose_a else a.shape[0]
    cdef Py_ssize_t K = a.shape[0] if transpose_a else a.shape[1]
    cdef Py_ssize_t n = packed.n
    cdef const float[::1] pb = packed.data
    if packed.k != K or pb.shape[0] != max(mnn_mm_packed_b_size(K, n), 1):
        raise ValueError(f"matmul kernel: packed B is ({packed.k}, {n}), A has {K} "
                         "columns")
    if c.shape[0] != M or c.shape[1] != n:
        raise ValueError(f"matmul kernel: output ({c.shape[0]}, {c.shape[1]}) is not "
                         f"({M}, {n})")
    if nthreads < 1:
        raise ValueError("matmul kernel: nthreads must be >= 1")
    if M == 0 or n == 0:
        return
    if K == 0:
        np.asarray(c)[...] = 0
        return
    cdef Py_ssize_t strips = (n + MNN_MM_NR - 1) // MNN_MM_NR
    cdef Py_ssize_t slabs = (M + MNN_MM_MR - 1) // MNN_MM_MR
    cdef bint by_cols = strips >= 2 * nthreads or slabs < nthreads
    cdef Py_ssize_t units = strips if by_cols else slabs
    cdef Py_ssize_t parts = nthreads if nthreads < units else units
    cdef Py_ssize_t per = (units + parts - 1) // parts
    cdef Py_ssize_t lda = a.shape[1]
    cdef int ta = transpose_a
    cdef Py_ssize_t t, u0, u1
    with nogil:
        for t in prange(parts, num_threads=parts, schedule="static"):
            u0 = t * per
            u1 = u0 + per if u0 + per < units else units
            if u0 < u1:
                if by_cols:
                    mnn_mm_block(ta, K, n, &a[0, 0], lda, &pb[0], &c[0, 0], n, 0, M, u0, u1)
                else:
                    mnn_mm_block(ta, K, n, &a[0, 0], lda, &pb[0], &c[0, 0], n,
                                 u0 * MNN_MM_MR, min(M, u1 * MNN_MM_MR), 0, strips)


def gemm_batch(const float[:, :, ::1] a, const float[:, :, ::1] b, float[:, :, ::1] c,
               const long[::1] ia, const long[::1] ib, bint transpose_a=False,
               bint transpose_b=False, int nthreads=1):
    """``c[i] = op(a[ia[i]]) @ op(b[ib[i]])`` for every ``i`` (a batched matmul, its
    broadcast batch dimensions as index maps, as ``gemm.gemm_indexed``). The threads take
    whole products; each packs its product's B into its own scratch, then multiplies.
    Every index is checked against the operands' batch sizes before any product runs."""
    cdef Py_ssize_t batch = c.shape[0], i
    cdef Py_ssize_t M = a.shape[2] if transpose_a else a.shape[1]
    cdef Py_ssize_t K = a.shape[1] if transpose_a else a.shape[2]
    cdef Py_ssize_t KB = b.shape[2] if transpose_b else b.shape[1]
    cdef Py_ssize_t N = b.shape[1] if transpose_b else b.shape[2]
    if nthreads < 1:
        raise ValueError("matmul kernel: nthreads must be >= 1")
    check_batched_product("matmul kernel", a.shape[0], b.shape[0], batch, M, K, KB, N,
                          c.shape[1], c.shape[2], ia, ib)
    if batch == 0 or M == 0 or N == 0:
        return
    if K == 0:
        np.asarray(c)[...] = 0
        return
    cdef Py_ssize_t strips = (N + MNN_MM_NR - 1) // MNN_MM_NR, j
    cdef Py_ssize_t size = mnn_mm_packed_b_size(K, N)
    cdef int parts = nthreads if nthreads < batch else <int>batch
    scratch = np.empty((parts, size), np.float32)
    cdef float[:, ::1] pb = scratch
    cdef Py_ssize_t lda = a.shape[2], ldb = b.shape[2]
    cdef int ta = transpose_a, tid
    cdef float* own
    with nogil:
        for i in prange(batch, num_threads=parts, schedule="static"):
            tid = openmp.omp_get_thread_num()
            own = &pb[tid, 0]
            for j in range(strips):
                if transpose_b:
                    mnn_mm_pack_bt_strip(K, N, &b[ib[i], 0, 0], ldb, own, j)
                else:
                    mnn_mm_pack_b_strip(K, N, &b[ib[i], 0, 0], ldb, own, j)
            mnn_mm_block(ta, K, N, &a[ia[i], 0, 0], lda, own, &c[i, 0, 0], N, 0, M, 0,
                         strips)
