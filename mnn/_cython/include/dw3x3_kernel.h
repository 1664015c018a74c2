/* Depthwise 3x3 convolution of one float32 plane, dilation 1, column stride 1 or 2, any
   row stride, with the bias and a clamp (fused relu / relu6) applied before the store.

   y[oy, ox] = clamp(b + sum_{i,j} k[3i + j] * x[oy*sh - pt + i, ox*sw - pl + j], lo, hi),
   taps outside the H x W image counting as zero.

   No padded copy of the plane: an input row above or below the image is replaced by
   `zeros` (a row of W zeros the caller provides).

   With AVX-512 (measured on MobileNetV2's layers, 2-3x faster than one row at a time):
   - Row blocks (mnn_dw3x3_rows_s1, mnn_dw3x3_rows): 4, 2 or 1 output rows at once over
     the whole width in 16-lane steps. The blocks' input rows overlap, so each is loaded
     once per step and feeds every output row that uses it. Load masks keep only the
     columns inside [0, W): the padding reads as zero and there are no scalar edge
     columns. Stride 1 shifts one loaded vector per row into its three taps; stride 2
     picks even and odd columns with permutes (one source vector for steps of up to 7
     outputs, two beyond); rows of at most 7 outputs at stride 2 go two to a vector
     instead (mnn_dw3x3_pairs_s2).
   - Flat stream (mnn_dw3x3_plane_flat): small stride-1 planes as wide as their output
     (7x7 with pads 1) run as one stream of OH * OW outputs with per-step tap masks
     computed once per call, instead of rows filling 7 of 16 lanes.
   - Deinterleaved rows (mnn_dw3x3_plane_s2_deint, stride 2, pads 1): a plane whose
     rows hold their even columns, then their odd ones (mnn_dw3x3_deinterleave_row; the
     fused block's expand writes its output that way at no cost) gives each tap's 16
     columns as one plain load, with no permutes: 0.63-0.78x the time of the row
     blocks over MobileNetV2's stride-2 planes with more than 7 outputs per row (Zen 4,
     bands in L2).
   Masked-off lanes are never accessed. Without AVX-512 the output columns split into
   an interior, a plain loop the compiler vectorizes, and edge columns done one at a
   time with a bounds test per tap.

   Bounds: every read index lies in [0, W) x [0, H) by the masks (AVX-512) or by the
   choice of the interior (see mnn_dw3x3_plane); the caller (depthwise.pyx) checks the
   plane sizes. */
#ifndef MNN_DW3X3_KERNEL_H
#define MNN_DW3X3_KERNEL_H
#include <stddef.h>
#include <stdint.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#define MNN_DW3X3_DEINT 1
#else
#define MNN_DW3X3_DEINT 0
#endif
static const int mnn_dw3x3_deint = MNN_DW3X3_DEINT;

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

/* 16 floats from column col of row (col may be negative: integer address arithmetic,
   and the mask keeps only lanes whose column lies inside the row, so no other
   address is accessed). */
static inline __m512 mnn_dw3x3_load(const float *row, ptrdiff_t col, __mmask16 m) {
    const float *p = (const float *)((uintptr_t)row + (uintptr_t)(col * (ptrdiff_t)sizeof(float)));
    return _mm512_maskz_loadu_ps(m, p);
}

#define MNN_DW3X3_INLINE static inline __attribute__((always_inline))
#define MNN_DW3X3_MAX_ROWS 4

/* Column stride 2: R <= 4 output rows oy .. oy + R - 1 at once, the whole width [0, OW)
   in 16-lane steps, edges included. The input rows the R rows read overlap ((R - 1) * sh
   + 3 distinct rows instead of 3R), so each is loaded once per step and feeds every
   output row that uses it. Tap j of lane l reads column ox*2 - pl + l*2 + j; the load
   masks keep the columns inside [0, W), so the padding reads as zero and there are no
   scalar edge columns. R and sh are compile-time constants at every call (the loops
   unroll, the tap selection folds away); sh only matters for R > 1. */
