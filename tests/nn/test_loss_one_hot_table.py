"""softmax_cross_entropy with integer labels builds its weights from a cached one-hot
table per (classes, dtype, batch): losses and gradients against torch while the key
changes between calls, and more keys than the cache holds."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import nn

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_alternating_shapes_match_torch(dtype):
    # 12 (classes, batch) keys twice over: more than the cache keeps, each seen again.
    keys = [(c, b) for c in (3, 10, 17) for b in (1, 5, 64, 9)] * 2
    for classes, batch in keys:
        logits = RNG.standard_normal((batch, classes)).astype(dtype) * 4
        labels = RNG.integers(0, classes, batch).astype(np.int32)
        x = F.const(logits)
        loss = nn.loss.softmax_cross_entropy(x, F.const(labels))
        (grad,) = F.grad([loss], [x])
        t = torch.from_numpy(logits).requires_grad_()
        want = torch.nn.functional.cross_entropy(t, torch.from_numpy(labels).long())
        want.backward()
        tol = 1e-5 if dtype == np.float32 else 1e-12
        assert loss.dtype == dtype
        np.testing.assert_allclose(loss.read(), want.item(), rtol=tol, atol=tol)
        np.testing.assert_allclose(grad.read(), t.grad.numpy(), rtol=tol, atol=tol)
