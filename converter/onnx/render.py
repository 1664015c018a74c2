"""MNN's nvdiffrast-style render nodes: ``texture``, ``texture_mipmap`` (MNN's ``Texture``)
and ``raster_grad`` (``RasterDiff``), in the default domain as MNN's converter reads them.

Attributes are nvdiffrast's enum numbers, mapped the way MNN's converter maps them:

- ``filter_mode``: 0 nearest; 1 linear; 2 and 3 (linear-mipmap-nearest/linear) become
  linear sampling of the base level, as MNN's converter and CPU kernel have no mip levels.
  Absent: linear.
- ``boundary_mode``: 0 cube; 1 (wrap) and 2 clamp (MNN has no wrapping border); 3 zero.
  Absent: zero.

``texture_mipmap``'s inputs past ``tex`` and ``uv`` (the mip levels and derivatives) do not
change MNN's result, which samples the base level only; they are not read.
"""
import mnn.express as F

from .registry import onnx_op

_FILTERS = {0: "nearest", 1: "linear", 2: "linear", 3: "linear"}
_BOUNDARIES = {0: "cube", 1: "clamp", 2: "clamp", 3: "zero"}


def _modes(ctx, filter_mode, boundary_mode):
    filt = "linear" if filter_mode is None else _FILTERS.get(filter_mode)
    bound = "zero" if boundary_mode is None else _BOUNDARIES.get(boundary_mode)
    if filt is None:
        raise ctx.error(f"attribute 'filter_mode' {filter_mode!r} is not one of 0 (nearest), "
                        "1 (linear), 2, 3 (linear-mipmap-nearest/linear)")
    if bound is None:
        raise ctx.error(f"attribute 'boundary_mode' {boundary_mode!r} is not one of 0 (cube), "
                        "1 (wrap), 2 (clamp), 3 (zero)")
    return filt, bound


@onnx_op("texture", since=1)
def texture(ctx, tex, uv, filter_mode=None, boundary_mode=None):
    filt, bound = _modes(ctx, filter_mode, boundary_mode)
    return F.texture(tex, uv, filt, bound)


@onnx_op("texture_mipmap", since=1)
def texture_mipmap(ctx, tex, uv, *mip_inputs, filter_mode=None, boundary_mode=None):
    filt, bound = _modes(ctx, filter_mode, boundary_mode)
    return F.texture(tex, uv, filt, bound)


@onnx_op("raster_grad", since=1)
def raster_grad(ctx, image):
    return list(F.raster_diff(image))
