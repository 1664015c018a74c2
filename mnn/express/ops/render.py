"""MNN's nvdiffrast-style render ops: ``texture`` (MNN OpType ``Texture``) and
``raster_diff`` (OpType ``RasterDiff``), with their gradient ops.

Layouts are channels last, as MNN's render kernels read them whatever a Var's format
label says:

- ``texture``: texture ``(N, H, W, C)`` sampled at ``uv`` ``(N, OH, OW, 2)``, giving
  ``(N, OH, OW, C)``. ``uv`` holds ``(u, v)`` in [0, 1] over the texture's width and
  height (texel ``(i, j)`` covers ``[j/W, (j+1)/W) x [i/H, (i+1)/H)``; its centre is at
  ``((j + 0.5)/W, (i + 0.5)/H)``).
  ``filter_mode`` ``"nearest"`` takes texel ``(floor(v*H), floor(u*W))``; ``"linear"``
  interpolates bilinearly between the texel centres around ``(v*H - 0.5, u*W - 0.5)``.
  ``boundary_mode`` ``"zero"`` gives zero for texels outside the texture; ``"clamp"``
  clamps the coordinate to the edge texels' centres (nearest: to the edge texels).
  ``"cube"``: the texture is a cube map ``(N, 6, H, W, C)`` (faces +x, -x, +y, -y, +z,
  -z) and ``uv`` holds directions ``(N, OH, OW, 3)``; the face is the direction's major
  axis and the face coordinates follow the OpenGL cube-map table, then the face is
  sampled with ``"clamp"``. As MNN's CPU kernel, a direction landing exactly on a face's
  ``(0, 0)`` corner, or a zero direction, samples zero (nearest sampling at a face's far
  edge takes the last texel, where MNN's kernel reads one past the face).
- ``raster_diff``: forward differences of an image ``(N, H, W, C)``: ``dx[n, y, x] =
  img[n, y, x + 1] - img[n, y, x]`` (zero in the last column) and ``dy[n, y, x] =
  img[n, y + 1, x] - img[n, y, x]`` (zero in the last row).

A NaN coordinate samples zero (MNN leaves it undefined). MNN's CPU kernels take one
batch; here each batch item samples its own texture with its own ``uv``.

Gradients: ``texture`` is differentiable with respect to the texture image (the
transposed sampling, ``texture_grad``: MNN's gradient) and ``uv`` (``texture_uv_grad``,
which MNN's training code does not have: zero for nearest sampling and where a coordinate
is clamped); ``raster_diff`` has the transposed differences ``raster_diff_grad``
(MNN's CPU gradient kernel reads the ``dy`` gradient at the wrong position; this is the
exact adjoint). ``texture_grad`` and ``raster_diff_grad`` differentiate again;
``texture_uv_grad`` does not.

2-D sampling and its texture gradient run in ``mnn/_cython/render.pyx``; cube maps and
the uv gradient use the numpy tap rule below (the same taps, with their derivatives).
"""
import numpy as np

from ..._cython import render as _render_k
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc
from .creation import zeros_like

__all__ = ["raster_diff", "texture"]

FILTER_MODES = ("linear", "nearest")
BOUNDARY_MODES = ("zero", "clamp", "cube")


# ---------------------------------------------------------------------------- texture


def _check_modes(filter_mode, boundary_mode):
    if filter_mode not in FILTER_MODES:
        raise OpError(f"filter_mode must be one of {FILTER_MODES}, got {filter_mode!r}")
    if boundary_mode not in BOUNDARY_MODES:
        raise OpError(f"boundary_mode must be one of {BOUNDARY_MODES}, got "
                      f"{boundary_mode!r}")


