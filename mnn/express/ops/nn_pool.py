"""Pooling ops over NCHW: max_pool, avg_pool (regular, global, adaptive), lp_pool, and the
gradient ops max_pool_grad / avg_pool_grad.

Op attributes (plain values, height first; see :mod:`.nn_common`):

- ``kernel`` ``(kh, kw)``, ``strides`` ``(sh, sw)``, ``pads`` ``(top, left, bottom,
  right)``, ``padding_mode`` int (:class:`~mnn.express.enums.Padding_Mode`; SAME pads are
  recomputed from the input size), ``ceil_mode`` bool (output size rounds up, torch's
  rule; floor otherwise).
- ``global_pool`` bool: the window is the whole image (output 1x1); kernel/stride/pads
  are then ignored.
- ``output_size`` ``(oh, ow)`` or None: adaptive pooling (torch's windows
  ``floor(i*H/oh) .. ceil((i+1)*H/oh)``); kernel/stride/pads are then ignored.
- ``count_include_pad`` bool (avg only): divide by the window size including padding
  (torch's default, Caffe/MNN) or by the number of real pixels (ONNX's default).
- ``input_hw`` ``(H, W)`` (avg_pool_grad only): the forward input's size.

Padded pixels never win a max and add nothing to a sum. The windows are computed here
as per-row and per-column tables and checked against the image by the kernel wrapper.
"""
import functools

import numpy as np

from ..._cython import pool as _pool_k
from ..enums import Padding_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc

__all__ = [
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "global_avg_pool",
    "global_max_pool",
    "lp_pool",
    "max_pool",
]


def _axis_windows(size, k, s, pb, pe, ceil_mode):
    out = nc.conv_out_size(size, k, s, pb, pe, ceil_mode)
    start = np.arange(out, dtype=np.int64) * s - pb
    end_pad = np.minimum(start + k, size + pe)
    incl = (end_pad - start).astype(np.float64)
    lo = np.clip(start, 0, size)
    hi = np.clip(np.minimum(start + k, size), lo, size)
    return lo, hi, incl


