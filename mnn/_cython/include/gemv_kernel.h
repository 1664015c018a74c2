/* Dense layer on a few rows of input: y[i, r] = clamp(bias[r] + W[r, :] . x[i, :], lo, hi)
   for the weight rows r0 <= r < r1 (W row-major, O x K; x row-major, N x K).

   A classifier's weight is megabytes read once per run while the inputs are a few KB:
   the time is the weight's trip from memory. Four weight rows at a time, each walked
   once and prefetched MNN_GV_AHEAD floats ahead, are dotted with every input row while
   they are in L1 (the inputs stay in L1 throughout). Each dot product keeps 16 partial
   sums, one vector register, so the loop vectorizes without reassociation flags; the
   partials are added pairwise at the end.

   Bounds: reads W[r0*ldw .. (r1-1)*ldw + K), x[0 .. (N-1)*ldx + K), bias[r0 .. r1),
   writes y[i*ldy + r] for i < N, r0 <= r < r1; the caller (sgemm.pyx) checks the shapes.
   The prefetches are hints and may point past the arrays (they never fault). */
#ifndef MNN_GEMV_KERNEL_H
#define MNN_GEMV_KERNEL_H
#include <stddef.h>

#define MNN_GV_LANES 16
#define MNN_GV_AHEAD 512

static inline float mnn_gv_hsum(float *p) {
    for (int w = MNN_GV_LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++) p[l] += p[l + w];
    return p[0];
}

static inline float mnn_gv_clamp(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* One row block of up to 4 weight rows (rows = 1..4) against every input row. */
static void mnn_gv_block(const float *W, Py_ssize_t ldw, int rows, Py_ssize_t K,
                         const float *x, Py_ssize_t ldx, Py_ssize_t N, float *y,
                         Py_ssize_t ldy, const float *bias, float lo, float hi) {
    const float *w[4];
    for (int j = 0; j < 4; j++) w[j] = W + (j < rows ? j : 0) * ldw;
    Py_ssize_t full = K - K % MNN_GV_LANES;
    for (Py_ssize_t i = 0; i < N; i++) {
        const float *xi = x + i * ldx;
        float a0[MNN_GV_LANES] = {0}, a1[MNN_GV_LANES] = {0};
        float a2[MNN_GV_LANES] = {0}, a3[MNN_GV_LANES] = {0};
        for (Py_ssize_t k = 0; k < full; k += MNN_GV_LANES) {
            if (i == 0) {  /* the first input row streams the weights in */
                __builtin_prefetch(w[0] + k + MNN_GV_AHEAD, 0, 0);
                __builtin_prefetch(w[1] + k + MNN_GV_AHEAD, 0, 0);
                __builtin_prefetch(w[2] + k + MNN_GV_AHEAD, 0, 0);
                __builtin_prefetch(w[3] + k + MNN_GV_AHEAD, 0, 0);
            }
            for (int l = 0; l < MNN_GV_LANES; l++) {
                float xv = xi[k + l];
                a0[l] += w[0][k + l] * xv;
                a1[l] += w[1][k + l] * xv;
                a2[l] += w[2][k + l] * xv;
                a3[l] += w[3][k + l] * xv;
            }
        }
        float s[4] = {mnn_gv_hsum(a0), mnn_gv_hsum(a1), mnn_gv_hsum(a2), mnn_gv_hsum(a3)};
        for (Py_ssize_t k = full; k < K; k++)
            for (int j = 0; j < 4; j++) s[j] += w[j][k] * xi[k];
        for (int j = 0; j < rows; j++)
            y[i * ldy + j] = mnn_gv_clamp(s[j] + bias[j], lo, hi);
    }
}

/* Rows r0 .. r1 of the dense layer, in blocks of four. */
static void mnn_gv_rows(const float *W, Py_ssize_t ldw, Py_ssize_t K, const float *x,
                        Py_ssize_t ldx, Py_ssize_t N, float *y, Py_ssize_t ldy,
                        const float *bias, float lo, float hi, Py_ssize_t r0, Py_ssize_t r1) {
    for (Py_ssize_t r = r0; r < r1; r += 4) {
        int rows = r1 - r < 4 ? (int)(r1 - r) : 4;
        mnn_gv_block(W + r * ldw, ldw, rows, K, x, ldx, N, y + r, ldy, bias + r, lo, hi);
    }
}

#endif
