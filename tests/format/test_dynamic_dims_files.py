"""Dynamic input dims stay dynamic: a model exported with symbolic batch/height/width
converts without --inputConfigFile, its .mnn keeps -1 dims (as the real converter's file
does), and both our loader and the real MNN wheel run it at several shapes, matching
onnxruntime."""

import io
import os

import format_oracle
import numpy as np
import pytest

MNN = format_oracle.MNN
torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

import mnn.expr as F

from converter.cli import main as mnnconvert
from mnn import nn as mnn_nn
from mnn.express.graph import partial_shape
from mnn.format.reader import load_graph

SHAPES = [(1, 3, 16, 16), (3, 3, 20, 28)]


class _ConvNet(torch.nn.Module):
    """Conv, BatchNorm, ReLU, max/average pooling and ``view(N, -1)`` (a Shape chain)."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.c2 = torch.nn.Conv2d(8, 6, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(6, 5)

    def forward(self, x):
        y = self.pool(torch.relu(self.bn(self.c1(x))))
        y = torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.c2(y)), 1)
        y = y.view(y.size(0), -1)
        return torch.softmax(self.fc(y), -1)


class _MeanNet(torch.nn.Module):
    """Conv then a mean over the dynamic spatial dims (ReduceMean), then a linear layer."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.c(x)).mean((2, 3)))


class _Encoder(torch.nn.Module):
    """A transformer encoder layer (attention reshapes built from Shape chains)."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                                      batch_first=True, activation="gelu")

    def forward(self, x):
        return self.layer(x)


class _SuperRes(torch.nn.Module):
    """PReLU, GroupNorm, a SAME-padded conv and PixelShuffle (DepthToSpace CRD): handlers
    that read only the static channel count of a dynamically shaped input."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding="same")
        self.act = torch.nn.PReLU(8)
        self.norm = torch.nn.GroupNorm(2, 8)
        self.c2 = torch.nn.Conv2d(8, 12, 3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.c2(self.norm(self.act(self.c1(x)))))


class _Tagger(torch.nn.Module):
    """A bidirectional LSTM over a dynamic batch and sequence, then a linear layer and a
    flatten of (batch, seq, tags)."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(16, 8, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(16, 3)

    def forward(self, x):
        return torch.flatten(self.fc(self.rnn(x)[0]), 1)


class _Pooled(torch.nn.Module):
    """Max pooling with indices (windows as strided slices) and Lp pooling (a depthwise
    convolution of |x|^p): handlers that once needed static shapes."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2, return_indices=True)
        self.c2 = torch.nn.Conv2d(6, 6, 3, padding=1)
        self.lp = torch.nn.LPPool2d(2, 3, stride=1)

    def forward(self, x):
        y, idx = self.pool(torch.relu(self.c1(x)))
        y = self.lp(self.c2(y))
        return torch.cat([y.flatten(1), idx.flatten(1).float()], 1)


class _Volume(torch.nn.Module):
    """3-d convolution, max and average pooling and a transposed 3-d convolution over a
    dynamic batch, depth, height and width."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv3d(2, 4, 3, padding=1, stride=(1, 2, 2))
        self.max = torch.nn.MaxPool3d(2)
        self.avg = torch.nn.AvgPool3d(2, stride=1, padding=1)
        self.up = torch.nn.ConvTranspose3d(4, 3, 2, stride=2)

    def forward(self, x):
        return self.up(self.avg(self.max(torch.relu(self.conv(x)))))


class _VolumeCeil(torch.nn.Module):
    """3-d max pooling with indices and average pooling, both in ceil mode with explicit
    pads, over a dynamic batch, depth, height and width."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv3d(2, 3, 3, padding=1)
        self.max = torch.nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True,
                                      return_indices=True)
        self.avg = torch.nn.AvgPool3d(2, stride=2, ceil_mode=True)

    def forward(self, x):
        y, idx = self.max(torch.relu(self.conv(x)))
        return torch.cat([self.avg(y).flatten(1), idx.flatten(1).float()], 1)


class _Parts(torch.nn.Module):
    """``split`` with constant sizes along an axis exported as dynamic (its size is their
    sum at run time), the parts mixed again."""

    def forward(self, x):
        a, b, c = x.split([1, 3, 2], dim=1)
        return torch.cat([c * 2, a - b.sum(1, keepdim=True)], 1)


