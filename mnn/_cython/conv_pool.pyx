# cython: language_level=3
"""A convolution by the direct kernel followed by a pool that alone reads it
(include/conv_pool.h), so the conv's output never goes to memory: a max pool (the conv
rows each band of pooled rows needs are computed into per-thread scratch that stays in L2
and pooled from there) or a global average pool (:class:`ConvMeanPlan`: a few output
channels at a time computed into scratch and averaged while in cache).

Every shape, the padded input, the scratch sizes and the pool's windows are checked here
before the C code runs: the C code trusts them.
"""
import numpy as np
from cython.parallel cimport prange
cimport openmp

from .fused_block import _workspace
from .sgemm import _padded_hw, pad_images

cdef extern from "conv_pool.h":
    const int mnn_sd_enabled
    Py_ssize_t mnn_sd_packed_size(Py_ssize_t M, Py_ssize_t K) nogil
    int mnn_sd_xpf(Py_ssize_t planes)
    int mnn_sd_tile_major(Py_ssize_t M, Py_ssize_t K)
    void mnn_sd_koff(Py_ssize_t C, Py_ssize_t KH, Py_ssize_t KW, Py_ssize_t xc,
                     Py_ssize_t xr, Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t* koff) nogil
    ctypedef struct mnn_cp_geom:
        Py_ssize_t M, K
        const float* pw
        const float* bias
        float lo, hi
        const Py_ssize_t* koff
        Py_ssize_t rstep, csw, OH, OW
        int tile_major
        int xpf
        Py_ssize_t PH, PW, kh, kw, sh, sw, pt, pl, dh, dw, R, cap, rowlen
    void mnn_cp_rows(const mnn_cp_geom* g, const float* x, float* y, Py_ssize_t a,
                     Py_ssize_t b, float* band, Py_ssize_t* po, float* t) nogil
    void mnn_cp_means(const mnn_cp_geom* g, const float* x, float* means, Py_ssize_t s0,
                      Py_ssize_t s1, Py_ssize_t group, float* scratch, Py_ssize_t* po) nogil
    const int MNN_SD_M
    const int MNN_PLANE_REDUCE_AVX512

# Floats of conv rows a band aims at (256 KB): with the input rows it reads, it stays in a
# 1 MB L2.
_BAND_TARGET = 64 * 1024


def available():
    """Whether the kernel is compiled in (the direct kernel needs AVX-512 F, DQ, VL)."""
    return bool(mnn_sd_enabled)


def windows_inside(Py_ssize_t n, Py_ssize_t out, Py_ssize_t k, Py_ssize_t s, Py_ssize_t p,
                   Py_ssize_t d):
    """Whether each of ``out`` pooling windows along an axis of ``n`` (window ``i`` starts
    at ``i*s - p``, ``k`` taps ``d`` apart) has a tap inside ``[0, n)``."""
    cdef Py_ssize_t i, j, r
    for i in range(out):
        for j in range(k):
            r = i * s - p + j * d
            if 0 <= r < n:
                break
        else:
            return False
    return True


