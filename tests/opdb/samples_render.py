"""Samples of the render ops (mnn/express/ops/render.py): ``texture`` and its gradient ops
referenced by torch's grid_sample and its autograd (channels-last texture, uv in [0, 1] ->
grid 2 * uv - 1, align_corners=False; zero -> zeros padding, clamp -> border), and
``raster_diff`` / ``raster_diff_grad`` by torch differences and their autograd. Cube maps
are checked against OpenGL's table in tests/express/test_render.py."""
import numpy as np
import torch
import torch.nn.functional as TF
from opdb_core import Sample, values

_MODE = {"linear": "bilinear", "nearest": "nearest"}
_PAD = {"zero": "zeros", "clamp": "border"}


def _sample(tex, uv, filter_mode, boundary_mode):
    out = TF.grid_sample(tex.permute(0, 3, 1, 2), uv * 2 - 1, _MODE[filter_mode],
                         _PAD[boundary_mode], align_corners=False)
    return out.permute(0, 2, 3, 1)


def _ref(tex, uv, filter_mode, boundary_mode):
    return _sample(torch.tensor(tex), torch.tensor(uv), filter_mode, boundary_mode).numpy()


def _autograd(tex, uv, g, filter_mode, boundary_mode):
    tt = torch.tensor(tex, requires_grad=True)
    tu = torch.tensor(uv, requires_grad=True)
    (_sample(tt, tu, filter_mode, boundary_mode) * torch.tensor(g)).sum().backward()
    return tt.grad.numpy(), tu.grad.numpy()


def _grad_ref(g, uv, tex_shape, filter_mode, boundary_mode):
    return _autograd(np.zeros(tex_shape, g.dtype), uv, g, filter_mode, boundary_mode)[0]


def _uv_grad_ref(tex, uv, g, filter_mode, boundary_mode):
    return _autograd(tex, uv, g, filter_mode, boundary_mode)[1]


def _diff(x):
    dx = TF.pad(x[:, :, 1:] - x[:, :, :-1], (0, 0, 0, 1))
    dy = TF.pad(x[:, 1:] - x[:, :-1], (0, 0, 0, 0, 0, 1))
    return dx, dy


def _diff_ref(x):
    return [a.numpy() for a in _diff(torch.tensor(x))]


def _diff_grad_ref(gx, gy):
    x = torch.zeros(gx.shape, dtype=torch.tensor(gx).dtype, requires_grad=True)
    dx, dy = _diff(x)
    ((dx * torch.tensor(gx)).sum() + (dy * torch.tensor(gy)).sum()).backward()
    return x.grad.numpy()


SAMPLES = {"texture": [], "texture_grad": [], "texture_uv_grad": [], "raster_diff": [],
           "raster_diff_grad": []}
_i = 0
for _f in ("linear", "nearest"):
    for _b in ("zero", "clamp"):
        for _dt, _n, _hw in ((np.float32, 2, (4, 5)), (np.float64, 1, (2, 3))):
            _i += 1
            _a = {"filter_mode": _f, "boundary_mode": _b}
            _tex = values((_n, *_hw, 2), _dt, seed=_i)
            _uv = values((_n, 2, 2, 2), _dt, -0.3, 1.3, seed=50 + _i)
            _g = values((_n, 2, 2, 2), _dt, seed=100 + _i)
            # float32: torch computes the pixel coordinate as ((2u - 1 + 1) * W - 1) / 2
            _tol = {"rtol": 1e-5, "atol": 1e-5} if _dt == np.float32 else {}
            SAMPLES["texture"].append(Sample([_tex, _uv], _a, _ref, **_tol))
            SAMPLES["texture_grad"].append(
                Sample([_g, _uv], dict(_a, tex_shape=_tex.shape), _grad_ref, **_tol))
            SAMPLES["texture_uv_grad"].append(Sample([_tex, _uv, _g], _a, _uv_grad_ref,
                                                     rtol=1e-4, atol=1e-4))

SAMPLES["texture"].append(Sample([values((1, 1, 1, 3), np.float32, seed=7),
                                  values((1, 1, 3, 2), np.float32, -0.5, 1.5, seed=8)],
                                 {"filter_mode": "linear", "boundary_mode": "clamp"}, _ref,
                                 note="one-texel texture"))
for _dt, _shape in ((np.float32, (2, 3, 4, 3)), (np.float64, (1, 2, 3, 2)),
                    (np.float32, (1, 1, 1, 1))):
    SAMPLES["raster_diff"].append(Sample([values(_shape, _dt, seed=9)], {}, _diff_ref))
    SAMPLES["raster_diff_grad"].append(
        Sample([values(_shape, _dt, seed=10), values(_shape, _dt, seed=11)], {},
               _diff_grad_ref))

_T = values((1, 3, 3, 2), np.float32)
_UV = values((1, 2, 2, 2), np.float32)
_A = {"filter_mode": "linear", "boundary_mode": "zero"}
REJECTS = {
    "texture": [Sample([_T, _UV], dict(_A, filter_mode="cubic")),
                Sample([_T, _UV[..., :1]], _A),
                Sample([_T.astype(np.int32), _UV.astype(np.int32)], _A),
                Sample([_T, _UV], dict(_A, boundary_mode="cube"))],
    "texture_grad": [Sample([values((1, 3, 3, 2), np.float32), _UV],
                            dict(_A, tex_shape=(1, 3, 3, 2)))],
    "texture_uv_grad": [Sample([_T, _UV, values((1, 2, 2, 3), np.float32)], _A)],
    "raster_diff": [Sample([values((3, 4, 2), np.float32)], {}),
                    Sample([values((1, 3, 4, 2), np.int32)], {})],
    "raster_diff_grad": [Sample([values((1, 3, 4, 2), np.float32),
                                 values((1, 3, 4, 1), np.float32)], {})],
}
