"""ONNX nodes whose parameters are graph inputs (a Resize's scales or sizes, a CumSum's
axis, a Pad's pads, a OneHot's depth, a TopK's k, a Trilu's k) convert to MNN ops taking
those parameters as input tensors. The .mnn file runs in our loader and in the real MNN
wheel, against onnxruntime."""

import os

import format_oracle
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T
from onnx import helper as h

from converter.cli import main as mnnconvert

MNN = format_oracle.MNN
rng = np.random.default_rng(5)


def _model(node, inputs, out_type=T.FLOAT, opset=14):
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("y", out_type, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


CASES = {
    "cumsum": (h.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1, reverse=1),
               [_vi("x", T.FLOAT, [3, 4]), _vi("axis", T.INT32, [])],
               {"x": rng.random((3, 4), np.float32), "axis": np.array(1, np.int32)}),
    "pad_constant": (h.make_node("Pad", ["x", "pads", "v"], ["y"]),
                     [_vi("x", T.FLOAT, [1, 2, 3, 4]), _vi("pads", T.INT64, [8]),
                      _vi("v", T.FLOAT, [])],
                     {"x": rng.random((1, 2, 3, 4), np.float32),
                      "pads": np.array([0, 0, 1, 2, 0, 1, 0, 1], np.int64),
                      "v": np.array(1.5, np.float32)}),
    "pad_reflect": (h.make_node("Pad", ["x", "pads"], ["y"], mode="reflect"),
                    [_vi("x", T.FLOAT, [3, 4]), _vi("pads", T.INT64, [4])],
                    {"x": rng.random((3, 4), np.float32),
                     "pads": np.array([1, 2, 2, 0], np.int64)}),
    "pad_axes": (h.make_node("Pad", ["x", "pads", "v", "axes"], ["y"]),
                 [_vi("x", T.FLOAT, [2, 3, 4]), _vi("pads", T.INT64, [4]),
                  _vi("v", T.FLOAT, []), _vi("axes", T.INT64, [2])],
                 {"x": rng.random((2, 3, 4), np.float32),
                  "pads": np.array([1, 0, 2, 1], np.int64), "v": np.array(-1, np.float32),
                  "axes": np.array([-1, 0], np.int64)}, T.FLOAT, 18),
    "resize_scales": (h.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"),
                      [_vi("x", T.FLOAT, [1, 2, 4, 5]), _vi("scales", T.FLOAT, [4])],
                      {"x": rng.random((1, 2, 4, 5), np.float32),
                       "scales": np.array([1, 1, 2, 1.5], np.float32)}),
    "resize_sizes": (h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest"),
                     [_vi("x", T.FLOAT, [1, 2, 4, 5]), _vi("sizes", T.INT64, [4])],
                     {"x": rng.random((1, 2, 4, 5), np.float32),
                      "sizes": np.array([1, 2, 7, 3], np.int64)}),
    "topk": (h.make_node("TopK", ["x", "k"], ["y", "idx"], axis=0, largest=0),
             [_vi("x", T.FLOAT, [5, 3]), _vi("k", T.INT64, [1])],
             {"x": rng.random((5, 3), np.float32), "k": np.array([2], np.int64)}),
    "triu": (h.make_node("Trilu", ["x", "k"], ["y"]),
             [_vi("x", T.FLOAT, [2, 4, 5]), _vi("k", T.INT64, [])],
             {"x": rng.random((2, 4, 5), np.float32), "k": np.array(-1, np.int64)}),
    "tril": (h.make_node("Trilu", ["x", "k"], ["y"], upper=0),
             [_vi("x", T.FLOAT, [4, 5]), _vi("k", T.INT64, [])],
             {"x": rng.random((4, 5), np.float32), "k": np.array(2, np.int64)}),
    "resize_axes_3_2": (h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest",
                                    axes=[3, 2]),
                        [_vi("x", T.FLOAT, [1, 2, 4, 5]), _vi("sizes", T.INT64, [2])],
                        {"x": rng.random((1, 2, 4, 5), np.float32),
                         "sizes": np.array([8, 6], np.int64)}, T.FLOAT, 18),
    "resize_scales_axes_2_3": (h.make_node("Resize", ["x", "", "scales"], ["y"],
                                           mode="nearest", axes=[2, 3]),
                               [_vi("x", T.FLOAT, [1, 2, 4, 5]), _vi("scales", T.FLOAT, [2])],
                               {"x": rng.random((1, 2, 4, 5), np.float32),
                                "scales": np.array([2, 1.5], np.float32)}, T.FLOAT, 18),
    "nonzero": (h.make_node("NonZero", ["x"], ["y"]), [_vi("x", T.FLOAT, [3, 4])],
                {"x": (rng.random((3, 4)) > 0.5).astype(np.float32)}, T.INT64),
    "onehot": (h.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1),
               [_vi("i", T.INT64, [2, 3]), _vi("d", T.INT64, []), _vi("v", T.FLOAT, [2])],
               {"i": np.array([[0, 2, -1], [1, 3, 0]], np.int64), "d": np.array(4, np.int64),
                "v": np.array([0.5, 2], np.float32)}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_parameter_file(name, tmp_path):
    node, inputs, feeds, *out_type_and_opset = CASES[name]
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    onnx.save(_model(node, inputs, *out_type_and_opset), src)
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "t"]) == 0
    want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    ours = np.asarray(format_oracle.ours_run(dst, feeds, ["y"])[0])
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-6)
    assert ours.dtype == (np.int32 if want.dtype == np.int64 else want.dtype)
    int32_feeds = {k: (v.astype(np.int32) if v.dtype.kind == "i" else v)
                   for k, v in feeds.items()}
    theirs = format_oracle.wheel_run(dst, int32_feeds, ["y"])[0]
    np.testing.assert_allclose(theirs, want, rtol=1e-5, atol=1e-6)


def test_runtime_parameter_of_unsupported_mode_is_refused(tmp_path):
    """Edge padding from run-time pads has no MNN form: the command names the op."""
    import contextlib
    import io

    node = h.make_node("Pad", ["x", "pads"], ["y"], mode="edge")
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    onnx.save(_model(node, [_vi("x", T.FLOAT, [3, 4]), _vi("pads", T.INT64, [4])]), src)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                           "--bizCode", "t"]) == 1
    assert "'edge'" in err.getvalue() and "Pad" in err.getvalue()
