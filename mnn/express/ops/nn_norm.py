"""Normalizations: moments, batch_norm (inference form), scale, layer_norm, instance_norm,
group_norm, normalize (MNN's L2 Normalize), lrn (local response normalization).

These are composites over primitive ops (reduce_mean, subtract, rsqrt, ...), so their
gradients come from the primitives' rules and every function works on any float dtype;
``layer_norm`` (attributes ``start`` (first normalized axis), ``epsilon``,
``has_gamma``, ``has_beta``) and ``group_norm`` (attributes ``groups``, ``epsilon``,
``has_gamma``, ``has_beta``; instance_norm is its one-channel-per-group case) are fused
ops with compiled kernels (norm.pyx) whose gradients are their composite definitions'.
Channel-wise parameters apply along axis 1 (NCHW; NC4HW4 Vars hold NCHW data; Vars
labelled NHWC are transposed in and out, so their channels are the last axis).
"""
import math

import numpy as np

from ..._cython import norm as _norm_k
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import Var, to_var
from . import nn_common as nc
from .elementwise import add, multiply, rsqrt, square, subtract
from .movement import reshape
from .reduce import normalize_axes, reduce_mean, reduce_sum

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "lrn",
    "moments",
    "normalize",
    "scale",
]


def _float_var(x, what):
    x = to_var(x)
    if x.dtype.kind != "f":
        raise OpError(f"{what}: needs a floating point input, got {x.dtype}")
    return x


def _param(p, x, what, name):
    """A per-channel parameter as a Var of x's dtype shaped to broadcast along axis 1."""
    if p is None:
        return None
    if not isinstance(p, Var):
        p = to_var(np.asarray(p, dtype=x.dtype))
    c = x.shape[1] if len(x.shape) > 1 else None
    n = int(np.prod(p.shape)) if p.shape else 1
    if n != c:
        raise OpError(f"{what}: {name} has {n} values, input {x.shape} has {c} channels")
    return reshape(p, [1, c] + [1] * (len(x.shape) - 2))


def moments(x, axes=[2, 3], shift=None, keep_dims=True):  # noqa: B006 - MNN's default
    """Mean and (biased) variance of ``x`` over ``axes`` (MNN's ``moments``).

    Parameters
    ----------
    x : Var
    axes : sequence of int
    shift : None
        Accepted for MNN compatibility; MNN ignores it too (it must be None).
    keep_dims : bool

    Returns
    -------
    [Var, Var]
        ``[mean, variance]``.
    """
    x = _float_var(x, "moments")
    if shift is not None:
        raise OpError("moments: shift is not supported (MNN ignores it); pass None")
    axes = list(normalize_axes(axes, len(x.shape), "moments"))
    mean = reduce_mean(x, axes, keepdims=True)
    var = reduce_mean(square(subtract(x, mean)), axes, keepdims=keep_dims)
    if not keep_dims:
        mean = reduce_mean(x, axes, keepdims=False)
    return [mean, var]


def batch_norm(x, mean, variance, gamma=None, beta=None, epsilon=1e-5):
    """Batch normalization in inference form, per channel (axis 1).

    ``(x - mean) / sqrt(variance + epsilon) * gamma + beta``.

    Parameters
    ----------
    x : Var
        ``(N, C, ...)``.
    mean, variance, gamma, beta : Var or sequence of float
        ``C`` values each (gamma/beta optional).
    epsilon : float
    """
    x, nhwc = nc.as_nchw(_float_var(x, "batch_norm"))
    m = _param(mean, x, "batch_norm", "mean")
    v = _param(variance, x, "batch_norm", "variance")
    y = multiply(subtract(x, m), rsqrt(add(v, float(epsilon))))
    if gamma is not None:
        y = multiply(y, _param(gamma, x, "batch_norm", "gamma"))
    if beta is not None:
        y = add(y, _param(beta, x, "batch_norm", "beta"))
    return nc.restore(y, nhwc)


def scale(x, channels, scale, bias):
    """``x * scale + bias`` per channel (axis 1) (MNN's ``scale``).

    Parameters
    ----------
    x : Var
        ``(N, channels, ...)``.
    channels : int
    scale, bias : sequence of float or Var
        ``channels`` values each.
    """
    x, nhwc = nc.as_nchw(_float_var(x, "scale"))
    if len(x.shape) < 2 or x.shape[1] != int(channels):
        raise OpError(f"scale: input {x.shape} does not have {channels} channels")
    y = add(multiply(x, _param(scale, x, "scale", "scale")), _param(bias, x, "scale", "bias"))
    return nc.restore(y, nhwc)


