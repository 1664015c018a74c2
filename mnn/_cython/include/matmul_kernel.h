/* float32 matrix product C (M x N) = A (M x K) @ B (K x N), all row-major, for
   matmul.pyx. The tile is AVX-512 intrinsics where the build has them (MNN_MM_AVX512);
   otherwise plain C, correct but slower than BLAS, which ops/linalg.py then keeps.

   B is packed once (mnn_mm_pack_b_strip, or mnn_mm_pack_bt_strip from B stored
   transposed, strip by strip) into
   strips of MNN_MM_NR columns, each strip K rows deep and contiguous (columns past N
   zero): a constant weight is packed once and kept (ops/linalg.py caches it), as
   onnxruntime prepacks a MatMul's constant B. A is read in place (stored as M x K or,
   transposed, as K x M), MNN_MM_MR rows at a time, one value of each row broadcast per
   step: no copy of A per product.

   The register tile, 8 rows x 32 columns in 16 zmm accumulators, is the one of
   sgemm_kernel.h's packed GEMM for convolutions; with both operands in cache it runs at
   58 GMAC/s per core on the Zen 4 machine, the core's peak. It is written again here
   rather than shared: that tile reads packed A through one pointer at fixed offsets,
   this one eight rows in place (or a transposed A), and its epilogue has no bias or
   clamp; folding both into sgemm_kernel.h's tile would put the in-place addressing
   into the conv kernels' hottest loop, and their AVX2 and portable tiles would have to
   grow it too. Whole products with that
   GEMM (A packed per product, B per block) reached 51-54: what is around the tile sets
   the speed, hence A in place and B packed once (54-57 here, as onnxruntime).

   Blocking: a block of MNN_MM_NS strips (256 columns) by MNN_MM_KC rows of packed B
   (256 KB) stays in L2 while every 8-row slab of A passes over it; a slab's KC values
   per row (8 KB) stay in L1 across the block's strips. Partial sums of the later K
   blocks are added to C.

   Bounds: rows of A past M are never read (the last slab's missing rows repeat its
   last row, and are not stored); C is stored under masks to N columns and M rows. */
#ifndef MNN_MATMUL_KERNEL_H
#define MNN_MATMUL_KERNEL_H
#include <stddef.h>
#ifdef __AVX512F__
#include <immintrin.h>
#define MNN_MM_AVX512 1
#else
#define MNN_MM_AVX512 0
#endif

#define MNN_MM_MR 8
#define MNN_MM_NR 32
#define MNN_MM_KC 256
#define MNN_MM_NS 8

/* Floats of B packed for K rows and N columns. */
static inline ptrdiff_t mnn_mm_packed_b_size(ptrdiff_t K, ptrdiff_t N) {
    return (N + MNN_MM_NR - 1) / MNN_MM_NR * MNN_MM_NR * K;
}

/* Strip j of B (K x N, row stride ldb) packed: element (k, j*NR + c) at
   pb[(j*K + k)*NR + c], zero for columns past N. (The strips are independent: the
   threads pack them in parallel.) */
static void mnn_mm_pack_b_strip(ptrdiff_t K, ptrdiff_t N, const float *B, ptrdiff_t ldb,
                                float *pb, ptrdiff_t j) {
    ptrdiff_t c0 = j * MNN_MM_NR;
    ptrdiff_t w = N - c0 < MNN_MM_NR ? N - c0 : MNN_MM_NR;
    float *dst = pb + j * K * MNN_MM_NR;
    for (ptrdiff_t k = 0; k < K; k++) {
        const float *src = B + k * ldb + c0;
        for (ptrdiff_t c = 0; c < w; c++) dst[k * MNN_MM_NR + c] = src[c];
        for (ptrdiff_t c = w; c < MNN_MM_NR; c++) dst[k * MNN_MM_NR + c] = 0.0f;
    }
}

