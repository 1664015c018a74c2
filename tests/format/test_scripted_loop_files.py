"""Loops exported from TorchScript (``torch.jit.script`` for-loops become ONNX Loop),
converted by the real wheel: the bodies capture outer values and slice with bounds computed
from the iteration counter. They load in mnn and match onnxruntime and the wheel."""

import io as _io

import numpy as np
import pytest
from format_oracle import convert_onnx, wheel_run

import mnn

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")


@torch.jit.script
def _recurrence(x: torch.Tensor, w: torch.Tensor):
    h = torch.zeros_like(x[0])
    for t in range(x.shape[0]):
        h = torch.tanh(x[t] @ w + h)
    return h


@torch.jit.script
def _growing(x: torch.Tensor):
    acc = x[:1]
    for t in range(1, x.shape[0]):
        acc = torch.cat([acc, x[t : t + 1] + acc[-1:]], 0)
    return acc


class _Recurrence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4) * 0.5)

    def forward(self, x):
        return _recurrence(x, self.w)


class _Growing(torch.nn.Module):
    def forward(self, x):
        return _growing(x) * 2


@pytest.mark.parametrize("make, shape", [(_Recurrence, (5, 3, 4)), (_Growing, (5, 3))])
def test_scripted_loop_matches_onnxruntime_and_wheel(make, shape, tmp_path, rng):
    torch.manual_seed(0)
    x = rng.standard_normal(shape).astype(np.float32)
    buf = _io.BytesIO()
    torch.onnx.export(make(), (torch.from_numpy(x),), buf, input_names=["x"],
                      output_names=["y"], dynamo=False)
    path = convert_onnx(onnx.load_from_string(buf.getvalue()), tmp_path)
    (want,) = ort.InferenceSession(buf.getvalue()).run(["y"], {"x": x})
    module = mnn.nn.load_module_from_file(path, ["x"], ["y"])
    (ours,) = module.forward([x])
    (theirs,) = wheel_run(path, {"x": x}, ["y"])
    np.testing.assert_allclose(np.asarray(ours.read()), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(theirs, want, rtol=1e-5, atol=1e-6)
