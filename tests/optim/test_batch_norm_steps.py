"""Batch norm running statistics over several optimizer steps, against torch's BatchNorm2d.

The loss graph is either rebuilt every step or built once over a placeholder and fed
batch after batch (each step must update the running statistics with its own batch);
reading the loss before stepping takes the lazy path instead of the compiled one.
"""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import nn, optim

C = 3
SHAPE = (4, C, 5, 5)
MOMENTUM = 0.8  # MNN's: the weight of the old running value (torch's is 1 - this)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.batch_norm(C, momentum=MOMENTUM, epsilon=1e-3)

    def forward(self, x):
        return self.bn(x)


def _batches(n):
    rng = np.random.default_rng(7)
    return [(rng.standard_normal(SHAPE) * (i + 1) + i).astype(np.float32) for i in range(n)]


def _weights():
    return np.linspace(-1, 1, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)


def _torch_run(batches):
    tb = torch.nn.BatchNorm2d(C, eps=1e-3, momentum=1 - MOMENTUM)
    with torch.no_grad():
        tb.running_mean.zero_()
        tb.running_var.zero_()  # MNN starts the running variance at zero
    opt = torch.optim.SGD(tb.parameters(), lr=0.1, momentum=0.9)
    w = torch.from_numpy(_weights())
    for x in batches:
        opt.zero_grad()
        (tb(torch.from_numpy(x)) ** 2 * w).sum().backward()
        opt.step()
    return tb


def _check(net, tb, batches):
    n = batches[0].size // C
    bn = net.bn
    assert bn.running_mean.op_type == "const"
    np.testing.assert_allclose(bn.running_mean.read().ravel(), tb.running_mean.numpy(),
                               rtol=1e-5, atol=1e-5)
    # torch keeps the unbiased variance, MNN the biased one (the same n every batch).
    np.testing.assert_allclose(bn.running_variance.read().ravel() * n / (n - 1),
                               tb.running_var.numpy(), rtol=1e-4)
    np.testing.assert_allclose(bn.scale.read().ravel(), tb.weight.detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.bias.read().ravel(), tb.bias.detach().numpy(),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("read_first", [False, True])
def test_rebuilt_graph_updates_running_stats_every_step(read_first):
    batches = _batches(4)
    net = Net()
    opt = optim.SGD(net, 0.1, 0.9)
    w = F.const(_weights())
    for x in batches:
        loss = F.reduce_sum(F.square(net(F.const(x))) * w)
        if read_first:
            loss.read()
        opt.step(loss)
    _check(net, _torch_run(batches), batches)


@pytest.mark.parametrize("read_first", [False, True])
def test_reused_graph_updates_running_stats_every_step(read_first):
    batches = _batches(4)
    net = Net()
    opt = optim.SGD(net, 0.1, 0.9)
    x = F.placeholder(SHAPE)
    loss = F.reduce_sum(F.square(net(x)) * F.const(_weights()))
    for batch in batches:
        x.write(batch)
        if read_first:
            loss.read()
        opt.step(loss)
    _check(net, _torch_run(batches), batches)


def test_two_graphs_stepped_in_turn_each_update():
    # Two graphs built once (two batch sizes) and stepped alternately: each step
    # updates the statistics with its own batch.
    batches = _batches(4)
    net = Net()
    opt = optim.SGD(net, 0.1, 0.9)
    w = F.const(_weights())
    xa, xb = F.placeholder(SHAPE), F.placeholder(SHAPE)
    la = F.reduce_sum(F.square(net(xa)) * w)
    lb = F.reduce_sum(F.square(net(xb)) * w)
    for i, batch in enumerate(batches):
        x, loss = (xa, la) if i % 2 == 0 else (xb, lb)
        x.write(batch)
        opt.step(loss)
    _check(net, _torch_run(batches), batches)


def test_running_stats_read_after_forward_and_inference_after_training():
    batches = _batches(3)
    net = Net()
    opt = optim.SGD(net, 0.1, 0.9)
    w = F.const(_weights())
    for x in batches:
        opt.step(F.reduce_sum(F.square(net(F.const(x))) * w))
    tb = _torch_run(batches)
    # A training forward without a step: the statistics read as updated (torch too).
    extra = _batches(4)[3]
    net(F.const(extra))
    tb(torch.from_numpy(extra))
    np.testing.assert_allclose(net.bn.running_mean.read().ravel(), tb.running_mean.numpy(),
                               rtol=1e-5, atol=1e-5)
    net.train(False)
    tb.eval()
    with torch.no_grad():
        tb.running_var.copy_(torch.from_numpy(net.bn.running_variance.read().ravel()))
    np.testing.assert_allclose(net(F.const(extra)).read(),
                               tb(torch.from_numpy(extra)).detach().numpy(),
                               rtol=1e-4, atol=1e-4)


def test_statistics_loaded_during_a_pending_update_are_the_next_start():
    # forward (pending update), then load_parameters: the next forward starts from the
    # loaded statistics, not from the ones stored before.
    net = Net()
    x = _batches(1)[0]
    net(F.const(x))
    loaded = [p.read() for p in net.parameters]
    loaded[2] = np.full_like(loaded[2], 5.0)  # running mean
    loaded[3] = np.full_like(loaded[3], 2.0)  # running variance
    net.load_parameters(loaded)
    opt = optim.SGD(net, 0.1, 0.9)
    opt.step(F.reduce_sum(F.square(net(F.const(x))) * F.const(_weights())))
    n_axes = (0, 2, 3)
    np.testing.assert_allclose(net.bn.running_mean.read().ravel(),
                               MOMENTUM * 5.0 + (1 - MOMENTUM) * x.mean(n_axes), rtol=1e-5)
    np.testing.assert_allclose(net.bn.running_variance.read().ravel(),
                               MOMENTUM * 2.0 + (1 - MOMENTUM) * x.var(n_axes), rtol=1e-4)