MNN_DW3X3_INLINE void mnn_dw3x3_rows(const float *x, ptrdiff_t H, ptrdiff_t W,
                                     const __m512 kv[9], __m512 vb, __m512 vlo, __m512 vhi,
                                     float *y, ptrdiff_t oy, ptrdiff_t OW, ptrdiff_t sh,
                                     ptrdiff_t pt, ptrdiff_t pl, const float *zeros,
                                     const int R) {
    const int sw = 2;
    const int Q = (int)((R - 1) * sh + 3);
    const float *rows[(MNN_DW3X3_MAX_ROWS - 1) * 2 + 3];  /* sh <= 2 when R > 1 */
    for (int q = 0; q < Q; q++) {
        ptrdiff_t iy = oy * sh - pt + q;
        rows[q] = (iy >= 0 && iy < H) ? x + iy * W : zeros;
    }
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                                          27, 29, 31);
    /* lane l <- 2l + 2 for the narrow stride-2 step (lanes 7 .. 15 unused, kept in range) */
    const __m512i even2 = _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0);
    for (ptrdiff_t ox = 0; ox < OW; ox += 16) {
        ptrdiff_t c = OW - ox < 16 ? OW - ox : 16;
        ptrdiff_t base = ox * sw - pl;  /* column of lane 0, tap 0 */
        __mmask16 m[4];
        if (2 * c + 1 <= 16) {
            /* narrow step (up to 7 outputs): all three taps' columns base .. base + 2c
               fit one vector, loaded once per row */
            m[0] = mnn_dw3x3_lanes(-base, 2 * c + 1 < W - base ? 2 * c + 1 : W - base);
            m[1] = m[2] = m[3] = 0;
        } else {
            /* taps 0, 1: columns base .. base + 2c - 1 in two vectors; tap 2: columns
               base + 2 .. base + 2c in two more (then even/odd lanes picked out) */
            ptrdiff_t ha = 2 * c < W - base ? 2 * c : W - base;
            ptrdiff_t hb = 2 * c - 1 < W - base - 2 ? 2 * c - 1 : W - base - 2;
            m[0] = mnn_dw3x3_lanes(-base, ha);
            m[1] = mnn_dw3x3_lanes(-base - 16, ha - 16);
            m[2] = mnn_dw3x3_lanes(-base - 2, hb);
            m[3] = mnn_dw3x3_lanes(-base - 18, hb - 16);
        }
        __m512 acc[MNN_DW3X3_MAX_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) acc[r] = vb;
#pragma GCC unroll 16
        for (int q = 0; q < Q; q++) {
            __m512 t[3];
            if (2 * c + 1 <= 16) {
                __m512 a = mnn_dw3x3_load(rows[q], base, m[0]);
                t[0] = _mm512_permutexvar_ps(even, a);
                t[1] = _mm512_permutexvar_ps(odd, a);
                t[2] = _mm512_permutexvar_ps(even2, a);
            } else {
                __m512 a0 = mnn_dw3x3_load(rows[q], base, m[0]);
                __m512 a1 = mnn_dw3x3_load(rows[q], base + 16, m[1]);
                __m512 b0 = mnn_dw3x3_load(rows[q], base + 2, m[2]);
                __m512 b1 = mnn_dw3x3_load(rows[q], base + 18, m[3]);
                t[0] = _mm512_permutex2var_ps(a0, even, a1);
                t[1] = _mm512_permutex2var_ps(a0, odd, a1);
                t[2] = _mm512_permutex2var_ps(b0, even, b1);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                ptrdiff_t i = q - r * sh;  /* kernel row this input row is for output r */
                if (i < 0 || i > 2) continue;
                acc[r] = _mm512_fmadd_ps(kv[3 * i], t[0], acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 1], t[1], acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 2], t[2], acc[r]);
            }
        }
        __mmask16 ms = mnn_dw3x3_mask(c);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            /* the bounds first: max and min return their second operand when one is
               NaN, so a NaN passes through the clamp (as torch's clamp and relu) */
            __m512 v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r]));
            _mm512_mask_storeu_ps(y + (oy + r) * OW + ox, ms, v);
        }
    }
}