def _check_texture(tex_shape, tex_dtype, uv, boundary_mode):
    """Validate a texture's shape/dtype against ``uv``'s meta."""
    if tex_dtype.kind != "f" or uv.dtype != tex_dtype:
        raise OpError(f"texture and uv must be float of one dtype, got {tex_dtype}, "
                      f"{uv.dtype}")
    cube = boundary_mode == "cube"
    want_tex, want_uv = (5, 3) if cube else (4, 2)
    shape = tuple(tex_shape)
    if len(shape) != want_tex or (cube and shape[1] != 6) or len(uv.shape) != 4 \
            or uv.shape[3] != want_uv or uv.shape[0] != shape[0]:
        form = "(N, 6, H, W, C) and uv (N, OH, OW, 3)" if cube \
            else "(N, H, W, C) and uv (N, OH, OW, 2)"
        raise OpError(f"boundary_mode {boundary_mode!r} needs a texture {form}, got "
                      f"{list(shape)} and {list(uv.shape)}")
    if min(shape[-3:-1]) < 1:
        raise OpError(f"texture {list(shape)} has an empty image")


def _out_shape(tex_shape, uv_shape):
    return (uv_shape[0], uv_shape[1], uv_shape[2], tex_shape[-1])


class _Tap:
    """One texel read per output texel: ``index`` into the texture's (N, texels, C) view,
    its ``weight`` (0 for texels outside the texture: their index is 0, never read past
    the end) and ``dweight`` (..., k), the weight's derivative by the ``uv`` components."""

    __slots__ = ("dweight", "index", "weight")

    def __init__(self, index, weight, dweight):
        self.index = index
        self.weight = weight
        self.dweight = dweight


def _plane_taps(u, v, h, w, filter_mode, clamp):
    """Taps of a 2-D lookup at ``u``, ``v`` (arrays in [0, 1] units) in an ``h`` x ``w``
    image."""
    with np.errstate(invalid="ignore"):  # NaN/inf coordinates: masked below
        return _plane_taps_unguarded(u, v, h, w, filter_mode, clamp)


def _plane_taps_unguarded(u, v, h, w, filter_mode, clamp):
    zero = np.zeros(u.shape)
    if filter_mode == "nearest":
        # Piecewise constant in uv: the derivative is zero wherever it exists.
        cols = [(np.floor(v * h), np.floor(u * w), 1.0, zero, zero)]
    else:
        x = u * w - 0.5
        y = v * h - 0.5
        dx = np.full(u.shape, float(w))
        dy = np.full(u.shape, float(h))
        if clamp:
            dx = np.where((x > 0) & (x < w - 1), dx, 0.0)
            dy = np.where((y > 0) & (y < h - 1), dy, 0.0)
            x = np.clip(x, 0.0, w - 1.0)
            y = np.clip(y, 0.0, h - 1.0)
        x0, y0 = np.floor(x), np.floor(y)
        fx, fy = x - x0, y - y0
        # (row, column, weight, d weight / du, d weight / dv)
        cols = [(y0, x0, (1 - fx) * (1 - fy), -(1 - fy) * dx, -(1 - fx) * dy),
                (y0, x0 + 1, fx * (1 - fy), (1 - fy) * dx, -fx * dy),
                (y0 + 1, x0, (1 - fx) * fy, -fy * dx, (1 - fx) * dy),
                (y0 + 1, x0 + 1, fx * fy, fy * dx, fx * dy)]
    taps = []
    for iy, ix, wgt, dwu, dwv in cols:
        if clamp:  # +-inf clamps to the edge; NaN stays NaN
            iy, ix = np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)
        valid = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)  # False for NaN
        # Index arithmetic only on valid entries: NaN/inf never reach an integer cast.
        flat = np.where(valid, iy, 0) * w + np.where(valid, ix, 0)
        weight = np.where(valid, wgt, 0.0)
        dweight = np.stack([np.where(valid, dwu, 0.0), np.where(valid, dwv, 0.0)], axis=-1)
        taps.append(_Tap(flat.astype(np.int64), weight, dweight))
    return taps


