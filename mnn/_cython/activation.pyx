# cython: language_level=3
"""Activation kernels: relu's gradient (one pass instead of several numpy ones), and the
forward clip (relu6), hardswish, and float32 sigmoid, silu and erf-gelu.

Python (mnn/express/ops/nn_activation.py, elementwise.py for sigmoid and gelu) checks
that the arrays share shape and dtype, makes them contiguous and allocates the output;
the kernels see flat 1-D arrays. Outputs float32 can only hold as subnormals may come
out as 0.
"""
from cython.parallel cimport prange
from libc.math cimport fmaf

ctypedef fused real_t:
    float
    double


def relu_grad(const real_t[::1] x, const real_t[::1] g, real_t[::1] out, double slope,
              int nthreads=1):
    """``out = g`` where ``x > 0``, else ``g * slope`` (relu's gradient; NaN in ``x``
    takes the ``slope`` branch, as the comparison is false). One pass, vectorized,
    split over ``nthreads`` in chunks."""
    cdef Py_ssize_t n = x.shape[0]
    if g.shape[0] != n or out.shape[0] != n or nthreads < 1:
        raise ValueError("relu_grad kernel: x, g and out lengths differ")
    cdef real_t s = <real_t>slope
    cdef Py_ssize_t chunk = 16384
    cdef Py_ssize_t nchunks = (n + chunk - 1) // chunk
    cdef Py_ssize_t t, i, lo, hi
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        lo = t * chunk
        hi = lo + chunk
        if hi > n:
            hi = n
        for i in range(lo, hi):
            out[i] = g[i] if x[i] > 0 else g[i] * s


# ---------------------------------------------------------------------------------------
# Forward activations over a flat contiguous array (the op modules reshape and allocate).
# Each splits the array in chunks of _CHUNK elements over the threads; the float32
# exponentials go through include/simd_exp.h, a block of _BLOCK at a time, on a stack
# buffer (the block stays in L1 between the passes).

cdef extern from "simd_exp.h":
    void mnn_exp_f32(const float *x, float *out, Py_ssize_t n) nogil

DEF _CHUNK = 16384
DEF _BLOCK = 256


cdef inline Py_ssize_t _check_flat(Py_ssize_t n_x, Py_ssize_t n_out, int nthreads,
                                   str what) except -1:
    if n_x != n_out:
        raise ValueError(f"{what} kernel: input and output lengths differ")
    if nthreads < 1:
        raise ValueError(f"{what} kernel: nthreads must be positive")
    return (n_x + _CHUNK - 1) // _CHUNK


def clip(const real_t[::1] x, real_t[::1] out, double lo, double hi, int nthreads=1):
    """``out = min(max(x, lo), hi)`` (relu6 and friends; NaN stays NaN, as np.clip)."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nchunks = _check_flat(n, out.shape[0], nthreads, "clip")
    cdef real_t a = <real_t>lo, b = <real_t>hi, v
    cdef Py_ssize_t t, i, start, stop
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = t * _CHUNK
        stop = start + _CHUNK if start + _CHUNK < n else n
        for i in range(start, stop):
            v = x[i]
            v = a if v < a else v
            out[i] = b if v > b else v


def hardswish(const real_t[::1] x, real_t[::1] out, int nthreads=1):
    """``out = x * min(max(x + 3, 0), 6) / 6``."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nchunks = _check_flat(n, out.shape[0], nthreads, "hardswish")
    cdef real_t v, zero = 0, six = 6, three = 3
    cdef Py_ssize_t t, i, start, stop
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = t * _CHUNK
        stop = start + _CHUNK if start + _CHUNK < n else n
        for i in range(start, stop):
            v = x[i] + three
            v = zero if v < zero else v
            v = six if v > six else v
            out[i] = x[i] * v / six


# Which exp-based function a block computes.
DEF _SIGMOID = 0
DEF _SILU = 1
DEF _GELU = 2


