"""SGD's one-pass update kernel (mnn/_cython/optim_update.pyx) against torch.optim.SGD:
float32 and float64, L2 weight decay, parameters large enough to split over threads,
momentum 0, a non-finite gradient (nothing written), mixed dtypes, the kernel's checks of
its arrays, and the L1 path that does not use the kernel."""
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


def _torch_sgd_steps(values, targets, steps, lr, momentum):
    tparams = [torch.tensor(v, requires_grad=True) for v in values]
    topt = torch.optim.SGD(tparams, lr=lr, momentum=momentum)
    for scale in steps:
        topt.zero_grad()
        sum(((tp - torch.from_numpy(t)) ** 2).sum() * scale
            for tp, t in zip(tparams, targets)).backward()
        topt.step()
    return [tp.detach().numpy() for tp in tparams]


def test_non_finite_gradient_changes_nothing_and_training_continues_like_torch():
    # The kernel checks every gradient before writing: a NaN in the last parameter's
    # gradient leaves the first parameters and their momentum histories as they were,
    # so the steps after it match torch run without the bad step.
    shapes = [(300, 300), (5,), (4, 3)]
    values = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    targets = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    params = [F.const(v) for v in values]
    for p in params:
        p.fix_as_trainable()
    opt = optim.SGD(params, 0.01, 0.9)

    def loss(poison=None):
        terms = [F.reduce_sum(F.square(p - F.const(t))) for p, t in zip(params, targets)]
        if poison is not None:
            terms[2] = terms[2] * F.const(np.float32(poison))
        return sum(terms)

    opt.step(loss())
    after_one = [p.read().copy() for p in params]
    for poison in (np.nan, np.inf):
        with pytest.raises(F.MnnError, match="not finite"):
            opt.step(loss(poison))
        assert opt.current_step == 1
        for p, v in zip(params, after_one):
            np.testing.assert_array_equal(p.read(), v)
    opt.step(loss())
    expect = _torch_sgd_steps(values, targets, [1.0, 1.0], 0.01, 0.9)
    for p, e in zip(params, expect):
        np.testing.assert_allclose(p.read(), e, rtol=1e-5, atol=1e-6)


def test_parameters_of_mixed_dtypes_match_torch():
    values = [RNG.standard_normal((6, 4)).astype(np.float32),
              RNG.standard_normal((4,)).astype(np.float64)]
    targets = [RNG.standard_normal(v.shape).astype(v.dtype) for v in values]
    params = [F.const(v) for v in values]
    for p in params:
        p.fix_as_trainable()
    opt = optim.SGD(params, 0.05, 0.9)
    for _ in range(2):
        opt.step(sum(F.reduce_sum(F.cast(F.square(p - F.const(t)), np.float64))
                     for p, t in zip(params, targets)))
    expect = _torch_sgd_steps(values, targets, [1.0, 1.0], 0.05, 0.9)
    for p, e in zip(params, expect):
        assert p.dtype == e.dtype
        np.testing.assert_allclose(p.read(), e, rtol=1e-5, atol=1e-6)


def test_kernel_rejects_mismatched_arrays():
    from mnn._cython import optim_update

    def arrays(n=8, dtype=np.float32):
        return [np.zeros(n, dtype)], [np.zeros(n, dtype)], [np.zeros(n, dtype)], \
            [np.zeros(n, dtype)]

    p, g, v, o = arrays()
    assert optim_update.sgd_momentum_many(p, g, v, o, [True], 0.1, 0.9, 0.0, 1) == -1
    with pytest.raises(ValueError, match="gradient 0 has 7 elements"):
        optim_update.sgd_momentum_many(p, [np.zeros(7, np.float32)], v, o, [True],
                                       0.1, 0.9, 0.0, 1)
    with pytest.raises(ValueError, match="history 0 is not a C-contiguous array"):
        optim_update.sgd_momentum_many(p, g, [np.zeros(8, np.float64)], o, [True],
                                       0.1, 0.9, 0.0, 1)
    with pytest.raises(ValueError, match="output 0 is not a C-contiguous array"):
        optim_update.sgd_momentum_many(p, g, v, [np.zeros(16, np.float32)[::2]], [True],
                                       0.1, 0.9, 0.0, 1)
    readonly = np.zeros(8, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="output 0 is read-only"):
        optim_update.sgd_momentum_many(p, g, v, [readonly], [True], 0.1, 0.9, 0.0, 1)
    with pytest.raises(ValueError, match="list lengths differ"):
        optim_update.sgd_momentum_many(p, g, v, o, [], 0.1, 0.9, 0.0, 1)
    with pytest.raises(ValueError, match="float32 or float64"):
        optim_update.sgd_momentum_many(*arrays(dtype=np.int32), [True], 0.1, 0.9, 0.0, 1)
    with pytest.raises(ValueError, match="gradient 0 is not an ndarray"):
        optim_update.sgd_momentum_many(p, [[0.0] * 8], v, o, [True], 0.1, 0.9, 0.0, 1)
