"""Activations and softmax: relu (with slope), relu6, prelu, elu, selu, gelu_tanh, silu,
hardswish, hardsigmoid, softplus, softsign, softmax, log_softmax.

(``sigmoid``, ``tanh`` and the erf ``gelu`` live in :mod:`.elementwise`.)

Op attributes (plain floats/ints):

- ``relu``: ``slope`` (output ``slope * x`` for ``x < 0``).
- ``relu6``: ``min_value``, ``max_value`` (clamp).
- ``elu``: ``alpha``; ``selu``: ``scale``, ``alpha``; ``hardsigmoid``: ``alpha``, ``beta``
  (``max(0, min(1, alpha * x + beta))``).
- ``softmax``/``log_softmax``: ``axis`` (normalized to a non-negative int).
- ``prelu``: inputs ``x`` and ``slope``; the slope has one value, or one per channel
  (axis 1 of ``x``).

Each op computes in the input's float dtype: relu, relu6 and hardswish (float32/float64)
and silu (float32) with the compiled kernels of activation.pyx, float32
softmax/log_softmax with softmax.pyx, the rest with numpy; gradients are written with
express ops (so they are differentiable again).
"""
import math

import numpy as np
import scipy.special as _sp

from ..._cython import activation as _act_k
from ..._cython import softmax as _softmax_k
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc
from .nn_pool import masked_by_relu

__all__ = [
    "elu",
    "gelu_tanh",
    "hardsigmoid",
    "hardswish",
    "log_softmax",
    "prelu",
    "relu",
    "relu6",
    "selu",
    "silu",
    "softmax",
    "softplus",
    "softsign",
]


def _float_infer(metas, **attrs):
    x = metas[0]
    if x.dtype.kind != "f":
        raise OpError(f"needs a floating point input, got {x.dtype}")
    return [(x.shape, x.dtype)]


def _cast(fn):
    """Wrap a numpy activation so the result keeps the input's dtype."""
    def compute(arrays, **attrs):
        x = arrays[0]
        return np.asarray(fn(x, **attrs), dtype=x.dtype)
    return compute


def _flat_kernel(kernel, x, *args):
    """``kernel(x_flat, out_flat, *args, nthreads)`` on a C-contiguous copy of ``x``
    (a view when it already is one) into a new array of x's shape and dtype."""
    x = np.asarray(x, order="C")  # keeps 0-d arrays 0-d (ascontiguousarray does not)
    out = np.empty(x.shape, x.dtype)
    kernel(x.reshape(-1), out.reshape(-1), *args, nc.threads(x.size))
    return out


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _gt0(x):
    from ..var import const
    from .elementwise import greater

    return greater(x, const(0, dtype=x.dtype))


def _select(cond, a, b):
    from .selection import select

    return select(cond, a, b)


def _zeros(g):
    from .creation import zeros_like

    return zeros_like(g)


# ---------------------------------------------------------------------------------------
# relu family


def _relu_np(x, slope):
    if x.dtype in _KERNEL_DTYPES:
        return _flat_kernel(_act_k.relu, x, slope)
    if slope == 0.0:
        return np.maximum(x, 0)
    return np.where(x > 0, x, x * x.dtype.type(slope))


def _relu_infer(metas, slope):
    x = metas[0]
    if x.dtype.kind not in "fiu":
        raise OpError(f"needs a numeric input, got {x.dtype}")
    return [(x.shape, x.dtype)]


def _relu_grad(inputs, outputs, grads, slope):
    x, g = inputs[0], grads[0]
    if x.dtype.kind != "f":
        return [None]
    if slope == 0.0 and masked_by_relu(g, outputs[0]):
        return [g]  # a max pool's gradient, masked already on the pooled side
    if g.dtype == x.dtype and list(g.shape) == list(x.shape):
        # One fused op (one pass) instead of compare + multiply + select.
        return [apply("relu_grad", [x, g], slope=slope)[0]]
    return [_select(_gt0(x), g, g * slope)]


register(OpDef("relu", _relu_infer, _cast(_relu_np), _relu_grad))


def _relu_grad_infer(metas, slope):
    x, g = metas
    if x.dtype.kind != "f" or g.dtype != x.dtype or tuple(g.shape) != tuple(x.shape):
        raise OpError(f"x and g must be floats of one shape and dtype, got {list(x.shape)} "
                      f"{x.dtype} and {list(g.shape)} {g.dtype}")
    return [(x.shape, x.dtype)]


