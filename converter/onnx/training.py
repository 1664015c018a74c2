"""ONNX training-update ops (domain ``ai.onnx.preview.training``): Adagrad, Adam,
Momentum. Each updates one or more tensors ``X`` from gradients ``G`` and optimizer
state, following the formulas of the ONNX spec, built from elementwise express ops.
Inputs: the learning rate ``R`` and step count ``T`` (scalars), then the tensors grouped
by kind (all ``X``, then all ``G``, then each state); outputs likewise."""
import numpy as np

import mnn.express as F

from .registry import onnx_op

DOMAIN = "ai.onnx.preview.training"


def _c(value, like):
    return F.const(np.asarray(value, dtype=like.dtype))


def _groups(ctx, tensors, kinds):
    if len(tensors) % kinds or not tensors:
        raise ctx.error(f"expects R, T and {kinds} tensor groups of equal size, got "
                        f"{len(tensors)} tensors")
    n = len(tensors) // kinds
    return [tensors[k * n:(k + 1) * n] for k in range(kinds)]


def _started(t, like):
    """1 (as ``like``'s dtype) once ``T > 0``, else 0."""
    return F.cast(F.greater(t, F.zeros_like(t)), like.dtype)


@onnx_op("Adagrad", since=1, domain=DOMAIN)
def adagrad(ctx, R, T, *tensors, decay_factor=0.0, epsilon=0.0, norm_coefficient=0.0):
    xs, gs, hs = _groups(ctx, tensors, 3)
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        r = F.cast(R, x.dtype)
        rate = F.divide(r, F.add(_c(1, x), F.multiply(F.cast(T, x.dtype),
                                                      _c(decay_factor, x))))
        gr = F.add(F.multiply(_c(norm_coefficient, x), x), g)
        h2 = F.add(h, F.multiply(gr, gr))
        step = F.divide(F.multiply(rate, gr), F.add(F.sqrt(h2), _c(epsilon, x)))
        new_x.append(F.subtract(x, step))
        new_h.append(h2)
    return new_x + new_h


@onnx_op("Adam", since=1, domain=DOMAIN)
def adam(ctx, R, T, *tensors, alpha=0.9, beta=0.999, epsilon=0.0, norm_coefficient=0.0,
         norm_coefficient_post=0.0):
    xs, gs, vs, hs = _groups(ctx, tensors, 4)
    # Bias correction sqrt(1 - beta^T) / (1 - alpha^T) once T > 0 (in float64, then x's type).
    t = F.cast(T, np.float64)
    corr = F.divide(F.sqrt(F.subtract(F.const(1.0), F.pow(F.const(beta), t))),
                    F.subtract(F.const(1.0), F.pow(F.const(alpha), t)))
    started = F.greater(T, F.zeros_like(T))
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        r = F.cast(R, np.float64)
        rate = F.cast(F.select(started, F.multiply(r, corr), r), x.dtype)
        gr = F.add(F.multiply(_c(norm_coefficient, x), x), g)
        v2 = F.add(F.multiply(_c(alpha, x), v), F.multiply(_c(1 - alpha, x), gr))
        h2 = F.add(F.multiply(_c(beta, x), h), F.multiply(_c(1 - beta, x), F.multiply(gr, gr)))
        x2 = F.subtract(x, F.multiply(rate, F.divide(v2, F.add(F.sqrt(h2), _c(epsilon, x)))))
        new_x.append(F.multiply(_c(1 - norm_coefficient_post, x), x2))
        new_v.append(v2)
        new_h.append(h2)
    return new_x + new_v + new_h


@onnx_op("Momentum", since=1, domain=DOMAIN)
def momentum(ctx, R, T, *tensors, alpha=None, beta=None, mode=None, norm_coefficient=None):
    for name, value in (("alpha", alpha), ("beta", beta), ("mode", mode),
                        ("norm_coefficient", norm_coefficient)):
        if value is None:
            raise ctx.error(f"attribute {name!r} is required")
    if mode not in ("standard", "nesterov"):
        raise ctx.error(f"attribute 'mode' must be 'standard' or 'nesterov', got {mode!r}")
    xs, gs, vs = _groups(ctx, tensors, 3)
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        r = F.cast(R, x.dtype)
        on = _started(T, x)
        # The gradient's coefficient is 1 at the first step (T == 0), beta afterwards.
        b = F.add(F.multiply(on, _c(beta, x)), F.subtract(_c(1, x), on))
        gr = F.add(F.multiply(_c(norm_coefficient, x), x), g)
        v2 = F.add(F.multiply(_c(alpha, x), v), F.multiply(b, gr))
        if mode == "standard":
            x2 = F.subtract(x, F.multiply(r, v2))
        else:
            x2 = F.subtract(x, F.multiply(r, F.add(gr, F.multiply(_c(alpha, x), v2))))
        new_x.append(x2)
        new_v.append(v2)
    return new_x + new_v
