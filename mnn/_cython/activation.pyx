# cython: language_level=3
"""Activation gradients that would otherwise take several numpy passes.

Python (mnn/express/ops/nn_activation.py) checks that the arrays share shape and dtype,
makes them contiguous and allocates the output.
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
