"""MNN's render ops (mnn/express/ops/render.py): ``texture`` against torch's grid_sample
(2-D: uv in [0, 1] is grid_sample's [-1, 1] with align_corners=False; zero = zeros
padding, clamp = border) and against OpenGL's cube-map table sampled face by face with
grid_sample (cube); ``raster_diff`` against numpy/torch differences. Gradients against
torch autograd and central finite differences (float64).

The real MNN wheel is no oracle here: it converts these ops but its CPU backend is built
without them ("Don't support type [Texture]"; RasterDiff has no shape rule).
"""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from test_grad_checker import check

from mnn.express.graph import apply

rng = np.random.default_rng(7)

_TORCH_MODE = {"linear": "bilinear", "nearest": "nearest"}
_TORCH_PAD = {"zero": "zeros", "clamp": "border"}


def _torch_texture(tex, uv, filter_mode, boundary_mode):
    """grid_sample on the channels-last texture: the independent 2-D formula."""
    out = TF.grid_sample(tex.permute(0, 3, 1, 2), uv * 2 - 1, _TORCH_MODE[filter_mode],
                         _TORCH_PAD[boundary_mode], align_corners=False)
    return out.permute(0, 2, 3, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("boundary_mode", ["zero", "clamp"])
@pytest.mark.parametrize("filter_mode", ["linear", "nearest"])
def test_texture_2d_matches_grid_sample(filter_mode, boundary_mode, dtype):
    tex = rng.standard_normal((2, 5, 7, 3)).astype(dtype)
    uv = rng.uniform(-0.3, 1.3, (2, 4, 6, 2)).astype(dtype)  # out-of-texture too
    got = F.texture(F.const(tex), F.const(uv), filter_mode, boundary_mode)
    assert got.shape == [2, 4, 6, 3] and got.dtype == dtype
    want = _torch_texture(torch.tensor(tex), torch.tensor(uv), filter_mode, boundary_mode)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.read(), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("boundary_mode", ["zero", "clamp"])
@pytest.mark.parametrize("filter_mode", ["linear", "nearest"])
def test_texture_2d_gradients_match_torch(filter_mode, boundary_mode):
    tex = rng.standard_normal((2, 3, 4, 2))
    uv = rng.uniform(-0.2, 1.2, (2, 2, 3, 2))
    check(lambda t, u: F.texture(t, u, filter_mode, boundary_mode), [tex, uv],
          lambda t, u: _torch_texture(t, u, filter_mode, boundary_mode), rtol=1e-9,
          atol=1e-10)


def test_texture_grad_of_grad_matches_torch_double_backward():
    tex = rng.standard_normal((1, 4, 4, 2))
    uv = rng.uniform(0.05, 0.95, (1, 3, 3, 2))
    g = rng.standard_normal((1, 3, 3, 2))
    t, u = F.const(tex), F.const(uv)
    gv = F.placeholder([1, 3, 3, 2], dtype=np.float64)
    gv.write(g)
    dtex, _ = F.grad(F.reduce_sum(F.texture(t, u) * gv), [t, u])
    weight = rng.standard_normal(tex.shape)
    (ggrad,) = F.grad(F.reduce_sum(dtex * F.const(weight)), [gv])

    tt = torch.tensor(tex, requires_grad=True)
    tu = torch.tensor(uv, requires_grad=True)
    tg = torch.tensor(g, requires_grad=True)
    out = _torch_texture(tt, tu, "linear", "zero")
    (tdtex,) = torch.autograd.grad((out * tg).sum(), [tt], create_graph=True)
    (tgg,) = torch.autograd.grad((tdtex * torch.tensor(weight)).sum(), [tg])
    np.testing.assert_allclose(ggrad.read(), tgg.numpy(), rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- cube maps

# OpenGL's cube-map table: face index, the major axis and its sign, and (sc, tc).
_GL_FACES = {
    (0, 1.0): (0, lambda x, y, z: (-z, -y)),
    (0, -1.0): (1, lambda x, y, z: (z, -y)),
    (1, 1.0): (2, lambda x, y, z: (x, z)),
    (1, -1.0): (3, lambda x, y, z: (x, -z)),
    (2, 1.0): (4, lambda x, y, z: (x, -y)),
    (2, -1.0): (5, lambda x, y, z: (-x, -y)),
}


def _cube_reference(tex, dirs, filter_mode):
    """Direction by direction: pick the face (z wins strict ties over x and y, y over x,
    as MNN's kernel), face coordinates from the OpenGL table clamped into [0, 1], then a
    border-clamped grid_sample of that face. Zero for a zero direction and at a face's
    (0, 0) corner (MNN's kernel treats that as 'no texel')."""
    n, oh, ow, _ = dirs.shape
    out = np.zeros((n, oh, ow, tex.shape[-1]))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                x, y, z = (float(c) for c in dirs[b, i, j])
                mag = [abs(x), abs(y), abs(z)]
                if mag[2] > max(mag[0], mag[1]):
                    axis = 2
                elif mag[1] > mag[0]:
                    axis = 1
                else:
                    axis = 0
                major = (x, y, z)[axis]
                if major == 0:
                    continue
                face, fn = _GL_FACES[(axis, 1.0 if major > 0 else -1.0)]
                sc, tc = fn(x, y, z)
                s = min(max(0.5 * sc / abs(major) + 0.5, 0.0), 1.0)
                t = min(max(0.5 * tc / abs(major) + 0.5, 0.0), 1.0)
                if s == 0 and t == 0:
                    continue
                img = torch.tensor(tex[b, face]).permute(2, 0, 1)[None]
                grid = torch.tensor([[[[2 * s - 1, 2 * t - 1]]]], dtype=img.dtype)
                out[b, i, j] = TF.grid_sample(img, grid, _TORCH_MODE[filter_mode], "border",
                                              align_corners=False)[0, :, 0, 0].numpy()
    return out


def _directions(shape):
    d = rng.standard_normal(shape)
    flat = d.reshape(-1, 3)
    flat[0] = (0.0, 0.0, 0.0)  # no direction: zero
    flat[1] = (1.0, 1.0, 1.0)  # x wins the tie, lands on +x's (0, 0) corner: zero
    flat[2] = (0.5, -2.0, 2.0)  # y/z tie: z wins
    flat[3] = (-3.0, 3.0, 1.0)  # x/y tie: x wins
    return d


@pytest.mark.parametrize("filter_mode", ["linear", "nearest"])
def test_texture_cube_matches_opengl_table(filter_mode):
    tex = rng.standard_normal((2, 6, 4, 5, 3))
    dirs = _directions((2, 3, 5, 3))
    got = F.texture(F.const(tex), F.const(dirs), filter_mode, "cube")
    assert got.shape == [2, 3, 5, 3]
    np.testing.assert_allclose(got.read(), _cube_reference(tex, dirs, filter_mode),
                               rtol=1e-12, atol=1e-12)
    assert not np.any(got.read()[0, 0, :2])


@pytest.mark.parametrize("filter_mode", ["linear", "nearest"])
def test_texture_cube_gradients_match_finite_differences(filter_mode):
    tex = rng.standard_normal((1, 6, 3, 3, 2))
    dirs = rng.standard_normal((1, 2, 3, 3))
    check(lambda t, d: F.texture(t, d, filter_mode, "cube"), [tex, dirs])


# ---------------------------------------------------------------- coordinates, errors


def test_non_finite_coordinates():
    tex = np.arange(2 * 3 * 4 * 1, dtype=np.float64).reshape(2, 3, 4, 1)
    uv = np.array([[[[np.nan, 0.5], [np.inf, 0.5], [-np.inf, 0.01]]]] * 2)
    zero = F.texture(F.const(tex), F.const(uv), "linear", "zero").read()
    assert np.array_equal(zero, np.zeros((2, 1, 3, 1)))
    clamp = F.texture(F.const(tex), F.const(uv), "nearest", "clamp").read()
    # NaN samples zero; +-inf clamps to the edge texels (row floor(0.5 * 3) = 1, row 0).
    np.testing.assert_array_equal(clamp[:, 0, :, 0], tex[:, [0, 1, 0], [0, 3, 0], 0]
                                  * np.array([0, 1, 1]))


def test_raster_diff_matches_numpy():
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    dx, dy = F.raster_diff(F.const(x))
    want_dx = np.concatenate([np.diff(x, axis=2), np.zeros((2, 4, 1, 3), np.float32)], 2)
    want_dy = np.concatenate([np.diff(x, axis=1), np.zeros((2, 1, 5, 3), np.float32)], 1)
    assert dx.dtype == np.float32 and dx.shape == [2, 4, 5, 3]
    np.testing.assert_array_equal(dx.read(), want_dx)
    np.testing.assert_array_equal(dy.read(), want_dy)


def _torch_raster_diff(x):
    dx = TF.pad(x[:, :, 1:] - x[:, :, :-1], (0, 0, 0, 1))
    dy = TF.pad(x[:, 1:] - x[:, :-1], (0, 0, 0, 0, 0, 1))
    return torch.cat([dx.reshape(-1), dy.reshape(-1)])


def test_raster_diff_gradient_matches_torch():
    x = rng.standard_normal((2, 3, 4, 2))
    check(lambda v: F.concat([F.reshape(o, [-1]) for o in F.raster_diff(v)], 0), [x],
          _torch_raster_diff, rtol=1e-12, atol=1e-12)


def test_raster_diff_gradient_of_one_output_and_second_order():
    x = rng.standard_normal((1, 3, 4, 2))
    check(lambda v: F.raster_diff(v)[1], [x])  # dx unused: its gradient is zero
    # raster_diff_grad is linear: its own gradient against finite differences.
    g = rng.standard_normal((2, 1, 3, 4, 2))
    check(lambda a, b: apply("raster_diff_grad", [a, b])[0], [g[0], g[1]])


_T = np.zeros((1, 4, 4, 3), np.float32)
_UV = np.zeros((1, 2, 2, 2), np.float32)


@pytest.mark.parametrize("args,match", [
    ((_T, _UV, "cubic", "zero"), "filter_mode"),
    ((_T, _UV, "linear", "wrap"), "boundary_mode"),
    ((_T[0], _UV, "linear", "zero"), r"\(N, H, W, C\)"),
    ((_T, _UV[..., :1], "linear", "zero"), "uv"),
    ((_T, np.zeros((2, 2, 2, 2), np.float32), "linear", "zero"), "uv"),
    ((_T, _UV.astype(np.float64), "linear", "zero"), "dtype"),
    ((_T.astype(np.int32), _UV.astype(np.int32), "linear", "zero"), "float"),
    ((np.zeros((1, 0, 4, 3), np.float32), _UV, "linear", "zero"), "empty"),
    ((np.zeros((1, 5, 4, 4, 3), np.float32), np.zeros((1, 2, 2, 3), np.float32), "linear",
      "cube"), r"\(N, 6, H, W, C\)"),
    ((_T, _UV, "linear", "cube"), "cube"),
])
def test_texture_rejects_bad_input(args, match):
    tex, uv, filter_mode, boundary_mode = args
    with pytest.raises(F.OpError, match=match) as info:
        F.texture(F.const(tex), F.const(uv), filter_mode, boundary_mode)
    assert "texture" in str(info.value)


@pytest.mark.parametrize("x", [np.zeros((4, 5, 3), np.float32),
                               np.zeros((1, 4, 5, 3), np.int32)])
def test_raster_diff_rejects_bad_input(x):
    with pytest.raises(F.OpError, match=r"raster_diff.*\(N, H, W, C\)"):
        F.raster_diff(F.const(x))


@pytest.mark.parametrize("filter_mode", ["linear", "nearest"])
def test_texture_threads_match_grid_sample(filter_mode):
    # Enough rows for the kernel's parallel loop; coordinates inside and outside.
    tex = rng.standard_normal((2, 40, 50, 4)).astype(np.float32)
    uv = rng.uniform(-0.1, 1.1, (2, 96, 70, 2)).astype(np.float32)
    before = F.get_thread_number()
    F.set_thread_number(2)
    try:
        got = F.texture(F.const(tex), F.const(uv), filter_mode, "zero").read()
    finally:
        F.set_thread_number(before)
    want = _torch_texture(torch.tensor(tex), torch.tensor(uv), filter_mode, "zero")
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
