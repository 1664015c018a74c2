/* Packed float32 GEMM for convolution: C (M x N) = A (M x K) @ B (K x N), then
   C = clamp(C + bias[row], lo, hi), all row-major.

   A is the weight, packed once per weight (mnn_sg_pack_a) into K blocks of slabs of
   MNN_SG_MR rows (rows past M are zero). B is the
   activation (the input itself for 1x1 convolution, the im2col matrix otherwise), packed
   per call in blocks of MNN_SG_KC rows by MNN_SG_NR columns (zero past N) so the
   micro-kernel reads both operands sequentially. The micro-kernel keeps an MR x NR
   tile of C in registers over a K block; the epilogue adds the previous K blocks'
   partial sums, and after the last block the bias and clamp, while the tile is still in
   registers.

   The register tile is chosen at compile time from the instruction set the build
   targets (setup.py builds with -march=native): AVX-512 8x32 (16 zmm accumulators),
   AVX2+FMA 6x16 (12 ymm accumulators), else a portable 4x8 in plain C.

   Bounds: every load and store of A, B and C is limited by the M, N, K, rows and
   columns passed in; the caller (sgemm.pyx) checks them against the array shapes. */
#ifndef MNN_SGEMM_KERNEL_H
#define MNN_SGEMM_KERNEL_H
#include <stddef.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define MNN_SG_MR 8
#define MNN_SG_NR 32
#define MNN_SG_ISA "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define MNN_SG_MR 6
#define MNN_SG_NR 16
#define MNN_SG_ISA "avx2"
#else
#define MNN_SG_MR 4
#define MNN_SG_NR 8
#define MNN_SG_ISA "scalar"
#endif
/* K block: a KC x NR strip of packed B is 32 KB (AVX-512), held in L1 across the
   slabs of A. */
#define MNN_SG_KC 256
/* Columns packed at once: NC x KC of B (256 KB) stays in L2 while every A slab passes. */
#define MNN_SG_NC 256

static const int mnn_sg_mr = MNN_SG_MR;
static const int mnn_sg_nr = MNN_SG_NR;
static const int mnn_sg_kc = MNN_SG_KC;
static const int mnn_sg_nc = MNN_SG_NC;
static const char *mnn_sg_isa = MNN_SG_ISA;

/* Size in floats of the packed A of an M x K matrix. */
static inline ptrdiff_t mnn_sg_packed_a_size(ptrdiff_t M, ptrdiff_t K) {
    return (M + MNN_SG_MR - 1) / MNN_SG_MR * MNN_SG_MR * K;
}

/* pa <- A (M x K, row stride lda): K blocks of MNN_SG_KC, inside each block MR-row
   slabs one after the other, k-major inside a slab. Element (s*MR + r, k0 + kk) of the
   block starting at k0 (kc rows deep) is at pa[k0*Mp + (s*kc + kk)*MR + r], Mp = slabs*MR:
   one K block of every slab is one contiguous run, read in order by mnn_sg_block. */
static void mnn_sg_pack_a(ptrdiff_t M, ptrdiff_t K, const float *A, ptrdiff_t lda,
                          float *pa) {
    ptrdiff_t slabs = (M + MNN_SG_MR - 1) / MNN_SG_MR;
    ptrdiff_t Mp = slabs * MNN_SG_MR;
    for (ptrdiff_t k0 = 0; k0 < K; k0 += MNN_SG_KC) {
        ptrdiff_t kc = K - k0 < MNN_SG_KC ? K - k0 : MNN_SG_KC;
        for (ptrdiff_t s = 0; s < slabs; s++) {
            float *dst = pa + k0 * Mp + s * kc * MNN_SG_MR;
            for (int r = 0; r < MNN_SG_MR; r++) {
                ptrdiff_t row = s * MNN_SG_MR + r;
                if (row < M) {
                    const float *src = A + row * lda + k0;
                    for (ptrdiff_t k = 0; k < kc; k++) dst[k * MNN_SG_MR + r] = src[k];
                } else {
                    for (ptrdiff_t k = 0; k < kc; k++) dst[k * MNN_SG_MR + r] = 0.0f;
                }
            }
        }
    }
}

/* pb <- B[0:kc, 0:ncols] (row stride ldb) as NR-wide strips, strip j at pb + j*kc*NR,
   columns past ncols zero. */
static void mnn_sg_pack_b(ptrdiff_t kc, ptrdiff_t ncols, const float *B, ptrdiff_t ldb,
                          float *pb) {
    ptrdiff_t strips = (ncols + MNN_SG_NR - 1) / MNN_SG_NR;
    for (ptrdiff_t j = 0; j < strips; j++) {
        ptrdiff_t c0 = j * MNN_SG_NR;
        ptrdiff_t w = ncols - c0 < MNN_SG_NR ? ncols - c0 : MNN_SG_NR;
        float *dst = pb + j * kc * MNN_SG_NR;
        const float *src = B + c0;
        if (w == MNN_SG_NR) {
            for (ptrdiff_t k = 0; k < kc; k++) {
                for (int c = 0; c < MNN_SG_NR; c++) dst[k * MNN_SG_NR + c] = src[k * ldb + c];
            }
        } else {
            for (ptrdiff_t k = 0; k < kc; k++) {
                for (ptrdiff_t c = 0; c < w; c++) dst[k * MNN_SG_NR + c] = src[k * ldb + c];
                for (ptrdiff_t c = w; c < MNN_SG_NR; c++) dst[k * MNN_SG_NR + c] = 0.0f;
            }
        }
    }
}

/* One MR x NR tile: acc = pa (kc x MR) ^T pb (kc x NR, row stride ldp: NR for a packed
   strip, B's own row stride for a strip read in place); then the first `rows` rows and
   `cols` columns of C (row stride ldc) get acc (+ old C when accumulate) and, when
   last, + bias[r] clamped to [lo, hi]. mnn_sg_tile (packed B) and mnn_sg_tile_strided
   read all NR columns of every row: a strip read in place must be whole.
   mnn_sg_tile_prefetch also asks, at each step, for the B row pf_off floats ahead (a B
   panel that streams in from memory next). */
