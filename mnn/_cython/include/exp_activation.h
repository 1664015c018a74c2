/* float32 activations built on exp, for activation.pyx: sigmoid, silu, erf-gelu and tanh
   over a contiguous run of n elements (the .pyx splits an array into such runs over the
   threads).

   With AVX-512 each runs as one pass over 16 lanes at a time, exp by mnn_exp16 of
   simd_exp.h inline (which needs no fix-up pass for out-of-range inputs). Without it
   the same formulas run a block of MNN_EXP_ACT_BLOCK elements at a time through stack
   buffers (they stay in L1) and mnn_exp_f32, whose input and output must differ (it
   re-reads its input to redo out-of-range elements).

   The formulas, shared by both paths:
   - sigmoid(x) = 1 / (1 + exp(-x)), silu(x) = x / (1 + exp(-x)).
   - gelu(x) = x (1 - erfc(z) / 2) for z = x / sqrt(2) >= 0, x erfc(-z) / 2 below, with
     erfc(|z|) = t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2) and P the Chebyshev fit of
     Numerical Recipes' erfcc (relative error < 1.2e-7): the negative side keeps full
     relative precision where 1 + erf would cancel. -z^2 carries its rounding error
     (fmaf gives it exactly): z^2 is large where erfc is small, and its rounding would
     set the relative error.
   - tanh: with AVX-512 -e / (2 + e) for e = expm1(-2|x|), x's sign put on: within 2
     ulp, and at one thread 11% faster than numpy's float32 tanh (within 1.4 ulp), which
     ran the op before; a polynomial below 0.625 as without AVX-512 was 1.3 ulp but 14%
     slower than numpy. Without AVX-512, x + x z Q(z), z = x^2, for |x| < 0.625
     (Cephes' tanhf polynomial, where the form that follows would cancel), else
     sign(x) (1 - 2 / (exp(2|x|) + 1)). */
#ifndef MNN_EXP_ACTIVATION_H
#define MNN_EXP_ACTIVATION_H
#include <math.h>
#include "simd_exp.h"

#define MNN_EXP_ACT_BLOCK 256

/* P(t) of the gelu's erfc fit, Horner's scheme from the highest degree. */
#define MNN_ERFC_C9 0.17087277f
#define MNN_ERFC_C8 -0.82215223f
#define MNN_ERFC_C7 1.48851587f
#define MNN_ERFC_C6 -1.13520398f
#define MNN_ERFC_C5 0.27886807f
#define MNN_ERFC_C4 -0.18628806f
#define MNN_ERFC_C3 0.09678418f
#define MNN_ERFC_C2 0.37409196f
#define MNN_ERFC_C1 1.00002368f
#define MNN_ERFC_C0 -1.26551223f

/* Q(z) of tanh's small-argument polynomial. */
#define MNN_TANH_Q4 -5.70498872745e-3f
#define MNN_TANH_Q3 2.06390887954e-2f
#define MNN_TANH_Q2 -5.37397155531e-2f
#define MNN_TANH_Q1 1.33314422036e-1f
#define MNN_TANH_Q0 -3.33332819422e-1f
#define MNN_TANH_SMALL 0.625f

#ifdef __AVX512F__

static inline __m512 mnn_sigmoid16(__m512 x) {
    __m512 e = mnn_exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

static inline __m512 mnn_silu16(__m512 x) {
    __m512 e = mnn_exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

static inline __m512 mnn_gelu16(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
    __m512 z = _mm512_abs_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f)));
    __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(half, z, one));
    __m512 p = _mm512_set1_ps(MNN_ERFC_C9);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C8));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C7));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C6));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C5));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C4));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C3));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C2));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C1));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(MNN_ERFC_C0));
    __m512 zz = _mm512_mul_ps(z, z);
    __m512 err = _mm512_fmsub_ps(z, z, zz);
    /* z = inf makes err NaN (inf - inf): no correction then. */
    err = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(err, err, _CMP_ORD_Q), err);
    p = _mm512_sub_ps(_mm512_sub_ps(p, zz), err);
    __m512 h = _mm512_mul_ps(_mm512_mul_ps(half, t), mnn_exp16(p));  /* erfc(|z|) / 2 */
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mul_ps(x, _mm512_mask_sub_ps(h, pos, one, h));
}

