# cython: language_level=3
"""Activation kernels: relu's gradient (one pass instead of several numpy ones), and the
forward relu (with slope), clip (relu6), hardswish, and float32 sigmoid, silu, erf-gelu
and tanh.

Python (mnn/express/ops/nn_activation.py, elementwise.py for sigmoid, gelu and tanh)
checks that the arrays share shape and dtype, makes them contiguous and allocates the
output; the kernels see flat 1-D arrays. Outputs float32 can only hold as subnormals may
come out as 0.
"""
from cython.parallel cimport prange

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
# exp-based ones run include/exp_activation.h on each chunk.

cdef extern from "exp_activation.h":
    void mnn_sigmoid_f32(const float *x, float *out, Py_ssize_t n) nogil
    void mnn_silu_f32(const float *x, float *out, Py_ssize_t n) nogil
    void mnn_gelu_f32(const float *x, float *out, Py_ssize_t n) nogil
    void mnn_tanh_f32(const float *x, float *out, Py_ssize_t n) nogil

DEF _CHUNK = 16384


cdef inline Py_ssize_t _check_flat(Py_ssize_t n_x, Py_ssize_t n_out, int nthreads,
                                   str what) except -1:
    if n_x != n_out:
        raise ValueError(f"{what} kernel: input and output lengths differ")
    if nthreads < 1:
        raise ValueError(f"{what} kernel: nthreads must be positive")
    return (n_x + _CHUNK - 1) // _CHUNK


def relu(const real_t[::1] x, real_t[::1] out, double slope, int nthreads=1):
    """``out = x`` where ``x > 0``, else ``slope * x``. With slope 0 the negatives become
    0 by a select, not a product (``-inf * 0`` would be NaN); NaN stays NaN either way,
    as in ``np.maximum(x, 0)`` and torch."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nchunks = _check_flat(n, out.shape[0], nthreads, "relu")
    cdef real_t s = <real_t>slope, zero = 0, v
    cdef Py_ssize_t t, i, start, stop
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = t * _CHUNK
        stop = start + _CHUNK if start + _CHUNK < n else n
        if slope == 0:
            for i in range(start, stop):
                v = x[i]
                out[i] = zero if v < zero else v
        else:
            for i in range(start, stop):
                v = x[i]
                out[i] = v if v > zero else v * s


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


# Which exp-based function a chunk computes.
DEF _SIGMOID = 0
DEF _SILU = 1
DEF _GELU = 2
DEF _TANH = 3


cdef int _exp_family(const float[::1] x, float[::1] out, int nthreads, int kind,
                     str what) except -1:
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t nchunks = _check_flat(n, out.shape[0], nthreads, what)
    cdef Py_ssize_t t, start, stop
    if n == 0:
        return 0
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        start = t * _CHUNK
        stop = start + _CHUNK if start + _CHUNK < n else n
        if kind == _SIGMOID:
            mnn_sigmoid_f32(&x[start], &out[start], stop - start)
        elif kind == _SILU:
            mnn_silu_f32(&x[start], &out[start], stop - start)
        elif kind == _GELU:
            mnn_gelu_f32(&x[start], &out[start], stop - start)
        else:
            mnn_tanh_f32(&x[start], &out[start], stop - start)
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


def tanh_f32(const float[::1] x, float[::1] out, int nthreads=1):
    """``out = tanh(x)`` (float32): within 2 ulp (from expm1, exp_activation.h)."""
    _exp_family(x, out, nthreads, _TANH, "tanh")
