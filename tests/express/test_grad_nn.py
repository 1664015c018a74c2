"""Gradients of the NN ops (convolution, pooling, activations, softmax, resize) against
finite differences (float64) and torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mnn.expr as F
from test_grad_checker import check

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Finite differences run thousands of kernels on a few dozen elements; with two
    # threads on a busy machine the hand-offs cost 10x the work (the ops' own tests
    # cover the threaded paths).
    before = F.get_thread_number()
    F.set_thread_number(1)
    yield
    F.set_thread_number(before)

CONV = [
    # (input shape, weight shape, stride (x, y), padding (x, y), dilate (x, y), group)
    ((2, 2, 5, 4), (3, 2, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 2, 7, 7), (3, 2, 3, 2), (2, 1), (1, 2), (1, 1), 1),
    ((1, 2, 8, 7), (2, 2, 3, 3), (1, 1), (1, 1), (2, 2), 1),
    ((1, 4, 5, 5), (6, 2, 3, 3), (1, 2), (1, 0), (1, 1), 2),
    ((1, 3, 5, 4), (3, 1, 3, 3), (1, 1), (1, 1), (1, 1), 3),  # depthwise
    ((1, 3, 4, 4), (2, 3, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1
]


@pytest.mark.parametrize("case", CONV, ids=str)
def test_conv2d(case):
    xs, ws, stride, pad, dil, group = case
    x, w, b = RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])
    check(lambda a, k, c: F.conv2d(a, k, c, stride, pad, dil, group), [x, w, b],
          lambda a, k, c: TF.conv2d(a, k, c, stride[::-1], pad[::-1], dil[::-1], group))


def test_conv2d_same_padding():
    x, w = RNG.standard_normal((1, 2, 5, 6)), RNG.standard_normal((3, 2, 3, 3))
    check(lambda a, k: F.conv2d(a, k, None, (1, 1), (0, 0), (1, 1), 1, F.SAME), [x, w],
          lambda a, k: TF.conv2d(a, k, None, 1, "same"))


@pytest.mark.parametrize("stride,pad,group", [((1, 1), (0, 0), 1), ((2, 2), (1, 1), 1),
                                              ((2, 1), (0, 1), 2)], ids=str)
def test_conv2d_transpose(stride, pad, group):
    x = RNG.standard_normal((1, 4, 3, 3))
    w = RNG.standard_normal((4, 4 // group, 3, 3))
    b = RNG.standard_normal(4)
    check(lambda a, k, c: F.conv2d_transpose(a, k, c, stride, pad, (1, 1), group), [x, w, b],
          lambda a, k, c: TF.conv_transpose2d(a, k, c, stride[::-1], pad[::-1], 0, group))


def test_conv1d():
    x, w = RNG.standard_normal((2, 3, 9)), RNG.standard_normal((4, 3, 3))
    check(lambda a, k: F.conv1d(a, k, None, 2, 1, 1), [x, w],
          lambda a, k: TF.conv1d(a, k, None, 2, 1, 1))


@pytest.mark.parametrize("kernel,stride,pads", [((2, 2), (2, 2), (0, 0)),
                                                ((3, 3), (2, 2), (1, 1)),
                                                ((3, 2), (1, 2), (0, 0))], ids=str)
def test_max_pool(kernel, stride, pads):
    x = RNG.permutation(2 * 6 * 7).reshape(1, 2, 6, 7) * 0.1  # distinct: no ties
    check(lambda a: F.max_pool(a, kernel, stride, F.VALID, pads), [x],
          lambda a: TF.max_pool2d(a, kernel[::-1], stride[::-1], pads[::-1]))


@pytest.mark.parametrize("kernel,stride,pads,count_pad", [((2, 2), (2, 2), (0, 0), True),
                                                          ((3, 3), (2, 2), (1, 1), True),
                                                          ((3, 3), (2, 2), (1, 1), False)],
                         ids=str)
def test_avg_pool(kernel, stride, pads, count_pad):
    x = RNG.standard_normal((1, 2, 6, 7))
    check(lambda a: F.avg_pool(a, kernel, stride, F.VALID, pads, count_include_pad=count_pad),
          [x], lambda a: TF.avg_pool2d(a, kernel[::-1], stride[::-1], pads[::-1],
                                       count_include_pad=count_pad))


ACTIVATIONS = {
    "relu": (F.relu, TF.relu),
    "leaky relu": (lambda a: F.relu(a, 0.1), lambda a: TF.leaky_relu(a, 0.1)),
    "relu6": (F.relu6, TF.relu6),
    "elu": (lambda a: F.elu(a, 0.7), lambda a: TF.elu(a, 0.7)),
    "selu": (F.selu, TF.selu),
    "silu": (F.silu, TF.silu),
    "hardswish": (F.hardswish, TF.hardswish),
    "softplus": (F.softplus, TF.softplus),
    "softsign": (F.softsign, TF.softsign),
    "gelu_tanh": (F.gelu_tanh, lambda a: TF.gelu(a, approximate="tanh")),
    "softmax": (lambda a: F.softmax(a, 1), lambda a: torch.softmax(a, 1)),
    "log_softmax": (lambda a: F.log_softmax(a, -1), lambda a: torch.log_softmax(a, -1)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name):
    ours, theirs = ACTIVATIONS[name]
    x = RNG.uniform(-8, 8, (3, 5))
    # stay off the kinks (0 for relu-likes, 6 for relu6, +-3 for hardswish)
    for kink in (0.0, 6.0, 3.0, -3.0):
        x[np.abs(x - kink) < 0.05] += 0.2
    check(ours, [x], theirs)


def test_hardsigmoid_mnn_parameters():
    x = RNG.uniform(-4, 4, (3, 4))
    x[np.abs(np.abs(x) - 2.5) < 0.05] += 0.2
    # MNN's default alpha 0.2, beta 0.5 (ONNX's); torch's is alpha 1/6.
    check(F.hardsigmoid, [x], lambda a: torch.clamp(0.2 * a + 0.5, 0, 1))


def test_prelu():
    x = RNG.uniform(-2, 2, (2, 3, 4, 4))
    x[np.abs(x) < 0.05] = 0.3
    slopes = RNG.uniform(0.1, 0.5, 3)
    check(lambda a, s: F.prelu(a, s), [x, slopes], lambda a, s: TF.prelu(a, s))


def test_resize_gradient():
    # Forward semantics are the NN-ops tests' business; here only the gradient rule.
    x = RNG.standard_normal((1, 2, 3, 4))
    check(lambda a: F.resize(a, 2.0, 1.5), [x])
