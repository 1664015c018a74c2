/* An inverted-residual block (MobileNetV2's) run one band of output rows at a time:

       e = clamp1(W1 x + b1)          1x1 "expand" conv (optional: e = x without it)
                                      or any conv the direct kernel runs (a network's
                                      first conv, over its zero-bordered image)
       d = clamp2(dw3x3(e) + b2)      depthwise 3x3, pads 1, stride 1 or 2
       y = clamp3(W3 d + b3) [+ r]    1x1 "project" conv, optionally plus a residual r

   for one image in NCHW. Run op by op, e and d are whole images (up to 6x the input's
   channels) written to memory and read back by the next op; here a band of e rows and
   the band of d rows made from it live in per-thread scratch that stays in L2, and only
   x, r and y touch memory. The two 1x1 convs are the packed GEMM of sgemm_kernel.h
   (its B read straight from the band), the depthwise conv dw3x3_kernel.h's plane kernel
   over the band. Bands move down the image: the e rows a band shares with the previous
   one (2 at stride 1, 1 at stride 2) are moved to the front of the scratch, not
   recomputed.

   At stride 2 with a packed-GEMM expand (g->deint) the band's new x rows are first
   copied deinterleaved (even columns, then odd: mnn_dw3x3_deinterleave_row) into
   per-thread scratch. The expand works pixel by pixel, so its e rows come out
   deinterleaved too, which is the layout dw3x3_kernel.h's permute-free stride-2 kernel
   reads (mnn_dw3x3_plane_s2_deint): a copy of Cin rows buys a cheaper pass over Ce >=
   Cin rows.

   Small images (mnn_fb_images_split) run whole, the threads splitting channels instead
   of rows: each expands and depthwise-filters its own channels (the depthwise conv of a
   channel needs only that channel), then each computes its share of the project.
   Splitting rows there would recompute halo rows (a seventh of a 14x14 image's expand
   per thread) and leave 7 rows unevenly split. A direct-kernel project is split by
   depth: each thread multiplies its own d channels, still in its cache, into partial
   sums of every output, and after a barrier each adds up the partials of its share of
   the output channels (then the bias, the clamp and the residual). Split by outputs,
   every thread read all of d, most of it written by the other core, and that core's
   next writes waited for the lines to come back. Measured against that (Zen 4, two
   threads, in-process A/B): 0.89-0.96x the time of MobileNetV2's blocks at 14x14 and
   28x28, and 0.61-0.87x in the spells when the shared machine runs two threads slowly
   (onnxruntime's and torch's two-thread runs slow down then too).

   Bounds: the caller (fused_block.pyx) checks every shape and scratch size; the
   functions here trust them. */
#ifndef MNN_FUSED_BLOCK_H
#define MNN_FUSED_BLOCK_H
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <omp.h>
#include "sgemm_kernel.h"
#include "dw3x3_kernel.h"

typedef struct {
    ptrdiff_t Cin, H, W;        /* input image (H, W: the expanded image's) */
    ptrdiff_t Ce;               /* expanded channels (== Cin without expand) */
    /* The expand conv's K and where it reads: e row i, column j, depth k reads
       x[i * xrow + j * xsw + koff1[k]] (direct), so a 1x1 conv has K1 = Cin, xrow = W,
       xsw = 1; a direct-kernel conv over a zero-bordered image (hp x wp, stride sh x sw)
       K1 = Cin * kh * kw, xrow = sh * wp, xsw = sw. The packed GEMM's expand is 1x1 only
       (x planes H * W apart). x_image: floats per input image. */
    ptrdiff_t K1, xrow, xsw, x_image;
    ptrdiff_t OH, OW, stride;   /* depthwise output, stride 1 or 2 */
    ptrdiff_t Cout;             /* project output channels */
    ptrdiff_t R;                /* output rows per band */
    const float *pa1, *b1;      /* packed expand weight, or NULL */
    float lo1, hi1;
    const float *wdw, *b2;      /* depthwise weight (Ce x 9) and bias */
    float lo2, hi2;
    const float *pa3, *b3;      /* packed project weight */
    float lo3, hi3;
    /* Each 1x1 conv runs the packed GEMM (weight packed by mnn_sg_pack_a, direct 0) or
       the direct kernel (mnn_sd_pack_w, direct 1: deep K, AVX-512 only). */
    int direct1, direct3;
    const ptrdiff_t *koff1;     /* direct expand: K1 depth offsets (see above) */
    const ptrdiff_t *koff3;     /* direct project: k * R * OW for k < Ce */
    /* e rows deinterleaved (see above): band mode, stride 2, a 1x1 expand by the packed
       GEMM, OW > 7 (narrower rows take dw3x3's paired-row kernel), AVX-512 only */
    int deint;
} mnn_fb_geom;

