/* Fast float32 exp shared by the kernels that need one (elementwise.pyx, softmax.pyx). */
#ifndef MNN_SIMD_EXP_H
#define MNN_SIMD_EXP_H
#include <math.h>
/* exp on float32 in SIMD lanes: n = round(x / ln2), r = x - n ln2 (two-part ln2),
   exp(r) by Cephes' degree-5 polynomial (about 1 ulp), times 2^n built from the
   exponent bits. Valid for -87 <= x <= 88; a chunk holding anything else (overflow,
   underflow to subnormals, inf, nan) is redone element by element with libm's expf. */
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

#endif
