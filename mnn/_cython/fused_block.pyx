# cython: language_level=3
"""Fused inverted-residual block (include/fused_block.h): 1x1 expand conv, depthwise 3x3
and 1x1 project conv (plus a residual) computed band by band, so the expanded and the
depthwise images never leave the cache.

Every shape, packed-weight size and scratch size is checked here before the C code runs:
the C code trusts them.
"""
import threading

import numpy as np
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy
from cython.parallel cimport prange
cimport openmp

from .sgemm import _padded_hw, pad_images

cdef extern from "fused_block.h":
    const int mnn_sg_kc
    const int mnn_sg_nc
    const int mnn_sd_enabled
    const int mnn_dw3x3_deint
    Py_ssize_t mnn_sg_packed_a_size(Py_ssize_t M, Py_ssize_t K) nogil
    Py_ssize_t mnn_sd_packed_size(Py_ssize_t M, Py_ssize_t K) nogil
    ctypedef struct mnn_fb_geom:
        Py_ssize_t Cin, H, W, Ce, K1, xrow, xsw, x_image, OH, OW, stride, Cout, R
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
        int deint
    void mnn_sd_koff(Py_ssize_t C, Py_ssize_t KH, Py_ssize_t KW, Py_ssize_t xc, Py_ssize_t xr,
                     Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t* koff) nogil
    Py_ssize_t mnn_fb_ebuf_size(const mnn_fb_geom* g) nogil
    Py_ssize_t mnn_fb_dbuf_size(const mnn_fb_geom* g) nogil
    Py_ssize_t mnn_fb_xbuf_size(const mnn_fb_geom* g) nogil
    void mnn_fb_rows(const mnn_fb_geom* g, const float* x, const float* r, float* y,
                     Py_ssize_t oy_a, Py_ssize_t oy_b, float* ebuf, float* dbuf, float* xbuf,
                     float* pb, Py_ssize_t* po, const float* zeros) nogil
    void mnn_fb_images_split(const mnn_fb_geom* g, Py_ssize_t N, const float* x,
                             const float* r, float* y, float* e, float* d, float* pb_all,
                             Py_ssize_t* po_all, float* part_all, const float* zeros,
                             int T) nogil

# Floats of e scratch a band aims at (640 KB). Taller bands load the project's weight
# fewer times per image and carry fewer e rows over from band to band; measured against
# 384 KB (Zen 4, MobileNetV2's blocks, in-process A/B): 0.94x the time for the
# 16 -> 96 -> 24 block at 112x112 (one and two threads) and, at one thread, for the
# 96 -> 576 blocks at 14x14 (two bands became one), 0.97-0.99x for the 56x56 and 28x28
# blocks, level for the rest, although a stride-1 band's e and d rows together now pass
# the 1 MB L2 (the expands of up to 32 channels no longer use the GEMM's 256 KB packing
# scratch). 1 MB was no better.
_EBUF_TARGET = 160 * 1024
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


# One block's run: its geometry and how its work is split, found (and checked) by
# _setup, then run without the GIL by _run.
ctypedef struct _block_run:
    mnn_fb_geom g
    Py_ssize_t N, parts, per, threads, po_size, pb_size, e_size, d_size, x_size, part_size
    Py_ssize_t copies
    bint split
    bint residual  # in a chain: the block adds its input
    # A stem expand (see _setup): its kernel and the zero-bordered image it reads.
    Py_ssize_t kh, kw, hp, wp


