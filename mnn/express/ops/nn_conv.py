"""Convolution ops: conv2d, its two backprop ops, conv2d_transpose, conv1d.

Op attributes (plain values, ONNX order, height first; see :mod:`.nn_common`):

- ``strides`` ``(sh, sw)``, ``dilations`` ``(dh, dw)``, ``pads`` ``(top, left, bottom,
  right)``, ``group`` int, ``padding_mode`` int (:class:`~mnn.express.enums.Padding_Mode`;
  ``SAME`` pads are recomputed from the input size).
- ``conv2d``: inputs ``x (N, C, H, W)``, ``w (O, C/group, KH, KW)``, optional ``b (O,)``;
  optional ``clamp`` ``(low, high)``: a fused relu ``(0, inf)`` / relu6 ``(0, 6)``.
- ``conv2d_backprop_input``: inputs ``dy (N, O, OH, OW)``, ``w``; attribute ``input_hw``
  ``(H, W)``: the input gradient of conv2d. ``conv2d_transpose`` is this op (its weight
  ``(Cin, Cout/group, KH, KW)`` is conv2d's weight read the other way) plus a bias.
- ``conv2d_backprop_filter``: inputs ``x``, ``dy``; attribute ``kernel`` ``(KH, KW)``:
  the weight gradient of conv2d.

Compute picks the method per shape: a direct kernel for depthwise convolution (group ==
C, one input channel per group), GEMM on the input itself for 1x1 stride-1 unpadded
convolution, im2col + GEMM otherwise (one image and group at a time, BLAS threaded).
"""
import threading
from collections import OrderedDict

import numpy as np

from ..._cython import conv as _conv_k
from ..._cython import conv_grad as _conv_grad_k
from ..._cython import depthwise as _dw_k
from ..._cython import gemm as _gemm_k
from ..._cython import matmul as _mm_k
from ..._cython import sgemm as _sgemm_k
from ..._cython import winograd as _wino_k
from ..enums import Padding_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..runtime import get_thread_number
from ..var import to_var
from . import nn_common as nc
from .pack_cache import PACKED

__all__ = [
    "conv1d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "conv3d",
]


# ---------------------------------------------------------------------------------------
# geometry shared by the three ops


def _geometry(in_hw, kernel, strides, pads, dilations, padding_mode):
    """Resolved pads and output size ``(OH, OW)`` of a convolution over ``in_hw``."""
    pads = nc.resolve_pads(in_hw, kernel, strides, dilations, pads, padding_mode)
    out = []
    for i in range(2):
        k_eff = (kernel[i] - 1) * dilations[i] + 1
        out.append(nc.conv_out_size(in_hw[i], k_eff, strides[i], pads[i], pads[i + 2]))
    if min(out) < 1:
        raise OpError(f"kernel {list(kernel)} (dilation {list(dilations)}) does not fit the "
                      f"input {list(in_hw)} padded by {list(pads)}: empty output")
    return pads, tuple(out)


def _check_weight(c_in, w_shape, group):
    if len(w_shape) != 4:
        raise OpError(f"weight must be 4-D (O, C/group, KH, KW), got shape {list(w_shape)}")
    if group < 1 or w_shape[0] % group != 0:
        raise OpError(f"output channels {w_shape[0]} not divisible by group {group}")
    if w_shape[1] * group != c_in:
        raise OpError(f"input has {c_in} channels but weight {list(w_shape)} with group "
                      f"{group} expects {w_shape[1] * group}")


def _one_blas_thread(compute):
    """Run ``compute`` with BLAS single-threaded: its GEMMs are split over our OpenMP
    threads instead (see nn_common.blas_single_thread)."""
    def wrapped(arrays, **attrs):
        nc.blas_single_thread()
        return compute(arrays, **attrs)
    wrapped.__name__ = compute.__name__
    wrapped.__doc__ = compute.__doc__
    return wrapped


def _is_depthwise(c_in, w_shape, group):
    return group > 1 and group == c_in and w_shape[1] == 1


def _attrs_ok(strides, dilations, kernel=None):
    nc.positive(strides, "stride")
    nc.positive(dilations, "dilation")
    if kernel is not None:
        nc.positive(kernel, "kernel size")


# ---------------------------------------------------------------------------------------
# conv2d


def _conv2d_infer(metas, strides, pads, dilations, group, padding_mode, clamp=None):
    x, w = metas[0], metas[1]
    dtype = nc.float_dtype(metas, "conv2d")
    if len(x.shape) != 4:
        raise OpError(f"input must be 4-D NCHW, got shape {list(x.shape)}")
    _check_weight(x.shape[1], w.shape, group)
    if len(metas) == 3 and tuple(metas[2].shape) != (w.shape[0],):
        raise OpError(f"bias must have shape [{w.shape[0]}], got {list(metas[2].shape)}")
    _attrs_ok(strides, dilations, w.shape[2:])
    _, out_hw = _geometry(x.shape[2:], w.shape[2:], strides, pads, dilations, padding_mode)
    if clamp is not None and not (len(clamp) == 2 and clamp[0] <= clamp[1]):
        raise OpError(f"clamp must be (low, high) with low <= high, got {clamp}")
    return [((x.shape[0], w.shape[0]) + out_hw, dtype)]


def _conv2d_compute(arrays, strides, pads, dilations, group, padding_mode, clamp=None):
    x, w = nc.c_array(arrays[0]), nc.c_array(arrays[1])
    bias = nc.c_array(arrays[2]) if len(arrays) == 3 else None
    run = _plan_run(x.shape, x.dtype, w.shape, w.dtype, bias is None, strides, pads,
                    dilations, group, padding_mode, clamp, get_thread_number())
    return run(x, w, bias)


def _plan_run(x_shape, x_dtype, w_shape, w_dtype, no_bias, strides, pads, dilations, group,
              padding_mode, clamp, threads, skip=False):
    """The :func:`_conv2d_plan` run for these shapes, attributes and thread count (with
    ``skip``: the run that adds a skip input before the clamp, or None)."""
    # Everything the kernel choice and geometry depend on (never the values): a model run
    # over and over finds its plan here instead of deriving it again per call.
    key = (x_shape, x_dtype, w_shape, w_dtype, no_bias, tuple(strides), tuple(pads),
           tuple(dilations), group, padding_mode,
           None if clamp is None else (clamp[0], clamp[1]), skip, threads)
    try:
        return _CONV_PLANS[key]  # a skip plan may be None: remembered as well
    except KeyError:
        pass
    run = _conv2d_plan(x_shape, x_dtype, w_shape, strides, pads, dilations, group,
                       padding_mode, clamp, skip)
    with _CONV_PLANS_LOCK:
        _CONV_PLANS[key] = run
        if len(_CONV_PLANS) > _MAX_CONV_PLANS:
            _CONV_PLANS.popitem(last=False)
    return run