def _adaptive_windows(size, out):
    i = np.arange(out, dtype=np.int64)
    lo = (i * size) // out
    hi = -((-(i + 1) * size) // out)
    return lo, hi, (hi - lo).astype(np.float64)


def _windows(in_hw, kernel, strides, pads, padding_mode, ceil_mode, global_pool,
             output_size, count_include_pad=False):
    """Per-axis window tables ``[(lo, hi, divisor)] * 2`` for an input of ``in_hw``."""
    if global_pool:
        return [(np.zeros(1, np.int64), np.full(1, size, np.int64),
                 np.full(1, float(size))) for size in in_hw]
    if output_size is not None:
        return [_adaptive_windows(size, out) for size, out in zip(in_hw, output_size)]
    pads = nc.resolve_pads(in_hw, kernel, strides, (1, 1), pads, padding_mode)
    tables = []
    for i in range(2):
        lo, hi, incl = _axis_windows(in_hw[i], kernel[i], strides[i], pads[i], pads[i + 2],
                                     ceil_mode)
        div = incl if count_include_pad else (hi - lo).astype(np.float64)
        tables.append((lo, hi, div))
    return tables


def _out_hw(in_hw, attrs):
    tables = _windows(in_hw, **_window_attrs(attrs))
    out = tuple(len(t[0]) for t in tables)
    if min(out) < 1:
        raise OpError(f"pooling window does not fit the input {list(in_hw)}: empty output")
    return out


def _window_attrs(attrs):
    keys = ("kernel", "strides", "pads", "padding_mode", "ceil_mode", "global_pool",
            "output_size", "count_include_pad")
    return {k: attrs[k] for k in keys if k in attrs}


def _check_attrs(attrs):
    if attrs["global_pool"]:
        return
    if attrs["output_size"] is not None:
        nc.positive(attrs["output_size"], "output_size")
        return
    nc.positive(attrs["kernel"], "kernel")
    nc.positive(attrs["strides"], "stride")
    k, p = attrs["kernel"], attrs["pads"]
    if p[0] >= k[0] or p[2] >= k[0] or p[1] >= k[1] or p[3] >= k[1]:
        # torch's rule: a window made only of padding would have no value.
        raise OpError(f"pads {list(p)} must be smaller than the kernel {list(k)}")


def _x_infer(metas, **attrs):
    x = metas[0]
    dtype = nc.float_dtype(metas[:1], "pooling")
    if len(x.shape) != 4:
        raise OpError(f"input must be 4-D NCHW, got shape {list(x.shape)}")
    _check_attrs(attrs)
    return x, dtype, _out_hw(x.shape[2:], attrs)


def _tables(in_hw, attrs, dtype):
    key = (tuple(in_hw), np.dtype(dtype)) + tuple(sorted(_window_attrs(attrs).items()))
    return _cached_tables(key)


@functools.lru_cache(maxsize=256)
def _cached_tables(key):
    # Window tables depend only on the input size and the attributes: building them with
    # numpy cost more than the pooling itself on mid-sized inputs, so they are built once.
    # The arrays are marked read-only, as every caller only reads them.
    in_hw, dtype, items = key[0], key[1], dict(key[2:])
    (hs, he, dh), (ws, we, dw) = _windows(in_hw, **items)
    out = (hs, he, ws, we, dh.astype(dtype), dw.astype(dtype))
    for a in out:
        a.flags.writeable = False
    return out


# ---------------------------------------------------------------------------------------
# max pooling


def _max_infer(metas, **attrs):
    x, dtype, out_hw = _x_infer(metas, **attrs)
    return [(tuple(x.shape[:2]) + out_hw, dtype)]


def _max_compute(arrays, **attrs):
    x = nc.c_array(arrays[0])
    hs, he, ws, we, _, _ = _tables(x.shape[2:], attrs, x.dtype)
    y = np.empty(x.shape[:2] + (len(hs), len(ws)), x.dtype)
    if attrs["global_pool"] or attrs["output_size"] is not None:
        _pool_k.max_forward(x, y, hs, he, ws, we, nc.threads(x.size))
    else:
        # Regular grid: the padded-plane kernel (no per-window bounds, vectorized bands).
        pads = nc.resolve_pads(x.shape[2:], attrs["kernel"], attrs["strides"], (1, 1),
                               attrs["pads"], attrs["padding_mode"])
        _pool_k.max_forward_regular(x, y, *attrs["kernel"], *attrs["strides"], pads[0],
                                    pads[1], nc.threads(x.size))
    return y


def _max_grad(inputs, outputs, grads, **attrs):
    return [apply("max_pool_grad", [inputs[0], grads[0]], **attrs)[0]]


register(OpDef("max_pool", _max_infer, _max_compute, _max_grad))


def _max_grad_infer(metas, **attrs):
    x, dtype, out_hw = _x_infer(metas, **attrs)
    nc.float_dtype(metas, "max_pool_grad")
    if tuple(metas[1].shape) != tuple(x.shape[:2]) + out_hw:
        raise OpError(f"gradient shape {list(metas[1].shape)} is not the pooled shape "
                      f"{list(x.shape[:2]) + list(out_hw)}")
    return [(x.shape, dtype)]


def _max_grad_compute(arrays, **attrs):
    x, dy = nc.c_array(arrays[0]), nc.c_array(arrays[1])
    hs, he, ws, we, _, _ = _tables(x.shape[2:], attrs, x.dtype)
    dx = np.empty_like(x)
    _pool_k.max_backward(x, dy, dx, hs, he, ws, we, nc.threads(x.size))
    return dx


# Not differentiable again: a max pool's gradient is piecewise constant in x and the
# gather along the argmax (for dy) has no op of its own yet.
register(OpDef("max_pool_grad", _max_grad_infer, _max_grad_compute))


# ---------------------------------------------------------------------------------------
# average pooling


def _avg_infer(metas, **attrs):
    x, dtype, out_hw = _x_infer(metas, **attrs)
    return [(tuple(x.shape[:2]) + out_hw, dtype)]


def _avg_compute(arrays, **attrs):
    x = nc.c_array(arrays[0])
    hs, he, ws, we, dh, dw = _tables(x.shape[2:], attrs, x.dtype)
    y = np.empty(x.shape[:2] + (len(hs), len(ws)), x.dtype)
    if attrs["global_pool"] or attrs["output_size"] is not None:
        _pool_k.avg_forward(x, y, hs, he, ws, we, dh, dw, nc.threads(x.size))
    else:
        # Regular grid: padded-plane kernel (windows past the padding add zeros, and the
        # divisor tables say what each window counts).
        pads = nc.resolve_pads(x.shape[2:], attrs["kernel"], attrs["strides"], (1, 1),
                               attrs["pads"], attrs["padding_mode"])
        _pool_k.avg_forward_regular(x, y, *attrs["kernel"], *attrs["strides"], pads[0],
                                    pads[1], dh, dw, nc.threads(x.size))
    return y


def _avg_grad(inputs, outputs, grads, **attrs):
    x = inputs[0]
    return [apply("avg_pool_grad", [grads[0]], input_hw=tuple(x.shape[2:]), **attrs)[0]]


register(OpDef("avg_pool", _avg_infer, _avg_compute, _avg_grad))


def _avg_grad_infer(metas, input_hw, **attrs):
    dy = metas[0]
    dtype = nc.float_dtype(metas, "avg_pool_grad")
    if len(dy.shape) != 4:
        raise OpError(f"gradient must be 4-D, got {list(dy.shape)}")
    _check_attrs(attrs)
    nc.positive(input_hw, "input size")
    if _out_hw(input_hw, attrs) != tuple(dy.shape[2:]):
        raise OpError(f"input size {list(input_hw)} pools to {list(_out_hw(input_hw, attrs))}"
                      f", not the gradient's {list(dy.shape[2:])}")
    return [(tuple(dy.shape[:2]) + tuple(input_hw), dtype)]


def _avg_grad_compute(arrays, input_hw, **attrs):
    dy = nc.c_array(arrays[0])
    hs, he, ws, we, dh, dw = _tables(input_hw, attrs, dy.dtype)
    dx = np.empty(dy.shape[:2] + tuple(input_hw), dy.dtype)
    _pool_k.avg_backward(dy, dx, hs, he, ws, we, dh, dw, nc.threads(dx.size))
    return dx


def _avg_grad_grad(inputs, outputs, grads, input_hw, **attrs):
    # avg_pool_grad is the adjoint of the (linear) avg_pool: its own adjoint is avg_pool.
    return [apply("avg_pool", [grads[0]], **attrs)[0]]


register(OpDef("avg_pool_grad", _avg_grad_infer, _avg_grad_compute, _avg_grad_grad))


# ---------------------------------------------------------------------------------------
# public functions


def _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode):
    mode = nc.padding_mode_value(padding_mode)
    pads = nc.mnn_pads(pads, "pads")
    if mode == Padding_Mode.SAME and any(pads):
        raise OpError(f"pads {list(pads)} given with padding_mode SAME, which computes its "
                      "own padding: pass one or the other")
    return dict(kernel=nc.mnn_pair(kernel, "kernel"), strides=nc.mnn_pair(stride, "stride"),
                pads=pads, padding_mode=mode, ceil_mode=bool(ceil_mode), global_pool=False,
                output_size=None)


