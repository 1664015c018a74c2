"""2-D pooling ops over NCHW: max_pool, avg_pool (regular, dilated, global, adaptive),
lp_pool, and the gradient ops max_pool_grad / avg_pool_grad. 3-D pooling lives in
:mod:`.nn_pool3d` (exported from here).

Op attributes (plain values, height first; see :mod:`.nn_common`):

- ``kernel`` ``(kh, kw)``, ``strides`` ``(sh, sw)``, ``pads`` ``(top, left, bottom,
  right)``, ``padding_mode`` int (:class:`~mnn.express.enums.Padding_Mode`; SAME pads are
  recomputed from the input size), ``ceil_mode`` bool (output size rounds up, torch's
  rule; floor otherwise).
- ``dilations`` ``(dh, dw)``, optional (default ``(1, 1)``): window taps ``dilation``
  apart, as torch's and ONNX's MaxPool/AveragePool.
- ``global_pool`` bool: the window is the whole image (output 1x1); kernel/stride/pads
  are then ignored.
- ``output_size`` ``(oh, ow)`` or None: adaptive pooling (torch's windows
  ``floor(i*H/oh) .. ceil((i+1)*H/oh)``); kernel/stride/pads are then ignored.
- ``count_include_pad`` bool (avg only): divide by the window size including padding
  (torch's default, Caffe/MNN) or by the number of real pixels (ONNX's default).
- ``input_hw`` ``(H, W)`` (avg_pool_grad only): the forward input's size.

Padded pixels never win a max and add nothing to a sum. Regular grids (dilated too) run
the regular kernels of ``mnn/_cython/pool.pyx``, global pooling one contiguous reduction
per plane; adaptive pooling (and the gradient of global max pooling) run the table
kernels of ``pool_table.pyx`` (tables from :mod:`.pool_windows`, checked against the
image by the kernel wrapper).
"""
import numpy as np

from ..._cython import pool as _pool_k
from ..._cython import pool_table as _table_k
from ..enums import Padding_Mode
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc
from . import pool_windows as pw
from .nn_pool3d import avg_pool3d, lp_pool3d, max_pool3d, max_pool_indices

__all__ = [
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "avg_pool3d",
    "global_avg_pool",
    "global_max_pool",
    "lp_pool",
    "lp_pool3d",
    "max_pool",
    "max_pool3d",
    "max_pool_indices",
]


def _attrs_key(in_hw, attrs):
    """Window-table arguments (hashable) for an input of spatial size ``in_hw``."""
    dil = tuple(attrs.get("dilations", (1, 1)))
    if attrs["global_pool"] or attrs["output_size"] is not None:
        pads = (0, 0, 0, 0)
    else:
        pads = tuple(nc.resolve_pads(in_hw, attrs["kernel"], attrs["strides"], dil,
                                     attrs["pads"], attrs["padding_mode"]))
    out = attrs["output_size"]
    return dict(kernel=tuple(attrs["kernel"]), strides=tuple(attrs["strides"]), pads=pads,
                dilations=dil, ceil_mode=bool(attrs["ceil_mode"]),
                count_include_pad=bool(attrs.get("count_include_pad", False)),
                global_pool=bool(attrs["global_pool"]),
                output_size=None if out is None else tuple(out))


def _out_hw(in_hw, attrs):
    return pw.pool_out_sizes(tuple(in_hw), **_attrs_key(in_hw, attrs))


def _check_attrs(attrs):
    if attrs["global_pool"]:
        return
    if attrs["output_size"] is not None:
        nc.positive(attrs["output_size"], "output_size")
        return
    pw.check_geometry(attrs["kernel"], attrs["strides"], attrs["pads"],
                      attrs.get("dilations", (1, 1)))


def _x_infer(metas, **attrs):
    x = metas[0]
    dtype = nc.float_dtype(metas[:1], "pooling")
    if len(x.shape) != 4:
        raise OpError(f"input must be 4-D NCHW, got shape {list(x.shape)}")
    _check_attrs(attrs)
    return x, dtype, _out_hw(x.shape[2:], attrs)


def _tables(in_hw, attrs, dtype):
    """(windows, steps, divisors, key) for the table kernels; ``key`` holds the resolved
    pads and dilations."""
    key = _attrs_key(tuple(in_hw), attrs)
    windows, steps, divs, _ = pw.tables(tuple(in_hw), dtype=np.dtype(dtype), **key)
    return windows, steps, divs, key


def _regular(attrs):
    return not attrs["global_pool"] and attrs["output_size"] is None


def _as5(a):
    return a.reshape(a.shape[:2] + (1,) + a.shape[2:])


def _geometry(key):
    """Arguments of the regular kernels: kh, kw, sh, sw, pt, pl, dh, dw."""
    return (*key["kernel"], *key["strides"], key["pads"][0], key["pads"][1],
            *key["dilations"])