def _normalized(x, axes, epsilon):
    mean = reduce_mean(x, axes, keepdims=True)
    centered = subtract(x, mean)
    var = reduce_mean(square(centered), axes, keepdims=True)
    return multiply(centered, rsqrt(add(var, float(epsilon))))


def _layer_norm_composite(x, start, epsilon, gamma, beta):
    axes = list(range(start, len(x.shape)))
    y = _normalized(x, axes, epsilon)
    if gamma is not None:
        y = multiply(y, gamma)
    if beta is not None:
        y = add(y, beta)
    return y


def _ln_infer(metas, start, epsilon, has_gamma, has_beta):
    x = metas[0]
    if x.dtype.kind != "f":
        raise OpError(f"needs a floating point input, got {x.dtype}")
    tail = tuple(x.shape[start:])
    for m in metas[1:]:
        if tuple(m.shape) != tail or m.dtype != x.dtype:
            raise OpError(f"gamma/beta must have the normalized shape {list(tail)} and "
                          f"dtype {x.dtype}, got {list(m.shape)} {m.dtype}")
    if len(metas) != 1 + int(has_gamma) + int(has_beta):
        raise OpError("input count does not match has_gamma/has_beta")
    return [(x.shape, x.dtype)]


def _ln_compute(arrays, start, epsilon, has_gamma, has_beta):
    x = arrays[0]
    if x.dtype in (np.float32, np.float64):
        return _ln_kernel(arrays, start, epsilon, has_gamma, has_beta)
    return _ln_numpy(arrays, start, epsilon, has_gamma, has_beta)


def _ln_kernel(arrays, start, epsilon, has_gamma, has_beta):
    # The compiled per-row kernel (norm.pyx) on x viewed as (rows, normalized size).
    x = np.asarray(arrays[0], order="C")  # keeps 0-d arrays 0-d
    d = math.prod(x.shape[start:])  # (np.prod costs microseconds per call)
    rows = x.size // d if d else 0
    empty = np.empty(0, x.dtype)
    k = 1
    gamma = beta = empty
    if has_gamma:
        gamma = np.ascontiguousarray(arrays[k], dtype=x.dtype).reshape(-1)
        k += 1
    if has_beta:
        beta = np.ascontiguousarray(arrays[k], dtype=x.dtype).reshape(-1)
    y = np.empty(x.shape, x.dtype)
    _norm_k.layer_norm_rows(x.reshape(rows, d), y.reshape(rows, d), gamma, beta,
                            bool(has_gamma), bool(has_beta), float(epsilon),
                            nc.threads(x.size * 4))
    return y


