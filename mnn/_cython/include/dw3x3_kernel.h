/* Depthwise 3x3 convolution of one float32 plane, dilation 1, column stride 1 or 2, any
   row stride, with the bias and a clamp (fused relu / relu6) applied before the store.

   y[oy, ox] = clamp(b + sum_{i,j} k[3i + j] * x[oy*sh - pt + i, ox*sw - pl + j], lo, hi),
   taps outside the H x W image counting as zero.

   No padded copy of the plane: an input row above or below the image is replaced by
   `zeros` (a row of W zeros the caller provides), and the output columns split into an
   interior [lo, hi), where all three taps of every row are inside the image, and the
   edge columns, done one at a time with a bounds test per tap. With AVX-512 the
   interior runs 16 outputs per step with masked loads and stores for the last partial
   step (masked-off lanes are never accessed); stride 2 loads 32 consecutive inputs and
   separates even and odd columns with two-source permutes. Without AVX-512 the interior
   is a plain loop the compiler vectorizes.

   Bounds: every interior read index lies in [0, W) by the choice of lo and hi (see
   mnn_dw3x3_plane); the caller (depthwise.pyx) checks the plane sizes. */
#ifndef MNN_DW3X3_KERNEL_H
#define MNN_DW3X3_KERNEL_H
#include <stddef.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

