"""Samples of the fused layer_norm and group_norm ops (mnn/express/ops/nn_norm.py),
referenced by torch's layer_norm and group_norm. layer_norm attributes: start (first
normalized axis), epsilon, has_gamma, has_beta; group_norm: groups, epsilon, has_gamma,
has_beta (gamma/beta inputs of shape (C,))."""
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



def _gn_ref(x, *params, groups, epsilon, has_gamma, has_beta):
    params = list(params)
    gamma = torch.tensor(params.pop(0)) if has_gamma else None
    beta = torch.tensor(params.pop(0)) if has_beta else None
    return TF.group_norm(torch.tensor(x), groups, gamma, beta, epsilon).numpy()


def _gn_attrs(groups, gamma, beta, eps=1e-5):
    return dict(groups=groups, epsilon=eps, has_gamma=gamma, has_beta=beta)


SAMPLES["group_norm"] = []
for _dt in (np.float32, np.float64):
    # (N, C, spatial...), groups: instance norm (groups = C), odd sizes, 2-D, 5-D.
    for _shape, _groups in (((2, 6, 5, 7), 3), ((1, 4, 3, 3), 4), ((3, 2), 1),
                            ((2, 4, 2, 3, 5), 2), ((1, 1, 1, 2), 1)):
        _x = values(_shape, _dt, seed=sum(_shape))
        _g, _b = values(_shape[1:2], _dt, seed=11), values(_shape[1:2], _dt, seed=12)
        SAMPLES["group_norm"] += [
            Sample([_x], _gn_attrs(_groups, False, False), _gn_ref),
            Sample([_x, _g, _b], _gn_attrs(_groups, True, True), _gn_ref),
            Sample([_x, _g], _gn_attrs(_groups, True, False, 1e-3), _gn_ref),
        ]

REJECTS = {"group_norm": [
    Sample([values((2, 6, 3), np.float32)], _gn_attrs(4, False, False)),
    Sample([values((2, 6, 3), np.int32)], _gn_attrs(3, False, False)),
    Sample([values((2, 6, 3), np.float32), values((3,), np.float32)], _gn_attrs(3, True, False)),
], "layer_norm": [
    Sample([values((3, 4), np.int32)], _attrs(1, False, False)),
    Sample([values((3, 4), np.float32), values((3,), np.float32)], _attrs(1, True, False)),
    Sample([values((3, 4), np.float32), values((4,), np.float64)], _attrs(1, True, False)),
]}
