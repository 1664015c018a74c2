# cython: language_level=3
"""Direct depthwise convolution (group == input channels) and its two gradients.

Output channel ``o`` reads input channel ``o // M`` where ``M = O / C`` is the channel
multiplier; the weight is ``(O, KH, KW)``. Output pixel ``(oy, ox)`` sums
``w[o, i, j] * x[c, oy*SH - PT + i*DH, ox*SW - PL + j*DW]`` over the taps inside the
image. For each tap the output columns whose input column lies inside the image form one
contiguous range, computed once per tap, so the inner loop has no bounds tests and
vectorizes. All shapes are checked here before any loop runs.
"""
from cython.parallel cimport prange

ctypedef fused real_t:
    float
    double


cdef inline Py_ssize_t _max(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a > b else b


cdef inline Py_ssize_t _min(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef inline Py_ssize_t _ceil_div(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
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


def _check(x, w, y, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw):
    if sh < 1 or sw < 1 or dh < 1 or dw < 1:
        raise ValueError("depthwise kernel: stride and dilation must be >= 1")
    C, O = x.shape[1], w.shape[0]
    if C == 0 or O % C != 0 or y.shape[1] != O or y.shape[0] != x.shape[0]:
        raise ValueError(f"depthwise kernel: input {tuple(x.shape[:4])}, weight "
                         f"{tuple(w.shape[:3])} and output {tuple(y.shape[:4])} do not match")


def forward(const real_t[:, :, :, ::1] x, const real_t[:, :, ::1] w,
            const real_t[::1] bias, real_t[:, :, :, ::1] y, Py_ssize_t sh, Py_ssize_t sw,
            Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``y = depthwise_conv(x, w) + bias`` (``y`` is overwritten)."""
    _check(x, w, y, sh, sw, dh, dw)
    if bias.shape[0] != w.shape[0]:
        raise ValueError("depthwise kernel: bias length must equal output channels")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = w.shape[0], KH = w.shape[1], KW = w.shape[2]
    cdef Py_ssize_t OH = y.shape[2], OW = y.shape[3], M = O // C
    cdef Py_ssize_t job, n, o, c, i, j, oy, ox, iy, off, lo, hi
    cdef real_t wv
    with nogil:
        for job in prange(N * O, num_threads=nthreads, schedule="static"):
            n = job // O
            o = job % O
            c = o // M
            for oy in range(OH):
                for ox in range(OW):
                    y[n, o, oy, ox] = bias[o]
                for i in range(KH):
                    iy = oy * sh - pt + i * dh
                    if iy < 0 or iy >= H:
                        continue
                    for j in range(KW):
                        wv = w[o, i, j]
                        off = j * dw - pl
                        lo = _ox_lo(OW, sw, off)
                        hi = _ox_hi(W, OW, sw, off, lo)
                        if sw == 1:
                            for ox in range(lo, hi):
                                y[n, o, oy, ox] += wv * x[n, c, iy, ox + off]
                        else:
                            for ox in range(lo, hi):
                                y[n, o, oy, ox] += wv * x[n, c, iy, ox * sw + off]


def backward_input(const real_t[:, :, :, ::1] dy, const real_t[:, :, ::1] w,
                   real_t[:, :, :, ::1] dx,
                   Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                   Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dx`` = gradient of the input given the output gradient ``dy`` (overwritten)."""
    _check(dx, w, dy, sh, sw, dh, dw)
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[2], W = dx.shape[3]
    cdef Py_ssize_t O = w.shape[0], KH = w.shape[1], KW = w.shape[2]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3], M = O // C
    cdef Py_ssize_t job, n, o, c, m, i, j, oy, ox, iy, ix, off, lo, hi
    cdef real_t wv
    with nogil:
        # A thread owns whole input channels (and the M outputs reading them): no races.
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for iy in range(H):
                for ix in range(W):
                    dx[n, c, iy, ix] = 0
            for m in range(M):
                o = c * M + m
                for oy in range(OH):
                    for i in range(KH):
                        iy = oy * sh - pt + i * dh
                        if iy < 0 or iy >= H:
                            continue
                        for j in range(KW):
                            wv = w[o, i, j]
                            off = j * dw - pl
                            lo = _ox_lo(OW, sw, off)
                            hi = _ox_hi(W, OW, sw, off, lo)
                            for ox in range(lo, hi):
                                dx[n, c, iy, ox * sw + off] += wv * dy[n, o, oy, ox]


def backward_filter(const real_t[:, :, :, ::1] x, const real_t[:, :, :, ::1] dy,
                    real_t[:, :, ::1] dw_out,
                    Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                    Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """``dw_out`` (``(O, KH, KW)``) = gradient of the weight (overwritten)."""
    _check(x, dw_out, dy, sh, sw, dh, dw)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = dw_out.shape[0], KH = dw_out.shape[1], KW = dw_out.shape[2]
    cdef Py_ssize_t OH = dy.shape[2], OW = dy.shape[3], M = O // C
    cdef Py_ssize_t o, n, c, i, j, oy, ox, iy, off, lo, hi
    cdef real_t acc
    with nogil:
        for o in prange(O, num_threads=nthreads, schedule="static"):
            c = o // M
            for i in range(KH):
                for j in range(KW):
                    acc = 0
                    off = j * dw - pl
                    lo = _ox_lo(OW, sw, off)
                    hi = _ox_hi(W, OW, sw, off, lo)
                    for n in range(N):
                        for oy in range(OH):
                            iy = oy * sh - pt + i * dh
                            if iy < 0 or iy >= H:
                                continue
                            for ox in range(lo, hi):
                                acc = acc + dy[n, o, oy, ox] * x[n, c, iy, ox * sw + off]
                    dw_out[o, i, j] = acc