static inline float mnn_dw3x3_clamp(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* One output column with a bounds test per tap (the edge columns). */
static inline float mnn_dw3x3_edge(const float *const rows[3], ptrdiff_t W, const float *k,
                                   float b, ptrdiff_t ix0) {
    float acc = b;
    for (int j = 0; j < 3; j++) {
        ptrdiff_t ix = ix0 + j;
        if (ix < 0 || ix >= W) continue;
        acc += k[j] * rows[0][ix] + k[3 + j] * rows[1][ix] + k[6 + j] * rows[2][ix];
    }
    return acc;
}

#if defined(__AVX512F__)
static inline __mmask16 mnn_dw3x3_mask(ptrdiff_t n) {
    /* The first n lanes (n clipped to [0, 16]). */
    if (n >= 16) return (__mmask16)0xFFFF;
    if (n <= 0) return (__mmask16)0;
    return (__mmask16)((1u << n) - 1u);
}

static inline __mmask16 mnn_dw3x3_lanes(ptrdiff_t lo, ptrdiff_t hi) {
    /* Lanes lo .. hi - 1 (clipped to [0, 16]; none when hi <= lo). */
    if (lo < 0) lo = 0;
    if (hi > 16) hi = 16;
    if (hi <= lo) return (__mmask16)0;
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* Stride 1, the whole row [0, OW) in 16-lane steps, edges included: tap j of lane l
   reads column ox0 + l - pl + j, and the load mask keeps only the lanes whose column is
   inside [0, W), so the padding reads as zero and no scalar edge loop is needed. The
   addresses of masked-off lanes are never accessed. */
static void mnn_dw3x3_row_s1(const float *const rows[3], const float *k, float b, float *y,
                             ptrdiff_t OW, ptrdiff_t W, ptrdiff_t pl, float lo, float hi) {
    __m512 kv[9];
    for (int t = 0; t < 9; t++) kv[t] = _mm512_set1_ps(k[t]);
    __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (ptrdiff_t ox = 0; ox < OW; ox += 16) {
        ptrdiff_t c = OW - ox < 16 ? OW - ox : 16;
        __m512 acc = vb;
        for (int j = 0; j < 3; j++) {
            ptrdiff_t base = ox - pl + j;  /* column of lane 0 */
            __mmask16 m = mnn_dw3x3_lanes(-base, c < W - base ? c : W - base);
            for (int i = 0; i < 3; i++) {
                /* integer address arithmetic: base may point before the row */
                const float *r = (const float *)((ptrdiff_t)rows[i] +
                                                 base * (ptrdiff_t)sizeof(float));
                acc = _mm512_fmadd_ps(kv[3 * i + j], _mm512_maskz_loadu_ps(m, r), acc);
            }
        }
        acc = _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
        _mm512_mask_storeu_ps(y + ox, mnn_dw3x3_mask(c), acc);
    }
}

static void mnn_dw3x3_interior(const float *const rows[3], const float *k, float b,
                               float *y, ptrdiff_t lo_x, ptrdiff_t hi_x, int sw,
                               ptrdiff_t pl, float lo, float hi) {
    __m512 kv[9];
    for (int t = 0; t < 9; t++) kv[t] = _mm512_set1_ps(k[t]);
    __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    if (sw == 1) {
        for (ptrdiff_t ox = lo_x; ox < hi_x; ox += 16) {
            __mmask16 m = mnn_dw3x3_mask(hi_x - ox);
            ptrdiff_t base = ox - pl;
            __m512 acc = vb;
            for (int i = 0; i < 3; i++) {
                const float *r = rows[i] + base;
                acc = _mm512_fmadd_ps(kv[3 * i], _mm512_maskz_loadu_ps(m, r), acc);
                acc = _mm512_fmadd_ps(kv[3 * i + 1], _mm512_maskz_loadu_ps(m, r + 1), acc);
                acc = _mm512_fmadd_ps(kv[3 * i + 2], _mm512_maskz_loadu_ps(m, r + 2), acc);
            }
            acc = _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
            _mm512_mask_storeu_ps(y + ox, m, acc);
        }
        return;
    }
    /* sw == 2: lanes l < c read columns base + 2l (+1, +2), base = 2*ox - pl. */
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                                          27, 29, 31);
    for (ptrdiff_t ox = lo_x; ox < hi_x; ox += 16) {
        ptrdiff_t c = hi_x - ox < 16 ? hi_x - ox : 16;
        __mmask16 m = mnn_dw3x3_mask(c);
        /* columns base .. base + 2c - 1 for taps 0 and 1, base + 2 .. base + 2c for 2 */
        __mmask16 m0 = mnn_dw3x3_mask(2 * c), m1 = mnn_dw3x3_mask(2 * c - 16);
        __mmask16 s0 = mnn_dw3x3_mask(2 * c - 1), s1 = mnn_dw3x3_mask(2 * c - 17);
        ptrdiff_t base = 2 * ox - pl;
        __m512 acc = vb;
        for (int i = 0; i < 3; i++) {
            const float *r = rows[i] + base;
            __m512 a0 = _mm512_maskz_loadu_ps(m0, r), a1 = _mm512_maskz_loadu_ps(m1, r + 16);
            __m512 b0 = _mm512_maskz_loadu_ps(s0, r + 2);
            __m512 b1 = _mm512_maskz_loadu_ps(s1, r + 18);
            acc = _mm512_fmadd_ps(kv[3 * i], _mm512_permutex2var_ps(a0, even, a1), acc);
            acc = _mm512_fmadd_ps(kv[3 * i + 1], _mm512_permutex2var_ps(a0, odd, a1), acc);
            acc = _mm512_fmadd_ps(kv[3 * i + 2], _mm512_permutex2var_ps(b0, even, b1), acc);
        }
        acc = _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
        _mm512_mask_storeu_ps(y + ox, m, acc);
    }
}
#else
static void mnn_dw3x3_interior(const float *const rows[3], const float *k, float b,
                               float *y, ptrdiff_t lo_x, ptrdiff_t hi_x, int sw,
                               ptrdiff_t pl, float lo, float hi) {
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
    for (ptrdiff_t ox = lo_x; ox < hi_x; ox++) {
        ptrdiff_t q = ox * sw - pl;
        float acc = b + k[0] * r0[q] + k[1] * r0[q + 1] + k[2] * r0[q + 2]
                    + k[3] * r1[q] + k[4] * r1[q + 1] + k[5] * r1[q + 2]
                    + k[6] * r2[q] + k[7] * r2[q + 1] + k[8] * r2[q + 2];
        y[ox] = mnn_dw3x3_clamp(acc, lo, hi);
    }
}
#endif

/* The whole plane: x is H x W, y is OH x OW (both contiguous), sw is 1 or 2. */
static void mnn_dw3x3_plane(const float *x, ptrdiff_t H, ptrdiff_t W, const float *k,
                            float b, float *y, ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t sh,
                            int sw, ptrdiff_t pt, ptrdiff_t pl, const float *zeros,
                            float lo, float hi) {
    /* Interior columns: ox*sw - pl >= 0 and ox*sw - pl + 2 <= W - 1. */
    ptrdiff_t lo_x = (pl + sw - 1) / sw;
    ptrdiff_t hi_x = W - 3 + pl >= 0 ? (W - 3 + pl) / sw + 1 : 0;
    if (lo_x > OW) lo_x = OW;
    if (hi_x > OW) hi_x = OW;
    if (hi_x < lo_x) hi_x = lo_x;
    for (ptrdiff_t oy = 0; oy < OH; oy++) {
        const float *rows[3];
        for (int i = 0; i < 3; i++) {
            ptrdiff_t iy = oy * sh - pt + i;
            rows[i] = (iy >= 0 && iy < H) ? x + iy * W : zeros;
        }
        float *yr = y + oy * OW;
#if defined(__AVX512F__)
        /* Narrow rows: the scalar edge columns are a large share, the masked row wins
           (measured 7, 14, 28 wide: ~10% faster); wide rows: the interior loop without
           per-tap masks wins (56, 112 wide: ~15%). */
        if (sw == 1 && OW <= 32) {
            mnn_dw3x3_row_s1(rows, k, b, yr, OW, W, pl, lo, hi);
            continue;
        }
#endif
        for (ptrdiff_t ox = 0; ox < lo_x; ox++)
            yr[ox] = mnn_dw3x3_clamp(mnn_dw3x3_edge(rows, W, k, b, ox * sw - pl), lo, hi);
        mnn_dw3x3_interior(rows, k, b, yr, lo_x, hi_x, sw, pl, lo, hi);
        for (ptrdiff_t ox = hi_x; ox < OW; ox++)
            yr[ox] = mnn_dw3x3_clamp(mnn_dw3x3_edge(rows, W, k, b, ox * sw - pl), lo, hi);
    }
}
#endif
