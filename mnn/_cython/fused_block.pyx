# cython: language_level=3
"""Fused inverted-residual block (include/fused_block.h): 1x1 expand conv, depthwise 3x3
and 1x1 project conv (plus a residual) computed band by band, so the expanded and the
depthwise images never leave the cache.

Every shape, packed-weight size and scratch size is checked here before the C code runs:
the C code trusts them.
"""
import threading

import numpy as np
from cython.parallel cimport prange
cimport openmp

cdef extern from "fused_block.h":
    const int mnn_sg_kc
    const int mnn_sg_nc
    const int mnn_sd_enabled
    Py_ssize_t mnn_sg_packed_a_size(Py_ssize_t M, Py_ssize_t K) nogil
    Py_ssize_t mnn_sd_packed_size(Py_ssize_t M, Py_ssize_t K) nogil
    ctypedef struct mnn_fb_geom:
        Py_ssize_t Cin, H, W, Ce, OH, OW, stride, Cout, R
        const float* pa1
        const float* b1
        float lo1, hi1
        const float* wdw
        const float* b2
        float lo2, hi2
        const float* pa3
        const float* b3
        float lo3, hi3
        int direct1, direct3
        const Py_ssize_t* koff1
        const Py_ssize_t* koff3
    Py_ssize_t mnn_fb_ebuf_size(const mnn_fb_geom* g) nogil
    Py_ssize_t mnn_fb_dbuf_size(const mnn_fb_geom* g) nogil
    void mnn_fb_rows(const mnn_fb_geom* g, const float* x, const float* r, float* y,
                     Py_ssize_t oy_a, Py_ssize_t oy_b, float* ebuf, float* dbuf, float* pb,
                     Py_ssize_t* po, const float* zeros) nogil
    void mnn_fb_images_split(const mnn_fb_geom* g, Py_ssize_t N, const float* x,
                             const float* r, float* y, float* e, float* d, float* pb_all,
                             Py_ssize_t* po_all, const float* zeros, int T) nogil

# Floats of e scratch a band aims at (384 KB): with the band's d rows and the GEMM's
# packing scratch it stays inside a 1 MB L2.
_EBUF_TARGET = 96 * 1024
# Largest expanded image (floats, 768 KB) run whole with the threads splitting channels.
_SPLIT_MAX = 192 * 1024


_work = threading.local()


def _workspace(name, Py_ssize_t n, dtype):
    """A reused 1-D work array of at least ``n`` elements (contents undefined), one per
    name and Python thread (graphs may run from several at once); it only grows. A call
    allocating its 1-2 MB of scratch afresh spent a tenth of a 14x14 block's time in the
    allocator; one array per dtype carved into pieces keeps the per-call cost low."""
    buf = getattr(_work, name, None)
    if buf is None or buf.shape[0] < n:
        buf = np.empty(max(n, 1), dtype)
        setattr(_work, name, buf)
    return buf


