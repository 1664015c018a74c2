/* One float32 softmax / log-softmax row (contiguous), for softmax.pyx.

   Three passes over the row: its max; exp(x - max) written out and summed (with
   AVX-512 in one pass, the sum in registers; without, a block of MNN_SOFTMAX_BLOCK at a
   time, summed while still in L1); then a scale by 1 / sum (or a shift by -log(sum)).
   The reductions use AVX-512 registers when the build has them (-march=native on an
   AVX-512 machine): Cython's C for a 16-lane reduction keeps the lanes on the stack and
   adds them one at a time, which cost as much as the exp on 128-wide attention rows.
   Without AVX-512 plain loops do the same work. exp is simd_exp.h's (mnn_exp16 inline
   with AVX-512; else mnn_exp_f32, not in place: it re-reads its input). */
#ifndef MNN_SOFTMAX_ROW_H
#define MNN_SOFTMAX_ROW_H
#include <math.h>
#include "simd_exp.h"
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#define MNN_SOFTMAX_BLOCK 512

static float mnn_row_max(const float *x, Py_ssize_t n) {
#ifdef __AVX512F__
    __m512 m = _mm512_set1_ps(-INFINITY);
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + i));
    if (i < n) {
        __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        m = _mm512_mask_max_ps(m, k, m, _mm512_maskz_loadu_ps(k, x + i));
    }
    return _mm512_reduce_max_ps(m);
#else
    float m = -INFINITY;
    for (Py_ssize_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
#endif
}

/* out[i] = x[i] - shift; returns nothing (a vectorizable loop in every build). */
static void mnn_row_shift(const float *x, float *out, Py_ssize_t n, float shift) {
    for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] - shift;
}

static float mnn_row_sum(const float *x, Py_ssize_t n) {
#ifdef __AVX512F__
    __m512 s = _mm512_setzero_ps();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) s = _mm512_add_ps(s, _mm512_loadu_ps(x + i));
    if (i < n) {
        __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(k, x + i));
    }
    return _mm512_reduce_add_ps(s);
#else
    float s = 0;
    for (Py_ssize_t i = 0; i < n; i++) s += x[i];
    return s;
#endif
}

/* y = softmax(x) (log_out: log-softmax) over a row of n; tmp holds MNN_SOFTMAX_BLOCK
   (used without AVX-512 only). */
static void mnn_softmax_row(const float *x, float *y, float *tmp, Py_ssize_t n, int log_out) {
    float m = mnn_row_max(x, n), s = 0;
#ifdef __AVX512F__
    /* One pass for x - max, its exp and their sum, in registers; y gets the exp (or, for
       log-softmax, x - max). */
    (void)tmp;
    __m512 vm = _mm512_set1_ps(m), vs = _mm512_setzero_ps();
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), vm);
        __m512 e = mnn_exp16(d);
        vs = _mm512_add_ps(vs, e);
        _mm512_storeu_ps(y + i, log_out ? d : e);
    }
    if (i < n) {
        __mmask16 k = mnn_tail_mask16(n - i);
        __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm);
        __m512 e = _mm512_maskz_mov_ps(k, mnn_exp16(d));
        vs = _mm512_add_ps(vs, e);
        _mm512_mask_storeu_ps(y + i, k, log_out ? d : e);
    }
    s = _mm512_reduce_add_ps(vs);
#else
    for (Py_ssize_t b = 0; b < n; b += MNN_SOFTMAX_BLOCK) {
        Py_ssize_t w = n - b < MNN_SOFTMAX_BLOCK ? n - b : MNN_SOFTMAX_BLOCK;
        if (log_out) {
            mnn_row_shift(x + b, y + b, w, m);
            mnn_exp_f32(y + b, tmp, w);
            s += mnn_row_sum(tmp, w);
        } else {
            mnn_row_shift(x + b, tmp, w, m);
            mnn_exp_f32(tmp, y + b, w);
            s += mnn_row_sum(y + b, w);
        }
    }
#endif
    if (log_out) {
        float ls = logf(s);
        for (Py_ssize_t i = 0; i < n; i++) y[i] -= ls;
    } else {
        float inv = 1.0f / s;
        for (Py_ssize_t i = 0; i < n; i++) y[i] *= inv;
    }
}

#endif
