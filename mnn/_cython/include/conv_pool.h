/* A convolution by the direct kernel (sgemm_kernel.h's mnn_sd_block) whose output only a
   pool reads: a max pool, as ResNet's stem (conv 7x7 stride 2, then max pool 3x3 stride
   2: mnn_cp_rows), or a global average pool, as MobileNetV2's head (conv 1x1 320 -> 1280
   at 7x7, then the plane means: mnn_cp_means).

   Run op by op, the conv writes its whole output (3.2 MB for ResNet18's stem, more than
   L2) and the pool reads it back from memory. Here each thread takes a range of pooled
   rows of one image and walks down it a band at a time: the conv rows the band's windows
   read are computed into a scratch band that stays in L2, and pooled from there; only
   the pooled rows go to memory. Consecutive bands share conv rows when the windows
   overlap (one row for 3x3 stride 2): those are moved to the front of the band, not
   computed again.

   Every conv value is the direct kernel's own (each pixel sums its K products in the
   same order whatever tile or band it falls in), and the max is exact, so the result is
   the two ops' bit for bit. The pool propagates NaN as the pool kernels do.

   Bounds: the caller (conv_pool.pyx) checks every shape, the padded input, the scratch
   sizes, and that each pooled row and column has at least one window tap inside the conv
   output; the functions here trust them. */
#ifndef MNN_CONV_POOL_H
#define MNN_CONV_POOL_H
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "sgemm_kernel.h"
#include "plane_reduce.h"

typedef struct {
    /* the conv: M channels of OH x OW from a padded image (see mnn_sd_block) */
    ptrdiff_t M, K;          /* output channels; C * KH * KW */
    const float *pw;         /* mnn_sd_pack_w of the (M, K) weight */
    const float *bias;       /* M values */
    float lo, hi;            /* clamp of the conv's output (its fused activation) */
    const ptrdiff_t *koff;   /* mnn_sd_koff of the padded image */
    ptrdiff_t rstep, csw;    /* padded-image floats between output rows; column stride */
    ptrdiff_t OH, OW;
    int tile_major;
    int xpf;                 /* mnn_sd_xpf of the image's planes */
    /* the max pool over the conv's output */
    ptrdiff_t PH, PW, kh, kw, sh, sw, pt, pl, dh, dw;
    ptrdiff_t R;             /* pooled rows per band */
    ptrdiff_t cap;           /* conv rows a band holds: (R - 1) * sh + (kh - 1) * dh + 1 */
    ptrdiff_t rowlen;        /* floats of the padded row scratch */
} mnn_cp_geom;

/* max that propagates NaN from either side (pool.pyx's rule) */
static inline float mnn_cp_max(float a, float b) {
    float m = a > b ? a : b;
    return a != a ? a : m;
}

/* out[px] = max(t[2px], t[2px+1], t[2px+2]) for px < PW: 3-wide windows, stride 2 (the
   common pool), taken apart into even and odd columns 16 outputs at a time; a last
   partial vector stores only its outputs below PW (its loads reach t[2 PW + 33]: the
   caller's row scratch has room, and lanes past PW read what is there). */
static void mnn_cp_cols_3s2(const float *t, ptrdiff_t PW, float *out) {
    ptrdiff_t px = 0;
#if MNN_SD_ENABLED
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (; px < PW; px += 16) {
        const float *w = t + 2 * px;
        __m512 lo = _mm512_loadu_ps(w), hi = _mm512_loadu_ps(w + 16);
        __m512 a = _mm512_permutex2var_ps(lo, even, hi);        /* t[2px] */
        __m512 b = _mm512_permutex2var_ps(lo, odd, hi);         /* t[2px + 1] */
        __m512 c = _mm512_permutex2var_ps(_mm512_loadu_ps(w + 2), even,
                                          _mm512_loadu_ps(w + 18)); /* t[2px + 2] */
        /* mnn_cp_max(b, a), then mnn_cp_max(c, that): the larger, or the first NaN */
        __m512 m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, a, _CMP_GT_OQ), a, b);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), m, b);
        __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, m, _CMP_GT_OQ), m, c);
        r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q), r, c);
        if (px + 16 <= PW)
            _mm512_storeu_ps(out + px, r);
        else
            _mm512_mask_storeu_ps(out + px, (__mmask16)((1u << (PW - px)) - 1u), r);
    }
#endif
    for (; px < PW; px++) {
        const float *w = t + 2 * px;
        out[px] = mnn_cp_max(w[2], mnn_cp_max(w[1], w[0]));
    }
}

/* Pooled row py of one channel into out (PW floats). band holds the channel's conv rows
   from row `first` on (row stride OW); t is scratch of g->rowlen floats. */
