"""Hand-written torch models (torchvision is not usable beside torch 2.13) exported to ONNX
with random weights, for the whole-model converter tests and benchmarks/bench_convert.py.

Every exporter call uses ``torch.onnx.export(..., dynamo=False)``; each model's BatchNorm
statistics are randomised so folding them is actually exercised.
"""
import os
import warnings

import numpy as np
import torch
from torch import nn
from torch.nn import functional as tf


def _conv_bn(cin, cout, k, stride=1, groups=1, act=True, relu6=False):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6() if relu6 else nn.ReLU())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [_conv_bn(cin, hidden, 1, relu6=True)]
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden, relu6=True),
                   _conv_bn(hidden, cout, 1, act=False)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """MobileNetV2 (width 1.0, 1000 classes): 3.5 M parameters."""

    def __init__(self, classes=1000):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
               (6, 160, 3, 2), (6, 320, 1, 1)]
        layers, cin = [_conv_bn(3, 32, 3, 2, relu6=True)], 32
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(_conv_bn(cin, 1280, 1, relu6=True))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = self.features(x)
        x = tf.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = _conv_bn(cin, cout, 3, stride)
        self.b = _conv_bn(cout, cout, 3, act=False)
        self.down = None if stride == 1 and cin == cout else _conv_bn(cin, cout, 1, stride,
                                                                      act=False)

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        return torch.relu(self.b(self.a(x)) + skip)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(_conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(tf.adaptive_avg_pool2d(x, 1), 1))


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.e1 = nn.Conv2d(squeeze, expand, 1)
        self.e3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)


class SqueezeNet(nn.Module):
    """SqueezeNet 1.1 (ceil-mode max pooling, concatenated expand branches)."""

    def __init__(self, classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(64, 16, 64), Fire(128, 16, 64), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(128, 32, 128), Fire(256, 32, 128), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(256, 48, 192), Fire(384, 48, 192), Fire(384, 64, 256), Fire(512, 64, 256))
        self.head = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(512, classes, 1), nn.ReLU())

    def forward(self, x):
        return torch.flatten(tf.adaptive_avg_pool2d(self.head(self.features(x)), 1), 1)


def _shuffle(x, groups):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride == 2:
            self.left = nn.Sequential(_conv_bn(cin, cin, 3, 2, groups=cin, act=False),
                                      _conv_bn(cin, half, 1))
            right_in = cin
        else:
            right_in = half
        self.right = nn.Sequential(_conv_bn(right_in, half, 1),
                                   _conv_bn(half, half, 3, stride, groups=half, act=False),
                                   _conv_bn(half, half, 1))

    def forward(self, x):
        if self.stride == 1:
            a, b = x.chunk(2, dim=1)
            out = torch.cat([a, self.right(b)], 1)
        else:
            out = torch.cat([self.left(x), self.right(x)], 1)
        return _shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """ShuffleNetV2 x1.0 (split, channel shuffle by reshape/transpose)."""

    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(_conv_bn(3, 24, 3, 2), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], 24
        for cout, repeat in ((116, 4), (232, 8), (464, 4)):
            stages.append(ShuffleUnit(cin, cout, 2))
            stages += [ShuffleUnit(cout, cout, 1) for _ in range(repeat - 1)]
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.last = _conv_bn(cin, 1024, 1)
        self.fc = nn.Linear(1024, classes)

    def forward(self, x):
        x = self.last(self.stages(self.stem(x)))
        return self.fc(x.mean([2, 3]))


class TransformerEncoder(nn.Module):
    """Two pre-norm encoder layers: multi-head attention, layer norm, GELU MLP."""

    def __init__(self, dim=64, heads=4, layers=2, vocab=100):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens):
        return self.norm(self.encoder(self.embed(tokens)))


class LSTMModel(nn.Module):
    def __init__(self, inp=16, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class LoopIf(nn.Module):
    """A scripted model: a data-dependent loop count (Loop) and a branch (If)."""

    def forward(self, x, n: int):
        acc = torch.zeros_like(x)
        for i in range(n):
            acc = acc * 0.5 + torch.tanh(x + float(i))
        if bool(acc.sum() > 0):
            out = acc * 2.0
        else:
            out = acc - 1.0
        return out


def _randomise_bn(model, seed):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)


def _feeds(name, inputs):
    return {n: a for n, a in zip(MODELS[name]["inputs"], inputs)}


MODELS = {
    "mobilenet_v2": dict(make=MobileNetV2, inputs=["input"], shapes=[(1, 3, 96, 96)]),
    "resnet18": dict(make=ResNet18, inputs=["input"], shapes=[(1, 3, 64, 64)]),
    "squeezenet": dict(make=SqueezeNet, inputs=["input"], shapes=[(1, 3, 96, 96)]),
    "shufflenet_v2": dict(make=ShuffleNetV2, inputs=["input"], shapes=[(1, 3, 96, 96)]),
    "transformer": dict(make=TransformerEncoder, inputs=["tokens"], shapes=[(2, 12)]),
    "lstm": dict(make=LSTMModel, inputs=["input"], shapes=[(2, 7, 16)]),
    "loop_if": dict(make=LoopIf, inputs=["x", "n"], shapes=[(3, 4), ()], scripted=True),
}


def example_inputs(name, seed=0):
    """numpy inputs for model ``name`` (token ids for the transformer, a count for Loop)."""
    rng = np.random.default_rng(seed)
    spec = MODELS[name]
    if name == "transformer":
        return [rng.integers(0, 100, spec["shapes"][0]).astype(np.int64)]
    if name == "loop_if":
        return [rng.normal(size=spec["shapes"][0]).astype(np.float32),
                np.array(3, dtype=np.int64)]
    return [rng.normal(size=s).astype(np.float32) for s in spec["shapes"]]


def export(name, folder, seed=0, shape=None):
    """Export model ``name`` with random weights to ``folder/name.onnx``; returns the path.

    ``shape`` overrides the first input's shape (e.g. 224x224 for the benchmarks).
    """
    spec = MODELS[name]
    torch.manual_seed(seed)
    model = spec["make"]().eval()
    _randomise_bn(model, seed)
    path = os.path.join(folder, f"{name}.onnx")
    inputs = example_inputs(name, seed)
    if shape is not None:
        inputs[0] = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
    args = tuple(torch.from_numpy(a) if a.ndim else int(a) for a in inputs)
    if spec.get("scripted"):
        model = torch.jit.script(model)
        args = (torch.from_numpy(inputs[0]), torch.tensor(int(inputs[1])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, dynamo=False, input_names=spec["inputs"],
                          output_names=["output"], opset_version=17)
    return path