static inline __m512 mnn_tanh16(__m512 x) {
    /* tanh(|x|) = -e / (2 + e) for e = expm1(-2|x|) = 2^k (1 + m) - 1, from
       2^k m + (2^k -+ 1) (k is in [-26, 0]); then x's sign put on (tanh is odd; -0
       stays -0, NaN stays NaN). Above |x| = 9 tanh rounds to 1: the clamp at -18
       changes nothing else. */
    __m512 y = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(-2.0f));
    y = _mm512_max_ps(_mm512_set1_ps(-18.0f), y);
    __m512 k;
    __m512 m = mnn_expm1_parts16(y, &k);
    __m512 s = _mm512_scalef_ps(_mm512_set1_ps(1.0f), k);
    /* -e and 2 + e each with one rounding (2^k - 1 and 2^k + 1 are exact) */
    __m512 num = _mm512_fnmadd_ps(s, m, _mm512_sub_ps(_mm512_set1_ps(1.0f), s));
    __m512 den = _mm512_fmadd_ps(s, m, _mm512_add_ps(s, _mm512_set1_ps(1.0f)));
    __m512 t = _mm512_abs_ps(_mm512_div_ps(num, den));  /* >= 0, also for x = 0 */
    return _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(t),
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))));
}

#define MNN_EXP_ACT_LOOP(name, vec)                                                      \
    static void name(const float *x, float *out, Py_ssize_t n) {                         \
        Py_ssize_t i = 0;                                                                \
        for (; i + 16 <= n; i += 16)                                                     \
            _mm512_storeu_ps(out + i, vec(_mm512_loadu_ps(x + i)));                      \
        if (i < n) {                                                                     \
            __mmask16 k = mnn_tail_mask16(n - i);                                        \
            _mm512_mask_storeu_ps(out + i, k, vec(_mm512_maskz_loadu_ps(k, x + i)));     \
        }                                                                                \
    }

MNN_EXP_ACT_LOOP(mnn_sigmoid_f32, mnn_sigmoid16)
MNN_EXP_ACT_LOOP(mnn_silu_f32, mnn_silu16)
MNN_EXP_ACT_LOOP(mnn_gelu_f32, mnn_gelu16)
MNN_EXP_ACT_LOOP(mnn_tanh_f32, mnn_tanh16)

#else  /* no AVX-512: blocks through stack buffers and mnn_exp_f32 */

/* exp(-x) of one block into e. */
static void mnn_exp_neg_block(const float *x, float *e, Py_ssize_t n) {
    float buf[MNN_EXP_ACT_BLOCK];
    for (Py_ssize_t i = 0; i < n; i++) buf[i] = -x[i];
    mnn_exp_f32(buf, e, n);
}

static void mnn_sigmoid_f32(const float *x, float *out, Py_ssize_t n) {
    float e[MNN_EXP_ACT_BLOCK];
    for (Py_ssize_t b = 0; b < n; b += MNN_EXP_ACT_BLOCK) {
        Py_ssize_t w = n - b < MNN_EXP_ACT_BLOCK ? n - b : MNN_EXP_ACT_BLOCK;
        mnn_exp_neg_block(x + b, e, w);
        for (Py_ssize_t i = 0; i < w; i++) out[b + i] = 1.0f / (1.0f + e[i]);
    }
}