def conv_max_pool(const float[::1] packed, Py_ssize_t m, const float[:, :, :, ::1] x,
                  float[:, :, :, ::1] y, const float[::1] bias, conv, Py_ssize_t oh,
                  Py_ssize_t ow, pool, double lo=-np.inf, double hi=np.inf,
                  int nthreads=1, pad_scratch=None):
    """``y = max_pool(clip(conv2d(x, A) + bias, lo, hi))`` without storing the conv.

    Parameters
    ----------
    packed : ndarray of float32
        ``sgemm.pack_weight_direct`` of the conv weight ``A``, ``(m, C*kh*kw)``.
    m : int
        Output channels of the conv.
    x : ndarray of float32, shape (N, C, H, W), C-contiguous
    y : ndarray of float32, shape (N, m, PH, PW), C-contiguous
        The pooled output (overwritten).
    bias : ndarray of float32, shape (m,)
    conv : tuple of int
        ``(kh, kw, sh, sw, pt, pl, dh, dw)``: kernel, stride, top/left pads, dilation
        (pixels outside the image are zero).
    oh, ow : int
        The conv's output size.
    pool : tuple of int
        ``(kh, kw, sh, sw, pt, pl, dh, dw)`` of the max pool over the conv's output
        (taps outside it are skipped; every window must have one inside).
    lo, hi : float
        Clamp of the conv's output (its fused activation).
    nthreads : int
    pad_scratch : ndarray of float32, optional
        At least ``sgemm.direct_pad_elements`` floats for the zero-bordered copy of the
        input when its windows reach outside it (``sgemm.pad_images``); a new array when
        None.
    """
    if not mnn_sd_enabled:
        raise RuntimeError("conv_max_pool: the direct kernel needs AVX-512 (F, DQ, VL)")
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t kh, kw, sh, sw, pt, pl, dh, dw
    kh, kw, sh, sw, pt, pl, dh, dw = conv
    cdef Py_ssize_t qkh, qkw, qsh, qsw, qpt, qpl, qdh, qdw
    qkh, qkw, qsh, qsw, qpt, qpl, qdh, qdw = pool
    cdef Py_ssize_t K = C * kh * kw
    cdef Py_ssize_t PH = y.shape[2], PW = y.shape[3]
    if min(kh, kw, sh, sw, dh, dw, qkh, qkw, qsh, qsw, qdh, qdw, oh, ow) < 1 or \
            min(pt, pl, qpt, qpl) < 0:
        raise ValueError(f"conv_max_pool: conv {tuple(conv)} or pool {tuple(pool)} has a "
                         f"size, stride or dilation below 1 or a negative pad, or the "
                         f"conv output {(oh, ow)} is empty")
    if m < 1 or packed.shape[0] != mnn_sd_packed_size(m, K) or bias.shape[0] != m:
        raise ValueError(f"conv_max_pool: packed weight of {packed.shape[0]} floats and "
                         f"bias ({bias.shape[0]},) are not a ({m}, {C}*{kh}*{kw}) conv")
    if y.shape[0] != N or y.shape[1] != m or PH < 1 or PW < 1:
        raise ValueError(f"conv_max_pool: output {np.shape(y)} is not ({N}, {m}, >0, >0)")
    if K < 1 or H < 1 or W < 1:
        raise ValueError(f"conv_max_pool: empty input {np.shape(x)}")
    if not (windows_inside(oh, PH, qkh, qsh, qpt, qdh) and
            windows_inside(ow, PW, qkw, qsw, qpl, qdw)):
        raise ValueError(f"conv_max_pool: a window of the pool {tuple(pool)} giving "
                         f"{(PH, PW)} from {(oh, ow)} has no tap inside the conv output")
    if nthreads < 1:
        raise ValueError("conv_max_pool: nthreads must be >= 1")
    if N == 0:
        return
    cdef Py_ssize_t hp, wp
    hp, wp = _padded_hw(H, W, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw)
    cdef const float[:, :, :, ::1] xv = x
    if (hp, wp) != (H, W):
        xv = pad_images(x, hp, wp, pt, pl, nthreads, pad_scratch)
    cdef mnn_cp_geom g
    g.M, g.K, g.pw, g.bias = m, K, &packed[0], &bias[0]
    g.lo, g.hi = <float>lo, <float>hi
    g.rstep, g.csw, g.OH, g.OW = sh * wp, sw, oh, ow
    g.tile_major = mnn_sd_tile_major(m, K)
    g.xpf = mnn_sd_xpf(C)
    g.PH, g.PW, g.kh, g.kw, g.sh, g.sw = PH, PW, qkh, qkw, qsh, qsw
    g.pt, g.pl, g.dh, g.dw = qpt, qpl, qdh, qdw
    # Work items: (image, range of pooled rows), images split in row ranges when there
    # are fewer images than threads.
    cdef Py_ssize_t parts = max(1, min(PH, (nthreads + N - 1) // N))
    cdef Py_ssize_t per = (PH + parts - 1) // parts
    cdef Py_ssize_t span = (qkh - 1) * qdh + 1
    g.R = max(1, min(per, (_BAND_TARGET // (m * ow) - span) // qsh + 1))
    g.cap = (g.R - 1) * qsh + span
    # The padded row: the pool's left pad, the conv row, as far right as the last window
    # reaches; the 3-wide stride-2 vector path loads up to 2 * PW + 33 (its last vector,
    # partial, stores only the outputs below PW).
    g.rowlen = max(qpl + ow, (PW - 1) * qsw + (qkw - 1) * qdw + 1, 2 * PW + 34)
    cdef Py_ssize_t threads = min(nthreads, N * parts)
    # Per thread: the band (m planes of cap rows), the row scratch; the K offsets shared.
    cdef Py_ssize_t band_size = m * g.cap * ow, tsize = g.rowlen
    fw_arr = np.empty(threads * (band_size + tsize), np.float32)
    iw_arr = np.empty(K + threads * g.cap * ow, np.intp)
    cdef float[::1] fw = fw_arr
    cdef Py_ssize_t[::1] iw = iw_arr
    cdef Py_ssize_t xn = xv.strides[0] // sizeof(float)
    cdef Py_ssize_t item, n, a, b, tid
    with nogil:
        mnn_sd_koff(C, kh, kw, hp * wp, wp, dh, dw, &iw[0])
        g.koff = &iw[0]
        for item in prange(N * parts, num_threads=threads, schedule="static"):
            tid = openmp.omp_get_thread_num()
            n = item // parts
            a = (item % parts) * per
            b = a + per if a + per < PH else PH
            if a < b:
                mnn_cp_rows(&g, &xv[0, 0, 0, 0] + n * xn, &y[n, 0, 0, 0], a, b,
                            &fw[tid * (band_size + tsize)],
                            &iw[K + tid * g.cap * ow],
                            &fw[tid * (band_size + tsize) + band_size])


# Floats of conv output a thread of ConvMeanPlan computes before averaging it (128 KB: it
# is read back from L2 right away).
_MEAN_SCRATCH = 32 * 1024


cdef class ConvMeanPlan:
    """``mean over each output plane of clip(conv2d(x, A) + bias, lo, hi)`` (a conv and
    the global average pool that alone reads it) for inputs of one shape and a thread
    count, checked and set up once (:func:`conv_mean_plan`); :meth:`run` computes it.

    The threads take ranges of whole slabs (``MNN_SD_M`` output channels), each computed
    a few slabs at a time into this Python thread's scratch and averaged there. The means
    are the conv's and the pool's own, bit for bit (include/conv_pool.h's
    mnn_cp_means)."""

    cdef mnn_cp_geom g
    cdef readonly tuple x_shape
    cdef readonly Py_ssize_t m
    cdef readonly int nthreads
    cdef Py_ssize_t parts, per, group, threads, hp, wp, pt, pl, P
    cdef object koff

    def run(self, const float[::1] packed, const float[:, :, :, ::1] x,
            const float[::1] bias, float[:, ::1] y, pad_scratch=None):
        """Write the ``(N, m)`` plane means of the conv of ``x`` (this plan's input
        shape) into ``y``. ``packed``: ``sgemm.pack_weight_direct`` of the ``(m, K)``
        weight; ``bias``: ``(m,)``; ``pad_scratch`` as :func:`conv_max_pool`'s."""
        if (x.shape[0], x.shape[1], x.shape[2], x.shape[3]) != self.x_shape:
            raise ValueError(f"conv_mean: input {np.shape(x)} is not the plan's "
                             f"{self.x_shape}")
        cdef Py_ssize_t N = x.shape[0], K = self.g.K, m = self.m
        if packed.shape[0] != mnn_sd_packed_size(m, K) or bias.shape[0] != m:
            raise ValueError(f"conv_mean: packed weight of {packed.shape[0]} floats and "
                             f"bias ({bias.shape[0]},) are not a ({m}, {K}) conv")
        if y.shape[0] != N or y.shape[1] != m:
            raise ValueError(f"conv_mean: output {np.shape(y)} is not ({N}, {m})")
        if N == 0:
            return
        cdef const float[:, :, :, ::1] xv = x
        if (self.hp, self.wp) != (x.shape[2], x.shape[3]):
            xv = pad_images(x, self.hp, self.wp, self.pt, self.pl, self.nthreads,
                            pad_scratch)
        cdef Py_ssize_t scratch = self.group * MNN_SD_M * self.P
        cdef float[::1] fw = _workspace("conv_mean_f32", self.threads * scratch, np.float32)
        cdef Py_ssize_t[::1] pw = _workspace("conv_mean_intp", self.threads * self.P,
                                             np.intp)
        cdef Py_ssize_t[::1] koff = self.koff
        cdef mnn_cp_geom g = self.g
        g.pw = &packed[0]
        g.bias = &bias[0]
        g.koff = &koff[0]
        cdef Py_ssize_t slabs = (m + MNN_SD_M - 1) // MNN_SD_M, parts = self.parts
        cdef Py_ssize_t xn = xv.strides[0] // sizeof(float), item, n, a, b, tid
        with nogil:
            for item in prange(N * parts, num_threads=self.threads, schedule="static"):
                tid = openmp.omp_get_thread_num()
                n = item // parts
                a = (item % parts) * self.per
                b = a + self.per if a + self.per < slabs else slabs
                if a < b:
                    mnn_cp_means(&g, &xv[0, 0, 0, 0] + n * xn, &y[n, 0], a, b, self.group,
                                 &fw[tid * scratch], &pw[tid * self.P])


def conv_mean_plan(x_shape, Py_ssize_t m, conv, Py_ssize_t oh, Py_ssize_t ow,
                   double lo=-np.inf, double hi=np.inf, int nthreads=1):
    """A :class:`ConvMeanPlan` for inputs of ``x_shape`` ``(N, C, H, W)`` and a conv of
    ``m`` output channels, geometry ``conv`` ``(kh, kw, sh, sw, pt, pl, dh, dw)`` (pixels
    outside the image are zero) and output ``oh x ow``, clamped to ``[lo, hi]`` (its
    fused activation); ``nthreads`` threads. The plane means need ``oh * ow >= 16``
    (plane_reduce.h's kernel: smaller planes are averaged by the pool op's in-order
    loop)."""
    if not mnn_sd_enabled or not MNN_PLANE_REDUCE_AVX512:
        raise RuntimeError("conv_mean: the direct kernel needs AVX-512 (F, DQ, VL)")
    cdef Py_ssize_t N, C, H, W
    N, C, H, W = x_shape
    cdef Py_ssize_t kh, kw, sh, sw, pt, pl, dh, dw
    kh, kw, sh, sw, pt, pl, dh, dw = conv
    if min(kh, kw, sh, sw, dh, dw) < 1 or min(pt, pl) < 0 or N < 0:
        raise ValueError(f"conv_mean: conv {tuple(conv)} has a size, stride or dilation "
                         f"below 1 or a negative pad, or the input {tuple(x_shape)} a "
                         f"negative size")
    if oh * ow < 16:
        raise ValueError(f"conv_mean: conv output {(oh, ow)} has under 16 pixels")
    if m < 1 or C < 1 or H < 1 or W < 1:
        raise ValueError(f"conv_mean: empty conv: {m} outputs of input {tuple(x_shape)}")
    if nthreads < 1:
        raise ValueError("conv_mean: nthreads must be >= 1")
    cdef ConvMeanPlan plan = ConvMeanPlan.__new__(ConvMeanPlan)
    # the padded image the direct kernel reads (checks that every window fits in it)
    plan.hp, plan.wp = _padded_hw(H, W, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw)
    plan.pt, plan.pl = pt, pl
    plan.x_shape = (N, C, H, W)
    plan.m = m
    plan.nthreads = nthreads
    plan.P = oh * ow
    cdef Py_ssize_t K = C * kh * kw
    koff = np.empty(K, np.intp)
    cdef Py_ssize_t[::1] kv = koff
    mnn_sd_koff(C, kh, kw, plan.hp * plan.wp, plan.wp, dh, dw, &kv[0])
    plan.koff = koff
    plan.g.M, plan.g.K = m, K
    plan.g.lo, plan.g.hi = <float>lo, <float>hi
    plan.g.rstep, plan.g.csw, plan.g.OH, plan.g.OW = sh * plan.wp, sw, oh, ow
    plan.g.tile_major = mnn_sd_tile_major(m, K)
    plan.g.xpf = mnn_sd_xpf(C)
    # Work items: (image, range of slabs), an image's slabs split when there are fewer
    # images than threads.
    cdef Py_ssize_t slabs = (m + MNN_SD_M - 1) // MNN_SD_M
    plan.parts = max(1, min(slabs, (nthreads + max(N, 1) - 1) // max(N, 1)))
    plan.per = (slabs + plan.parts - 1) // plan.parts
    plan.threads = max(1, min(nthreads, N * plan.parts))
    plan.group = max(1, min(plan.per, _MEAN_SCRATCH // (MNN_SD_M * plan.P)))
    return plan
