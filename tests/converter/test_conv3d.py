"""3-d Conv and ConvTranspose through the converter (oracle: onnxruntime), and the
express ``conv_transpose3d`` they use (oracle: torch)."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper

import mnn.express as F
from converter.onnx.loader import ConvertError, convert_graph


def _model(op, xshape, w, **attrs):
    node = helper.make_node(op, ["x", "w"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


CASES = [
    ("Conv", (1, 2, 5, 6, 7), (3, 2, 3, 2, 3), dict(pads=[1, 0, 2, 0, 1, 1], strides=[2, 1, 2])),
    ("Conv", (2, 4, 5, 6, 7), (4, 2, 2, 2, 2), dict(group=2, dilations=[2, 1, 2])),
    ("Conv", (1, 2, 4, 5, 6), (2, 2, 3, 3, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2, 1])),
    ("ConvTranspose", (1, 2, 3, 4, 5), (2, 3, 2, 3, 2),
     dict(pads=[1, 0, 0, 0, 1, 1], strides=[2, 2, 1], output_padding=[1, 0, 0])),
    ("ConvTranspose", (2, 4, 3, 3, 2), (4, 1, 3, 2, 2), dict(group=2, dilations=[2, 1, 1])),
    ("ConvTranspose", (1, 1, 2, 2, 2), (1, 2, 2, 2, 2), dict(auto_pad="SAME_UPPER",
                                                           strides=[2, 2, 2])),
]


@pytest.mark.parametrize("op,xshape,wshape,attrs", CASES)
def test_3d_matches_onnxruntime(op, xshape, wshape, attrs):
    rng = np.random.default_rng(len(xshape) + sum(wshape))
    x = rng.standard_normal(xshape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    model = _model(op, xshape, w, **attrs)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = convert_graph(model).run({"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("s,p,d,g,op", [((2, 1, 2), (1, 0, 1), (1, 2, 1), 1, (1, 0, 0)),
                                        ((1, 2, 1), (0, 1, 0), (2, 1, 1), 2, (0, 1, 0)),
                                        ((1, 1, 1), (0, 0, 0), (1, 1, 1), 1, (0, 0, 0))])
def test_conv_transpose3d_matches_torch(s, p, d, g, op):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2 * g, 3, 4, 3)).astype(np.float32)
    w = rng.standard_normal((2 * g, 3, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(3 * g).astype(np.float32)
    want = torch.nn.functional.conv_transpose3d(torch.tensor(x), torch.tensor(w),
                                                torch.tensor(b), s, p, op, g, d).numpy()
    got = np.asarray(F.conv_transpose3d(x, w, b, s, p, d, g, op))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_transpose3d_rejects_bad_arguments():
    x = np.zeros((1, 2, 2, 2, 2), np.float32)
    w = np.zeros((2, 1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose3d(x, w, output_padding=(1, 0, 0))
    with pytest.raises(ValueError, match="channels"):
        F.conv_transpose3d(np.zeros((1, 3, 2, 2, 2), np.float32), w)
    with pytest.raises(ValueError, match="5-D"):
        F.conv_transpose3d(np.zeros((1, 2, 2, 2), np.float32), w)


def test_3d_conv_transpose_large_output_padding_names_the_node():
    x = np.zeros((1, 1, 2, 2, 2), np.float32)
    w = np.zeros((1, 1, 2, 2, 2), np.float32)
    model = _model("ConvTranspose", list(x.shape), w, output_padding=[2, 0, 0],
                   strides=[1, 1, 1])
    with pytest.raises(ConvertError, match="ConvTranspose.*output_padding"):
        convert_graph(model)
