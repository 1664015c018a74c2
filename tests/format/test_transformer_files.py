"""A small transformer block: exported by torch, converted by the real wheel, read by us;
and the same kind of graph written by us and run by the wheel."""

import io as _io

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run

from mnn.express import io

torch = pytest.importorskip("torch")


class _Block(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, -1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


def test_converted_transformer_block_matches_wheel(tmp_path, rng):
    import onnx

    torch.manual_seed(0)
    block = _Block().eval()
    buf = _io.BytesIO()
    torch.onnx.export(
        block,
        torch.randn(2, 5, 32),
        buf,
        dynamo=False,
        input_names=["x"],
        output_names=["y"],
        opset_version=17,
    )
    path = convert_onnx(onnx.load_from_string(buf.getvalue()), tmp_path)
    x = rng.standard_normal((2, 5, 32)).astype(np.float32)
    (theirs,) = wheel_run(path, {"x": x}, ["y"])
    (ours,) = ours_run(path, {"x": x}, ["y"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    # The wheel's converter turns torch's erf GELU into MNN's tanh approximation.
    with torch.no_grad():
        expect = block(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours, expect, atol=5e-3)


def test_attention_graph_written_by_us_runs_in_wheel(tmp_path, rng):
    x = F.placeholder([2, 5, 16])
    x.name = "x"
    wq = F.const((rng.standard_normal((16, 16)) * 0.3).astype(np.float32))
    wk = F.const((rng.standard_normal((16, 16)) * 0.3).astype(np.float32))
    q = F.transpose(F.reshape(F.matmul(x, wq), [2, 5, 2, 8]), [0, 2, 1, 3])
    k = F.transpose(F.reshape(F.matmul(x, wk), [2, 5, 2, 8]), [0, 2, 3, 1])
    att = F.softmax(F.matmul(q, k) * 0.35, -1)
    mean = F.reduce_mean(x, [2], True)
    norm = (x - mean) * F.rsqrt(F.reduce_mean(F.square(x - mean), [2], True) + 1e-5)
    y = F.reduce_sum(att, [1]) + F.gelu_tanh(F.silu(F.matmul(norm, F.transpose(norm, [0, 2, 1]))))
    value = rng.standard_normal((2, 5, 16)).astype(np.float32)
    x.write(value)
    path = str(tmp_path / "att.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, y.read(), rtol=1e-4, atol=1e-4)
