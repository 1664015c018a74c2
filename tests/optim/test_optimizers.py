"""Optimizers: steps from identical weights against torch.optim (and MNN's formulas)."""
import numpy as np
import pytest
import torch

import mnn
import mnn.expr as F
from mnn import nn, optim

RNG = np.random.default_rng(2)
X = RNG.standard_normal((8, 5))
Y = RNG.standard_normal((8, 3))


class Net(nn.Module):
    def __init__(self, w, b):
        super().__init__()
        self.w = nn.trainable(w)
        self.b = nn.trainable(b)

    def forward(self, x):
        return F.tanh(F.matmul(x, self.w) + self.b)


def _pair():
    w = RNG.standard_normal((5, 3))
    b = RNG.standard_normal((3,))
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    return Net(w, b), [tw, tb]


def _run(net, opt, tparams, topt, steps=4, lrs=None):
    for i in range(steps):
        if lrs is not None:
            opt.learning_rate = lrs[i]
            for group in topt.param_groups:
                group["lr"] = lrs[i]
        loss = F.reduce_mean(F.square(net(F.const(X)) - F.const(Y)))
        value = loss.read()
        assert opt.step(loss) is True
        topt.zero_grad()
        tloss = ((torch.tanh(torch.from_numpy(X) @ tparams[0] + tparams[1])
                  - torch.from_numpy(Y)) ** 2).mean()
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(value, tloss.item(), rtol=1e-10)
    for p, t in zip(net.parameters, tparams):
        np.testing.assert_allclose(p.read(), t.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_sgd_momentum_weight_decay_matches_torch():
    net, tp = _pair()
    _run(net, optim.SGD(net, 0.1, 0.9, 0.01),
         tp, torch.optim.SGD(tp, lr=0.1, momentum=0.9, weight_decay=0.01))


def test_sgd_without_momentum_matches_torch():
    net, tp = _pair()
    _run(net, optim.SGD(net, 0.3, 0.0), tp, torch.optim.SGD(tp, lr=0.3))


def test_adam_is_torch_adam_with_eps_scaled_by_bias_correction():
    # MNN's update: lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps); that is torch's
    # Adam with eps' = eps / sqrt(1 - b2^t). One step of each from the same weights:
    net, tp = _pair()
    eps = 1e-3
    opt = optim.ADAM(net, 0.05, 0.8, 0.95, weight_decay=0.02, eps=eps)
    topt = torch.optim.Adam(tp, lr=0.05, betas=(0.8, 0.95), weight_decay=0.02,
                            eps=eps / np.sqrt(1 - 0.95))
    _run(net, opt, tp, topt, steps=1)


def test_adam_tracks_torch_over_steps_with_small_eps():
    net, tp = _pair()
    opt = optim.ADAM(net, 0.01)
    assert (opt.momentum, opt.momentum2, opt.eps) == (0.9, 0.999, 1e-8)
    topt = torch.optim.Adam(tp, lr=0.01, eps=1e-8)
    for i in range(5):
        loss = F.reduce_mean(F.square(net(F.const(X)) - F.const(Y)))
        opt.step(loss)
        topt.zero_grad()
        ((torch.tanh(torch.from_numpy(X) @ tp[0] + tp[1]) - torch.from_numpy(Y)) ** 2
         ).mean().backward()
        topt.step()
    for p, t in zip(net.parameters, tp):
        # eps enters differently (see above): agreement to the size of eps's effect.
        np.testing.assert_allclose(p.read(), t.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_adamw_matches_torch():
    net, tp = _pair()
    _run(net, optim.AdamW(net, 0.02, weight_decay=0.1),
         tp, torch.optim.AdamW(tp, lr=0.02, weight_decay=0.1))


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop_matches_torch(momentum):
    net, tp = _pair()
    _run(net, optim.RMSprop(net, 0.01, alpha=0.9, momentum=momentum, weight_decay=0.01),
         tp, torch.optim.RMSprop(tp, lr=0.01, alpha=0.9, momentum=momentum,
                                 weight_decay=0.01))


def test_learning_rate_changes_follow_torch_with_constant_history_rule():
    # With MNN's rule the rate multiplies the gradient before it enters the history, so
    # after a change they differ from torch; without momentum both agree.
    net, tp = _pair()
    _run(net, optim.SGD(net, 0.1, 0.0), tp, torch.optim.SGD(tp, lr=0.1),
         lrs=[0.1, 0.05, 0.2, 0.01])


@pytest.mark.parametrize("method", ["L1", "L1L2"])
def test_l1_regularization_formulas(method):
    w = RNG.standard_normal((5, 3))
    b = RNG.standard_normal((3,))
    net = Net(w, b)
    opt = optim.SGD(net, 0.1, 0.0, 0.05, getattr(optim, method))
    loss = F.reduce_mean(F.square(net(F.const(X)) - F.const(Y)))
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    ((torch.tanh(torch.from_numpy(X) @ tw + tb) - torch.from_numpy(Y)) ** 2).mean().backward()
    opt.step(loss)
    for p, v, g in [(net.w, w, tw.grad.numpy()), (net.b, b, tb.grad.numpy())]:
        extra = 0.05 * np.sign(v) + (0.05 * v if method == "L1L2" else 0.0)
        np.testing.assert_allclose(p.read(), v - 0.1 * (g + extra), rtol=1e-10)


def test_batch_norm_running_stats_are_fixed_by_step():
    bn = nn.batch_norm(2, dims=2, momentum=0.5)
    x = RNG.standard_normal((6, 2)).astype(np.float32)
    opt = optim.SGD(bn, 0.1)
    opt.step(F.reduce_sum(bn(F.const(x))))
    assert bn.running_mean.op_type == "const"
    np.testing.assert_allclose(bn.running_mean.read().ravel(), 0.5 * x.mean(0), rtol=1e-5)


def test_grad_api_and_errors():
    x = F.const(np.array([1.0, 2.0]))
    params, grads = optim.Grad().grad([x * x], [F.const(np.array([1.0, 1.0]))], [x])
    assert params[0] is x
    np.testing.assert_allclose(grads[0].read(), [2.0, 4.0])
    net, _ = _pair()
    opt = optim.SGD(net)
    assert (opt.learning_rate, opt.momentum, opt.weight_decay) == (1e-3, 0.9, 0.0)
    assert opt.regularization_method == optim.L2
    with pytest.raises(mnn.expr.MnnError, match="scalar loss"):
        opt.step(net(F.const(X)))
    with pytest.raises(mnn.expr.MnnError, match="learning_rate"):
        opt.learning_rate = -1
    with pytest.raises(mnn.expr.MnnError, match="no module"):
        optim.Grad().step(F.reduce_sum(x))
    nan_loss = F.reduce_sum(net(F.const(X)) * F.const(np.float64("nan")))
    with pytest.raises(mnn.expr.MnnError, match="not finite"):
        opt.step(nan_loss)


def test_loss_built_once_over_placeholders_trains_batch_after_batch():
    # The lazy pattern: one graph, new data written each step, matching torch step by step.
    net, tp = _pair()
    opt = optim.SGD(net, 0.1, 0.9)
    topt = torch.optim.SGD(tp, lr=0.1, momentum=0.9)
    xp, yp = F.placeholder([4, 5], dtype=np.float64), F.placeholder([4, 3], dtype=np.float64)
    loss = F.reduce_mean(F.square(net(xp) - yp))
    for i in range(4):
        xb, yb = X[2 * (i % 2):2 * (i % 2) + 4], Y[2 * (i % 2):2 * (i % 2) + 4]
        xp.write(xb)
        yp.write(yb)
        opt.step(loss)
        topt.zero_grad()
        ((torch.tanh(torch.from_numpy(xb) @ tp[0] + tp[1]) - torch.from_numpy(yb)) ** 2
         ).mean().backward()
        topt.step()
    for p, t in zip(net.parameters, tp):
        np.testing.assert_allclose(p.read(), t.detach().numpy(), rtol=1e-9, atol=1e-12)
    # Reading the loss now computes it from the updated weights.
    expect = ((np.tanh(xb @ tp[0].detach().numpy() + tp[1].detach().numpy()) - yb) ** 2).mean()
    np.testing.assert_allclose(loss.read(), expect, rtol=1e-10)


def test_huge_but_finite_gradients_step_and_inf_ones_raise():
    # The finiteness check's fast path (a sum of squares) overflows for gradients near
    # float32's limit; they are finite and must step, as in torch.
    w = np.array([1.0, -2.0, 3.0], np.float32)
    scale = np.array([1e30, -3e37, 2e36], np.float32)
    p = F.const(w)
    p.fix_as_trainable()
    opt = optim.SGD([p], 1e-38, 0.0)
    tp = torch.tensor(w, requires_grad=True)
    topt = torch.optim.SGD([tp], lr=1e-38, momentum=0.0)
    opt.step(F.reduce_sum(p * F.const(scale)))
    (tp * torch.from_numpy(scale)).sum().backward()
    topt.step()
    np.testing.assert_allclose(p.read(), tp.detach().numpy(), rtol=1e-6)
    inf_loss = F.reduce_sum(p * F.const(np.array([1.0, np.inf, 1.0], np.float32)))
    with pytest.raises(mnn.expr.MnnError, match="not finite"):
        opt.step(inf_loss)
