/* Winograd F(m x m, 3x3) convolution, m = 2 or 4, float32, one block of tiles at a time.

   A 3x3 stride-1 convolution producing an m x m output tile reads an a x a input tile
   (a = m + 2). With the transforms of Lavin & Gray, output channel o's tile is
   A^T [ sum_c (G g_oc G^T) * (B^T d_c B) ] A: for each of the P = a*a positions k of the
   transformed tile, one matrix product V[k] (tiles x C) @ U[k] (C x O).

   A block is a run of consecutive tiles of one image (tile t is tile row t / tw_count,
   column t % tw_count), small enough that its transformed input V and products M stay in
   L2: the input transform writes V straight in the row-slab layout the packed SGEMM
   micro-kernel (sgemm_kernel.h, MR tiles x NR output channels) reads, the products go
   through that micro-kernel against the weight packed once in NR-column strips, and the
   output transform reads M while it is still in cache.

   Layouts (floats):
     V  [P][groups][C][MR]     groups = block rows / MR; rows past the block's tiles are 0
     Ub [P][S][C][NR]          S strips of NR output channels (channels past O are 0)
     M  [rows][P][S*NR]        rows = groups * MR: one tile's P products together, so
                               the output transform reads them as one stream
   Position k = i*a + j is row i, column j of the transformed tile; U must use the same.

   Bounds: every input read is inside the image (interior tiles read their a x a patch,
   edge tiles test each pixel), every output write is tested against OH, OW and O, and the
   scratch sizes are what winograd.pyx checks before calling. */
#ifndef MNN_WINOGRAD_KERNEL_H
#define MNN_WINOGRAD_KERNEL_H
#include <stddef.h>
#include <string.h>
#include "sgemm_kernel.h"

/* Output channels per vector in the output transform; S*NR is a multiple of it. */
#define MNN_WG_OL 16

/* In place B^T along one axis for MR lanes: value r of lane l is p[r*s + l]. */
static inline void mnn_wg_bt(int m, float *p, ptrdiff_t s) {
    if (m == 4) {
        for (int l = 0; l < MNN_SG_MR; l++) {
            float d0 = p[l], d1 = p[s + l], d2 = p[2 * s + l];
            float d3 = p[3 * s + l], d4 = p[4 * s + l], d5 = p[5 * s + l];
            p[l] = 4 * d0 - 5 * d2 + d4;
            p[s + l] = -4 * d1 - 4 * d2 + d3 + d4;
            p[2 * s + l] = 4 * d1 - 4 * d2 - d3 + d4;
            p[3 * s + l] = -2 * d1 - d2 + 2 * d3 + d4;
            p[4 * s + l] = 2 * d1 - d2 - 2 * d3 + d4;
            p[5 * s + l] = 4 * d1 - 5 * d3 + d5;
        }
    } else {
        for (int l = 0; l < MNN_SG_MR; l++) {
            float d0 = p[l], d1 = p[s + l], d2 = p[2 * s + l], d3 = p[3 * s + l];
            p[l] = d0 - d2;
            p[s + l] = d1 + d2;
            p[2 * s + l] = d2 - d1;
            p[3 * s + l] = d1 - d3;
        }
    }
}

/* o <- A^T p along one axis for MNN_WG_OL lanes: a values at stride s -> m at stride os. */
static inline __attribute__((always_inline)) void mnn_wg_at(int m, const float *p, ptrdiff_t s, float *o, ptrdiff_t os) {
    if (m == 4) {
        for (int l = 0; l < MNN_WG_OL; l++) {
            float m0 = p[l], m1 = p[s + l], m2 = p[2 * s + l];
            float m3 = p[3 * s + l], m4 = p[4 * s + l], m5 = p[5 * s + l];
            float a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
            o[l] = m0 + a + c;
            o[os + l] = b + 2 * e;
            o[2 * os + l] = a + 4 * c;
            o[3 * os + l] = b + 8 * e + m5;
        }
    } else {
        for (int l = 0; l < MNN_WG_OL; l++) {
            float m0 = p[l], m1 = p[s + l], m2 = p[2 * s + l], m3 = p[3 * s + l];
            o[l] = m0 + m1 + m2;
            o[os + l] = m1 - m2 - m3;
        }
    }
}

