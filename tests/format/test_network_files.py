"""A small MobileNetV2-style network (inverted residuals: 1x1 expand, depthwise 3x3, 1x1
project, relu6, skip adds, global pooling, classifier) in torch and in mnn.express with the
same weights: exported by torch and converted by the real wheel, read by us; built from
express ops, written by us (float and 8-bit), run by the real wheel."""

import io as _io

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run

from mnn.express import io

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
nn = torch.nn

# (expand ratio, out channels, stride) of each inverted residual block
_BLOCKS = [(1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1)]


class _Block(nn.Module):
    def __init__(self, cin, expand, cout, stride):
        super().__init__()
        hidden = cin * expand
        self.expand = nn.Conv2d(cin, hidden, 1) if expand != 1 else None
        self.dw = nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden)
        self.project = nn.Conv2d(hidden, cout, 1)
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        y = x if self.expand is None else nn.functional.relu6(self.expand(x))
        y = self.project(nn.functional.relu6(self.dw(y)))
        return x + y if self.skip else y


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 2, 1)
        blocks, cin = [], 16
        for expand, cout, stride in _BLOCKS:
            blocks.append(_Block(cin, expand, cout, stride))
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 10)

    def forward(self, x):
        x = self.blocks(nn.functional.relu6(self.stem(x)))
        return self.fc(x.mean((2, 3)))


def _w(t):
    return F.const(t.detach().numpy().astype(np.float32))


def _conv(conv, x, relu6):
    y = F.conv2d(
        x, _w(conv.weight), _w(conv.bias), conv.stride[::-1], conv.padding[::-1], group=conv.groups
    )
    return F.relu6(y) if relu6 else y


def _express(net, x):
    y = _conv(net.stem, x, True)
    for block in net.blocks:
        h = y if block.expand is None else _conv(block.expand, y, True)
        h = _conv(block.project, _conv(block.dw, h, True), False)
        y = y + h if block.skip else h
    pooled = F.reshape(F.reduce_mean(y, [2, 3], True), [1, -1])
    return F.matmul(pooled, _w(net.fc.weight), False, True) + _w(net.fc.bias)


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return _Net().eval()


@pytest.fixture
def image(rng):
    return rng.standard_normal((1, 3, 64, 64)).astype(np.float32)


def test_converted_network_matches_wheel_and_torch(net, image, tmp_path):
    buf = _io.BytesIO()
    torch.onnx.export(
        net,
        torch.zeros(1, 3, 64, 64),
        buf,
        input_names=["x"],
        output_names=["y"],
        dynamo=False,
        opset_version=13,
    )
    path = convert_onnx(onnx.load_from_string(buf.getvalue()), tmp_path)
    with torch.no_grad():
        expect = net(torch.from_numpy(image)).numpy()
    (theirs,) = wheel_run(path, {"x": image}, ["y"])
    (ours,) = ours_run(path, {"x": image}, ["y"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("options", [{}, {"weight_quant_bits": 8}], ids=["float", "q8"])
def test_written_network_runs_in_wheel(net, image, options, tmp_path):
    x = F.placeholder([1, 3, 64, 64])
    x.name = "x"
    y = _express(net, x)
    x.write(image)
    exact = y.read()
    with torch.no_grad():
        np.testing.assert_allclose(
            exact, net(torch.from_numpy(image)).numpy(), rtol=1e-4, atol=1e-5
        )
    path = str(tmp_path / "m.mnn")
    io.save({"y": y}, path, **options)
    (theirs,) = wheel_run(path, {"x": image}, ["y"])
    (ours,) = ours_run(path, {"x": image}, ["y"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    tol = 1e-5 if not options else 0.05 * np.abs(exact).max()
    np.testing.assert_allclose(ours, exact, rtol=1e-4, atol=tol)
