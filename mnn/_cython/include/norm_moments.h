/* Mean and (biased) variance of a contiguous float32 row, for norm.pyx.

   With AVX-512: one pass over the row, summing d = x - x[0] and d^2 in 8-lane double
   registers (Cython's C for a 16-lane reduction keeps the lanes on the stack and adds
   them one at a time). Without it, the generic kernel's two passes: mean = sum(x) / n,
   then var = sum((x - mean)^2) / n with x - mean rounded to float32 and double sums. */
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
    /* One pass: sums of d = x - x[0] and d^2 in double (d exact in double; the shift
       keeps E[d^2] - E[d]^2 free of cancellation unless the row's spread is below
       1e-8 of its offset from x[0]). */
    const __m512d k = _mm512_set1_pd((double)x[0]);
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    __m512d q0 = _mm512_setzero_pd(), q1 = _mm512_setzero_pd();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m512d lo = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), k);
        __m512d hi = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_castpd_ps(
            _mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), k);
        s0 = _mm512_add_pd(s0, lo);
        s1 = _mm512_add_pd(s1, hi);
        q0 = _mm512_fmadd_pd(lo, lo, q0);
        q1 = _mm512_fmadd_pd(hi, hi, q1);
    }
    double sd = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    double sq = _mm512_reduce_add_pd(_mm512_add_pd(q0, q1));
    for (; i < n; i++) {
        double d = (double)x[i] - (double)x[0];
        sd += d;
        sq += d * d;
    }
    double md = sd / n;
    double var = sq / n - md * md;
    *mean_out = (double)x[0] + md;
    *var_out = var < 0 ? 0 : var;  /* rounding may dip below 0; NaN passes */
#else
    double acc = 0;
    for (Py_ssize_t i = 0; i < n; i++) acc += x[i];
    float mean = (float)(acc / n);
    acc = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double d = (float)(x[i] - mean);
        acc += d * d;
    }
    *mean_out = mean;
    *var_out = acc / n;
#endif
}

#endif
