"""Activations, softmax and log_softmax (values and gradients) against torch (CPU)."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(7)

# (name, ours(x), torch(t))
UNARY = [
    ("relu", lambda x: F.relu(x), TF.relu),
    ("leaky", lambda x: F.relu(x, 0.1), lambda t: TF.leaky_relu(t, 0.1)),
    ("relu6", lambda x: F.relu6(x), TF.relu6),
    ("clip", lambda x: F.relu6(x, -1.0, 2.0), lambda t: torch.clamp(t, -1.0, 2.0)),
    ("elu", lambda x: F.elu(x, 0.7), lambda t: TF.elu(t, 0.7)),
    ("selu", lambda x: F.selu(x), TF.selu),
    ("gelu_tanh", lambda x: F.gelu_tanh(x), lambda t: TF.gelu(t, approximate="tanh")),
    ("silu", lambda x: F.silu(x), TF.silu),
    ("hardswish", lambda x: F.hardswish(x), TF.hardswish),
    ("hardsigmoid6", lambda x: F.hardsigmoid(x, 1.0 / 6.0, 0.5), TF.hardsigmoid),
    # (torch's float64 hardsigmoid backward rounds 1/6 to float32: compare with clamp too)
    ("hardsigmoid", lambda x: F.hardsigmoid(x), lambda t: torch.clamp(t * 0.2 + 0.5, 0, 1)),
    ("softplus", lambda x: F.softplus(x), TF.softplus),
    ("softsign", lambda x: F.softsign(x), TF.softsign),
    ("softmax0", lambda x: F.softmax(x, 0), lambda t: torch.softmax(t, 0)),
    ("softmax", lambda x: F.softmax(x), lambda t: torch.softmax(t, -1)),
    ("softmax1", lambda x: F.softmax(x, 1), lambda t: torch.softmax(t, 1)),
    ("log_softmax", lambda x: F.log_softmax(x), lambda t: torch.log_softmax(t, -1)),
    ("log_softmax1", lambda x: F.log_softmax(x, -2), lambda t: torch.log_softmax(t, -2)),
]


def _input(dtype):
    # Values on both sides of every kink (0, +-3, 6), away from the kinks themselves.
    x = RNG.uniform(-8, 8, size=(3, 5, 7)).astype(dtype)
    x[np.abs(x) < 1e-2] += 0.05
    for kink in (-3.0, 3.0, 6.0, -1.0, 2.0):
        x[np.abs(x - kink) < 1e-2] += 0.05
    return x


@pytest.mark.parametrize("name,ours,theirs", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_value_and_grad_match_torch(name, ours, theirs, dtype):
    x = _input(dtype)
    xv = F.const(x)
    y = ours(xv)
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    if name == "hardsigmoid6":
        tol = dict(rtol=1e-6, atol=1e-7)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), **tol)
    dy = RNG.standard_normal(x.shape).astype(dtype)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), **tol)


@pytest.mark.parametrize("slopes", [[0.25], [0.1, -0.2, 0.3]])
def test_prelu_and_grads_match_torch(slopes):
    x = np.concatenate([_input(np.float64), _input(np.float64)]).reshape(2, 3, 5, 7)
    s = np.array(slopes)
    xv, sv = F.const(x), F.const(s)
    y = F.prelu(xv, sv)
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
    ty = TF.prelu(tx, ts)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12)
    dy = RNG.standard_normal(x.shape)
    ty.backward(torch.tensor(dy))
    gx, gs = F.grad([y], [xv, sv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gs.read(), ts.grad.numpy(), rtol=1e-10)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    ref = torch.softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(F.softmax(F.const(x)).read(), ref, rtol=1e-6)
    ref = torch.log_softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(F.log_softmax(F.const(x)).read(), ref, rtol=1e-6)


def test_softplus_does_not_overflow():
    x = np.array([-100.0, 0.0, 100.0, 800.0], np.float32)
    ref = TF.softplus(torch.tensor(x)).numpy()
    np.testing.assert_allclose(F.softplus(F.const(x)).read(), ref, rtol=1e-6)


def test_softmax_second_order_by_finite_differences(gradcheck):
    def fn(xv):
        y = F.log_softmax(F.softmax(xv, 1) * 3.0, 1)
        (gx,) = F.grad([F.reduce_sum(y * y)], [xv])
        return gx

    gradcheck(fn, [RNG.standard_normal((2, 4))], atol=1e-6)


def test_relu_mnn_example():
    np.testing.assert_array_equal(F.relu([-1.0, 0.0, 2.0]).read(), [0.0, 0.0, 2.0])
    np.testing.assert_array_equal(F.relu6([-1.0, 7.0, 2.0]).read(), [0.0, 6.0, 2.0])


def test_activation_errors():
    with pytest.raises(F.OpError, match="axis"):
        F.softmax(F.const(np.ones((2, 3), np.float32)), 2)
    with pytest.raises(F.OpError, match="floating"):
        F.silu(F.const(np.ones(3, np.int32)))
    with pytest.raises(F.OpError, match="per channel"):
        F.prelu(F.const(np.ones((1, 3, 2, 2), np.float32)), [0.1, 0.2])
