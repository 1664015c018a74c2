# cython: language_level=3
"""Our own packed float32 GEMM with fused bias and clamp (include/sgemm_kernel.h).

``pack_weight`` lays a weight matrix ``A (M x K)`` out once in the micro-kernel's slab
order; ``gemm_packed`` then computes ``C = clip(A @ B + bias[:, None], lo, hi)`` for any
``B (K x N)``, the threads splitting the columns of C (or its row slabs when C has few
columns), each with its own packing scratch. ``conv_packed_images`` is the same GEMM for a
convolution whose ``B`` would be the im2col matrix: it packs ``B`` straight from the image. Every shape is checked here before the C
code runs: the C code trusts M, N and K.
"""
import numpy as np
from cython.parallel cimport prange
cimport openmp
from libc.math cimport INFINITY

cdef extern from "sgemm_kernel.h":
    const int mnn_sg_mr
    const int mnn_sg_nr
    const int mnn_sg_kc
    const int mnn_sg_nc
    const char* mnn_sg_isa
    Py_ssize_t mnn_sg_packed_a_size(Py_ssize_t M, Py_ssize_t K) nogil
    void mnn_sg_pack_a(Py_ssize_t M, Py_ssize_t K, const float* A, Py_ssize_t lda,
                       float* pa) nogil
    void mnn_sg_block(Py_ssize_t M, Py_ssize_t K, const float* pa, const float* B,
                      Py_ssize_t ldb, float* C, Py_ssize_t ldc, Py_ssize_t s0, Py_ssize_t s1,
                      Py_ssize_t n0, Py_ssize_t n1, float* pb, const float* bias, float lo,
                      float hi) nogil
    ctypedef struct mnn_sg_conv:
        const float* x
        Py_ssize_t xc, xr, H, W, KH, KW, OW, sh, sw, pt, pl, dh, dw
    void mnn_sg_block_conv(Py_ssize_t M, Py_ssize_t K, const float* pa,
                           const mnn_sg_conv* conv, float* C, Py_ssize_t ldc, Py_ssize_t s0,
                           Py_ssize_t s1, Py_ssize_t n0, Py_ssize_t n1, float* pb,
                           const float* bias, float lo, float hi) nogil
    const int mnn_sd_enabled
    const int mnn_sd_m
    int mnn_sd_npw(Py_ssize_t P, Py_ssize_t K)
    int mnn_sd_xpf(Py_ssize_t planes)
    int mnn_sd_tile_major(Py_ssize_t M, Py_ssize_t K)
    Py_ssize_t mnn_sd_acc_floats(Py_ssize_t P, Py_ssize_t K, int npw, int tile_major)
    Py_ssize_t mnn_sd_packed_size(Py_ssize_t M, Py_ssize_t K) nogil
    void mnn_sd_pack_w(Py_ssize_t M, Py_ssize_t K, const float* A, Py_ssize_t lda,
                       float* pw) nogil
    void mnn_sd_pad_rows(const float* src, Py_ssize_t sr, Py_ssize_t H, Py_ssize_t W,
                         float* dst, Py_ssize_t wp, Py_ssize_t pt, Py_ssize_t pl,
                         Py_ssize_t r0, Py_ssize_t r1) nogil
    void mnn_sd_koff(Py_ssize_t C, Py_ssize_t KH, Py_ssize_t KW, Py_ssize_t xc,
                     Py_ssize_t xr, Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t* koff) nogil
    void mnn_sd_block(Py_ssize_t M, Py_ssize_t K, const float* pw, const float* x,
                      const Py_ssize_t* koff, Py_ssize_t P, Py_ssize_t OW, Py_ssize_t rstep,
                      Py_ssize_t sw, float* C, Py_ssize_t ldc, Py_ssize_t u0, Py_ssize_t u1,
                      int npw, int tile_major, int xpf, Py_ssize_t* po, const float* bias,
                      float lo, float hi, const float* skip, float* acc) nogil

cdef extern from "gemv_kernel.h":
    void mnn_gv_rows(const float* W, Py_ssize_t ldw, Py_ssize_t K, const float* x,
                     Py_ssize_t ldx, Py_ssize_t N, float* y, Py_ssize_t ldy,
                     const float* bias, float lo, float hi, Py_ssize_t r0,
                     Py_ssize_t r1) nogil