def _ln_numpy(arrays, start, epsilon, has_gamma, has_beta):
    x = arrays[0]
    axes = tuple(range(start, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(np.square(centered), axis=axes, keepdims=True)
    y = centered * (1.0 / np.sqrt(var + x.dtype.type(epsilon))).astype(x.dtype)
    k = 1
    if has_gamma:
        y *= arrays[k]
        k += 1
    if has_beta:
        y += arrays[k]
    return y.astype(x.dtype, copy=False)


def _composite_grad(inputs, grads, has_gamma, has_beta, definition):
    """The gradient of a fused norm op: that of its definition ``definition(x, gamma,
    beta)``, built from primitives (so it is differentiable again)."""
    from ..autodiff import grad as _grad

    x = inputs[0]
    gamma = inputs[1] if has_gamma else None
    beta = inputs[1 + int(has_gamma)] if has_beta else None
    return _grad([definition(x, gamma, beta)], list(inputs), [grads[0]])


def _ln_grad(inputs, outputs, grads, start, epsilon, has_gamma, has_beta):
    return _composite_grad(inputs, grads, has_gamma, has_beta,
                           lambda x, g, b: _layer_norm_composite(x, start, epsilon, g, b))


register(OpDef("layer_norm", _ln_infer, _ln_compute, _ln_grad))


def layer_norm(x, axis=[-1], gamma=None, beta=None, epsilon=1e-5):  # noqa: B006
    """Layer normalization over the trailing ``axis`` dims (ONNX LayerNormalization,
    torch ``layer_norm``).

    One fused op (numpy in the input's dtype); its gradient is that of the composite
    definition.

    Parameters
    ----------
    x : Var
    axis : int or sequence of int
        The normalized axes; they must be the last ones (``-1``: the last axis; an int
        ``k`` means ONNX's ``axis``: axes ``k ..``).
    gamma, beta : Var or array_like, optional
        Shaped like the normalized dims (or with as many elements).
    epsilon : float
    """
    x = _float_var(x, "layer_norm")
    nd = len(x.shape)
    if isinstance(axis, (int, np.integer)):
        if not -nd <= int(axis) < nd:
            raise OpError(f"layer_norm: axis {axis} out of range for {x.shape}")
        start = int(axis) % nd
    else:
        axes = sorted(normalize_axes(axis, nd, "layer_norm"))
        if not axes or axes != list(range(nd - len(axes), nd)):
            raise OpError(f"layer_norm: axes {list(axis)} must be the trailing axes of "
                          f"{x.shape}")
        start = axes[0]
    tail = list(x.shape[start:])
    params = []
    for p, name in ((gamma, "gamma"), (beta, "beta")):
        if p is None:
            continue
        p = p if isinstance(p, Var) else to_var(np.asarray(p, dtype=x.dtype))
        if int(np.prod(p.shape or [1])) != int(np.prod(tail)):
            raise OpError(f"layer_norm: {name} shape {p.shape} does not match the "
                          f"normalized shape {tail}")
        params.append(reshape(p, tail))
    return apply("layer_norm", [x] + params, start=start, epsilon=float(epsilon),
                 has_gamma=gamma is not None, has_beta=beta is not None)[0]


def _group_norm_composite(x, groups, epsilon, gamma, beta):
    """Group norm from primitives (the fused op's definition and gradient)."""
    shape = list(x.shape)
    grouped = reshape(x, [shape[0], groups, -1])
    y = reshape(_normalized(grouped, [2], epsilon), shape)
    per_channel = [1, shape[1]] + [1] * (len(shape) - 2)
    if gamma is not None:
        y = multiply(y, reshape(gamma, per_channel))
    if beta is not None:
        y = add(y, reshape(beta, per_channel))
    return y


def _gn_infer(metas, groups, epsilon, has_gamma, has_beta):
    x = metas[0]
    if x.dtype.kind != "f":
        raise OpError(f"needs a floating point input, got {x.dtype}")
    if len(x.shape) < 2 or groups < 1 or x.shape[1] % groups != 0:
        raise OpError(f"{x.shape[1] if len(x.shape) > 1 else '?'} channels of "
                      f"{list(x.shape)} do not split into {groups} groups")
    if len(metas) != 1 + int(has_gamma) + int(has_beta):
        raise OpError("input count does not match has_gamma/has_beta")
    for m in metas[1:]:
        if tuple(m.shape) != (x.shape[1],) or m.dtype != x.dtype:
            raise OpError(f"gamma/beta must be ({x.shape[1]},) {x.dtype}, got "
                          f"{list(m.shape)} {m.dtype}")
    return [(x.shape, x.dtype)]


def _gn_compute(arrays, groups, epsilon, has_gamma, has_beta):
    x = np.asarray(arrays[0], order="C")
    n, c = x.shape[:2]
    params = list(arrays[1:])
    gamma = params.pop(0) if has_gamma else None
    beta = params.pop(0) if has_beta else None
    if x.dtype not in (np.float32, np.float64):
        grouped = x.reshape(n, groups, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        centered = grouped - mean
        var = np.mean(np.square(centered), axis=2, keepdims=True)
        y = (centered / np.sqrt(var + x.dtype.type(epsilon))).reshape(x.shape)
        per_channel = (1, c) + (1,) * (x.ndim - 2)
        if gamma is not None:
            y = y * gamma.reshape(per_channel)
        if beta is not None:
            y = y + beta.reshape(per_channel)
        return y.astype(x.dtype, copy=False)
    empty = np.empty(0, x.dtype)
    gamma = empty if gamma is None else np.ascontiguousarray(gamma, dtype=x.dtype)
    beta = empty if beta is None else np.ascontiguousarray(beta, dtype=x.dtype)
    y = np.empty(x.shape, x.dtype)
    view = (n * groups, c // groups, x.size // (n * c) if n * c else 0)
    _norm_k.group_norm_rows(x.reshape(view), y.reshape(view), gamma, beta, bool(has_gamma),
                            bool(has_beta), float(epsilon), int(groups),
                            nc.threads(x.size * 4))
    return y


def _gn_grad(inputs, outputs, grads, groups, epsilon, has_gamma, has_beta):
    return _composite_grad(inputs, grads, has_gamma, has_beta,
                           lambda x, g, b: _group_norm_composite(x, groups, epsilon, g, b))


register(OpDef("group_norm", _gn_infer, _gn_compute, _gn_grad))


def _group_norm(x, groups, gamma, beta, epsilon, what):
    params = []
    for p, name in ((gamma, "gamma"), (beta, "beta")):
        if p is not None:
            params.append(reshape(_param(p, x, what, name), [x.shape[1]]))
    return apply("group_norm", [x] + params, groups=int(groups), epsilon=float(epsilon),
                 has_gamma=gamma is not None, has_beta=beta is not None)[0]


def instance_norm(x, gamma=None, beta=None, epsilon=1e-5):
    """Instance normalization: each ``(n, c)`` plane over its spatial axes, then a
    per-channel affine (ONNX InstanceNormalization, torch ``instance_norm``).

    The ``group_norm`` op with one channel per group (one fused op with a compiled
    kernel for float32/float64; its gradient is that of the composite definition).
    """
    x, nhwc = nc.as_nchw(_float_var(x, "instance_norm"))
    if len(x.shape) < 3:
        raise OpError(f"instance_norm: needs (N, C, spatial...), got {x.shape}")
    return nc.restore(_group_norm(x, x.shape[1], gamma, beta, epsilon, "instance_norm"),
                      nhwc)


def group_norm(x, groups, gamma=None, beta=None, epsilon=1e-5):
    """Group normalization: channels split in ``groups``, each normalized over its
    channels and spatial axes, then a per-channel affine (torch ``group_norm``).

    One fused op (``group_norm``: attributes ``groups``, ``epsilon``, ``has_gamma``,
    ``has_beta``; gamma/beta inputs of shape ``(C,)``) with a compiled kernel for
    float32/float64; its gradient is that of the composite definition.
    """
    x, nhwc = nc.as_nchw(_float_var(x, "group_norm"))
    shape = list(x.shape)
    groups = int(groups)
    if len(shape) < 2 or groups < 1 or shape[1] % groups != 0:
        raise OpError(f"group_norm: {shape[1] if len(shape) > 1 else '?'} channels do not "
                      f"split into {groups} groups")
    return nc.restore(_group_norm(x, groups, gamma, beta, epsilon, "group_norm"), nhwc)


def normalize(x, acrossSpatial, channelShared, eps, scale):
    """L2 normalization of an NCHW input (MNN's ``normalize``, Caffe's Normalize).

    ``y = x / sqrt(sum(x^2) + eps) * scale`` where the sum runs over channels at each
    pixel (``acrossSpatial=0``) or over channels and pixels (``acrossSpatial=1``);
    ``scale`` has one value (``channelShared=1``) or one per channel.
    """
    x, nhwc = nc.as_nchw(_float_var(x, "normalize"))
    if len(x.shape) < 2:
        raise OpError(f"normalize: needs (N, C, ...), got {x.shape}")
    axes = list(range(1, len(x.shape))) if acrossSpatial else [1]
    norm = rsqrt(add(reduce_sum(square(x), axes, keepdims=True), float(eps)))
    s = np.asarray(scale, dtype=x.dtype).reshape(-1) if not isinstance(scale, Var) else scale
    if channelShared:
        if isinstance(s, Var) or s.size != 1:
            s = reshape(to_var(s), [1] * len(x.shape))
        else:
            s = float(s[0])
    else:
        s = _param(s, x, "normalize", "scale")
    return nc.restore(multiply(multiply(x, norm), s), nhwc)




def lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """Local response normalization across channels (ONNX ``LRN``, torch
    ``local_response_norm``).

    ``y = x / (bias + alpha / size * sum(x^2 over channels c - (size-1)//2 ..
    c + size//2)) ^ beta`` (ONNX's window; torch centres even sizes one channel lower);
    the window is cut at the channel edges.

    Parameters
    ----------
    x : Var
        ``(N, C, ...)`` float.
    size : int
        Window length in channels.
    alpha, beta, bias : float
    """
    from .nn_pool import avg_pool

    x, nhwc = nc.as_nchw(_float_var(x, "lrn"))
    shape = list(x.shape)
    size = int(size)
    if len(shape) < 3 or size < 1:
        raise OpError(f"lrn: needs (N, C, spatial...) and size >= 1, got {shape}, {size}")
    # The channel window sum is an average pool over a (N, 1, C, pixels) view, times size.
    flat = reshape(square(x), [shape[0], 1, shape[1], -1])
    before, after = (size - 1) // 2, size // 2
    window = avg_pool(flat, (1, size), (1, 1), pads=(before, 0, after, 0),
                      count_include_pad=True)
    denom = add(multiply(reshape(window, shape), float(alpha)), float(bias))
    from .elementwise import pow as _pow

    return nc.restore(multiply(x, _pow(denom, -float(beta))), nhwc)