/* Column stride 1: R <= 4 rows at once as mnn_dw3x3_rows, each input row loaded once
   per 16-lane step (its tap-1 columns) instead of once per tap. Taps 0 and 2 are those
   vectors shifted by one lane (valignd) with the previous step's vector (carried in
   registers) and the next step's (loaded here, used as tap 1 of the next step).
   Unaligned loads of the three taps mostly straddle two cache lines; one load and two
   in-register shifts cost less: 0.90-0.96x the time over MobileNetV2's stride-1 planes
   (Xeon Skylake-SP; 1.2-1.4x faster in an L1-hot loop on Zen 5) with the same
   multiply-adds in the same order, so the same values. Every load keeps only columns
   inside [0, W) (zero elsewhere), so the shifted vectors hold zeros exactly where the
   taps fall outside the row. R is a constant at every call; R <= 4 (more carried
   vectors would spill). */
MNN_DW3X3_INLINE void mnn_dw3x3_rows_s1(const float *x, ptrdiff_t H, ptrdiff_t W,
                                        const __m512 kv[9], __m512 vb, __m512 vlo,
                                        __m512 vhi, float *y, ptrdiff_t oy, ptrdiff_t OW,
                                        ptrdiff_t sh, ptrdiff_t pt, ptrdiff_t pl,
                                        const float *zeros, const int R) {
    const int Q = (int)((R - 1) * sh + 3);
    const float *rows[(MNN_DW3X3_MAX_ROWS - 1) * 2 + 3];  /* sh <= 2 when R > 1 */
    __m512 prev[(MNN_DW3X3_MAX_ROWS - 1) * 2 + 3], cur[(MNN_DW3X3_MAX_ROWS - 1) * 2 + 3];
    ptrdiff_t col = 1 - pl;  /* column of lane 0, tap 1, at the first step */
    __mmask16 mp = mnn_dw3x3_lanes(-(col - 16), W - (col - 16));
    __mmask16 mc = mnn_dw3x3_lanes(-col, W - col);
#pragma GCC unroll 16
    for (int q = 0; q < Q; q++) {
        ptrdiff_t iy = oy * sh - pt + q;
        rows[q] = (iy >= 0 && iy < H) ? x + iy * W : zeros;
        prev[q] = mnn_dw3x3_load(rows[q], col - 16, mp);
        cur[q] = mnn_dw3x3_load(rows[q], col, mc);
    }
    for (ptrdiff_t ox = 0; ox < OW; ox += 16, col += 16) {
        ptrdiff_t c = OW - ox < 16 ? OW - ox : 16;
        __mmask16 mn = mnn_dw3x3_lanes(-(col + 16), W - (col + 16));
        __m512 acc[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) acc[r] = vb;
#pragma GCC unroll 16
        for (int q = 0; q < Q; q++) {
            __m512 nxt = mn ? mnn_dw3x3_load(rows[q], col + 16, mn) : _mm512_setzero_ps();
            __m512i pv = _mm512_castps_si512(prev[q]), cv = _mm512_castps_si512(cur[q]);
            __m512 t0 = _mm512_castsi512_ps(_mm512_alignr_epi32(cv, pv, 15));
            __m512 t2 = _mm512_castsi512_ps(
                _mm512_alignr_epi32(_mm512_castps_si512(nxt), cv, 1));
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                ptrdiff_t i = q - r * sh;  /* kernel row this input row is for output r */
                if (i < 0 || i > 2) continue;
                acc[r] = _mm512_fmadd_ps(kv[3 * i], t0, acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 1], cur[q], acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 2], t2, acc[r]);
            }
            prev[q] = cur[q];
            cur[q] = nxt;
        }
        __mmask16 ms = mnn_dw3x3_mask(c);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            /* the bounds first: NaN passes through the clamp (see mnn_dw3x3_rows) */
            __m512 v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r]));
            _mm512_mask_storeu_ps(y + (oy + r) * OW + ox, ms, v);
        }
    }
}