#if MNN_MM_AVX512
/* dst[c*ldd + r] = src[r*lds + c] for a 16 x 16 block whose source rows from `rows`
   on are zero (not read): 16 row loads, then unpacks and lane shuffles (the usual four
   stages), 16 row stores. */
static inline void mnn_mm_transpose16(const float *src, ptrdiff_t lds, int rows,
                                      float *dst, ptrdiff_t ldd) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++)
        r[i] = i < rows ? _mm512_loadu_ps(src + i * lds) : _mm512_setzero_ps();
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 16; i += 8) {
        for (int j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xDD);
        }
    }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#endif

/* mnn_mm_pack_b_strip of B = Bt^T, from Bt (N x K, row stride ldbt): a weight stored
   as (out, in), or the right operand of a product with transpose_b. With AVX-512 blocks
   of 16 rows of B are transposed 16 x 16 in registers (element by element, the strided
   writes made it 2.7x pack_b's time); the last K % 16 rows, and builds without,
   element by element. */
static void mnn_mm_pack_bt_strip(ptrdiff_t K, ptrdiff_t N, const float *Bt, ptrdiff_t ldbt,
                                 float *pb, ptrdiff_t j) {
    ptrdiff_t c0 = j * MNN_MM_NR;
    ptrdiff_t w = N - c0 < MNN_MM_NR ? N - c0 : MNN_MM_NR;
    float *dst = pb + j * K * MNN_MM_NR;
    ptrdiff_t kdone = 0;
#if MNN_MM_AVX512
    kdone = K / 16 * 16;
    for (ptrdiff_t k0 = 0; k0 < kdone; k0 += 16)
        for (int h = 0; h < MNN_MM_NR / 16; h++) {
            /* this half's columns of B that exist (the rest are zero) */
            ptrdiff_t cols = w - h * 16 < 0 ? 0 : (w - h * 16 > 16 ? 16 : w - h * 16);
            mnn_mm_transpose16(Bt + (c0 + h * 16) * ldbt + k0, ldbt, (int)cols,
                               dst + k0 * MNN_MM_NR + h * 16, MNN_MM_NR);
        }
#endif
    for (ptrdiff_t c = 0; c < MNN_MM_NR; c++) {
        const float *src = Bt + (c0 + c) * ldbt;
        for (ptrdiff_t k = kdone; k < K; k++)
            dst[k * MNN_MM_NR + c] = c < w ? src[k] : 0.0f;
    }
}

/* C[0:rows, 0:cols] (row stride ldc) = (or += when accumulate) the product of the
   rows' kc values of A and the packed strip pb (kc x NR). Element (r, k) of A is at
   a[r*lda + k], or with ta (A stored transposed, K x M) at a[k*lda + r]. */
#if MNN_MM_AVX512
static inline __attribute__((always_inline)) void mnn_mm_tile_core(
        const int ta, ptrdiff_t kc, const float *a, ptrdiff_t lda, int rows,
        const float *pb, float *C, ptrdiff_t ldc, int cols, int accumulate) {
    const float *ar[MNN_MM_MR];
    __m512 c0[MNN_MM_MR], c1[MNN_MM_MR];
#pragma GCC unroll 8
    for (int r = 0; r < MNN_MM_MR; r++) {
        int re = r < rows ? r : rows - 1;  /* rows past the slab's end repeat its last */
        ar[r] = ta ? a + re : a + re * lda;
        c0[r] = _mm512_setzero_ps();
        c1[r] = _mm512_setzero_ps();
    }
    for (ptrdiff_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(pb);
        __m512 b1 = _mm512_loadu_ps(pb + 16);
#pragma GCC unroll 8
        for (int r = 0; r < MNN_MM_MR; r++) {
            __m512 v = _mm512_set1_ps(ta ? ar[r][k * lda] : ar[r][k]);
            c0[r] = _mm512_fmadd_ps(v, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(v, b1, c1[r]);
        }
        pb += MNN_MM_NR;
    }
    __mmask16 m0 = cols >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cols) - 1u);
    __mmask16 m1 = cols >= 32 ? (__mmask16)0xFFFF
                              : (cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1u) : 0);