def _relu_grad_compute(arrays, slope):
    # asarray(order="C"), not ascontiguousarray: that one turns 0-d arrays into 1-d.
    x, g = (np.asarray(a, order="C") for a in arrays)
    out = np.empty(x.shape, x.dtype)
    if x.dtype in (np.float32, np.float64):
        _act_k.relu_grad(x.reshape(-1), g.reshape(-1), out.reshape(-1), slope,
                         nc.threads(x.size))
    else:
        np.copyto(out, np.where(x > 0, g, g * x.dtype.type(slope)))
    return out


def _relu_grad_grad(inputs, outputs, grads, slope):
    # Piecewise linear in g with x only choosing the piece: zero gradient for x.
    x, gg = inputs[0], grads[0]
    return [_zeros(x), apply("relu_grad", [x, gg], slope=slope)[0]]


# relu's gradient ``g * (x > 0)`` (``g * slope`` for x <= 0): an op of its own so that
# training runs it as one pass.
register(OpDef("relu_grad", _relu_grad_infer, _relu_grad_compute, _relu_grad_grad))


def relu(x, slope=0.0):
    """``x`` where ``x > 0``, else ``slope * x`` (MNN's ``relu``; leaky when slope != 0).

    Parameters
    ----------
    x : Var
    slope : float
        Slope for negative inputs.
    """
    return apply("relu", [to_var(x)], slope=float(slope))[0]


def _relu6_np(x, min_value, max_value):
    if x.dtype in _KERNEL_DTYPES:
        return _flat_kernel(_act_k.clip, x, min_value, max_value)
    return np.clip(x, x.dtype.type(min_value), x.dtype.type(max_value))


def _relu6_grad(inputs, outputs, grads, min_value, max_value):
    from .elementwise import greater, less, logical_and

    x, g = inputs[0], grads[0]
    inside = logical_and(greater(x, min_value), less(x, max_value))
    return [_select(inside, g, _zeros(g))]


def _relu6_infer(metas, min_value, max_value):
    return _relu_infer(metas, 0.0)


register(OpDef("relu6", _relu6_infer, _cast(_relu6_np), _relu6_grad))


def relu6(x, min=0.0, max=6.0):
    """``clip(x, min, max)`` (MNN's ``relu6``).

    Parameters
    ----------
    x : Var
    min, max : float
        The clamp range.
    """
    if float(min) > float(max):
        raise OpError(f"relu6: min {min} is larger than max {max}")
    return apply("relu6", [to_var(x)], min_value=float(min), max_value=float(max))[0]


def _prelu_slope_shape(x_shape, s_shape):
    n = int(np.prod(s_shape)) if len(s_shape) else 1
    if n == 1:
        return (1,) * len(x_shape)
    if len(x_shape) < 2 or n != x_shape[1]:
        raise OpError(f"slope of {n} values must be one per channel (axis 1 of "
                      f"{list(x_shape)})")
    return (1, n) + (1,) * (len(x_shape) - 2)


def _prelu_infer(metas):
    x, s = metas
    nc.float_dtype(metas, "prelu")
    _prelu_slope_shape(x.shape, s.shape)
    return [(x.shape, x.dtype)]


def _prelu_compute(arrays):
    x, s = arrays
    s = s.reshape(_prelu_slope_shape(x.shape, s.shape))
    return np.where(x > 0, x, x * s)


def _prelu_grad(inputs, outputs, grads):
    from .movement import reshape
    from .reduce import reduce_sum

    x, s, g = inputs[0], inputs[1], grads[0]
    shape = _prelu_slope_shape(x.shape, s.shape)
    pos = _gt0(x)
    s_b = reshape(s, list(shape))
    dx = _select(pos, g, g * s_b)
    contrib = _select(pos, _zeros(g), g * x)
    axes = [i for i, d in enumerate(shape) if d == 1]
    ds = reshape(reduce_sum(contrib, axes, keepdims=False), list(s.shape))
    return [dx, ds]


register(OpDef("prelu", _prelu_infer, _prelu_compute, _prelu_grad))