#if defined(__AVX512F__)
static inline __attribute__((always_inline)) void mnn_sg_tile_core(
        const int PF, ptrdiff_t pf_off, ptrdiff_t kc, const float *pa, const float *pb,
        ptrdiff_t ldp, float *C, ptrdiff_t ldc, int rows, int cols, int accumulate, int last,
        const float *bias, float lo, float hi) {
    __m512 a0[MNN_SG_MR], a1[MNN_SG_MR];
#pragma GCC unroll 8
    for (int r = 0; r < MNN_SG_MR; r++) {
        a0[r] = _mm512_setzero_ps();
        a1[r] = _mm512_setzero_ps();
    }
    for (ptrdiff_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(pb);
        __m512 b1 = _mm512_loadu_ps(pb + 16);
        if (PF) {
            _mm_prefetch((const char *)(pb + pf_off), _MM_HINT_T1);
            _mm_prefetch((const char *)(pb + pf_off + 16), _MM_HINT_T1);
        }
#pragma GCC unroll 8
        for (int r = 0; r < MNN_SG_MR; r++) {
            __m512 a = _mm512_set1_ps(pa[r]);
            a0[r] = _mm512_fmadd_ps(a, b0, a0[r]);
            a1[r] = _mm512_fmadd_ps(a, b1, a1[r]);
        }
        pa += MNN_SG_MR;
        pb += ldp;
    }
    __mmask16 m0 = cols >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cols) - 1u);
    __mmask16 m1 = cols >= 32 ? (__mmask16)0xFFFF
                              : (cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1u) : 0);
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
#pragma GCC unroll 8
    for (int r = 0; r < MNN_SG_MR; r++) {
        if (r >= rows) break;
        float *c = C + r * ldc;
        __m512 x0 = a0[r], x1 = a1[r];
        if (accumulate) {
            x0 = _mm512_add_ps(x0, _mm512_maskz_loadu_ps(m0, c));
            x1 = _mm512_add_ps(x1, _mm512_maskz_loadu_ps(m1, c + 16));
        }
        if (last) {
            __m512 b = _mm512_set1_ps(bias[r]);
            /* the bounds first: max and min return their second operand when one is
               NaN, so a NaN passes through the clamp (as torch's clamp and relu) */
            x0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, _mm512_add_ps(x0, b)));
            x1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, _mm512_add_ps(x1, b)));
        }
        _mm512_mask_storeu_ps(c, m0, x0);
        _mm512_mask_storeu_ps(c + 16, m1, x1);
    }
}

static inline void mnn_sg_tile_strided(ptrdiff_t kc, const float *pa, const float *pb,
                                       ptrdiff_t ldp, float *C, ptrdiff_t ldc, int rows,
                                       int cols, int accumulate, int last, const float *bias,
                                       float lo, float hi) {
    mnn_sg_tile_core(0, 0, kc, pa, pb, ldp, C, ldc, rows, cols, accumulate, last, bias, lo,
                     hi);
}

static inline void mnn_sg_tile(ptrdiff_t kc, const float *pa, const float *pb, float *C,
                               ptrdiff_t ldc, int rows, int cols, int accumulate, int last,
                               const float *bias, float lo, float hi) {
    mnn_sg_tile_core(0, 0, kc, pa, pb, MNN_SG_NR, C, ldc, rows, cols, accumulate, last, bias,
                     lo, hi);
}

static inline void mnn_sg_tile_prefetch(ptrdiff_t pf_off, ptrdiff_t kc, const float *pa,
                                        const float *pb, float *C, ptrdiff_t ldc, int rows,
                                        int cols, int accumulate, int last,
                                        const float *bias, float lo, float hi) {
    mnn_sg_tile_core(1, pf_off, kc, pa, pb, MNN_SG_NR, C, ldc, rows, cols, accumulate, last,
                     bias, lo, hi);
}
#else
static inline void mnn_sg_store(const float *acc, float *C, ptrdiff_t ldc, int rows,
                                int cols, int accumulate, int last, const float *bias,
                                float lo, float hi) {
    /* acc is MR x NR row-major; plain C (the compiler vectorizes the column loop). */
    for (int r = 0; r < rows; r++) {
        float *c = C + r * ldc;
        const float *x = acc + r * MNN_SG_NR;
        float b = last ? bias[r] : 0.0f;
        for (int j = 0; j < cols; j++) {
            float v = x[j];
            if (accumulate) v += c[j];
            if (last) {
                v += b;
                v = v < lo ? lo : v;
                v = v > hi ? hi : v;
            }
            c[j] = v;
        }
    }
}
#if defined(__AVX2__) && defined(__FMA__)
static inline void mnn_sg_tile_strided(ptrdiff_t kc, const float *pa, const float *pb,
                                       ptrdiff_t ldp, float *C, ptrdiff_t ldc, int rows,
                                       int cols, int accumulate, int last, const float *bias,
                                       float lo, float hi) {
    __m256 a0[MNN_SG_MR], a1[MNN_SG_MR];
    float acc[MNN_SG_MR * MNN_SG_NR];
#pragma GCC unroll 6
    for (int r = 0; r < MNN_SG_MR; r++) {
        a0[r] = _mm256_setzero_ps();
        a1[r] = _mm256_setzero_ps();
    }
    for (ptrdiff_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(pb);
        __m256 b1 = _mm256_loadu_ps(pb + 8);
#pragma GCC unroll 6
        for (int r = 0; r < MNN_SG_MR; r++) {
            __m256 a = _mm256_broadcast_ss(pa + r);
            a0[r] = _mm256_fmadd_ps(a, b0, a0[r]);
            a1[r] = _mm256_fmadd_ps(a, b1, a1[r]);
        }
        pa += MNN_SG_MR;
        pb += ldp;
    }
#pragma GCC unroll 6
    for (int r = 0; r < MNN_SG_MR; r++) {
        _mm256_storeu_ps(acc + r * MNN_SG_NR, a0[r]);
        _mm256_storeu_ps(acc + r * MNN_SG_NR + 8, a1[r]);
    }
    mnn_sg_store(acc, C, ldc, rows, cols, accumulate, last, bias, lo, hi);
}
#else
static inline void mnn_sg_tile_strided(ptrdiff_t kc, const float *pa, const float *pb,
                                       ptrdiff_t ldp, float *C, ptrdiff_t ldc, int rows,
                                       int cols, int accumulate, int last, const float *bias,
                                       float lo, float hi) {
    float acc[MNN_SG_MR * MNN_SG_NR];
    for (int i = 0; i < MNN_SG_MR * MNN_SG_NR; i++) acc[i] = 0.0f;
    for (ptrdiff_t k = 0; k < kc; k++) {
        for (int r = 0; r < MNN_SG_MR; r++) {
            float a = pa[r];
            for (int j = 0; j < MNN_SG_NR; j++) acc[r * MNN_SG_NR + j] += a * pb[j];
        }
        pa += MNN_SG_MR;
        pb += ldp;
    }
    mnn_sg_store(acc, C, ldc, rows, cols, accumulate, last, bias, lo, hi);
}
#endif
/* The tile over packed B (strips of NR columns). */
static inline void mnn_sg_tile(ptrdiff_t kc, const float *pa, const float *pb, float *C,
                               ptrdiff_t ldc, int rows, int cols, int accumulate, int last,
                               const float *bias, float lo, float hi) {
    mnn_sg_tile_strided(kc, pa, pb, MNN_SG_NR, C, ldc, rows, cols, accumulate, last, bias, lo,
                        hi);
}
/* Without AVX-512 the prefetching variant is the plain tile. */
static inline void mnn_sg_tile_prefetch(ptrdiff_t pf_off, ptrdiff_t kc, const float *pa,
                                        const float *pb, float *C, ptrdiff_t ldc, int rows,
                                        int cols, int accumulate, int last,
                                        const float *bias, float lo, float hi) {
    (void)pf_off;
    mnn_sg_tile(kc, pa, pb, C, ldc, rows, cols, accumulate, last, bias, lo, hi);
}
#endif

