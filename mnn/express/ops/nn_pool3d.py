"""3-D pooling over NCDHW (max_pool3d, avg_pool3d, lp_pool3d, their gradient ops) and the
argmax of max pooling (``max_pool_indices``, 2-D or 3-D: ONNX MaxPool's ``Indices``).

Op attributes (plain values in the input's axis order, depth first):

- ``kernel``, ``strides``, ``dilations``: one int per spatial axis;
- ``pads``: begin pads then end pads (ONNX order, ``(d0, h0, w0, d1, h1, w1)``);
- ``ceil_mode`` bool (torch's/ONNX's rule: the last window starts inside the input or
  its begin padding);
- ``count_include_pad`` bool (avg only); ``input_size`` (avg_pool3d_grad only).

The forward ops run the vectorized 2-D kernels of ``mnn/_cython/pool.pyx`` twice (over
(h, w), then over depth); gradients and indices run the table kernels of
``pool_table.pyx`` (tables from :mod:`.pool_windows`).
"""
import numpy as np

from ..._cython import pool as _pool_k
from ..._cython import pool_table as _table_k
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc
from . import pool_windows as pw

__all__ = ["avg_pool3d", "lp_pool3d", "max_pool3d", "max_pool_indices"]


def _key(attrs, count_include_pad=False):
    return dict(kernel=tuple(attrs["kernel"]), strides=tuple(attrs["strides"]),
                pads=tuple(attrs["pads"]), dilations=tuple(attrs["dilations"]),
                ceil_mode=bool(attrs["ceil_mode"]), count_include_pad=count_include_pad)


def _check(x_shape, attrs, rank, what):
    if len(x_shape) != rank:
        raise OpError(f"{what}: input must be {rank}-D, got shape {list(x_shape)}")
    n = rank - 2
    for name in ("kernel", "strides", "dilations"):
        if len(attrs[name]) != n:
            raise OpError(f"{what}: {name} needs {n} values, got {list(attrs[name])}")
    if len(attrs["pads"]) != 2 * n or min(attrs["pads"]) < 0:
        raise OpError(f"{what}: pads needs {2 * n} values >= 0, got {list(attrs['pads'])}")
    pw.check_geometry(attrs["kernel"], attrs["strides"], attrs["pads"], attrs["dilations"])
    return pw.pool_out_sizes(tuple(x_shape[2:]), **_key(attrs))


def _tables(in_sizes, attrs, dtype, count_include_pad=False):
    windows, steps, divs, _ = pw.tables(tuple(in_sizes), dtype=np.dtype(dtype),
                                        **_key(attrs, count_include_pad))
    return windows, steps, divs


def _as5(a):
    return a if a.ndim == 5 else a.reshape(a.shape[:2] + (1,) + a.shape[2:])


# ---------------------------------------------------------------------------------------
# max


def _max_infer(metas, **attrs):
    x = metas[0]
    dtype = nc.float_dtype(metas[:1], "max_pool3d")
    out = _check(x.shape, attrs, 5, "max_pool3d")
    return [(tuple(x.shape[:2]) + out, dtype)]


def _separable_forward(x, is_max, attrs, windows, divs):
    """Regular 3-D pooling as two passes of the vectorized 2-D kernel: over (h, w) for
    every depth slice, then over depth with the (h, w) results as rows. Exact: max and sum
    both split over the axes, and the divisor is the product of the per-axis tap counts."""
    n, c, d, h, w = x.shape
    od, oh, ow = (t.shape[1] for t in windows)
    (kd, kh, kw), (sd, sh, sw) = attrs["kernel"], attrs["strides"]
    (dd, dh, dw), pads = attrs["dilations"], attrs["pads"]
    dt = x.dtype
    none = np.ones(0, dt)
    ones = np.ones(oh * ow, dt)
    plane = np.empty((n * c * d, 1, oh, ow), dt)
    threads = nc.threads(x.size)
    _pool_k.pool_forward_regular(x.reshape(n * c * d, 1, h, w), plane, is_max, kh, kw, sh,
                                 sw, pads[1], pads[2], dh, dw,
                                 none if is_max else divs[1], none if is_max else divs[2],
                                 threads)
    y = np.empty((n * c, 1, od, oh * ow), dt)
    _pool_k.pool_forward_regular(plane.reshape(n * c, 1, d, oh * ow), y, is_max, kd, 1, sd, 1,
                                 pads[0], 0, dd, 1, none if is_max else divs[0],
                                 none if is_max else ones, threads)
    return y.reshape(n, c, od, oh, ow)


def _max_compute(arrays, **attrs):
    x = nc.c_array(arrays[0])
    windows, _, _ = _tables(x.shape[2:], attrs, x.dtype)
    return _separable_forward(x, True, attrs, windows, None)


