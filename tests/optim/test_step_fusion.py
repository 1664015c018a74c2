"""Dense-layer fusion in compiled training plans (mnn/optim/step_fusion.py) against torch
and numpy.

A compiled step runs ``relu(matmul(x, w) + b)`` as one plan step. These tests train
networks in mnn and torch from identical weights and compare after every step, for the
layer shapes the rewrite must take (relu or not, the bias on either side of the add)
and those it must leave alone (a product or sum read elsewhere, a leaky relu, a bias
that widens the product's shape or dtype), and check the fused op itself against numpy
with NaN and infinities.
"""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import nn, optim
from mnn.express.ops.linalg import MATMUL_BIAS

RNG = np.random.default_rng(5)


def _plan_ops(opt):
    (plan,) = opt._compiled._plans.values()
    return [step.op.name for step in plan.steps]


class _Net(nn.Module):
    """A small MLP whose forward is chosen per test."""

    def __init__(self, forward, dtype=np.float32):
        super().__init__()
        self.fc1 = nn.linear(12, 16)
        self.fc2 = nn.linear(16, 16)
        self.fc3 = nn.linear(16, 5)
        if dtype != np.float32:
            for layer in (self.fc1, self.fc2, self.fc3):
                layer.weight = nn.trainable(layer.weight.read().astype(dtype))
                layer.bias = nn.trainable(layer.bias.read().astype(dtype))
        self._forward = forward

    def forward(self, x):
        return self._forward(self, x)


def _torch_twin(net, dtype):
    layers = []
    for layer in (net.fc1, net.fc2, net.fc3):
        w, b = (p.read() for p in layer.parameters)
        t = torch.nn.Linear(w.shape[1], w.shape[0]).to(torch.float64 if dtype == np.float64
                                                      else torch.float32)
        with torch.no_grad():
            t.weight.copy_(torch.from_numpy(w))
            t.bias.copy_(torch.from_numpy(b.ravel()))
        layers.append(t)
    return layers


def _train_and_compare(forward, torch_forward, dtype=np.float32, steps=4, threads=1,
                       batch=7):
    net = _Net(forward, dtype)
    tl = _torch_twin(net, dtype)
    opt = optim.SGD(net, 0.05, 0.9)
    topt = torch.optim.SGD([p for t in tl for p in t.parameters()], lr=0.05, momentum=0.9)
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        for _ in range(steps):
            x = RNG.standard_normal((batch, 12)).astype(dtype)
            y = RNG.integers(0, 5, batch).astype(np.int32)
            loss = nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y))
            assert opt.step(loss)
            topt.zero_grad()
            torch.nn.functional.cross_entropy(torch_forward(tl, torch.from_numpy(x)),
                                              torch.from_numpy(y).long()).backward()
            topt.step()
            tol = 2e-5 if dtype == np.float32 else 1e-12
            for layer, t in zip((net.fc1, net.fc2, net.fc3), tl):
                np.testing.assert_allclose(layer.weight.read(), t.weight.detach().numpy(),
                                           rtol=tol, atol=tol)
                np.testing.assert_allclose(layer.bias.read().ravel(),
                                           t.bias.detach().numpy(), rtol=tol, atol=tol)
    finally:
        F.set_thread_number(before)
    return _plan_ops(opt)


def _mlp(self, x):
    return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def _torch_mlp(tl, x):
    return tl[2](torch.relu(tl[1](torch.relu(tl[0](x)))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_layers_fuse_and_match_torch(dtype, threads):
    ops = _train_and_compare(_mlp, _torch_mlp, dtype, threads=threads)
    assert ops.count("matmul_bias") == 3
    assert "relu" not in ops and "add" not in ops


def test_bias_on_the_left_of_the_add_fuses():
    def forward(self, x):
        h = F.relu(self.fc1.bias + F.matmul(x, self.fc1.weight, transposeB=True))
        return self.fc3(F.relu(self.fc2(h)))

    ops = _train_and_compare(forward, _torch_mlp)
    assert ops.count("matmul_bias") == 3


def test_leaky_relu_stays_a_step_of_its_own():
    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x), 0.1))))

    def torch_forward(tl, x):
        return tl[2](torch.relu(tl[1](torch.nn.functional.leaky_relu(tl[0](x), 0.1))))

    ops = _train_and_compare(forward, torch_forward)
    assert ops.count("matmul_bias") == 3 and ops.count("relu") == 1


