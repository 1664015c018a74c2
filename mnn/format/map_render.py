"""Render ops in the .mnn file: ``texture`` / ``texture_grad`` <-> MNN's ``Texture`` (a
``GridSample`` parameter table; ``backward`` marks the gradient form, whose third input is
the texture's shape) and ``raster_diff`` / ``raster_diff_grad`` <-> ``RasterDiff`` (no
parameter table; an ``Extra`` table marks the gradient form).

MNN's converter writes these ops with the NCHW default format and no layout conversions:
the kernels read the tensors' dims as they are (channels last).
"""

import numpy as np

from ..express import graph as _graph
from .mapping import decoder, encoder

__all__ = []

# GridSample parameter codes (MNN's SampleMode and BorderMode enums).
_FILTERS = {"linear": 0, "nearest": 1}
_BOUNDARIES = {"zero": 0, "clamp": 1, "cube": 3}
_FILTER_NAMES = {v: k for k, v in _FILTERS.items()}
_BOUNDARY_NAMES = {v: k for k, v in _BOUNDARIES.items()}

_NCHW = 0  # MNN_DATA_FORMAT_NCHW


def _grid_param(attrs, backward):
    return {"mode": _FILTERS[attrs["filter_mode"]],
            "paddingMode": _BOUNDARIES[attrs["boundary_mode"]],
            "alignCorners": False, "backward": backward}


@encoder("texture")
def _encode_texture(ctx, expr):
    ctx.emit(expr, "Texture", "GridSample", _grid_param(expr.attrs, False),
             list(expr.inputs), data_format=_NCHW)


@encoder("texture_grad")
def _encode_texture_grad(ctx, expr):
    g, uv = expr.inputs
    shape = ctx.const_tensor(np.asarray(expr.attrs["tex_shape"], np.int32), expr, "shape")
    ctx.emit(expr, "Texture", "GridSample", _grid_param(expr.attrs, True), [g, uv, shape],
             data_format=_NCHW)


@decoder("Texture")
def _decode_texture(ctx, op, inputs):
    # Inputs past the second are the mip levels of an ONNX texture_mipmap node: MNN's CPU
    # kernel samples the base level only, so they do not change the result.
    ctx.n_inputs(op, inputs, 2, 64)
    p = ctx.param(op, "GridSample")
    filter_mode = _FILTER_NAMES.get(int(p["mode"]))
    boundary_mode = _BOUNDARY_NAMES.get(int(p["paddingMode"]))
    if filter_mode is None or boundary_mode is None:
        ctx.fail(op, f"sampling mode {p['mode']} / border mode {p['paddingMode']} is not a "
                 "texture mode (filter 0, 1; border 0, 1, 3)")
    if p["backward"]:
        ctx.n_inputs(op, inputs, 3)
        shape = ctx.need_static(op, inputs[2], "the texture shape (input 2)")
        return _graph.apply("texture_grad", list(inputs[:2]),
                            tex_shape=tuple(int(d) for d in np.asarray(shape).reshape(-1)),
                            filter_mode=filter_mode, boundary_mode=boundary_mode)
    return _graph.apply("texture", list(inputs[:2]), filter_mode=filter_mode,
                        boundary_mode=boundary_mode)


@encoder("raster_diff")
def _encode_raster_diff(ctx, expr):
    ctx.emit(expr, "RasterDiff", None, None, list(expr.inputs), data_format=_NCHW)


@encoder("raster_diff_grad")
def _encode_raster_diff_grad(ctx, expr):
    ctx.emit(expr, "RasterDiff", "Extra", {}, list(expr.inputs), data_format=_NCHW)


@decoder("RasterDiff")
def _decode_raster_diff(ctx, op, inputs):
    if op.get("main_type") == "Extra":
        ctx.n_inputs(op, inputs, 2)
        return _graph.apply("raster_diff_grad", list(inputs))
    ctx.n_inputs(op, inputs, 1)
    return _graph.apply("raster_diff", list(inputs))
