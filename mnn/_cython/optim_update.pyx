# cython: language_level=3
"""Optimizer parameter updates: every parameter of a step in one call.

Python (mnn/optim/sgd.py) allocates the new values' arrays (fresh: the old ones are
read-only and readers may hold them); the kernel checks every array's dtype, layout and
length before touching memory, and every gradient finite before writing anything.

MNN's SGD step with L2 regularisation, per element::

    d = g + l2 * p
    v = lr * d + momentum * v      (v's old values are ignored without history)
    p_out = p - v
"""
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

cnp.import_array()

ctypedef fused real_t:
    float
    double

# Elements per work item: parameters are cut into chunks of this size so that the
# threads share out one list of chunks whatever the parameters' sizes.
cdef Py_ssize_t _CHUNK = 16384


cdef inline char _any_non_finite(const real_t* g, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef real_t d
    cdef char flag = 0
    for i in range(n):
        d = g[i] - g[i]  # 0 for finite values, NaN for NaN and +-inf
        flag = flag | (d != d)
    return flag


cdef inline void _sgd_run(const real_t* p, const real_t* g, real_t* v, real_t* out,
                          Py_ssize_t n, bint history, real_t rl, real_t rm,
                          real_t rd) noexcept nogil:
    cdef Py_ssize_t i
    cdef real_t u
    if history:
        for i in range(n):
            u = rl * (g[i] + rd * p[i]) + rm * v[i]
            v[i] = u
            out[i] = p[i] - u
    else:
        for i in range(n):
            u = rl * (g[i] + rd * p[i])
            v[i] = u
            out[i] = p[i] - u


cdef void _sgd_chunks(real_t** p, real_t** g, real_t** v, real_t** out, const char* hist,
                      const Py_ssize_t* job_param, const Py_ssize_t* job_lo,
                      const Py_ssize_t* job_hi, Py_ssize_t njobs, real_t rl, real_t rm,
                      real_t rd, char* bad, int nthreads) noexcept nogil:
    cdef Py_ssize_t j, k, lo
    # First pass: only read the gradients, so a non-finite one leaves every parameter
    # and history untouched (the caller raises).
    for j in prange(njobs, nogil=True, num_threads=nthreads, schedule="static"):
        k = job_param[j]
        lo = job_lo[j]
        bad[j] = _any_non_finite(g[k] + lo, job_hi[j] - lo)
    for j in range(njobs):
        if bad[j]:
            return
    for j in prange(njobs, nogil=True, num_threads=nthreads, schedule="static"):
        k = job_param[j]
        lo = job_lo[j]
        _sgd_run(p[k] + lo, g[k] + lo, v[k] + lo, out[k] + lo, job_hi[j] - lo, hist[k],
                 rl, rm, rd)


cdef void* _data(object arr, int typenum, bint writable, Py_ssize_t size,
                 str what) except NULL:
    if not isinstance(arr, cnp.ndarray):
        raise ValueError(f"sgd_momentum_many kernel: {what} is not an ndarray")
    cdef cnp.ndarray a = <cnp.ndarray>arr
    if cnp.PyArray_TYPE(a) != typenum or not cnp.PyArray_IS_C_CONTIGUOUS(a):
        raise ValueError(f"sgd_momentum_many kernel: {what} is not a C-contiguous array "
                         "of the parameters' dtype")
    if writable and not cnp.PyArray_ISWRITEABLE(a):
        raise ValueError(f"sgd_momentum_many kernel: {what} is read-only")
    if size >= 0 and cnp.PyArray_SIZE(a) != size:
        raise ValueError(f"sgd_momentum_many kernel: {what} has {cnp.PyArray_SIZE(a)} "
                         f"elements, its parameter {size}")
    return cnp.PyArray_DATA(a)


def sgd_momentum_many(list p, list g, list v, list p_out, list has_history, double lr,
                      double momentum, double l2, int nthreads=1):
    """:func:`sgd_momentum` on every parameter at once, after checking every gradient.

    Each list holds one array per parameter: the values ``p``, gradients ``g``, history
    ``v`` (updated in place) and fresh outputs ``p_out``, all C-contiguous, of one dtype
    (float32 or float64), each parameter's four of one size; ``has_history[k]`` says
    whether ``v[k]`` holds a previous update.

    Returns
    -------
    int
        -1 when every parameter was updated; otherwise the index of the first parameter
        whose gradient holds a NaN or an infinity, and nothing was written.
    """
    cdef Py_ssize_t count = len(p), k, n, c, njobs = 0, j = 0
    if (len(g) != count or len(v) != count or len(p_out) != count
            or len(has_history) != count or nthreads < 1):
        raise ValueError("sgd_momentum_many kernel: list lengths differ")
    if count == 0:
        return -1
    if not isinstance(p[0], cnp.ndarray):
        raise ValueError("sgd_momentum_many kernel: parameter 0 is not an ndarray")
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>p[0])
    if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
        raise ValueError("sgd_momentum_many kernel: parameters must be float32 or float64")
    cdef void** ptrs = <void**>malloc(4 * count * sizeof(void*))
    cdef char* hist = <char*>malloc(count)
    cdef Py_ssize_t* sizes = <Py_ssize_t*>malloc(count * sizeof(Py_ssize_t))
    cdef Py_ssize_t* job_param = NULL
    cdef Py_ssize_t* job_lo = NULL
    cdef Py_ssize_t* job_hi = NULL
    cdef char* bad = NULL
    cdef Py_ssize_t first_bad = -1
    if ptrs == NULL or hist == NULL or sizes == NULL:
        free(ptrs)
        free(hist)
        free(sizes)
        raise MemoryError()
    try:
        for k in range(count):
            ptrs[k] = _data(p[k], typenum, False, -1, f"parameter {k}")
            n = cnp.PyArray_SIZE(<cnp.ndarray>p[k])
            sizes[k] = n
            ptrs[count + k] = _data(g[k], typenum, False, n, f"gradient {k}")
            ptrs[2 * count + k] = _data(v[k], typenum, True, n, f"history {k}")
            ptrs[3 * count + k] = _data(p_out[k], typenum, True, n, f"output {k}")
            hist[k] = 1 if has_history[k] else 0
            njobs += (n + _CHUNK - 1) // _CHUNK
        job_param = <Py_ssize_t*>malloc((njobs + 1) * 3 * sizeof(Py_ssize_t))
        bad = <char*>malloc(njobs + 1)
        if job_param == NULL or bad == NULL:
            raise MemoryError()
        job_lo = job_param + njobs + 1
        job_hi = job_lo + njobs + 1
        for k in range(count):
            c = 0
            while c < sizes[k]:
                job_param[j] = k
                job_lo[j] = c
                job_hi[j] = min(c + _CHUNK, sizes[k])
                c += _CHUNK
                j += 1
        if typenum == cnp.NPY_FLOAT32:
            _sgd_chunks(<float**>ptrs, <float**>(ptrs + count), <float**>(ptrs + 2 * count),
                        <float**>(ptrs + 3 * count), hist, job_param, job_lo, job_hi, njobs,
                        <float>lr, <float>momentum, <float>l2, bad, nthreads)
        else:
            _sgd_chunks(<double**>ptrs, <double**>(ptrs + count),
                        <double**>(ptrs + 2 * count), <double**>(ptrs + 3 * count), hist,
                        job_param, job_lo, job_hi, njobs, lr, momentum, l2, bad, nthreads)
        for j in range(njobs):
            if bad[j]:
                first_bad = job_param[j]
                break
    finally:
        free(ptrs)
        free(hist)
        free(sizes)
        free(job_param)
        free(bad)
    return first_bad
