"""SGD's one-pass update kernel (mnn/_cython/optim_update.pyx) against torch.optim.SGD:
float32 and float64, L2 weight decay, parameters large enough to split over threads,
momentum 0, and the L1 path that does not use the kernel."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import optim

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("momentum,decay", [(0.9, 0.0), (0.9, 0.01), (0.0, 0.05)])
def test_sgd_steps_match_torch(dtype, threads, momentum, decay):
    shapes = [(300, 257), (7,), (3, 1, 5)]  # the first one is split over threads
    values = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    params = [F.const(v) for v in values]
    for p in params:
        p.fix_as_trainable()
    tparams = [torch.tensor(v, requires_grad=True) for v in values]
    targets = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    opt = optim.SGD(params, 0.05, momentum, decay)
    topt = torch.optim.SGD(tparams, lr=0.05, momentum=momentum, weight_decay=decay)
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        for _ in range(3):
            loss = sum(F.reduce_sum(F.square(p - F.const(t))) for p, t in zip(params, targets))
            opt.step(loss)
            topt.zero_grad()
            sum(((tp - torch.from_numpy(t)) ** 2).sum()
                for tp, t in zip(tparams, targets)).backward()
            topt.step()
    finally:
        F.set_thread_number(before)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for p, tp in zip(params, tparams):
        assert p.dtype == dtype
        np.testing.assert_allclose(p.read(), tp.detach().numpy(), rtol=tol, atol=tol)


def test_l1_regularisation_still_matches_its_formula():
    w0 = RNG.standard_normal((4, 4))
    w = F.const(w0)
    w.fix_as_trainable()
    opt = optim.SGD([w], 0.1, 0.0, 0.05, optim.Regularization_Method.L1)
    opt.step(F.reduce_sum(w * w))
    np.testing.assert_allclose(w.read(), w0 - 0.1 * (2 * w0 + 0.05 * np.sign(w0)),
                               rtol=1e-12)
