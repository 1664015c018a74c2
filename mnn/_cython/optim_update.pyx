# cython: language_level=3
"""Optimizer parameter updates in one pass over memory per parameter.

Python (mnn/optim/sgd.py) checks that the arrays share length and dtype and are
contiguous, and allocates the new value's array (fresh: the old one is read-only and
readers may hold it). The optimizer has checked every gradient finite before.
"""
from cython.parallel cimport prange

ctypedef fused real_t:
    float
    double


def sgd_momentum(const real_t[::1] p, const real_t[::1] g, real_t[::1] v,
                 real_t[::1] p_out, double lr, double momentum, double l2,
                 bint has_history, int nthreads=1):
    """MNN's SGD step with L2 regularisation, in one pass::

        d = g + l2 * p
        v = lr * d + momentum * v      (v's old values are ignored without history)
        p_out = p - v

    ``v`` (the optimizer's own history buffer) is updated in place.
    """
    cdef Py_ssize_t n = p.shape[0]
    if (g.shape[0] != n or p_out.shape[0] != n or v.shape[0] != n or nthreads < 1):
        raise ValueError("sgd_momentum kernel: array lengths differ")
    cdef real_t rl = <real_t>lr
    cdef real_t rm = <real_t>momentum
    cdef real_t rd = <real_t>l2
    cdef Py_ssize_t chunk = 16384
    cdef Py_ssize_t nchunks = (n + chunk - 1) // chunk
    cdef Py_ssize_t t, i, lo, hi
    cdef real_t u
    for t in prange(nchunks, nogil=True, num_threads=nthreads, schedule="static"):
        lo = t * chunk
        hi = lo + chunk
        if hi > n:
            hi = n
        if has_history:
            for i in range(lo, hi):
                u = rl * (g[i] + rd * p[i]) + rm * v[i]
                v[i] = u
                p_out[i] = p[i] - u
        else:
            for i in range(lo, hi):
                u = rl * (g[i] + rd * p[i])
                v[i] = u
                p_out[i] = p[i] - u