def test_values_read_elsewhere_are_not_fused_away():
    # fc1's pre-activation also feeds the loss, fc2's product is used twice: both must
    # stay plan values.
    def forward(self, x):
        pre = self.fc1(x)
        prod = F.matmul(F.relu(pre), self.fc2.weight, transposeB=True)
        h = F.relu(prod + self.fc2.bias) + prod * 0.5
        return self.fc3(h) + F.reduce_sum(pre, [1], True) * 0.01

    def torch_forward(tl, x):
        pre = tl[0](x)
        prod = torch.relu(pre) @ tl[1].weight.T
        h = torch.relu(prod + tl[1].bias) + prod * 0.5
        return tl[2](h) + pre.sum(1, keepdim=True) * 0.01

    ops = _train_and_compare(forward, torch_forward)
    # fc1: matmul + add fused, its relu not (the sum is read by the loss too); fc2: its
    # product is read twice; fc3 fuses.
    assert ops.count("matmul_bias") == 2
    assert ops.count("relu") == 2


def test_bias_that_widens_the_product_is_not_fused():
    # A [batch, 1, out] product plus a [2, 1, out]-broadcast bias grows the shape: the add
    # cannot run in place on the product.
    def forward(self, x):
        y = F.matmul(x, self.fc1.weight, transposeB=True)
        y = F.unsqueeze(y, [0]) + F.reshape(F.concat([self.fc1.bias, self.fc1.bias * 2.0],
                                                     0), [2, 1, 16])
        return self.fc3(F.relu(self.fc2(F.relu(F.reduce_mean(y, [0])))))

    def torch_forward(tl, x):
        y = (x @ tl[0].weight.T).unsqueeze(0) + torch.stack([tl[0].bias, tl[0].bias * 2.0]
                                                             ).reshape(2, 1, 16)
        return tl[2](torch.relu(tl[1](torch.relu(y.mean(0)))))

    ops = _train_and_compare(forward, torch_forward)
    assert ops.count("matmul_bias") == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_fused_op_matches_numpy_with_nan_and_inf(dtype, transpose_b):
    a = RNG.standard_normal((9, 6)).astype(dtype)
    b = RNG.standard_normal((5, 6) if transpose_b else (6, 5)).astype(dtype)
    a[2, 3] = np.nan
    a[4, 0] = np.inf
    bias = RNG.standard_normal((1, 5)).astype(dtype)
    bias[0, 1] = -np.inf
    product = a @ (b.T if transpose_b else b)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN in both
        _compare_fused(a, b, bias, product, transpose_b)


def _compare_fused(a, b, bias, product, transpose_b):
    for relu in (False, True):
        for bias_first in (False, True):
            got = MATMUL_BIAS.compute([a, b, bias], transpose_a=False,
                                      transpose_b=transpose_b, bias_first=bias_first,
                                      relu=relu)
            want = product + bias
            if relu:
                want = np.maximum(want, 0)
            assert got.dtype == a.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if a.dtype == np.float32
                                       else 1e-12)
            assert np.array_equal(np.isnan(got), np.isnan(want))


def test_fused_op_inference_rejects_a_widening_bias():
    meta = F.const(np.ones((4, 3), np.float32)).expr.metas[0]
    w = F.const(np.ones((3, 5), np.float32)).expr.metas[0]
    wide = F.const(np.ones((2, 4, 5), np.float32)).expr.metas[0]
    with pytest.raises(F.MnnError, match="does not broadcast"):
        MATMUL_BIAS.infer([meta, w, wide], transpose_a=False, transpose_b=False,
                          bias_first=False, relu=True)
    narrow = F.const(np.ones((1, 5), np.float64)).expr.metas[0]
    with pytest.raises(F.MnnError, match="bias dtype"):
        MATMUL_BIAS.infer([meta, w, narrow], transpose_a=False, transpose_b=False,
                          bias_first=False, relu=True)