/* V <- transformed input of channels [c0, c1) for tiles [t0, t0 + nt) of one image
   x (C x H x W); `groups` row slabs of MR tiles (groups * MR >= nt). */
static void mnn_wg_input(int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
                         ptrdiff_t pt, ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0,
                         ptrdiff_t nt, ptrdiff_t groups, ptrdiff_t c0, ptrdiff_t c1,
                         float *V) {
    const int a = m + 2, P = a * a;
    float d[36 * MNN_SG_MR];
    ptrdiff_t ys[MNN_SG_MR], xs[MNN_SG_MR];
    int kind[MNN_SG_MR];   /* 0: past the block (zeros), 1: interior, 2: at an edge */
    for (ptrdiff_t g = 0; g < groups; g++) {
        for (int l = 0; l < MNN_SG_MR; l++) {
            ptrdiff_t t = g * MNN_SG_MR + l;
            kind[l] = 0;
            ys[l] = xs[l] = 0;
            if (t >= nt) continue;
            ys[l] = (t0 + t) / tw_count * m - pt;
            xs[l] = (t0 + t) % tw_count * m - pl;
            kind[l] = (ys[l] >= 0 && ys[l] + a <= H && xs[l] >= 0 && xs[l] + a <= W) ? 1 : 2;
        }
        for (ptrdiff_t c = c0; c < c1; c++) {
            const float *xc = x + c * H * W;
            for (int l = 0; l < MNN_SG_MR; l++) {
                if (kind[l] == 1) {
                    const float *p = xc + ys[l] * W + xs[l];
                    for (int i = 0; i < a; i++)
                        for (int j = 0; j < a; j++) d[(i * a + j) * MNN_SG_MR + l] = p[i * W + j];
                } else if (kind[l] == 2) {
                    for (int i = 0; i < a; i++) {
                        ptrdiff_t iy = ys[l] + i;
                        for (int j = 0; j < a; j++) {
                            ptrdiff_t ix = xs[l] + j;
                            d[(i * a + j) * MNN_SG_MR + l] =
                                (iy >= 0 && iy < H && ix >= 0 && ix < W) ? xc[iy * W + ix] : 0.0f;
                        }
                    }
                } else {
                    for (int k = 0; k < P; k++) d[k * MNN_SG_MR + l] = 0.0f;
                }
            }
            for (int j = 0; j < a; j++) mnn_wg_bt(m, d + j * MNN_SG_MR, a * MNN_SG_MR);
            for (int i = 0; i < a; i++) mnn_wg_bt(m, d + i * a * MNN_SG_MR, MNN_SG_MR);
            for (int k = 0; k < P; k++)
                memcpy(V + ((k * groups + g) * C + c) * MNN_SG_MR, d + k * MNN_SG_MR,
                       MNN_SG_MR * sizeof(float));
        }
    }
}

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#define MNN_WG_FAST_INPUT 1
/* Width of the zero-padded rows the fast input transform reads: the patches of a run of
   8 tiles starting at column q span q .. q + 8m + 1 < q + 40. */
#define MNN_WG_ROW_SLACK 40

/* B^T along the patch columns for 8 tiles: d[j] holds column j of one patch row. */
static inline __attribute__((always_inline)) void mnn_wg_bt8(int m, __m256 *d) {
    if (m == 4) {
        __m256 d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3], d4 = d[4], d5 = d[5];
        __m256 f4 = _mm256_set1_ps(4.0f), f5 = _mm256_set1_ps(5.0f), f2 = _mm256_set1_ps(2.0f);
        __m256 s24 = _mm256_sub_ps(d4, _mm256_mul_ps(f4, d2));      /* d4 - 4 d2 */
        __m256 s13 = _mm256_sub_ps(d3, _mm256_mul_ps(f4, d1));      /* d3 - 4 d1 */
        __m256 t24 = _mm256_sub_ps(d4, d2);                          /* d4 - d2 */
        __m256 t13 = _mm256_mul_ps(f2, _mm256_sub_ps(d3, d1));      /* 2 (d3 - d1) */
        d[0] = _mm256_add_ps(_mm256_fnmadd_ps(f5, d2, _mm256_mul_ps(f4, d0)), d4);
        d[1] = _mm256_add_ps(s24, s13);
        d[2] = _mm256_sub_ps(s24, s13);
        d[3] = _mm256_add_ps(t24, t13);
        d[4] = _mm256_sub_ps(t24, t13);
        d[5] = _mm256_add_ps(_mm256_fnmadd_ps(f5, d3, _mm256_mul_ps(f4, d1)), d5);
    } else {
        __m256 d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3];
        d[0] = _mm256_sub_ps(d0, d2);
        d[1] = _mm256_add_ps(d1, d2);
        d[2] = _mm256_sub_ps(d2, d1);
        d[3] = _mm256_sub_ps(d1, d3);
    }
}

