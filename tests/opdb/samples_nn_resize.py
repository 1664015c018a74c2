"""Samples of resize / resize_grad (mnn/express/ops/nn_resize.py), referenced by torch's
interpolate (values) and its autograd (the gradient op)."""
import numpy as np
import torch
import torch.nn.functional as TF
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

REJECTS = {
    "resize": [Sample([values((1, 1, 3, 3), np.int32)], _attrs((2, 2), "linear", "half_pixel")),
               Sample([values((1, 1, 3, 3), np.float32)], _attrs((2, 2), "area", "half_pixel")),
               Sample([values((1, 1, 3, 3), np.float32)], _attrs((0, 2), "linear", "half_pixel"))],
    "resize_grad": [Sample([values((1, 1, 3, 3), np.float32)],
                           dict(_attrs((2, 2), "linear", "half_pixel"), in_hw=(4, 4)))],
}