def conv2d_add_clamp(arrays, skip, lo, hi, strides, pads, dilations, group, padding_mode,
                     clamp=None):
    """``clip(conv2d(*arrays) + skip, lo, hi)`` with the sum and the clamp done in the
    convolution kernel's store (Winograd's output transform, the direct kernel's tile
    store): a residual block's ``relu(conv + skip)`` without another pass over the
    output. ``arrays`` are conv2d's inputs (x, w[, bias]) and the keywords its
    attributes.

    Returns None, computing nothing, where that store does not apply: a convolution with
    a clamp of its own (it comes before the sum), not float32, a ``skip`` of another
    shape or dtype, or a shape that runs by another kernel.
    """
    x, w = arrays[0], arrays[1]
    bias = arrays[2] if len(arrays) == 3 else None
    if clamp is not None or x.dtype != np.float32 or w.dtype != np.float32 or \
            skip.dtype != np.float32 or x.ndim != 4 or w.ndim != 4 or \
            (bias is not None and bias.dtype != np.float32):
        return None
    run = _plan_run(x.shape, x.dtype, w.shape, w.dtype, bias is None, strides, pads,
                    dilations, group, padding_mode, (lo, hi), get_thread_number(),
                    skip=True)
    if run is None:
        return None
    n, o = x.shape[0], w.shape[0]
    _, (oh, ow) = _geometry(x.shape[2:], w.shape[2:], strides, pads, dilations,
                            padding_mode)
    if skip.shape != (n, o, oh, ow):
        return None
    contiguous = np.ascontiguousarray
    return run(contiguous(x), contiguous(w), None if bias is None else contiguous(bias),
               contiguous(skip))


def _conv2d_prepare(sig, threads, strides, pads, dilations, group, padding_mode,
                    clamp=None):
    """conv2d's prepared compute (optable.OpDef.prepare): the plan of inputs of
    signature ``sig`` found once; each call then only makes the arrays contiguous."""
    (x_shape, x_dtype), (w_shape, w_dtype) = sig[0], sig[1]
    with_bias = len(sig) == 3
    run = _plan_run(x_shape, x_dtype, w_shape, w_dtype, not with_bias, strides, pads,
                    dilations, group, padding_mode, clamp, threads)
    contiguous = np.ascontiguousarray

    def compute(arrays):
        nc.blas_single_thread()
        x, w = arrays[0], arrays[1]
        bias = arrays[2] if with_bias else None
        if not x.flags.c_contiguous:
            x = contiguous(x)
        if not w.flags.c_contiguous:
            w = contiguous(w)
        if with_bias and not bias.flags.c_contiguous:
            bias = contiguous(bias)
        return run(x, w, bias)
    return compute


# Prepared convolutions (:func:`_conv2d_plan`) by shapes, dtypes, attributes and thread
# count, oldest dropped first. A plan holds no array of the call (weights are looked up
# in pack_cache.PACKED by identity on every run), so it never keeps a model alive.
_CONV_PLANS = OrderedDict()
_CONV_PLANS_LOCK = threading.Lock()
_MAX_CONV_PLANS = 1024


