"""Samples of the fused layer_norm op (mnn/express/ops/nn_norm.py), referenced by torch's
layer_norm. Attributes: start (first normalized axis), epsilon, has_gamma, has_beta."""
import numpy as np
import torch
import torch.nn.functional as TF
from opdb_core import Sample, values


def _ref(x, *params, start, epsilon, has_gamma, has_beta):
    tail = x.shape[start:]
    params = list(params)
    gamma = torch.tensor(params.pop(0)) if has_gamma else None
    beta = torch.tensor(params.pop(0)) if has_beta else None
    return TF.layer_norm(torch.tensor(x), tail, gamma, beta, epsilon).numpy()


def _attrs(start, gamma, beta, eps=1e-5):
    return dict(start=start, epsilon=eps, has_gamma=gamma, has_beta=beta)


SAMPLES = {"layer_norm": []}
for _dt in (np.float32, np.float64):
    for _shape, _start in (((7,), 0), ((3, 5), 1), ((2, 3, 4), 1), ((2, 1, 6), 2)):
        _x = values(_shape, _dt, seed=len(_shape))
        _tail = _shape[_start:]
        _g, _b = values(_tail, _dt, seed=9), values(_tail, _dt, seed=10)
        SAMPLES["layer_norm"] += [
            Sample([_x], _attrs(_start, False, False), _ref),
            Sample([_x, _g, _b], _attrs(_start, True, True), _ref),
            Sample([_x, _b], _attrs(_start, False, True, 1e-3), _ref),
        ]

REJECTS = {"layer_norm": [
    Sample([values((3, 4), np.int32)], _attrs(1, False, False)),
    Sample([values((3, 4), np.float32), values((3,), np.float32)], _attrs(1, True, False)),
    Sample([values((3, 4), np.float32), values((4,), np.float64)], _attrs(1, True, False)),
]}
