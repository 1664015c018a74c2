"""grid_sample (values, input and grid gradients) against torch."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_and_grads_match_torch(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 5, 7))
    # Coordinates beyond [-1, 1] exercise the padding; keep them off pixel boundaries
    # where the (piecewise) gradient is not defined.
    grid = RNG.uniform(-1.6, 1.6, (2, 4, 6, 2))
    xv, gv = F.const(x), F.const(grid)
    y = F.grid_sample(xv, gv, mode, padding_mode, align_corners)
    tx = torch.tensor(x, requires_grad=True)
    tg = torch.tensor(grid, requires_grad=True)
    ty = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    dy = RNG.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    gx, gg = F.grad([y], [xv, gv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg.read(), tg.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_grid_sample_float32_and_errors():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    grid = RNG.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    ref = TF.grid_sample(torch.tensor(x), torch.tensor(grid), align_corners=False).numpy()
    y = F.grid_sample(F.const(x), F.const(grid))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(F.OpError, match="grid"):
        F.grid_sample(F.const(x), F.const(grid[..., :1]))
    with pytest.raises(F.OpError, match="padding_mode"):
        F.grid_sample(F.const(x), F.const(grid), padding_mode="wrap")