/* B^T along the patch rows, two patch columns per zmm: r[i] holds patch row i. */
static inline __attribute__((always_inline)) void mnn_wg_bt16(int m, __m512 *r) {
    if (m == 4) {
        __m512 d0 = r[0], d1 = r[1], d2 = r[2], d3 = r[3], d4 = r[4], d5 = r[5];
        __m512 f4 = _mm512_set1_ps(4.0f), f5 = _mm512_set1_ps(5.0f), f2 = _mm512_set1_ps(2.0f);
        __m512 s24 = _mm512_fnmadd_ps(f4, d2, d4);
        __m512 s13 = _mm512_fnmadd_ps(f4, d1, d3);
        __m512 t24 = _mm512_sub_ps(d4, d2);
        __m512 t13 = _mm512_mul_ps(f2, _mm512_sub_ps(d3, d1));
        r[0] = _mm512_add_ps(_mm512_fnmadd_ps(f5, d2, _mm512_mul_ps(f4, d0)), d4);
        r[1] = _mm512_add_ps(s24, s13);
        r[2] = _mm512_sub_ps(s24, s13);
        r[3] = _mm512_add_ps(t24, t13);
        r[4] = _mm512_sub_ps(t24, t13);
        r[5] = _mm512_add_ps(_mm512_fnmadd_ps(f5, d3, _mm512_mul_ps(f4, d1)), d5);
    } else {
        __m512 d0 = r[0], d1 = r[1], d2 = r[2], d3 = r[3];
        r[0] = _mm512_sub_ps(d0, d2);
        r[1] = _mm512_add_ps(d1, d2);
        r[2] = _mm512_sub_ps(d2, d1);
        r[3] = _mm512_sub_ps(d1, d3);
    }
}

/* The input transform with AVX-512: per channel, the block's rows are copied into a
   zero-padded plane (pad: (rows of the block's tile rows) x (TW*m + 2 + slack) floats),
   then runs of up to 8 tiles of one tile row are transformed at once: a patch row of 8
   tiles is de-interleaved from contiguous loads (lane l = tile l, two patch columns per
   zmm), transformed down the rows on zmm, split into one ymm per column, transformed
   along the columns and stored straight into V's slabs. */
