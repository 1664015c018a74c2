"""interpolate / resize against torch (values, grads), onnxruntime (ONNX modes) and the
real MNN wheel's documented resize output."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

RNG = np.random.default_rng(5)

TORCH_CASES = [
    # (ours kwargs, torch kwargs)
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
     dict(mode="nearest")),
    (dict(mode="linear", coordinate_transformation_mode="half_pixel"),
     dict(mode="bilinear", align_corners=False)),
    (dict(mode="linear", coordinate_transformation_mode="align_corners"),
     dict(mode="bilinear", align_corners=True)),
    (dict(mode="cubic", coordinate_transformation_mode="half_pixel"),
     dict(mode="bicubic", align_corners=False)),
    (dict(mode="cubic", coordinate_transformation_mode="align_corners"),
     dict(mode="bicubic", align_corners=True)),
]


@pytest.mark.parametrize("ours,theirs", TORCH_CASES)
@pytest.mark.parametrize("size", [(14, 5), (3, 20), (1, 1), (7, 9)])
def test_interpolate_and_grad_match_torch(ours, theirs, size):
    x = RNG.standard_normal((2, 3, 7, 9))
    xv = F.const(x)
    y = F.interpolate(xv, size, **ours)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.interpolate(tx, size=size, **theirs)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    dy = RNG.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_interpolate_float32_keeps_dtype():
    x = RNG.standard_normal((1, 2, 5, 6)).astype(np.float32)
    y = F.interpolate(F.const(x), (9, 4), mode="bilinear")
    assert y.dtype == np.float32
    ref = TF.interpolate(torch.tensor(x), size=(9, 4), mode="bilinear").numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-6)


def _ort_resize(x, sizes, **attrs):
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("sizes", TensorProto.INT64, [4], list(x.shape[:2]) + sizes)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("attrs", [
    dict(mode="nearest", coordinate_transformation_mode="half_pixel",
         nearest_mode="round_prefer_floor"),
    dict(mode="nearest", coordinate_transformation_mode="asymmetric",
         nearest_mode="round_prefer_ceil"),
    dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="ceil"),
    dict(mode="linear", coordinate_transformation_mode="half_pixel"),
    dict(mode="linear", coordinate_transformation_mode="asymmetric"),
    dict(mode="cubic", coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.5,
         exclude_outside=1),
    dict(mode="cubic", coordinate_transformation_mode="asymmetric"),
])
@pytest.mark.parametrize("sizes", [[11, 4], [5, 13]])
def test_interpolate_matches_onnxruntime_resize(attrs, sizes):
    x = RNG.standard_normal((1, 2, 6, 7)).astype(np.float32)
    ref = _ort_resize(x, sizes, **attrs)
    ours = dict(attrs)
    ours["exclude_outside"] = bool(ours.get("exclude_outside", 0))
    y = F.interpolate(F.const(x), sizes, **ours)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


def test_mnn_resize_matches_the_real_wheels_documented_output():
    # MNN.expr.resize docstring example (and the wheel's output for the 3x3 case).
    x = F.reshape(F.range(0.0, 4.0, 1.0), [1, 1, 2, 2])
    np.testing.assert_allclose(F.resize(x, 2.0, 2.0).read()[0, 0],
                               [[0, 0.5, 1, 1], [1, 1.5, 2, 2], [2, 2.5, 3, 3], [2, 2.5, 3, 3]])
    x = F.reshape(F.range(0.0, 9.0, 1.0), [1, 1, 3, 3])
    np.testing.assert_allclose(F.resize(x, 1.5, 0.7).read()[0, 0],
                               [[0, 0.75, 1.5, 2], [4.5, 5.25, 6, 6.5]])


def test_interpolate_errors():
    x = F.const(np.ones((1, 1, 3, 3), np.float32))
    with pytest.raises(F.OpError, match="mode"):
        F.interpolate(x, (2, 2), mode="area")
    with pytest.raises(F.OpError, match="coordinate"):
        F.interpolate(x, (2, 2), coordinate_transformation_mode="tf_half_pixel_for_nn")
    with pytest.raises(F.OpError, match="roi"):
        F.interpolate(x, (2, 2), coordinate_transformation_mode="tf_crop_and_resize")
    with pytest.raises(F.OpError, match="output_size or scales"):
        F.interpolate(x)
    with pytest.raises(F.OpError, match="floating"):
        F.interpolate(F.const(np.ones((1, 1, 3, 3), np.int32)), (2, 2))