/* Most 16-lane steps of a plane run as dw3x3_kernel.h's flat stream. */
#define MNN_FB_FLAT_CAP 16

/* C (M x P, row stride ldc) = clamp(A B + bias) for the conv of the M x K weight pa over
   B[k, n] = x[k * ldb + n] by the packed GEMM (a 1x1 conv), or by the direct kernel
   over B[k, n] = x[koff[k] + (n / OW) * rstep + (n % OW) * sw] (a 1x1 conv: koff[k] ==
   k * ldb, OW == P, sw == 1); po is scratch of P offsets, pb the GEMM's packing
   scratch. */
static void mnn_fb_conv(int direct, ptrdiff_t M, ptrdiff_t K, const float *pa,
                        const float *x, ptrdiff_t ldb, const ptrdiff_t *koff, ptrdiff_t P,
                        ptrdiff_t OW, ptrdiff_t rstep, ptrdiff_t sw, float *C, ptrdiff_t ldc,
                        float *pb, ptrdiff_t *po, const float *bias, float lo, float hi) {
    if (direct) {
        int npw = mnn_sd_npw(P, K);
        ptrdiff_t slabs = (M + MNN_SD_M - 1) / MNN_SD_M;
        ptrdiff_t units = (P + npw - 1) / npw * slabs;
        mnn_sd_block(M, K, pa, x, koff, P, OW, rstep, sw, C, ldc, 0, units, npw,
                     mnn_sd_tile_major(M, K), mnn_sd_xpf(K), po, bias, lo, hi, NULL, NULL);
    } else {
        mnn_sg_block(M, K, pa, x, ldb, C, ldc, 0, (M + MNN_SG_MR - 1) / MNN_SG_MR, 0, P, pb,
                     bias, lo, hi);
    }
}

/* Floats of one thread's e scratch: Ce planes of R*stride + 2 rows of W. */
static inline ptrdiff_t mnn_fb_ebuf_size(const mnn_fb_geom *g) {
    return g->Ce * (g->R * g->stride + 2) * g->W;
}

/* Floats of one thread's d scratch: Ce planes of R rows of OW. */
static inline ptrdiff_t mnn_fb_dbuf_size(const mnn_fb_geom *g) {
    return g->Ce * g->R * g->OW;
}

/* Floats of one thread's deinterleaved x rows (g->deint): Cin planes of a band's e rows. */
static inline ptrdiff_t mnn_fb_xbuf_size(const mnn_fb_geom *g) {
    return g->deint ? g->Cin * (g->R * g->stride + 2) * g->W : 0;
}

/* Output rows [oy_a, oy_b) of one image: x (Cin x H x W), r (Cout x OH x OW) or NULL,
   y (Cout x OH x OW). ebuf, dbuf, xbuf: this thread's scratch (sizes above); pb: its
   sgemm packing scratch (MNN_SG_KC * MNN_SG_NC floats); po: its pixel offsets (a band's
   pixels: at most (R * stride + 2) * W); zeros: at least W zero floats. */
