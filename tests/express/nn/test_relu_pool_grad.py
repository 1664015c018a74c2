"""relu -> max pool: the relu mask of the gradient is taken on the pooled side (before the
max pool's scatter), which must give torch's gradients exactly, ties at zero included."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn.express.graph import topological_order


@pytest.fixture
def rng():
    return np.random.default_rng(11)


@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 2), (3, 1)])
def test_relu_max_pool_gradient_matches_torch(kernel, stride, rng):
    x = rng.standard_normal((2, 3, 11, 10))
    x[0, 1, :5, :5] = -1.0  # windows whose relu outputs are all zero: ties at 0
    w = rng.standard_normal((4, 3, 3, 3))
    xv, wv = F.const(x), F.const(w)
    y = F.max_pool(F.relu(F.conv2d(xv, wv)), [kernel, kernel], [stride, stride])
    up = rng.standard_normal(y.shape)
    gx, gw = F.grad(F.reduce_sum(y * F.const(up)), [xv, wv])

    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(tx, tw)),
                                        kernel, stride)
    (ty * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.read(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)

    # The mask ran once, on the pooled shape, not on the conv output.
    masks = [e for e in topological_order([gx.expr])
             if e.op is not None and e.op.name == "relu_grad"]
    assert [list(e.inputs[0].shape) for e in masks] == [list(y.shape)]


def test_relu_output_with_another_consumer(rng):
    # The relu output also feeds a sum: relu's rule sees the added gradients and masks
    # them all (a second mask on the pooled part changes nothing).
    x = rng.standard_normal((1, 2, 8, 8))
    xv = F.const(x)
    r = F.relu(xv)
    loss = F.reduce_sum(F.max_pool(r, [2, 2], [2, 2]) * 3.0) + F.reduce_sum(r * r)
    (gx,) = F.grad(loss, [xv])
    tx = torch.tensor(x, requires_grad=True)
    tr = torch.relu(tx)
    (torch.nn.functional.max_pool2d(tr, 2, 2).sum() * 3.0 + (tr * tr).sum()).backward()
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