static inline __attribute__((always_inline)) void mnn_wg_input_fast_m(
        const int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t pt,
        ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0, ptrdiff_t nt, ptrdiff_t groups,
        ptrdiff_t c0, ptrdiff_t c1, float *V, float *pad) {
    const int a = m + 2, P = a * a;
    const ptrdiff_t th_a = t0 / tw_count, th_b = (t0 + nt - 1) / tw_count;
    const ptrdiff_t rows = (th_b - th_a) * m + a;
    const ptrdiff_t wp = tw_count * m + 2 + MNN_WG_ROW_SLACK;
    /* Padded column q holds input column q - pl: inside the image for q in [q0, q1). */
    const ptrdiff_t q0 = pl < wp ? pl : wp;
    const ptrdiff_t q1 = W + pl < wp ? W + pl : wp;
    /* Tile l's columns j, j+1 (m = 4: j = 0, 2; m = 2: j = 0) from 32 floats; m = 4's
       columns 4, 5 come from the same pattern 4 floats further. */
    const __m512i idx01 = m == 4 ? _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28,
                                                     1, 5, 9, 13, 17, 21, 25, 29)
                                 : _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14,
                                                     1, 3, 5, 7, 9, 11, 13, 15);
    const __m512i idx23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30,
                                            3, 7, 11, 15, 19, 23, 27, 31);
    const ptrdiff_t tail = nt % 8;
    /* Each position's transformed tiles of one channel, in tile order, with room for the
       last run's 8 lanes: plain stores here, whole slab rows into V afterwards. */
    const ptrdiff_t sw = groups * 8 + 8;
    float *stage = pad + rows * wp, *stage2 = stage + P * sw;
    for (ptrdiff_t c = c0; c < c1; c++) {
        const float *xc = x + c * H * W;
        for (ptrdiff_t r = 0; r < rows; r++) {
            float *dst = pad + r * wp;
            ptrdiff_t iy = th_a * m + r - pt;
            if (iy < 0 || iy >= H || q1 <= q0) {
                memset(dst, 0, wp * sizeof(float));
                continue;
            }
            memset(dst, 0, q0 * sizeof(float));
            memcpy(dst + q0, xc + iy * W + (q0 - pl), (q1 - q0) * sizeof(float));
            memset(dst + q1, 0, (wp - q1) * sizeof(float));
        }
        for (ptrdiff_t th = th_a; th <= th_b; th++) {
            ptrdiff_t tws = th == th_a ? t0 % tw_count : 0;
            ptrdiff_t twe = th == th_b ? (t0 + nt - 1) % tw_count + 1 : tw_count;
            const float *prow = pad + (th - th_a) * m * wp;
            for (ptrdiff_t tw = tws; tw < twe; tw += 8) {
                ptrdiff_t t = th * tw_count + tw - t0;
                __m512 z[3][6];   /* z[p][i]: patch row i, columns 2p (low) and 2p+1 */
#pragma GCC unroll 6
                for (int i = 0; i < a; i++) {
                    const float *q = prow + i * wp + tw * m;
                    if (m == 4) {
                        __m512 lo = _mm512_loadu_ps(q), hi = _mm512_loadu_ps(q + 16);
                        __m512 lo4 = _mm512_loadu_ps(q + 4), hi4 = _mm512_loadu_ps(q + 20);
                        z[0][i] = _mm512_permutex2var_ps(lo, idx01, hi);
                        z[1][i] = _mm512_permutex2var_ps(lo, idx23, hi);
                        z[2][i] = _mm512_permutex2var_ps(lo4, idx01, hi4);
                    } else {
                        z[0][i] = _mm512_permutexvar_ps(idx01, _mm512_loadu_ps(q));
                        z[1][i] = _mm512_permutexvar_ps(idx01, _mm512_loadu_ps(q + 2));
                    }
                }
#pragma GCC unroll 3
                for (int p = 0; p < a / 2; p++) mnn_wg_bt16(m, z[p]);
#pragma GCC unroll 6
                for (int i = 0; i < a; i++) {
                    __m256 d[6];
#pragma GCC unroll 3
                    for (int p = 0; p < a / 2; p++) {
                        d[2 * p] = _mm512_castps512_ps256(z[p][i]);
                        d[2 * p + 1] = _mm512_extractf32x8_ps(z[p][i], 1);
                    }
                    mnn_wg_bt8(m, d);
#pragma GCC unroll 6
                    for (int j = 0; j < a; j++)
                        _mm256_storeu_ps(stage + (i * a + j) * sw + t, d[j]);
                }
            }
        }
        /* Staged rows to V's slabs, two channels at a time so each store fills a cache
           line (masked stores straight into the slabs, or 32-byte halves of lines a
           channel apart, were slow); tiles past the block are zeros. */
        if (tail) {
            for (int k = 0; k < P; k++) memset(stage + k * sw + nt, 0, (8 - tail) * sizeof(float));
        }
        if (((c - c0) & 1) == 0 && c + 1 < c1) {
            float *tmp = stage;    /* even channel: keep it, the odd one fills the other */
            stage = stage2;
            stage2 = tmp;
            continue;
        }
        for (int k = 0; k < P; k++) {
            const float *row = stage + k * sw;
            if (((c - c0) & 1) == 1) {
                const float *prev = stage2 + k * sw;
                for (ptrdiff_t g = 0; g < groups; g++) {
                    __m512 both = _mm512_insertf32x8(
                        _mm512_castps256_ps512(_mm256_loadu_ps(prev + g * 8)),
                        _mm256_loadu_ps(row + g * 8), 1);
                    _mm512_storeu_ps(V + ((k * groups + g) * C + c - 1) * 8, both);
                }
            } else {
                for (ptrdiff_t g = 0; g < groups; g++)
                    _mm256_storeu_ps(V + ((k * groups + g) * C + c) * 8,
                                     _mm256_loadu_ps(row + g * 8));
            }
        }
    }
}

