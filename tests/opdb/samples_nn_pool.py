"""Samples of the pooling ops (mnn/express/ops/nn_pool.py), referenced by torch.

Attributes: kernel/strides (h, w), pads (top, left, bottom, right), padding_mode
(1 = VALID), ceil_mode, global_pool, output_size (adaptive), count_include_pad (avg).
"""
import numpy as np
import torch
import torch.nn.functional as TF
from opdb_core import Sample, values


def _attrs(k=(2, 2), s=(2, 2), p=(0, 0, 0, 0), ceil=False, glob=False, out=None, **extra):
    return dict(kernel=k, strides=s, pads=p, padding_mode=1, ceil_mode=ceil,
                global_pool=glob, output_size=out, **extra)


def _forward(kind, t, kernel, strides, pads, padding_mode, ceil_mode, global_pool,
             output_size, count_include_pad=True):
    if global_pool:
        return t.amax((2, 3), keepdim=True) if kind == "max" else t.mean((2, 3), keepdim=True)
    if output_size is not None:
        fn = TF.adaptive_max_pool2d if kind == "max" else TF.adaptive_avg_pool2d
        return fn(t, output_size)
    sym = (pads[0], pads[1])  # samples use symmetric pads (torch's form)
    if kind == "max":
        return TF.max_pool2d(t, kernel, strides, sym, ceil_mode=ceil_mode)
    return TF.avg_pool2d(t, kernel, strides, sym, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad)


def _max_ref(x, **attrs):
    return _forward("max", torch.tensor(x), **attrs).numpy()


def _avg_ref(x, **attrs):
    return _forward("avg", torch.tensor(x), **attrs).numpy()


def _max_grad_ref(x, dy, **attrs):
    t = torch.tensor(x, requires_grad=True)
    _forward("max", t, **attrs).backward(torch.tensor(dy))
    return t.grad.numpy()


def _avg_grad_ref(dy, input_hw, **attrs):
    shape = dy.shape[:2] + tuple(input_hw)
    t = torch.zeros(shape, dtype=torch.tensor(dy).dtype, requires_grad=True)
    _forward("avg", t, **attrs).backward(torch.tensor(dy))
    return t.grad.numpy()


_CASES = [  # (input shape, attrs, pooled shape)
    ((1, 2, 7, 9), _attrs((3, 3), (2, 2), (1, 1, 1, 1)), (1, 2, 4, 5)),
    ((2, 3, 7, 9), _attrs((3, 3), (2, 2), (1, 1, 1, 1), ceil=True), (2, 3, 4, 5)),
    ((1, 1, 5, 4), _attrs((2, 3), (1, 2)), (1, 1, 4, 1)),
    ((2, 2, 5, 6), _attrs(glob=True), (2, 2, 1, 1)),
    ((1, 3, 9, 7), _attrs(out=(4, 3)), (1, 3, 4, 3)),
    ((1, 1, 1, 1), _attrs((1, 1), (1, 1)), (1, 1, 1, 1)),
]

SAMPLES = {"max_pool": [], "avg_pool": [], "max_pool_grad": [], "avg_pool_grad": []}
for _i, (_shape, _a, _out) in enumerate(_CASES):
    for _dt in (np.float32, np.float64):
        _x = values(_shape, _dt, seed=_i)
        _dy = values(_out, _dt, seed=100 + _i)
        SAMPLES["max_pool"].append(Sample([_x], _a, _max_ref))
        SAMPLES["max_pool_grad"].append(Sample([_x, _dy], _a, _max_grad_ref))
        for _inc in (True, False):
            _aa = dict(_a, count_include_pad=_inc)
            SAMPLES["avg_pool"].append(Sample([_x], _aa, _avg_ref))
            SAMPLES["avg_pool_grad"].append(
                Sample([_dy], dict(_aa, input_hw=_shape[2:]), _avg_grad_ref))

REJECTS = {
    "max_pool": [Sample([values((1, 1, 4, 4), np.int32)], _attrs()),
                 Sample([values((4, 4), np.float32)], _attrs()),
                 Sample([values((1, 1, 4, 4), np.float32)], _attrs((5, 5), (1, 1))),
                 Sample([values((1, 1, 4, 4), np.float32)], _attrs(p=(2, 2, 2, 2)))],
    "avg_pool": [Sample([values((1, 1, 4, 4), np.uint8)], _attrs(count_include_pad=True))],
    "max_pool_grad": [Sample([values((1, 1, 4, 4), np.float32),
                              values((1, 1, 3, 3), np.float32)], _attrs())],
    "avg_pool_grad": [Sample([values((1, 1, 3, 3), np.float32)],
                             dict(_attrs(count_include_pad=True), input_hw=(4, 4)))],
}