def prelu(x, slopes):
    """``x`` where ``x > 0``, else ``slope[c] * x`` with one slope per channel (axis 1).

    Parameters
    ----------
    x : Var
        At least 2-D (NCHW for images).
    slopes : Var or sequence of float
        One value, or one per channel.
    """
    x, nhwc = nc.as_nchw(to_var(x))
    if not hasattr(slopes, "expr"):
        slopes = np.asarray(slopes, dtype=x.dtype).reshape(-1)
    return nc.restore(apply("prelu", [x, to_var(slopes)])[0], nhwc)


# ---------------------------------------------------------------------------------------
# exponential family


def _elu_np(x, alpha):
    return np.where(x > 0, x, x.dtype.type(alpha) * np.expm1(np.minimum(x, 0)))


def _elu_grad(inputs, outputs, grads, alpha):
    x, y, g = inputs[0], outputs[0], grads[0]
    return [_select(_gt0(x), g, g * (y + alpha))]


register(OpDef("elu", _float_infer, _cast(_elu_np), _elu_grad))


def elu(x, alpha=1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (MNN's ``elu``)."""
    return apply("elu", [to_var(x)], alpha=float(alpha))[0]


_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def _selu_np(x, scale, alpha):
    return x.dtype.type(scale) * _elu_np(x, alpha)


def _selu_grad(inputs, outputs, grads, scale, alpha):
    x, y, g = inputs[0], outputs[0], grads[0]
    return [_select(_gt0(x), g * scale, g * (y + scale * alpha))]


register(OpDef("selu", _float_infer, _cast(_selu_np), _selu_grad))


def selu(x, scale=_SELU_SCALE, alpha=_SELU_ALPHA):
    """``scale * elu(x, alpha)`` (MNN's ``selu``; defaults are the self-normalizing ones)."""
    return apply("selu", [to_var(x)], scale=float(scale), alpha=float(alpha))[0]


_GELU_C = np.sqrt(2.0 / np.pi)


def _gelu_tanh_np(x):
    c = x.dtype.type(_GELU_C)
    return x.dtype.type(0.5) * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x ** 3)))


def _gelu_tanh_grad(inputs, outputs, grads):
    from .elementwise import tanh

    x, g = inputs[0], grads[0]
    t = tanh((x + x * x * x * 0.044715) * _GELU_C)
    dt = (1.0 - t * t) * (x * x * (3 * 0.044715) + 1.0) * _GELU_C
    return [g * ((t + 1.0) * 0.5 + x * dt * 0.5)]


register(OpDef("gelu_tanh", _float_infer, _cast(_gelu_tanh_np), _gelu_tanh_grad))


