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

# Dilated max pooling (torch has no dilated average pooling: see test_pool_dilation_lp.py).
_DIL = dict(_attrs((3, 2), (2, 1), (1, 1, 1, 1), ceil=True), dilations=(2, 3))
_XD = values((2, 2, 9, 10), np.float32, seed=50)
_DYD = values((2, 2, 4, 9), np.float32, seed=51)


def _dil_fwd(x, **a):
    return TF.max_pool2d(torch.tensor(x), a["kernel"], a["strides"], a["pads"][:2],
                         a["dilations"], a["ceil_mode"])


def _dil_max_ref(x, **a):
    return _dil_fwd(x, **a).numpy()


def _dil_grad_ref(x, dy, **a):
    t = torch.tensor(x, requires_grad=True)
    TF.max_pool2d(t, a["kernel"], a["strides"], a["pads"][:2], a["dilations"],
                  a["ceil_mode"]).backward(torch.tensor(dy))
    return t.grad.numpy()


SAMPLES["max_pool"].append(Sample([_XD], _DIL, _dil_max_ref))
SAMPLES["max_pool_grad"].append(Sample([_XD, _DYD], _DIL, _dil_grad_ref))


# 3-D pooling and the max pooling indices: attributes in the input's axis order, pads
# begins then ends.
def _attrs3(k, s, p, d=(1, 1, 1), ceil=False):
    return dict(kernel=k, strides=s, pads=p + p, dilations=d, ceil_mode=ceil)


def _t3(kind, t, kernel, strides, pads, dilations, ceil_mode, count_include_pad=True):
    n = len(kernel)
    if kind == "max":
        fn = TF.max_pool3d if n == 3 else TF.max_pool2d
        return fn(t, kernel, strides, pads[:n], dilations, ceil_mode, return_indices=True)
    return TF.avg_pool3d(t, kernel, strides, pads[:n], ceil_mode, count_include_pad)


def _max3_ref(x, **a):
    return _t3("max", torch.tensor(x), **a)[0].numpy()


def _indices_ref(x, **a):
    return _t3("max", torch.tensor(x), **a)[1].numpy()


def _max3_grad_ref(x, dy, **a):
    t = torch.tensor(x, requires_grad=True)
    _t3("max", t, **a)[0].backward(torch.tensor(dy))
    return t.grad.numpy()


def _avg3_ref(x, **a):
    return _t3("avg", torch.tensor(x), **a).numpy()


def _avg3_grad_ref(dy, input_size, **a):
    t = torch.zeros(dy.shape[:2] + tuple(input_size), dtype=torch.tensor(dy).dtype,
                    requires_grad=True)
    _t3("avg", t, **a).backward(torch.tensor(dy))
    return t.grad.numpy()


_CASES3 = [  # (input shape, attrs, pooled shape)
    ((1, 2, 5, 6, 7), _attrs3((2, 2, 2), (2, 2, 2), (0, 0, 0)), (1, 2, 2, 3, 3)),
    ((2, 1, 7, 5, 6), _attrs3((3, 3, 2), (2, 1, 2), (1, 1, 1), ceil=True), (2, 1, 4, 5, 4)),
]
for _name in ("max_pool3d", "max_pool3d_grad", "avg_pool3d", "avg_pool3d_grad",
              "max_pool_indices"):
    SAMPLES[_name] = []
for _i, (_shape, _a, _out) in enumerate(_CASES3):
    for _dt in (np.float32, np.float64):
        _x = values(_shape, _dt, seed=60 + _i)
        _dy = values(_out, _dt, seed=70 + _i)
        SAMPLES["max_pool3d"].append(Sample([_x], _a, _max3_ref))
        SAMPLES["max_pool3d_grad"].append(Sample([_x, _dy], _a, _max3_grad_ref))
        SAMPLES["max_pool_indices"].append(Sample([_x], _a, _indices_ref))
        for _inc in (True, False):
            _aa = dict(_a, count_include_pad=_inc)
            SAMPLES["avg_pool3d"].append(Sample([_x], _aa, _avg3_ref))
            SAMPLES["avg_pool3d_grad"].append(
                Sample([_dy], dict(_aa, input_size=_shape[2:]), _avg3_grad_ref))
SAMPLES["max_pool_indices"].append(
    Sample([values((2, 3, 7, 9), np.float32, seed=80)],
           dict(kernel=(3, 2), strides=(2, 2), pads=(1, 1, 1, 1), dilations=(1, 2),
                ceil_mode=True), _indices_ref))

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
    "max_pool3d": [Sample([values((1, 1, 4, 4), np.float32)],
                          _attrs3((2, 2, 2), (1, 1, 1), (0, 0, 0))),
                   Sample([values((1, 1, 4, 4, 4), np.int32)],
                          _attrs3((2, 2, 2), (1, 1, 1), (0, 0, 0)))],
    "avg_pool3d": [Sample([values((1, 1, 4, 4, 4), np.float32)],
                          dict(_attrs3((5, 2, 2), (1, 1, 1), (0, 0, 0)),
                               count_include_pad=True))],
    "max_pool3d_grad": [Sample([values((1, 1, 4, 4, 4), np.float32),
                                values((1, 1, 2, 2, 2), np.float32)],
                               _attrs3((2, 2, 2), (1, 1, 1), (0, 0, 0)))],
    "avg_pool3d_grad": [Sample([values((1, 1, 3, 3, 3), np.float32)],
                               dict(_attrs3((2, 2, 2), (1, 1, 1), (0, 0, 0)),
                                    count_include_pad=True, input_size=(5, 5, 5)))],
    "max_pool_indices": [Sample([values((1, 1, 4, 4), np.float32)],
                                dict(kernel=(2, 2), strides=(1, 1), pads=(2, 2, 2, 2),
                                     dilations=(1, 1), ceil_mode=False))],
}