static void mnn_wg_input_fast(int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
                              ptrdiff_t pt, ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0,
                              ptrdiff_t nt, ptrdiff_t groups, ptrdiff_t c0, ptrdiff_t c1,
                              float *V, float *pad) {
    /* m as a constant: every patch loop unrolls and the patch stays in registers. */
    if (m == 4)
        mnn_wg_input_fast_m(4, x, C, H, W, pt, pl, tw_count, t0, nt, groups, c0, c1, V, pad);
    else
        mnn_wg_input_fast_m(2, x, C, H, W, pt, pl, tw_count, t0, nt, groups, c0, c1, V, pad);
}

/* Floats of the padded plane mnn_wg_input_fast needs for blocks of `block` tiles. */
static inline ptrdiff_t mnn_wg_pad_size(int m, ptrdiff_t tw_count, ptrdiff_t block) {
    ptrdiff_t tile_rows = (block + tw_count - 1) / tw_count + 1;
    ptrdiff_t stage = 2 * (ptrdiff_t)(m + 2) * (m + 2) * ((block + 7) / 8 * 8 + 8);
    return (tile_rows * m + 2) * (tw_count * m + 2 + MNN_WG_ROW_SLACK) + stage;
}
#else
#define MNN_WG_FAST_INPUT 0
static inline ptrdiff_t mnn_wg_pad_size(int m, ptrdiff_t tw_count, ptrdiff_t block) {
    return 0;
}
#endif

/* M[k][:, strips j0..j1) <- V[k] @ Ub[k] for every position k. */
static void mnn_wg_gemm(int P, ptrdiff_t C, ptrdiff_t S, ptrdiff_t groups, const float *V,
                        const float *Ub, float *M, ptrdiff_t j0, ptrdiff_t j1) {
    const ptrdiff_t ldm = S * MNN_SG_NR;
    for (int k = 0; k < P; k++) {
        for (ptrdiff_t j = j0; j < j1; j++) {
            const float *ub = Ub + (k * S + j) * C * MNN_SG_NR;
            for (ptrdiff_t c0 = 0; c0 < C; c0 += MNN_SG_KC) {
                ptrdiff_t kc = C - c0 < MNN_SG_KC ? C - c0 : MNN_SG_KC;
                for (ptrdiff_t g = 0; g < groups; g++) {
                    /* last = 0: no bias or clamp here (the output transform adds them);
                       the bias pointer is then never read. */
                    const float *va = V + ((k * groups + g) * C + c0) * MNN_SG_MR;
                    float *mc = M + (g * MNN_SG_MR * P + k) * ldm + j * MNN_SG_NR;
                    /* The strip's first use asks for the next strip (contiguous in Ub): in
                       a model run the transformed weights stream in from memory. */
                    if (g == 0 && j + 1 < j1)
                        mnn_sg_tile_prefetch(C * MNN_SG_NR, kc, va, ub + c0 * MNN_SG_NR, mc,
                                             P * ldm, MNN_SG_MR, MNN_SG_NR, c0 > 0, 0, ub,
                                             0.0f, 0.0f);
                    else
                        mnn_sg_tile(kc, va, ub + c0 * MNN_SG_NR, mc, P * ldm, MNN_SG_MR,
                                    MNN_SG_NR, c0 > 0, 0, ub, 0.0f, 0.0f);
                }
            }
        }
    }
}

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#define MNN_WG_FAST_STORE 1
/* Store one whole 4x4 output tile of MNN_WG_OL (16) channels: r[(i*4 + j)*16 + l] is
   row i, column j of channel l (bias added; clamped already unless skip). Row i of the
   16 channels is transposed in registers into one 4-float vector per channel, then
   stored (after adding skip's row and clamping, with skip) at yo + l*plane + i*OW. */
