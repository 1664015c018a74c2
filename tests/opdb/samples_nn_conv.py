"""Samples of the convolution ops (mnn/express/ops/nn_conv.py), referenced by torch.

Attributes are the op-level ones: strides/dilations (h, w), pads (top, left, bottom,
right), group, padding_mode (1 = VALID; 2 = SAME, pads from the input size), and the
optional fused clamp. Cases cover im2col, 1x1 GEMM, depthwise and Winograd shapes.
"""
import numpy as np
import torch
import torch.nn.functional as TF
from opdb_core import Sample, values


def _pad(t, pads):
    return TF.pad(t, (pads[1], pads[3], pads[0], pads[2]))


def _same_pads(hw, k, s, d):
    out = []
    for size, kk, ss, dd in zip(hw, k, s, d):
        o = -(-size // ss)
        total = max((o - 1) * ss + (kk - 1) * dd + 1 - size, 0)
        out.append((total // 2, total - total // 2))
    return (out[0][0], out[1][0], out[0][1], out[1][1])


def _resolve(hw, k, strides, dilations, pads, padding_mode):
    return _same_pads(hw, k, strides, dilations) if padding_mode == 2 else pads


def _conv_ref(x, w, *bias, strides, pads, dilations, group, padding_mode, clamp=None):
    pads = _resolve(x.shape[2:], w.shape[2:], strides, dilations, pads, padding_mode)
    b = torch.tensor(bias[0]) if bias else None
    y = TF.conv2d(_pad(torch.tensor(x), pads), torch.tensor(w), b, strides, 0, dilations,
                  group)
    if clamp is not None:
        y = torch.clamp(y, clamp[0], clamp[1])
    return y.numpy()


def _bpi_ref(dy, w, input_hw, strides, pads, dilations, group, padding_mode):
    pads = _resolve(input_hw, w.shape[2:], strides, dilations, pads, padding_mode)
    shape = (dy.shape[0], w.shape[1] * group) + tuple(input_hw)
    x = torch.zeros(shape, dtype=torch.tensor(dy).dtype, requires_grad=True)
    y = TF.conv2d(_pad(x, pads), torch.tensor(w), None, strides, 0, dilations, group)
    y.backward(torch.tensor(dy))
    return x.grad.numpy()


def _bpf_ref(x, dy, kernel, strides, pads, dilations, group, padding_mode):
    pads = _resolve(x.shape[2:], kernel, strides, dilations, pads, padding_mode)
    shape = (dy.shape[1], x.shape[1] // group) + tuple(kernel)
    w = torch.zeros(shape, dtype=torch.tensor(x).dtype, requires_grad=True)
    y = TF.conv2d(_pad(torch.tensor(x), pads), w, None, strides, 0, dilations, group)
    y.backward(torch.tensor(dy))
    return w.grad.numpy()


def _attrs(s=(1, 1), p=(0, 0, 0, 0), d=(1, 1), g=1, mode=1, **extra):
    return dict(strides=s, pads=p, dilations=d, group=g, padding_mode=mode, **extra)


_F32 = dict(rtol=1e-4, atol=1e-4)  # torch sums in another order (and Winograd in ours)

SAMPLES = {
    "conv2d": [
        Sample([values((1, 3, 7, 9), np.float32, seed=1), values((4, 3, 3, 3), np.float32,
                seed=2), values((4,), np.float32, seed=3)], _attrs(p=(1, 1, 1, 1)), _conv_ref,
               **_F32, note="im2col"),
        Sample([values((2, 4, 6, 5), np.float64, seed=4), values((6, 2, 2, 3), np.float64,
                seed=5)], _attrs(s=(2, 1), p=(0, 1, 1, 0), g=2), _conv_ref, note="groups"),
        Sample([values((1, 6, 9, 8), np.float32, seed=6), values((6, 1, 3, 3), np.float32,
                seed=7)], _attrs(s=(2, 2), d=(2, 1), p=(2, 1, 2, 1), g=6), _conv_ref, **_F32,
               note="depthwise"),
        Sample([values((2, 5, 4, 3), np.float64, seed=8), values((7, 5, 1, 1), np.float64,
                seed=9), values((7,), np.float64, seed=10)], _attrs(clamp=(0.0, 6.0)),
               _conv_ref, note="1x1 relu6"),
        Sample([values((1, 16, 12, 13), np.float32, seed=11), values((16, 16, 3, 3),
                np.float32, seed=12), values((16,), np.float32, seed=13)],
               _attrs(p=(1, 1, 1, 1)), _conv_ref, **_F32, note="winograd"),
        Sample([values((1, 2, 7, 8), np.float64, seed=14), values((3, 2, 3, 3), np.float64,
                seed=15)], _attrs(s=(2, 2), mode=2), _conv_ref, note="SAME"),
        Sample([values((1, 1, 1, 1), np.float32, seed=16), values((1, 1, 1, 1), np.float32,
                seed=17)], _attrs(), _conv_ref, note="size-1"),
    ],
    "conv2d_backprop_input": [
        Sample([values((2, 4, 4, 3), np.float64, seed=20), values((4, 3, 3, 2), np.float64,
                seed=21)], dict(input_hw=(8, 6), **_attrs(s=(2, 2), p=(1, 0, 0, 0))),
               _bpi_ref),
        Sample([values((1, 6, 5, 5), np.float32, seed=22), values((6, 1, 3, 3), np.float32,
                seed=23)], dict(input_hw=(5, 5), **_attrs(p=(1, 1, 1, 1), g=6)), _bpi_ref,
               **_F32, note="depthwise"),
        Sample([values((1, 4, 3, 3), np.float64, seed=24), values((4, 2, 1, 1), np.float64,
                seed=25)], dict(input_hw=(3, 3), **_attrs(g=2)), _bpi_ref, note="1x1"),
    ],
    "conv2d_backprop_filter": [
        Sample([values((2, 3, 8, 6), np.float64, seed=30), values((2, 4, 4, 3), np.float64,
                seed=31)], dict(kernel=(3, 2), **_attrs(s=(2, 2), p=(1, 0, 0, 0))), _bpf_ref),
        Sample([values((2, 6, 5, 5), np.float32, seed=32), values((2, 6, 5, 5), np.float32,
                seed=33)], dict(kernel=(3, 3), **_attrs(p=(1, 1, 1, 1), g=6)), _bpf_ref,
               **_F32, note="depthwise"),
        Sample([values((1, 4, 3, 3), np.float64, seed=34), values((1, 6, 3, 3), np.float64,
                seed=35)], dict(kernel=(1, 1), **_attrs(g=2)), _bpf_ref, note="1x1"),
    ],
}

REJECTS = {
    "conv2d": [
        Sample([values((1, 3, 5, 5), np.float32), values((4, 2, 3, 3), np.float32)], _attrs()),
        Sample([values((1, 3, 2, 2), np.float32), values((4, 3, 3, 3), np.float32)], _attrs()),
        Sample([values((1, 1, 4, 4), np.int32), values((1, 1, 1, 1), np.int32)], _attrs()),
        Sample([values((1, 1, 4, 4), np.float32), values((1, 1, 1, 1), np.float64)], _attrs()),
        Sample([values((3, 4, 4), np.float32), values((1, 3, 1, 1), np.float32)], _attrs()),
    ],
    "conv2d_backprop_input": [
        Sample([values((1, 4, 4, 4), np.float32), values((4, 3, 3, 3), np.float32)],
               dict(input_hw=(9, 9), **_attrs())),
    ],
    "conv2d_backprop_filter": [
        Sample([values((1, 3, 6, 6), np.float32), values((1, 4, 5, 5), np.float32)],
               dict(kernel=(3, 3), **_attrs())),
    ],
}
