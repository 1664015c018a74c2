"""Dense-layer fusion in compiled training plans (mnn/optim/step_fusion.py) against torch
and numpy.

A compiled step runs ``relu(matmul(x, w) + b)`` as one plan step and drops products by
constant ones. These tests train
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


def _ops_and_compare_mse(build, torch_build, steps=3):
    """Train a one-layer net on an MSE-like loss ``build`` (mnn) / ``torch_build``
    (torch) from identical weights; returns the plan's op names."""
    layer = nn.linear(6, 4)
    w0, b0 = (p.read().copy() for p in layer.parameters)
    tw = torch.from_numpy(w0.copy()).requires_grad_()
    tb = torch.from_numpy(b0.ravel().copy()).requires_grad_()
    opt = optim.SGD(layer, 0.1, 0.9)
    topt = torch.optim.SGD([tw, tb], lr=0.1, momentum=0.9)
    for _ in range(steps):
        x = RNG.standard_normal((5, 6)).astype(np.float32)
        assert opt.step(build(layer(F.const(x))))
        topt.zero_grad()
        torch_build(torch.from_numpy(x) @ tw.T + tb).backward()
        topt.step()
        # float32 rounding scales with the largest value the step handles: these losses
        # grow the weights to tens, so a weight near zero carries an error of ~1e-6 of
        # that scale (the initial weights are random: a fixed 1e-6 failed now and then)
        scale = max(1.0, float(np.abs(tw.detach().numpy()).max()))
        np.testing.assert_allclose(layer.weight.read(), tw.detach().numpy(), rtol=1e-5,
                                   atol=1e-6 * scale)
        np.testing.assert_allclose(layer.bias.read().ravel(), tb.detach().numpy(),
                                   rtol=1e-5, atol=1e-6 * scale)
    return _plan_ops(opt)


def test_the_seed_product_of_the_cross_entropy_is_dropped():
    # What stays: the softmax gradient's one product, exp(log_softmax) * row sums.
    ops = _train_and_compare(_mlp, _torch_mlp)
    assert ops.count("multiply") == 1
    assert ops.index("multiply") > ops.index("exp")


@pytest.mark.parametrize("factor,dropped", [
    (np.ones((1, 4), np.float32), True),        # ones that broadcast into the operand
    (np.ones((1, 1), np.float32), True),
    (np.ones((2, 1, 4), np.float32), False),    # ones that widen the shape
    (np.full((1, 4), 2.0, np.float32), False),  # not ones
    (np.ones((1, 4), np.float64), False),       # ones that widen the dtype
    # A constant of more than 16 elements is data fed to the plan each step (its values
    # may change), never folded: the product stays.
    (np.ones((5, 4), np.float32), False),
])
def test_products_by_constant_ones(factor, dropped):
    # The square's gradient is 2*y*g; the factor's product sits between the loss and y.
    def build(y):
        return F.reduce_sum(F.square(y * F.const(factor)))

    def torch_build(y):
        return ((y * torch.from_numpy(factor)) ** 2).sum()

    ops = _ops_and_compare_mse(build, torch_build)
    forward_products = ops.count("multiply")
    baseline = _ops_and_compare_mse(lambda y: F.reduce_sum(F.square(y)),
                                    lambda y: (y ** 2).sum()).count("multiply")
    # A dropped product leaves the plan with as many multiplies as the loss without it.
    assert (forward_products == baseline) == dropped