/* A convolution whose im2col matrix is B, for packing B straight from the image (no
   im2col matrix is written): row k = (c*KH + i)*KW + j, column n = oy*OW + ox of B is
   x[c, oy*sh - pt + i*dh, ox*sw - pl + j*dw], zero outside the H x W image. x has channel
   stride xc and row stride xr (floats); the caller checks that C*KH*KW = K and that
   every column is an output pixel of an OH x OW output. */
typedef struct {
    const float *x;
    ptrdiff_t xc, xr, H, W, KH, KW, OW, sh, sw, pt, pl, dh, dw;
} mnn_sg_conv;

/* First t >= 0 with ix0 + t*sw >= 0, and first t with ix0 + t*sw >= W (both clamped
   to [0, seg], hi >= lo): the columns of a segment that read inside the image row.
   Strides 1 and 2 (nearly every model) without a division. */
static inline void mnn_sg_conv_span(ptrdiff_t ix0, ptrdiff_t sw, ptrdiff_t W,
                                    ptrdiff_t seg, ptrdiff_t *lo_out, ptrdiff_t *hi_out) {
    ptrdiff_t lo, hi;
    if (sw == 1) {
        lo = ix0 >= 0 ? 0 : -ix0;
        hi = W - ix0 <= 0 ? 0 : W - ix0;
    } else if (sw == 2) {
        lo = ix0 >= 0 ? 0 : (-ix0 + 1) >> 1;
        hi = W - ix0 <= 0 ? 0 : (W - ix0 + 1) >> 1;
    } else {
        lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
        hi = W - ix0 <= 0 ? 0 : (W - ix0 + sw - 1) / sw;
    }
    if (lo > seg) lo = seg;
    if (hi > seg) hi = seg;
    if (hi < lo) hi = lo;
    *lo_out = lo;
    *hi_out = hi;
}

/* row[0:ncols] <- row (c, i, j) of the conv's B, columns n0 .. n0+ncols-1 (output pixel
   (oy, ox) = divmod(n0, OW) first). Every read of x is tested against H and W. */
static void mnn_sg_conv_row(const mnn_sg_conv *g, ptrdiff_t c, ptrdiff_t i, ptrdiff_t j,
                            ptrdiff_t oy, ptrdiff_t ox, ptrdiff_t ncols, float *row) {
    const float *xc = g->x + c * g->xc;
    ptrdiff_t sw = g->sw, col = 0;
    while (col < ncols) {
        ptrdiff_t seg = g->OW - ox < ncols - col ? g->OW - ox : ncols - col;
        ptrdiff_t iy = oy * g->sh - g->pt + i * g->dh;
        float *dst = row + col;
        if (iy < 0 || iy >= g->H) {
            for (ptrdiff_t t = 0; t < seg; t++) dst[t] = 0.0f;
        } else {
            ptrdiff_t ix0 = ox * sw - g->pl + j * g->dw, lo, hi;
            mnn_sg_conv_span(ix0, sw, g->W, seg, &lo, &hi);
            /* src is the pixel of column lo: the first one inside the image row. */
            const float *src = xc + iy * g->xr + (ix0 + lo * sw);
            ptrdiff_t len = hi - lo;
            float *out = dst + lo;
            for (ptrdiff_t t = 0; t < lo; t++) dst[t] = 0.0f;
            if (sw == 1) {
                for (ptrdiff_t t = 0; t < len; t++) out[t] = src[t];
            } else if (sw == 2) {
                for (ptrdiff_t t = 0; t < len; t++) out[t] = src[2 * t];
            } else {
                for (ptrdiff_t t = 0; t < len; t++) out[t] = src[t * sw];
            }
            for (ptrdiff_t t = hi; t < seg; t++) dst[t] = 0.0f;
        }
        col += seg;
        ox = 0;
        oy++;
    }
}

/* pb <- rows k0 .. k0+kc-1, columns n0 .. n0+ncols-1 of the conv's B, in mnn_sg_pack_b's
   layout. row is scratch of MNN_SG_NC floats (ncols <= MNN_SG_NC). */
static void mnn_sg_pack_b_conv(const mnn_sg_conv *g, ptrdiff_t k0, ptrdiff_t kc,
                               ptrdiff_t n0, ptrdiff_t ncols, float *pb, float *row) {
    ptrdiff_t strips = (ncols + MNN_SG_NR - 1) / MNN_SG_NR;
    ptrdiff_t oy = n0 / g->OW, ox = n0 % g->OW;
    /* (c, i, j) of row k0, then stepped row by row (no divisions per row). */
    ptrdiff_t c = k0 / (g->KH * g->KW), i = (k0 / g->KW) % g->KH, j = k0 % g->KW;
    for (ptrdiff_t t = ncols; t < strips * MNN_SG_NR; t++) row[t] = 0.0f;
    for (ptrdiff_t kk = 0; kk < kc; kk++) {
        mnn_sg_conv_row(g, c, i, j, oy, ox, ncols, row);
        if (++j == g->KW) {
            j = 0;
            if (++i == g->KH) {
                i = 0;
                c++;
            }
        }
        for (ptrdiff_t s = 0; s < strips; s++) {
            float *dst = pb + s * kc * MNN_SG_NR + kk * MNN_SG_NR;
            const float *src = row + s * MNN_SG_NR;
            for (int t = 0; t < MNN_SG_NR; t++) dst[t] = src[t];
        }
    }
}

/* Depth up to which B read from memory is not packed: its whole NR-column strips are
   read in place by the tile (row stride ldb). Packing copies each B value once for the
   M / MR slabs to read from a contiguous strip; a strip of a shallow B (K rows of NR
   floats, at most 4 KB) stays in L1 across the slabs wherever its rows lie, so there the
   copy is pure cost. Measured (Zen 4, one and two threads, MobileNetV2's fused blocks,
   in-process A/B): 0.86x the time for the block with the 32 -> 16 projection at 112x112
   (two slabs share each packed strip), 0.96-0.97x for the 16 -> 96 expand's block,
   0.98-0.99x for the K = 24 and 32 expands; reading the K = 96 projection after the
   16 -> 96 expand in place as well gained nothing more. The AVX2 and portable tiles
   follow the same rule (not measured there). */
