/* Fast float32 exp shared by the kernels that need one (elementwise.pyx, softmax.pyx,
   activation.pyx's exp_activation.h). */
#ifndef MNN_SIMD_EXP_H
#define MNN_SIMD_EXP_H
#include <math.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
/* exp on float32 in SIMD lanes: n = round(x / ln2), r = x - n ln2 (two-part ln2),
   exp(r) by Cephes' degree-5 polynomial (about 1 ulp), times 2^n.

   With AVX-512 (mnn_exp16) 2^n is applied by vscalefps, which rounds once and gives
   overflow to inf and gradual underflow to subnormals and zero itself: x is only clamped
   to [-104, 89] (exp is 0 below and inf above in float32; the clamps keep a NaN), and no
   element needs a second pass. Without AVX-512 (the portable build, AVX2 machines) 2^n
   is built from the exponent bits, valid for -87 <= x <= 88; a chunk holding anything
   else (overflow, underflow to subnormals, inf, nan) is redone element by element with
   libm's expf. */
#ifdef __AVX512F__
/* exp(x) = 2^k (1 + m): returns m = exp(r) - 1 for r = x - k ln2, |r| <= ln2 / 2, and k
   (a whole number) in *k. x must be finite (the callers clamp it). */
static inline __m512 mnn_expm1_parts16(__m512 x, __m512 *k) {
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    *k = n;
    return _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);  /* r + r^2 p(r) */
}

static inline __m512 mnn_exp16(__m512 x) {
    /* vmaxps/vminps return their second operand when one is NaN: x second keeps NaN. */
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    __m512 k;
    __m512 m = mnn_expm1_parts16(x, &k);
    /* 1 added last: added to r first it would round r's low bits away */
    return _mm512_scalef_ps(_mm512_add_ps(m, _mm512_set1_ps(1.0f)), k);
}

/* The mask of the first n (< 16) lanes, for a row's tail. */
static inline __mmask16 mnn_tail_mask16(Py_ssize_t n) {
    return (__mmask16)((1u << n) - 1u);
}

static void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, mnn_exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 k = mnn_tail_mask16(n - i);
        _mm512_mask_storeu_ps(out + i, k, mnn_exp16(_mm512_maskz_loadu_ps(k, x + i)));
    }
}
#else
#pragma GCC push_options
/* Compares may not raise FP exceptions (nobody reads the flags here): lets the
   clamps become SIMD selects. */
#pragma GCC optimize ("no-trapping-math")
static void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) {
    int outside = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        float v = x[i];
        outside |= (v < -87.0f) | (v > 88.0f) | (v != v);  /* no branches: SIMD */
        v = v < -87.0f ? -87.0f : v;  /* selects, not fminf: they vectorize */
        v = v > 88.0f ? 88.0f : v;
        float k = floorf(v * 1.44269504088896341f + 0.5f);
        float r = v - k * 0.693359375f;
        r = r - k * -2.12194440e-4f;
        float p = 1.9875691500e-4f;
        p = p * r + 1.3981999507e-3f;
        p = p * r + 8.3334519073e-3f;
        p = p * r + 4.1665795894e-2f;
        p = p * r + 1.6666665459e-1f;
        p = p * r + 5.0000001201e-1f;
        p = p * (r * r) + r + 1.0f;
        int bits = ((int)k + 127) << 23;
        float scale;
        __builtin_memcpy(&scale, &bits, sizeof scale);
        out[i] = p * scale;
    }
    if (outside)
        for (Py_ssize_t i = 0; i < n; i++)
            if (!(x[i] >= -87.0f && x[i] <= 88.0f)) out[i] = expf(x[i]);
}
#pragma GCC pop_options
#endif  /* __AVX512F__ */

#endif
