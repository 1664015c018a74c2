"""The float32 norm kernels (norm.pyx, include/norm_moments.h: one-pass shifted moments)
on rows that stress the moments — a large common offset, constant rows, odd lengths,
inf/NaN — for layer, group and instance norm, against torch in float64."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(29)


def _rows(shape, offset):
    x = RNG.standard_normal(shape) * 0.5 + offset
    return x.astype(np.float32)


@pytest.mark.parametrize("offset", [0.0, 3e3, -1e4])
@pytest.mark.parametrize("d", [1, 15, 16, 17, 768, 1001])
def test_layer_norm_rows_match_torch(d, offset):
    x = _rows((9, d), offset)
    x[0] = offset  # a constant row: variance 0, output beta
    g, b = RNG.standard_normal(d).astype(np.float32), RNG.standard_normal(d).astype(np.float32)
    y = F.layer_norm(F.const(x), -1, F.const(g), F.const(b), 1e-5).read()
    ref = TF.layer_norm(torch.tensor(x, dtype=torch.float64), (d,), torch.tensor(g).double(),
                        torch.tensor(b).double(), 1e-5).numpy()
    # float32 x - mean on offset rows carries the rounding of the offset (ulp(1e4) ~ 1e-3),
    # seen through gamma / std: the tolerance grows with the offset.
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=2e-5 + 5e-7 * abs(offset))


@pytest.mark.parametrize("offset", [0.0, -2e3])
@pytest.mark.parametrize("groups", [1, 4, 12])
def test_group_and_instance_norm_match_torch(groups, offset):
    x = _rows((2, 12, 7, 5), offset)
    g, b = RNG.standard_normal(12).astype(np.float32), RNG.standard_normal(12).astype(np.float32)
    y = F.group_norm(F.const(x), groups, F.const(g), F.const(b)).read()
    tx = torch.tensor(x, dtype=torch.float64)
    ref = TF.group_norm(tx, groups, torch.tensor(g).double(), torch.tensor(b).double(),
                        1e-5).numpy()
    # The offset's rounding (see above) is scaled by each channel's gamma.
    atol = 2e-5 + 5e-7 * abs(offset) * max(1.0, float(np.abs(g).max()))
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=atol)
    if groups == 12:
        yi = F.instance_norm(F.const(x), F.const(g), F.const(b)).read()
        np.testing.assert_allclose(yi, ref, rtol=1e-4, atol=atol)


def test_non_finite_rows_give_nan_like_torch():
    x = RNG.standard_normal((4, 33)).astype(np.float32)
    x[1, 5] = np.inf
    x[2, 7] = np.nan
    y = F.layer_norm(F.const(x), -1).read()
    ref = TF.layer_norm(torch.tensor(x, dtype=torch.float64), (33,)).numpy()
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    np.testing.assert_allclose(y[[0, 3]], ref[[0, 3]], rtol=1e-5, atol=1e-6)