#define MNN_SG_IN_PLACE_K 32

/* The part of C with slabs [s0, s1) and columns [n0, n1): C = clamp(A B + bias), B
   read from memory (conv NULL) or packed from an image (conv: B is its im2col matrix).
   pb is this thread's scratch of MNN_SG_KC * MNN_SG_NC floats, plus MNN_SG_NC more with
   conv. */
static void mnn_sg_block_any(ptrdiff_t M, ptrdiff_t K, const float *pa, const float *B,
                             ptrdiff_t ldb, const mnn_sg_conv *conv, float *C, ptrdiff_t ldc,
                             ptrdiff_t s0, ptrdiff_t s1, ptrdiff_t n0, ptrdiff_t n1,
                             float *pb, const float *bias, float lo, float hi) {
    ptrdiff_t Mp = (M + MNN_SG_MR - 1) / MNN_SG_MR * MNN_SG_MR;
    for (ptrdiff_t nc0 = n0; nc0 < n1; nc0 += MNN_SG_NC) {
        ptrdiff_t ncw = n1 - nc0 < MNN_SG_NC ? n1 - nc0 : MNN_SG_NC;
        ptrdiff_t strips = (ncw + MNN_SG_NR - 1) / MNN_SG_NR;
        for (ptrdiff_t k0 = 0; k0 < K; k0 += MNN_SG_KC) {
            ptrdiff_t kc = K - k0 < MNN_SG_KC ? K - k0 : MNN_SG_KC;
            /* Whole strips of a shallow B are read in place (see MNN_SG_IN_PLACE_K); the
               partial last strip is packed (zero past its columns) */
            const int in_place = !conv && K <= MNN_SG_IN_PLACE_K;
            const ptrdiff_t whole = ncw / MNN_SG_NR * MNN_SG_NR;
            if (conv)
                mnn_sg_pack_b_conv(conv, k0, kc, nc0, ncw, pb, pb + MNN_SG_KC * MNN_SG_NC);
            else if (!in_place)
                mnn_sg_pack_b(kc, ncw, B + k0 * ldb + nc0, ldb, pb);
            else if (whole < ncw)
                mnn_sg_pack_b(kc, ncw - whole, B + k0 * ldb + nc0 + whole, ldb,
                              pb + whole / MNN_SG_NR * kc * MNN_SG_NR);
            int accumulate = k0 > 0, last = k0 + kc == K;
            for (ptrdiff_t s = s0; s < s1; s++) {
                ptrdiff_t rows = M - s * MNN_SG_MR;
                if (rows > MNN_SG_MR) rows = MNN_SG_MR;
                const float *a = pa + k0 * Mp + s * kc * MNN_SG_MR;
                for (ptrdiff_t j = 0; j < strips; j++) {
                    ptrdiff_t cols = ncw - j * MNN_SG_NR;
                    if (cols > MNN_SG_NR) cols = MNN_SG_NR;
                    float *c = C + s * MNN_SG_MR * ldc + nc0 + j * MNN_SG_NR;
                    if (in_place && cols == MNN_SG_NR)
                        mnn_sg_tile_strided(kc, a, B + k0 * ldb + nc0 + j * MNN_SG_NR, ldb, c,
                                            ldc, (int)rows, (int)cols, accumulate, last,
                                            bias + s * MNN_SG_MR, lo, hi);
                    else
                        mnn_sg_tile(kc, a, pb + j * kc * MNN_SG_NR, c, ldc, (int)rows,
                                    (int)cols, accumulate, last, bias + s * MNN_SG_MR, lo, hi);
                }
            }
        }
    }
}

static void mnn_sg_block(ptrdiff_t M, ptrdiff_t K, const float *pa, const float *B,
                         ptrdiff_t ldb, float *C, ptrdiff_t ldc, ptrdiff_t s0, ptrdiff_t s1,
                         ptrdiff_t n0, ptrdiff_t n1, float *pb, const float *bias, float lo,
                         float hi) {
    mnn_sg_block_any(M, K, pa, B, ldb, NULL, C, ldc, s0, s1, n0, n1, pb, bias, lo, hi);
}

/* mnn_sg_block for a convolution (B its im2col matrix, never built). */
static void mnn_sg_block_conv(ptrdiff_t M, ptrdiff_t K, const float *pa,
                              const mnn_sg_conv *conv, float *C, ptrdiff_t ldc, ptrdiff_t s0,
                              ptrdiff_t s1, ptrdiff_t n0, ptrdiff_t n1, float *pb,
                              const float *bias, float lo, float hi) {
    mnn_sg_block_any(M, K, pa, NULL, 0, conv, C, ldc, s0, s1, n0, n1, pb, bias, lo, hi);
}

/* ---------------------------------------------------------------------------------------
   Direct convolution by the same multiply-adds with the roles swapped (AVX-512 only): the
   vectors run over 32 output channels (a slab of the weight, packed k-major by
   mnn_sd_pack_w) and each of up to 14 output pixels of a tile broadcasts its input value
   straight from the (padded) image, so B is never packed. Pays when the product has few
   columns (a padded 32-column strip would waste lanes) or when packing B costs a large
   share (few output channels per input value). The 14 x 32 tile (28 accumulators)
   is transposed in registers for the store, 8 pixels at a time.

   Addressing: B[k, n] = x[koff[k] + poff[n]] with koff[k] = c*xc + i*dh*xr + j*dw for
   k = (c*KH + i)*KW + j and poff[n] = oy*sh*xr + ox*sw for n = oy*OW + ox. The caller
   pads the image so every such read is inside it (sgemm.pyx checks that). */
#define MNN_SD_M 32
#define MNN_SD_N 14

/* Pixels per tile for P output pixels of a conv with K multiply-adds per output. 14
   pixels (28 accumulators) load each weight vector for 1.75x the multiply-adds of 8.
   With K >= 96 that pays whatever the number M of output channels, now that a tile in
   one output row addresses its pixels from one pointer (mnn_sd_tile's ROW): measured
   against 8 (Xeon Skylake-SP, one thread, caches flushed as in a model run) 0.88-0.94x
   the time for M = 24 .. 64 (MobileNetV2's projections, 3x3 64 -> 64), 0.76-0.86x for
   M = 160, 960, level for the stem (K = 147). With a shallow K the transposed stores
   dominate (1.1-1.4x slower: K = 16 .. 64). There 8 pixels, or 7 when that divides P
   and 8 does not (no idle lanes in a last partial tile: 7x7 .. 112x112 images). A
   range's last tile may be short: it runs as a 7- or 8-pixel tile when it fits one. */
static inline int mnn_sd_npw(ptrdiff_t P, ptrdiff_t K) {
    if (K >= 96 && P >= 14) return 14;
    return P % 8 && P % 7 == 0 ? 7 : 8;
}

