"""Transposed convolution (MNN's Deconvolution) both ways against the wheel and onnxruntime."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

from mnn.express import io


def test_converted_deconvolution(tmp_path, rng):
    ort = pytest.importorskip("onnxruntime")
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((4, 2, 2, 3)).astype(np.float32)
    nodes = [
        helper.make_node(
            "ConvTranspose",
            ["x", "W", "B"],
            ["y"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 0],
        ),
        helper.make_node("ConvTranspose", ["x", "W2"], ["y2"], strides=[1, 2], group=2),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y2")],
        [
            numpy_helper.from_array(w, "W"),
            numpy_helper.from_array(w2, "W2"),
            numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "B"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = convert_onnx(model, tmp_path)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    expect = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})
    ours = ours_run(path, {"x": x}, ["y", "y2"])
    theirs = wheel_run(path, {"x": x}, ["y", "y2"])
    for o, t, e in zip(ours, theirs, expect):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "stride,padding,out_pad",
    [((2, 2), (1, 1), (1, 1)), ((1, 2), (0, 1), (0, 0)), ((3, 1), (0, 0), (2, 0))],
)
def test_written_deconvolution_runs_in_wheel(stride, padding, out_pad, tmp_path, rng):
    x = F.placeholder([1, 4, 5, 6])
    x.name = "x"
    w = F.const(rng.standard_normal((4, 3, 3, 2)).astype(np.float32))
    y = F.conv2d_transpose(
        x, w, F.const(np.float32([1, 2, 3])), stride=stride, padding=padding, output_padding=out_pad
    )
    value = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "d.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-6)


def test_written_grouped_deconvolution_runs_in_wheel(tmp_path, rng):
    x = F.placeholder([1, 4, 5, 6])
    x.name = "x"
    w = F.const(rng.standard_normal((4, 3, 2, 3)).astype(np.float32))
    y = F.conv2d_transpose(x, w, None, stride=(2, 1), padding=(1, 0), group=2)
    value = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "d.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-6)


def test_written_deconvolution_with_runtime_weights(tmp_path, rng):
    x = F.placeholder([1, 4, 5, 6])
    x.name = "x"
    base = F.const(rng.standard_normal((4, 3, 3, 2)).astype(np.float32))
    w = F.exp(base * F.reduce_mean(x))  # weights computed from the input
    y = F.conv2d_transpose(x, w, None, stride=(2, 2), padding=(1, 1))
    value = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "d.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-6)
