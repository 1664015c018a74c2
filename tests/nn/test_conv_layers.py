"""nn.conv / nn.conv_transpose against torch with the same weights (values and
gradients), MNN's weight layouts and initialiser."""
import numpy as np
import pytest
import torch

import mnn
import mnn.expr as F
from mnn import nn

RNG = np.random.default_rng(6)


def _compare(layer, tlayer, x, rtol=1e-4, atol=1e-4):
    with torch.no_grad():
        tlayer.weight.copy_(torch.from_numpy(layer.weight.read()))
        tlayer.bias.copy_(torch.from_numpy(layer.bias.read()))
    tx = torch.from_numpy(x).requires_grad_()
    ty = tlayer(tx)
    w = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    (ty * torch.from_numpy(w)).sum().backward()
    xv = F.const(x)
    y = layer(xv)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=rtol, atol=atol)
    gx, gw, gb = [g.read() for g in F.grad(F.reduce_sum(y * F.const(w)),
                                          [xv, layer.weight, layer.bias])]
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(gw, tlayer.weight.grad.numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(gb, tlayer.bias.grad.numpy(), rtol=rtol, atol=atol)


def test_conv_matches_torch_with_stride_padding_dilation():
    layer = nn.conv(3, 4, [3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1])
    w = layer.weight.read()
    assert w.shape == (4, 3, 3, 3) and layer.bias.shape == [4]
    limit = np.sqrt(3.0 / 27)  # xavier on fan in 3 * 3 * 3
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.5 * limit
    tl = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
    _compare(layer, tl, RNG.standard_normal((2, 3, 9, 8)).astype(np.float32))


def test_conv_non_square_kernel_is_x_then_y():
    layer = nn.conv(2, 3, [3, 1], dilation=[2, 1])  # MNN order: (x, y)
    assert layer.weight.shape == [3, 2, 1, 3]
    tl = torch.nn.Conv2d(2, 3, (1, 3), dilation=(1, 2))
    _compare(layer, tl, RNG.standard_normal((1, 2, 5, 9)).astype(np.float32))


def test_depthwise_conv():
    layer = nn.conv(4, 4, [3, 3], padding=[1, 1], depthwise=True)
    assert layer.weight.shape == [4, 1, 3, 3]
    tl = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)
    _compare(layer, tl, RNG.standard_normal((2, 4, 6, 6)).astype(np.float32))
    with pytest.raises(mnn.expr.MnnError, match="depthwise"):
        nn.conv(4, 8, 3, depthwise=True)


def test_conv_transpose_matches_torch():
    layer = nn.conv_transpose(3, 2, [3, 3], stride=[2, 2], padding=[1, 1])
    assert layer.weight.shape == [3, 2, 3, 3]
    tl = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    _compare(layer, tl, RNG.standard_normal((2, 3, 4, 5)).astype(np.float32))


def test_conv_checks_input_channels():
    with pytest.raises(mnn.expr.MnnError, match=r"\[N, 3, H, W\]"):
        nn.conv(3, 2, 3)(F.const(np.zeros((1, 2, 5, 5), np.float32)))