/* Whether tiles ask for the next tile's input ahead (mnn_sd_block's xpf) when it comes
   from `planes` image planes. A tile reads a few values from each plane: with many
   planes that is more streams than the hardware prefetcher follows, and every new line
   of input is a miss of its own. Measured (Xeon Skylake-SP, one thread, caches flushed
   as in a model run): 0.85-0.99x the time for ResNet18's stride-2 convs (3x3 and 1x1,
   64 planes and more), 0.7x for MobileNetV2's 144 -> 24 1x1 at 56x56; the stem's 3
   planes are followed already (1.04-1.06x slower with the extra loads). */
static inline int mnn_sd_xpf(ptrdiff_t planes) { return planes >= 16; }

static inline ptrdiff_t mnn_sd_packed_size(ptrdiff_t M, ptrdiff_t K) {
    return (M + MNN_SD_M - 1) / MNN_SD_M * MNN_SD_M * K;
}

/* Whether mnn_sd_block walks a conv's units tile-major (each tile's input read while in
   cache by every slab; the weights re-read per tile) rather than slab-major (a slab's
   weights re-read from cache by every tile; the input re-read per slab). Tile-major
   when all the packed weights fit in half of L2 (1 MB here) and one slab's do not fit
   in L1 (K > 288: 36 KB): then a tile's input is the smaller stream. Measured against
   slab-major (Xeon Skylake-SP, one thread, caches flushed as in a model run): 1.04x
   faster for ResNet18's 3x3 s2 64 -> 128 (K = 576); slab-major 0.91-0.96x the time for
   K = 144 .. 288 (3x3 over 16 .. 32 channels), 0.75x for the 7x7 stem (K = 147), level
   for 1x1 convs of K = 64 .. 192. */
static inline int mnn_sd_tile_major(ptrdiff_t M, ptrdiff_t K) {
    return M > MNN_SD_M && K > 288 && mnn_sd_packed_size(M, K) * 4 <= (512 << 10);
}

/* Depth steps per chunk of a slab-major walk (mnn_sd_block with acc): a slab's weights
   over 128 KB (K > 1024) are taken in equal chunks of at most that, each chunk computed
   for all the slab's tiles in turn (their partial sums kept in acc) before the next.
   The chunk stays in L2 for every tile, and the next slab's chunk fetched ahead does not
   push it out, as a whole next slab (up to 590 KB: 3x3 over 512 channels) does. Measured
   (Xeon Skylake-SP, one thread, caches flushed as in a model run): 0.89-0.93x the time
   for 3x3 512 -> 512 at 7x7 (K = 4608), 0.95-0.98x for 256 -> 512 stride 2 (2304). */
static inline ptrdiff_t mnn_sd_chunk(ptrdiff_t K) {
    ptrdiff_t chunks = (K + 1023) / 1024;
    return (K + chunks - 1) / chunks;
}

/* Tiles whose partial sums a chunked walk keeps at once (57 KB of them: they stay in
   L2 beside the chunk; a large image's tiles go in several runs, each reading the chunk
   again from L2). */
#define MNN_SD_RUN 32

/* Floats of acc scratch mnn_sd_block needs for P pixels in tiles of npw (0: none). */
static inline ptrdiff_t mnn_sd_acc_floats(ptrdiff_t P, ptrdiff_t K, int npw, int tile_major) {
    if (tile_major || mnn_sd_chunk(K) >= K) return 0;
    ptrdiff_t tiles = (P + npw - 1) / npw;
    return (tiles < MNN_SD_RUN ? tiles : MNN_SD_RUN) * MNN_SD_N * MNN_SD_M;
}

/* pw[s*K*32 + k*32 + r] = A[s*32 + r, k] (row stride lda), zero past M. */
static void mnn_sd_pack_w(ptrdiff_t M, ptrdiff_t K, const float *A, ptrdiff_t lda,
                          float *pw) {
    ptrdiff_t slabs = (M + MNN_SD_M - 1) / MNN_SD_M;
    for (ptrdiff_t s = 0; s < slabs; s++) {
        float *dst = pw + s * K * MNN_SD_M;
        for (int r = 0; r < MNN_SD_M; r++) {
            ptrdiff_t row = s * MNN_SD_M + r;
            for (ptrdiff_t k = 0; k < K; k++)
                dst[k * MNN_SD_M + r] = row < M ? A[row * lda + k] : 0.0f;
        }
    }
}

/* Rows [r0, r1) of dst (hp x wp, contiguous) <- the H x W plane src (row stride sr) at
   row pt, column pl, zeros around it (the caller checks hp >= pt + H, wp >= pl + W and
   0 <= r0 <= r1 <= hp). */
static void mnn_sd_pad_rows(const float *src, ptrdiff_t sr, ptrdiff_t H, ptrdiff_t W,
                            float *dst, ptrdiff_t wp, ptrdiff_t pt, ptrdiff_t pl,
                            ptrdiff_t r0, ptrdiff_t r1) {
    for (ptrdiff_t r = r0; r < r1; r++) {
        float *d = dst + r * wp;
        if (r < pt || r >= pt + H) {
            for (ptrdiff_t q = 0; q < wp; q++) d[q] = 0.0f;
            continue;
        }
        const float *s = src + (r - pt) * sr;
        for (ptrdiff_t q = 0; q < pl; q++) d[q] = 0.0f;
        for (ptrdiff_t q = 0; q < W; q++) d[pl + q] = s[q];
        for (ptrdiff_t q = pl + W; q < wp; q++) d[q] = 0.0f;
    }
}

/* koff[k] for the K = C*KH*KW rows (see above; xc, xr the padded plane and row sizes). */
static void mnn_sd_koff(ptrdiff_t C, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t xc,
                        ptrdiff_t xr, ptrdiff_t dh, ptrdiff_t dw, ptrdiff_t *koff) {
    ptrdiff_t k = 0;
    for (ptrdiff_t c = 0; c < C; c++)
        for (ptrdiff_t i = 0; i < KH; i++)
            for (ptrdiff_t j = 0; j < KW; j++) koff[k++] = c * xc + i * dh * xr + j * dw;
}

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#define MNN_SD_ENABLED 1
/* Store 8 pixel vectors (16 channels each) as rows of C: channel r of the vectors goes
   to C[r*ldc + 0 .. np-1], for r < rows. Without S the vectors come with bias and clamp
   applied; with S (rows like C's) they come with the bias only, and each row is stored
   as clamp(row + S's row, lo, hi): a residual sum in the store. */
