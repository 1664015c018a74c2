# cython: language_level=3
"""im2col / col2im for convolution by GEMM, over a batch of images side by side.

``im2col_batch`` lays the receptive fields of ``N`` ``(C, H, W)`` images out as the
columns of a ``(C*KH*KW, N*OH*OW)`` matrix: row ``(c*KH + i)*KW + j`` holds input pixel
``(n, c, oy*SH - PT + i*DH, ox*SW - PL + j*DW)`` in column ``n*OH*OW + oy*OW + ox``, zero
where that pixel falls in the padding (one image is the case ``N = 1``). ``col2im_batch``
is its transpose (adjoint): it adds every column entry back onto the pixel it came from,
which is what the input gradient of a convolution (and a transposed convolution) needs.

Every pixel index is tested against the image bounds taken from the array shapes, and the
matrix shape is checked against ``C*KH*KW`` and ``N*OH*OW``, so no input reads or writes
outside the buffers.
"""
from cython.parallel cimport prange
from mnn._cython.window cimport _ceil_div, _max, _min, _ox_hi, _ox_lo

ctypedef fused real_t:
    float
    double


def _check_batch(x, cols, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t oh, Py_ssize_t ow,
                 Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw):
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or dh < 1 or dw < 1 or oh < 0 or ow < 0:
        raise ValueError("conv kernel: kernel, stride and dilation must be >= 1")
    if cols.shape[0] != x.shape[1] * kh * kw or cols.shape[1] != x.shape[0] * oh * ow:
        raise ValueError(f"conv kernel: column matrix {tuple(cols.shape[:2])} does not match "
                         f"C*KH*KW={x.shape[1] * kh * kw}, N*OH*OW={x.shape[0] * oh * ow}")


def im2col_batch(const real_t[:, :, :, ::1] x, real_t[:, ::1] cols, Py_ssize_t kh,
                 Py_ssize_t kw, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw,
                 Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """:func:`im2col` of ``N`` images side by side: ``cols`` is ``(C*kh*kw, N*oh*ow)``,
    image ``n`` in columns ``n*oh*ow .. (n+1)*oh*ow - 1`` (one GEMM then covers the batch:
    the weight gradient sums over images inside the GEMM)."""
    _check_batch(x, cols, kh, kw, oh, ow, sh, sw, dh, dw)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t P = oh * ow
    cdef Py_ssize_t job, n, c, i, j, row, oy, ox, iy, off, lo, hi, base
    with nogil:
        for job in prange(C * kh * kw, num_threads=nthreads, schedule="static"):
            c = job // (kh * kw)
            i = (job // kw) % kh
            j = job % kw
            row = job
            off = j * dw - pl
            lo = _ox_lo(ow, sw, off)
            hi = _ox_hi(W, ow, sw, off, lo)
            for n in range(N):
                for oy in range(oh):
                    iy = oy * sh - pt + i * dh
                    base = n * P + oy * ow
                    if iy < 0 or iy >= H:
                        for ox in range(ow):
                            cols[row, base + ox] = 0
                        continue
                    for ox in range(lo):
                        cols[row, base + ox] = 0
                    if sw == 1:
                        for ox in range(lo, hi):
                            cols[row, base + ox] = x[n, c, iy, ox + off]
                    else:
                        for ox in range(lo, hi):
                            cols[row, base + ox] = x[n, c, iy, ox * sw + off]
                    for ox in range(hi, ow):
                        cols[row, base + ox] = 0


def col2im_batch(const real_t[:, ::1] cols, real_t[:, :, :, ::1] x, Py_ssize_t kh,
                 Py_ssize_t kw, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw,
                 Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw, int nthreads=1):
    """Adjoint of :func:`im2col_batch`: add every entry of ``cols`` onto its source pixel
    of ``x`` (``(N, C, H, W)``, not cleared)."""
    _check_batch(x, cols, kh, kw, oh, ow, sh, sw, dh, dw)
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t P = oh * ow
    cdef Py_ssize_t job, n, c, i, j, row, oy, ox, iy, off, lo, hi, base
    with nogil:
        # A thread owns whole (image, channel) planes of x: no two threads add to a pixel.
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            n = job // C
            c = job % C
            for i in range(kh):
                for j in range(kw):
                    row = (c * kh + i) * kw + j
                    off = j * dw - pl
                    lo = _ox_lo(ow, sw, off)
                    hi = _ox_hi(W, ow, sw, off, lo)
                    for oy in range(oh):
                        iy = oy * sh - pt + i * dh
                        if iy < 0 or iy >= H:
                            continue
                        base = n * P + oy * ow
                        if sw == 1:
                            for ox in range(lo, hi):
                                x[n, c, iy, ox + off] += cols[row, base + ox]
                        else:
                            for ox in range(lo, hi):
                                x[n, c, iy, ox * sw + off] += cols[row, base + ox]


def bias_clamp(real_t[:, ::1] y, const real_t[::1] bias, double lo, double hi,
               int nthreads=1):
    """``y[o, :] = clip(y[o, :] + bias[o], lo, hi)`` in place (one pass after the GEMM;
    infinite bounds clip nothing)."""
    if bias.shape[0] != y.shape[0]:
        raise ValueError("conv kernel: bias length must equal the output rows")
    cdef Py_ssize_t O = y.shape[0], P = y.shape[1], o, p
    cdef real_t b, v, lo_v = <real_t>lo, hi_v = <real_t>hi
    with nogil:
        for o in prange(O, num_threads=nthreads, schedule="static"):
            b = bias[o]
            for p in range(P):
                v = y[o, p] + b
                v = lo_v if v < lo_v else v
                y[o, p] = hi_v if v > hi_v else v