def info():
    """``(isa, MR, NR, KC, NC)``: the instruction set and tile sizes compiled in."""
    return mnn_sg_isa.decode(), mnn_sg_mr, mnn_sg_nr, mnn_sg_kc, mnn_sg_nc


ctypedef void (*_packer_t)(Py_ssize_t M, Py_ssize_t K, const float* A, Py_ssize_t lda,
                           float* out) noexcept nogil


cdef object _pack(const float[:, ::1] a, Py_ssize_t size, _packer_t packer):
    # ``a`` (M x K) laid out by ``packer`` into a new array of ``size`` floats.
    cdef Py_ssize_t M = a.shape[0], K = a.shape[1]
    out = np.empty(max(size, 1), np.float32)
    cdef float[::1] packed = out
    if M > 0 and K > 0:
        with nogil:
            packer(M, K, &a[0, 0], K, &packed[0])
    return out


def pack_weight(const float[:, ::1] a):
    """The packed form of ``a`` (``M x K``, float32), for :func:`gemm_packed`."""
    return _pack(a, mnn_sg_packed_a_size(a.shape[0], a.shape[1]), mnn_sg_pack_a)


def gemm_packed(const float[::1] packed, Py_ssize_t m, const float[:, ::1] b,
                float[:, ::1] c, const float[::1] bias, double lo=-INFINITY,
                double hi=INFINITY, int nthreads=1):
    """``c = clip(A @ b + bias[:, None], lo, hi)`` where ``packed = pack_weight(A)``
    and ``A`` is ``(m, b.shape[0])``; ``c`` (``(m, N)``) is overwritten."""
    cdef Py_ssize_t K = b.shape[0], N = b.shape[1]
    if m < 0 or packed.shape[0] != max(mnn_sg_packed_a_size(m, K), 1):
        raise ValueError(f"sgemm: packed weight of {packed.shape[0]} floats is not a "
                         f"({m}, {K}) matrix")
    if c.shape[0] != m or c.shape[1] != N:
        raise ValueError(f"sgemm: output ({c.shape[0]}, {c.shape[1]}) is not ({m}, {N})")
    if bias.shape[0] != m:
        raise ValueError(f"sgemm: bias of {bias.shape[0]} values for {m} rows")
    if nthreads < 1:
        raise ValueError("sgemm: nthreads must be >= 1")
    if m == 0 or N == 0:
        return
    if K == 0:
        c_arr = np.asarray(c)
        c_arr[...] = np.clip(np.asarray(bias)[:, None], lo, hi)
        return
    cdef Py_ssize_t slabs = (m + mnn_sg_mr - 1) // mnn_sg_mr
    # Split the columns when each thread gets at least two strips; else the row slabs.
    cdef bint by_cols = N >= 2 * mnn_sg_nr * nthreads or slabs < nthreads
    cdef Py_ssize_t parts = nthreads
    cdef Py_ssize_t chunk
    if by_cols:
        chunk = ((N + parts - 1) // parts + mnn_sg_nr - 1) // mnn_sg_nr * mnn_sg_nr
    else:
        chunk = (slabs + parts - 1) // parts
    scratch = np.empty((nthreads, mnn_sg_kc * mnn_sg_nc), np.float32)
    cdef float[:, ::1] pb = scratch
    cdef Py_ssize_t t, lo_i, hi_i, tid
    cdef float flo = <float>lo, fhi = <float>hi
    with nogil:
        for t in prange(parts, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            lo_i = t * chunk
            if by_cols:
                hi_i = lo_i + chunk if lo_i + chunk < N else N
                if lo_i < hi_i:
                    mnn_sg_block(m, K, &packed[0], &b[0, 0], N, &c[0, 0], N, 0, slabs,
                                 lo_i, hi_i, &pb[tid, 0], &bias[0], flo, fhi)
            else:
                hi_i = lo_i + chunk if lo_i + chunk < slabs else slabs
                if lo_i < hi_i:
                    mnn_sg_block(m, K, &packed[0], &b[0, 0], N, &c[0, 0], N, lo_i, hi_i,
                                 0, N, &pb[tid, 0], &bias[0], flo, fhi)


def gemm_packed_images(const float[::1] packed, Py_ssize_t m, const float[:, ::1] b,
                       float[:, :, :] c, const float[::1] bias, double lo=-INFINITY,
                       double hi=INFINITY, int nthreads=1):
    """:func:`gemm_packed` for ``N`` images at once: ``b`` is ``(K, N*P)`` (image ``n`` in
    columns ``n*P ..``, as ``conv.im2col_batch`` lays them out) and ``c[n] = clip(A @
    b[:, n*P:(n+1)*P] + bias, lo, hi)`` for ``c`` of shape ``(N, m, P)`` whose rows are
    contiguous (the image and row strides are free: a group's slice of an output)."""
    cdef Py_ssize_t K = b.shape[0], N = c.shape[0], P = c.shape[2]
    if m < 0 or packed.shape[0] != max(mnn_sg_packed_a_size(m, K), 1):
        raise ValueError(f"sgemm: packed weight of {packed.shape[0]} floats is not a "
                         f"({m}, {K}) matrix")
    if c.shape[1] != m or b.shape[1] != N * P:
        raise ValueError(f"sgemm: output ({c.shape[0]}, {c.shape[1]}, {c.shape[2]}) does "
                         f"not match {m} rows and {b.shape[1]} columns")
    if (c.strides[2] != sizeof(float) or c.strides[1] < <Py_ssize_t>sizeof(float)
            or c.strides[1] % sizeof(float) or c.strides[0] < 0):
        raise ValueError("sgemm: output rows must be contiguous float32 with positive strides")
    if bias.shape[0] != m:
        raise ValueError(f"sgemm: bias of {bias.shape[0]} values for {m} rows")
    if nthreads < 1:
        raise ValueError("sgemm: nthreads must be >= 1")
    if m == 0 or N == 0 or P == 0:
        return
    if K == 0:
        np.asarray(c)[...] = np.clip(np.asarray(bias)[None, :, None], lo, hi)
        return
    if N == 1:
        # One image: split its columns or rows over the threads.
        gemm_packed(packed, m, b, np.asarray(c)[0], bias, lo, hi, nthreads)
        return
    cdef Py_ssize_t slabs = (m + mnn_sg_mr - 1) // mnn_sg_mr
    cdef Py_ssize_t ldc = c.strides[1] // sizeof(float), ldb = N * P
    scratch = np.empty((nthreads, mnn_sg_kc * mnn_sg_nc), np.float32)
    cdef float[:, ::1] pb = scratch
    cdef Py_ssize_t n, tid
    cdef float flo = <float>lo, fhi = <float>hi
    with nogil:
        for n in prange(N, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            mnn_sg_block(m, K, &packed[0], &b[0, n * P], ldb, &c[n, 0, 0], ldc, 0, slabs,
                         0, P, &pb[tid, 0], &bias[0], flo, fhi)


cdef bint _check_conv_args(const float[::1] packed, Py_ssize_t packed_floats, Py_ssize_t m,
                           const float[:, :, :, :] x, float[:, :, :] c,
                           const float[::1] bias, Py_ssize_t kh, Py_ssize_t kw,
                           Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw,
                           Py_ssize_t dh, Py_ssize_t dw, double lo, double hi,
                           int nthreads, skip=None) except -1:
    """Validates the arguments shared by the two conv entry points (``packed_floats``:
    the size the packed weight must have). True when nothing is left to compute: no
    output, or an empty reduction, whose output is then the clamped bias (plus
    ``skip``, when given)."""
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t K = C * kh * kw, P = c.shape[2]
    if kh < 1 or kw < 1 or sh < 1 or sw < 1 or dh < 1 or dw < 1 or oh < 1 or ow < 1:
        raise ValueError("sgemm conv: kernel, output size, stride and dilation must be >= 1")
    if m < 0 or packed.shape[0] != max(packed_floats, 1):
        raise ValueError(f"sgemm conv: packed weight of {packed.shape[0]} floats is not a "
                         f"({m}, {C}*{kh}*{kw}) matrix")
    if c.shape[0] != N or c.shape[1] != m or P != oh * ow:
        raise ValueError(f"sgemm conv: output ({c.shape[0]}, {c.shape[1]}, {P}) is not "
                         f"({N}, {m}, {oh}*{ow})")
    if (c.strides[2] != sizeof(float) or c.strides[1] < <Py_ssize_t>sizeof(float)
            or c.strides[1] % sizeof(float) or c.strides[0] < 0
            or c.strides[0] % sizeof(float)):
        raise ValueError("sgemm conv: output rows must be contiguous float32 with positive "
                         "strides")
    if (x.strides[3] != sizeof(float) or x.strides[0] % sizeof(float)
            or x.strides[1] % sizeof(float) or x.strides[2] % sizeof(float)):
        raise ValueError("sgemm conv: input rows must be contiguous float32")
    if bias.shape[0] != m:
        raise ValueError(f"sgemm conv: bias of {bias.shape[0]} values for {m} rows")
    if nthreads < 1:
        raise ValueError("sgemm conv: nthreads must be >= 1")
    if m == 0 or N == 0:
        return True
    if K == 0 or H == 0 or W == 0:
        # Every window reads only zeros.
        out = np.asarray(bias)[None, :, None]
        if skip is not None:
            out = out + np.asarray(skip)
        np.asarray(c)[...] = np.clip(out, lo, hi)
        return True
    return False


def conv_packed_images(const float[::1] packed, Py_ssize_t m, const float[:, :, :, :] x,
                       float[:, :, :] c, const float[::1] bias, Py_ssize_t kh, Py_ssize_t kw,
                       Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw,
                       Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw,
                       double lo=-INFINITY, double hi=INFINITY, int nthreads=1):
    """Convolution of ``N`` images by the packed GEMM, without an im2col matrix.

    ``c[n] = clip(A @ im2col(x[n]) + bias[:, None], lo, hi)`` where ``packed =
    pack_weight(A)``, ``A`` is ``(m, C*kh*kw)`` (a weight ``(m, C, kh, kw)`` flattened)
    and ``im2col(x[n])`` is the ``(C*kh*kw, oh*ow)`` matrix of ``conv.im2col_batch``
    (stride ``sh, sw``, top/left pads ``pt, pl``, dilation ``dh, dw``; pixels outside the
    image are zero). ``x`` is ``(N, C, H, W)`` with contiguous rows (a group's channel
    slice of an input is fine) and ``c`` is ``(N, m, oh*ow)`` with contiguous rows.

    Parameters
    ----------
    packed : ndarray of float32
        ``pack_weight(A)``.
    m : int
        Rows of ``A`` (output channels).
    x : ndarray of float32, shape (N, C, H, W)
        Input images.
    c : ndarray of float32, shape (N, m, oh*ow)
        Output, overwritten.
    bias : ndarray of float32, shape (m,)
        Added to every output row before the clamp.
    kh, kw, oh, ow, sh, sw, pt, pl, dh, dw : int
        Kernel size, output size, strides, top/left pads and dilations.
    lo, hi : float
        Clamp bounds (infinite: no clamp).
    nthreads : int
        OpenMP threads (each image's columns, or its row slabs, are split over them).
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t K = C * kh * kw, P = c.shape[2]
    if _check_conv_args(packed, mnn_sg_packed_a_size(m, K), m, x, c, bias, kh, kw, oh, ow, sh, sw,
                        dh, dw, lo, hi, nthreads):
        return
    cdef Py_ssize_t slabs = (m + mnn_sg_mr - 1) // mnn_sg_mr
    # Each image is split in `parts` jobs: column chunks (whole strips) when every part
    # gets at least two strips, else row slabs (each such job packs all of B itself).
    cdef Py_ssize_t parts = nthreads if N < nthreads * 4 else 1
    cdef bint by_cols = P >= 2 * mnn_sg_nr * parts or slabs < parts
    cdef Py_ssize_t chunk
    if by_cols:
        chunk = ((P + parts - 1) // parts + mnn_sg_nr - 1) // mnn_sg_nr * mnn_sg_nr
    else:
        chunk = (slabs + parts - 1) // parts
    cdef Py_ssize_t ldc = c.strides[1] // sizeof(float)
    cdef Py_ssize_t xn = x.strides[0] // sizeof(float)
    cdef mnn_sg_conv geo
    geo.x = &x[0, 0, 0, 0]
    geo.xc = x.strides[1] // sizeof(float)
    geo.xr = x.strides[2] // sizeof(float)
    geo.H = H
    geo.W = W
    geo.KH = kh
    geo.KW = kw
    geo.OW = ow
    geo.sh = sh
    geo.sw = sw
    geo.pt = pt
    geo.pl = pl
    geo.dh = dh
    geo.dw = dw
    scratch = np.empty((nthreads, mnn_sg_kc * mnn_sg_nc + mnn_sg_nc), np.float32)
    cdef float[:, ::1] pb = scratch
    cdef Py_ssize_t job, n, t, lo_i, hi_i, tid
    cdef mnn_sg_conv mine
    cdef float flo = <float>lo, fhi = <float>hi
    with nogil:
        for job in prange(N * parts, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // parts
            t = job % parts
            mine = geo
            mine.x = geo.x + n * xn
            lo_i = t * chunk
            if by_cols:
                hi_i = lo_i + chunk if lo_i + chunk < P else P
                if lo_i < hi_i:
                    mnn_sg_block_conv(m, K, &packed[0], &mine, &c[n, 0, 0], ldc, 0, slabs,
                                      lo_i, hi_i, &pb[tid, 0], &bias[0], flo, fhi)
            else:
                hi_i = lo_i + chunk if lo_i + chunk < slabs else slabs
                if lo_i < hi_i:
                    mnn_sg_block_conv(m, K, &packed[0], &mine, &c[n, 0, 0], ldc, lo_i, hi_i,
                                      0, P, &pb[tid, 0], &bias[0], flo, fhi)


def direct_available():
    """Whether :func:`conv_direct_images` is compiled in (it needs AVX-512 F/DQ/VL)."""
    return bool(mnn_sd_enabled)


def pack_weight_direct(const float[:, ::1] a):
    """The packed form of ``a`` (``M x K``, float32) for :func:`conv_direct_images`:
    slabs of 32 rows, k-major (rows past ``M`` zero)."""
    return _pack(a, mnn_sd_packed_size(a.shape[0], a.shape[1]), mnn_sd_pack_w)


def _padded_hw(Py_ssize_t H, Py_ssize_t W, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t oh,
               Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
               Py_ssize_t dh, Py_ssize_t dw):
    # The image with a zero border wide enough for every window: pt rows above, pl
    # columns left, and below / right as far as the last window reaches.
    return (max(H + pt, (oh - 1) * sh + (kh - 1) * dh + 1),
            max(W + pl, (ow - 1) * sw + (kw - 1) * dw + 1))


def direct_pad_elements(x_shape, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t oh, Py_ssize_t ow,
                        Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t pt, Py_ssize_t pl,
                        Py_ssize_t dh, Py_ssize_t dw):
    """Floats of the padded copy of an ``(N, C, H, W)`` input that
    :func:`conv_direct_images` builds (in its ``pad_scratch`` when given); 0 when the
    windows stay inside the image (no copy of an input with contiguous planes)."""
    n, c, h, w = x_shape
    hp, wp = _padded_hw(h, w, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw)
    return 0 if (hp, wp) == (h, w) else n * c * hp * wp


cpdef pad_images(const float[:, :, :, :] x, Py_ssize_t hp, Py_ssize_t wp, Py_ssize_t pt,
                 Py_ssize_t pl, int nthreads=1, pad_scratch=None):
    """``x`` (N, C, H, W, rows contiguous) copied into a zero border: an ``(N, C, hp, wp)``
    float32 array with ``x`` at row ``pt``, column ``pl``, as the direct kernels read
    their input. In ``pad_scratch`` (float32, at least ``N*C*hp*wp`` floats) when given,
    else a new array.

    With fewer than four images per thread, each thread copies a band of rows of every
    plane, band ``b`` of all planes before band ``b + 1``: the threads then copy the rows
    they are about to read (the kernels split an image's rows, top rows first), not
    whole planes the other core will read."""
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    if pt < 0 or pl < 0 or hp < H + pt or wp < W + pl or nthreads < 1:
        raise ValueError(f"pad_images: {(H, W)} at ({pt}, {pl}) does not fit {(hp, wp)}, "
                         f"or nthreads {nthreads} < 1")
    if x.strides[3] != sizeof(float) or x.strides[2] % sizeof(float):
        raise ValueError("pad_images: input rows must be contiguous float32")
    if pad_scratch is None:
        pad_scratch = np.empty(N * C * hp * wp, np.float32)
    cdef float[::1] buf = pad_scratch
    if buf.shape[0] < N * C * hp * wp:
        raise ValueError(f"pad_images: pad scratch of {buf.shape[0]} floats is smaller "
                         f"than the padded input ({N * C * hp * wp})")
    padded = np.asarray(pad_scratch)[:N * C * hp * wp].reshape(N, C, hp, wp)
    if N * C == 0:
        return padded
    cdef Py_ssize_t plane, band, job, xr = x.strides[2] // sizeof(float)
    cdef Py_ssize_t parts = nthreads if N < nthreads * 4 else 1
    with nogil:
        for job in prange(N * C * parts, num_threads=nthreads, schedule="static"):
            plane = job % (N * C)
            band = job // (N * C)
            mnn_sd_pad_rows(&x[plane // C, plane % C, 0, 0], xr, H, W,
                            &buf[plane * hp * wp], wp, pt, pl, band * hp // parts,
                            (band + 1) * hp // parts)
    return padded


def conv_direct_images(const float[::1] packed, Py_ssize_t m, const float[:, :, :, :] x,
                       float[:, :, :] c, const float[::1] bias, Py_ssize_t kh, Py_ssize_t kw,
                       Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t sh, Py_ssize_t sw,
                       Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t dh, Py_ssize_t dw,
                       double lo=-INFINITY, double hi=INFINITY, int nthreads=1,
                       pad_scratch=None, skip=None):
    """:func:`conv_packed_images` by the direct kernel: the vectors run over 32 output
    channels and each output pixel broadcasts its input values from the image (no B
    panel is packed); ``packed = pack_weight_direct(A)``. When the windows reach outside
    the image (or its planes are not contiguous) the image is first copied into a zero
    border, in ``pad_scratch`` (float32, at least :func:`direct_pad_elements` floats; a
    new array when None). Otherwise the same arguments and result as
    :func:`conv_packed_images`.

    ``skip`` (float32, the shape and strides of ``c``), when given, is added before the
    clamp: ``c = clip(conv + bias + skip, lo, hi)``, a residual connection and its
    activation in the kernel's store.
    """
    if not mnn_sd_enabled:
        raise RuntimeError("sgemm conv: the direct kernel needs AVX-512 (F, DQ, VL); "
                           "use conv_packed_images")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t K = C * kh * kw, P = c.shape[2]
    if pt < 0 or pl < 0:
        raise ValueError("sgemm conv: pads must be >= 0")
    cdef const float[:, :, :] sv
    if skip is not None:
        sv = skip
        if (sv.shape[0] != c.shape[0] or sv.shape[1] != c.shape[1]
                or sv.shape[2] != c.shape[2] or sv.strides[0] != c.strides[0]
                or sv.strides[1] != c.strides[1] or sv.strides[2] != c.strides[2]):
            raise ValueError(f"sgemm conv: skip {np.shape(skip)} must have the output's "
                             f"shape {np.shape(c)} and strides")
    if _check_conv_args(packed, mnn_sd_packed_size(m, K), m, x, c, bias, kh, kw, oh, ow, sh, sw,
                        dh, dw, lo, hi, nthreads, skip):
        return
    cdef Py_ssize_t hp, wp
    hp, wp = _padded_hw(H, W, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw)
    cdef const float[:, :, :, :] xv = x
    if (hp != H or wp != W or x.strides[2] != <Py_ssize_t>sizeof(float) * W
            or x.strides[1] != <Py_ssize_t>sizeof(float) * H * W or x.strides[0] < 0):
        xv = pad_images(x, hp, wp, pt, pl, nthreads, pad_scratch)
    # Rows and planes (so every window) are contiguous in xv; images are xn apart.
    cdef Py_ssize_t xn = xv.strides[0] // sizeof(float)
    cdef Py_ssize_t slabs = (m + mnn_sd_m - 1) // mnn_sd_m
    cdef int npw = mnn_sd_npw(P, K)
    cdef Py_ssize_t units = (P + npw - 1) // npw * slabs
    cdef int tile_major = mnn_sd_tile_major(m, K)
    cdef int xpf = mnn_sd_xpf(C)
    # Jobs: each image's (slab, pixel tile) units split evenly over the threads, or whole
    # images per job when there are several per thread.
    cdef Py_ssize_t parts = nthreads if N < nthreads * 4 else 1
    cdef Py_ssize_t chunk = (units + parts - 1) // parts
    # One scratch: the K row offsets, then each thread's pixel offsets; and each thread's
    # partial sums when a deep conv goes in chunks of depth.
    offs = np.empty(K + nthreads * P, np.intp)
    cdef Py_ssize_t[::1] ov = offs
    cdef Py_ssize_t af = mnn_sd_acc_floats(P, K, npw, tile_major)
    accs = np.empty(max(1, nthreads * af), np.float32)
    cdef float[::1] av = accs
    cdef Py_ssize_t ldc = c.strides[1] // sizeof(float)
    cdef Py_ssize_t job, n, t, lo_i, hi_i, tid
    cdef float flo = <float>lo, fhi = <float>hi
    cdef const float* sp = &sv[0, 0, 0] if skip is not None else NULL
    cdef Py_ssize_t sn = c.strides[0] // sizeof(float)
    with nogil:
        mnn_sd_koff(C, kh, kw, hp * wp, wp, dh, dw, &ov[0])
        for job in prange(N * parts, num_threads=nthreads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = job // parts
            t = job % parts
            lo_i = t * chunk
            hi_i = lo_i + chunk if lo_i + chunk < units else units
            if lo_i < hi_i:
                mnn_sd_block(m, K, &packed[0], &xv[0, 0, 0, 0] + n * xn, &ov[0], P, ow,
                             sh * wp, sw, &c[n, 0, 0], ldc, lo_i, hi_i, npw, tile_major, xpf,
                             &ov[K + tid * P], &bias[0], flo, fhi,
                             sp + n * sn if sp != NULL else NULL,
                             &av[tid * af] if af > 0 else NULL)


def dense_rows(const float[:, ::1] w, const float[:, ::1] x, float[:, ::1] y,
               const float[::1] bias, double lo=-INFINITY, double hi=INFINITY,
               int nthreads=1):
    """``y = clip(x @ w.T + bias, lo, hi)`` for a few input rows (include/gemv_kernel.h):
    ``w`` is ``(O, K)``, ``x`` ``(N, K)``, ``y`` ``(N, O)``. The threads split the weight
    rows, each streaming its block of the weight from memory once for all ``N`` rows."""
    cdef Py_ssize_t O = w.shape[0], K = w.shape[1], N = x.shape[0]
    if x.shape[1] != K or y.shape[0] != N or y.shape[1] != O or bias.shape[0] != O:
        raise ValueError(f"dense_rows: weight {list(np.shape(w))}, input "
                         f"{list(np.shape(x))}, output {list(np.shape(y))} and bias "
                         f"[{bias.shape[0]}] do not match")
    if nthreads < 1:
        raise ValueError("dense_rows: nthreads must be >= 1")
    if O == 0 or N == 0:
        return
    # Blocks of a multiple of four rows (the kernel's row block) per thread.
    cdef Py_ssize_t per = ((O + nthreads - 1) // nthreads + 3) // 4 * 4
    cdef Py_ssize_t parts = (O + per - 1) // per, t, r0, r1
    cdef float flo = <float>lo, fhi = <float>hi
    cdef const float* wp = &w[0, 0] if K > 0 else NULL
    cdef const float* xp = &x[0, 0] if K > 0 else NULL
    with nogil:
        for t in prange(parts, num_threads=nthreads, schedule="static"):
            r0 = t * per
            r1 = r0 + per if r0 + per < O else O
            mnn_gv_rows(wp, K, K, xp, K, N, &y[0, 0], O, &bias[0], flo, fhi, r0, r1)