static inline __attribute__((always_inline)) void mnn_sd_store16(const __m512 *a, float *C,
                                                                 ptrdiff_t ldc, int rows,
                                                                 int np, const float *S,
                                                                 float lo, float hi) {
    __m512 t[8], u[8];
    /* within each 128-bit lane l: u[j] = channel 4l+j of pixels 0..3, u[4+j] of 4..7 */
    for (int q = 0; q < 2; q++) {
        const __m512 *b = a + 4 * q;
        t[4 * q + 0] = _mm512_unpacklo_ps(b[0], b[1]);
        t[4 * q + 1] = _mm512_unpackhi_ps(b[0], b[1]);
        t[4 * q + 2] = _mm512_unpacklo_ps(b[2], b[3]);
        t[4 * q + 3] = _mm512_unpackhi_ps(b[2], b[3]);
        u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q + 0], t[4 * q + 2], 0x44);
        u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q + 0], t[4 * q + 2], 0xEE);
        u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
        u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
    }
    /* lo: [u lane0, v lane0, u lane1, v lane1]; hi: lanes 2 and 3 */
    const __m512i ilo = _mm512_set_epi32(23, 22, 21, 20, 7, 6, 5, 4,
                                         19, 18, 17, 16, 3, 2, 1, 0);
    const __m512i ihi = _mm512_set_epi32(31, 30, 29, 28, 15, 14, 13, 12,
                                         27, 26, 25, 24, 11, 10, 9, 8);
    __mmask8 m = (__mmask8)((1u << np) - 1u);
    __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    for (int j = 0; j < 4; j++) {
        __m512 lo = _mm512_permutex2var_ps(u[j], ilo, u[4 + j]);
        __m512 hi = _mm512_permutex2var_ps(u[j], ihi, u[4 + j]);
        /* channels j, 4+j, 8+j, 12+j */
        __m256 v[4] = {_mm512_castps512_ps256(lo), _mm512_extractf32x8_ps(lo, 1),
                       _mm512_castps512_ps256(hi), _mm512_extractf32x8_ps(hi, 1)};
        for (int l = 0; l < 4; l++) {
            int r = 4 * l + j;
            if (r >= rows) continue;
            __m256 o = v[l];
            if (S) {
                o = _mm256_add_ps(o, _mm256_maskz_loadu_ps(m, S + r * ldc));
                o = _mm256_min_ps(vhi, _mm256_max_ps(vlo, o));  /* NaN passes, as below */
            }
            _mm256_mask_storeu_ps(C + r * ldc, m, o);
        }
    }
}

/* One tile: 32 channels (pw: this slab, k-major) x np <= NPW pixels whose input offsets
   are po[0..np-1]; C rows of this slab (row stride ldc), `rows` of them valid. NPW (14,
   8 or 7) is a constant at each call, so the pixel loops unroll. With PF (a constant
   too) the k-th step also asks for the k-th step of the slab at `next` (the same
   offsets), so that a slab streaming in from memory arrives while this one computes.

   ROW (a constant) says how the pixels' inputs are found. 0: any offsets, a pointer per
   pixel (14 of them do not fit in the registers next to the loop's own: the compiler
   reloads some from the stack at every step). 1: the NPW pixels lie in one output row,
   SW (1 or 2) apart in the input: one pointer and constant displacements. 2: two output
   rows of NPW / 2 pixels each (a 14-pixel tile of a 7-wide output), the second `rs`
   floats after the first. Measured against pointers for all (Xeon, one thread): 0.90-
   0.99x the time for 14-pixel tiles, level for 8.

   PF also asks for the next tile's input at every step, at nx0 + koff[k] and
   nx1 + koff[k] (its first and last pixel: the lines between them are those, or
   reached by the same window's other taps). Callers with nothing to fetch pass the
   current slab and pixel.

   S, when not NULL, is added to the tile before the clamp (rows like C's: a skip
   connection's values, mnn_sd_store16).

   HALF (a constant) narrows a slab whose valid rows (output channels) are few: 0 computes
   all 32, 1 the first 24 (channels 16..23 in a 256-bit register), 2 the first 16. The
   packed weight keeps its 32 floats per step (zeros past M); the lanes left out would
   only hold those zeros' products. On Zen 4, whose 512-bit FMAs take both 256-bit pipes,
   a 24-row slab costs 3/4 of a full one and a 16-row slab half (MobileNetV2's 24-channel
   projections, a 16-channel last slab).

   A chunk of the depth (mnn_sd_chunk): unless `first` the sums start from acc (NPW x 32
   floats, pixel-major), and unless `last` they go back there instead of to C. */
