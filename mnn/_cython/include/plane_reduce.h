/* Global pooling of contiguous planes (pool.pyx's global_forward, float32): the mean or
   the max of each of P planes of S floats, 16 lanes at a time.

   The mean sums whole vectors into two accumulators (a masked load takes the tail) and
   adds their lanes up at the end; the max keeps a flag of NaN lanes, since vmaxps drops
   a NaN operand where the pooling op propagates it. For a network's last global pool
   (1280 planes of 7x7) this is 0.35x the time of the scalar 16-partials loop, whose
   final chain of 15 dependent adds cost more than a small plane's loads.

   Only with AVX-512 (MNN_PLANE_REDUCE_AVX512); the caller checks that flag and keeps its
   loop otherwise. Bounds: the caller passes P planes of S >= 1 floats each, S apart. */
#ifndef MNN_PLANE_REDUCE_H
#define MNN_PLANE_REDUCE_H
#include <stddef.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#include <math.h>
#define MNN_PLANE_REDUCE_AVX512 1

static inline __mmask16 mnn_pr_tail(ptrdiff_t n) {
    return (__mmask16)((1u << n) - 1u);
}

static void mnn_plane_mean_f32(const float *x, ptrdiff_t P, ptrdiff_t S, float *y) {
    const ptrdiff_t full = S / 16;
    const __mmask16 m = mnn_pr_tail(S % 16);
    const float count = (float)S;
    for (ptrdiff_t p = 0; p < P; p++) {
        const float *s = x + p * S;
        __m512 a = _mm512_maskz_loadu_ps(m, s + full * 16), b = _mm512_setzero_ps();
        ptrdiff_t i = 0;
        for (; i + 2 <= full; i += 2) {
            a = _mm512_add_ps(a, _mm512_loadu_ps(s + i * 16));
            b = _mm512_add_ps(b, _mm512_loadu_ps(s + i * 16 + 16));
        }
        if (i < full) a = _mm512_add_ps(a, _mm512_loadu_ps(s + i * 16));
        y[p] = _mm512_reduce_add_ps(_mm512_add_ps(a, b)) / count;
    }
}

static void mnn_plane_max_f32(const float *x, ptrdiff_t P, ptrdiff_t S, float *y) {
    const ptrdiff_t full = S / 16;
    const __mmask16 m = mnn_pr_tail(S % 16);
    const __m512 lowest = _mm512_set1_ps(-INFINITY);
    for (ptrdiff_t p = 0; p < P; p++) {
        const float *s = x + p * S;
        __m512 t = _mm512_mask_loadu_ps(lowest, m, s + full * 16);
        __mmask16 nan = _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q);
        __m512 a = t, b = lowest;
        ptrdiff_t i = 0;
        for (; i + 2 <= full; i += 2) {
            __m512 u = _mm512_loadu_ps(s + i * 16), v = _mm512_loadu_ps(s + i * 16 + 16);
            nan |= _mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            a = _mm512_max_ps(a, u);
            b = _mm512_max_ps(b, v);
        }
        if (i < full) {
            __m512 u = _mm512_loadu_ps(s + i * 16);
            nan |= _mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q);
            a = _mm512_max_ps(a, u);
        }
        y[p] = nan ? NAN : _mm512_reduce_max_ps(_mm512_max_ps(a, b));
    }
}
#else
#define MNN_PLANE_REDUCE_AVX512 0
/* Never called without AVX-512 (pool.pyx checks the flag): keeps the module linkable. */
static void mnn_plane_mean_f32(const float *x, ptrdiff_t P, ptrdiff_t S, float *y) {
    (void)x; (void)P; (void)S; (void)y;
}
static void mnn_plane_max_f32(const float *x, ptrdiff_t P, ptrdiff_t S, float *y) {
    (void)x; (void)P; (void)S; (void)y;
}
#endif
#endif
