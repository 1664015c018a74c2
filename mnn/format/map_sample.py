"""Grid sampling in the .mnn file: ``grid_sample`` <-> MNN's ``GridSample`` (its input and
output in NC4HW4, as MNN's converter lays them out)."""

from ..express import graph as _graph
from .mapping import decoder, encoder

__all__ = []

# GridSample parameter codes (MNN's SampleMode and BorderMode).
_MODES = {"bilinear": 0, "nearest": 1}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_PADDING_NAMES = {v: k for k, v in _PADDINGS.items()}


@encoder("grid_sample")
def _encode_grid_sample(ctx, expr):
    x, grid = expr.inputs
    mode, padding = expr.attrs["mode"], expr.attrs["padding_mode"]
    if mode not in _MODES:
        ctx.fail(expr, f"sampling mode {mode!r} has no MNN form (bilinear and nearest do)")
    if padding not in _PADDINGS:
        ctx.fail(expr, f"padding mode {padding!r} has no MNN form")
    param = {"mode": _MODES[mode], "paddingMode": _PADDINGS[padding],
             "alignCorners": bool(expr.attrs["align_corners"]), "backward": False}
    out = ctx.new_tensor(expr.outputs[0].name + "__c4")
    ctx.emit(expr, "GridSample", "GridSample", param, [ctx.to_nc4hw4(x), grid],
             outputs=[out])
    ctx.from_nc4hw4(expr, out)


@decoder("GridSample")
def _decode_grid_sample(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    p = ctx.param(op, "GridSample")
    if p["backward"]:
        ctx.fail(op, "the backward (gradient) form of GridSample is not supported")
    mode = _MODE_NAMES.get(int(p["mode"]))
    padding = _PADDING_NAMES.get(int(p["paddingMode"]))
    if mode is None or padding is None:
        ctx.fail(op, f"sampling mode {p['mode']} / padding mode {p['paddingMode']} is not "
                 "supported")
    return _graph.apply("grid_sample", list(inputs), mode=mode, padding_mode=padding,
                        align_corners=bool(p["alignCorners"]))
