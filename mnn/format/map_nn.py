"""File mapping of the NN ops: Convolution (+ depthwise), Pooling, Pooling3D (global),
Softmax, ReLU/ReLU6/PReLU/ELU/Selu, InnerProduct, Scale, BatchNorm.

MNN facts used here: a convolution keeps its weights ``(O, C/group, KH, KW)`` and bias
inside the op (``Convolution2D.weight``/``bias``, or ``quanParameter`` when quantised,
or ``external`` offsets into the ``.weight`` file); ``pads`` are ``(top, left, bottom,
right)`` and win over ``padX``/``padY``; ``relu``/``relu6`` flags fuse an activation.
Convolution and pooling run on NC4HW4 tensors in MNN, so the writer wraps them in
ConvertTensor ops (the reader treats NCHW <-> NC4HW4 conversion as the identity). Average
pooling's ``countType`` DEFAULT counts padding under CAFFE padding and not otherwise.
"""

import numpy as np

from ..express import graph as _graph
from ..express.ops import elementwise as ew
from ..express.ops import movement
from ..express.var import const
from . import quantize
from .mapping import decoder, encoder

__all__ = []

_COMMON_DEFAULTS = {
    "padX": 0,
    "padY": 0,
    "kernelX": 1,
    "kernelY": 1,
    "strideX": 1,
    "strideY": 1,
    "dilateX": 1,
    "dilateY": 1,
    "padMode": 0,
    "group": 1,
    "outputCount": 0,
    "inputCount": 0,
    "relu": False,
    "relu6": False,
    "pads": None,
    "outPads": None,
    "hasOutputShape": False,
}


def _pads4(pads, pad_x, pad_y):
    if pads is not None and len(pads) >= 4:
        return tuple(int(p) for p in pads[:4])
    if pads is not None and len(pads) == 2:
        return (int(pads[0]), int(pads[1]), int(pads[0]), int(pads[1]))
    return (int(pad_y), int(pad_x), int(pad_y), int(pad_x))


def _file_pad_mode(attrs):
    """Our VALID honours explicit pads; MNN's refuses them, so pads are written as CAFFE
    (explicit pads, the same sizes when they are zero)."""
    return 2 if int(attrs["padding_mode"]) == 2 else 0


def _activation(x, common):
    if common["relu6"]:
        return _graph.apply("relu6", [x], min_value=0.0, max_value=6.0)[0]
    if common["relu"]:
        return _graph.apply("relu", [x], slope=0.0)[0]
    return x


# -- convolution -----------------------------------------------------------------------------


