"""Gradient checking helpers for the test_grad_* files, and a test that they can fail.

``check`` compares ``F.grad`` of ``sum(fn(*inputs) * w)`` (``w`` random) against central
finite differences in float64 and, when a torch function is given, against
``torch.autograd`` on the same inputs.
"""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn.express.optable import get_op


def check(fn, arrays, torch_fn=None, eps=1e-6, rtol=1e-6, atol=1e-8, seed=0, fd=True):
    """Check the gradient of ``fn`` at float64 ``arrays`` (see module docstring);
    ``fd=False`` skips finite differences (for functions that pass through float32)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed)
    holders = [F.placeholder(list(a.shape), dtype=np.float64) for a in arrays]
    for h, a in zip(holders, arrays):
        h.write(a)
    out = fn(*holders)
    weight = rng.standard_normal(out.shape)
    loss = F.reduce_sum(out * F.const(weight))
    grads = [np.asarray(g.read()) for g in F.grad(loss, holders)]
    for k, (h, a) in enumerate(zip(holders, arrays) if fd else []):
        numeric = np.zeros(a.size)
        for i in range(a.size):
            for sign in (1.0, -1.0):
                b = a.copy().reshape(-1)
                b[i] += sign * eps
                h.write(b.reshape(a.shape))
                numeric[i] += sign * float(loss.read()) / (2 * eps)
            h.write(a)
        np.testing.assert_allclose(grads[k], numeric.reshape(a.shape), rtol=1e-5,
                                   atol=1e-6, err_msg=f"finite differences, input {k}")
    if torch_fn is not None:
        tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
        tout = torch_fn(*tensors)
        np.testing.assert_allclose(out.read(), tout.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg="forward value against torch")
        (tout * torch.from_numpy(weight)).sum().backward()
        for k, t in enumerate(tensors):
            expect = t.grad.numpy() if t.grad is not None else np.zeros(arrays[k].shape)
            np.testing.assert_allclose(grads[k], expect, rtol=rtol, atol=atol,
                                       err_msg=f"gradient against torch, input {k}")


def test_checker_catches_a_wrong_rule():
    op = get_op("sin")
    right = op.grad
    op.grad = lambda inputs, outputs, grads: [grads[0] * F.sin(inputs[0])]  # wrong on purpose
    try:
        with pytest.raises(AssertionError, match="finite differences"):
            check(F.sin, [np.array([0.3, 1.2])])
    finally:
        op.grad = right
    check(F.sin, [np.array([0.3, 1.2])], torch.sin)


def test_checker_compares_with_torch():
    with pytest.raises(AssertionError, match="against torch"):
        check(F.sin, [np.array([0.3, 1.2])], torch.cos)
