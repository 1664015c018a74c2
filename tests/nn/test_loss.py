"""Losses: MNN's formulas (numpy) and gradients (torch)."""
import numpy as np
import pytest
import torch

import mnn
import mnn.expr as F
from mnn import nn

RNG = np.random.default_rng(1)


def _probs(n=5, c=4):
    e = np.exp(RNG.standard_normal((n, c)))
    return (e / e.sum(1, keepdims=True)).astype(np.float64)


def _onehot(n=5, c=4):
    return np.eye(c)[RNG.integers(0, c, n)]


CASES = {
    "cross_entropy": (lambda p, t: -(np.log(p) * t).sum(1).mean(),
                      lambda p, t: -(torch.log(p) * t).sum(1).mean()),
    "kl": (lambda p, t: (p * (np.log(p) - np.log(t))).sum(1).mean(),
           lambda p, t: (p * (torch.log(p) - torch.log(t))).sum(1).mean()),
    "mse": (lambda p, t: ((p - t) ** 2).sum(1).mean(),
            lambda p, t: ((p - t) ** 2).sum(1).mean()),
    "mae": (lambda p, t: np.abs(p - t).sum(1).mean(),
            lambda p, t: (p - t).abs().sum(1).mean()),
    "hinge": (lambda p, t: np.maximum(0, 1 - p * t).sum(1).mean(),
              lambda p, t: torch.clamp(1 - p * t, min=0).sum(1).mean()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mnn_losses_value_and_gradient(name):
    ref, tref = CASES[name]
    p = _probs()
    t = _probs() if name == "kl" else _onehot() * (2.0 if name == "hinge" else 1.0)
    pv = F.const(p)
    loss = getattr(nn.loss, name)(pv, F.const(t))
    assert loss.shape == []
    np.testing.assert_allclose(loss.read(), ref(p, t), rtol=1e-10)
    tp = torch.from_numpy(p).requires_grad_()
    tref(tp, torch.from_numpy(t)).backward()
    np.testing.assert_allclose(F.grad(loss, [pv])[0].read(), tp.grad.numpy(), rtol=1e-9,
                               atol=1e-12)


def test_losses_reject_mismatched_shapes():
    with pytest.raises(mnn.expr.MnnError, match=r"one 2-D shape.*\[5, 4\] and \[5, 3\]"):
        nn.loss.mse(F.const(_probs()), F.const(_probs(5, 3)))


@pytest.mark.parametrize("labels_as", ["indices", "onehot"])
def test_softmax_cross_entropy_matches_torch_even_for_huge_logits(labels_as):
    logits = RNG.standard_normal((6, 5)).astype(np.float32) * 3
    logits[0, 2] = 500.0  # exp overflows float32: the stable form must not
    labels = RNG.integers(0, 5, 6)
    if labels_as == "indices":
        target = labels.astype(np.int32)
    else:
        target = np.eye(5, dtype=np.float32)[labels]
    lv = F.const(logits)
    loss = nn.loss.softmax_cross_entropy(lv, F.const(target))
    tl = torch.from_numpy(logits).requires_grad_()
    tloss = torch.nn.functional.cross_entropy(tl, torch.from_numpy(labels))
    tloss.backward()
    np.testing.assert_allclose(loss.read(), tloss.item(), rtol=1e-5)
    np.testing.assert_allclose(F.grad(loss, [lv])[0].read(), tl.grad.numpy(), rtol=1e-4,
                               atol=1e-6)
    assert np.isfinite(loss.read())


def test_softmax_cross_entropy_label_errors():
    with pytest.raises(mnn.expr.MnnError, match=r"\[0, 5\)"):
        nn.loss.softmax_cross_entropy(F.const(np.zeros((2, 5), np.float32)),
                                      F.const(np.array([0, 5], np.int32)))
    with pytest.raises(mnn.expr.MnnError, match="class indices"):
        nn.loss.softmax_cross_entropy(F.const(np.zeros((2, 5), np.float32)),
                                      F.const(np.zeros((2, 4), np.float32)))