static void mnn_fb_rows(const mnn_fb_geom *g, const float *x, const float *r, float *y,
                        ptrdiff_t oy_a, ptrdiff_t oy_b, float *ebuf, float *dbuf,
                        float *xbuf, float *pb, ptrdiff_t *po, const float *zeros) {
    const ptrdiff_t W = g->W, H = g->H, s = g->stride, R = g->R;
    const ptrdiff_t cap = R * s + 2;            /* rows of one e plane in ebuf */
    const ptrdiff_t plane_e = cap * W, plane_d = R * g->OW, P = g->OH * g->OW;
    ptrdiff_t have_lo = 0, have_hi = 0;        /* e rows held in ebuf, from its row 0 */
    /* the whole image in one band: small planes take the flat stream (see
       mnn_fb_images_split) */
    unsigned short masks[MNN_FB_FLAT_CAP * 9];
    const ptrdiff_t nflat = oy_a == 0 && oy_b == g->OH && R >= g->OH
        ? mnn_dw3x3_flat_masks(H, W, g->OH, g->OW, s, s, 1, 1, masks, MNN_FB_FLAT_CAP) : 0;
    for (ptrdiff_t oy0 = oy_a; oy0 < oy_b; oy0 += R) {
        ptrdiff_t oy1 = oy0 + R < oy_b ? oy0 + R : oy_b;
        ptrdiff_t top = oy0 * s - 1;           /* first e row the band reads (-1: pad) */
        ptrdiff_t need_lo = top < 0 ? 0 : top;
        ptrdiff_t need_hi = (oy1 - 1) * s + 2; /* one past the last e row it reads */
        if (need_hi > H) need_hi = H;
        ptrdiff_t rows = need_hi - need_lo;
        const float *src;                      /* the band's e planes */
        ptrdiff_t src_plane;
        if (g->pa1) {
            ptrdiff_t keep = 0;
            if (have_hi > need_lo && have_lo <= need_lo) {
                keep = have_hi - need_lo;
                if (have_lo < need_lo)
                    for (ptrdiff_t c = 0; c < g->Ce; c++)
                        memmove(ebuf + c * plane_e, ebuf + c * plane_e + (need_lo - have_lo) * W,
                                (size_t)(keep * W) * sizeof(float));
            }
#if MNN_DW3X3_DEINT
            if (rows > keep && g->deint) {
                /* the new rows' x planes, deinterleaved and packed tight (1x1: xrow == W) */
                const ptrdiff_t n = (rows - keep) * W;
                const float *xb = x + (need_lo + keep) * W;
                for (ptrdiff_t c = 0; c < g->Cin; c++)
                    for (ptrdiff_t i = 0; i < rows - keep; i++)
                        mnn_dw3x3_deinterleave_row(xb + c * H * W + i * W, W,
                                                   xbuf + c * n + i * W);
                mnn_fb_conv(0, g->Ce, g->K1, g->pa1, xbuf, n, NULL, n, n, 0, 1,
                            ebuf + keep * W, plane_e, pb, po, g->b1, g->lo1, g->hi1);
            } else
#endif
            if (rows > keep)
                mnn_fb_conv(g->direct1, g->Ce, g->K1, g->pa1, x + (need_lo + keep) * g->xrow,
                            H * W, g->koff1, (rows - keep) * W, W, g->xrow, g->xsw,
                            ebuf + keep * W, plane_e, pb, po, g->b1, g->lo1, g->hi1);
            have_lo = need_lo;
            have_hi = need_hi;
            src = ebuf;
            src_plane = plane_e;
        } else {
            src = x + need_lo * W;
            src_plane = H * W;
        }
        ptrdiff_t pt = need_lo - top;          /* 1 when the band starts on the pad row */
        for (ptrdiff_t c = 0; c < g->Ce; c++) {
            if (nflat > 0)  /* one band: rows == H, pt == 1 */
                mnn_dw3x3_plane_flat(src + c * src_plane, W, g->wdw + 9 * c, g->b2[c],
                                     dbuf + c * plane_d, g->OH, 1, 1, masks, nflat, g->lo2,
                                     g->hi2);
#if MNN_DW3X3_DEINT
            else if (g->deint)
                mnn_dw3x3_plane_s2_deint(src + c * src_plane, rows, W, g->wdw + 9 * c,
                                         g->b2[c], dbuf + c * plane_d, oy1 - oy0, g->OW, pt,
                                         zeros, g->lo2, g->hi2);
#endif
            else
                mnn_dw3x3_plane(src + c * src_plane, rows, W, g->wdw + 9 * c, g->b2[c],
                                dbuf + c * plane_d, oy1 - oy0, g->OW, s, (int)s, pt, 1,
                                zeros, g->lo2, g->hi2);
        }
        ptrdiff_t n = (oy1 - oy0) * g->OW;
        mnn_fb_conv(g->direct3, g->Cout, g->Ce, g->pa3, dbuf, plane_d, g->koff3, n, n, 0, 1,
                    y + oy0 * g->OW, P, pb, po, g->b3, g->lo3, g->hi3);
        if (r)
            for (ptrdiff_t c = 0; c < g->Cout; c++) {
                float *yr = y + c * P + oy0 * g->OW;
                const float *rr = r + c * P + oy0 * g->OW;
                for (ptrdiff_t i = 0; i < n; i++) yr[i] += rr[i];
            }
    }
}

