# cython: language_level=3
"""Normalization kernels: layer norm over the last axis of a (rows, d) array, and group
norm (instance norm is its one-channel-per-group case) over (rows, channels, pixels).

Python (mnn/express/ops/nn_norm.py) flattens the normalized axes, checks dtypes, shapes
and contiguity and allocates the output. Per row: ``mean = sum(x) / d``,
``var = sum((x - mean)^2) / d`` (both accumulated in double),
``y = (x - mean) / sqrt(var + eps) * gamma + beta`` (gamma/beta per element of the row
for layer norm, per channel for group norm). Rows are split over OpenMP threads.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt

ctypedef fused real_t:
    float
    double



cdef extern from "norm_moments.h":
    void mnn_moments_f32(const float *x, Py_ssize_t n, double *mean_out,
                         double *var_out) nogil


cdef void _moments(const real_t* x, Py_ssize_t D, double* mean_out,
                   double* var_out) noexcept nogil:
    if real_t is float:
        # float32: include/norm_moments.h (AVX-512 double accumulators).
        mnn_moments_f32(x, D, mean_out, var_out)
        return
    # Sums in 16 independent double lanes: a single running sum is one long dependency
    # chain that the compiler may not reorder (no fast-math), so it would not vectorize.
    cdef double lanes[16]
    cdef double acc, dev
    cdef real_t mean
    cdef Py_ssize_t i, k, body = D - D % 16
    for k in range(16):
        lanes[k] = 0
    for i in range(0, body, 16):
        for k in range(16):
            lanes[k] = lanes[k] + x[i + k]
    acc = 0
    for k in range(16):
        acc = acc + lanes[k]
    for i in range(body, D):
        acc = acc + x[i]
    mean = <real_t>(acc / D)
    for k in range(16):
        lanes[k] = 0
    for i in range(0, body, 16):
        for k in range(16):
            dev = x[i + k] - mean
            lanes[k] = lanes[k] + dev * dev
    acc = 0
    for k in range(16):
        acc = acc + lanes[k]
    for i in range(body, D):
        dev = x[i] - mean
        acc = acc + dev * dev
    mean_out[0] = mean
    var_out[0] = acc / D


cdef void _row(const real_t* x, real_t* y, const real_t* gamma, const real_t* beta,
               bint has_gamma, bint has_beta, double eps, Py_ssize_t D) noexcept nogil:
    cdef double m, v
    cdef real_t mean, inv
    cdef Py_ssize_t i
    _moments(x, D, &m, &v)
    mean = <real_t>m
    inv = <real_t>(1.0 / sqrt(<double>(<real_t>v + <real_t>eps)))
    if has_gamma and has_beta:
        for i in range(D):
            y[i] = (x[i] - mean) * inv * gamma[i] + beta[i]
    elif has_gamma:
        for i in range(D):
            y[i] = (x[i] - mean) * inv * gamma[i]
    elif has_beta:
        for i in range(D):
            y[i] = (x[i] - mean) * inv + beta[i]
    else:
        for i in range(D):
            y[i] = (x[i] - mean) * inv


def layer_norm_rows(const real_t[:, ::1] x, real_t[:, ::1] y, const real_t[::1] gamma,
                    const real_t[::1] beta, bint has_gamma, bint has_beta, double eps,
                    int nthreads=1):
    """``y`` overwritten with the layer norm of each row of ``x``; ``gamma``/``beta`` have
    length ``d`` when used (any length, unread, otherwise)."""
    cdef Py_ssize_t R = x.shape[0], D = x.shape[1]
    if y.shape[0] != R or y.shape[1] != D:
        raise ValueError("layer_norm kernel: input and output shapes differ")
    if (has_gamma and gamma.shape[0] != D) or (has_beta and beta.shape[0] != D):
        raise ValueError("layer_norm kernel: gamma/beta length differs from the row length")
    if nthreads < 1:
        raise ValueError("layer_norm kernel: nthreads must be positive")
    if R == 0 or D == 0:
        return
    cdef Py_ssize_t r
    # Unused gamma/beta may be empty: never take their address then.
    cdef const real_t* g = &gamma[0] if has_gamma else NULL
    cdef const real_t* b = &beta[0] if has_beta else NULL
    for r in prange(R, nogil=True, num_threads=nthreads, schedule="static"):
        _row(&x[r, 0], &y[r, 0], g, b, has_gamma, has_beta, eps, D)


cdef void _group(const real_t* x, real_t* y, const real_t* gamma, const real_t* beta,
                 bint has_gamma, bint has_beta, double eps, Py_ssize_t cpg,
                 Py_ssize_t S) noexcept nogil:
    # One (channels of a group, pixels) block: moments over all of it, then per channel
    # one fused multiply-add over its pixels.
    cdef double m, v
    cdef real_t mean, inv, scale, shift
    cdef Py_ssize_t j, i
    _moments(x, cpg * S, &m, &v)
    mean = <real_t>m
    inv = <real_t>(1.0 / sqrt(<double>(<real_t>v + <real_t>eps)))
    for j in range(cpg):
        scale = inv * gamma[j] if has_gamma else inv
        shift = -mean * scale
        if has_beta:
            shift = shift + beta[j]
        for i in range(S):
            y[j * S + i] = x[j * S + i] * scale + shift


def group_norm_rows(const real_t[:, :, ::1] x, real_t[:, :, ::1] y, const real_t[::1] gamma,
                    const real_t[::1] beta, bint has_gamma, bint has_beta, double eps,
                    Py_ssize_t groups, int nthreads=1):
    """``y`` overwritten with the group norm of ``x`` viewed as ``(N * groups,
    channels per group, pixels)``; ``gamma``/``beta`` have one value per channel
    (``groups * channels per group``) when used (any length, unread, otherwise)."""
    cdef Py_ssize_t R = x.shape[0], cpg = x.shape[1], S = x.shape[2], r, g
    if y.shape[0] != R or y.shape[1] != cpg or y.shape[2] != S:
        raise ValueError("group_norm kernel: input and output shapes differ")
    if groups < 1 or R % groups != 0:
        raise ValueError("group_norm kernel: rows are not a whole number of groups")
    if (has_gamma and gamma.shape[0] != groups * cpg) or \
            (has_beta and beta.shape[0] != groups * cpg):
        raise ValueError("group_norm kernel: gamma/beta length differs from the channels")
    if nthreads < 1:
        raise ValueError("group_norm kernel: nthreads must be positive")
    if R == 0 or cpg == 0 or S == 0:
        return
    cdef const real_t* gp = &gamma[0] if has_gamma else NULL
    cdef const real_t* bp = &beta[0] if has_beta else NULL
    for r in prange(R, nogil=True, num_threads=nthreads, schedule="static"):
        g = r % groups
        _group(&x[r, 0, 0], &y[r, 0, 0], gp + g * cpg if has_gamma else NULL,
               bp + g * cpg if has_beta else NULL, has_gamma, has_beta, eps, cpg, S)