static inline __attribute__((always_inline)) void mnn_sd_tile(
        const int NPW, const int PF, const int ROW, const int SW, const int HALF, ptrdiff_t K,
        const float *pw, const float *x, const ptrdiff_t *koff, const ptrdiff_t *po, int np,
        ptrdiff_t rs, float *C, ptrdiff_t ldc, int rows, const float *bias, float lo,
        float hi, const float *next, const float *nx0, const float *nx1, const float *S,
        float *acc, int first, int last) {
    __m512 a0[16], a1[16];  /* 16: the store transposes 8 pixel vectors at a time */
    __m256 h1[16];          /* HALF 1: channels 16..23 */
    const float *p[MNN_SD_N];
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++) {
        a1[r] = _mm512_setzero_ps();
        h1[r] = _mm256_setzero_ps();
        if (first || r >= NPW) {
            a0[r] = _mm512_setzero_ps();
        } else {
            a0[r] = _mm512_loadu_ps(acc + r * MNN_SD_M);
            if (HALF == 0)
                a1[r] = _mm512_loadu_ps(acc + r * MNN_SD_M + 16);
            else if (HALF == 1)
                h1[r] = _mm256_loadu_ps(acc + r * MNN_SD_M + 16);
        }
        if (ROW == 0 && r < MNN_SD_N) p[r] = x + po[r < np ? r : np - 1];
    }
    const float *x0 = x + po[0];
    for (ptrdiff_t k = 0; k < K; k++) {
        __m512 w0 = _mm512_loadu_ps(pw);
        __m512 w1 = HALF == 0 ? _mm512_loadu_ps(pw + 16) : _mm512_setzero_ps();
        __m256 v1 = HALF == 1 ? _mm256_loadu_ps(pw + 16) : _mm256_setzero_ps();
        if (PF) {
            _mm_prefetch((const char *)(next + k * MNN_SD_M), _MM_HINT_T1);
            _mm_prefetch((const char *)(next + k * MNN_SD_M + 16), _MM_HINT_T1);
        }
        ptrdiff_t o = koff[k];
        if (PF) {
            _mm_prefetch((const char *)(nx0 + o), _MM_HINT_T0);
            _mm_prefetch((const char *)(nx1 + o), _MM_HINT_T0);
        }
        const float *q = x0 + o;
#pragma GCC unroll 16
        for (int r = 0; r < NPW; r++) {
            float v;
            if (ROW == 0)
                v = p[r][o];
            else if (ROW == 1 || r < NPW / 2)
                v = q[r * SW];
            else
                v = q[rs + (r - NPW / 2) * SW];
            __m512 b = _mm512_set1_ps(v);
            a0[r] = _mm512_fmadd_ps(w0, b, a0[r]);
            if (HALF == 0)
                a1[r] = _mm512_fmadd_ps(w1, b, a1[r]);
            else if (HALF == 1)
                h1[r] = _mm256_fmadd_ps(v1, _mm512_castps512_ps256(b), h1[r]);
        }
        pw += MNN_SD_M;
    }
    if (!last) {
#pragma GCC unroll 16
        for (int r = 0; r < NPW; r++) {
            _mm512_storeu_ps(acc + r * MNN_SD_M, a0[r]);
            if (HALF == 0)
                _mm512_storeu_ps(acc + r * MNN_SD_M + 16, a1[r]);
            else if (HALF == 1)
                _mm256_storeu_ps(acc + r * MNN_SD_M + 16, h1[r]);
        }
        return;
    }
    if (HALF == 1) {
#pragma GCC unroll 16
        for (int r = 0; r < NPW; r++) a1[r] = _mm512_zextps256_ps512(h1[r]);
    }
    /* bias of the valid rows only (the slab may be the last, partial one) */
    __mmask16 m0 = rows >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rows) - 1u);
    __mmask16 m1 = rows >= 32 ? (__mmask16)0xFFFF
                              : (rows > 16 ? (__mmask16)((1u << (rows - 16)) - 1u) : 0);
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    __m512 b0 = _mm512_maskz_loadu_ps(m0, bias), b1 = _mm512_maskz_loadu_ps(m1, bias + 16);
    if (S) {
#pragma GCC unroll 16
        for (int r = 0; r < NPW; r++) {
            a0[r] = _mm512_add_ps(a0[r], b0);  /* the clamp after the skip, in the store */
            if (HALF != 2) a1[r] = _mm512_add_ps(a1[r], b1);
        }
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < NPW; r++) {
            /* the bounds first: NaN passes through the clamp (see mnn_sg_tile_core) */
            a0[r] = _mm512_min_ps(vhi, _mm512_max_ps(vlo, _mm512_add_ps(a0[r], b0)));
            if (HALF != 2)
                a1[r] = _mm512_min_ps(vhi, _mm512_max_ps(vlo, _mm512_add_ps(a1[r], b1)));
        }
    }
    /* pixels 0..7, then 8..13 (the unused vectors past np are zeros, stored nowhere) */
    const float *S16 = S ? S + 16 * ldc : NULL;
    mnn_sd_store16(a0, C, ldc, rows, np < 8 ? np : 8, S, lo, hi);
    if (rows > 16)
        mnn_sd_store16(a1, C + 16 * ldc, ldc, rows - 16, np < 8 ? np : 8, S16, lo, hi);
    if (NPW > 8 && np > 8) {
        mnn_sd_store16(a0 + 8, C + 8, ldc, rows, np - 8, S ? S + 8 : NULL, lo, hi);
        if (rows > 16)
            mnn_sd_store16(a1 + 8, C + 16 * ldc + 8, ldc, rows - 16, np - 8,
                           S16 ? S16 + 8 : NULL, lo, hi);
    }
}

/* mnn_sd_block's call of mnn_sd_tile for a tile of width W, each addressing (row, sw)
   and prefetch choice a constant of its own instance (row 2 only exists for 14). */
#define MNN_SD_TILE_H(W, ROW, SW, HALF)                                                   \
    do {                                                                                  \
        if (next || nx0)                                                                  \
            mnn_sd_tile(W, 1, ROW, SW, HALF, kn, wk, x, koff + k0, po + n, np, rs, c,     \
                        ldc, (int)rows, b, lo, hi, next ? next + k0 * MNN_SD_M : wk,     \
                        nx0 ? nx0 : x + po[n], nx0 ? nx1 : x + po[n], sk, ac, k0 == 0,    \
                        k0 + kn == K);                                                    \
        else                                                                              \
            mnn_sd_tile(W, 0, ROW, SW, HALF, kn, wk, x, koff + k0, po + n, np, rs, c,     \
                        ldc, (int)rows, b, lo, hi, wk, wk, wk, sk, ac, k0 == 0,           \
                        k0 + kn == K);                                                    \
    } while (0)
#define MNN_SD_TILE_PF(W, ROW, SW)                                                        \
    do {                                                                                  \
        if (rows > 24)                                                                    \
            MNN_SD_TILE_H(W, ROW, SW, 0);                                                 \
        else if (rows > 16)                                                               \
            MNN_SD_TILE_H(W, ROW, SW, 1);                                                 \
        else                                                                              \
            MNN_SD_TILE_H(W, ROW, SW, 2);                                                 \
    } while (0)
#define MNN_SD_TILE_ROWS(W)                                                               \
    do {                                                                                  \
        if (row == 1 && sw == 1)                                                          \
            MNN_SD_TILE_PF(W, 1, 1);                                                      \
        else if (row == 1)                                                                \
            MNN_SD_TILE_PF(W, 1, 2);                                                      \
        else if (W == 14 && row == 2 && sw == 1)                                          \
            MNN_SD_TILE_PF(W, 2, 1);                                                      \
        else if (W == 14 && row == 2)                                                     \
            MNN_SD_TILE_PF(W, 2, 2);                                                      \
        else                                                                              \
            MNN_SD_TILE_PF(W, 0, 1);                                                      \
    } while (0)

/* Work units [u0, u1) of C (M rows, row stride ldc, P = OH*OW pixels), tiles of npw
   pixels (mnn_sd_npw): unit u is slab u / tiles times pixel tile u % tiles (slab-major:
   one slab's weights stay in cache while the input streams past), or with tile_major tile
   u / slabs times slab u % slabs (each input value read while in L1 for every slab:
   when all the weights fit in L2). Threads given equal unit ranges get equal work. xpf
   (mnn_sd_xpf): fetch each next tile's input ahead. po is scratch of P offsets. skip,
   when not NULL, holds values laid out like C that are added before the clamp
   (C = clamp(A B + bias + skip)). acc, when not NULL, is scratch of
   mnn_sd_acc_floats: with it a deep slab-major walk goes in chunks of depth.
   mnn_sd_block_ws takes the floats ws between the packed weight's slabs: K * MNN_SD_M
   for a whole weight (mnn_sd_block), more for depths [k0, k0 + K) of a deeper one (pw
   then points at depth k0 of slab 0). */