def _forward_threads(n):
    """Threads for the vectorized forward kernels: about 0.1 ns an element, so below
    2**18 elements (~30 us) a second thread's start-up costs more than it saves."""
    return 1 if n < 1 << 18 else nc.threads(n)


def pool_planes(x, is_max):
    """Global pooling of a C-contiguous ``(N, C, H, W)`` float array: the max or mean of
    each plane, ``(N, C, 1, 1)``, one contiguous reduction per plane (no window
    tables)."""
    n, c, h, w = x.shape
    y = np.empty((n, c, 1, 1), x.dtype)
    _pool_k.global_forward(x.reshape(n * c, h * w), y.reshape(n * c), is_max,
                           _forward_threads(x.size))
    return y


_NO_DIV = {np.dtype(np.float32): np.ones(0, np.float32),
           np.dtype(np.float64): np.ones(0, np.float64)}


# ---------------------------------------------------------------------------------------
# max pooling


def _max_infer(metas, **attrs):
    x, dtype, out_hw = _x_infer(metas, **attrs)
    return [(tuple(x.shape[:2]) + out_hw, dtype)]


def _max_compute(arrays, **attrs):
    x = nc.c_array(arrays[0])
    if attrs["global_pool"]:
        return pool_planes(x, True)
    windows, steps, _, key = _tables(x.shape[2:], attrs, x.dtype)
    y = np.empty(x.shape[:2] + (windows[1].shape[1], windows[2].shape[1]), x.dtype)
    if _regular(attrs):
        # Regular grid: padded-row kernel (no per-window bounds, vectorized along rows).
        no_div = _NO_DIV[x.dtype]
        _pool_k.pool_forward_regular(x, y, True, *_geometry(key), no_div, no_div,
                                     _forward_threads(x.size))
    else:
        _table_k.max_forward(_as5(x), _as5(y), None, windows, steps, nc.threads(x.size))
    return y


def _max_grad(inputs, outputs, grads, **attrs):
    x, dy = inputs[0], grads[0]
    if _after_plain_relu(x) and dy.dtype == x.dtype:
        # relu -> max pool: each window's gradient lands on its maximum, a relu output
        # equal to the pooled value, so relu's mask can be taken on the pooled output
        # (a quarter of the elements for 2x2 windows) before the scatter; relu's own rule
        # then passes this gradient through (see nn_activation._relu_grad). With slope 0
        # the mask is idempotent, so a second application elsewhere changes nothing.
        dy = apply("relu_grad", [outputs[0], dy], slope=0.0)[0]
    return [apply("max_pool_grad", [x, dy], **attrs)[0]]


def _after_plain_relu(var):
    expr = var.expr
    return (expr.op is not None and expr.op.name == "relu" and expr.attrs["slope"] == 0.0
            and var.dtype.kind == "f")


def masked_by_relu(g, relu_out):
    """True when ``g`` is a max-pool gradient over ``relu_out`` whose pooled gradient is
    already relu-masked (by :func:`_max_grad`): relu's rule may pass it through."""
    expr = g.expr
    if expr.op is None or expr.op.name != "max_pool_grad":
        return False
    src, dy = expr.inputs
    return (src.expr is relu_out.expr and src.index == relu_out.index
            and dy.expr.op is not None and dy.expr.op.name == "relu_grad"
            and dy.expr.attrs["slope"] == 0.0)


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
    windows, steps, _, key = _tables(x.shape[2:], attrs, x.dtype)
    dx = np.empty_like(x)
    if _regular(attrs):
        _pool_k.max_backward_regular(x, dy, dx, *_geometry(key), nc.threads(x.size))
    else:
        _table_k.max_backward(_as5(x), _as5(dy), _as5(dx), windows, steps,
                              nc.threads(x.size))
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
    if attrs["global_pool"]:
        return pool_planes(x, False)
    windows, steps, divs, key = _tables(x.shape[2:], attrs, x.dtype)
    y = np.empty(x.shape[:2] + (windows[1].shape[1], windows[2].shape[1]), x.dtype)
    if _regular(attrs):
        # Regular grid: padded-row kernel (taps in the padding add zeros; the divisor
        # tables say what each window counts).
        _pool_k.pool_forward_regular(x, y, False, *_geometry(key), divs[1], divs[2],
                                     _forward_threads(x.size))
    else:
        _table_k.avg_forward(_as5(x), _as5(y), windows, steps, divs, nc.threads(x.size))
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
    windows, steps, divs, key = _tables(tuple(input_hw), attrs, dy.dtype)
    dx = np.empty(dy.shape[:2] + tuple(input_hw), dy.dtype)
    if _regular(attrs):
        _pool_k.avg_backward_regular(dy, dx, *_geometry(key), divs[1], divs[2],
                                     nc.threads(dx.size))
    else:
        _table_k.avg_backward(_as5(dy), _as5(dx), windows, steps, divs,
                              nc.threads(dx.size))
    return dx