cdef void _exp_block(const float* x, float* out, Py_ssize_t n, int kind) noexcept nogil:
    """One block of at most _BLOCK elements of sigmoid, silu or (erf) gelu."""
    # exp's input and output in separate buffers: mnn_exp_f32 re-reads its input to
    # redo out-of-range elements, so it must not run in place.
    cdef float buf[_BLOCK]
    cdef float e[_BLOCK]
    cdef float tq[_BLOCK]
    cdef Py_ssize_t i
    cdef float z, t, p, zz, err
    # float constants: C's double literals would turn the loops to double precision.
    cdef float one = 1, half = 0.5, zero = 0, rsqrt2 = 0.70710678118654752, lo = -87
    cdef float c0 = -1.26551223, c1 = 1.00002368, c2 = 0.37409196, c3 = 0.09678418
    cdef float c4 = -0.18628806, c5 = 0.27886807, c6 = -1.13520398, c7 = 1.48851587
    cdef float c8 = -0.82215223, c9 = 0.17087277
    if kind == _GELU:
        # gelu(x) = x * (1 - erfc(z) / 2) for z = x / sqrt(2) >= 0, x * erfc(-z) / 2
        # below: erfc(|z|) = t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2), P the
        # Chebyshev fit of Numerical Recipes' erfcc (relative error < 1.2e-7), so the
        # negative side keeps full relative precision where 1 + erf would cancel.
        for i in range(n):
            z = x[i] * rsqrt2
            z = -z if z < zero else z
            t = one / (one + half * z)
            p = c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * (c6 + t * (
                c7 + t * (c8 + t * c9))))))))
            # -z^2 with its rounding error put back (fmaf gives it exactly): z^2 is
            # large where erfc is small, and its rounding would set the relative error.
            zz = z * z
            err = fmaf(z, z, -zz)
            err = err if err == err else zero  # NaN for z = inf: no correction then
            p = (p - zz) - err
            # Below -87 erfc is under 1e-38 and x * erfc / 2 rounds to (nearly) 0: the
            # clamp keeps exp on its fast path (NaN passes through).
            buf[i] = lo if p < lo else p
            tq[i] = t
        mnn_exp_f32(buf, e, n)
        for i in range(n):
            p = half * tq[i] * e[i]  # erfc(|z|) / 2
            out[i] = x[i] * (one - p) if x[i] >= zero else x[i] * p
        return
    for i in range(n):
        buf[i] = -x[i]
    mnn_exp_f32(buf, e, n)
    if kind == _SIGMOID:
        for i in range(n):
            out[i] = one / (one + e[i])
    else:
        for i in range(n):
            out[i] = x[i] / (one + e[i])


cdef int _exp_family(const float[::1] x, float[::1] out, int nthreads, int kind,
                     str what) except -1:
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nchunks = _check_flat(n, out.shape[0], nthreads, what)
    cdef Py_ssize_t t, b, start, stop, width
    if n == 0:
        return 0
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = t * _CHUNK
        stop = start + _CHUNK if start + _CHUNK < n else n
        for b in range(start, stop, _BLOCK):
            width = stop - b if stop - b < _BLOCK else _BLOCK
            _exp_block(&x[b], &out[b], width, kind)
    return 0


def sigmoid_f32(const float[::1] x, float[::1] out, int nthreads=1):
    """``out = 1 / (1 + exp(-x))`` (float32)."""
    _exp_family(x, out, nthreads, _SIGMOID, "sigmoid")


def silu_f32(const float[::1] x, float[::1] out, int nthreads=1):
    """``out = x / (1 + exp(-x))`` (float32)."""
    _exp_family(x, out, nthreads, _SILU, "silu")


def gelu_f32(const float[::1] x, float[::1] out, int nthreads=1):
    """``out = x / 2 * (1 + erf(x / sqrt(2)))`` (float32): relative error about 1e-7 for
    x > -3, up to 3e-6 further into the negative tail (float32 rounding of the exp's
    argument -x^2/2), absolute error below 1e-13 where the value is under 1e-8."""
    _exp_family(x, out, nthreads, _GELU, "gelu")
