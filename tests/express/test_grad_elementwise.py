"""Gradients of the elementwise ops (unary, binary with un-broadcasting, cast) against
finite differences and torch."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from test_grad_checker import check

RNG = np.random.default_rng(5)


def _in(low, high, shape=(2, 3)):
    return RNG.uniform(low, high, shape)


UNARY = {
    # name: (input domain, torch function)
    "abs": ((0.2, 2.0), torch.abs),
    "negative": ((-2, 2), torch.neg),
    "square": ((-2, 2), torch.square),
    "sqrt": ((0.2, 3), torch.sqrt),
    "rsqrt": ((0.2, 3), torch.rsqrt),
    "exp": ((-2, 2), torch.exp),
    "log": ((0.2, 3), torch.log),
    "sin": ((-3, 3), torch.sin),
    "sinh": ((-2, 2), torch.sinh),
    "cos": ((-3, 3), torch.cos),
    "cosh": ((-2, 2), torch.cosh),
    "tan": ((-1.2, 1.2), torch.tan),
    "tanh": ((-2, 2), torch.tanh),
    "asin": ((-0.9, 0.9), torch.asin),
    "asinh": ((-2, 2), torch.asinh),
    "acos": ((-0.9, 0.9), torch.acos),
    "acosh": ((1.2, 3), torch.acosh),
    "atan": ((-2, 2), torch.atan),
    "atanh": ((-0.9, 0.9), torch.atanh),
    "reciprocal": ((0.3, 2), torch.reciprocal),
    "log1p": ((-0.8, 2), torch.log1p),
    "gelu": ((-3, 3), torch.nn.functional.gelu),
    "sigmoid": ((-4, 4), torch.sigmoid),
    "erf": ((-2, 2), torch.erf),
    "erfc": ((-2, 2), torch.erfc),
    "erfinv": ((-0.9, 0.9), torch.erfinv),
    "expm1": ((-2, 2), torch.expm1),
}

PIECEWISE_CONSTANT = {"sign": torch.sign, "floor": torch.floor, "ceil": torch.ceil,
                      "round": torch.round}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    (low, high), tfn = UNARY[name]
    x = _in(low, high)
    x[np.abs(x) < 0.1] = 0.5  # away from kinks (abs) and poles
    check(getattr(F, name), [x], tfn)


@pytest.mark.parametrize("name", sorted(PIECEWISE_CONSTANT))
def test_piecewise_constant_unary_has_zero_gradient(name):
    x = np.array([[-1.3, 0.4, 2.2], [0.7, -2.6, 1.1]])  # not at jumps
    check(getattr(F, name), [x], PIECEWISE_CONSTANT[name])


SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((1,), (2, 2)), ((), (3,))]

BINARY = {
    "add": (torch.add, (-2, 2), (-2, 2)),
    "subtract": (torch.sub, (-2, 2), (-2, 2)),
    "multiply": (torch.mul, (-2, 2), (-2, 2)),
    "divide": (torch.div, (-2, 2), (0.5, 2)),
    "pow": (torch.pow, (0.5, 2), (-2, 2)),
    "minimum": (torch.minimum, (-2, 2), (-2, 2)),
    "maximum": (torch.maximum, (-2, 2), (-2, 2)),
    "squared_difference": (lambda a, b: (a - b) ** 2, (-2, 2), (-2, 2)),
    "atan2": (torch.atan2, (-2, 2), (-2, 2)),
    "mod": (torch.remainder, (-5, 5), (0.7, 2)),
    "floormod": (torch.remainder, (-5, 5), (0.7, 2)),
}


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_unbroadcasting(name, shapes):
    tfn, xd, yd = BINARY[name]
    x, y = RNG.uniform(*xd, shapes[0]), RNG.uniform(*yd, shapes[1])
    if name in ("mod", "floormod"):
        # keep x / y away from integers, where the rule has jumps
        frac = np.modf(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape))
                       / np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)))[0]
        if np.any(np.abs(frac) < 0.05) or np.any(np.abs(frac) > 0.95):
            x = x + 0.2 * y.mean()
    check(getattr(F, name), [x, y], tfn)


def test_operators_and_scalars():
    x = RNG.uniform(0.5, 2, (3, 2))
    check(lambda a: (a * 3.0 - 1.0) / (a + 2.0) + a ** 2.0 - 4.0 / a, [x],
          lambda a: (a * 3.0 - 1.0) / (a + 2.0) + a ** 2.0 - 4.0 / a)


def test_cast_passes_gradient_between_float_types():
    x = RNG.standard_normal((2, 2))
    check(lambda a: F.cast(F.cast(a, np.float32) * 2.0, np.float64) * a, [x],
          lambda a: (a.float() * 2.0).double() * a, rtol=1e-6, atol=1e-6, fd=False)


def test_cast_to_int_stops_the_gradient():
    x = F.const(np.array([1.5, 2.5]))
    g = F.grad(F.reduce_sum(F.cast(F.cast(x, np.int32), np.float64) + x), [x])[0]
    np.testing.assert_array_equal(g.read(), [1.0, 1.0])


def test_second_order_gradient():
    x = F.const(np.array([0.3, -1.2, 2.0]))
    (g,) = F.grad(F.reduce_sum(F.sin(x) * x * x), [x])
    (gg,) = F.grad(F.reduce_sum(g), [x])
    tx = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.sin(tx) * tx * tx).sum(), [tx], create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), [tx])
    np.testing.assert_allclose(gg.read(), tgg.numpy(), rtol=1e-12)


def test_non_differentiable_op_on_path_raises():
    x = F.const(np.array([1.0, 2.0]))
    y = F.cast(F.floordiv(x, 2.0), np.float64)
    with pytest.raises(F.OpError, match="floordiv has no gradient rule"):
        F.grad(F.reduce_sum(y), [x])
