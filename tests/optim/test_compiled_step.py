"""Compiled training steps (mnn/optim/compiled_step.py) against torch.

The optimizer compiles a loss graph's gradients once per graph structure and feeds later
graphs of that structure into the plan. These tests train the same small networks in
mnn and torch from identical weights and compare the weights after every step, across
the events that must invalidate or re-feed a plan: a new batch size, parameters written
from outside, small constants whose values change, dropout masks.
"""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import nn, optim
from mnn.optim.compiled_step import StepCache, graph_key

RNG = np.random.default_rng(11)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.conv(1, 4, [3, 3])
        self.fc1 = nn.linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool(F.relu(self.conv1(x)), [2, 2], [2, 2])
        return self.fc1(F.reshape(x, [0, -1]))


def _torch_twin(net):
    t = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                            torch.nn.Flatten(), torch.nn.Linear(36, 10))
    with torch.no_grad():
        t[0].weight.copy_(torch.from_numpy(net.conv1.weight.read()))
        t[0].bias.copy_(torch.from_numpy(net.conv1.bias.read().ravel()))
        t[4].weight.copy_(torch.from_numpy(net.fc1.weight.read()))
        t[4].bias.copy_(torch.from_numpy(net.fc1.bias.read().ravel()))
    return t


def _compare(net, t):
    pairs = [(net.conv1.weight, t[0].weight), (net.conv1.bias, t[0].bias),
             (net.fc1.weight, t[4].weight), (net.fc1.bias, t[4].bias)]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.read().ravel(), theirs.detach().numpy().ravel(),
                                   rtol=1e-4, atol=1e-5)


def _batch(n):
    return (RNG.random((n, 1, 8, 8), dtype=np.float32),
            RNG.integers(0, 10, n).astype(np.int32))


def test_rebuilt_graphs_share_one_plan_and_match_torch():
    net = ConvNet()
    t = _torch_twin(net)
    opt = optim.SGD(net, 0.05, 0.9)
    topt = torch.optim.SGD(t.parameters(), lr=0.05, momentum=0.9)
    # Three batches of 6, then a short one of 4 (a new shape: a second plan), then 6 again.
    for n in [6, 6, 6, 4, 6]:
        x, y = _batch(n)
        loss = nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y))
        assert opt.step(loss)
        topt.zero_grad()
        torch.nn.functional.cross_entropy(t(torch.from_numpy(x)),
                                          torch.from_numpy(y).long()).backward()
        topt.step()
        _compare(net, t)
        # Reading the loss after the step computes it with the new weights.
        np.testing.assert_allclose(
            loss.read(), torch.nn.functional.cross_entropy(
                t(torch.from_numpy(x)), torch.from_numpy(y).long()).item(), rtol=1e-4)
    assert len(opt._compiled._plans) == 2


def test_parameters_written_between_steps_are_used():
    net = ConvNet()
    opt = optim.SGD(net, 0.05, 0.0)
    x, y = _batch(6)
    opt.step(nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y)))
    # Load new weights from outside (the plan must read them, not its first values).
    fresh = ConvNet()
    net.load_parameters([p.read() for p in fresh.parameters])
    t = _torch_twin(net)
    topt = torch.optim.SGD(t.parameters(), lr=0.05)
    opt.step(nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y)))
    topt.zero_grad()
    torch.nn.functional.cross_entropy(t(torch.from_numpy(x)),
                                      torch.from_numpy(y).long()).backward()
    topt.step()
    _compare(net, t)


def test_small_constants_are_keyed_by_value():
    # d/dw sum((w * k)^2) = 2 k^2 w: a scalar k changing every step must not reuse the
    # first step's folded value.
    w0 = RNG.standard_normal(5)
    w = nn.trainable(w0)
    opt = optim.SGD([w], 0.01, 0.0)
    expected = w0.copy()
    for k in [1.0, 2.0, 3.0]:
        opt.step(F.reduce_sum(F.square(w * F.const(np.float64(k)))))
        expected = expected - 0.01 * 2 * k * k * expected
        np.testing.assert_allclose(w.read(), expected, rtol=1e-12)


