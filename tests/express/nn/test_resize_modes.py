"""ONNX Resize modes beyond torch's: tf_crop_and_resize (roi, extrapolation_value),
half_pixel_symmetric, antialias, align_corners with scales — values against onnxruntime,
or against onnx's reference Resize (the spec's own formulas, which the node suite's
expected outputs come from) where onnxruntime departs from the spec: it clamps a
tf_crop_and_resize roi that starts below 0 and does not flip a reversed one. (For
align_corners with scales we follow onnxruntime, torch and MNN: the integer output size,
where onnx's reference takes ``in * scale``.) Antialias values and gradients against
torch (``interpolate(antialias=True)``); gradients of the other modes against float64
finite differences."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

RNG = np.random.default_rng(11)


def _ort(x, roi=None, scales=None, sizes=None, spec=False, **attrs):
    """Resize by onnxruntime, or (``spec=True``) by onnx's reference implementation."""
    inits, names = [], ["x"]
    for name, val, kind in (("roi", roi, TensorProto.FLOAT), ("scales", scales,
                            TensorProto.FLOAT), ("sizes", sizes, TensorProto.INT64)):
        if val is None:
            names.append("")
            continue
        names.append(name)
        inits.append(helper.make_tensor(name, kind, [len(val)], list(val)))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    if spec:
        return ReferenceEvaluator(model).run(None, {"x": x})[0]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("roi,size", [((0.1, 0.2, 0.8, 0.9), (5, 4)),
                                      ((-0.3, 0.4, 1.2, 0.6), (6, 3)),
                                      ((0.7, 0.9, 0.2, 0.1), (3, 7)),
                                      ((0.25, 0.5, 0.75, 0.5), (1, 1))])
def test_tf_crop_and_resize_matches_onnxruntime(mode, roi, size):
    x = RNG.standard_normal((2, 3, 6, 7)).astype(np.float32)
    ref = _ort(x, roi=[0, 0, roi[0], roi[1], 1, 1, roi[2], roi[3]],
               sizes=[2, 3, *size], mode=mode,
               coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-4.5,
               spec=min(roi) < 0 or roi[0] > roi[2] or roi[1] > roi[3])
    y = F.interpolate(F.const(x), size, None, mode, "tf_crop_and_resize", roi=roi,
                      extrapolation_value=-4.5)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [(0.6, 0.45), (1.7, 2.3)])
@pytest.mark.parametrize("coord", ["half_pixel_symmetric", "align_corners"])
def test_scale_driven_coordinates_match_onnxruntime(mode, scales, coord):
    x = RNG.standard_normal((1, 2, 7, 9)).astype(np.float32)
    ref = _ort(x, scales=[1, 1, *scales], mode=mode, coordinate_transformation_mode=coord)
    y = F.interpolate(F.const(x), None, scales, mode, coord)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("size", [(3, 4), (5, 2), (9, 6)])
@pytest.mark.parametrize("exclude", [0, 1])
def test_antialias_matches_onnxruntime(mode, size, exclude):
    x = RNG.standard_normal((1, 2, 11, 13)).astype(np.float32)
    ref = _ort(x, sizes=[1, 2, *size], mode=mode, antialias=1, exclude_outside=exclude)
    y = F.interpolate(F.const(x), size, None, mode, antialias=True,
                      exclude_outside=bool(exclude))
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ours,theirs", [("linear", "bilinear"), ("cubic", "bicubic")])
@pytest.mark.parametrize("size", [(4, 5), (6, 13)])
def test_antialias_and_grad_match_torch(ours, theirs, size):
    # torch (like PIL) drops the taps outside the image (ONNX exclude_outside) and its
    # antialiased bicubic uses a = -0.5.
    x = RNG.standard_normal((2, 2, 12, 13))
    xv = F.const(x)
    y = F.interpolate(xv, size, None, ours, cubic_coeff_a=-0.5, exclude_outside=True,
                      antialias=True)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.interpolate(tx, size=size, mode=theirs, align_corners=False, antialias=True)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    dy = RNG.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    gx, = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kw", [
    dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
         roi=(-0.2, 0.1, 0.9, 1.3), extrapolation_value=3.0),
    dict(mode="cubic", coordinate_transformation_mode="half_pixel_symmetric",
         scales=(0.7, 1.6)),
    dict(mode="cubic", antialias=True, exclude_outside=True, output_size=(2, 3))])
def test_new_modes_grad_matches_finite_differences(kw):
    kw = dict(kw)
    size = kw.pop("output_size", (4, 5) if "scales" not in kw else None)
    x = RNG.standard_normal((1, 2, 5, 6))
    xv = F.placeholder([1, 2, 5, 6], dtype=np.float64)
    xv.write(x)
    y = F.interpolate(xv, size, **kw)
    dy = RNG.standard_normal(y.shape)
    gx, = F.grad([y], [xv], [F.const(dy)])
    want = np.zeros_like(x)
    for k in range(x.size):
        for sign in (1, -1):
            xp = x.copy()
            xp.reshape(-1)[k] += sign * 1e-6
            xv.write(xp)
            want.reshape(-1)[k] += sign * np.sum(np.asarray(y.read()) * dy) / 2e-6
    np.testing.assert_allclose(gx.read(), want, rtol=1e-6, atol=1e-7)
    # Second order: the gradient op's own gradient w.r.t. the incoming gradient.
    g = F.placeholder(list(y.shape), dtype=np.float64)
    g.write(dy)
    gx2, = F.grad([y], [xv], [g])
    u = RNG.standard_normal(x.shape)
    gg, = F.grad([gx2], [g], [F.const(u)])
    lin = F.interpolate(F.const(u), size, **dict(kw, extrapolation_value=0.0))
    np.testing.assert_allclose(gg.read(), lin.read(), rtol=1e-10, atol=1e-12)


def test_bad_roi_raises():
    x = F.const(np.ones((1, 1, 3, 3), np.float32))
    with pytest.raises(F.OpError, match="roi"):
        F.interpolate(x, (2, 2), None, "linear", "tf_crop_and_resize",
                      roi=(0, 0, np.nan, 1)).read()
    with pytest.raises(F.OpError, match="roi"):
        F.interpolate(x, (2, 2), None, "linear", "tf_crop_and_resize", roi=(0, 0, 1))