# Per cube face (+x, -x, +y, -y, +z, -z): the direction component and sign giving the face
# coordinates s and t, and the major axis (OpenGL's cube-map table).
_S_AXIS = np.array([2, 2, 0, 0, 0, 0])
_S_SIGN = np.array([-1.0, 1.0, 1.0, 1.0, 1.0, -1.0])
_T_AXIS = np.array([1, 1, 2, 2, 1, 1])
_T_SIGN = np.array([-1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
_M_AXIS = np.array([0, 0, 1, 1, 2, 2])


def _component(d, axes):
    return np.take_along_axis(d, axes[..., None], axis=-1)[..., 0]


def _cube_coords(d):
    """Face index, (s, t) in [0, 1] of directions ``d`` (..., 3), their derivatives by
    ``d`` (..., 3) each, and ``ok``: False where MNN samples zero (no finite face
    coordinate, or the face's (0, 0) corner)."""
    d = d.astype(np.float64)
    ax, ay, az = np.abs(d[..., 0]), np.abs(d[..., 1]), np.abs(d[..., 2])
    on_z = az > np.maximum(ax, ay)
    on_y = ~on_z & (ay > ax)
    axis = np.where(on_z, 2, np.where(on_y, 1, 0))
    face = 2 * axis + (_component(d, axis) < 0)
    major = _component(d, _M_AXIS[face])
    coords = []
    for axes, signs in ((_S_AXIS, _S_SIGN), (_T_AXIS, _T_SIGN)):
        sc = signs[face] * _component(d, axes[face])
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = sc / np.abs(major) * 0.5 + 0.5
            dsc = 0.5 * signs[face] / np.abs(major)
            dmajor = -0.5 * sc / (major * np.abs(major))
        deriv = np.zeros(d.shape)
        np.put_along_axis(deriv, axes[face][..., None], dsc[..., None], axis=-1)
        np.put_along_axis(deriv, _M_AXIS[face][..., None], dmajor[..., None], axis=-1)
        # Clamped into the face: constant outside (0, 1).
        deriv = np.where(((raw > 0) & (raw < 1))[..., None], deriv, 0.0)
        coords.append((raw, deriv))
    (s, ds), (t, dt) = coords
    ok = np.isfinite(s) & np.isfinite(t)
    s = np.clip(np.where(ok, s, 0.0), 0.0, 1.0)
    t = np.clip(np.where(ok, t, 0.0), 0.0, 1.0)
    ok &= ~((s == 0) & (t == 0))
    return face, s, t, ds, dt, ok


def _taps(tex_shape, uv, filter_mode, boundary_mode):
    """The taps of sampling a ``tex_shape`` texture at ``uv`` (see :class:`_Tap`)."""
    if boundary_mode != "cube":
        h, w = tex_shape[1], tex_shape[2]
        return _plane_taps(uv[..., 0], uv[..., 1], h, w, filter_mode,
                           boundary_mode == "clamp")
    h, w = tex_shape[2], tex_shape[3]
    face, s, t, ds, dt, ok = _cube_coords(uv)
    taps = []
    for tap in _plane_taps(s, t, h, w, filter_mode, True):
        dweight = tap.dweight[..., :1] * ds + tap.dweight[..., 1:] * dt
        taps.append(_Tap(np.where(ok, face * (h * w) + tap.index, 0),
                         np.where(ok, tap.weight, 0.0),
                         np.where(ok[..., None], dweight, 0.0)))
    return taps


def _texture_infer(metas, filter_mode, boundary_mode):
    _check_modes(filter_mode, boundary_mode)
    tex, uv = metas
    _check_texture(tex.shape, tex.dtype, uv, boundary_mode)
    return [(_out_shape(tex.shape, uv.shape), tex.dtype)]


def _texture_compute(arrays, filter_mode, boundary_mode):
    tex, uv = arrays
    if boundary_mode != "cube":
        out = np.empty(_out_shape(tex.shape, uv.shape), tex.dtype)
        _render_k.texture_2d(nc.c_array(tex), nc.c_array(uv), out, filter_mode == "nearest",
                             boundary_mode == "clamp", nc.threads(out.size * 4))
        return out
    flat = tex.reshape(tex.shape[0], -1, tex.shape[-1])
    n = np.arange(tex.shape[0])[:, None, None]
    out = np.zeros(_out_shape(tex.shape, uv.shape))
    for tap in _taps(tex.shape, uv, filter_mode, boundary_mode):
        out += tap.weight[..., None] * flat[n, tap.index]
    return out.astype(tex.dtype)


def _texture_grad(inputs, outputs, grads, filter_mode, boundary_mode):
    tex, uv = inputs
    dtex = apply("texture_grad", [grads[0], uv], tex_shape=tuple(tex.shape),
                 filter_mode=filter_mode, boundary_mode=boundary_mode)[0]
    duv = apply("texture_uv_grad", [tex, uv, grads[0]], filter_mode=filter_mode,
                boundary_mode=boundary_mode)[0]
    return [dtex, duv]


register(OpDef("texture", _texture_infer, _texture_compute, _texture_grad))


def _tg_infer(metas, tex_shape, filter_mode, boundary_mode):
    _check_modes(filter_mode, boundary_mode)
    g, uv = metas
    _check_texture(tex_shape, g.dtype, uv, boundary_mode)
    if tuple(g.shape) != _out_shape(tex_shape, uv.shape):
        raise OpError(f"output gradient {list(g.shape)} does not match the sampled output "
                      f"{list(_out_shape(tex_shape, uv.shape))}")
    return [(tuple(tex_shape), g.dtype)]


def _tg_compute(arrays, tex_shape, filter_mode, boundary_mode):
    g, uv = arrays
    if boundary_mode != "cube":
        dtex = np.zeros(tex_shape)
        _render_k.texture_2d_grad(nc.c_array(g), nc.c_array(uv), dtex,
                                  filter_mode == "nearest", boundary_mode == "clamp")
        return dtex.astype(g.dtype)
    c = tex_shape[-1]
    dflat = np.zeros((tex_shape[0], int(np.prod(tex_shape[1:-1])), c))
    rows = np.broadcast_to(np.arange(tex_shape[0])[:, None, None], uv.shape[:3]).ravel()
    gv = g.reshape(-1, c).astype(np.float64)
    for tap in _taps(tex_shape, uv, filter_mode, boundary_mode):
        # Several output texels may read one texel: accumulate, never overwrite.
        np.add.at(dflat, (rows, tap.index.ravel()), tap.weight.reshape(-1, 1) * gv)
    return dflat.reshape(tex_shape).astype(g.dtype)


def _tg_grad(inputs, outputs, grads, tex_shape, filter_mode, boundary_mode):
    # texture_grad(g, uv) = sum over taps of w(uv) * g scattered to the texels: its
    # transpose in g is the sampling itself, and its uv derivative against an upstream
    # gradient H is texture_uv_grad with H in the texture's place.
    g, uv = inputs
    gg = apply("texture", [grads[0], uv], filter_mode=filter_mode,
               boundary_mode=boundary_mode)[0]
    duv = apply("texture_uv_grad", [grads[0], uv, g], filter_mode=filter_mode,
                boundary_mode=boundary_mode)[0]
    return [gg, duv]


register(OpDef("texture_grad", _tg_infer, _tg_compute, _tg_grad))


def _tuv_infer(metas, filter_mode, boundary_mode):
    _check_modes(filter_mode, boundary_mode)
    tex, uv, g = metas
    _check_texture(tex.shape, tex.dtype, uv, boundary_mode)
    if tuple(g.shape) != _out_shape(tex.shape, uv.shape) or g.dtype != tex.dtype:
        raise OpError(f"output gradient {list(g.shape)} {g.dtype} does not match the sampled "
                      f"output {list(_out_shape(tex.shape, uv.shape))} {tex.dtype}")
    return [(uv.shape, uv.dtype)]


def _tuv_compute(arrays, filter_mode, boundary_mode):
    tex, uv, g = arrays
    flat = tex.reshape(tex.shape[0], -1, tex.shape[-1])
    n = np.arange(tex.shape[0])[:, None, None]
    gv = g.astype(np.float64)
    duv = np.zeros(uv.shape)
    for tap in _taps(tex.shape, uv, filter_mode, boundary_mode):
        duv += np.sum(flat[n, tap.index] * gv, axis=-1)[..., None] * tap.dweight
    return duv.astype(uv.dtype)


# Second derivatives by uv are not provided: differentiating this op raises.
register(OpDef("texture_uv_grad", _tuv_infer, _tuv_compute, None))


def texture(tex, uv, filter_mode="linear", boundary_mode="zero"):
    """Sample a texture at ``uv`` the way MNN's ``Texture`` op does (nvdiffrast's
    ``texture`` without mipmaps).

    Parameters
    ----------
    tex : Var
        ``(N, H, W, C)`` float texture (``(N, 6, H, W, C)`` for ``"cube"``).
    uv : Var
        ``(N, OH, OW, 2)`` texture coordinates in [0, 1] (``(N, OH, OW, 3)`` directions
        for ``"cube"``); same dtype as ``tex``.
    filter_mode : {"linear", "nearest"}
    boundary_mode : {"zero", "clamp", "cube"}

    Returns
    -------
    Var
        ``(N, OH, OW, C)``.

    Notes
    -----
    Differentiable with respect to ``tex`` and (once) ``uv``.
    """
    return apply("texture", [to_var(tex), to_var(uv)], filter_mode=str(filter_mode),
                 boundary_mode=str(boundary_mode))[0]


# ------------------------------------------------------------------------ raster_diff


def _check_image(meta, what):
    if meta.dtype.kind != "f" or len(meta.shape) != 4:
        raise OpError(f"{what} must be a float (N, H, W, C) tensor, got {list(meta.shape)} "
                      f"{meta.dtype}")


def _rd_infer(metas):
    _check_image(metas[0], "the image")
    x = metas[0]
    return [(x.shape, x.dtype), (x.shape, x.dtype)]


def _rd_compute(arrays):
    x = arrays[0]
    dx = np.zeros_like(x)
    dy = np.zeros_like(x)
    dx[:, :, :-1] = x[:, :, 1:] - x[:, :, :-1]
    dy[:, :-1] = x[:, 1:] - x[:, :-1]
    return [dx, dy]


def _rd_grad(inputs, outputs, grads):
    # An output nobody differentiates has no gradient: it contributes zeros.
    parts = [g if g is not None else zeros_like(inputs[0]) for g in grads]
    return [apply("raster_diff_grad", parts)[0]]


register(OpDef("raster_diff", _rd_infer, _rd_compute, _rd_grad, n_outputs=2))


def _rdg_infer(metas):
    gx, gy = metas
    _check_image(gx, "the dx gradient")
    _check_image(gy, "the dy gradient")
    if tuple(gx.shape) != tuple(gy.shape) or gx.dtype != gy.dtype:
        raise OpError(f"the dx and dy gradients must match, got {list(gx.shape)} {gx.dtype} "
                      f"and {list(gy.shape)} {gy.dtype}")
    return [(gx.shape, gx.dtype)]


def _rdg_compute(arrays):
    gx, gy = arrays
    out = np.zeros_like(gx)
    # Transpose of dx = x[:, :, 1:] - x[:, :, :-1] (last column zero), same for dy.
    out[:, :, 1:] += gx[:, :, :-1]
    out[:, :, :-1] -= gx[:, :, :-1]
    out[:, 1:] += gy[:, :-1]
    out[:, :-1] -= gy[:, :-1]
    return out


def _rdg_grad(inputs, outputs, grads):
    # Linear: the transpose of the transposed differences is raster_diff itself.
    dx, dy = apply("raster_diff", [grads[0]])
    return [dx, dy]


register(OpDef("raster_diff_grad", _rdg_infer, _rdg_compute, _rdg_grad))


def raster_diff(image):
    """Forward differences of a channels-last image (MNN's ``RasterDiff``, the ONNX
    ``raster_grad`` node).

    Parameters
    ----------
    image : Var
        ``(N, H, W, C)`` float.

    Returns
    -------
    (Var, Var)
        ``dx`` and ``dy``, each ``(N, H, W, C)``: ``dx[:, y, x] = image[:, y, x + 1] -
        image[:, y, x]`` with a zero last column, ``dy`` the same along rows with a zero
        last row.
    """
    dx, dy = apply("raster_diff", [to_var(image)])
    return dx, dy