def _avg_grad_grad(inputs, outputs, grads, input_hw, **attrs):
    # avg_pool_grad is the adjoint of the (linear) avg_pool: its own adjoint is avg_pool.
    return [apply("avg_pool", [grads[0]], **attrs)[0]]


register(OpDef("avg_pool_grad", _avg_grad_infer, _avg_grad_compute, _avg_grad_grad))


# ---------------------------------------------------------------------------------------
# public functions


def _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode, dilation=(1, 1)):
    mode = nc.padding_mode_value(padding_mode)
    pads = nc.mnn_pads(pads, "pads")
    if mode == Padding_Mode.SAME and any(pads):
        raise OpError(f"pads {list(pads)} given with padding_mode SAME, which computes its "
                      "own padding: pass one or the other")
    return dict(kernel=nc.mnn_pair(kernel, "kernel"), strides=nc.mnn_pair(stride, "stride"),
                pads=pads, padding_mode=mode, ceil_mode=bool(ceil_mode), global_pool=False,
                output_size=None, dilations=nc.mnn_pair(dilation, "dilation"))


_GLOBAL = dict(kernel=(1, 1), strides=(1, 1), pads=(0, 0, 0, 0),
               padding_mode=int(Padding_Mode.VALID), ceil_mode=False, global_pool=True,
               output_size=None)


def max_pool(x, kernel, stride=(1, 1), padding_mode=Padding_Mode.VALID, pads=(0, 0),
             ceil_mode=False, dilation=(1, 1)):
    """2-D max pooling of an NCHW input (MNN's ``max_pool``).

    Parameters
    ----------
    x : Var
        ``(N, C, H, W)`` float32 or float64.
    kernel, stride : pair of int
        MNN order ``(x, y)``: width first.
    padding_mode : Padding_Mode or str
        ``VALID``/``CAFFE``: explicit ``pads``; ``SAME``: output ``ceil(H / stride)``.
    pads : pair or four ints
        ``(px, py)`` or ``(top, left, bottom, right)``; smaller than the (dilated) kernel.
    ceil_mode : bool
        Round the output size up instead of down (torch/ONNX ``ceil_mode``).
    dilation : pair of int
        ``(x, y)`` spacing of the window taps (torch's/ONNX's ``dilation``).

    Returns
    -------
    Var
        ``(N, C, OH, OW)``, ``OH = floor((H + pads - (KH - 1) * DY - 1) / SH) + 1``.
    """
    x, nhwc = nc.as_nchw(to_var(x))
    attrs = _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode, dilation)
    return nc.restore(apply("max_pool", [x], **attrs)[0], nhwc)


def avg_pool(x, kernel, stride=(1, 1), padding_mode=Padding_Mode.VALID, pads=(0, 0),
             ceil_mode=False, count_include_pad=True, dilation=(1, 1)):
    """2-D average pooling of an NCHW input (MNN's ``avg_pool``).

    Parameters are those of :func:`max_pool`, plus:

    count_include_pad : bool
        Divide by the window's tap count including padded pixels (default, as torch and
        Caffe) or only by the real pixels (ONNX's default). Taps past the end padding,
        which ``ceil_mode`` can add, are never counted.
    """
    attrs = _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode, dilation)
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


def lp_pool(x, kernel, stride=(1, 1), p=2.0, padding_mode=Padding_Mode.VALID, pads=(0, 0),
            ceil_mode=False, dilation=(1, 1)):
    """Lp pooling: ``(sum over the window of |x|^p) ^ (1/p)`` (ONNX ``LpPool``).

    Arguments as :func:`max_pool`; padded pixels count as zeros. In ceil mode the taps past
    the end padding are left out of the sum (ONNX's rule; torch's ``lp_pool2d`` instead
    rescales the partial window's mean by the full kernel size).
    """
    x, nhwc = nc.as_nchw(to_var(x))
    attrs = _regular_attrs(kernel, stride, padding_mode, pads, ceil_mode, dilation)
    if len(x.shape) != 4:
        raise OpError(f"lp_pool: input must be 4-D NCHW, got shape {list(x.shape)}")
    _check_attrs(attrs)
    mean = apply("avg_pool", [pw.powered_abs(x, p, "lp_pool")], count_include_pad=True,
                 **attrs)[0]
    _, _, divs, _ = _tables(tuple(x.shape[2:]), dict(attrs, count_include_pad=True),
                            x.dtype)
    return nc.restore(pw.lp_root(mean, np.multiply.outer(divs[1], divs[2]), p), nhwc)