def _max_grad(inputs, outputs, grads, **attrs):
    return [apply("max_pool3d_grad", [inputs[0], grads[0]], **attrs)[0]]


register(OpDef("max_pool3d", _max_infer, _max_compute, _max_grad))


def _max_grad_infer(metas, **attrs):
    x = metas[0]
    dtype = nc.float_dtype(metas, "max_pool3d_grad")
    out = _check(x.shape, attrs, 5, "max_pool3d_grad")
    if tuple(metas[1].shape) != tuple(x.shape[:2]) + out:
        raise OpError(f"max_pool3d_grad: gradient shape {list(metas[1].shape)} is not the "
                      f"pooled shape {list(x.shape[:2]) + list(out)}")
    return [(tuple(x.shape), dtype)]


def _max_grad_compute(arrays, **attrs):
    x, dy = nc.c_array(arrays[0]), nc.c_array(arrays[1])
    windows, steps, _ = _tables(x.shape[2:], attrs, x.dtype)
    dx = np.empty_like(x)
    _table_k.max_backward(x, dy, dx, windows, steps, nc.threads(x.size))
    return dx


# Not differentiable again (piecewise constant in x), as max_pool_grad.
register(OpDef("max_pool3d_grad", _max_grad_infer, _max_grad_compute))


def _indices_infer(metas, **attrs):
    x = metas[0]
    nc.float_dtype(metas[:1], "max_pool_indices")
    if len(x.shape) not in (4, 5):
        raise OpError(f"max_pool_indices: input must be 4-D or 5-D, got {list(x.shape)}")
    out = _check(x.shape, attrs, len(x.shape), "max_pool_indices")
    return [(tuple(x.shape[:2]) + out, np.dtype(np.int64))]


def _indices_compute(arrays, **attrs):
    x = nc.c_array(arrays[0])
    windows, steps, _ = _tables(x.shape[2:], attrs, x.dtype)
    out = x.shape[:2] + tuple(w.shape[1] for w in windows[5 - x.ndim:])
    y = np.empty(out, x.dtype)
    idx = np.empty(out, np.int64)
    _table_k.max_forward(_as5(x), _as5(y), _as5(idx), windows, steps, nc.threads(x.size))
    return idx


# Integer output: no gradient flows through it.
register(OpDef("max_pool_indices", _indices_infer, _indices_compute))


# ---------------------------------------------------------------------------------------
# average


def _avg_infer(metas, **attrs):
    x = metas[0]
    dtype = nc.float_dtype(metas[:1], "avg_pool3d")
    out = _check(x.shape, attrs, 5, "avg_pool3d")
    return [(tuple(x.shape[:2]) + out, dtype)]


def _avg_compute(arrays, count_include_pad, **attrs):
    x = nc.c_array(arrays[0])
    windows, _, divs = _tables(x.shape[2:], attrs, x.dtype, bool(count_include_pad))
    return _separable_forward(x, False, attrs, windows, divs)


def _avg_grad(inputs, outputs, grads, **attrs):
    size = tuple(inputs[0].shape[2:])
    return [apply("avg_pool3d_grad", [grads[0]], input_size=size, **attrs)[0]]


register(OpDef("avg_pool3d", _avg_infer, _avg_compute, _avg_grad))


def _avg_grad_infer(metas, input_size, **attrs):
    dy = metas[0]
    dtype = nc.float_dtype(metas, "avg_pool3d_grad")
    if len(dy.shape) != 5 or len(input_size) != 3:
        raise OpError(f"avg_pool3d_grad: gradient must be 5-D and input_size 3 values, got "
                      f"{list(dy.shape)} and {list(input_size)}")
    nc.positive(input_size, "input size")
    out = _check(tuple(dy.shape[:2]) + tuple(input_size), attrs, 5, "avg_pool3d_grad")
    if out != tuple(dy.shape[2:]):
        raise OpError(f"avg_pool3d_grad: input size {list(input_size)} pools to {list(out)}, "
                      f"not the gradient's {list(dy.shape[2:])}")
    return [(tuple(dy.shape[:2]) + tuple(input_size), dtype)]


def _avg_grad_compute(arrays, input_size, count_include_pad, **attrs):
    dy = nc.c_array(arrays[0])
    windows, steps, divs = _tables(tuple(input_size), attrs, dy.dtype,
                                   bool(count_include_pad))
    dx = np.empty(dy.shape[:2] + tuple(input_size), dy.dtype)
    _table_k.avg_backward(dy, dx, windows, steps, divs, nc.threads(dx.size))
    return dx