cdef int _setup(_block_run* b, Py_ssize_t N, Py_ssize_t Cin, Py_ssize_t H, Py_ssize_t W,
                pa1, b1, double lo1, double hi1, const float[:, ::1] wdw,
                const float[::1] b2, double lo2, double hi2, Py_ssize_t stride,
                const float[::1] pa3, const float[::1] b3, double lo3, double hi3,
                int nthreads, bint direct1, bint direct3, stem=None) except -1:
    """Check one block's arguments against its input ``(N, Cin, H, W)`` and fill ``b``
    (weight pointers, geometry, work split, scratch sizes; koff1/koff3 are set by the
    caller, who owns their storage). The arrays must outlive the run.

    ``stem``: None for a 1x1 expand (or none), else ``(kh, kw, sh, sw, hp, wp)``: the
    expand is a conv by the direct kernel over the ``(N, Cin, hp, wp)`` zero-bordered
    image, ``(H, W)`` its output size."""
    cdef Py_ssize_t Ce = wdw.shape[0], Cout = b3.shape[0]
    cdef Py_ssize_t kh = 1, kw = 1, sh = 1, sw = 1, hp = H, wp = W
    if stem is not None:
        kh, kw, sh, sw, hp, wp = stem
        if pa1 is None or not direct1:
            raise ValueError("fused block: a stem expand needs a weight for the direct "
                             "kernel")
        if kh < 1 or kw < 1 or sh < 1 or sw < 1 or (H - 1) * sh + kh > hp or \
                (W - 1) * sw + kw > wp:
            raise ValueError(f"fused block: a {kh}x{kw} stride {(sh, sw)} stem expand "
                             f"to {(H, W)} reads past its {(hp, wp)} image")
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
        if pa1v.shape[0] != _packed_size(Ce, Cin * kh * kw, direct1) or b1v.shape[0] != Ce:
            conv = [Ce, Cin] if stem is None else [Ce, Cin, kh, kw]
            raise ValueError(f"fused block: packed expand weight of {pa1v.shape[0]} floats "
                             f"and bias ({b1v.shape[0]},) are not a {tuple(conv)} conv")
    if pa3.shape[0] != _packed_size(Cout, Ce, direct3):
        raise ValueError(f"fused block: packed project weight of {pa3.shape[0]} floats is "
                         f"not a ({Cout}, {Ce}) conv")
    if nthreads < 1:
        raise ValueError("fused block: nthreads must be >= 1")
    cdef mnn_fb_geom* g = &b.g
    g.Cin, g.H, g.W, g.Ce, g.stride, g.Cout = Cin, H, W, Ce, stride, Cout
    g.K1, g.xrow, g.xsw, g.x_image = Cin * kh * kw, sh * wp, sw, Cin * hp * wp
    b.kh, b.kw, b.hp, b.wp = kh, kw, hp, wp
    g.OH, g.OW = (H - 1) // stride + 1, (W - 1) // stride + 1
    g.pa1 = &pa1v[0] if pa1 is not None else NULL
    g.b1 = &b1v[0] if pa1 is not None else NULL
    g.lo1, g.hi1, g.lo2, g.hi2, g.lo3, g.hi3 = lo1, hi1, lo2, hi2, lo3, hi3
    g.wdw, g.b2, g.pa3, g.b3 = &wdw[0, 0], &b2[0], &pa3[0], &b3[0]
    g.direct1 = direct1 and pa1 is not None
    g.direct3 = direct3
    b.N = N
    # Small images with fewer images than threads: whole images, threads split channels.
    b.split = nthreads > 1 and N < nthreads and Ce * H * W <= _SPLIT_MAX and stem is None
    # Otherwise work items (image, range of output rows), images split in row ranges only
    # when there are fewer images than threads.
    b.parts = max(1, min(g.OH, (nthreads + N - 1) // max(N, 1)))
    b.per = (g.OH + b.parts - 1) // b.parts
    g.R = g.OH if b.split else band_rows(Ce, W, stride, b.per)
    b.threads = nthreads if b.split else min(nthreads, N * b.parts)
    # Integer scratch per thread: pixel offsets (a band's: at most R * stride + 2 e rows
    # of W and R d rows of OW <= W; or a whole image's). Float scratch: zeros (_zeros),
    # each thread's GEMM packing scratch, deinterleaved x rows and partial project sums,
    # then the e and d images (shared, whole) or each thread's e and d bands.
    b.po_size = H * W if b.split else (g.R * stride + 2) * W
    b.pb_size = mnn_sg_kc * mnn_sg_nc
    b.e_size = Ce * H * W if b.split else mnn_fb_ebuf_size(g)
    b.d_size = Ce * g.OH * g.OW if b.split else mnn_fb_dbuf_size(g)
    b.copies = 1 if b.split else b.threads
    # Bands at stride 2 with a packed-GEMM 1x1 expand keep e rows deinterleaved (see
    # fused_block.h), in rows wide enough for the row kernels (OW > 7).
    g.deint = mnn_dw3x3_deint and not b.split and stride == 2 and pa1 is not None and \
        not g.direct1 and stem is None and g.OW > 7
    b.x_size = mnn_fb_xbuf_size(g)
    # Whole images with a direct-kernel project: each thread's partial sums of it (the
    # project is split by depth, see fused_block.h).
    b.part_size = g.Cout * g.OH * g.OW if b.split and g.direct3 else 0
    b.residual = False  # set by a chain
    return 0


cdef Py_ssize_t _ints(const _block_run* b) noexcept nogil:
    """Integers of scratch one block's run needs besides its koff arrays."""
    return b.threads * b.po_size


cdef Py_ssize_t _zeros(const _block_run* b) noexcept nogil:
    """Zero floats at the start of the float scratch: a row of W for the depthwise conv's
    padding and, for the depth-split project's partial sums, a zero bias of Cout."""
    return b.g.W if b.g.W > b.g.Cout else b.g.Cout


cdef Py_ssize_t _floats(const _block_run* b) noexcept nogil:
    return _zeros(b) + b.threads * (b.pb_size + b.x_size + b.part_size) + \
        b.copies * (b.e_size + b.d_size)


cdef void _set_koff(_block_run* b, Py_ssize_t* koff) noexcept nogil:
    """The direct kernel's depth offsets (the expand's into x, then the project's into d
    planes of R rows) into ``koff`` (K1 + Ce entries)."""
    cdef Py_ssize_t k
    mnn_sd_koff(b.g.Cin, b.kh, b.kw, b.hp * b.wp, b.wp, 1, 1, koff)
    for k in range(b.g.Ce):
        koff[b.g.K1 + k] = k * b.g.R * b.g.OW
    b.g.koff1 = koff
    b.g.koff3 = koff + b.g.K1


cdef void _run(const _block_run* b, const float* x, const float* r, float* y,
               Py_ssize_t* po, float* fw) noexcept nogil:
    """Run one set-up block: x (N, Cin, H, W), r (as y) or NULL, y (N, Cout, OH, OW);
    po and fw hold at least _ints and _floats of scratch."""
    cdef const mnn_fb_geom* g = &b.g
    cdef float* zeros = fw
    cdef float* pb = zeros + _zeros(b)
    cdef float* ebuf = pb + b.threads * b.pb_size
    cdef float* dbuf = ebuf + b.copies * b.e_size
    cdef float* xbuf = dbuf + b.copies * b.d_size
    cdef float* part = xbuf + b.threads * b.x_size
    cdef Py_ssize_t k
    for k in range(_zeros(b)):
        zeros[k] = 0
    if b.split:
        mnn_fb_images_split(g, b.N, x, r, y, ebuf, dbuf, pb, po,
                            part if b.part_size else NULL, zeros, <int>b.threads)
        return
    cdef Py_ssize_t item, n, a, e, tid
    cdef Py_ssize_t x_image = g.x_image, y_image = g.Cout * g.OH * g.OW
    for item in prange(b.N * b.parts, num_threads=b.threads, schedule="static"):
        tid = openmp.omp_get_thread_num()
        n = item // b.parts
        a = (item % b.parts) * b.per
        e = a + b.per if a + b.per < g.OH else g.OH
        if a < e:
            mnn_fb_rows(g, x + n * x_image, r + n * y_image if r != NULL else NULL,
                        y + n * y_image, a, e, ebuf + tid * b.e_size, dbuf + tid * b.d_size,
                        xbuf + tid * b.x_size, pb + tid * b.pb_size, po + tid * b.po_size,
                        zeros)


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
    cdef _block_run b
    _setup(&b, x.shape[0], x.shape[1], x.shape[2], x.shape[3], pa1, b1, lo1, hi1, wdw, b2,
           lo2, hi2, stride, pa3, b3, lo3, hi3, nthreads, direct1, direct3)
    cdef Py_ssize_t N = b.N, Cout = b.g.Cout, OH = b.g.OH, OW = b.g.OW
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
    if N == 0:
        return
    cdef Py_ssize_t[::1] iw = _workspace("intp", b.g.K1 + b.g.Ce + _ints(&b), np.intp)
    cdef float[::1] fw = _workspace("f32", _floats(&b), np.float32)
    _set_koff(&b, &iw[0])
    with nogil:
        _run(&b, &x[0, 0, 0, 0], &rv[0, 0, 0, 0] if has_r else NULL, &y[0, 0, 0, 0],
             &iw[b.g.K1 + b.g.Ce], &fw[0])


def inverted_residual_chain(const float[:, :, :, ::1] x, blocks, float[:, :, :, ::1] y,
                            int nthreads=1, stem=None, pad_scratch=None):
    """Several blocks in a row, each one's output the next one's input (and, with
    ``residual``, its residual), in one call: ``blocks`` is a sequence of
    ``(pa1, b1, lo1, hi1, wdw, b2, lo2, hi2, stride, pa3, b3, lo3, hi3, residual, direct1,
    direct3)`` as :func:`inverted_residual` takes them (``residual`` a bool: add the
    block's input). The outputs between blocks go to two scratch images used in turn,
    never to Python arrays; ``y`` (the last block's output) is overwritten.

    ``stem``: None, or ``(kh, kw, sh, sw, pt, pl, oh, ow)``: the first block's expand is
    then a ``kh x kw`` conv (stride ``sh x sw``, pads ``pt`` above and ``pl`` left, output
    ``oh x ow``) run by the direct kernel, ``pa1`` its weight packed by
    ``sgemm.pack_weight_direct`` (``direct1`` true): a network's first conv, computed
    band by band with the first block so its output never goes to memory. ``x`` is then
    copied into a zero border (in ``pad_scratch``, float32, when given), as
    ``sgemm.conv_direct_images`` does.

    The same as ``chain_plan((x's shape), blocks, nthreads, stem).run(x, y,
    pad_scratch)``."""
    chain_plan((x.shape[0], x.shape[1], x.shape[2], x.shape[3]), blocks, nthreads,
               stem).run(x, y, pad_scratch)


cdef class ChainPlan:
    """A chain of blocks checked and set up once for inputs of one shape and a thread
    count (:func:`chain_plan`); :meth:`run` computes it. A model run over and over calls
    the same plan: the setup (each block's geometry and work split, checked, from a
    dozen array arguments) cost about 30 us per call, as much as a small block.

    The plan holds the weight arrays its blocks point into (read-only arrays: the
    engine's values are never written in place)."""

    cdef _block_run* runs
    cdef Py_ssize_t count, ints, floats, koffs, image
    cdef readonly tuple x_shape, y_shape
    cdef readonly int nthreads
    cdef object stem_geometry, stem
    cdef list keep

    def __dealloc__(self):
        PyMem_Free(self.runs)

    def run(self, const float[:, :, :, ::1] x, float[:, :, :, ::1] y, pad_scratch=None):
        """Compute the chain of ``x`` (this plan's input shape) into ``y`` (its output
        shape), overwritten; ``pad_scratch`` as :func:`inverted_residual_chain`'s."""
        if (x.shape[0], x.shape[1], x.shape[2], x.shape[3]) != self.x_shape:
            raise ValueError(f"fused block chain: input {np.shape(x)} is not the "
                             f"plan's {self.x_shape}")
        if (y.shape[0], y.shape[1], y.shape[2], y.shape[3]) != self.y_shape:
            raise ValueError(f"fused block chain: output {np.shape(y)} is not "
                             f"{self.y_shape}")
        if self.x_shape[0] == 0:
            return
        cdef const float[:, :, :, ::1] xin = x
        cdef Py_ssize_t kh, kw, sh, sw, pt, pl, oh, ow, hp, wp
        if self.stem is not None:
            kh, kw, sh, sw, pt, pl, oh, ow = self.stem
            hp, wp = self.stem_geometry[4], self.stem_geometry[5]
            if (hp, wp) != (x.shape[2], x.shape[3]):
                xin = pad_images(x, hp, wp, pt, pl, self.nthreads, pad_scratch)
        iw_arr = _workspace("intp", self.koffs + self.ints, np.intp)
        fw_arr = _workspace("f32", self.floats, np.float32)
        # The outputs between blocks: two images used in turn (block i reads one while
        # writing the other), apart from the kernel scratch above.
        mid_arr = _workspace("chain", max(2 * self.image, 1), np.float32)
        # A copy of the blocks' setup for this call: _run_chain points each block at its
        # koff offsets in this Python thread's scratch, and another thread may be running
        # the same plan.
        cdef _block_run* runs = <_block_run*>PyMem_Malloc(self.count * sizeof(_block_run))
        if runs == NULL:
            raise MemoryError()
        try:
            memcpy(runs, self.runs, self.count * sizeof(_block_run))
            _run_chain(runs, self.count, &xin[0, 0, 0, 0], &y[0, 0, 0, 0], iw_arr, fw_arr,
                       mid_arr, self.image)
        finally:
            PyMem_Free(runs)


def chain_plan(x_shape, blocks, int nthreads=1, stem=None):
    """A :class:`ChainPlan` of ``blocks`` (as :func:`inverted_residual_chain` takes them)
    for float32 inputs of shape ``x_shape`` ``(N, C, H, W)`` at ``nthreads`` threads, the
    stem's geometry ``stem`` as there; every argument checked here."""
    cdef Py_ssize_t count = len(blocks)
    if count < 1:
        raise ValueError("fused block chain: no blocks")
    if nthreads < 1:
        raise ValueError("fused block chain: nthreads must be >= 1")
    cdef Py_ssize_t N, C, H, W
    N, C, H, W = x_shape
    if min(N, C, H, W) < 0:
        raise ValueError(f"fused block chain: input shape {tuple(x_shape)}")
    cdef Py_ssize_t kh, kw, sh, sw, pt, pl, oh, ow, hp, wp
    stem_geometry = None
    if stem is not None:
        kh, kw, sh, sw, pt, pl, oh, ow = stem
        if min(kh, kw, sh, sw, oh, ow) < 1 or pt < 0 or pl < 0:
            raise ValueError(f"fused block chain: stem geometry {tuple(stem)} is not a conv")
        hp, wp = _padded_hw(H, W, kh, kw, oh, ow, sh, sw, pt, pl, 1, 1)
        stem_geometry = (kh, kw, sh, sw, hp, wp)
        H, W = oh, ow  # the first block's (expanded) image
    cdef ChainPlan plan = ChainPlan.__new__(ChainPlan)
    plan.runs = <_block_run*>PyMem_Malloc(count * sizeof(_block_run))
    if plan.runs == NULL:
        raise MemoryError()
    plan.count = count
    plan.x_shape = tuple(x_shape)
    plan.nthreads = nthreads
    plan.stem = None if stem is None else tuple(stem)
    plan.stem_geometry = stem_geometry
    plan.keep = []  # the arrays _setup took pointers from, alive as long as the plan
    cdef _block_run* runs = plan.runs
    cdef Py_ssize_t i, ints = 0, floats = 0, koffs = 0, image = 0
    for i in range(count):
        (pa1, b1, lo1, hi1, wdw, b2, lo2, hi2, stride, pa3, b3, lo3, hi3, residual,
         direct1, direct3) = blocks[i]
        plan.keep.append((pa1, b1, wdw, b2, pa3, b3))
        try:
            _setup(&runs[i], N, C, H, W, pa1, b1, lo1, hi1, wdw, b2, lo2, hi2, stride,
                   pa3, b3, lo3, hi3, nthreads, direct1, direct3,
                   stem_geometry if i == 0 else None)
        except ValueError as exc:
            raise ValueError(f"block {i} of the chain: {exc}") from None
        runs[i].residual = bool(residual)
        if residual and i == 0 and stem is not None:
            raise ValueError("fused block chain: the first block has a stem expand "
                             "and cannot add its input")
        if residual and (runs[i].g.Cout, runs[i].g.OH, runs[i].g.OW) != (C, H, W):
            raise ValueError(f"fused block chain: block {i} adds its input {(C, H, W)} "
                             f"to an output of {(runs[i].g.Cout, runs[i].g.OH, runs[i].g.OW)}")
        C, H, W = runs[i].g.Cout, runs[i].g.OH, runs[i].g.OW
        ints = max(ints, _ints(&runs[i]))
        floats = max(floats, _floats(&runs[i]))
        koffs += runs[i].g.K1 + runs[i].g.Ce
        if i + 1 < count:
            image = max(image, N * C * H * W)
    plan.y_shape = (N, C, H, W)
    plan.ints, plan.floats, plan.koffs, plan.image = ints, floats, koffs, image
    return plan


cdef void _run_chain(_block_run* runs, Py_ssize_t count, const float* x, float* y,
                     Py_ssize_t[::1] iw, float[::1] fw, float[::1] mid,
                     Py_ssize_t image) noexcept:
    cdef Py_ssize_t i, koff = 0
    for i in range(count):
        _set_koff(&runs[i], &iw[koff])
        koff += runs[i].g.K1 + runs[i].g.Ce
    cdef const float* src = x
    cdef float* dst
    cdef float* buffers[2]
    buffers[0] = &mid[0]
    buffers[1] = &mid[0] + image
    with nogil:
        for i in range(count):
            dst = y if i + 1 == count else buffers[i % 2]
            _run(&runs[i], src, src if runs[i].residual else NULL, dst, &iw[koff], &fw[0])
            src = dst