def _conv2d_plan(x_shape, dtype, w_shape, strides, pads, dilations, group, padding_mode,
                 clamp, skip=False):
    """``run(x, w, bias) -> y`` for C-contiguous arrays of these shapes (``bias`` None:
    zeros): the kernel for the shape (depthwise, Winograd, direct, packed GEMM, im2col +
    GEMM) and its arguments, chosen once. With ``skip``: ``run(x, w, bias, skip)`` that
    adds ``skip`` (C-contiguous, the output's shape) before the clamp in the kernel's
    store, or None when the kernel for the shape has no such store (Winograd and the
    direct kernel have)."""
    n, c, h, wd = x_shape
    o, cg, kh, kw = w_shape
    pads, (oh, ow) = _geometry((h, wd), (kh, kw), strides, pads, dilations, padding_mode)
    nt = nc.threads(n * oh * ow * (c * kh * kw // group + o))
    out_shape = (n, o, oh, ow)
    zeros = np.zeros(o, dtype)
    zeros.flags.writeable = False
    lo, hi = clamp if clamp is not None else (-np.inf, np.inf)
    kind = _kernel_kind(x_shape, dtype, w_shape, strides, pads, dilations, group,
                        (oh, ow))
    if skip and kind not in ("winograd", "direct"):
        return None
    if kind == "depthwise":
        def run(x, w, bias):
            y = np.empty(out_shape, dtype)
            _dw_k.forward(x, w.reshape(o, kh, kw), zeros if bias is None else bias, y,
                          strides[0], strides[1], pads[0], pads[1], dilations[0],
                          dilations[1], nt, lo, hi)
            return y
        return run
    if kind == "winograd":
        wino = _use_winograd(x_shape, w_shape, strides, dilations, group, dtype)
        work = _wino_k.plan(n, c, o, oh, ow, wino, nt)[1]

        def run(x, w, bias, skip=None):
            y = np.empty(out_shape, dtype)
            _wino_k.conv(x, _winograd_weight(w, wino), zeros if bias is None else bias, y,
                         wino, pads[0], pads[1], nc.scratch("winograd", (work,), np.float32),
                         nt, lo, hi, skip)
            return y
        return run
    og = o // group
    pointwise = _pointwise(w_shape, strides, pads)
    rows = cg * kh * kw
    if kind == "dense":
        return _dense_plan(out_shape, dtype, zeros, lo, hi)
    if kind == "direct":
        return _direct_plan(x_shape, dtype, w_shape, out_shape, zeros, pads, strides,
                            dilations, group, nt, lo, hi)
    sgemm = _use_sgemm(dtype, rows, oh * ow)
    if sgemm and not pointwise:
        # The GEMM packs its B panels straight from the image (no im2col matrix): the
        # im2col pass and its write and re-read of C*KH*KW*OH*OW floats are saved
        # (7x7 s2 3->64 at 224: 1.54 -> 1.23 ms, one thread). All images in one call.
        def run(x, w, bias):
            bias = zeros if bias is None else bias
            y = np.empty(out_shape, dtype)
            y3 = y.reshape(n, o, oh * ow)
            packed = _packed_weight(w, group)
            for g in range(group):
                _sgemm_k.conv_packed_images(packed[g], og, x[:, g * cg:(g + 1) * cg],
                                            y3[:, g * og:(g + 1) * og],
                                            bias[g * og:(g + 1) * og], kh, kw, oh, ow,
                                            strides[0], strides[1], pads[0], pads[1],
                                            dilations[0], dilations[1], lo, hi, nt)
            return y
        return run

    def run(x, w, bias):
        bias = zeros if bias is None else bias
        y = np.empty(out_shape, dtype)
        y3 = y.reshape(n, o, oh * ow)
        packed = _packed_weight(w, group) if sgemm else None
        w2 = w.reshape(o, rows)
        cols = None if pointwise else nc.scratch("im2col", (c * kh * kw, oh * ow), dtype)
        for i in range(n):
            if pointwise:
                src = x[i].reshape(c, h * wd)
            else:
                _conv_k.im2col_batch(x[i:i + 1], cols, kh, kw, oh, ow, strides[0],
                                     strides[1], pads[0], pads[1], dilations[0],
                                     dilations[1], nt)
                src = cols
            if packed is not None:
                # Our packed GEMM adds the bias and clamps in its epilogue.
                for g in range(group):
                    _sgemm_k.gemm_packed(packed[g], og, src[g * rows:(g + 1) * rows],
                                         y3[i, g * og:(g + 1) * og],
                                         bias[g * og:(g + 1) * og], lo, hi, nt)
                continue
            for g in range(group):
                _gemm_k.gemm_split(w2[g * og:(g + 1) * og], src[g * rows:(g + 1) * rows],
                                   y3[i, g * og:(g + 1) * og], False, False, 1.0, 0.0, nt)
            # Bias and the fused activation in one pass, while this image's output is in
            # cache.
            _conv_k.bias_clamp(y3[i], bias, lo, hi, nt)
        return y
    return run


def _pointwise(w_shape, strides, pads):
    return tuple(w_shape[2:]) == (1, 1) and tuple(strides) == (1, 1) and not any(pads)


def _kernel_kind(x_shape, dtype, w_shape, strides, pads, dilations, group, out_hw):
    """The kernel :func:`_conv2d_plan` runs a convolution by: ``"depthwise"``,
    ``"winograd"``, ``"dense"`` (1x1 on 1x1 images), ``"direct"`` or ``"gemm"`` (packed
    GEMM or im2col + GEMM); ``pads`` resolved, ``out_hw`` the output size."""
    o, cg, kh, kw = w_shape
    if _is_depthwise(x_shape[1], w_shape, group):
        return "depthwise"
    if _use_winograd(x_shape, w_shape, strides, dilations, group, dtype):
        return "winograd"
    pointwise = _pointwise(w_shape, strides, pads)
    if pointwise and x_shape[2] * x_shape[3] == 1 and group == 1:
        return "dense"
    if _use_direct(dtype, cg * kh * kw, pointwise, out_hw[0] * out_hw[1],
                   kh == kw == 1 and not pointwise, o // group):
        return "direct"
    return "gemm"


def direct_geometry(x_shape, dtype, w_shape, strides, pads, dilations, group,
                    padding_mode):
    """``(pads, (oh, ow))`` (pads resolved) of a conv2d that runs by the direct kernel
    with one group, else None: the convolutions :mod:`.fusion_conv_pool` computes with
    their max pool by the same kernel."""
    if group != 1 or len(x_shape) != 4 or len(w_shape) != 4:
        return None
    pads, out_hw = _geometry(x_shape[2:], w_shape[2:], strides, pads, dilations,
                             padding_mode)
    kind = _kernel_kind(x_shape, dtype, w_shape, strides, pads, dilations, group, out_hw)
    return (pads, out_hw) if kind == "direct" else None


def direct_call(x_shape, w_shape, attrs):
    """``(conv, (oh, ow), (lo, hi), pad elements, threads)`` of a float32 conv2d
    (attributes ``attrs``) that runs by the direct kernel, else None: what a fused kernel
    built on it takes (:mod:`.fusion_conv_pool`, :mod:`.fusion_dense`). ``conv`` is
    ``(kh, kw, sh, sw, pt, pl, dh, dw)``, ``(lo, hi)`` the fused activation's clamp, the
    pad elements those of the zero-bordered copy of the whole batch (0: none) and the
    threads those the conv alone runs at."""
    found = direct_geometry(x_shape, np.float32, w_shape, attrs["strides"], attrs["pads"],
                            attrs["dilations"], attrs["group"], attrs["padding_mode"])
    if found is None:
        return None
    pads, (oh, ow) = found
    n, c = x_shape[:2]
    o, _, kh, kw = w_shape
    conv = (kh, kw, *attrs["strides"], pads[0], pads[1], *attrs["dilations"])
    clamp = attrs.get("clamp")
    per_image = _sgemm_k.direct_pad_elements((1,) + tuple(x_shape[1:]), kh, kw, oh, ow,
                                              *conv[2:])
    return (conv, (oh, ow), clamp if clamp is not None else (-np.inf, np.inf),
            n * per_image, nc.threads(n * oh * ow * (c * kh * kw + o)))


def direct_any_size(dtype, w_shape, strides, dilations, group):
    """Whether a conv2d of this weight runs by the direct kernel whatever its input's size
    (:func:`_kernel_kind` reads the input size only to choose Winograd, and for 1x1
    stride-1 convs): one group, not 1x1 stride 1, never taken by Winograd, deep enough."""
    o, cg, kh, kw = w_shape
    if group != 1 or _pointwise(w_shape, strides, (0, 0, 0, 0)):
        return False
    # an input large enough that only the weight decides whether Winograd takes the conv
    if _use_winograd((1, cg, 1 << 10, 1 << 10), tuple(w_shape), tuple(strides),
                     tuple(dilations), group, dtype):
        return False
    return _use_direct(dtype, cg * kh * kw, False, 0, kh == kw == 1)


def _dense_plan(out_shape, dtype, zeros, lo, hi):
    """:func:`_conv2d_plan`'s run for a 1x1 convolution of 1x1 images (a dense layer, as
    converters write a classifier). The direct kernel splits pixels and computes tiles
    of 8, so one pixel kept one thread busy on 1/8 useful work (MobileNetV2's 1280 ->
    1000: 0.12 ms at 1 and 2 threads). A few images in float32 take
    ``sgemm.dense_rows``, which streams the weight once with prefetch, the threads
    splitting the output channels; more images (or float64) a BLAS GEMM."""
    n, o = out_shape[:2]
    few = dtype == np.float32 and n <= _DENSE_ROWS_MAX_IMAGES
    clamped = lo > -np.inf or hi < np.inf

    def run(x, w, bias):
        y = np.empty(out_shape, dtype)
        y2 = y.reshape(n, o)
        c = x.shape[1]
        nt = nc.threads(n * o * c)
        if few:
            _sgemm_k.dense_rows(w.reshape(o, c), x.reshape(n, c), y2,
                                zeros if bias is None else bias, lo, hi, nt)
            return y
        nc.blas_single_thread()
        _gemm_k.gemm_split(x.reshape(n, c), w.reshape(o, c), y2, False, True, 1.0, 0.0, nt)
        if bias is not None:
            np.add(y2, bias, out=y2)
        if clamped:
            np.clip(y2, lo, hi, out=y2)
        return y
    return run


# Up to this many images the dense layer is memory-bound (the weight read once): the
# GEMV kernel; beyond, a GEMM's register tiles reuse each weight load across images.
_DENSE_ROWS_MAX_IMAGES = 8


def _direct_plan(x_shape, dtype, w_shape, out_shape, zeros, pads, strides, dilations, group,
                 nt, lo, hi):
    """:func:`_conv2d_plan`'s run by the direct kernel (``sgemm.conv_direct_images``)."""
    n, c, h, wd = x_shape
    o, cg, kh, kw = w_shape
    og = o // group
    _, _, oh, ow = out_shape
    geo = (kh, kw, oh, ow, strides[0], strides[1], pads[0], pads[1], dilations[0],
           dilations[1])
    # The zero-bordered copy of the input (when the windows reach outside it) goes to a
    # reused buffer: a fresh one costs page faults (up to 10% of a 3x3 s2 conv). Large
    # batches run in chunks of images so that buffer stays bounded.
    per_image = _sgemm_k.direct_pad_elements((1, cg, h, wd), *geo)
    step = max(1, min(n, _DIRECT_PAD_ELEMENTS // per_image)) if per_image else n

    def run(x, w, bias, skip=None):
        bias = zeros if bias is None else bias
        y = np.empty(out_shape, dtype)
        y3 = y.reshape(n, o, oh * ow)
        s3 = None if skip is None else skip.reshape(n, o, oh * ow)
        packed = _packed_weight(w, group, direct=True)
        for i0 in range(0, n, step):
            i1 = min(n, i0 + step)
            pad = (nc.scratch("conv_direct_pad", ((i1 - i0) * per_image,), np.float32)
                   if per_image else None)
            for g in range(group):
                part = np.s_[i0:i1, g * og:(g + 1) * og]
                _sgemm_k.conv_direct_images(packed[g], og, x[i0:i1, g * cg:(g + 1) * cg],
                                            y3[part], bias[g * og:(g + 1) * og], *geo, lo,
                                            hi, nt, pad, None if s3 is None else s3[part])
        return y
    return run


# Column matrices of several images are built at once up to this many elements (512 KB of
# float32): enough columns for efficient GEMMs on small images, bounded scratch memory.
_BATCH_COLS_ELEMENTS = 1 << 17


def _images_per_chunk(n, per_image):
    return max(1, min(n, _BATCH_COLS_ELEMENTS // max(per_image, 1)))


# Packed float32 GEMM (sgemm.pyx) or BLAS, per shape. Measured on this machine (AVX-512,
# one thread, OpenBLAS with OPENBLAS_CORETYPE unset, benchmarks/bench_nn_ops.py): the
# packed GEMM is 0.5-0.9x BLAS's time (plus BLAS's separate bias/clamp pass) for every
# convolution in MobileNetV2 and ResNet18 except when the product has few columns and a
# deep K: (512 x 4608) @ (4608 x 49) is 1.3x BLAS (the weight streams from memory once
# per 32-column strip; BLAS blocks it better). float64 stays on BLAS.
_SGEMM_MAX_K_FEW_COLS = 1024
_SGEMM_FEW_COLS = 64


def _use_sgemm(dtype, k, cols):
    if dtype != np.float32:
        return False
    return cols >= _SGEMM_FEW_COLS or k <= _SGEMM_MAX_K_FEW_COLS


# The direct kernel (sgemm.conv_direct_images: vectors over 32 output channels, input
# values broadcast from the image, no packed B, a transposed store per 7-, 8- or 14-pixel
# tile) or the packed GEMM, per shape. Measured (one thread, CPU time, the shapes of
# benchmarks/bench_conv_shapes.py, on the Zen 5 machine): direct takes 0.69-0.81x the packed GEMM's time for
# the stride-2 convs of ResNet18 (K = 64 .. 2304), 0.93x for 3x3 s2 3 -> 32 (K = 27),
# 0.77-0.90x for 1x1 convs with K >= 144 and 0.93x with K = 64, 96 on 14x14 images. With
# a shallow K over many pixels its per-tile store costs more than packing B saves (1x1
# 16 -> 96 at 112x112: 1.5x, 96 -> 24 at 56x56: 1.1x, 32 -> 192 at 28x28: 1.1x).
_DIRECT_MIN_K = 27
# Bound of the direct kernel's padded-input buffer (8 MB of float32) per chunk of images.
_DIRECT_PAD_ELEMENTS = 1 << 21
_DIRECT_MIN_K_POINTWISE = 128
_DIRECT_MIN_K_FEW_PIXELS = 64
_DIRECT_FEW_PIXELS = 256
# Up to 24 output channels the direct kernel's tile runs 16 or 24 lanes, not a padded
# slab of 32 (sgemm_kernel.h's HALF tiles; a 256-bit FMA costs half a 512-bit one on Zen
# 4). Then 1x1 convs with K >= 96 go direct: measured on the Zen 4 machine (one thread,
# 28x28 and 56x56 images, M = 16 and 24) 0.59-0.85x the packed GEMM's time, which still
# wins with K = 16 .. 32 (1.0-1.7x) and is level at 64. MobileNetV2's 96 -> 24 and
# 144 -> 24 projections.
_DIRECT_NARROW_M = 24
_DIRECT_MIN_K_NARROW = 96
# A strided (or padded) 1x1 conv reads one value of each of K planes per pixel: below
# K = 256 the packed GEMM, which packs B row by row through the image, is faster
# (Xeon Skylake-SP, caches flushed as in a model run: 0.70-0.81x the direct kernel's
# time for ResNet's 1x1 s2 64 -> 128 / 256, 0.86-0.92x for 128 -> 256; the direct
# kernel 0.79-0.93x the packed GEMM's for 256 -> 512 and 512 -> 1024), at 1 and 2
# threads.
_DIRECT_MIN_K_STRIDED_1X1 = 256


def _use_direct(dtype, k, pointwise, pixels, strided_1x1=False, m=None):
    """Whether a float conv of depth ``k`` (``m`` output channels per group when known)
    runs by the direct kernel rather than the packed GEMM (measurements above)."""
    if dtype != np.float32 or not _sgemm_k.direct_available():
        return False
    if strided_1x1:
        return k >= _DIRECT_MIN_K_STRIDED_1X1
    if not pointwise:
        return k >= _DIRECT_MIN_K
    if m is not None and m <= _DIRECT_NARROW_M and k >= _DIRECT_MIN_K_NARROW:
        return True
    return k >= _DIRECT_MIN_K_POINTWISE or (k >= _DIRECT_MIN_K_FEW_PIXELS
                                            and pixels <= _DIRECT_FEW_PIXELS)


def _packed_weight(w, group, direct=False):
    """One packed matrix per group of ``w`` (``(O, C/group, KH, KW)``), cached: for
    sgemm's packed GEMM, or with ``direct`` for its direct kernel."""
    pack = _sgemm_k.pack_weight_direct if direct else _sgemm_k.pack_weight

    def make(w):
        o = w.shape[0]
        w2 = w.reshape(o, -1)
        og = o // group
        return tuple(pack(w2[g * og:(g + 1) * og]) for g in range(group))
    return PACKED.get(("sgemm_direct" if direct else "sgemm", group), w, make)


# Winograd F(m x m, 3x3), m = 4 or 2: (m+2)^2 products of (tiles x C) @ (C x O) instead of
# one of (pixels x 9C) @ (9C x O): 2.25x (m = 4) or 1.8x (m = 2) fewer multiply-adds after
# the transforms. G maps a 3x3 kernel onto the (m+2) interpolation points (0, +-1, +-2
# and infinity for m = 4; 0, +-1 and infinity for m = 2), as winograd_kernel.h's B and A.
_WINO_G = {
    4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                 [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]),
    2: np.array([[1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]]),
}


def _use_winograd(x_shape, w_shape, strides, dilations, group, dtype=np.float32):
    """Winograd tile size for this convolution: 4, 2, or 0 for im2col + GEMM."""
    o, c, kh, kw = w_shape
    if not (kh == 3 and kw == 3 and strides == (1, 1) and dilations == (1, 1)
            and group == 1 and np.dtype(dtype) == np.float32 and c >= 16 and o >= 16):
        return 0
    # The transformed weight ((m+2)^2 / 9 times the weight: 4x for m = 4) is read once per
    # block of tiles: on small images it is memory traffic for few products. Measured
    # (benchmarks/bench_conv3x3.py, one thread, one layer at a time): 512 channels at 7x7
    # (4 tiles of 4x4, 16 of 2x2) are fastest with m = 2, 256 at 14x14 with m = 4. Inside
    # a model the weights come from memory, not cache: one image of 7x7 then runs faster
    # by the direct kernel, which reads the plain weight, 1.8x smaller than m = 2's
    # (ResNet18: 0.96x the time at one thread, 0.95x at two).
    tiles4 = x_shape[0] * ((x_shape[2] + 3) // 4) * ((x_shape[3] + 3) // 4)
    if tiles4 >= 16:
        return 4
    if x_shape[0] == 1:
        return 0
    return 2 if tiles4 * 4 >= 16 else 0


def _winograd_weight(w, m):
    """The transformed weight ``U[k] = G w G^T`` at the ``(m+2)^2`` positions ``k``, in
    the kernel's strip layout (``winograd.transform_weight``); cached with the packed GEMM
    weights (:class:`.pack_cache.PackCache`)."""
    return PACKED.get(("winograd", m), w, lambda w: _wino_k.transform_weight(w, _WINO_G[m]))


def _conv2d_grad(inputs, outputs, grads, strides, pads, dilations, group, padding_mode,
                 clamp=None):
    from .reduce import reduce_sum

    x, w = inputs[0], inputs[1]
    g = grads[0]
    if clamp is not None:
        # The fused clamp passes gradient only where it did not clip.
        from .creation import zeros_like
        from .elementwise import greater, less, logical_and
        from .selection import select

        y = outputs[0]
        g = select(logical_and(greater(y, clamp[0]), less(y, clamp[1])), g, zeros_like(g))
    attrs = dict(strides=strides, pads=pads, dilations=dilations, group=group,
                 padding_mode=padding_mode)
    dx = apply("conv2d_backprop_input", [g, w], input_hw=tuple(x.shape[2:]), **attrs)[0]
    dw = apply("conv2d_backprop_filter", [x, g], kernel=tuple(w.shape[2:]), **attrs)[0]
    out = [dx, dw]
    if len(inputs) == 3:
        out.append(reduce_sum(g, [0, 2, 3], keepdims=False))
    return out


register(OpDef("conv2d", _conv2d_infer, _one_blas_thread(_conv2d_compute), _conv2d_grad,
               prepare=_conv2d_prepare))


# ---------------------------------------------------------------------------------------
# conv2d_backprop_input (also the forward of conv2d_transpose)


def _bpi_infer(metas, input_hw, strides, pads, dilations, group, padding_mode):
    dy, w = metas
    dtype = nc.float_dtype(metas, "conv2d_backprop_input")
    if len(dy.shape) != 4 or len(w.shape) != 4:
        raise OpError("needs a 4-D gradient/input and a 4-D weight")
    if w.shape[0] != dy.shape[1] or w.shape[0] % group != 0:
        raise OpError(f"weight {list(w.shape)} with group {group} does not match "
                      f"{dy.shape[1]} channels")
    _attrs_ok(strides, dilations, w.shape[2:])
    nc.positive(input_hw, "output size")
    _, out_hw = _geometry(input_hw, w.shape[2:], strides, pads, dilations, padding_mode)
    if tuple(out_hw) != tuple(dy.shape[2:]):
        raise OpError(f"spatial size {list(input_hw)} convolved gives {list(out_hw)}, not "
                      f"the given {list(dy.shape[2:])}")
    return [((dy.shape[0], w.shape[1] * group) + tuple(input_hw), dtype)]


def _bpi_compute(arrays, input_hw, strides, pads, dilations, group, padding_mode):
    dy, w = nc.c_array(arrays[0]), nc.c_array(arrays[1])
    n, o, oh, ow = dy.shape
    _, cg, kh, kw = w.shape
    h, wd = input_hw
    c = cg * group
    pads, _ = _geometry(input_hw, (kh, kw), strides, pads, dilations, padding_mode)
    nt = nc.threads(n * oh * ow * (c * kh * kw // group + o))
    if _is_depthwise(c, w.shape, group):
        dx = np.empty((n, c, h, wd), dy.dtype)
        _dw_k.backward_input(dy, w.reshape(o, kh, kw), dx, strides[0], strides[1], pads[0],
                             pads[1], dilations[0], dilations[1], nt)
        return dx
    dx = np.zeros((n, c, h, wd), dy.dtype)
    og, rows, p = o // group, cg * kh * kw, oh * ow
    w2 = w.reshape(o, rows)
    dy3 = dy.reshape(n, o, p)
    # Images side by side: cols (C*KH*KW, images*P) = W^T @ dy (O, images*P), one GEMM
    # per group and chunk, then one col2im over the chunk. float32: W^T packed once per
    # call for our GEMM (same shape rule as the forward).
    step = _images_per_chunk(n, c * kh * kw * p)
    packed_t = None
    if _use_sgemm(dy.dtype, og, min(n, step) * p):
        packed_t = tuple(_sgemm_k.pack_weight(np.ascontiguousarray(w2[g * og:(g + 1) * og].T))
                         for g in range(group))
        zero_bias = np.zeros(rows, np.float32)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        dy_t = nc.scratch("conv_dy_t", (o, (i1 - i0) * p), dy.dtype)
        _conv_grad_k.images_side_by_side(dy3[i0:i1], dy_t, nt)
        cols = nc.scratch("im2col", (c * kh * kw, (i1 - i0) * p), dy.dtype)
        for g in range(group):
            if packed_t is not None:
                _sgemm_k.gemm_packed(packed_t[g], rows, dy_t[g * og:(g + 1) * og],
                                     cols[g * rows:(g + 1) * rows], zero_bias, -np.inf,
                                     np.inf, nt)
            else:
                _gemm_k.gemm_split(w2[g * og:(g + 1) * og], dy_t[g * og:(g + 1) * og],
                                   cols[g * rows:(g + 1) * rows], True, False, 1.0, 0.0, nt)
        _conv_k.col2im_batch(cols, dx[i0:i1], kh, kw, oh, ow, strides[0], strides[1],
                             pads[0], pads[1], dilations[0], dilations[1], nt)
    return dx


def _bpi_grad(inputs, outputs, grads, input_hw, strides, pads, dilations, group,
              padding_mode):
    dy, w = inputs
    g = grads[0]
    attrs = dict(strides=strides, pads=pads, dilations=dilations, group=group,
                 padding_mode=padding_mode)
    # The op is linear in dy (dy -> A_w^T dy), so its adjoint is conv2d itself.
    d_dy = apply("conv2d", [g, w], **attrs)[0]
    d_w = apply("conv2d_backprop_filter", [g, dy], kernel=tuple(w.shape[2:]), **attrs)[0]
    return [d_dy, d_w]


register(OpDef("conv2d_backprop_input", _bpi_infer, _one_blas_thread(_bpi_compute),
               _bpi_grad))


# ---------------------------------------------------------------------------------------
# conv2d_backprop_filter


def _bpf_infer(metas, kernel, strides, pads, dilations, group, padding_mode):
    x, dy = metas
    dtype = nc.float_dtype(metas, "conv2d_backprop_filter")
    if len(x.shape) != 4 or len(dy.shape) != 4 or x.shape[0] != dy.shape[0]:
        raise OpError("needs 4-D input and gradient with the same batch")
    if x.shape[1] % group != 0 or dy.shape[1] % group != 0:
        raise OpError(f"channels {x.shape[1]} -> {dy.shape[1]} not divisible by group {group}")
    _attrs_ok(strides, dilations, kernel)
    _, out_hw = _geometry(x.shape[2:], kernel, strides, pads, dilations, padding_mode)
    if tuple(out_hw) != tuple(dy.shape[2:]):
        raise OpError(f"input convolved gives {list(out_hw)}, gradient is "
                      f"{list(dy.shape[2:])}")
    return [((dy.shape[1], x.shape[1] // group) + tuple(kernel), dtype)]


# The weight gradient's chunks of images hold up to this many column elements (2 MB of
# float32), four times the forward's: its GEMM sums over the chunk's pixels, so a larger
# chunk is a deeper, more efficient product, and fewer chunks mean fewer parallel regions
# at two threads (LeNet's conv2 at batch 64: 4 chunks instead of 16, 7% less time at one
# thread).
_BPF_COLS_ELEMENTS = 1 << 19


def _bpf_images_per_chunk(n, per_image):
    return max(1, min(n, _BPF_COLS_ELEMENTS // max(per_image, 1)))


def _bpf_compute(arrays, kernel, strides, pads, dilations, group, padding_mode):
    x, dy = nc.c_array(arrays[0]), nc.c_array(arrays[1])
    n, c, h, wd = x.shape
    o, oh, ow = dy.shape[1], dy.shape[2], dy.shape[3]
    kh, kw = kernel
    cg = c // group
    pads, _ = _geometry((h, wd), kernel, strides, pads, dilations, padding_mode)
    nt = nc.threads(n * oh * ow * (c * kh * kw // group + o))
    if _is_depthwise(c, (o, cg, kh, kw), group):
        dw = np.empty((o, kh, kw), x.dtype)
        _dw_k.backward_filter(x, dy, dw, strides[0], strides[1], pads[0], pads[1],
                              dilations[0], dilations[1], nt)
        return dw.reshape(o, 1, kh, kw)
    dw = np.zeros((o, cg * kh * kw), x.dtype)
    og, rows, p = o // group, cg * kh * kw, oh * ow
    dy3 = dy.reshape(n, o, p)
    # Images side by side: dW += dy (O, images*P) @ cols^T, the sum over images and
    # pixels inside one GEMM per group and chunk (deep K: efficient BLAS).
    step = _bpf_images_per_chunk(n, c * kh * kw * p)
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        dy_t = nc.scratch("conv_dy_t", (o, (i1 - i0) * p), x.dtype)
        _conv_grad_k.images_side_by_side(dy3[i0:i1], dy_t, nt)
        cols = nc.scratch("im2col", (c * kh * kw, (i1 - i0) * p), x.dtype)
        _conv_k.im2col_batch(x[i0:i1], cols, kh, kw, oh, ow, strides[0], strides[1],
                             pads[0], pads[1], dilations[0], dilations[1], nt)
        for g in range(group):
            _add_weight_grad(dy_t[g * og:(g + 1) * og], cols[g * rows:(g + 1) * rows],
                             dw[g * og:(g + 1) * og], nt)
    return dw.reshape(o, cg, kh, kw)


def _add_weight_grad(dy, cols, dw, nt):
    """``dw += dy @ cols.T`` (``dy`` is ``(O, P)``, ``cols`` ``(rows, P)``, P deep).

    float32 with matmul.pyx's AVX-512 kernel computes it transposed, ``cols @ dy.T``:
    then the packed operand is dy (O x P) rather than cols (rows x P, usually several
    times larger), and cols is read in place. Against BLAS's ``dy @ cols.T`` on the Zen 4
    machine: 0.71-0.73x for LeNet's conv2 (50 x 4096 x 500), 0.76-0.91x for 20 x 9216 x
    25, 0.78-0.83x for 64 x 3136 x 576 and 0.91-1.01x for 128 x 784 x 1152."""
    if dw.dtype == np.float32 and _mm_k.fast():
        dw_t = nc.scratch("conv_dw_t", dw.shape[::-1], np.float32)
        _mm_k.gemm(cols, _mm_k.pack_b(dy, True, nt), dw_t, False, nt)
        dw += dw_t.T
        return
    _gemm_k.gemm_split(dy, cols, dw, False, True, 1.0, 1.0, nt)


def _bpf_grad(inputs, outputs, grads, kernel, strides, pads, dilations, group,
              padding_mode):
    x, dy = inputs
    g = grads[0]
    attrs = dict(strides=strides, pads=pads, dilations=dilations, group=group,
                 padding_mode=padding_mode)
    d_x = apply("conv2d_backprop_input", [dy, g], input_hw=tuple(x.shape[2:]), **attrs)[0]
    d_dy = apply("conv2d", [x, g], **attrs)[0]
    return [d_x, d_dy]


register(OpDef("conv2d_backprop_filter", _bpf_infer, _one_blas_thread(_bpf_compute),
               _bpf_grad))


# ---------------------------------------------------------------------------------------
# public functions


def _conv_attrs(stride, padding, dilate, group, padding_mode):
    mode = nc.padding_mode_value(padding_mode)
    pads = nc.mnn_pads(padding)
    if mode == Padding_Mode.SAME and any(pads):
        raise OpError(f"padding {list(padding)} given with padding_mode SAME, which computes "
                      "its own padding: pass one or the other")
    strides, dilations = nc.mnn_pair(stride, "stride"), nc.mnn_pair(dilate, "dilate")
    nc.positive(strides, "stride")
    nc.positive(dilations, "dilate")
    return dict(strides=strides, pads=pads, dilations=dilations, group=int(group),
                padding_mode=mode)


_ACTIVATIONS = {None: None, "relu": (0.0, float("inf")), "relu6": (0.0, 6.0)}


def conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0),
           dilate=(1, 1), group=1, padding_mode=Padding_Mode.VALID, activation=None):
    """2-D convolution of an NCHW input (MNN's ``conv2d``).

    Parameters
    ----------
    input : Var
        ``(N, C, H, W)``, float32 or float64 (NC4HW4-labelled Vars are NCHW data).
    weight : Var
        ``(O, C / group, KH, KW)``.
    bias : Var, optional
        ``(O,)``; none when omitted.
    stride, dilate : pair of int
        MNN order ``(x, y)``: width first.
    padding : pair or four ints
        ``(px, py)`` symmetric, or ``(top, left, bottom, right)``. Honoured under VALID
        and CAFFE; must be zero under SAME.
    group : int
        Channel groups; ``group == C`` with one input channel per group is depthwise.
    padding_mode : Padding_Mode or str
        ``VALID`` (explicit pads), ``CAFFE`` (explicit pads) or ``SAME``; also by name,
        in any case (``"same"``).
    activation : {None, "relu", "relu6"}
        A fused activation (MNN's conv relu/relu6 flags): the op clamps its output to
        ``(0, inf)`` or ``(0, 6)`` (attribute ``clamp``) while it is in cache.

    Returns
    -------
    Var
        ``(N, O, OH, OW)`` with ``OH = floor((H + pads - dilate*(KH-1) - 1) / stride) + 1``.
    """
    x, nhwc = nc.as_nchw(to_var(input))
    inputs = [x, to_var(weight)]
    if bias is not None:
        inputs.append(to_var(bias))
    if activation not in _ACTIVATIONS:
        raise OpError(f"conv2d: activation must be None, 'relu' or 'relu6', got "
                      f"{activation!r}")
    attrs = _conv_attrs(stride, padding, dilate, group, padding_mode)
    if activation is not None:
        attrs["clamp"] = _ACTIVATIONS[activation]
    return nc.restore(apply("conv2d", inputs, **attrs)[0], nhwc)


def conv2d_backprop_input(grad, weight, input_hw, stride=(1, 1), padding=(0, 0),
                          dilate=(1, 1), group=1, padding_mode=Padding_Mode.VALID):
    """Gradient of :func:`conv2d` with respect to its input.

    Parameters
    ----------
    grad : Var
        ``(N, O, OH, OW)``, the gradient of conv2d's output.
    weight : Var
        conv2d's weight ``(O, C / group, KH, KW)``.
    input_hw : pair of int
        ``(H, W)`` of conv2d's input (height first).
    stride, padding, dilate, group, padding_mode
        As for :func:`conv2d`.
    """
    return apply("conv2d_backprop_input", [to_var(grad), to_var(weight)],
                 input_hw=tuple(int(v) for v in input_hw),
                 **_conv_attrs(stride, padding, dilate, group, padding_mode))[0]


def conv2d_backprop_filter(input, grad, kernel_hw, stride=(1, 1),
                           padding=(0, 0), dilate=(1, 1), group=1,
                           padding_mode=Padding_Mode.VALID):
    """Gradient of :func:`conv2d` with respect to its weight.

    Parameters
    ----------
    input : Var
        conv2d's input ``(N, C, H, W)``.
    grad : Var
        ``(N, O, OH, OW)``, the gradient of conv2d's output.
    kernel_hw : pair of int
        ``(KH, KW)`` (height first).
    stride, padding, dilate, group, padding_mode
        As for :func:`conv2d`.
    """
    return apply("conv2d_backprop_filter", [to_var(input), to_var(grad)],
                 kernel=tuple(int(v) for v in kernel_hw),
                 **_conv_attrs(stride, padding, dilate, group, padding_mode))[0]


def conv2d_transpose(input, weight, bias=None, stride=(1, 1), padding=(0, 0),
                     dilate=(1, 1), group=1, padding_mode=Padding_Mode.VALID,
                     output_padding=(0, 0)):
    """Transposed 2-D convolution (MNN's ``conv2d_transpose``; torch's ConvTranspose2d).

    Parameters
    ----------
    input : Var
        ``(N, Cin, H, W)``.
    weight : Var
        ``(Cin, Cout / group, KH, KW)``.
    bias : Var, optional
        ``(Cout,)``.
    stride, padding, dilate, group
        As for :func:`conv2d` (padding removes rows/columns from the output's borders).
    padding_mode : Padding_Mode or str
        ``VALID``/``CAFFE``: explicit pads; ``SAME``: output ``H * stride``.
    output_padding : pair of int
        MNN order ``(x, y)``: extra rows/columns on the bottom/right, less than the stride.

    Returns
    -------
    Var
        ``(N, Cout, OH, OW)`` with ``OH = (H-1)*stride - pads + dilate*(KH-1) + 1 + out_pad``.
    """
    (x, nhwc), w = nc.as_nchw(to_var(input)), to_var(weight)
    attrs = _conv_attrs(stride, padding, dilate, group, padding_mode)
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise OpError(f"conv2d_transpose: input {x.shape} and weight {w.shape} must be 4-D")
    out_pad = nc.mnn_pair(output_padding, "output_padding")
    s, d, p = attrs["strides"], attrs["dilations"], attrs["pads"]
    hw = []
    for i in range(2):
        if not 0 <= out_pad[i] < max(s[i], d[i]):
            raise OpError(f"conv2d_transpose: output_padding {list(output_padding)} must be "
                          "smaller than the stride or the dilation")
        k_eff = (w.shape[2 + i] - 1) * d[i] + 1
        if attrs["padding_mode"] == Padding_Mode.SAME:
            hw.append(x.shape[2 + i] * s[i])
        else:
            hw.append((x.shape[2 + i] - 1) * s[i] - p[i] - p[i + 2] + k_eff + out_pad[i])
    if min(hw) < 1:
        raise OpError(f"conv2d_transpose: padding {list(p)} leaves an empty output {hw}")
    y = apply("conv2d_backprop_input", [x, w], input_hw=tuple(hw), **attrs)[0]
    if bias is not None:
        from .elementwise import add
        from .movement import reshape

        b = to_var(bias)
        if list(b.shape) != [y.shape[1]]:
            raise OpError(f"conv2d_transpose: bias shape {b.shape} must be [{y.shape[1]}]")
        y = add(y, reshape(b, [1, -1, 1, 1]))
    return nc.restore(y, nhwc)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilate=1, group=1,
           padding_mode=Padding_Mode.VALID):
    """1-D convolution of an ``(N, C, L)`` input with an ``(O, C / group, K)`` weight.

    ``padding`` is one int (both sides) or ``(begin, end)``; runs as a conv2d of height 1.
    """
    from .movement import squeeze, unsqueeze

    x, w = to_var(input), to_var(weight)
    if len(x.shape) != 3 or len(w.shape) != 3:
        raise OpError(f"conv1d: input {x.shape} and weight {w.shape} must be 3-D")
    if isinstance(padding, (int, np.integer)):
        padding = (int(padding), int(padding))
    begin, end = (int(v) for v in padding)
    y = conv2d(unsqueeze(x, [2]), unsqueeze(w, [2]), bias, (int(stride), 1),
               (0, begin, 0, end), (int(dilate), 1), group, padding_mode)
    return squeeze(y, [2])


def conv3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0),
           dilate=(1, 1, 1), group=1):
    """3-D convolution of an ``(N, C, D, H, W)`` input with an ``(O, C / group, KD, KH, KW)``
    weight (torch's ``conv3d`` argument order: ``(d, h, w)``, symmetric padding).

    Each output depth slice is a sum of :func:`conv2d` calls over the kernel's depth taps
    (taps falling in the depth padding add nothing), so it runs on the 2-D kernels and
    differentiates through them.
    """
    from .elementwise import add
    from .movement import reshape, squeeze, stack
    from .slicing import slice as _slice

    x, w = to_var(input), to_var(weight)
    if len(x.shape) != 5 or len(w.shape) != 5:
        raise OpError(f"conv3d: input {x.shape} and weight {w.shape} must be 5-D")
    s, p, d = ([int(v) for v in np.broadcast_to(np.asarray(a), 3)]
               for a in (stride, padding, dilate))
    nc.positive(s, "stride")
    nc.positive(d, "dilate")
    if min(p) < 0:
        raise OpError(f"conv3d: padding {p} must not be negative")
    depth = x.shape[2]
    kd = w.shape[2]
    out_d = (depth + 2 * p[0] - (kd - 1) * d[0] - 1) // s[0] + 1
    if out_d < 1:
        raise OpError(f"conv3d: kernel depth {kd} does not fit depth {depth} padded by {p[0]}")
    taps = [squeeze(_slice(w, [0, 0, k, 0, 0], [-1, -1, 1, -1, -1]), [2]) for k in range(kd)]
    planes = []
    for od in range(out_d):
        acc = None
        for k in range(kd):
            z = od * s[0] - p[0] + k * d[0]
            if not 0 <= z < depth:
                continue
            xz = squeeze(_slice(x, [0, 0, z, 0, 0], [-1, -1, 1, -1, -1]), [2])
            term = conv2d(xz, taps[k], None, (s[2], s[1]), (p[2], p[1]), (d[2], d[1]), group)
            acc = term if acc is None else add(acc, term)
        if acc is None:  # the whole kernel is in the depth padding: zeros (plus bias)
            from .creation import zeros_like

            like = conv2d(squeeze(_slice(x, [0, 0, 0, 0, 0], [-1, -1, 1, -1, -1]), [2]),
                          taps[0], None, (s[2], s[1]), (p[2], p[1]), (d[2], d[1]), group)
            acc = zeros_like(like)
        planes.append(acc)
    y = stack(planes, 2)
    if bias is not None:
        b = to_var(bias)
        if list(b.shape) != [w.shape[0]]:
            raise OpError(f"conv3d: bias shape {b.shape} must be [{w.shape[0]}]")
        y = add(y, reshape(b, [1, -1, 1, 1, 1]))
    return y