def gelu_tanh(x):
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    (The real MNN wheel's ``gelu`` is this form; ``mnn.expr.gelu`` is the exact erf form.)
    """
    return apply("gelu_tanh", [to_var(x)])[0]


def _silu_np(x):
    if x.dtype == np.float32:
        return _flat_kernel(_act_k.silu_f32, x)
    return x * _sp.expit(x)


def _silu_grad(inputs, outputs, grads):
    from .elementwise import sigmoid

    x, g = inputs[0], grads[0]
    s = sigmoid(x)
    return [g * (s + x * s * (1.0 - s))]


register(OpDef("silu", _float_infer, _cast(_silu_np), _silu_grad))


def silu(x):
    """``x * sigmoid(x)`` (swish)."""
    return apply("silu", [to_var(x)])[0]


def _hardswish_np(x):
    if x.dtype in _KERNEL_DTYPES:
        return _flat_kernel(_act_k.hardswish, x)
    t = x.dtype.type
    return x * np.clip(x + t(3), t(0), t(6)) / t(6)


def _hardswish_grad(inputs, outputs, grads):
    from .elementwise import greater, less, logical_and

    x, g = inputs[0], grads[0]
    mid = logical_and(greater(x, -3.0), less(x, 3.0))
    upper = _select(greater(x, 0.0), g, _zeros(g))  # x >= 3 -> slope 1, x <= -3 -> 0
    return [_select(mid, g * (x * (2.0 / 6.0) + 0.5), upper)]


register(OpDef("hardswish", _float_infer, _cast(_hardswish_np), _hardswish_grad))


def hardswish(x):
    """``x * relu6(x + 3) / 6`` (MobileNetV3's hard swish, torch's ``hardswish``)."""
    return apply("hardswish", [to_var(x)])[0]


def _hardsigmoid_np(x, alpha, beta):
    t = x.dtype.type
    return np.clip(t(alpha) * x + t(beta), t(0), t(1))


def _hardsigmoid_grad(inputs, outputs, grads, alpha, beta):
    from .elementwise import greater, less, logical_and

    y, g = outputs[0], grads[0]
    inside = logical_and(greater(y, 0.0), less(y, 1.0))
    return [_select(inside, g * alpha, _zeros(g))]


register(OpDef("hardsigmoid", _float_infer, _cast(_hardsigmoid_np), _hardsigmoid_grad))


def hardsigmoid(x, alpha=0.2, beta=0.5):
    """``max(0, min(1, alpha * x + beta))`` (ONNX's defaults; torch's is alpha = 1/6)."""
    return apply("hardsigmoid", [to_var(x)], alpha=float(alpha), beta=float(beta))[0]


def _softplus_np(x):
    # log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _softplus_grad(inputs, outputs, grads):
    from .elementwise import sigmoid

    return [grads[0] * sigmoid(inputs[0])]


register(OpDef("softplus", _float_infer, _cast(_softplus_np), _softplus_grad))


def softplus(x):
    """``log(exp(x) + 1)``, computed without overflow (MNN's ``softplus``)."""
    return apply("softplus", [to_var(x)])[0]


def _softsign_np(x):
    return x / (np.abs(x) + x.dtype.type(1))


def _softsign_grad(inputs, outputs, grads):
    from .elementwise import abs as _abs

    d = _abs(inputs[0]) + 1.0
    return [grads[0] / (d * d)]


register(OpDef("softsign", _float_infer, _cast(_softsign_np), _softsign_grad))


def softsign(x):
    """``x / (|x| + 1)`` (MNN's ``softsign``)."""
    return apply("softsign", [to_var(x)])[0]


# ---------------------------------------------------------------------------------------
# softmax


def _axis_attr(x, axis):
    nd = x.ndim
    axis = int(axis)
    if not -nd <= axis < nd:
        raise OpError(f"axis {axis} out of range for a {nd}-D input")
    return axis % nd


def _softmax_infer(metas, axis):
    out = _float_infer(metas)
    if not 0 <= axis < max(len(metas[0].shape), 1):
        raise OpError(f"axis {axis} out of range for shape {list(metas[0].shape)}")
    return out


def _softmax_np(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def _softmax_grad(inputs, outputs, grads, axis):
    from .reduce import reduce_sum

    y, g = outputs[0], grads[0]
    gy = g * y
    return [gy - y * reduce_sum(gy, [axis], keepdims=True)]


def _softmax_kernel(x, axis, log_out):
    """float32: the compiled kernel over x viewed as (outer, n, inner); float64 (and other
    float widths) through numpy."""
    if x.dtype != np.float32:
        fn = _log_softmax_np if log_out else _softmax_np
        return np.asarray(fn(x, axis=axis), dtype=x.dtype)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    shape = x.shape
    # math.prod on the shape tuple: np.prod costs microseconds, as much as a 1000-wide row.
    if x.ndim == 0:
        shape3 = (1, 1, 1)
    else:
        shape3 = (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))
    y = np.empty(shape, np.float32)
    _softmax_k.softmax_f32(x.reshape(shape3), y.reshape(shape3), log_out,
                           nc.threads(x.size * 4))
    return y


def _softmax_compute(arrays, axis):
    return _softmax_kernel(arrays[0], axis, False)


register(OpDef("softmax", _softmax_infer, _softmax_compute, _softmax_grad))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, computed stably (MNN's ``softmax``).

    Parameters
    ----------
    x : Var
        Float input, at least 1-D.
    axis : int
        The axis normalized over.
    """
    x = to_var(x)
    return apply("softmax", [x], axis=_axis_attr(x, axis))[0]


def _log_softmax_np(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _log_softmax_grad(inputs, outputs, grads, axis):
    from .elementwise import exp
    from .reduce import reduce_sum

    y, g = outputs[0], grads[0]
    return [g - exp(y) * reduce_sum(g, [axis], keepdims=True)]


def _log_softmax_compute(arrays, axis):
    return _softmax_kernel(arrays[0], axis, True)


register(OpDef("log_softmax", _softmax_infer, _log_softmax_compute, _log_softmax_grad))


def log_softmax(x, axis=-1):
    """``x - log(sum(exp(x), axis))``, computed stably.

    Parameters
    ----------
    x : Var
    axis : int
    """
    x = to_var(x)
    return apply("log_softmax", [x], axis=_axis_attr(x, axis))[0]