_GLOBAL = dict(kernel=(1, 1), strides=(1, 1), pads=(0, 0, 0, 0),
               padding_mode=int(Padding_Mode.VALID), ceil_mode=False, global_pool=True,
               output_size=None)


def max_pool(x, kernel, stride=(1, 1), padding_mode=Padding_Mode.VALID, pads=(0, 0),
             ceil_mode=False):
    """2-D max pooling of an NCHW input (MNN's ``max_pool``).

    Parameters
    ----------
    x : Var
        ``(N, C, H, W)`` float32 or float64.
    kernel, stride : pair of int
        MNN order ``(x, y)``: width first.
    padding_mode : Padding_Mode
        ``VALID``/``CAFFE``: explicit ``pads``; ``SAME``: output ``ceil(H / stride)``.
    pads : pair or four ints
        ``(px, py)`` or ``(top, left, bottom, right)``; smaller than the kernel.
    ceil_mode : bool
        Round the output size up instead of down (torch/ONNX ``ceil_mode``).

    Returns
    -------
    Var
        ``(N, C, OH, OW)``, ``OH = floor((H + pads - KH) / SH) + 1``.
    """
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("max_pool", [x], **_regular_attrs(kernel, stride, padding_mode,
                                                             pads, ceil_mode))[0], nhwc)