@decoder("Convolution", "ConvolutionDepthwise")
def _decode_conv(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 3)
    p = ctx.param(op, "Convolution2D")
    c = dict(_COMMON_DEFAULTS, **(p.get("common") or {}))
    x = inputs[0]
    x_shape = x.expr.metas[x.index].shape  # None: only run time tells (after a loop)
    if x_shape is not None and len(x_shape) != 4:
        ctx.fail(op, f"input must be 4-D, got shape {list(x_shape)}")
    kh, kw, out_c, group = c["kernelY"], c["kernelX"], c["outputCount"], c["group"]
    if min(kh, kw, c["strideX"], c["strideY"], c["dilateX"], c["dilateY"], group) < 1:
        ctx.fail(op, f"kernel, stride, dilation and group must be positive: {c}")
    in_c = x_shape[1] if x_shape is not None else int(c["inputCount"])
    if in_c < 1:
        ctx.fail(op, "the input channels are unknown (no inputCount, shape known only at run time)")
    if op["_type_name"] == "ConvolutionDepthwise":
        group = in_c
    if len(inputs) >= 2:
        w, b = inputs[1], (inputs[2] if len(inputs) == 3 else None)
        out_c = w.shape[0]
    else:
        if out_c < 1:
            ctx.fail(op, f"outputCount {out_c} must be positive")
        limit = out_c * in_c * kh * kw
        weight, bias = quantize.conv_weights(ctx, op, p, out_c, limit)
        per_out = kh * kw * out_c
        if weight.size % per_out:
            ctx.fail(op, f"{weight.size} weights do not fit {out_c} outputs of a {kh}x{kw} kernel")
        w = const(weight.reshape(out_c, weight.size // per_out, kh, kw))
        b = const(bias) if bias is not None else None
    mode = int(c["padMode"])
    pads = (0, 0, 0, 0) if mode != 0 else _pads4(c["pads"], c["padX"], c["padY"])
    crop = None
    if mode == 1:
        pads, crop = _valid_pads(x, w, c)
        mode = 0 if crop is not None else 1
    attrs = {
        "strides": (int(c["strideY"]), int(c["strideX"])),
        "dilations": (int(c["dilateY"]), int(c["dilateX"])),
        "pads": pads,
        "group": int(group),
        "padding_mode": mode,
    }
    if c["relu6"]:
        attrs["clamp"] = (0.0, 6.0)
    elif c["relu"]:
        attrs["clamp"] = (0.0, float("inf"))
    y = _graph.apply("conv2d", [x, w] + ([b] if b is not None else []), **attrs)[0]
    if crop is not None and tuple(y.shape[2:]) != crop:
        y = y[:, :, : crop[0], : crop[1]]
    return [y]


def _valid_pads(x, w, c):
    """MNN's VALID convolution: the output size ignores the pads, but the computation
    still shifts by ``padY``/``padX`` (or ``pads[0]``/``pads[1]``) at the top/left
    (``ConvolutionCommon::convolutionPad`` returns them for every mode but SAME; files
    saved by pymnn's ``conv2d`` with its default VALID mode carry them). Returns the
    explicit pads and the output size to crop to, or zero pads and None when there is no
    shift."""
    top, left = _pads4(c["pads"], c["padX"], c["padY"])[:2]
    if top == 0 and left == 0:
        return (0, 0, 0, 0), None
    (kh, kw), (h, wd) = w.shape[2:], x.shape[2:]
    sy, sx, dy, dx = c["strideY"], c["strideX"], c["dilateY"], c["dilateX"]
    ekh, ekw = dy * (kh - 1) + 1, dx * (kw - 1) + 1
    oh, ow = -(-(h - ekh + 1) // sy), -(-(wd - ekw + 1) // sx)
    bottom = max(0, (oh - 1) * sy + ekh - h - top)
    right = max(0, (ow - 1) * sx + ekw - wd - left)
    return (top, left, bottom, right), (oh, ow)


@encoder("conv2d")
def _encode_conv(ctx, expr):
    x, w = expr.inputs[0], expr.inputs[1]
    b = expr.inputs[2] if len(expr.inputs) == 3 else None
    a = expr.attrs
    out_c, in_per_group, kh, kw = w.shape
    group = int(a["group"])
    common = {
        "kernelY": kh,
        "kernelX": kw,
        "strideY": a["strides"][0],
        "strideX": a["strides"][1],
        "dilateY": a["dilations"][0],
        "dilateX": a["dilations"][1],
        "padMode": _file_pad_mode(a),
        "group": group,
        "outputCount": out_c,
        "inputCount": in_per_group * group,
        "padY": a["pads"][0],
        "padX": a["pads"][1],
        "pads": np.asarray(a["pads"], np.int32),
    }
    clamp = a.get("clamp")
    after = None
    if clamp is not None:
        low, high = float(clamp[0]), float(clamp[1])
        if low == 0.0 and high == 6.0:
            common["relu6"] = True
        elif low == 0.0 and high == float("inf"):
            common["relu"] = True
        else:
            after = (low, high)  # any other clamp: a ReLU6 (MNN's clip) after the op
    depthwise = group > 1 and group == out_c and in_per_group == 1
    type_name = "ConvolutionDepthwise" if depthwise else "Convolution"
    w_value = ctx.static(w)
    b_value = ctx.static(b) if b is not None else np.zeros(out_c, np.float32)
    src = ctx.to_nc4hw4(x)
    if w_value is None or b_value is None:
        # Weights computed at run time: MNN takes them as extra inputs.
        extra = [w] + ([b] if b is not None else [])
        out = ctx.emit(
            expr,
            "Convolution",
            "Convolution2D",
            {"common": common},
            [src] + extra,
            outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")],
        )
    else:
        param = {"common": common}
        param.update(quantize.encode_conv_weights(ctx, w_value, b_value))
        out = ctx.emit(
            expr,
            type_name,
            "Convolution2D",
            param,
            [src],
            outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")],
        )
    if after is not None:
        clipped = ctx.new_tensor(expr.outputs[0].name + "__clip")
        ctx.emit(
            expr,
            "ReLU6",
            "Relu6",
            {"minValue": after[0], "maxValue": after[1]},
            [out[0]],
            outputs=[clipped],
        )
        out = [clipped]
    ctx.from_nc4hw4(expr, out[0])


# -- pooling ---------------------------------------------------------------------------------


@decoder("Pooling")
def _decode_pool(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "Pool")
    x = inputs[0]
    if x.ndim != 4:
        ctx.fail(op, f"input must be 4-D, got shape {x.shape}")
    is_max = p["type"] == 0
    if p["isGlobal"]:
        attrs = {
            "kernel": (1, 1),
            "strides": (1, 1),
            "pads": (0, 0, 0, 0),
            "padding_mode": 1,
            "ceil_mode": False,
            "global_pool": True,
            "output_size": None,
        }
        if not is_max:
            attrs["count_include_pad"] = False
        return _graph.apply("max_pool" if is_max else "avg_pool", [x], **attrs)
    mode = int(p["padType"])
    pads = _pads4(p["pads"], p["padX"], p["padY"]) if mode == 0 else (0, 0, 0, 0)
    kh, kw = int(p["kernelY"]), int(p["kernelX"])
    if min(kh, kw, p["strideX"], p["strideY"]) < 1:
        ctx.fail(op, f"kernel {kh}x{kw} and strides must be positive")
    attrs = {
        "kernel": (kh, kw),
        "strides": (int(p["strideY"]), int(p["strideX"])),
        "pads": pads,
        "padding_mode": mode,
        "ceil_mode": bool(p["ceilModel"]),
        "global_pool": False,
        "output_size": None,
    }
    if is_max:
        return _graph.apply("max_pool", [x], **attrs)
    count = int(p["countType"])
    include = (mode == 0) if count == 0 else count == 1
    return _graph.apply("avg_pool", [x], count_include_pad=include, **attrs)


@decoder("Pooling3D")
def _decode_pool3d(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "Pool3D")
    x = inputs[0]
    if p["isGlobal"]:
        if x.ndim < 3:
            ctx.fail(op, f"input must have spatial dimensions, got shape {x.shape}")
        axes = list(range(2, x.ndim))
        from ..express.ops import reduce as red

        if p["type"] == 0:
            return [red.reduce_max(x, axes, True)]
        return [red.reduce_mean(x, axes, True)]
    if x.ndim != 5:
        ctx.fail(op, f"input must be 5-D, got shape {x.shape}")
    kernel, strides = _ints3(ctx, op, p, "kernels"), _ints3(ctx, op, p, "strides")
    if int(p["padType"]) == 1:  # VALID
        pads = (0, 0, 0)
    elif int(p["padType"]) == 2:  # SAME: output ceil(in / stride), smaller half first
        pads = ()
        for size, k, s in zip(x.shape[2:], kernel, strides):
            total = max((-(-size // s) - 1) * s + k - size, 0)
            pads += (total // 2,)
        if any(2 * b != max((-(-size // s) - 1) * s + k - size, 0)
               for b, size, k, s in zip(pads, x.shape[2:], kernel, strides)):
            ctx.fail(op, "SAME padding with an odd total is not supported in Pooling3D")
    else:
        pads = _ints3(ctx, op, p, "pads") if p["pads"] is not None else (0, 0, 0)
    attrs = dict(kernel=kernel, strides=strides, pads=pads + pads, dilations=(1, 1, 1),
                 ceil_mode=False)
    if p["type"] == 0:
        return _graph.apply("max_pool3d", [x], **attrs)
    # MNN averages the (h, w) windows counting padding, then the depth windows without:
    # with no depth padding that is the average over every tap, padding included.
    if pads[0]:
        ctx.fail(op, f"average Pooling3D with depth padding {pads[0]} (MNN mixes counting "
                 "rules there) is not supported")
    return _graph.apply("avg_pool3d", [x], count_include_pad=True, **attrs)


def _ints3(ctx, op, p, name):
    vals = p[name]
    vals = () if vals is None else tuple(int(v) for v in vals)
    if len(vals) != 3 or min(vals) < 0 or (name != "pads" and min(vals) < 1):
        ctx.fail(op, f"Pool3D {name} must be three valid ints, got {list(vals)}")
    return vals


@encoder("max_pool3d", "avg_pool3d")
def _encode_pool3d(ctx, expr):
    # MNN runs Pooling3D as a 2-D pooling over (h, w) then one over depth, with symmetric
    # pads, floor output sizes and no dilation.
    a = expr.attrs
    pads = tuple(a["pads"])
    if tuple(a["dilations"]) != (1, 1, 1) or a["ceil_mode"] or pads[:3] != pads[3:]:
        ctx.fail(expr, "MNN's Pooling3D has no dilation, no ceil mode and only symmetric pads")
    is_max = expr.op.name == "max_pool3d"
    if not is_max and any(pads) and (pads[0] or not a["count_include_pad"]):
        ctx.fail(expr, "MNN's average Pooling3D counts padding in (h, w) only: pads "
                 f"{list(pads)} with count_include_pad={a['count_include_pad']} differ")
    param = {
        "strides": np.asarray(a["strides"], np.int32),
        "kernels": np.asarray(a["kernel"], np.int32),
        "pads": np.asarray(pads[:3], np.int32),
        "type": 0 if is_max else 1,
        "padType": 0,
        "isGlobal": False,
    }
    src = ctx.to_nc4hw4(expr.inputs[0])
    out = ctx.emit(expr, "Pooling3D", "Pool3D", param, [src],
                   outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")])
    ctx.from_nc4hw4(expr, out[0])


@encoder("max_pool", "avg_pool")
def _encode_pool(ctx, expr):
    a = expr.attrs
    if a.get("output_size") is not None:
        ctx.fail(expr, "adaptive pooling has no MNN op (only global or fixed windows)")
    if tuple(a.get("dilations", (1, 1))) != (1, 1) and not a["global_pool"]:
        ctx.fail(expr, f"dilated pooling (dilations {list(a['dilations'])}) has no MNN op")
    is_max = expr.op.name == "max_pool"
    param = {
        "type": 0 if is_max else 1,
        "isGlobal": bool(a["global_pool"]),
        "kernelY": a["kernel"][0],
        "kernelX": a["kernel"][1],
        "strideY": a["strides"][0],
        "strideX": a["strides"][1],
        "padY": a["pads"][0],
        "padX": a["pads"][1],
        "pads": np.asarray(a["pads"], np.int32),
        "padType": _file_pad_mode(a),
        "ceilModel": bool(a["ceil_mode"]),
    }
    if not is_max:
        param["countType"] = 1 if a.get("count_include_pad") else 2
    src = ctx.to_nc4hw4(expr.inputs[0])
    out = ctx.emit(
        expr,
        "Pooling",
        "Pool",
        param,
        [src],
        outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")],
    )
    ctx.from_nc4hw4(expr, out[0])


# -- activations and softmax -----------------------------------------------------------------


@decoder("Softmax")
def _decode_softmax(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    axis = int(ctx.param(op, "Axis")["axis"]) if op.get("main") is not None else 1
    x = inputs[0]
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    return _graph.apply("softmax", [x], axis=axis % x.ndim)


@encoder("softmax")
def _encode_softmax(ctx, expr):
    ctx.emit(expr, "Softmax", "Axis", {"axis": int(expr.attrs["axis"])}, expr.inputs)


@decoder("ReLU")
def _decode_relu(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    slope = 0.0 if op.get("main") is None else float(ctx.param(op, "Relu")["slope"])
    return _graph.apply("relu", [inputs[0]], slope=slope)


@encoder("relu")
def _encode_relu(ctx, expr):
    ctx.emit(expr, "ReLU", "Relu", {"slope": float(expr.attrs["slope"])}, expr.inputs)


@decoder("ReLU6")
def _decode_relu6(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 3)
    low, high = 0.0, 6.0
    if op.get("main") is not None:
        p = ctx.param(op, "Relu6")
        low, high = float(p["minValue"]), float(p["maxValue"])
    if len(inputs) >= 2:  # ONNX Clip with min/max inputs
        low = float(ctx.need_static(op, inputs[1], "the clip minimum"))
    if len(inputs) == 3:
        high = float(ctx.need_static(op, inputs[2], "the clip maximum"))
    return _graph.apply("relu6", [inputs[0]], min_value=low, max_value=high)


@encoder("relu6")
def _encode_relu6(ctx, expr):
    ctx.emit(
        expr,
        "ReLU6",
        "Relu6",
        {"minValue": float(expr.attrs["min_value"]), "maxValue": float(expr.attrs["max_value"])},
        expr.inputs,
    )


@decoder("PReLU")
def _decode_prelu(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "PRelu")
    slope = p["slope"]
    if slope is None or len(slope) == 0:
        ctx.fail(op, "has no slope values")
    return _graph.apply("prelu", [inputs[0], const(np.asarray(slope, np.float32))])


@encoder("prelu")
def _encode_prelu(ctx, expr):
    slope = ctx.static(expr.inputs[1])
    if slope is None:
        ctx.fail(expr, "MNN's PReLU needs a constant slope")
    slope = np.asarray(slope, np.float32).reshape(-1)
    # MNN's PReLU kernel reads channel-packed (NC4HW4) tensors, as its converter feeds it.
    src = ctx.to_nc4hw4(expr.inputs[0])
    out = ctx.emit(expr, "PReLU", "PRelu", {"slopeCount": int(slope.size), "slope": slope},
                   [src], outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")])
    ctx.from_nc4hw4(expr, out[0])


@decoder("ELU")
def _decode_elu(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    return _graph.apply("elu", [inputs[0]], alpha=float(ctx.param(op, "ELU")["alpha"]))


@decoder("Selu")
def _decode_selu(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "Selu")
    return _graph.apply("selu", [inputs[0]], scale=float(p["scale"]), alpha=float(p["alpha"]))


# -- per-channel affine ops ------------------------------------------------------------------


def _channel_shape(x):
    return [1, -1] + [1] * (x.ndim - 2)


@decoder("Scale")
def _decode_scale(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "Scale")
    x = inputs[0]
    scale, bias = quantize.scale_arrays(ctx, op, p)
    if x.ndim < 2 or scale.size != x.shape[1]:
        ctx.fail(op, f"{scale.size} scales for input shape {x.shape}")
    y = ew.multiply(x, movement.reshape(const(scale), _channel_shape(x)))
    if bias is not None:
        y = ew.add(y, movement.reshape(const(bias), _channel_shape(x)))
    return [y]


@decoder("BatchNorm")
def _decode_batch_norm(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "BatchNorm")
    x = inputs[0]
    fields = {
        k: (np.zeros(0, np.float32) if p[k] is None else np.asarray(p[k], np.float32))
        for k in ("slopeData", "meanData", "varData", "biasData")
    }
    n = x.shape[1] if x.ndim >= 2 else 0
    if any(v.size != n for v in fields.values()):
        ctx.fail(op, f"batch norm arrays must hold {n} values each")
    scale = fields["slopeData"] / np.sqrt(fields["varData"] + np.float32(p["epsilon"]))
    shift = fields["biasData"] - fields["meanData"] * scale
    y = ew.multiply(x, movement.reshape(const(scale), _channel_shape(x)))
    return [ew.add(y, movement.reshape(const(shift), _channel_shape(x)))]


@decoder("InnerProduct")
def _decode_inner_product(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "InnerProduct")
    x = inputs[0]
    n_out = int(p["outputCount"])
    weight = quantize.inner_product_weight(ctx, op, p)
    if n_out < 1 or weight.size % n_out:
        ctx.fail(op, f"{weight.size} weights do not fit {n_out} outputs")
    w = weight.reshape(n_out, -1)
    axis = int(p["axis"]) or 1
    flat = movement.reshape(x, list(x.shape[:axis]) + [-1])
    y = _graph.apply("matmul", [flat, const(w)], transpose_a=False, transpose_b=True)[0]
    if p["biasTerm"] and p["bias"] is not None:
        y = ew.add(y, const(np.asarray(p["bias"], np.float32)))
    return [y]


# -- normalisation ---------------------------------------------------------------------------


@decoder("LayerNorm")
def _decode_layer_norm(ctx, op, inputs):
    """Layer (or RMS) norm over ``axis``, written with express reductions: no op of the
    table is a fused layer norm."""
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "LayerNorm")
    x = inputs[0]
    if int(p["group"]) > 1:
        return _decode_group_layer_norm(ctx, op, p, x)
    axes = [int(a) for a in (p["axis"] if p["axis"] is not None else [-1])]
    if any(not -x.ndim <= a < x.ndim for a in axes):
        ctx.fail(op, f"axes {axes} out of range for rank {x.ndim}")
    axes = sorted(a % x.ndim for a in axes)
    gamma, beta = quantize.layer_norm_arrays(ctx, op, p)
    norm_shape = [x.shape[a] for a in axes]
    size = int(np.prod(norm_shape))
    from ..express.ops import reduce as red

    eps = np.asarray(p["epsilon"], x.dtype)
    if p["useRMSNorm"]:
        y = ew.multiply(x, ew.rsqrt(ew.add(red.reduce_mean(ew.square(x), axes, True), eps)))
    else:
        centred = ew.subtract(x, red.reduce_mean(x, axes, True))
        var = red.reduce_mean(ew.square(centred), axes, True)
        y = ew.multiply(centred, ew.rsqrt(ew.add(var, eps)))
    affine_shape = [x.shape[a] if a in axes else 1 for a in range(min(axes), x.ndim)]
    for values, fn in ((gamma, ew.multiply), (beta, ew.add)):
        if values is None:
            continue
        if values.size != size:
            ctx.fail(op, f"{values.size} affine values for normalised shape {norm_shape}")
        y = fn(y, const(values.reshape(affine_shape).astype(x.dtype)))
    return [y]


def _decode_group_layer_norm(ctx, op, p, x):
    """MNN's LayerNorm with ``group`` G > 1: each of the N*G chunks of the flattened
    sample is normalised (what our writer emits for group norm)."""
    groups = int(p["group"])
    if p["useRMSNorm"]:
        ctx.fail(op, "RMS norm with groups is not supported")
    gamma, beta = quantize.layer_norm_arrays(ctx, op, p)
    if gamma is not None or beta is not None:
        # MNN applies these per element of a group, not per channel; no converter we
        # know of writes them, so there is no file to check the reading against.
        ctx.fail(op, "gamma/beta inside a grouped LayerNorm are not supported")
    if x.ndim < 2 or x.shape[1] % groups:
        ctx.fail(op, f"input {list(x.shape)} does not split into {groups} groups")
    return _graph.apply("group_norm", [x], groups=groups, epsilon=float(p["epsilon"]),
                        has_gamma=False, has_beta=False)


@encoder("layer_norm")
def _encode_layer_norm(ctx, expr):
    """MNN's LayerNorm keeps gamma and beta in the op and needs both or neither: a
    missing one is written as ones/zeros; run-time ones are applied by separate ops."""
    attrs = expr.attrs
    x = expr.inputs[0]
    params = list(expr.inputs[1:])
    gamma = params.pop(0) if attrs["has_gamma"] else None
    beta = params.pop(0) if attrs["has_beta"] else None
    static = [None if v is None else ctx.static_above(v) for v in (gamma, beta)]
    if any(v is not None and s is None for v, s in zip((gamma, beta), static)):
        from ..express.ops import nn_norm

        ctx.encode_as(expr, [nn_norm._layer_norm_composite(x, attrs["start"],
                                                           attrs["epsilon"], gamma, beta)])
        return
    rank = len(x.shape)
    main = {"axis": np.arange(attrs["start"], rank, dtype=np.int32),
            "epsilon": float(attrs["epsilon"]), "group": 1}
    if gamma is not None or beta is not None:
        size = int(np.prod(x.shape[attrs["start"]:]))
        g, b = static
        main["gamma"] = (np.ones(size, np.float32) if g is None
                         else np.asarray(g, np.float32).reshape(-1))
        main["beta"] = (np.zeros(size, np.float32) if b is None
                        else np.asarray(b, np.float32).reshape(-1))
    ctx.emit(expr, "LayerNorm", "LayerNorm", main, [x])


@encoder("group_norm")
def _encode_group_norm(ctx, expr):
    """Group norm as MNN's LayerNorm with ``group`` (no affine: MNN's gamma is per element
    of a group), then the per-channel scale and shift as separate ops."""
    attrs = expr.attrs
    x = expr.inputs[0]
    if attrs["has_gamma"] or attrs["has_beta"]:
        params = list(expr.inputs[1:])
        y = _graph.apply("group_norm", [x], groups=attrs["groups"], epsilon=attrs["epsilon"],
                         has_gamma=False, has_beta=False)[0]
        per_channel = [1, x.shape[1]] + [1] * (len(x.shape) - 2)
        if attrs["has_gamma"]:
            y = ew.multiply(y, movement.reshape(params.pop(0), per_channel))
        if attrs["has_beta"]:
            y = ew.add(y, movement.reshape(params.pop(0), per_channel))
        ctx.encode_as(expr, [y])
        return
    main = {"axis": np.arange(1, len(x.shape), dtype=np.int32),
            "epsilon": float(attrs["epsilon"]), "group": int(attrs["groups"])}
    ctx.emit(expr, "LayerNorm", "LayerNorm", main, [x])


# -- resizing --------------------------------------------------------------------------------

# Interp.resizeType <-> (mode, nearest rounding); ctm <-> coordinate mode.
_RESIZE_TYPES = {
    1: ("nearest", "floor"),
    2: ("linear", "round_prefer_floor"),
    3: ("cubic", "round_prefer_floor"),
    4: ("nearest", "round_prefer_floor"),
}
_CTM = {1: "align_corners", 2: "half_pixel", 3: "pytorch_half_pixel", 4: "asymmetric"}
_CTM_CODES = {v: k for k, v in _CTM.items()}


@decoder("Interp")
def _decode_interp(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    p = ctx.param(op, "Interp")
    x = inputs[0]
    if x.ndim != 4:
        ctx.fail(op, f"input must be 4-D, got shape {x.shape}")
    kind = _RESIZE_TYPES.get(int(p["resizeType"]))
    if kind is None:
        ctx.fail(op, f"resize type {p['resizeType']} is not supported")
    h, w = x.shape[2:]
    scales = None
    if len(inputs) == 2:
        given = ctx.need_static(op, inputs[1], "the output size or scales").reshape(-1)
        if given.size not in (2, 4):
            ctx.fail(op, f"size/scales input has {given.size} entries (2 or 4 expected)")
        hw = given[-2:]
        if given.dtype.kind == "f":
            scales = (float(hw[0]), float(hw[1]))
            out_hw = (int(np.floor(h * scales[0])), int(np.floor(w * scales[1])))
        else:
            out_hw = (int(hw[0]), int(hw[1]))
    elif p["outputHeight"] > 0 and p["outputWidth"] > 0:
        out_hw = (int(p["outputHeight"]), int(p["outputWidth"]))
    else:
        scales = (float(p["heightScale"]), float(p["widthScale"]))
        out_hw = (int(np.floor(h * scales[0])), int(np.floor(w * scales[1])))
    if min(out_hw) < 1:
        ctx.fail(op, f"output size {list(out_hw)} must be positive")
    coord = _CTM.get(int(p["ctm"]))
    if coord is None:
        coord = (
            "align_corners"
            if p["alignCorners"]
            else ("half_pixel" if p["halfPixelCenters"] else "asymmetric")
        )
    return _graph.apply(
        "resize",
        [x],
        out_hw=out_hw,
        scales=scales,
        mode=kind[0],
        coord=coord,
        nearest_mode=kind[1],
        cubic_a=float(p["cubicCoeffA"]),
        exclude_outside=False,
    )


@encoder("resize")
def _encode_resize(ctx, expr):
    a = expr.attrs
    if a.get("exclude_outside"):
        ctx.fail(expr, "exclude_outside has no MNN Interp equivalent")
    if a.get("antialias") or a["coord"] not in _CTM_CODES:
        ctx.fail(expr, f"coordinate mode {a['coord']!r} / antialias has no MNN Interp "
                 "equivalent")
    mode, nearest = a["mode"], a["nearest_mode"]
    if mode == "nearest":
        codes = {"floor": 1, "round_prefer_floor": 4}
        if nearest not in codes:
            ctx.fail(
                expr,
                f"nearest rounding {nearest!r} has no MNN Interp equivalent "
                "(floor and round_prefer_floor do)",
            )
        resize_type = codes[nearest]
    else:
        resize_type = {"linear": 2, "cubic": 3}[mode]
    coord = a["coord"]
    n, c = expr.inputs[0].shape[:2]
    if a.get("scales") is not None:
        size = ctx.const_tensor(np.float32([1, 1] + list(a["scales"])), expr, "scales")
    else:
        size = ctx.const_tensor(np.int32([n, c] + list(a["out_hw"])), expr, "size")
    param = {
        "resizeType": resize_type,
        "ctm": _CTM_CODES[coord],
        "alignCorners": coord == "align_corners",
        "halfPixelCenters": coord == "half_pixel",
        "cubicCoeffA": float(a["cubic_a"]),
        "outputHeight": int(a["out_hw"][0]),
        "outputWidth": int(a["out_hw"][1]),
    }
    src = ctx.to_nc4hw4(expr.inputs[0])
    out = ctx.emit(
        expr,
        "Interp",
        "Interp",
        param,
        [src, size],
        outputs=[ctx.new_tensor(expr.outputs[0].name + "__c4")],
    )
    ctx.from_nc4hw4(expr, out[0])


# -- transposed convolution ------------------------------------------------------------------


@decoder("Deconvolution")
def _decode_deconv(ctx, op, inputs):
    """MNN's Deconvolution keeps ONNX ConvTranspose's weight ``(Cin, Cout/group, KH, KW)``,
    which is conv2d's weight read the other way: the input gradient of a convolution."""
    ctx.n_inputs(op, inputs, 1, 3)
    p = ctx.param(op, "Convolution2D")
    c = dict(_COMMON_DEFAULTS, **(p.get("common") or {}))
    x = inputs[0]
    if x.ndim != 4:
        ctx.fail(op, f"input must be 4-D, got shape {x.shape}")
    kh, kw, group = c["kernelY"], c["kernelX"], c["group"]
    sy, sx, dy_, dx = c["strideY"], c["strideX"], c["dilateY"], c["dilateX"]
    if min(kh, kw, sy, sx, dy_, dx, group) < 1:
        ctx.fail(op, f"kernel, stride, dilation and group must be positive: {c}")
    cin = x.shape[1]
    if len(inputs) >= 2:
        w, b = inputs[1], (inputs[2] if len(inputs) == 3 else None)
    else:
        out_c = int(c["outputCount"])
        if out_c < 1:
            ctx.fail(op, f"outputCount {out_c} must be positive")
        weight, bias = quantize.conv_weights(ctx, op, p, out_c, cin * out_c * kh * kw)
        if weight.size != cin * (out_c // group) * kh * kw:
            ctx.fail(
                op,
                f"{weight.size} weights do not fit {cin} inputs, {out_c} outputs, "
                f"group {group} and a {kh}x{kw} kernel",
            )
        w = const(weight.reshape(cin, out_c // group, kh, kw))
        b = const(bias) if bias is not None else None
    mode = int(c["padMode"])
    pads = (0, 0, 0, 0) if mode != 0 else _pads4(c["pads"], c["padX"], c["padY"])
    out_pads = [int(v) for v in (c["outPads"] if c["outPads"] is not None else [0, 0])]
    h, wd = x.shape[2:]
    if mode == 2:
        out_hw = (h * sy, wd * sx)
    else:
        out_hw = (
            (h - 1) * sy - pads[0] - pads[2] + dy_ * (kh - 1) + 1 + out_pads[0],
            (wd - 1) * sx - pads[1] - pads[3] + dx * (kw - 1) + 1 + out_pads[-1],
        )
    if min(out_hw) < 1:
        ctx.fail(op, f"output size {list(out_hw)} must be positive")
    y = _graph.apply(
        "conv2d_backprop_input",
        [x, w],
        input_hw=tuple(out_hw),
        strides=(sy, sx),
        pads=pads,
        dilations=(dy_, dx),
        group=int(group),
        padding_mode=mode,
    )[0]
    if b is not None:
        y = ew.add(y, movement.reshape(b, [1, -1, 1, 1]))
    return [_activation(y, c)]


@encoder("conv2d_backprop_input")
def _encode_deconv(ctx, expr):
    x, w = expr.inputs
    a = expr.attrs
    cin, cout_g, kh, kw = w.shape
    group = int(a["group"])
    w_value = ctx.static(w)
    if w_value is None and group != 1:
        ctx.fail(expr, "a grouped transposed convolution needs constant weights in MNN")
    h, wd = x.shape[2:]
    (sy, sx), (dy_, dx), pads = a["strides"], a["dilations"], tuple(a["pads"])
    mode = int(a["padding_mode"])
    if mode == 2:
        ctx.fail(
            expr, "SAME padding of a transposed convolution is written with explicit pads only"
        )
    oh, ow = a["input_hw"]
    out_pads = (
        oh - ((h - 1) * sy - pads[0] - pads[2] + dy_ * (kh - 1) + 1),
        ow - ((wd - 1) * sx - pads[1] - pads[3] + dx * (kw - 1) + 1),
    )
    if min(out_pads) < 0:
        ctx.fail(expr, f"output size {[oh, ow]} is smaller than the transposed convolution gives")
    cin_g = cin // group
    common = {
        "kernelY": kh,
        "kernelX": kw,
        "strideY": sy,
        "strideX": sx,
        "dilateY": dy_,
        "dilateX": dx,
        "padMode": 0,
        "group": 1,
        "outputCount": cout_g,
        "inputCount": cin_g,
        "padY": pads[0],
        "padX": pads[1],
        "pads": np.asarray(pads, np.int32),
        "outPads": np.asarray(out_pads, np.int32),
    }
    base = expr.outputs[0].name
    if w_value is None:
        # Weights computed at run time: MNN takes them as a second input.
        c4 = ctx.to_nc4hw4(x)
        out = ctx.emit(
            expr,
            "Deconvolution",
            "Convolution2D",
            {"common": common},
            [c4, w],
            outputs=[ctx.new_tensor(f"{base}__c4")],
        )[0]
        ctx.from_nc4hw4(expr, out)
        return
    if group == 1:
        parts = [ctx.tensor(x)]
    else:
        # Like MNN's converter: one Deconvolution per group between a Slice and a Concat.
        parts = [ctx.new_tensor(f"{base}__in{g}") for g in range(group)]
        ctx.emit(
            expr,
            "Slice",
            "Slice",
            {
                "axis": 1,
                "slicePoints": np.arange(1, group, dtype=np.int32) * cin_g,
                "sourceType": 0,
            },
            [x],
            outputs=parts,
        )
    outs = []
    for g, part in enumerate(parts):
        param = {"common": dict(common)}
        param.update(
            quantize.encode_conv_weights(
                ctx, w_value[g * cin_g : (g + 1) * cin_g], np.zeros(cout_g, np.float32)
            )
        )
        c4 = ctx.convert_index(part, 0, 2, f"{base}__in{g}_c4")
        out = ctx.emit(
            expr,
            "Deconvolution",
            "Convolution2D",
            param,
            [c4],
            outputs=[ctx.new_tensor(f"{base}__g{g}_c4")],
        )[0]
        outs.append(out)
    if group == 1:
        ctx.from_nc4hw4(expr, outs[0])
        return
    nchw = [ctx.convert_index(o, 2, 0, f"{base}__g{g}") for g, o in enumerate(outs)]
    ctx.emit(expr, "Concat", "Axis", {"axis": 1}, nchw)


@decoder("LRN")
def _decode_lrn(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "LRN")
    if int(p["regionType"]) != 0:
        ctx.fail(op, "only across-channel LRN (regionType 0) is supported")
    if int(p["localSize"]) < 1:
        ctx.fail(op, f"window size {p['localSize']} must be positive")
    from ..express.ops.nn_norm import lrn

    return [
        lrn(inputs[0], int(p["localSize"]), float(p["alpha"]), float(p["beta"]), float(p["bias"]))
    ]
