"""MobileNetV2 and ResNet18, written by hand in torch and rebuilt from mnn.express ops with
the same weights (torchvision does not work beside this torch build).

The torch models are the reference architectures (torchvision's layer layout). The mnn
versions are built from the trained-or-random torch modules: each conv + batch norm (+ relu)
becomes one ``conv2d`` with the norm folded into its weight and bias and the activation
fused, as an inference converter (ours, MNN's, onnxruntime's optimizer) does.
"""
import mnn.expr as F
import numpy as np
import torch
from torch import nn

__all__ = ["MobileNetV2", "ResNet18", "build_mnn", "export_onnx"]


class ConvBN(nn.Module):
    """conv (no bias) + batch norm + optional activation ("relu", "relu6" or None)."""

    def __init__(self, cin, cout, k, stride=1, groups=1, act="relu"):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act == "relu":
            return torch.relu(x)
        if self.act == "relu6":
            return torch.clamp(x, 0.0, 6.0)
        return x


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers.append(ConvBN(cin, hidden, 1, act="relu6"))
        layers += [ConvBN(hidden, hidden, 3, stride, groups=hidden, act="relu6"),
                   ConvBN(hidden, cout, 1, act=None)]
        self.layers = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.layers(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        blocks = [ConvBN(3, 32, 3, 2, act="relu6")]
        cin = 32
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                blocks.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        blocks.append(ConvBN(cin, 1280, 1, act="relu6"))
        self.features = nn.Sequential(*blocks)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(x.mean((2, 3)))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = ConvBN(cin, cout, 3, stride)
        self.b = ConvBN(cout, cout, 3, act=None)
        self.down = ConvBN(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout \
            else None

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        return torch.relu(self.b(self.a(x)) + skip)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = ConvBN(3, 64, 7, 2)
        self.pool = nn.MaxPool2d(3, 2, 1)
        blocks, cin = [], 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.pool(self.stem(x)))
        return self.fc(x.mean((2, 3)))


def randomize_bn(model, seed=0):
    """Give every batch norm non-trivial statistics (random init leaves them at 0/1)."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


# ---------------------------------------------------------------------------------------
# the same networks from mnn.express ops


def _np(t):
    return t.detach().numpy().astype(np.float32)


def _conv_bn(m, x):
    conv, bn = m.conv, m.bn
    scale = _np(bn.weight) / np.sqrt(_np(bn.running_var) + bn.eps)
    w = _np(conv.weight) * scale[:, None, None, None]
    b = _np(bn.bias) - _np(bn.running_mean) * scale
    s, p = conv.stride[0], conv.padding[0]
    # The activation is fused into the convolution (as converters do with MNN's relu /
    # relu6 flags and onnxruntime's optimizer does with FusedConv).
    return F.conv2d(x, F.const(np.ascontiguousarray(w)), F.const(b), (s, s), (p, p),
                    group=conv.groups, activation=m.act)


def _linear(fc, x):
    return F.matmul(x, F.const(np.ascontiguousarray(_np(fc.weight).T))) + F.const(_np(fc.bias))


def _mnn_module(m, x):
    if isinstance(m, ConvBN):
        return _conv_bn(m, x)
    if isinstance(m, nn.Sequential):
        for sub in m:
            x = _mnn_module(sub, x)
        return x
    if isinstance(m, InvertedResidual):
        y = _mnn_module(m.layers, x)
        return x + y if m.residual else y
    if isinstance(m, BasicBlock):
        skip = x if m.down is None else _conv_bn(m.down, x)
        return F.relu(_conv_bn(m.b, _conv_bn(m.a, x)) + skip)
    if isinstance(m, nn.MaxPool2d):
        return F.max_pool(x, (3, 3), (2, 2), pads=(1, 1))
    raise TypeError(f"no mnn mapping for {type(m).__name__}")


def build_mnn(model, x):
    """The mnn graph of ``model`` (MobileNetV2 or ResNet18) on Var ``x`` (NCHW)."""
    if isinstance(model, MobileNetV2):
        feats = _mnn_module(model.features, x)
    else:
        feats = _mnn_module(model.blocks, _mnn_module(model.pool, _mnn_module(model.stem, x)))
    pooled = F.reshape(F.global_avg_pool(feats), [x.shape[0], -1])
    return _linear(model.fc, pooled)


def export_onnx(model, path, shape=(1, 3, 224, 224)):
    """Export ``model`` to ONNX (TorchScript exporter: onnxscript is not installed)."""
    torch.onnx.export(model, torch.zeros(shape), path, input_names=["x"],
                      output_names=["y"], dynamo=False, opset_version=17)