static void mnn_sd_block_ws(ptrdiff_t M, ptrdiff_t K, const float *pw, ptrdiff_t ws,
                            const float *x, const ptrdiff_t *koff, ptrdiff_t P, ptrdiff_t OW,
                            ptrdiff_t rstep, ptrdiff_t sw, float *C, ptrdiff_t ldc,
                            ptrdiff_t u0, ptrdiff_t u1, int npw, int tile_major, int xpf,
                            ptrdiff_t *po, const float *bias, float lo, float hi,
                            const float *skip, float *acc) {
    ptrdiff_t tiles = (P + npw - 1) / npw, slabs = (M + MNN_SD_M - 1) / MNN_SD_M;
    /* The offsets of the pixels this range visits (all of them when it spans slabs in
       slab-major order), without a division per pixel: those cost as much as a tenth
       of a K = 27 conv. */
    ptrdiff_t t0 = 0, t1 = tiles;
    if (tile_major) {
        t0 = u0 / slabs;
        t1 = (u1 - 1) / slabs + 1;
    } else if (u0 / tiles == (u1 - 1) / tiles) {
        t0 = u0 % tiles;
        t1 = (u1 - 1) % tiles + 1;
    }
    ptrdiff_t n_end = t1 * npw < P ? t1 * npw : P;
    ptrdiff_t oy = t0 * npw / OW, ox = t0 * npw % OW;
    for (ptrdiff_t n = t0 * npw; n < n_end; n++) {
        po[n] = oy * rstep + ox * sw;
        if (++ox == OW) {
            ox = 0;
            oy++;
        }
    }
    /* Chunked: runs of up to MNN_SD_RUN of one slab's tiles, their partial sums in acc */
    ptrdiff_t kc = acc && mnn_sd_acc_floats(P, K, npw, tile_major) ? mnn_sd_chunk(K) : K;
    for (ptrdiff_t ua = u0, ub; ua < u1; ua = ub) {
        ub = kc < K ? (ua / tiles + 1) * tiles : ua + 1;
        if (ub > ua + MNN_SD_RUN) ub = ua + MNN_SD_RUN;
        if (ub > u1) ub = u1;
        for (ptrdiff_t k0 = 0; k0 < K; k0 += kc) {
            ptrdiff_t kn = K - k0 < kc ? K - k0 : kc;
            for (ptrdiff_t u = ua; u < ub; u++) {
                float *ac = kc < K ? acc + (u - ua) * MNN_SD_N * MNN_SD_M : NULL;
                ptrdiff_t s = tile_major ? u % slabs : u / tiles;
                ptrdiff_t n = (tile_major ? u / slabs : u % tiles) * npw;
                ptrdiff_t rows = M - s * MNN_SD_M;
                if (rows > MNN_SD_M) rows = MNN_SD_M;
                const float *w = pw + s * ws, *wk = w + k0 * MNN_SD_M;
                float *c = C + s * MNN_SD_M * ldc + n;
                const float *sk = skip ? skip + s * MNN_SD_M * ldc + n : NULL;
                const float *b = bias + s * MNN_SD_M;
                int np = P - n < npw ? (int)(P - n) : npw;
                /* A slab's first use in this range fetches the next slab's weights (its
                   chunk) ahead: in a model run they come from memory (a tile-major range
                   visits every slab in its first `slabs` units, a slab-major one in each
                   slab's first tile). */
                int first = tile_major ? u - u0 < slabs : (u == u0 || n == 0);
                const float *next = first && s + 1 < slabs ? w + ws : NULL;
                const float *nx0 = NULL, *nx1 = NULL;
                /* The next tile's input, with xpf: a tile-major range reads it on the
                   tile's first slab (the other slabs find it in cache), a slab-major one
                   on every slab (the input streams past each); not in chunks (a chunk's
                   input is small). */
                if (xpf && kc == K && (!tile_major || s == 0) && n + npw < n_end) {
                    ptrdiff_t n2 = n + npw, e2 = n2 + npw < P ? n2 + npw : P;
                    nx0 = x + po[n2];
                    nx1 = x + po[e2 - 1];
                }
                /* the tile's width by its pixels (the last tile of a range may be short), and
                   its pixels' addressing (mnn_sd_tile's ROW) */
                int row = 0;
                ptrdiff_t rs = 0;
                if ((np == 7 || np == 8 || np == 14) && (sw == 1 || sw == 2)) {
                    /* np is then the width of the instance that runs it: no pixel
                       past np is read */
                    ptrdiff_t ox0 = n % OW;
                    if (ox0 + np <= OW) {
                        row = 1;
                    } else if (np == 14 && OW == 7 && ox0 == 0) {
                        row = 2;
                        rs = rstep;
                    }
                }
                if (np <= 7)
                    MNN_SD_TILE_ROWS(7);
                else if (np == 8)
                    MNN_SD_TILE_ROWS(8);
                else
                    MNN_SD_TILE_ROWS(14);
            }
        }
    }
}
#undef MNN_SD_TILE_ROWS
#undef MNN_SD_TILE_PF
#undef MNN_SD_TILE_H
#else
#define MNN_SD_ENABLED 0
/* Never called when MNN_SD_ENABLED is 0 (sgemm.pyx checks): keeps the module linkable. */
static void mnn_sd_block_ws(ptrdiff_t M, ptrdiff_t K, const float *pw, ptrdiff_t ws,
                            const float *x, const ptrdiff_t *koff, ptrdiff_t P, ptrdiff_t OW,
                            ptrdiff_t rstep, ptrdiff_t sw, float *C, ptrdiff_t ldc,
                            ptrdiff_t u0, ptrdiff_t u1, int npw, int tile_major, int xpf,
                            ptrdiff_t *po, const float *bias, float lo, float hi,
                            const float *skip, float *acc) {
    (void)xpf;
    (void)skip;
    (void)acc;
    (void)M; (void)K; (void)pw; (void)ws; (void)x; (void)koff; (void)P; (void)OW;
    (void)rstep; (void)sw; (void)C; (void)ldc; (void)u0; (void)u1; (void)npw;
    (void)tile_major; (void)po; (void)bias; (void)lo; (void)hi;
}
#endif
/* mnn_sd_block_ws over a whole packed weight. */
static inline void mnn_sd_block(ptrdiff_t M, ptrdiff_t K, const float *pw, const float *x,
                                const ptrdiff_t *koff, ptrdiff_t P, ptrdiff_t OW,
                                ptrdiff_t rstep, ptrdiff_t sw, float *C, ptrdiff_t ldc,
                                ptrdiff_t u0, ptrdiff_t u1, int npw, int tile_major, int xpf,
                                ptrdiff_t *po, const float *bias, float lo, float hi,
                                const float *skip, float *acc) {
    mnn_sd_block_ws(M, K, pw, K * MNN_SD_M, x, koff, P, OW, rstep, sw, C, ldc, u0, u1, npw,
                    tile_major, xpf, po, bias, lo, hi, skip, acc);
}
static const int mnn_sd_enabled = MNN_SD_ENABLED;
static const int mnn_sd_m = MNN_SD_M;
static const int mnn_sd_n = MNN_SD_N;
#endif