/* Stride 2 in both directions with at most 7 outputs per row (14x14 -> 7x7): a row
   fills 7 of 16 lanes, so two output rows share a vector (row oy in lanes 0 .. OW - 1,
   row oy + 1 in lanes OW .. 2 OW - 1, which is also how they lie in y). Each input row's
   columns -pl .. 2 OW - pl fit one masked load; one two-source permute per tap takes
   the even columns of both output rows' input rows: half the permutes and FMAs of the
   row blocks. */
static void mnn_dw3x3_pairs_s2(const float *x, ptrdiff_t H, ptrdiff_t W,
                               const __m512 kv[9], __m512 vb, __m512 vlo, __m512 vhi,
                               float *y, ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t pt,
                               ptrdiff_t pl, const float *zeros) {
    int idx[3][16];
    for (int j = 0; j < 3; j++)
        for (int l = 0; l < 16; l++)
            idx[j][l] = l < OW ? 2 * l + j : (l < 2 * OW ? 16 + 2 * (l - OW) + j : 0);
    const __m512i p0 = _mm512_loadu_si512(idx[0]), p1 = _mm512_loadu_si512(idx[1]);
    const __m512i p2 = _mm512_loadu_si512(idx[2]);
    const ptrdiff_t base = -pl;
    const __mmask16 m = mnn_dw3x3_lanes(-base, 2 * OW + 1 < W - base ? 2 * OW + 1 : W - base);
    for (ptrdiff_t oy = 0; oy < OH; oy += 2) {
        /* input rows 2 oy - pt .. 2 oy - pt + 4; the second output row's are absent
           (zeros) when oy is the last row, and its lanes are not stored */
        __m512 L[5];
        for (int q = 0; q < 5; q++) {
            ptrdiff_t iy = 2 * oy - pt + q;
            const float *row = (iy >= 0 && iy < H && (q < 3 || oy + 1 < OH)) ? x + iy * W
                                                                             : zeros;
            L[q] = mnn_dw3x3_load(row, base, m);
        }
        __m512 acc[3];
        for (int i = 0; i < 3; i++) {
            acc[i] = _mm512_mul_ps(kv[3 * i], _mm512_permutex2var_ps(L[i], p0, L[i + 2]));
            acc[i] = _mm512_fmadd_ps(kv[3 * i + 1], _mm512_permutex2var_ps(L[i], p1, L[i + 2]),
                                     acc[i]);
            acc[i] = _mm512_fmadd_ps(kv[3 * i + 2], _mm512_permutex2var_ps(L[i], p2, L[i + 2]),
                                     acc[i]);
        }
        __m512 v = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], vb));
        v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v));
        _mm512_mask_storeu_ps(y + oy * OW, mnn_dw3x3_mask(oy + 1 < OH ? 2 * OW : OW), v);
    }
}

/* R rows from oy by the row kernel of column stride sw (1: mnn_dw3x3_rows_s1, 2:
   mnn_dw3x3_rows); in the row blocks sw and R are constants, so the choice folds away. */
MNN_DW3X3_INLINE void mnn_dw3x3_block(const float *x, ptrdiff_t H, ptrdiff_t W,
                                      const __m512 kv[9], __m512 vb, __m512 vlo,
                                      __m512 vhi, float *y, ptrdiff_t oy, ptrdiff_t OW,
                                      ptrdiff_t sh, const int sw, ptrdiff_t pt,
                                      ptrdiff_t pl, const float *zeros, const int R) {
    if (sw == 1)
        mnn_dw3x3_rows_s1(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, pt, pl, zeros, R);
    else
        mnn_dw3x3_rows(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, pt, pl, zeros, R);
}

/* Rows [0, OH) in blocks of R = 4 (then 2, then 1) with stride constants sh, sw (both 1
   or both 2). */
