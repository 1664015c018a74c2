# cython: language_level=3
"""Layer normalization over the last axis of a (rows, d) array.

Python (mnn/express/ops/nn_norm.py) flattens the normalized trailing axes into ``d``,
checks dtypes, shapes and contiguity and allocates the output. Per row:
``mean = sum(x) / d``, ``var = sum((x - mean)^2) / d`` (both accumulated in double),
``y = (x - mean) / sqrt(var + eps) * gamma + beta``. Rows are split over OpenMP threads.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt

ctypedef fused real_t:
    float
    double



cdef void _row(const real_t* x, real_t* y, const real_t* gamma, const real_t* beta,
               bint has_gamma, bint has_beta, double eps, Py_ssize_t D) noexcept nogil:
    # Sums in 16 independent double lanes: a single running sum is one long dependency
    # chain that the compiler may not reorder (no fast-math), so it would not vectorize.
    cdef double lanes[16]
    cdef double acc, dev
    cdef real_t mean, inv
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
    inv = <real_t>(1.0 / sqrt(<double>(<real_t>(acc / D) + <real_t>eps)))
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
