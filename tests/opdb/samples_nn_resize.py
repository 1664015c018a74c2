"""Samples of resize / resize_grad (mnn/express/ops/nn_resize.py), referenced by torch's
interpolate (values; antialias too) and its autograd (the gradient op), and by
onnxruntime's Resize for tf_crop_and_resize."""
import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper
from opdb_core import Sample, values


def _attrs(out_hw, mode, coord, nearest_mode="round_prefer_floor"):
    return dict(out_hw=out_hw, scales=None, mode=mode, coord=coord, nearest_mode=nearest_mode,
                cubic_a=-0.75, exclude_outside=False)


_TORCH = {("nearest", "asymmetric"): dict(mode="nearest"),
          ("linear", "half_pixel"): dict(mode="bilinear", align_corners=False),
          ("linear", "align_corners"): dict(mode="bilinear", align_corners=True),
          ("cubic", "half_pixel"): dict(mode="bicubic", align_corners=False)}


def _torch_kw(mode, coord):
    return _TORCH[(mode, coord)]


def _ref(x, out_hw, mode, coord, **_):
    y = TF.interpolate(torch.tensor(x), size=tuple(out_hw), **_torch_kw(mode, coord))
    return y.numpy()


def _grad_ref(g, in_hw, out_hw, mode, coord, **_):
    t = torch.zeros(g.shape[:-2] + tuple(in_hw), dtype=torch.tensor(g).dtype,
                    requires_grad=True)
    TF.interpolate(t, size=tuple(out_hw), **_torch_kw(mode, coord)).backward(torch.tensor(g))
    return t.grad.numpy()


SAMPLES = {"resize": [], "resize_grad": []}
for _i, (_mode, _coord) in enumerate(_TORCH):
    _nm = "floor" if _mode == "nearest" else "round_prefer_floor"
    for _dt in (np.float32, np.float64):
        for _in, _out in (((1, 2, 5, 7), (9, 4)), ((2, 1, 3, 3), (3, 8)), ((1, 1, 1, 1), (2, 3))):
            _a = _attrs(_out, _mode, _coord, _nm)
            SAMPLES["resize"].append(Sample([values(_in, _dt, seed=_i)], _a, _ref))
            _g = values(_in[:2] + _out, _dt, seed=50 + _i)
            # float32: both sides add many weighted terms with cancellation, in other orders
            _tol = dict(rtol=1e-4, atol=1e-5) if _dt == np.float32 else {}
            SAMPLES["resize_grad"].append(Sample([_g], dict(_a, in_hw=_in[2:]), _grad_ref,
                                                 **_tol))



def _aa_kw(mode):
    # torch's antialias drops taps outside the image (ONNX exclude_outside) and its
    # antialiased bicubic has a = -0.5.
    return dict(mode="bilinear" if mode == "linear" else "bicubic", align_corners=False,
                antialias=True)


def _aa_attrs(out_hw, mode):
    return dict(_attrs(out_hw, mode, "half_pixel"), cubic_a=-0.5, exclude_outside=True,
                antialias=True)


def _aa_ref(x, out_hw, mode, **_):
    return TF.interpolate(torch.tensor(x), size=tuple(out_hw), **_aa_kw(mode)).numpy()


def _aa_grad_ref(g, in_hw, out_hw, mode, **_):
    t = torch.zeros(g.shape[:-2] + tuple(in_hw), dtype=torch.tensor(g).dtype,
                    requires_grad=True)
    TF.interpolate(t, size=tuple(out_hw), **_aa_kw(mode)).backward(torch.tensor(g))
    return t.grad.numpy()


for _mode in ("linear", "cubic"):
    for _dt in (np.float32, np.float64):
        _a = _aa_attrs((3, 4), _mode)
        SAMPLES["resize"].append(Sample([values((1, 2, 9, 11), _dt, seed=3)], _a, _aa_ref,
                                        rtol=1e-5, atol=1e-5))
        SAMPLES["resize_grad"].append(Sample([values((1, 2, 3, 4), _dt, seed=4)],
                                             dict(_a, in_hw=(9, 11)), _aa_grad_ref,
                                             rtol=1e-5, atol=1e-5))


def _crop_ref(x, out_hw, mode, roi, extrapolation_value, **_):
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode,
                            coordinate_transformation_mode="tf_crop_and_resize",
                            extrapolation_value=extrapolation_value)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("roi", TensorProto.FLOAT, [8], [0, 0, roi[0], roi[1], 1, 1,
                                                            roi[2], roi[3]]),
         helper.make_tensor("sizes", TensorProto.INT64, [4], list(x.shape[:2]) + list(out_hw))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


for _mode in ("nearest", "linear", "cubic"):
    SAMPLES["resize"].append(Sample(
        [values((1, 2, 6, 5), np.float32, seed=8)],
        dict(_attrs((4, 7), _mode, "tf_crop_and_resize"), roi=(0.1, 0.3, 0.9, 1.4),
             extrapolation_value=-7.0), _crop_ref))

REJECTS = {
    "resize": [Sample([values((1, 1, 3, 3), np.int32)], _attrs((2, 2), "linear", "half_pixel")),
               Sample([values((1, 1, 3, 3), np.float32)], _attrs((2, 2), "area", "half_pixel")),
               Sample([values((1, 1, 3, 3), np.float32)], _attrs((0, 2), "linear", "half_pixel")),
               Sample([values((1, 1, 3, 3), np.float32)],
                      _attrs((2, 2), "linear", "tf_crop_and_resize"))],
    "resize_grad": [Sample([values((1, 1, 3, 3), np.float32)],
                           dict(_attrs((2, 2), "linear", "half_pixel"), in_hw=(4, 4)))],
}