MNN_DW3X3_INLINE void mnn_dw3x3_all_rows(const float *x, ptrdiff_t H, ptrdiff_t W,
                                         const __m512 kv[9], __m512 vb, __m512 vlo,
                                         __m512 vhi, float *y, ptrdiff_t OH, ptrdiff_t OW,
                                         const ptrdiff_t sh, const int sw, ptrdiff_t pt,
                                         ptrdiff_t pl, const float *zeros) {
    ptrdiff_t oy = 0;
    for (; oy + 4 <= OH; oy += 4)
        mnn_dw3x3_block(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, sw, pt, pl, zeros, 4);
    for (; oy + 2 <= OH; oy += 2)
        mnn_dw3x3_block(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, sw, pt, pl, zeros, 2);
    for (; oy < OH; oy++)
        mnn_dw3x3_block(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, sw, pt, pl, zeros, 1);
}

/* Deinterleaved rows: a row of W columns stored as its E = (W + 1) / 2 even columns
   (0, 2, ...) followed by its W / 2 odd ones. At stride 2 with pads 1, output column ox
   reads columns 2 ox - 1, 2 ox and 2 ox + 1: odd ox - 1, even ox and odd ox, so 16
   outputs' taps are three runs of 16 consecutive floats. */

/* dst <- src (one row of W) deinterleaved: two loads and two permutes per 32 columns;
   the masks keep the loads inside the W columns and the stores inside dst's W. */
static inline void mnn_dw3x3_deinterleave_row(const float *src, ptrdiff_t W, float *dst) {
    const ptrdiff_t E = (W + 1) / 2;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                                          27, 29, 31);
    for (ptrdiff_t j = 0; j < W; j += 32) {
        ptrdiff_t n = W - j;  /* columns left from j */
        __m512 a0 = mnn_dw3x3_load(src, j, mnn_dw3x3_mask(n));
        __m512 a1 = mnn_dw3x3_load(src, j + 16, mnn_dw3x3_mask(n - 16));
        _mm512_mask_storeu_ps(dst + j / 2, mnn_dw3x3_mask((n + 1) / 2),
                              _mm512_permutex2var_ps(a0, even, a1));
        _mm512_mask_storeu_ps(dst + E + j / 2, mnn_dw3x3_mask(n / 2),
                              _mm512_permutex2var_ps(a0, odd, a1));
    }
}

/* R <= 4 output rows oy .. oy + R - 1 of a deinterleaved plane, stride 2, pads pt
   above and 1 left, the whole width OW = E in 16-lane steps (as mnn_dw3x3_rows: each
   input row loaded once per step for every output row that uses it). Tap 0 of lane l
   reads odd column ox + l - 1, tap 1 even ox + l, tap 2 odd ox + l; the masks keep the
   indices inside [0, W / 2) and [0, E), so a tap off the row reads zero. */
MNN_DW3X3_INLINE void mnn_dw3x3_rows_s2_deint(const float *x, ptrdiff_t H, ptrdiff_t W,
                                              const __m512 kv[9], __m512 vb, __m512 vlo,
                                              __m512 vhi, float *y, ptrdiff_t oy,
                                              ptrdiff_t OW, ptrdiff_t pt,
                                              const float *zeros, const int R) {
    const int Q = 2 * (R - 1) + 3;
    const ptrdiff_t E = (W + 1) / 2, O = W / 2;
    const float *rows[(MNN_DW3X3_MAX_ROWS - 1) * 2 + 3];
    for (int q = 0; q < Q; q++) {
        ptrdiff_t iy = oy * 2 - pt + q;
        rows[q] = (iy >= 0 && iy < H) ? x + iy * W : zeros;
    }
    for (ptrdiff_t ox = 0; ox < OW; ox += 16) {
        ptrdiff_t c = OW - ox < 16 ? OW - ox : 16;
        __mmask16 m1 = mnn_dw3x3_mask(c);
        __mmask16 m0 = mnn_dw3x3_lanes(1 - ox, O - ox + 1) & m1;
        __mmask16 m2 = mnn_dw3x3_lanes(0, O - ox) & m1;
        __m512 acc[MNN_DW3X3_MAX_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) acc[r] = vb;
#pragma GCC unroll 16
        for (int q = 0; q < Q; q++) {
            __m512 t0 = mnn_dw3x3_load(rows[q] + E, ox - 1, m0);
            __m512 t1 = mnn_dw3x3_load(rows[q], ox, m1);
            __m512 t2 = mnn_dw3x3_load(rows[q] + E, ox, m2);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                ptrdiff_t i = q - r * 2;  /* kernel row this input row is for output r */
                if (i < 0 || i > 2) continue;
                acc[r] = _mm512_fmadd_ps(kv[3 * i], t0, acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 1], t1, acc[r]);
                acc[r] = _mm512_fmadd_ps(kv[3 * i + 2], t2, acc[r]);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            /* the bounds first: NaN passes through the clamp (see mnn_dw3x3_rows) */
            __m512 v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r]));
            _mm512_mask_storeu_ps(y + (oy + r) * OW + ox, m1, v);
        }
    }
}

