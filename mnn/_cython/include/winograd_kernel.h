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
     M  [P][rows][S*NR]        rows = groups * MR
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
static inline void mnn_wg_at(int m, const float *p, ptrdiff_t s, float *o, ptrdiff_t os) {
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

/* M[k][:, strips j0..j1) <- V[k] @ Ub[k] for every position k. */
static void mnn_wg_gemm(int P, ptrdiff_t C, ptrdiff_t S, ptrdiff_t groups, const float *V,
                        const float *Ub, float *M, ptrdiff_t j0, ptrdiff_t j1) {
    const ptrdiff_t rows = groups * MNN_SG_MR, ldm = S * MNN_SG_NR;
    for (int k = 0; k < P; k++) {
        for (ptrdiff_t j = j0; j < j1; j++) {
            const float *ub = Ub + (k * S + j) * C * MNN_SG_NR;
            for (ptrdiff_t c0 = 0; c0 < C; c0 += MNN_SG_KC) {
                ptrdiff_t kc = C - c0 < MNN_SG_KC ? C - c0 : MNN_SG_KC;
                for (ptrdiff_t g = 0; g < groups; g++) {
                    /* last = 0: no bias or clamp here (the output transform adds them);
                       the bias pointer is then never read. */
                    mnn_sg_tile(kc, V + ((k * groups + g) * C + c0) * MNN_SG_MR,
                                ub + c0 * MNN_SG_NR,
                                M + (k * rows + g * MNN_SG_MR) * ldm + j * MNN_SG_NR, ldm,
                                MNN_SG_MR, MNN_SG_NR, c0 > 0, 0, ub, 0.0f, 0.0f);
                }
            }
        }
    }
}

/* y (O x OH x OW, one image) tiles [t0, t0 + nt), channels [o0, min(o1, O)) <- A^T M A
   + bias, clamped to [lo, hi]. o0 is a multiple of MNN_WG_OL; M has rows >= nt. */
static void mnn_wg_output(int m, const float *M, ptrdiff_t rows, ptrdiff_t ldm,
                          ptrdiff_t t0, ptrdiff_t nt, ptrdiff_t tw_count, float *y,
                          ptrdiff_t O, ptrdiff_t OH, ptrdiff_t OW, const float *bias,
                          float lo, float hi, ptrdiff_t o0, ptrdiff_t o1) {
    const int a = m + 2, P = a * a;
    float s[36 * MNN_WG_OL], h[24 * MNN_WG_OL], r[16 * MNN_WG_OL], b[MNN_WG_OL];
    if (o1 > O) o1 = O;
    for (ptrdiff_t t = 0; t < nt; t++) {
        ptrdiff_t oy0 = (t0 + t) / tw_count * m, ox0 = (t0 + t) % tw_count * m;
        for (ptrdiff_t o = o0; o < o1; o += MNN_WG_OL) {
            int lanes = o1 - o < MNN_WG_OL ? (int)(o1 - o) : MNN_WG_OL;
            for (int k = 0; k < P; k++)
                memcpy(s + k * MNN_WG_OL, M + (k * rows + t) * ldm + o,
                       MNN_WG_OL * sizeof(float));
            /* columns: a x a -> m x a; rows: m x a -> m x m */
            for (int j = 0; j < a; j++)
                mnn_wg_at(m, s + j * MNN_WG_OL, a * MNN_WG_OL, h + j * MNN_WG_OL,
                          a * MNN_WG_OL);
            for (int i = 0; i < m; i++)
                mnn_wg_at(m, h + i * a * MNN_WG_OL, MNN_WG_OL, r + i * m * MNN_WG_OL,
                          MNN_WG_OL);
            for (int l = 0; l < MNN_WG_OL; l++) b[l] = l < lanes ? bias[o + l] : 0.0f;
            for (int q = 0; q < m * m; q++) {
                for (int l = 0; l < MNN_WG_OL; l++) {
                    float v = r[q * MNN_WG_OL + l] + b[l];
                    v = v < lo ? lo : v;
                    r[q * MNN_WG_OL + l] = v > hi ? hi : v;
                }
            }
            for (int l = 0; l < lanes; l++) {
                float *yo = y + (o + l) * OH * OW;
                for (int i = 0; i < m && oy0 + i < OH; i++) {
                    for (int j = 0; j < m && ox0 + j < OW; j++)
                        yo[(oy0 + i) * OW + ox0 + j] = r[(i * m + j) * MNN_WG_OL + l];
                }
            }
        }
    }
}

/* One whole block: input transform, products, output transform, all channels. */
static void mnn_wg_block(int m, const float *x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
                         ptrdiff_t pt, ptrdiff_t pl, ptrdiff_t tw_count, ptrdiff_t t0,
                         ptrdiff_t nt, ptrdiff_t groups, const float *Ub, ptrdiff_t S,
                         float *V, float *M, float *y, ptrdiff_t O, ptrdiff_t OH,
                         ptrdiff_t OW, const float *bias, float lo, float hi) {
    const int a = m + 2;
    mnn_wg_input(m, x, C, H, W, pt, pl, tw_count, t0, nt, groups, 0, C, V);
    mnn_wg_gemm(a * a, C, S, groups, V, Ub, M, 0, S);
    mnn_wg_output(m, M, groups * MNN_SG_MR, S * MNN_SG_NR, t0, nt, tw_count, y, O, OH, OW,
                  bias, lo, hi, 0, O);
}
#endif
