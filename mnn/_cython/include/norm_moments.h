/* Mean and (biased) variance of a contiguous float32 row, for norm.pyx.

   Two passes, as the generic kernel: mean = sum(x) / n, then var = sum((x - mean)^2) / n
   with x - mean rounded to float32 (mean rounded to float32 first) and the sums kept in
   double. With AVX-512 the sums run in two 8-lane double registers (Cython's C for a
   16-lane reduction keeps the lanes on the stack and adds them one at a time); without
   it, plain loops. */
#ifndef MNN_NORM_MOMENTS_H
#define MNN_NORM_MOMENTS_H
#ifdef __AVX512F__
#include <immintrin.h>
#endif

static void mnn_moments_f32(const float *x, Py_ssize_t n, double *mean_out,
                            double *var_out) {
    if (n <= 0) {
        *mean_out = 0;
        *var_out = 0;
        return;
    }
#ifdef __AVX512F__
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    double acc = _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
    for (; i < n; i++) acc += x[i];
    float mean = (float)(acc / n);
    __m512 mv = _mm512_set1_ps(mean);
    a0 = _mm512_setzero_pd();
    a1 = _mm512_setzero_pd();
    for (i = 0; i + 16 <= n; i += 16) {
        __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), mv);
        __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
        __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
        a0 = _mm512_fmadd_pd(lo, lo, a0);
        a1 = _mm512_fmadd_pd(hi, hi, a1);
    }
    acc = _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
    for (; i < n; i++) {
        double d = (float)(x[i] - mean);
        acc += d * d;
    }
#else
    double acc = 0;
    for (Py_ssize_t i = 0; i < n; i++) acc += x[i];
    float mean = (float)(acc / n);
    acc = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double d = (float)(x[i] - mean);
        acc += d * d;
    }
#endif
    *mean_out = mean;
    *var_out = acc / n;
}

#endif