def band_rows(Py_ssize_t Ce, Py_ssize_t W, Py_ssize_t stride, Py_ssize_t rows):
    """Output rows per band for ``Ce`` expanded channels of width ``W`` (at most
    ``rows``, at least 1)."""
    cdef Py_ssize_t R = (_EBUF_TARGET // max(Ce * W, 1) - 2) // stride
    return max(1, min(R, rows))


def direct_available():
    """Whether the direct kernel (AVX-512 F, DQ, VL) is compiled in for the 1x1 convs."""
    return bool(mnn_sd_enabled)


def _packed_size(Py_ssize_t m, Py_ssize_t k, bint direct):
    if direct:
        if not mnn_sd_enabled:
            raise ValueError("fused block: the direct kernel needs AVX-512 (F, DQ, VL)")
        return max(mnn_sd_packed_size(m, k), 1)
    return max(mnn_sg_packed_a_size(m, k), 1)


def inverted_residual(const float[:, :, :, ::1] x, pa1, b1, double lo1, double hi1,
                      const float[:, ::1] wdw, const float[::1] b2, double lo2, double hi2,
                      Py_ssize_t stride, const float[::1] pa3, const float[::1] b3,
                      double lo3, double hi3, r, float[:, :, :, ::1] y, int nthreads=1,
                      bint direct1=False, bint direct3=False):
    """``y = clip(W3 @ d + b3, lo3, hi3) [+ r]`` with ``d = clip(dw3x3(e) + b2, lo2,
    hi2)`` (pads 1, ``stride`` 1 or 2) and ``e = clip(W1 @ x + b1, lo1, hi1)``, or
    ``e = x`` when ``pa1`` is None.

    ``pa1``/``pa3`` are ``sgemm.pack_weight`` of the ``(Ce, Cin)`` and ``(Cout, Ce)``
    1x1 weights (``sgemm.pack_weight_direct`` with ``direct1``/``direct3``: those convs
    then run the direct kernel), ``wdw`` the depthwise weight as ``(Ce, 9)``; ``r`` (None or shaped as
    ``y``) is added after the project's clamp. ``y`` is overwritten.
    """
    cdef Py_ssize_t N = x.shape[0], Cin = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t Ce = wdw.shape[0], Cout = b3.shape[0]
    if stride not in (1, 2):
        raise ValueError(f"fused block: stride must be 1 or 2, got {stride}")
    if H < 1 or W < 1 or Cin < 1 or Ce < 1 or Cout < 1:
        raise ValueError(f"fused block: empty input {(N, Cin, H, W)} or channels "
                         f"(expanded {Ce}, out {Cout})")
    if wdw.shape[1] != 9 or b2.shape[0] != Ce:
        raise ValueError(f"fused block: depthwise weight {(wdw.shape[0], wdw.shape[1])} and bias "
                         f"({b2.shape[0]},) do not match {Ce} channels of 3x3")
    cdef const float[::1] pa1v
    cdef const float[::1] b1v
    if pa1 is None:
        if Ce != Cin:
            raise ValueError(f"fused block: without expand the depthwise conv needs "
                             f"{Cin} channels, got {Ce}")
    else:
        pa1v = pa1
        b1v = b1
        if pa1v.shape[0] != _packed_size(Ce, Cin, direct1) or b1v.shape[0] != Ce:
            raise ValueError(f"fused block: packed expand weight of {pa1v.shape[0]} floats "
                             f"and bias ({b1v.shape[0]},) are not a ({Ce}, {Cin}) conv")
    if pa3.shape[0] != _packed_size(Cout, Ce, direct3):
        raise ValueError(f"fused block: packed project weight of {pa3.shape[0]} floats is "
                         f"not a ({Cout}, {Ce}) conv")
    cdef Py_ssize_t OH = (H - 1) // stride + 1, OW = (W - 1) // stride + 1
    if (y.shape[0], y.shape[1], y.shape[2], y.shape[3]) != (N, Cout, OH, OW):
        raise ValueError(f"fused block: output {np.shape(y)} is not "
                         f"{(N, Cout, OH, OW)}")
    cdef const float[:, :, :, ::1] rv
    cdef bint has_r = r is not None
    if has_r:
        rv = r
        if (rv.shape[0], rv.shape[1], rv.shape[2], rv.shape[3]) != (N, Cout, OH, OW):
            raise ValueError(f"fused block: residual {np.shape(r)} is not shaped "
                             f"as the output {(N, Cout, OH, OW)}")
    if nthreads < 1:
        raise ValueError("fused block: nthreads must be >= 1")
    if N == 0:
        return
    cdef mnn_fb_geom g
    g.Cin, g.H, g.W, g.Ce, g.OH, g.OW, g.stride, g.Cout = Cin, H, W, Ce, OH, OW, stride, Cout
    g.pa1 = &pa1v[0] if pa1 is not None else NULL
    g.b1 = &b1v[0] if pa1 is not None else NULL
    g.lo1, g.hi1, g.lo2, g.hi2, g.lo3, g.hi3 = lo1, hi1, lo2, hi2, lo3, hi3
    g.wdw, g.b2, g.pa3, g.b3 = &wdw[0, 0], &b2[0], &pa3[0], &b3[0]
    g.direct1 = direct1 and pa1 is not None
    g.direct3 = direct3
    # Small images with fewer images than threads: whole images, threads split channels.
    cdef bint split = nthreads > 1 and N < nthreads and Ce * H * W <= _SPLIT_MAX
    # Otherwise work items (image, range of output rows), images split in row ranges only
    # when there are fewer images than threads.
    cdef Py_ssize_t parts = max(1, min(OH, (nthreads + N - 1) // N))
    cdef Py_ssize_t per = (OH + parts - 1) // parts
    g.R = OH if split else band_rows(Ce, W, stride, per)
    cdef Py_ssize_t threads = nthreads if split else min(nthreads, N * parts)
    # Integer scratch: the direct kernel's channel offsets (x planes, then d planes of R
    # rows), then each thread's pixel offsets (a band's: at most R * stride + 2 e rows of
    # W and R d rows of OW <= W; or a whole image's).
    cdef Py_ssize_t po_size = H * W if split else (g.R * stride + 2) * W
    cdef Py_ssize_t[::1] iw = _workspace("intp", Cin + Ce + threads * po_size, np.intp)
    cdef Py_ssize_t k
    for k in range(Cin):
        iw[k] = k * H * W
    for k in range(Ce):
        iw[Cin + k] = k * g.R * OW
    g.koff1 = &iw[0]
    g.koff3 = &iw[Cin]
    cdef Py_ssize_t* po = &iw[Cin + Ce]
    # Float scratch: W zeros, each thread's GEMM packing scratch, then the e and d images
    # (shared, whole) or each thread's e and d bands.
    cdef Py_ssize_t pb_size = mnn_sg_kc * mnn_sg_nc
    cdef Py_ssize_t e_size = Ce * H * W if split else mnn_fb_ebuf_size(&g)
    cdef Py_ssize_t d_size = Ce * OH * OW if split else mnn_fb_dbuf_size(&g)
    cdef Py_ssize_t copies = 1 if split else threads
    cdef float[::1] fw = _workspace("f32", W + threads * pb_size + copies * (e_size + d_size),
                                    np.float32)
    cdef float* zeros = &fw[0]
    cdef float* pb = zeros + W
    cdef float* ebuf = pb + threads * pb_size
    cdef float* dbuf = ebuf + copies * e_size
    for k in range(W):
        zeros[k] = 0
    cdef const float* r0 = &rv[0, 0, 0, 0] if has_r else NULL
    if split:
        with nogil:
            mnn_fb_images_split(&g, N, &x[0, 0, 0, 0], r0, &y[0, 0, 0, 0], ebuf, dbuf, pb, po,
                                zeros, <int>threads)
        return
    cdef Py_ssize_t item, n, a, b, tid
    cdef Py_ssize_t r_image = Cout * OH * OW
    with nogil:
        for item in prange(N * parts, num_threads=threads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = item // parts
            a = (item % parts) * per
            b = a + per if a + per < OH else OH
            if a < b:
                mnn_fb_rows(&g, &x[n, 0, 0, 0], r0 + n * r_image if has_r else NULL,
                            &y[n, 0, 0, 0], a, b, ebuf + tid * e_size, dbuf + tid * d_size,
                            pb + tid * pb_size, po + tid * po_size, zeros)
