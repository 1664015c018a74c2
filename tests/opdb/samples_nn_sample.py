"""Samples of grid_sample / grid_sample_grad (mnn/express/ops/nn_sample.py), referenced by
torch's grid_sample and its autograd."""
import numpy as np
import torch
import torch.nn.functional as TF
from opdb_core import Sample, values


def _ref(x, grid, mode, padding_mode, align_corners):
    return TF.grid_sample(torch.tensor(x), torch.tensor(grid), mode, padding_mode,
                          align_corners).numpy()


def _grad_ref(x, grid, g, mode, padding_mode, align_corners):
    tx = torch.tensor(x, requires_grad=True)
    tg = torch.tensor(grid, requires_grad=True)
    TF.grid_sample(tx, tg, mode, padding_mode, align_corners).backward(torch.tensor(g))
    return [tx.grad.numpy(), tg.grad.numpy()]


SAMPLES = {"grid_sample": [], "grid_sample_grad": []}
_i = 0
for _mode in ("bilinear", "nearest"):
    for _pad in ("zeros", "border", "reflection"):
        for _ac in (False, True):
            for _dt in (np.float32, np.float64):
                _i += 1
                _x = values((1, 2, 4, 5), _dt, seed=_i)
                _grid = values((1, 3, 2, 2), _dt, -1.4, 1.4, seed=100 + _i)
                _a = dict(mode=_mode, padding_mode=_pad, align_corners=_ac)
                SAMPLES["grid_sample"].append(Sample([_x, _grid], _a, _ref))
                _g = values((1, 2, 3, 2), _dt, seed=200 + _i)
                # float32: torch accumulates the grid gradient in float32 in another order
                _tol = dict(rtol=1e-4, atol=1e-5) if _dt == np.float32 else {}
                SAMPLES["grid_sample_grad"].append(Sample([_x, _grid, _g], _a, _grad_ref,
                                                          **_tol))

_A = dict(mode="bilinear", padding_mode="zeros", align_corners=False)
REJECTS = {
    "grid_sample": [Sample([values((1, 2, 4, 4), np.float32), values((1, 3, 3, 3), np.float32)],
                           _A),
                    Sample([values((1, 2, 4, 4), np.int32), values((1, 3, 3, 2), np.int32)], _A),
                    Sample([values((1, 2, 4, 4), np.float32), values((1, 3, 3, 2), np.float32)],
                           dict(_A, mode="cubic"))],
    "grid_sample_grad": [Sample([values((1, 2, 4, 4), np.float32),
                                 values((1, 3, 3, 2), np.float32),
                                 values((1, 2, 2, 2), np.float32)], _A)],
}
