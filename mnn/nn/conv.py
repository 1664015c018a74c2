"""Convolution layers: ``conv`` (plain, grouped-as-depthwise) and ``conv_transpose``.

Arguments follow pymnn's ``nn.conv``: sizes, strides, pads and dilations are MNN pairs
in ``(x, y)`` order (width first) or one int for both; ``padding_mode`` is
``F.Padding_Mode`` (``VALID`` with explicit pads by default, as MNN). Weights are
initialised with MNN's xavier filler (fan in = in_channels * kernel area), biases with
zeros.
"""
import numpy as np

from .. import express as F
from ..express.errors import MnnError
from . import init
from .layers import trainable
from .module import Module

__all__ = ["conv", "conv_transpose", "Conv", "ConvTranspose"]


def _pair(value, what):
    if isinstance(value, (int, np.integer)):
        return [int(value), int(value)]
    vals = [int(v) for v in value]
    if len(vals) != 2:
        raise MnnError(f"mnn: conv: {what} must be one int or a pair (x, y), got {vals}")
    return vals


def _pads(value):
    if isinstance(value, (int, np.integer)):
        return [int(value), int(value)]
    vals = [int(v) for v in value]
    if len(vals) not in (2, 4):
        raise MnnError(f"mnn: conv: padding must be (x, y) or (top, left, bottom, right), "
                       f"got {vals}")
    return vals


class _ConvBase(Module):
    def __init__(self, kind, in_channels, out_channels, kernel_size, stride, padding,
                 dilation, depthwise, padding_mode):
        super().__init__()
        self._type = kind
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        if self.in_channels <= 0 or self.out_channels <= 0:
            raise MnnError(f"mnn: {kind.lower()}: channels must be positive, got "
                           f"{in_channels} and {out_channels}")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        if min(self.kernel_size) <= 0:
            raise MnnError(f"mnn: {kind.lower()}: kernel_size must be positive, got "
                           f"{self.kernel_size}")
        self.stride = _pair(stride, "stride")
        self.padding = _pads(padding)
        self.dilation = _pair(dilation, "dilation")
        self.depthwise = bool(depthwise)
        self.padding_mode = padding_mode
        if self.depthwise and self.in_channels != self.out_channels:
            raise MnnError(f"mnn: {kind.lower()}: depthwise needs in_channels == "
                           f"out_channels, got {in_channels} and {out_channels}")
        self.group = self.in_channels if self.depthwise else 1

    def _initial_weight(self):
        # MNN's layout [out, in / group, ky, kx]; xavier's fan in is the product after
        # the first axis.
        kx, ky = self.kernel_size
        in_per_group = 1 if self.depthwise else self.in_channels
        return init.xavier([self.out_channels, in_per_group, ky, kx])

    def _check_input(self, x):
        x = F.to_var(x)
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise MnnError(f"mnn: {self._type.lower()}({self.in_channels}, "
                           f"{self.out_channels}): input must be [N, {self.in_channels}, "
                           f"H, W], got {x.shape}")
        return x


class Conv(_ConvBase):
    """2-D convolution layer; weight ``[out, in, ky, kx]`` (``[C, 1, ky, kx]`` when
    depthwise), bias ``[out]``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1),
                 padding=(0, 0), dilation=(1, 1), depthwise=False, bias=True,
                 padding_mode=None):
        super().__init__("Conv", in_channels, out_channels, kernel_size, stride, padding,
                         dilation, depthwise,
                         F.Padding_Mode.VALID if padding_mode is None else padding_mode)
        self.weight = trainable(self._initial_weight())
        self.bias = trainable(init.constant([self.out_channels])) if bias else None

    def forward(self, x):
        """``[N, in, H, W]`` to ``[N, out, OH, OW]``."""
        x = self._check_input(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.group, self.padding_mode)


class ConvTranspose(_ConvBase):
    """Transposed 2-D convolution layer; weight ``[in, out, ky, kx]`` (MNN transposes the
    initialised ``[out, in, ky, kx]``), bias ``[out]``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1),
                 padding=(0, 0), dilation=(1, 1), depthwise=False, bias=True,
                 padding_mode=None):
        super().__init__("ConvTranspose", in_channels, out_channels, kernel_size, stride,
                         padding, dilation, depthwise,
                         F.Padding_Mode.VALID if padding_mode is None else padding_mode)
        w = self._initial_weight()
        self.weight = trainable(w if self.depthwise else np.ascontiguousarray(
            w.transpose(1, 0, 2, 3)))
        self.bias = trainable(init.constant([self.out_channels])) if bias else None

    def forward(self, x):
        """``[N, in, H, W]`` to ``[N, out, OH, OW]`` (upsampled by the stride)."""
        x = self._check_input(x)
        return F.conv2d_transpose(x, self.weight, self.bias, self.stride, self.padding,
                                  self.dilation, self.group, self.padding_mode)


def conv(in_channels, out_channels, kernel_size, stride=(1, 1), padding=(0, 0),
         dilation=(1, 1), depthwise=False, bias=True, padding_mode=None):
    """A 2-D convolution layer (pymnn's ``nn.conv``).

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or pair (x, y)
    stride, dilation : int or pair (x, y)
    padding : int, pair (x, y) or (top, left, bottom, right)
    depthwise : bool
        One filter per channel (needs ``in_channels == out_channels``).
    bias : bool
    padding_mode : F.Padding_Mode, default VALID (explicit pads)

    Returns
    -------
    Module
        Maps ``[N, in, H, W]`` to ``[N, out, OH, OW]``.
    """
    return Conv(in_channels, out_channels, kernel_size, stride, padding, dilation, depthwise,
                bias, padding_mode)


def conv_transpose(in_channels, out_channels, kernel_size, stride=(1, 1), padding=(0, 0),
                   dilation=(1, 1), depthwise=False, bias=True, padding_mode=None):
    """A transposed 2-D convolution layer (MNN's ``NN::ConvTranspose``); arguments as
    :func:`conv`. Output size ``(H - 1) * stride - pads + dilation * (k - 1) + 1``."""
    return ConvTranspose(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         depthwise, bias, padding_mode)
