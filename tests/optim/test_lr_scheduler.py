"""Learning-rate schedules against torch's schedulers."""
import numpy as np
import pytest
import torch

import mnn
from mnn import optim


def _torch_lrs(make, steps, lr=0.5):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=lr)
    sched = make(opt)
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_multi_step_matches_torch():
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [3, 7], 0.1), 10)
    ours = [optim.multi_step(0.5, s, [7, 3], [0.1]) for s in range(10)]
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    # MNN's per-milestone multipliers, the last repeating.
    assert optim.multi_step(1.0, 9, [2, 5, 8], [0.5, 0.1]) == pytest.approx(0.5 * 0.1 * 0.1)


def test_exp_matches_torch():
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.9), 8)
    np.testing.assert_allclose([optim.exp(0.5, s, 0.9) for s in range(8)], ref, rtol=1e-12)


def test_cosine_matches_torch():
    ref = _torch_lrs(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.01), 11)
    np.testing.assert_allclose([optim.cosine(0.5, s, 10, 0.01) for s in range(11)], ref,
                               rtol=1e-9)


def test_inv_formula():
    # Caffe's inv policy: base * (1 + gamma * step) ^ -power
    assert optim.inv(0.1, 100, 1e-4, 0.75) == pytest.approx(0.1 * (1 + 0.01) ** -0.75)
    with pytest.raises(mnn.expr.MnnError, match="step >= 0"):
        optim.inv(0.1, -1, 1e-4, 0.75)
