"""Gradients of reductions, movement ops, matmul and select against finite differences
and torch."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from test_grad_checker import check

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4))

REDUCE = {"reduce_sum": torch.sum, "reduce_mean": torch.mean, "reduce_prod": torch.prod,
          "reduce_max": torch.amax, "reduce_min": torch.amin}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [[1], [0, 2], [-1], []], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reductions(name, axes, keepdims):
    tfn = REDUCE[name]
    dims = tuple(axes) if axes else (0, 1, 2)
    x = X + 2.0 if name == "reduce_prod" else X  # prod: nonzero inputs
    if name == "reduce_prod":
        def torch_fn(t):
            out = t
            for d in sorted(dims, reverse=True):
                out = torch.prod(out, d, keepdim=keepdims)
            return out
    else:
        def torch_fn(t):
            return tfn(t, dim=dims, keepdim=keepdims)
    check(lambda a: getattr(F, name)(a, axes, keepdims), [x], torch_fn)


def test_reduce_max_splits_ties_like_torch_amax():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 2.0]])
    check(lambda a: F.reduce_max(a, [1]), [x], lambda t: torch.amax(t, 1), fd=False)


def test_reshape_transpose_broadcast():
    check(lambda a: F.reshape(a, [4, -1]), [X], lambda t: t.reshape(4, -1))
    check(lambda a: F.transpose(a, [2, 0, 1]), [X], lambda t: t.permute(2, 0, 1))
    check(lambda a: F.broadcast_to(a, [5, 2, 3, 4]), [X], lambda t: t.expand(5, 2, 3, 4))
    y = RNG.standard_normal((3, 1))
    check(lambda a: F.broadcast_to(a, [2, 3, 4]), [y], lambda t: t.expand(2, 3, 4))


def test_squeeze_unsqueeze_expand_dims():
    y = RNG.standard_normal((2, 1, 3, 1))
    check(lambda a: F.squeeze(a, [1]), [y], lambda t: t.squeeze(1))
    check(lambda a: F.squeeze(a), [y], lambda t: t.squeeze())
    check(lambda a: F.unsqueeze(a, [0, 3]), [X], lambda t: t.unsqueeze(0).unsqueeze(3))
    check(lambda a: F.expand_dims(a, -1), [X], lambda t: t.unsqueeze(-1))


def test_concat_split_stack_unstack():
    y = RNG.standard_normal((2, 5, 4))
    check(lambda a, b: F.concat([a, b, a], 1), [X, y], lambda a, b: torch.cat([a, b, a], 1))
    check(lambda a: F.split(a, [1, 3], 2)[1] * F.split(a, [1, 3], 2)[0], [X],
          lambda t: torch.split(t, [1, 3], 2)[1] * torch.split(t, [1, 3], 2)[0])
    # Only one part used: the others get zero gradient.
    check(lambda a: F.split(a, [3], 1)[2], [X], lambda t: torch.chunk(t, 3, 1)[2])
    check(lambda a, b: F.stack([a, b * 2.0], 1), [X, X + 1],
          lambda a, b: torch.stack([a, b * 2.0], 1))
    check(lambda a: F.unstack(a, 1)[0] - F.unstack(a, 1)[2], [X],
          lambda t: torch.unbind(t, 1)[0] - torch.unbind(t, 1)[2])


MATMUL = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
          ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2))]


@pytest.mark.parametrize("shapes", MATMUL, ids=str)
def test_matmul(shapes):
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    check(F.matmul, [a, b], torch.matmul)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transpose_flags(ta, tb):
    a = RNG.standard_normal((2, 4, 3) if ta else (2, 3, 4))
    b = RNG.standard_normal((5, 4) if tb else (4, 5))

    def torch_fn(x, y):
        return torch.matmul(x.transpose(-1, -2) if ta else x, y.transpose(-1, -2) if tb else y)

    check(lambda x, y: F.matmul(x, y, ta, tb), [a, b], torch_fn)


def test_select_with_broadcast():
    cond = RNG.standard_normal((2, 3, 4)) > 0
    y = RNG.standard_normal((3, 1))
    check(lambda a, b: F.select(F.const(cond), a, b), [X, y],
          lambda a, b: torch.where(torch.from_numpy(cond), a, b))


def test_fill_gradient_sums_into_the_value():
    check(lambda v: F.fill([3, 4], v) * F.const(X[0]), [np.array(1.5)],
          lambda v: v.expand(3, 4) * torch.from_numpy(X[0]))


def test_gradient_accumulates_over_reused_inputs_and_ignores_unrelated():
    x, z = F.const(X), F.const(X * 2)
    gx, gz = F.grad(F.reduce_sum(x * x + F.exp(x)), [x, z])
    np.testing.assert_allclose(gx.read(), 2 * X + np.exp(X))
    np.testing.assert_array_equal(gz.read(), np.zeros_like(X))


def test_output_grads_weight_non_scalar_outputs():
    x = F.const(X)
    w = RNG.standard_normal(X.shape)
    (g,) = F.grad([F.sin(x)], [x], [F.const(w)])
    np.testing.assert_allclose(g.read(), np.cos(X) * w)
    with pytest.raises(F.OpError, match="output_grads"):
        F.grad([F.sin(x)], [x])
