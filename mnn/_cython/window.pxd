# cython: language_level=3
"""Index arithmetic shared by the sliding-window kernels (conv.pyx, depthwise.pyx):
inline, so each kernel file compiles its own copy with no call overhead."""


cdef inline Py_ssize_t _max(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a > b else b


cdef inline Py_ssize_t _min(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef inline Py_ssize_t _ceil_div(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    # ceil(a / b) for b > 0 and any sign of a
    if a >= 0:
        return (a + b - 1) // b
    return -((-a) // b)


cdef inline Py_ssize_t _ox_lo(Py_ssize_t OW, Py_ssize_t sw, Py_ssize_t off) noexcept nogil:
    # First output column ox with ox*sw + off >= 0.
    return _min(_max(_ceil_div(-off, sw), 0), OW)


cdef inline Py_ssize_t _ox_hi(Py_ssize_t W, Py_ssize_t OW, Py_ssize_t sw, Py_ssize_t off,
                              Py_ssize_t lo) noexcept nogil:
    # One past the last output column ox with ox*sw + off < W (never below lo).
    # (Returned by value, not through pointers: prange makes only assigned names private.)
    return _max(_min(_ceil_div(W - off, sw), OW), lo)