def _avg_grad_grad(inputs, outputs, grads, input_size, **attrs):
    # The adjoint of the linear avg_pool3d is avg_pool3d_grad, and back.
    return [apply("avg_pool3d", [grads[0]], **attrs)[0]]


register(OpDef("avg_pool3d_grad", _avg_grad_infer, _avg_grad_compute, _avg_grad_grad))


# ---------------------------------------------------------------------------------------
# public functions


def _ints(value, n, name):
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    vals = tuple(int(v) for v in value)
    if len(vals) != n:
        raise OpError(f"{name} must be one int or {n} ints, got {list(vals)}")
    return vals


def _attrs(n, kernel, stride, pads, dilation, ceil_mode):
    kernel = _ints(kernel, n, "kernel")
    stride = kernel if stride is None else _ints(stride, n, "stride")
    if isinstance(pads, (int, np.integer)):
        pads = (int(pads),) * (2 * n)
    pads = tuple(int(v) for v in pads)
    if len(pads) == n:
        pads = pads * 2
    if len(pads) != 2 * n:
        raise OpError(f"pads must be one int, {n} ints or {2 * n} ints (begins then ends), "
                      f"got {list(pads)}")
    return dict(kernel=kernel, strides=stride, pads=pads,
                dilations=_ints(dilation, n, "dilation"), ceil_mode=bool(ceil_mode))


def max_pool3d(x, kernel, stride=None, pads=0, dilation=1, ceil_mode=False):
    """3-D max pooling of an NCDHW input (torch's ``max_pool3d``, ONNX's 3-D MaxPool).

    Parameters
    ----------
    x : Var
        ``(N, C, D, H, W)`` float32 or float64.
    kernel, stride, dilation : int or three ints
        Depth, height, width. ``stride`` defaults to ``kernel``.
    pads : int, three ints or six ints
        Symmetric per axis, or begins then ends ``(d0, h0, w0, d1, h1, w1)``; smaller
        than the dilated kernel. Padding never wins a max.
    ceil_mode : bool
        Round output sizes up (the last window still starts inside the input or its
        begin padding).

    Returns
    -------
    Var
        ``(N, C, OD, OH, OW)``.
    """
    return apply("max_pool3d", [to_var(x)],
                 **_attrs(3, kernel, stride, pads, dilation, ceil_mode))[0]


def avg_pool3d(x, kernel, stride=None, pads=0, ceil_mode=False, count_include_pad=True,
               dilation=1):
    """3-D average pooling of an NCDHW input (torch's ``avg_pool3d``, ONNX's AveragePool).

    Arguments as :func:`max_pool3d`, plus ``count_include_pad``: divide by the window's
    tap count including padding (torch's default) or only the taps inside the input
    (ONNX's default). Taps past the end padding (ceil mode) are never counted.
    """
    attrs = _attrs(3, kernel, stride, pads, dilation, ceil_mode)
    return apply("avg_pool3d", [to_var(x)], count_include_pad=bool(count_include_pad),
                 **attrs)[0]


def lp_pool3d(x, kernel, stride=None, p=2.0, pads=0, ceil_mode=False, dilation=1):
    """3-D Lp pooling ``(sum over the window of |x|^p) ^ (1/p)`` (ONNX's LpPool);
    arguments as :func:`max_pool3d`, padded taps count as zeros."""
    x = to_var(x)
    attrs = _attrs(3, kernel, stride, pads, dilation, ceil_mode)
    _check(x.shape, attrs, 5, "lp_pool3d")
    mean = apply("avg_pool3d", [pw.powered_abs(x, p, "lp_pool3d")], count_include_pad=True,
                 **attrs)[0]
    _, _, divs = _tables(tuple(x.shape[2:]), attrs, x.dtype, True)
    counts = np.multiply.outer(np.multiply.outer(divs[0], divs[1]), divs[2])
    return pw.lp_root(mean, counts, p)


def max_pool_indices(x, kernel, stride=None, pads=0, dilation=1, ceil_mode=False):
    """Where each max of a 2-D or 3-D max pooling comes from: the flat position inside
    its input plane (``iy * W + ix``, or ``(iz * H + iy) * W + ix``), int64 — torch's
    ``return_indices``. Ties go to the first maximum in row-major order; a window with
    NaNs points at its last NaN (torch's choice).

    Arguments as :func:`max_pool3d` (one value per spatial axis, in the input's order:
    height first for 2-D, not MNN's width-first pairs).
    """
    x = to_var(x)
    n = len(x.shape) - 2
    if n not in (2, 3):
        raise OpError(f"max_pool_indices: input must be 4-D or 5-D, got {list(x.shape)}")
    return apply("max_pool_indices", [x],
                 **_attrs(n, kernel, stride, pads, dilation, ceil_mode))[0]