/* Images [0, N) whole, the T threads splitting channels (see above). g->R must be OH (the
   project reads d planes of OH * OW); the expand, if any, is 1x1. e (Ce x H x W) and d
   (Ce x OH x OW) are shared; pb_all holds T packing scratches, po_all T offset
   scratches of max(H*W, OH*OW); part_all, when not NULL (a direct-kernel project), T
   partial outputs of Cout x OH x OW; zeros: at least W zero floats, and Cout with
   part_all (the partial sums' bias). */
static void mnn_fb_images_split(const mnn_fb_geom *g, ptrdiff_t N, const float *x,
                                const float *r, float *y, float *e, float *d, float *pb_all,
                                ptrdiff_t *po_all, float *part_all, const float *zeros,
                                int T) {
    const ptrdiff_t HW = g->H * g->W, P = g->OH * g->OW;
    /* Planes small enough for dw3x3_kernel.h's flat stream (7x7 at stride 1: 4 steps of
       16 lanes instead of 7 of one row each) take it; its tap masks depend only on the
       geometry. */
    unsigned short masks[MNN_FB_FLAT_CAP * 9];
    const ptrdiff_t nflat = mnn_dw3x3_flat_masks(g->H, g->W, g->OH, g->OW, g->stride,
                                                 g->stride, 1, 1, masks, MNN_FB_FLAT_CAP);
    const ptrdiff_t po_size = HW > P ? HW : P;
    /* expand and depthwise channels go to threads in whole GEMM slabs */
    const ptrdiff_t slab1 = g->pa1 ? (g->direct1 ? MNN_SD_M : MNN_SG_MR) : 1;
    const ptrdiff_t nslab1 = (g->Ce + slab1 - 1) / slab1;
#pragma omp parallel num_threads(T)
    {
        const ptrdiff_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        float *pb = pb_all + t * (ptrdiff_t)MNN_SG_KC * MNN_SG_NC;
        ptrdiff_t *po = po_all + t * po_size;
        const ptrdiff_t c0 = nslab1 * t / nt * slab1;
        ptrdiff_t c1 = nslab1 * (t + 1) / nt * slab1;
        if (c1 > g->Ce) c1 = g->Ce;
        for (ptrdiff_t n = 0; n < N; n++) {
            const float *xn = x + n * g->x_image;
            float *yn = y + n * g->Cout * P;
            const float *src = xn;
            if (g->pa1 && c0 < c1) {
                if (g->direct1) {
                    int npw = mnn_sd_npw(HW, g->Cin);
                    ptrdiff_t tiles = (HW + npw - 1) / npw;
                    mnn_sd_block(g->Ce, g->Cin, g->pa1, xn, g->koff1, HW, HW, 0, 1, e, HW,
                                 c0 / MNN_SD_M * tiles, (c1 + MNN_SD_M - 1) / MNN_SD_M * tiles,
                                 npw, 0, mnn_sd_xpf(g->Cin), po, g->b1, g->lo1, g->hi1,
                                 NULL, NULL);
                } else {
                    mnn_sg_block(g->Ce, g->Cin, g->pa1, xn, HW, e, HW, c0 / MNN_SG_MR,
                                 (c1 + MNN_SG_MR - 1) / MNN_SG_MR, 0, HW, pb, g->b1, g->lo1,
                                 g->hi1);
                }
            }
            if (g->pa1) src = e;
            for (ptrdiff_t c = c0; c < c1; c++) {
                if (nflat > 0)
                    mnn_dw3x3_plane_flat(src + c * HW, g->W, g->wdw + 9 * c, g->b2[c],
                                         d + c * P, g->OH, 1, 1, masks, nflat, g->lo2,
                                         g->hi2);
                else
                    mnn_dw3x3_plane(src + c * HW, g->H, g->W, g->wdw + 9 * c, g->b2[c],
                                    d + c * P, g->OH, g->OW, g->stride, (int)g->stride, 1, 1,
                                    zeros, g->lo2, g->hi2);
            }
            if (part_all) {
                /* this thread's depth [c0, c1) of the project into its partial sums of
                   every output: no bias, no clamp */
                float *part = part_all + t * g->Cout * P;
                if (c0 < c1) {
                    int npw = mnn_sd_npw(P, c1 - c0);
                    ptrdiff_t units = (P + npw - 1) / npw *
                                      ((g->Cout + MNN_SD_M - 1) / MNN_SD_M);
                    mnn_sd_block_ws(g->Cout, c1 - c0, g->pa3 + c0 * MNN_SD_M,
                                    g->Ce * MNN_SD_M, d, g->koff3 + c0, P, P, 0, 1, part, P,
                                    0, units, npw, 0, mnn_sd_xpf(c1 - c0), po,
                                    zeros, -INFINITY, INFINITY, NULL, NULL);
                } else {
                    memset(part, 0, sizeof(float) * (size_t)(g->Cout * P));
                }
#pragma omp barrier
                /* this thread's output channels: the partials in thread order, the bias,
                   the clamp (a NaN passes: the comparisons fail), the residual */
                for (ptrdiff_t c = g->Cout * t / nt; c < g->Cout * (t + 1) / nt; c++) {
                    float *yc = yn + c * P;
                    const float *p0 = part_all + c * P;
                    const float b = g->b3[c], lo = g->lo3, hi = g->hi3;
                    for (ptrdiff_t i = 0; i < P; i++) yc[i] = p0[i];
                    for (ptrdiff_t q = 1; q < nt; q++) {
                        const float *pq = p0 + q * g->Cout * P;
                        for (ptrdiff_t i = 0; i < P; i++) yc[i] += pq[i];
                    }
                    for (ptrdiff_t i = 0; i < P; i++) {
                        float v = yc[i] + b;
                        v = v < lo ? lo : v;
                        yc[i] = v > hi ? hi : v;
                    }
                    if (r) {
                        const float *rc = r + n * g->Cout * P + c * P;
                        for (ptrdiff_t i = 0; i < P; i++) yc[i] += rc[i];
                    }
                }
            } else if (g->direct3) {
#pragma omp barrier
                int npw = mnn_sd_npw(P, g->Ce);
                ptrdiff_t units = (P + npw - 1) / npw * ((g->Cout + MNN_SD_M - 1) / MNN_SD_M);
                ptrdiff_t u0 = units * t / nt, u1 = units * (t + 1) / nt;
                if (u0 < u1)
                    mnn_sd_block(g->Cout, g->Ce, g->pa3, d, g->koff3, P, P, 0, 1, yn, P, u0,
                                 u1, npw, 0, mnn_sd_xpf(g->Ce), po, g->b3, g->lo3, g->hi3,
                                 NULL, NULL);
            } else {
#pragma omp barrier
                ptrdiff_t strips = (P + MNN_SG_NR - 1) / MNN_SG_NR;
                ptrdiff_t n0 = strips * t / nt * MNN_SG_NR, n1 = strips * (t + 1) / nt * MNN_SG_NR;
                if (n1 > P) n1 = P;
                if (n0 < n1)
                    mnn_sg_block(g->Cout, g->Ce, g->pa3, d, P, yn, P, 0,
                                 (g->Cout + MNN_SG_MR - 1) / MNN_SG_MR, n0, n1, pb, g->b3,
                                 g->lo3, g->hi3);
            }
            if (r && !part_all) {
#pragma omp barrier
                const float *rn = r + n * g->Cout * P;
                for (ptrdiff_t c = g->Cout * t / nt; c < g->Cout * (t + 1) / nt; c++)
                    for (ptrdiff_t i = 0; i < P; i++) yn[c * P + i] += rn[c * P + i];
            }
            /* e and d are reused by the next image */
#pragma omp barrier
        }
    }
}
#endif