class _AnyChannels(torch.nn.Module):
    """Every input dim exported dynamic, the channel count too: an average pooling
    counting padding (window sums) on the input, then a convolution (its input pinned to
    the weight's channels), group norm, pooling and a flatten. (torch exports
    LocalResponseNorm as an If on the rank, whose branches read values of run-time
    shape: not converted with dynamic dims.)"""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 6, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 6)

    def forward(self, x):
        y = torch.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=True)
        y = self.norm(self.conv(y))
        return torch.nn.functional.max_pool2d(y, 2).flatten(1)


class _AlexStem(torch.nn.Module):
    """AlexNet's stem: convolution, ReLU, LocalResponseNorm (torch exports an ``If`` on
    ``x.size(1) == 1`` in it: a static channel count folds it) and max pooling."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 5, stride=2, padding=2)
        self.lrn = torch.nn.LocalResponseNorm(5, alpha=1e-3, k=2.0)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(self.lrn(torch.relu(self.conv(x))), 3, 2)


class _Squeezed(torch.nn.Module):
    """``squeeze()`` without dims (a batch of 1 at run time is squeezed too), a clip and a
    sum over the last axis."""

    def forward(self, x):
        return torch.nn.functional.hardtanh(x.squeeze()).sum(-1)


# net -> (export shape, dynamic axes of x, opset, shapes run)
_SETUPS = {
    "_ConvNet": ((2, 3, 16, 16), {0: "N", 2: "H", 3: "W"}, 13, SHAPES),
    "_MeanNet": ((2, 3, 16, 16), {0: "N", 2: "H", 3: "W"}, 13, SHAPES),
    "_Encoder": ((2, 5, 16), {0: "N"}, 17, [(1, 5, 16), (4, 5, 16)]),
    "_SuperRes": ((2, 3, 16, 16), {0: "N", 2: "H", 3: "W"}, 18, SHAPES),
    "_Tagger": ((2, 5, 16), {0: "N", 1: "S"}, 14, [(1, 7, 16), (3, 2, 16)]),
    "_Pooled": ((2, 3, 16, 16), {0: "N", 2: "H", 3: "W"}, 17, [(1, 3, 16, 20), (3, 3, 12, 8)]),
    "_Volume": ((2, 2, 8, 8, 8), {0: "N", 2: "D", 3: "H", 4: "W"}, 17,
                [(1, 2, 8, 8, 8), (2, 2, 12, 8, 16)]),
    "_Squeezed": ((2, 1, 5), {0: "N", 2: "L"}, 17, [(1, 1, 5), (3, 1, 7)]),
    "_VolumeCeil": ((2, 2, 7, 6, 9), {0: "N", 2: "D", 3: "H", 4: "W"}, 17,
                    [(1, 2, 7, 6, 9), (2, 2, 6, 9, 4)]),
    "_AnyChannels": ((2, 4, 8, 8), {0: "N", 1: "C", 2: "H", 3: "W"}, 17,
                     [(1, 4, 16, 12), (3, 4, 8, 20)]),
    "_AlexStem": ((2, 3, 16, 16), {0: "N", 2: "H", 3: "W"}, 17, SHAPES),
    "_Parts": ((2, 6, 5), {0: "N", 1: "C", 2: "L"}, 17, [(1, 6, 5), (3, 6, 8)]),
}


def _export(net, tmp_path, name):
    torch.manual_seed(0)
    shape, axes, opset, _ = _SETUPS[net.__name__]
    net = net().eval()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    path = os.path.join(tmp_path, name + ".onnx")
    torch.onnx.export(net, torch.randn(*shape), path, dynamo=False,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": axes, "y": {0: "N"}}, opset_version=opset)
    return path


def _input_dims(path):
    """The dims the file's Input op declares, read with our reader."""
    with open(path, "rb") as fh:
        graph = load_graph(fh.read())
    var = graph.inputs["x"]
    return list(var.expr.attrs.get("declared_shape", var.expr.metas[0].shape))


@pytest.mark.parametrize("net", [_ConvNet, _MeanNet, _Encoder, _SuperRes, _Tagger, _Pooled,
                                 _Volume, _Squeezed, _VolumeCeil, _Parts,
                                 _AnyChannels, _AlexStem])