static void mnn_cp_pool_row(const mnn_cp_geom *g, const float *band, ptrdiff_t first,
                            ptrdiff_t py, float *restrict t, float *restrict out) {
    const ptrdiff_t OW = g->OW, pl = g->pl, kh = g->kh, dh = g->dh, OH = g->OH;
    const ptrdiff_t r0 = py * g->sh - g->pt;
    /* the window's rows inside the conv output, reduced three at a time into row */
    const float *src[3];
    int n = 0, done = 0;
    float *restrict row = t + pl;
    for (ptrdiff_t i = 0; i <= kh; i++) {
        ptrdiff_t r = r0 + i * dh;
        if (i < kh && r >= 0 && r < OH) src[n++] = band + (r - first) * OW;
        if (n == 3 || (i == kh && n > 0)) {
            const float *a = src[0], *b = n > 1 ? src[1] : src[0], *c = n > 2 ? src[2] : src[0];
            if (done)
                for (ptrdiff_t x = 0; x < OW; x++)
                    row[x] = mnn_cp_max(c[x], mnn_cp_max(b[x], mnn_cp_max(a[x], row[x])));
            else
                for (ptrdiff_t x = 0; x < OW; x++)
                    row[x] = mnn_cp_max(c[x], mnn_cp_max(b[x], a[x]));
            done = 1;
            n = 0;
        }
    }
    /* -inf around the row, as far as the windows reach: they read it without bounds
       tests */
    const ptrdiff_t PW = g->PW, kw = g->kw, sw = g->sw, dw = g->dw;
    const ptrdiff_t reach = (PW - 1) * sw + (kw - 1) * dw + 1;
    for (ptrdiff_t x = 0; x < pl; x++) t[x] = -INFINITY;
    for (ptrdiff_t x = pl + OW; x < reach; x++) t[x] = -INFINITY;
    if (kw == 3 && dw == 1 && sw == 2) {
        mnn_cp_cols_3s2(t, PW, out);
        return;
    }
    for (ptrdiff_t px = 0; px < PW; px++) {
        const float *w = t + px * sw;
        float m = w[0];
        for (ptrdiff_t j = 1; j < kw; j++) m = mnn_cp_max(w[j * dw], m);
        out[px] = m;
    }
}

/* Pooled rows [a, b) of one image: x its padded input, y its pooled output (M planes of
   PH x PW). band: M planes of cap x OW floats; po: cap * OW offsets; t: rowlen floats. */
static void mnn_cp_rows(const mnn_cp_geom *g, const float *x, float *y, ptrdiff_t a,
                        ptrdiff_t b, float *band, ptrdiff_t *po, float *t) {
    const ptrdiff_t OW = g->OW, plane = g->cap * OW;
    const ptrdiff_t slabs = (g->M + MNN_SD_M - 1) / MNN_SD_M;
    ptrdiff_t have_lo = 0, have_hi = 0;  /* conv rows held, from band row 0 */
    for (ptrdiff_t p0 = a; p0 < b; p0 += g->R) {
        ptrdiff_t p1 = p0 + g->R < b ? p0 + g->R : b;
        ptrdiff_t lo = p0 * g->sh - g->pt;
        ptrdiff_t hi = (p1 - 1) * g->sh - g->pt + (g->kh - 1) * g->dh + 1;
        if (lo < 0) lo = 0;
        if (hi > g->OH) hi = g->OH;
        ptrdiff_t keep = 0;
        if (have_hi > lo && have_lo <= lo) {
            keep = have_hi - lo;
            if (keep > hi - lo) keep = hi - lo;
            if (have_lo < lo)
                for (ptrdiff_t m = 0; m < g->M; m++)
                    memmove(band + m * plane, band + m * plane + (lo - have_lo) * OW,
                            (size_t)(keep * OW) * sizeof(float));
        }
        if (hi - lo > keep) {
            ptrdiff_t P = (hi - lo - keep) * OW;
            int npw = mnn_sd_npw(P, g->K);
            ptrdiff_t units = (P + npw - 1) / npw * slabs;
            mnn_sd_block(g->M, g->K, g->pw, x + (lo + keep) * g->rstep, g->koff, P, OW,
                         g->rstep, g->csw, band + keep * OW, plane, 0, units, npw,
                         g->tile_major, g->xpf, po, g->bias, g->lo, g->hi, NULL, NULL);
        }
        have_lo = lo;
        have_hi = hi;
        for (ptrdiff_t m = 0; m < g->M; m++)
            for (ptrdiff_t py = p0; py < p1; py++)
                mnn_cp_pool_row(g, band + m * plane, lo, py, t,
                                y + (m * g->PH + py) * g->PW);
    }
}

/* The mean of each output plane of the conv, for the slabs (MNN_SD_M output channels
   each) [s0, s1) of one image: x its padded input, means its M values. The slabs go
   `group` at a time through scratch (group * MNN_SD_M planes of OH x OW floats), which
   the plane means read back while it is in cache: the conv's output never goes to
   memory. po: OH * OW offsets.

   Each conv value is the direct kernel's own (a pixel's K products summed in one order
   whatever its tile) and each mean is plane_reduce.h's, as the global pool computes it,
   so the means are the two ops' bit for bit. Needs AVX-512 (plane_reduce.h's mean). */
static void mnn_cp_means(const mnn_cp_geom *g, const float *x, float *means, ptrdiff_t s0,
                         ptrdiff_t s1, ptrdiff_t group, float *scratch, ptrdiff_t *po) {
    const ptrdiff_t P = g->OH * g->OW;
    const int npw = mnn_sd_npw(P, g->K);
    const ptrdiff_t tiles = (P + npw - 1) / npw;
    for (ptrdiff_t a = s0; a < s1; a += group) {
        const ptrdiff_t b = a + group < s1 ? a + group : s1;
        const ptrdiff_t m0 = a * MNN_SD_M;
        const ptrdiff_t m1 = b * MNN_SD_M < g->M ? b * MNN_SD_M : g->M;
        mnn_sd_block(m1 - m0, g->K, g->pw + m0 * g->K, x, g->koff, P, g->OW, g->rstep,
                     g->csw, scratch, P, 0, (b - a) * tiles, npw, g->tile_major, g->xpf, po,
                     g->bias + m0, g->lo, g->hi, NULL, NULL);
        mnn_plane_mean_f32(scratch, m1 - m0, P, means + m0);
    }
}
#endif