static inline __attribute__((always_inline)) void mnn_wg_store_tile4(
        const float *r, float *yo, const float *so, ptrdiff_t plane, ptrdiff_t OW, float lo,
        float hi) {
    __m128 vlo = _mm_set1_ps(lo), vhi = _mm_set1_ps(hi);
    for (int i = 0; i < 4; i++) {
        const float *ri = r + i * 4 * MNN_WG_OL;
        __m512 r0 = _mm512_loadu_ps(ri), r1 = _mm512_loadu_ps(ri + MNN_WG_OL);
        __m512 r2 = _mm512_loadu_ps(ri + 2 * MNN_WG_OL), r3 = _mm512_loadu_ps(ri + 3 * MNN_WG_OL);
        __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
        __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
        /* u[c]'s 128-bit lane k: columns 0..3 of channel 4k + c */
        __m512 u[4] = {_mm512_shuffle_ps(t0, t2, 0x44), _mm512_shuffle_ps(t0, t2, 0xEE),
                       _mm512_shuffle_ps(t1, t3, 0x44), _mm512_shuffle_ps(t1, t3, 0xEE)};
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                ptrdiff_t at = (4 * k + c) * plane + i * OW;
                __m128 v = _mm512_extractf32x4_ps(u[c], k);
                if (so) {
                    /* the bounds first: NaN passes through the clamp */
                    v = _mm_add_ps(v, _mm_loadu_ps(so + at));
                    v = _mm_min_ps(vhi, _mm_max_ps(vlo, v));
                }
                _mm_storeu_ps(yo + at, v);
            }
        }
    }
}
#else
#define MNN_WG_FAST_STORE 0
#endif

/* y (O x OH x OW, one image) tiles [t0, t0 + nt), channels [o0, min(o1, O)) <- A^T M A
   + bias (+ skip, laid out like y, when not NULL), clamped to [lo, hi]. o0 is a
   multiple of MNN_WG_OL; M holds the block's nt tiles (row stride ldm). */
static inline __attribute__((always_inline)) void mnn_wg_output_m(
        const int m, const float *M, ptrdiff_t ldm, ptrdiff_t t0, ptrdiff_t nt,
        ptrdiff_t tw_count, float *y, ptrdiff_t O, ptrdiff_t OH, ptrdiff_t OW,
        const float *bias, float lo, float hi, ptrdiff_t o0, ptrdiff_t o1,
        const float *skip) {
    const int a = m + 2, P = a * a;
    float s[36 * MNN_WG_OL], h[24 * MNN_WG_OL], r[16 * MNN_WG_OL], b[MNN_WG_OL];
    if (o1 > O) o1 = O;
    for (ptrdiff_t t = 0; t < nt; t++) {
        ptrdiff_t oy0 = (t0 + t) / tw_count * m, ox0 = (t0 + t) % tw_count * m;
        for (ptrdiff_t o = o0; o < o1; o += MNN_WG_OL) {
            int lanes = o1 - o < MNN_WG_OL ? (int)(o1 - o) : MNN_WG_OL;
            for (int k = 0; k < P; k++)
                memcpy(s + k * MNN_WG_OL, M + (t * P + k) * ldm + o,
                       MNN_WG_OL * sizeof(float));
            /* columns: a x a -> m x a; rows: m x a -> m x m */
            for (int j = 0; j < a; j++)
                mnn_wg_at(m, s + j * MNN_WG_OL, a * MNN_WG_OL, h + j * MNN_WG_OL,
                          a * MNN_WG_OL);
            for (int i = 0; i < m; i++)
                mnn_wg_at(m, h + i * a * MNN_WG_OL, MNN_WG_OL, r + i * m * MNN_WG_OL,
                          MNN_WG_OL);
            for (int l = 0; l < MNN_WG_OL; l++) b[l] = l < lanes ? bias[o + l] : 0.0f;
            if (skip) {
                /* the clamp after the skip, in the stores below */
                for (int q = 0; q < m * m; q++)
                    for (int l = 0; l < MNN_WG_OL; l++) r[q * MNN_WG_OL + l] += b[l];
            } else {
                for (int q = 0; q < m * m; q++) {
                    for (int l = 0; l < MNN_WG_OL; l++) {
                        float v = r[q * MNN_WG_OL + l] + b[l];
                        v = v < lo ? lo : v;
                        r[q * MNN_WG_OL + l] = v > hi ? hi : v;
                    }
                }
            }
#if MNN_WG_FAST_STORE
            if (m == 4 && lanes == MNN_WG_OL && oy0 + 4 <= OH && ox0 + 4 <= OW) {
                ptrdiff_t at = o * OH * OW + oy0 * OW + ox0;
                mnn_wg_store_tile4(r, y + at, skip ? skip + at : NULL, OH * OW, OW, lo, hi);
                continue;
            }
#endif
            for (int l = 0; l < lanes; l++) {
                ptrdiff_t plane = (o + l) * OH * OW;
                float *yo = y + plane;
                for (int i = 0; i < m && oy0 + i < OH; i++) {
                    for (int j = 0; j < m && ox0 + j < OW; j++) {
                        ptrdiff_t at = (oy0 + i) * OW + ox0 + j;
                        float v = r[(i * m + j) * MNN_WG_OL + l];
                        if (skip) {
                            v += skip[plane + at];
                            v = v < lo ? lo : v;
                            v = v > hi ? hi : v;
                        }
                        yo[at] = v;
                    }
                }
            }
        }
    }
}

