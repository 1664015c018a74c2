"""Plan rewrites that cut per-step work in training graphs, checked against torch.

``relu_grad(x, g)`` reads relu's output instead of its input (same sign test for
slopes >= 0), which lets a conv take the relu as its fused clamp.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mnn.expr as F
from mnn.runtime.plan import Plan

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("slope", [0.0, 0.1, -0.5])
def test_relu_grad_through_a_conv_matches_torch(slope):
    x = RNG.standard_normal((2, 3, 7, 7)).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, -0.0, 0.0]
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    gw = RNG.standard_normal((2, 4, 5, 5)).astype(np.float32)
    xv, wv, bv = F.placeholder(list(x.shape)), F.const(w), F.const(b)
    wv.fix_as_trainable()
    y = F.relu(F.conv2d(xv, wv, bv), slope)
    loss = F.reduce_sum(y * F.const(gw))
    grads = F.grad(loss, [xv, wv])
    plan = Plan([xv], grads)
    names = [s.op.name for s in plan.steps]
    if slope >= 0:
        # The relu became the conv's clamp (slope 0) or relu_grad reads its output.
        relu_inputs = {s.inputs[0] for s in plan.steps if s.op.name == "relu"}
        grad_steps = [s for s in plan.steps if s.op.name == "relu_grad"]
        assert grad_steps and all(s.inputs[0] not in relu_inputs for s in grad_steps)
        if slope == 0.0:
            assert "relu" not in names
    got_x, got_w = plan.run([x])
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = TF.leaky_relu(TF.conv2d(tx, tw, torch.from_numpy(b)), slope)
    (ty * torch.from_numpy(gw)).sum().backward()
    # The NaN in x spreads to the whole input gradient window in both.
    np.testing.assert_allclose(got_x, tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_w, tw.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_relu_grad_before_its_relu_is_left_alone():
    # loss = sum(relu(x)): the incoming gradient is a constant, so relu_grad does not
    # wait for relu; the relu is not even needed for the gradient.
    x = np.array([[-1.0, 0.0, 2.0, np.nan]], np.float32)
    xv = F.placeholder([1, 4])
    (g,) = F.grad(F.reduce_sum(F.relu(xv)), [xv])
    out = Plan([xv], [g, F.relu(xv)]).run([x])
    np.testing.assert_array_equal(out[0], [[0.0, 0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(out[1], np.maximum(x, 0))