#pragma GCC unroll 8
    for (int r = 0; r < MNN_MM_MR; r++) {
        if (r >= rows) break;
        float *c = C + r * ldc;
        __m512 x0 = c0[r], x1 = c1[r];
        if (accumulate) {
            x0 = _mm512_add_ps(x0, _mm512_maskz_loadu_ps(m0, c));
            x1 = _mm512_add_ps(x1, _mm512_maskz_loadu_ps(m1, c + 16));
        }
        _mm512_mask_storeu_ps(c, m0, x0);
        _mm512_mask_storeu_ps(c + 16, m1, x1);
    }
}
#else
static inline void mnn_mm_tile_core(const int ta, ptrdiff_t kc, const float *a,
                                    ptrdiff_t lda, int rows, const float *pb, float *C,
                                    ptrdiff_t ldc, int cols, int accumulate) {
    float acc[MNN_MM_MR][MNN_MM_NR];
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < MNN_MM_NR; j++) acc[r][j] = 0.0f;
    for (ptrdiff_t k = 0; k < kc; k++) {
        for (int r = 0; r < rows; r++) {
            float v = ta ? a[k * lda + r] : a[r * lda + k];
            for (int j = 0; j < MNN_MM_NR; j++) acc[r][j] += v * pb[j];
        }
        pb += MNN_MM_NR;
    }
    for (int r = 0; r < rows; r++) {
        float *c = C + r * ldc;
        for (int j = 0; j < cols; j++) c[j] = accumulate ? c[j] + acc[r][j] : acc[r][j];
    }
}
#endif

/* Rows [r0, r1) and strips [j0, j1) of C = A B, B packed by mnn_mm_pack_b (K deep, N
   columns), A as in mnn_mm_tile_core (ta: stored transposed). */
static inline __attribute__((always_inline)) void mnn_mm_block_core(
        const int ta, ptrdiff_t K, ptrdiff_t N, const float *A, ptrdiff_t lda,
        const float *pb, float *C, ptrdiff_t ldc, ptrdiff_t r0, ptrdiff_t r1, ptrdiff_t j0,
        ptrdiff_t j1) {
    for (ptrdiff_t jb = j0; jb < j1; jb += MNN_MM_NS) {
        ptrdiff_t je = jb + MNN_MM_NS < j1 ? jb + MNN_MM_NS : j1;
        for (ptrdiff_t k0 = 0; k0 < K; k0 += MNN_MM_KC) {
            ptrdiff_t kc = K - k0 < MNN_MM_KC ? K - k0 : MNN_MM_KC;
            for (ptrdiff_t r = r0; r < r1; r += MNN_MM_MR) {
                int rows = (int)(r1 - r < MNN_MM_MR ? r1 - r : MNN_MM_MR);
                const float *a = ta ? A + k0 * lda + r : A + r * lda + k0;
                for (ptrdiff_t j = jb; j < je; j++) {
                    ptrdiff_t cols = N - j * MNN_MM_NR;
                    if (cols > MNN_MM_NR) cols = MNN_MM_NR;
                    mnn_mm_tile_core(ta, kc, a, lda, rows, pb + (j * K + k0) * MNN_MM_NR,
                                     C + r * ldc + j * MNN_MM_NR, ldc, (int)cols, k0 > 0);
                }
            }
        }
    }
}

static void mnn_mm_block(int ta, ptrdiff_t K, ptrdiff_t N, const float *A, ptrdiff_t lda,
                         const float *pb, float *C, ptrdiff_t ldc, ptrdiff_t r0,
                         ptrdiff_t r1, ptrdiff_t j0, ptrdiff_t j1) {
    if (ta)
        mnn_mm_block_core(1, K, N, A, lda, pb, C, ldc, r0, r1, j0, j1);
    else
        mnn_mm_block_core(0, K, N, A, lda, pb, C, ldc, r0, r1, j0, j1);
}

#endif