static void mnn_wg_output(int m, const float *M, ptrdiff_t ldm,
                          ptrdiff_t t0, ptrdiff_t nt, ptrdiff_t tw_count, float *y,
                          ptrdiff_t O, ptrdiff_t OH, ptrdiff_t OW, const float *bias,
                          float lo, float hi, ptrdiff_t o0, ptrdiff_t o1, const float *skip) {
    /* m as a constant: the transform loops unroll. */
    if (m == 4)
        mnn_wg_output_m(4, M, ldm, t0, nt, tw_count, y, O, OH, OW, bias, lo, hi, o0, o1,
                        skip);
    else
        mnn_wg_output_m(2, M, ldm, t0, nt, tw_count, y, O, OH, OW, bias, lo, hi, o0, o1,
                        skip);
}

/* The input transform by the fastest path compiled in (pad: mnn_wg_pad_size floats). */
static void mnn_wg_input_any(int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
                             ptrdiff_t pt, ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0,
                             ptrdiff_t nt, ptrdiff_t groups, ptrdiff_t c0, ptrdiff_t c1,
                             float *V, float *pad) {
#if MNN_WG_FAST_INPUT
    if (MNN_SG_MR == 8) {
        mnn_wg_input_fast(m, x, C, H, W, pt, pl, tw_count, t0, nt, groups, c0, c1, V, pad);
        return;
    }
#endif
    (void)pad;
    mnn_wg_input(m, x, C, H, W, pt, pl, tw_count, t0, nt, groups, c0, c1, V);
}

/* One whole block: input transform, products, output transform, all channels (skip:
   see mnn_wg_output). */
static void mnn_wg_block(int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
                         ptrdiff_t pt, ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0,
                         ptrdiff_t nt, const float *Ub, ptrdiff_t S, float *V, float *M,
                         float *pad, float *y, ptrdiff_t O, ptrdiff_t OH, ptrdiff_t OW,
                         const float *bias, float lo, float hi, const float *skip) {
    const int a = m + 2;
    const ptrdiff_t groups = (nt + MNN_SG_MR - 1) / MNN_SG_MR;
    mnn_wg_input_any(m, x, C, H, W, pt, pl, tw_count, t0, nt, groups, 0, C, V, pad);
    mnn_wg_gemm(a * a, C, S, groups, V, Ub, M, 0, S);
    mnn_wg_output(m, M, S * MNN_SG_NR, t0, nt, tw_count, y, O, OH, OW,
                  bias, lo, hi, 0, O, skip);
}
#endif