def test_dropout_masks_are_inputs_not_baked():
    # A dropout mask is a new constant each step; the gradient must use this step's.
    lin = nn.linear(20, 1)
    drop = nn.dropout(0.5)
    opt = optim.SGD(lin, 0.1, 0.0)
    x = RNG.random((3, 20), dtype=np.float32)
    for _ in range(3):
        before = lin.weight.read()
        masked = drop(F.const(x))
        mask = masked.read()  # the inputs after dropout, as the step sees them
        opt.step(F.reduce_sum(lin(masked)))
        np.testing.assert_allclose(lin.weight.read(), before - 0.1 * mask.sum(0, keepdims=True),
                                   rtol=1e-5, atol=1e-6)


def test_graph_key_separates_structure_and_sources():
    a = nn.trainable(np.ones(3, np.float32))

    def key(c, scale):
        loss = F.reduce_sum(a * F.const(c) * scale)
        from mnn.express.graph import topological_order
        return graph_key(topological_order([loss.expr]), {a.expr.id})[0]

    big = np.arange(60, dtype=np.float32).reshape(20, 3)
    assert key(big, 2.0) == key(big + 1, 2.0)      # batch values: fed, not keyed
    assert key(big, 2.0) != key(big, 3.0)          # a scalar: keyed by value
    assert key(big, 2.0) != key(big[:10], 2.0)     # a new shape
    assert isinstance(StepCache(), StepCache)


@pytest.mark.parametrize("opt_name", ["AdamW", "RMSprop"])
def test_other_optimizers_step_through_the_plan_like_torch(opt_name):
    w0 = RNG.standard_normal((4, 3))
    x = RNG.standard_normal((5, 4))
    w = nn.trainable(w0)
    tw = torch.tensor(w0, requires_grad=True)
    if opt_name == "AdamW":  # MNN's ADAM places eps differently from torch's Adam
        opt, topt = optim.AdamW([w], 0.01), torch.optim.AdamW([tw], lr=0.01)
    else:
        opt, topt = optim.RMSprop([w], 0.01), torch.optim.RMSprop([tw], lr=0.01)
    for _ in range(3):
        opt.step(F.reduce_sum(F.tanh(F.matmul(F.const(x), w))))
        topt.zero_grad()
        torch.tanh(torch.from_numpy(x) @ tw).sum().backward()
        topt.step()
    np.testing.assert_allclose(w.read(), tw.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_boolean_mask_constants_with_other_counts_get_their_own_plan():
    # x[mask] with a (large) constant mask: the selected count sets shapes downstream.
    w0 = RNG.standard_normal(40)
    w = nn.trainable(w0)
    opt = optim.SGD([w], 0.1, 0.0)
    expected = w0.copy()
    for count in [10, 25, 10]:
        mask = np.zeros(40, bool)
        mask[RNG.choice(40, count, replace=False)] = True
        opt.step(F.reduce_sum(F.square(w[F.const(mask)])))
        expected = expected - 0.1 * 2 * expected * mask
        np.testing.assert_allclose(w.read(), expected, rtol=1e-12)
    assert len(opt._compiled._plans) == 2  # one per selected count


def test_data_dependent_shapes_are_keyed_once_computed():
    # w[w > 0]: the selected count is known only by computing. Asking the loss's size
    # computes it; the computed shapes are then part of the key, so a step whose count
    # changed (here to zero) gets a plan of its own.
    w0 = np.array([1.0, -2.0, 3.0, -0.5])
    w = nn.trainable(w0)
    opt = optim.SGD([w], 0.6, 0.0)
    for _ in range(3):
        before = w.read()
        opt.step(F.reduce_sum(F.square(w[w > 0])))
        np.testing.assert_allclose(w.read(), before - 0.6 * 2 * before * (before > 0),
                                   rtol=1e-12)
    assert len(opt._compiled._plans) == 2


def test_loss_read_before_the_step_reuses_its_forward_values():
    # The plan takes the forward values the read computed (its conv+relu steps are
    # fused in the plan, unfused in the graph) and still matches torch.
    net = ConvNet()
    t = _torch_twin(net)
    opt = optim.SGD(net, 0.05, 0.9)
    topt = torch.optim.SGD(t.parameters(), lr=0.05, momentum=0.9)
    for _ in range(3):
        x, y = _batch(6)
        loss = nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y))
        value = float(loss)
        opt.step(loss)
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(t(torch.from_numpy(x)),
                                                  torch.from_numpy(y).long())
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(value, tloss.item(), rtol=1e-5)
        _compare(net, t)
    assert len(opt._compiled._plans) == 1