static void mnn_silu_f32(const float *x, float *out, Py_ssize_t n) {
    float e[MNN_EXP_ACT_BLOCK];
    for (Py_ssize_t b = 0; b < n; b += MNN_EXP_ACT_BLOCK) {
        Py_ssize_t w = n - b < MNN_EXP_ACT_BLOCK ? n - b : MNN_EXP_ACT_BLOCK;
        mnn_exp_neg_block(x + b, e, w);
        for (Py_ssize_t i = 0; i < w; i++) out[b + i] = x[b + i] / (1.0f + e[i]);
    }
}

static void mnn_gelu_f32(const float *x, float *out, Py_ssize_t n) {
    float arg[MNN_EXP_ACT_BLOCK], e[MNN_EXP_ACT_BLOCK], tq[MNN_EXP_ACT_BLOCK];
    for (Py_ssize_t b = 0; b < n; b += MNN_EXP_ACT_BLOCK) {
        Py_ssize_t w = n - b < MNN_EXP_ACT_BLOCK ? n - b : MNN_EXP_ACT_BLOCK;
        const float *xb = x + b;
        for (Py_ssize_t i = 0; i < w; i++) {
            float z = xb[i] * 0.70710678118654752f;
            z = z < 0.0f ? -z : z;
            float t = 1.0f / (1.0f + 0.5f * z);
            float p = MNN_ERFC_C9;
            p = p * t + MNN_ERFC_C8;
            p = p * t + MNN_ERFC_C7;
            p = p * t + MNN_ERFC_C6;
            p = p * t + MNN_ERFC_C5;
            p = p * t + MNN_ERFC_C4;
            p = p * t + MNN_ERFC_C3;
            p = p * t + MNN_ERFC_C2;
            p = p * t + MNN_ERFC_C1;
            p = p * t + MNN_ERFC_C0;
            float zz = z * z;
            float err = fmaf(z, z, -zz);
            err = err == err ? err : 0.0f;
            p = (p - zz) - err;
            /* Below -87 erfc is under 1e-38 and x erfc / 2 rounds to (nearly) 0: the
               clamp keeps exp on its fast path (NaN passes through). */
            arg[i] = p < -87.0f ? -87.0f : p;
            tq[i] = t;
        }
        mnn_exp_f32(arg, e, w);
        for (Py_ssize_t i = 0; i < w; i++) {
            float h = 0.5f * tq[i] * e[i];
            out[b + i] = xb[i] >= 0.0f ? xb[i] * (1.0f - h) : xb[i] * h;
        }
    }
}

static void mnn_tanh_f32(const float *x, float *out, Py_ssize_t n) {
    float arg[MNN_EXP_ACT_BLOCK], e[MNN_EXP_ACT_BLOCK];
    for (Py_ssize_t b = 0; b < n; b += MNN_EXP_ACT_BLOCK) {
        Py_ssize_t w = n - b < MNN_EXP_ACT_BLOCK ? n - b : MNN_EXP_ACT_BLOCK;
        const float *xb = x + b;
        for (Py_ssize_t i = 0; i < w; i++) {
            /* exp(2|x|) beyond 2|x| = 40 only rounds 1 - 2 / (e + 1) to 1 again: the
               clamp keeps exp on its fast path (NaN passes through). */
            float a2 = 2.0f * fabsf(xb[i]);
            arg[i] = a2 > 40.0f ? 40.0f : a2;
        }
        mnn_exp_f32(arg, e, w);
        for (Py_ssize_t i = 0; i < w; i++) {
            /* tanh(|x|), then x's sign (-0 stays -0) */
            float v = xb[i], a = fabsf(v), t;
            if (a < MNN_TANH_SMALL) {
                float z = a * a;
                float q = MNN_TANH_Q4;
                q = q * z + MNN_TANH_Q3;
                q = q * z + MNN_TANH_Q2;
                q = q * z + MNN_TANH_Q1;
                q = q * z + MNN_TANH_Q0;
                t = a + a * z * q;
            } else {
                t = 1.0f - 2.0f / (e[i] + 1.0f);
            }
            out[b + i] = copysignf(t, v);
        }
    }
}

#endif  /* __AVX512F__ */

#endif
