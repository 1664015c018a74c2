"""3-D pooling in .mnn files (MNN's Pooling3D), both ways against the real MNN wheel: our
files run in the wheel with our values, and the wheel's conversions of ONNX 3-D pools run in
ours with onnxruntime's values."""
import os
import sys

import mnn.expr as F
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from mnn.format import ModelFileError
from mnn.format.reader import load_graph

X = np.random.default_rng(3).standard_normal((1, 2, 6, 7, 8)).astype(np.float32)

OURS = {
    "max_pads": lambda v: F.max_pool3d(v, (2, 3, 2), (2, 1, 2), (1, 1, 0)),
    "avg": lambda v: F.avg_pool3d(v, (2, 3, 2), (2, 1, 2)),
    "avg_hw_pads": lambda v: F.avg_pool3d(v, (2, 3, 3), (1, 2, 2), (0, 1, 1)),
}


def _wheel_run(path, x):
    import MNN

    module = MNN.nn.load_module_from_file(path, ["x"], ["y"])
    out = module.forward([MNN.expr.const(x, list(x.shape), MNN.expr.NCHW, MNN.expr.float)])
    out = out[0] if isinstance(out, (list, tuple)) else out
    if out.data_format == MNN.expr.NC4HW4:
        out = MNN.expr.convert(out, MNN.expr.NCHW)
    return np.array(out.read(), copy=True)


@pytest.mark.parametrize("name", sorted(OURS))
def test_our_pool3d_files_run_in_the_wheel(name, tmp_path):
    xv = F.placeholder(list(X.shape))
    xv.name = "x"
    y = OURS[name](xv)
    y.name = "y"
    xv.write(X)
    want = y.read()
    path = str(tmp_path / "m.mnn")
    F.save([y], path)
    np.testing.assert_allclose(_wheel_run(path, X), want, rtol=1e-5, atol=1e-6)
    graph = load_graph(path)
    graph.inputs["x"].write(X)
    np.testing.assert_allclose(graph.outputs["y"].read(), want, rtol=1e-6, atol=1e-6)


def test_pool3d_without_an_mnn_op_fails_clearly(tmp_path):
    xv = F.placeholder(list(X.shape))
    for y, what in ((F.max_pool3d(xv, 2, 1, dilation=2), "no dilation"),
                    (F.avg_pool3d(xv, 2, 1, (1, 0, 0)), "counts padding")):
        with pytest.raises(ModelFileError, match=what):
            F.save([y], str(tmp_path / "m.mnn"))


def _onnx(op, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, X.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("op, attrs", [
    ("MaxPool", dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 1, 1, 0])),
    ("AveragePool", dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1],
                         count_include_pad=1)),
])
def test_wheel_converted_pool3d_runs_in_ours(op, attrs, tmp_path):
    model = _onnx(op, **attrs)
    src = str(tmp_path / "m.onnx")
    onnx.save(model, src)
    sys.modules["MNN.tools.utils.log"] = None  # the converter's telemetry stays off
    import _tools

    cwd = os.getcwd()
    os.chdir(tmp_path)  # the converter writes a scratch file into the working directory
    try:
        _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", src, "--MNNModel",
                           "m.mnn", "--bizCode", "x"])
    finally:
        os.chdir(cwd)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": X})[0]
    graph = load_graph(str(tmp_path / "m.mnn"))
    graph.inputs["x"].write(X)
    np.testing.assert_allclose(graph.outputs["y"].read(), want, rtol=1e-5, atol=1e-6)