/* The whole deinterleaved plane x (H rows of W) at stride 2, pads pt above and 1 left,
   into y (OH x OW, OW == (W + 1) / 2; the caller checks both). */
static void mnn_dw3x3_plane_s2_deint(const float *x, ptrdiff_t H, ptrdiff_t W,
                                     const float *k, float b, float *y, ptrdiff_t OH,
                                     ptrdiff_t OW, ptrdiff_t pt, const float *zeros,
                                     float lo, float hi) {
    __m512 kv[9];
    for (int t = 0; t < 9; t++) kv[t] = _mm512_set1_ps(k[t]);
    __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    ptrdiff_t oy = 0;
    for (; oy + 4 <= OH; oy += 4)
        mnn_dw3x3_rows_s2_deint(x, H, W, kv, vb, vlo, vhi, y, oy, OW, pt, zeros, 4);
    for (; oy + 2 <= OH; oy += 2)
        mnn_dw3x3_rows_s2_deint(x, H, W, kv, vb, vlo, vhi, y, oy, OW, pt, zeros, 2);
    for (; oy < OH; oy++)
        mnn_dw3x3_rows_s2_deint(x, H, W, kv, vb, vlo, vhi, y, oy, OW, pt, zeros, 1);
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

/* Small planes, stride 1, output as wide as the input (OW == W, e.g. 7x7 with pads 1):
   rows of 7 would fill 7 of 16 lanes, so the plane is instead run as one flat stream of
   OH * OW outputs, 16 per step. Output t = oy * W + ox reads input t + (i - pt) * W +
   (j - pl) for tap (i, j): the same offset for every lane, so a tap is one load, and a
   per-step, per-tap mask keeps the lanes whose input column and row are inside the
   image (then the flat index is inside [0, H * W)). The masks depend only on the
   geometry: mnn_dw3x3_flat_masks computes them once for all planes of a call.

   Returns the number of 16-lane steps (masks[v * 9 + t] for step v, tap t), or 0 when
   the flat stream is not used for this geometry (not AVX-512, strides other than 1,
   OW != W, more than cap steps, or rows wide enough that the row blocks fill their
   lanes as well: flat must save at least a quarter of the steps). */
static ptrdiff_t mnn_dw3x3_flat_masks(ptrdiff_t H, ptrdiff_t W, ptrdiff_t OH, ptrdiff_t OW,
                                      ptrdiff_t sh, ptrdiff_t sw, ptrdiff_t pt,
                                      ptrdiff_t pl, unsigned short *masks, ptrdiff_t cap) {
#if defined(__AVX512F__)
    if (sh != 1 || sw != 1 || OW != W || W < 1 || OH < 1) return 0;
    ptrdiff_t n = OH * OW, nvec = (n + 15) / 16;
    if (nvec > cap || 4 * nvec > 3 * OH * ((OW + 15) / 16)) return 0;
    /* lane l of step v is output o = 16 v + l at (row, col), walked without a division */
    ptrdiff_t row = 0, col = 0;
    for (ptrdiff_t v = 0; v < nvec; v++) {
        unsigned m[9] = {0};
        for (int l = 0; l < 16 && v * 16 + l < n; l++) {
            for (int t = 0; t < 9; t++) {
                ptrdiff_t r = row - pt + t / 3, c = col - pl + t % 3;
                if (r >= 0 && r < H && c >= 0 && c < W) m[t] |= 1u << l;
            }
            if (++col == W) {
                col = 0;
                row++;
            }
        }
        for (int t = 0; t < 9; t++) masks[v * 9 + t] = (unsigned short)m[t];
    }
    return nvec;
#else
    (void)H; (void)W; (void)OH; (void)OW; (void)sh; (void)sw; (void)pt; (void)pl;
    (void)masks; (void)cap;
    return 0;
#endif
}

/* One plane by the flat stream (only after mnn_dw3x3_flat_masks returned nvec > 0). */
static void mnn_dw3x3_plane_flat(const float *x, ptrdiff_t W, const float *k, float b,
                                 float *y, ptrdiff_t OH, ptrdiff_t pt, ptrdiff_t pl,
                                 const unsigned short *masks, ptrdiff_t nvec, float lo,
                                 float hi) {
#if defined(__AVX512F__)
    __m512 kv[9];
    ptrdiff_t off[9];
    for (int t = 0; t < 9; t++) {
        kv[t] = _mm512_set1_ps(k[t]);
        off[t] = (t / 3 - pt) * W + (t % 3 - pl);
    }
    __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    ptrdiff_t n = OH * W;
    for (ptrdiff_t v = 0; v < nvec; v++) {
        const unsigned short *m = masks + v * 9;
        __m512 acc = vb;
        for (int t = 0; t < 9; t++)
            acc = _mm512_fmadd_ps(kv[t], mnn_dw3x3_load(x, v * 16 + off[t], m[t]), acc);
        acc = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc));
        _mm512_mask_storeu_ps(y + v * 16, mnn_dw3x3_mask(n - v * 16), acc);
    }