def avg_pool(x, kernel, stride=(1, 1), padding_mode=Padding_Mode.VALID, pads=(0, 0),
             ceil_mode=False, count_include_pad=True):
    """2-D average pooling of an NCHW input (MNN's ``avg_pool``).

    Parameters are those of :func:`max_pool`, plus:

    count_include_pad : bool
        Divide by the window size including padded pixels (default, as torch and Caffe)
        or only by the real pixels (ONNX's default).
    """
    attrs = _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode)
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("avg_pool", [x], count_include_pad=bool(count_include_pad),
                            **attrs)[0], nhwc)


def global_max_pool(x):
    """Max over each whole ``(H, W)`` plane: ``(N, C, H, W) -> (N, C, 1, 1)``."""
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("max_pool", [x], **_GLOBAL)[0], nhwc)


def global_avg_pool(x):
    """Mean over each whole ``(H, W)`` plane: ``(N, C, H, W) -> (N, C, 1, 1)``."""
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("avg_pool", [x], count_include_pad=False, **_GLOBAL)[0], nhwc)


def _adaptive_attrs(output_size):
    if isinstance(output_size, (int, np.integer)):
        output_size = (int(output_size), int(output_size))
    size = tuple(int(v) for v in output_size)
    if len(size) != 2:
        raise OpError(f"output_size must be one int or (oh, ow), got {list(output_size)}")
    nc.positive(size, "output_size")
    return dict(_GLOBAL, global_pool=False, output_size=size)


def adaptive_max_pool(x, output_size):
    """Adaptive max pooling to ``output_size`` ``(oh, ow)`` (height first, as torch)."""
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("max_pool", [x], **_adaptive_attrs(output_size))[0], nhwc)


def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling to ``output_size`` ``(oh, ow)`` (height first, as torch)."""
    x, nhwc = nc.as_nchw(to_var(x))
    return nc.restore(apply("avg_pool", [x], count_include_pad=False,
                            **_adaptive_attrs(output_size))[0], nhwc)


def lp_pool(x, kernel, stride=(1, 1), p=2.0, padding_mode=Padding_Mode.VALID, pads=(0, 0)):
    """Lp pooling: ``(sum over the window of |x|^p) ^ (1/p)`` (ONNX ``LpPool``).

    Arguments as :func:`max_pool` (no ceil mode: every window is a full kernel, so the
    sum is the padded mean times the kernel size); padded pixels count as zeros.
    """
    from .elementwise import abs as _abs
    from .elementwise import multiply
    from .elementwise import pow as _pow

    x, nhwc = nc.as_nchw(to_var(x))
    p = float(p)
    if p <= 0:
        raise OpError(f"lp_pool: p must be positive, got {p}")
    attrs = _regular_attrs(kernel, stride, padding_mode, pads, False)
    kh, kw = attrs["kernel"]
    powered = _pow(_abs(x), p)
    mean = apply("avg_pool", [powered], count_include_pad=True, **attrs)[0]
    return nc.restore(_pow(multiply(mean, float(kh * kw)), 1.0 / p), nhwc)