def test_dynamic_input_dims_round_trip(net, tmp_path):
    onnx_path = _export(net, str(tmp_path), net.__name__)
    ours_path = os.path.join(tmp_path, "ours.mnn")
    assert mnnconvert(["-f", "ONNX", "--modelFile", onnx_path, "--MNNModel", ours_path,
                       "--bizCode", "test"]) == 0
    shape, axes, _, shapes = _SETUPS[net.__name__]
    declared = [-1 if i in axes else d for i, d in enumerate(shape)]
    assert _input_dims(ours_path) == declared
    if net in (_ConvNet, _MeanNet):
        # The real converter keeps H and W dynamic (it pins the batch to 1); we keep all.
        theirs_path = format_oracle.convert_onnx(_load(onnx_path), tmp_path / "wheel")
        assert _input_dims(theirs_path)[1:] == declared[1:]

    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    ours = mnn_nn.load_module_from_file(ours_path, ["x"], ["y"])
    wheel = MNN.nn.load_module_from_file(ours_path, ["x"], ["y"])
    rng = np.random.default_rng(0)
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        got = np.asarray(ours.forward(F.const(x)).read())
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        theirs = np.array(wheel.forward(MNN.expr.const(x, list(shape), MNN.expr.NCHW)).read())
        np.testing.assert_allclose(theirs, want, rtol=1e-4, atol=1e-5)


def _load(path):
    import onnx

    return onnx.load(path)


def test_dynamic_dims_need_no_input_config(tmp_path):
    """The command converts the dynamic model and says nothing about --inputConfigFile."""
    onnx_path = _export(_ConvNet, str(tmp_path), "net")
    err = io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        status = mnnconvert(["-f", "ONNX", "--modelFile", onnx_path, "--MNNModel",
                             os.path.join(tmp_path, "m.mnn"), "--bizCode", "t"])
    assert status == 0, err.getvalue()
    assert "inputConfigFile" not in err.getvalue()


# -- what is known of shapes before computing (partial shapes), against computed shapes ----

def _ops_on(x):
    """A few ops on a (N, 3, H, W) float Var, keyed by name."""
    w = F.const(np.ones((4, 3, 3, 3), np.float32))
    conv = F.conv2d(x, w, None, stride=(2, 2), padding=(1, 1))
    return {
        "conv": conv,
        "relu": F.relu(conv),
        "pool": F.max_pool(conv, kernel=(2, 2), stride=(2, 2)),
        "mean_hw": F.reduce_mean(x, [2, 3]),
        "transpose": F.transpose(x, [0, 2, 3, 1]),
        "cast": F.cast(x, np.int32),
        "shape": F.shape(x),
        "concat_c": F.concat([x, x], 1),
        "softmax": F.softmax(x, 1),
    }


def test_partial_shapes_agree_with_computed_shapes():
    x = F.placeholder([-1, 3, -1, -1], F.NCHW, np.float32)
    built = _ops_on(x)
    partial = {k: partial_shape(v) for k, v in built.items()}
    dtypes = {k: v.expr.metas[v.index].dtype for k, v in built.items()}
    seen = {k: [] for k in built}
    for shape in [(1, 3, 9, 12), (2, 3, 17, 8), (5, 3, 10, 10)]:
        x.resize(list(shape))
        x.write(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        for k, v in built.items():
            value = np.asarray(v.read())
            seen[k].append(value.shape)
            # The dtype known before computing is the computed one.
            assert dtypes[k] == value.dtype, k
    for k, shapes in seen.items():
        p = partial[k]
        assert p is not None and len(p) == len(shapes[0]), k
        for axis, d in enumerate(p):
            sizes = {s[axis] for s in shapes}
            if d >= 0:
                assert sizes == {d}, (k, axis)
            else:
                assert len(sizes) > 1, (k, axis)


def test_partial_shape_unknown_after_data_dependent_op():
    """A shape that depends on values is not guessed from the tries."""
    x = F.placeholder([-1], F.NCHW, np.float32)
    assert partial_shape(x) == (-1,)
    assert partial_shape(F.relu(x)) == (-1,)
    picked = F.where(F.greater(x, F.const(np.float32(0))))
    assert partial_shape(picked) is None
    x.resize([5])
    x.write(np.array([1, -1, 2, -2, 3], np.float32))
    assert np.asarray(picked.read()).shape[0] == 3