#else
    (void)x; (void)W; (void)k; (void)b; (void)y; (void)OH; (void)pt; (void)pl;
    (void)masks; (void)nvec; (void)lo; (void)hi;
#endif
}

/* The whole plane: x is H x W, y is OH x OW (both contiguous), sw is 1 or 2. */
static void mnn_dw3x3_plane(const float *x, ptrdiff_t H, ptrdiff_t W, const float *k,
                            float b, float *y, ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t sh,
                            int sw, ptrdiff_t pt, ptrdiff_t pl, const float *zeros,
                            float lo, float hi) {
#if defined(__AVX512F__)
    __m512 kv[9];
    for (int t = 0; t < 9; t++) kv[t] = _mm512_set1_ps(k[t]);
    __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    /* Each call spells its strides as constants so the row blocks specialize. */
    if (sw == 1 && sh == 1)
        mnn_dw3x3_all_rows(x, H, W, kv, vb, vlo, vhi, y, OH, OW, 1, 1, pt, pl, zeros);
    else if (sw == 2 && sh == 2 && OW <= 7)
        mnn_dw3x3_pairs_s2(x, H, W, kv, vb, vlo, vhi, y, OH, OW, pt, pl, zeros);
    else if (sw == 2 && sh == 2)
        mnn_dw3x3_all_rows(x, H, W, kv, vb, vlo, vhi, y, OH, OW, 2, 2, pt, pl, zeros);
    else
        for (ptrdiff_t oy = 0; oy < OH; oy++)
            mnn_dw3x3_block(x, H, W, kv, vb, vlo, vhi, y, oy, OW, sh, sw, pt, pl, zeros, 1);
#else
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
        for (ptrdiff_t ox = 0; ox < lo_x; ox++)
            yr[ox] = mnn_dw3x3_clamp(mnn_dw3x3_edge(rows, W, k, b, ox * sw - pl), lo, hi);
        mnn_dw3x3_interior(rows, k, b, yr, lo_x, hi_x, sw, pl, lo, hi);
        for (ptrdiff_t ox = hi_x; ox < OW; ox++)
            yr[ox] = mnn_dw3x3_clamp(mnn_dw3x3_edge(rows, W, k, b, ox * sw - pl), lo, hi);
    }
#endif
}
#endif
