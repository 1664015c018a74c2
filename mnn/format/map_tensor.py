"""File mapping of indexing and tensor ops: GatherV2/Gather/GatherND, StridedSlice (TF
masks, and ONNX's form with ``fromType`` 1), Padding, Tile, ArgMax/ArgMin, CumSum, OneHot,
Where, DepthToSpace/SpaceToDepth, Reverse, and the converter's run-time-shaped ops (Reshape,
BroadcastTo, Squeeze/Unsqueeze, Tile, Fill with tensor parameters).

MNN facts used here: GatherV2 takes ``[params, indices, axis]``; StridedSlice takes
``[x, begin, end, strides]`` (or ``[x, starts, ends, axes, steps]`` when ``fromType`` is
1); Padding takes ``[x, pads]`` with pads ``[[before, after]] * ndim`` flattened and
``PadParam.mode``; ArgMax/ArgMin drop the reduced axis; CumSum takes ``[x, axis]``;
OneHot takes ``[indices, depth, on, off]``; Where returns the ``[n, rank]`` int32
coordinates of non-zero elements.
"""

import numpy as np

from ..express import graph as _graph
from ..express.ops import elementwise as ew
from ..express.ops import movement
from .errors import ModelFileError
from .mapping import datatype_of, decoder, encoder

__all__ = []


def _i32(values):
    return np.asarray(values, np.int32).reshape(-1)


def _static_ints(ctx, op, var, what):
    return [int(v) for v in np.ravel(ctx.need_static(op, var, what))]


# -- gather ----------------------------------------------------------------------------------


@decoder("GatherV2", "Gather")
def _decode_gather(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2, 3)
    x, idx = inputs[0], inputs[1]
    if len(inputs) == 3 and ctx.static(inputs[2]) is None:
        # The axis is computed at run time (after a loop): gather once it is known.
        return _graph.apply("onnx_deferred", list(inputs), node=_RuntimeAxisGather())
    if len(inputs) == 3:
        axis = int(np.ravel(ctx.need_static(op, inputs[2], "the axis"))[0])
    elif op.get("main_type") == "Gather" and op.get("main") is not None:
        axis = int(op["main"]["axis"])
    else:
        axis = 0
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    value = ctx.static(idx)
    if value is not None and value.size and value.min() < 0:
        # MNN and ONNX count negative indices from the end.
        value = np.where(value < 0, value + x.shape[axis], value)
        from ..express.var import const

        idx = const(value.astype(np.int32))
    return _graph.apply("gather", [x, idx], axis=axis % x.ndim)


class _RuntimeAxisGather:
    """GatherV2 whose axis only run time knows, run through the ``onnx_deferred`` op
    (one output; ``run`` gets the arrays ``[params, indices, axis]``)."""

    n_outputs = 1

    def encode_op(self, ctx, expr):
        """Written back as the file's GatherV2 with its axis input."""
        ctx.emit(expr, "GatherV2", None, None, expr.inputs)

    def run(self, arrays):
        from ..express.var import const

        x, idx, axis = arrays
        axis = int(np.ravel(axis)[0])
        if not -x.ndim <= axis < x.ndim:
            raise ModelFileError(f"mnn: GatherV2: axis {axis} out of range for rank {x.ndim}")
        axis %= x.ndim
        idx = np.where(idx < 0, idx + x.shape[axis], idx).astype(np.int32)
        return [_graph.apply("gather", [const(x), const(idx)], axis=axis)[0].read()]


@encoder("gather")
def _encode_gather(ctx, expr):
    axis = ctx.const_tensor(np.int32(expr.attrs["axis"]), expr, "axis")
    ctx.emit(
        expr,
        "GatherV2",
        "GatherV2",
        {"Tindices": 3, "Tparams": ctx.dtype_code(expr.inputs[0])},
        [expr.inputs[0], expr.inputs[1], axis],
    )


@decoder("GatherND")
def _decode_gather_nd(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    return _graph.apply("gather_nd", list(inputs))


@encoder("gather_nd")
def _encode_gather_nd(ctx, expr):
    ctx.emit(expr, "GatherND", None, None, expr.inputs)


# -- slicing ---------------------------------------------------------------------------------

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_FILE_MASKS = ("beginMask", "endMask", "ellipsisMask", "newAxisMask", "shrinkAxisMask")


@decoder("StridedSlice")
def _decode_strided_slice(ctx, op, inputs):
    p = ctx.param(op, "StridedSliceParam") if op.get("main") is not None else {}
    x = inputs[0] if inputs else None
    if p.get("fromType", 0) == 1:  # ONNX Slice: x, starts, ends[, axes[, steps]]
        ctx.n_inputs(op, inputs, 3, 5)
        if x.expr.metas[x.index].shape is None or any(ctx.static(v) is None for v in inputs[1:]):
            # Bounds or rank known only at run time (inside loops): ONNX's Slice as is.
            return [_graph.apply("onnx_slice", list(inputs))[0]]
        starts = _static_ints(ctx, op, inputs[1], "the starts")
        ends = _static_ints(ctx, op, inputs[2], "the ends")
        axes = (
            _static_ints(ctx, op, inputs[3], "the axes")
            if len(inputs) > 3
            else list(range(len(starts)))
        )
        steps = (
            _static_ints(ctx, op, inputs[4], "the steps") if len(inputs) > 4 else [1] * len(starts)
        )
        if not len(starts) == len(ends) == len(axes) == len(steps):
            ctx.fail(op, "starts, ends, axes and steps differ in length")
        key = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            if not -x.ndim <= a < x.ndim or st == 0:
                ctx.fail(op, f"axis {a} or step {st} is invalid for rank {x.ndim}")
            big = np.iinfo(np.int32).max
            key[a] = slice(max(min(s, big), -big), max(min(e, big), -big - 1), st)
        return [x[tuple(key)]]
    ctx.n_inputs(op, inputs, 4)
    if any(ctx.static(v) is None for v in inputs[1:]):
        return [_runtime_strided_slice(ctx, op, p, inputs)]
    attrs = {
        "begin": tuple(_static_ints(ctx, op, inputs[1], "begin")),
        "end": tuple(_static_ints(ctx, op, inputs[2], "end")),
        "strides": tuple(_static_ints(ctx, op, inputs[3], "strides")),
    }
    for ours, theirs in zip(_MASKS, _FILE_MASKS):
        attrs[ours] = int(p.get(theirs, 0))
    return _graph.apply("strided_slice", [x], **attrs)


def _runtime_strided_slice(ctx, op, p, inputs):
    """A TF strided slice whose begin/end are computed at run time, as ONNX's Slice over
    the leading axes: masked bounds become the edges, shrunk axes take one element and
    are squeezed. Strides must be constants here (they decide which edge is which)."""
    from ..express.ops.selection import select
    from ..express.var import const

    x, begin, end, strides = inputs
    if int(p.get("ellipsisMask", 0)) or int(p.get("newAxisMask", 0)):
        ctx.fail(op, "ellipsis and new-axis masks need constant begin/end")
    steps = ctx.static(strides)
    if steps is None:
        ctx.fail(op, "the strides must be constants")
    steps = [int(v) for v in np.ravel(steps)]
    n = len(steps)
    big, small = np.iinfo(np.int32).max, np.iinfo(np.int32).min

    def bits(mask):
        return np.array([bool(int(mask) >> i & 1) for i in range(n)])

    def as_i32(v):
        return v if v.expr.metas[v.index].dtype == np.int32 else ew.cast(v, np.int32)

    begin, end = as_i32(begin), as_i32(end)
    begin_mask, end_mask = bits(p.get("beginMask", 0)), bits(p.get("endMask", 0))
    shrink = bits(p.get("shrinkAxisMask", 0))
    if begin_mask.any():
        edge = np.int32([0 if s > 0 else big for s in steps])
        begin = select(const(begin_mask), const(edge), begin)
    if end_mask.any():
        edge = np.int32([big if s > 0 else small for s in steps])
        end = select(const(end_mask), const(edge), end)
    if shrink.any():
        # one element: [b, b + 1), or to the end when b is -1
        after = select(
            ew.equal(begin, np.int32(-1)),
            const(np.full(n, big, np.int32)),
            ew.add(begin, np.int32(1)),
        )
        end = select(const(shrink), after, end)
    y = _graph.apply(
        "onnx_slice", [x, begin, end, const(np.arange(n, dtype=np.int32)), const(np.int32(steps))]
    )[0]
    if shrink.any():
        y = movement.squeeze(y, [int(i) for i in np.nonzero(shrink)[0]])
    return y


@encoder("strided_slice")
def _encode_strided_slice(ctx, expr):
    a = expr.attrs
    extra = [ctx.const_tensor(_i32(a[k]), expr, k) for k in ("begin", "end", "strides")]
    param = {"Index": 3, "T": ctx.dtype_code(expr.inputs[0])}
    for ours, theirs in zip(_MASKS, _FILE_MASKS):
        param[theirs] = int(a[ours])
    ctx.emit(expr, "StridedSlice", "StridedSliceParam", param, [expr.inputs[0]] + extra)


# -- padding and tiling ----------------------------------------------------------------------


@decoder("Padding")
def _decode_pad(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2, 3)
    x = inputs[0]
    pads = _static_ints(ctx, op, inputs[1], "the paddings")
    if len(pads) != 2 * x.ndim or any(p < 0 for p in pads):
        ctx.fail(op, f"paddings {pads} do not fit rank {x.ndim}")
    mode = int(ctx.param(op, "PadParam")["mode"]) if op.get("main") is not None else 0
    if mode not in (0, 1, 2):
        ctx.fail(op, f"padding mode {mode} is not supported")
    y = _graph.apply("pad", [x], pads=tuple(zip(pads[0::2], pads[1::2])), mode=mode, value=0)[0]
    if len(inputs) == 3 and mode == 0:
        value = ctx.need_static(op, inputs[2], "the pad value")
        if np.ravel(value).size and float(np.ravel(value)[0]) != 0.0:
            fill = np.asarray(np.ravel(value)[0], x.dtype)
            mask = np.pad(
                np.zeros(x.shape, np.bool_),
                tuple(zip(pads[0::2], pads[1::2])),
                constant_values=True,
            )
            from ..express.ops.selection import select
            from ..express.var import const

            y = select(const(mask), const(np.broadcast_to(fill, mask.shape).copy()), y)
    return [y]


@encoder("pad")
def _encode_pad(ctx, expr):
    a = expr.attrs
    x = expr.inputs[0]
    pads = ctx.const_tensor(_i32(a["pads"]), expr, "pads")
    inputs = [x, pads]
    if int(a["mode"]) == 0 and float(a.get("value", 0)) != 0.0:
        # The fill value as a third input (what MNN's converter writes for ONNX Pad).
        inputs.append(ctx.const_tensor(np.asarray(a["value"], x.dtype), expr, "value"))
    ctx.emit(expr, "Padding", "PadParam", {"mode": int(a["mode"])}, inputs)


@decoder("Tile")
def _decode_tile(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    if ctx.static(inputs[1]) is None:  # repeats only run time fills
        return _graph.apply("onnx_tile", list(inputs))
    reps = _static_ints(ctx, op, inputs[1], "the repeats")
    if len(reps) != inputs[0].ndim or any(r < 0 for r in reps):
        ctx.fail(op, f"repeats {reps} do not fit rank {inputs[0].ndim}")
    return _graph.apply("tile", [inputs[0]], multiples=tuple(reps))


@encoder("tile")
def _encode_tile(ctx, expr):
    reps = ctx.const_tensor(_i32(expr.attrs["multiples"]), expr, "multiples")
    ctx.emit(expr, "Tile", None, None, [expr.inputs[0], reps])


# -- arg reductions and scans ----------------------------------------------------------------


@decoder("ArgMax", "ArgMin")
def _decode_arg(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "ArgMax")
    if int(p["topK"]) > 1 or int(p["outMaxVal"]):
        ctx.fail(op, "top-k arg reductions and max values are not supported")
    x = inputs[0]
    axis = int(p["axis"])
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    name = "argmax" if op["_type_name"] == "ArgMax" else "argmin"
    return _graph.apply(name, [x], axis=axis % x.ndim, keepdims=False)


@encoder("argmax", "argmin")
def _encode_arg(ctx, expr):
    keep = bool(expr.attrs["keepdims"])
    axis = int(expr.attrs["axis"])
    type_name = "ArgMax" if expr.op.name == "argmax" else "ArgMin"
    param = {"axis": axis, "topK": 1}
    if not keep:
        ctx.emit(expr, type_name, "ArgMax", param, expr.inputs)
        return
    tmp = ctx.new_tensor(expr.outputs[0].name + "__drop")
    ctx.emit(expr, type_name, "ArgMax", param, expr.inputs, outputs=[tmp])
    ctx.emit(expr, "Unsqueeze", "SqueezeParam", {"squeezeDims": _i32([axis])}, [tmp])


@decoder("CumSum")
def _decode_cumsum(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    p = ctx.param(op, "CumSum")
    axis = int(np.ravel(ctx.need_static(op, inputs[1], "the axis"))[0])
    x = inputs[0]
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    return _graph.apply(
        "cumsum",
        [x],
        axis=axis % x.ndim,
        exclusive=bool(p["exclusive"]),
        reverse=bool(p["reverse"]),
    )


@encoder("cumsum")
def _encode_cumsum(ctx, expr):
    a = expr.attrs
    axis = ctx.const_tensor(np.int32(a["axis"]), expr, "axis")
    ctx.emit(
        expr,
        "CumSum",
        "CumSum",
        {"exclusive": bool(a["exclusive"]), "reverse": bool(a["reverse"])},
        [expr.inputs[0], axis],
    )


@decoder("OneHot")
def _decode_one_hot(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 4)
    p = ctx.param(op, "OneHotParam")
    depth = int(np.ravel(ctx.need_static(op, inputs[1], "the depth"))[0])
    on = float(np.ravel(ctx.need_static(op, inputs[2], "the on value"))[0])
    off = float(np.ravel(ctx.need_static(op, inputs[3], "the off value"))[0])
    if depth < 0:
        ctx.fail(op, f"depth {depth} is negative")
    idx = inputs[0]
    if idx.dtype != np.int32:
        idx = ew.cast(idx, np.int32)
    return _graph.apply(
        "one_hot",
        [idx],
        depth=depth,
        on_value=on,
        off_value=off,
        axis=int(p["axis"]),
        dtype=inputs[2].dtype,
    )


@encoder("one_hot")
def _encode_one_hot(ctx, expr):
    a = expr.attrs
    dtype = np.dtype(a["dtype"])
    extra = [
        ctx.const_tensor(np.int32(a["depth"]), expr, "depth"),
        ctx.const_tensor(np.asarray(a["on_value"], dtype), expr, "on"),
        ctx.const_tensor(np.asarray(a["off_value"], dtype), expr, "off"),
    ]
    ctx.emit(
        expr,
        "OneHot",
        "OneHotParam",
        {"axis": int(a["axis"]), "dType": datatype_of(dtype)},
        [expr.inputs[0]] + extra,
    )


@decoder("Where")
def _decode_where(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 3)
    if len(inputs) == 3:
        from ..express.ops.selection import select

        cond = inputs[0]
        if cond.dtype != np.bool_:
            cond = ew.not_equal(cond, np.zeros((), cond.dtype))
        return [select(cond, inputs[1], inputs[2])]
    return _graph.apply("where", [inputs[0]])


@encoder("where")
def _encode_where(ctx, expr):
    # An (empty) Extra parameter: without one MNN sizes the result by its largest case
    # (every element true), its old behaviour.
    ctx.emit(expr, "Where", "Extra", {"vector": False}, expr.inputs)


# -- activations the converter emits ---------------------------------------------------------


@encoder("elu")
def _encode_elu(ctx, expr):
    ctx.emit(expr, "ELU", "ELU", {"alpha": float(expr.attrs["alpha"])}, expr.inputs)


@encoder("selu")
def _encode_selu(ctx, expr):
    ctx.emit(
        expr,
        "Selu",
        "Selu",
        {"scale": float(expr.attrs["scale"]), "alpha": float(expr.attrs["alpha"])},
        expr.inputs,
    )


@encoder("log_softmax")
def _encode_log_softmax(ctx, expr):
    # MNN has no LogSoftmax: Softmax then Log (what its converter writes, up to rounding).
    tmp = ctx.new_tensor(expr.outputs[0].name + "__softmax")
    ctx.emit(expr, "Softmax", "Axis", {"axis": int(expr.attrs["axis"])}, expr.inputs, outputs=[tmp])
    ctx.emit(expr, "UnaryOp", "UnaryOp", {"opType": 8, "T": 1}, [tmp])


@encoder("softplus")
def _encode_softplus(ctx, expr):
    # log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
    x = expr.inputs[0]
    base = expr.outputs[0].name
    zero = ctx.const_tensor(np.zeros((), expr.metas[0].dtype or np.float32), expr, "zero")
    pos = ctx.new_tensor(base + "__pos")
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 9, "T": 1}, [x, zero], outputs=[pos])
    chain = ctx.tensor(x)
    for code, suffix in ((0, "abs"), (1, "neg"), (7, "exp"), (16, "log1p")):
        nxt = ctx.new_tensor(f"{base}__{suffix}")
        ctx.emit(expr, "UnaryOp", "UnaryOp", {"opType": code, "T": 1}, [chain], outputs=[nxt])
        chain = nxt
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 0, "T": 1}, [pos, chain])


@decoder("TopKV2")
def _decode_topk(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2, 3)
    p = ctx.param(op, "TopKV2") if op.get("main") is not None else {"largest": True}
    x = inputs[0]
    k = int(np.ravel(ctx.need_static(op, inputs[1], "k"))[0])
    axis = x.ndim - 1
    if len(inputs) == 3:
        axis = int(np.ravel(ctx.need_static(op, inputs[2], "the axis"))[0]) % x.ndim
    if not 0 <= k <= x.shape[axis]:
        ctx.fail(op, f"k = {k} outside 0..{x.shape[axis]}")
    order = _graph.apply("sort", [x], axis=axis, arg=True, descend=bool(p.get("largest", True)))[0]
    idx = movement.split(order, [k, x.shape[axis] - k], axis)[0] if k < x.shape[axis] else order
    values = (
        _graph.apply("gather_along_axis", [x, idx], axis=axis)[0]
        if "gather_along_axis" in _ops()
        else None
    )
    if values is None:
        ctx.fail(op, "top-k needs the gather_along_axis op")
    return [values, idx]


def _ops():
    from ..express.optable import all_ops

    return all_ops()


# -- spatial rearrangements ------------------------------------------------------------------


@decoder("DepthToSpace", "SpaceToDepth")
def _decode_depth_space(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "DepthSpaceParam")
    x = inputs[0]
    if x.ndim != 4 or int(p["blockSize"]) < 1:
        ctx.fail(
            op, f"needs a 4-d input and a positive block size, got {x.shape}, {p['blockSize']}"
        )
    if op["_type_name"] == "DepthToSpace" and int(p["mode"]) == 1:  # CRD
        b = int(p["blockSize"])
        n, c, h, w = x.shape
        if c % (b * b):
            ctx.fail(op, f"{c} channels do not split into {b}x{b} blocks")
        y = movement.reshape(x, [n, c // (b * b), b, b, h, w])
        y = movement.transpose(y, [0, 1, 4, 2, 5, 3])
        return [movement.reshape(y, [n, c // (b * b), h * b, w * b])]
    name = "depth_to_space" if op["_type_name"] == "DepthToSpace" else "space_to_depth"
    return _graph.apply(name, [x], block=int(p["blockSize"]), channels_last=False)


@encoder("depth_to_space", "space_to_depth")
def _encode_depth_space(ctx, expr):
    if expr.attrs["channels_last"]:
        ctx.fail(expr, "only NCHW depth/space rearrangement maps to MNN's ops")
    type_name = "DepthToSpace" if expr.op.name == "depth_to_space" else "SpaceToDepth"
    ctx.emit(
        expr, type_name, "DepthSpaceParam", {"blockSize": int(expr.attrs["block"])}, expr.inputs
    )


# -- ops with run-time shape parameters (the ONNX converter's) --------------------------------


@encoder("onnx_reshape")
def _encode_onnx_reshape(ctx, expr):
    if int(expr.attrs["allowzero"]):
        ctx.fail(expr, "MNN's Reshape always copies 0 dims (ONNX allowzero=1 has no op)")
    ctx.emit(expr, "Reshape", "Reshape", {"dimType": 0}, expr.inputs)


@encoder("onnx_expand")
def _encode_onnx_expand(ctx, expr):
    ctx.emit(expr, "BroadcastTo", None, None, expr.inputs)


@encoder("onnx_squeeze")
def _encode_onnx_squeeze(ctx, expr):
    ctx.emit(expr, "Squeeze", "SqueezeParam", {}, expr.inputs)


@encoder("onnx_unsqueeze")
def _encode_onnx_unsqueeze(ctx, expr):
    ctx.emit(expr, "Unsqueeze", "SqueezeParam", {}, expr.inputs)


@encoder("onnx_tile")
def _encode_onnx_tile(ctx, expr):
    ctx.emit(expr, "Tile", None, None, expr.inputs)


@encoder("onnx_constant_of_shape")
def _encode_constant_of_shape(ctx, expr):
    value = ctx.const_tensor(np.asarray(expr.attrs["value"], expr.attrs["dtype"]), expr, "value")
    ctx.emit(expr, "Fill", "Fill", {}, [expr.inputs[0], value])


@encoder("onnx_trunc_div")
def _encode_trunc_div(ctx, expr):
    # REALDIV, as MNN's converter writes ONNX Div: its integer form truncates (C division);
    # the real MNN's CPU backend has no integer DIV.
    ctx.emit(
        expr,
        "BinaryOp",
        "BinaryOp",
        {"opType": 7, "T": ctx.dtype_code(expr.inputs[0])},
        expr.inputs,
    )


@encoder("onnx_fmod")
def _encode_fmod(ctx, expr):
    # C's remainder: MOD on floats, FLOORMOD on integers (what MNN's CPU computes for
    # them; see mnn.format.map_math).
    x = expr.inputs[0]
    dtype = x.expr.metas[x.index].dtype
    is_int = dtype is not None and dtype.kind in "iub"
    ctx.emit(
        expr,
        "BinaryOp",
        "BinaryOp",
        {"opType": 17 if is_int else 19, "T": ctx.dtype_code(expr.inputs[0])},
        expr.inputs,
    )


@encoder("shape", "rank", "size")
def _encode_shape_query(ctx, expr):
    type_name = {"shape": "Shape", "rank": "Rank", "size": "Size"}[expr.op.name]
    ctx.emit(expr, type_name, None, None, expr.inputs, data_format=0)


# -- more ops the converter and the express surface emit --------------------------------------


def _chain(ctx, expr, steps):
    """Emit a chain of one-input-from-before ops; the last binds the Expr's output.

    ``steps`` holds ``(type_name, main_type, main, extra_inputs)``; each op reads the
    previous op's output (the first reads ``expr.inputs[0]``) followed by ``extra_inputs``.
    """
    prev = ctx.tensor(expr.inputs[0])
    base = expr.outputs[0].name
    for k, (type_name, main_type, main, extra) in enumerate(steps):
        last = k == len(steps) - 1
        outputs = None if last else [ctx.new_tensor(f"{base}__{k}")]
        out = ctx.emit(expr, type_name, main_type, main, [prev] + list(extra), outputs=outputs)
        prev = out[0]


@encoder("logical_and")
def _encode_logical_and(ctx, expr):
    # MNN keeps booleans as int32 0/1: a product is their conjunction.
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 2, "T": 3}, expr.inputs)


@encoder("logical_not")
def _encode_logical_not(ctx, expr):
    zero = ctx.const_tensor(np.int32(0), expr, "zero")
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 15, "T": 3}, [expr.inputs[0], zero])


@encoder("hardsigmoid")
def _encode_hardsigmoid(ctx, expr):
    dtype = expr.inputs[0].dtype
    alpha = ctx.const_tensor(np.asarray(expr.attrs["alpha"], dtype), expr, "alpha")
    beta = ctx.const_tensor(np.asarray(expr.attrs["beta"], dtype), expr, "beta")
    _chain(
        ctx,
        expr,
        [
            ("BinaryOp", "BinaryOp", {"opType": 2, "T": 1}, [alpha]),
            ("BinaryOp", "BinaryOp", {"opType": 0, "T": 1}, [beta]),
            ("ReLU6", "Relu6", {"minValue": 0.0, "maxValue": 1.0}, []),
        ],
    )


@encoder("softsign")
def _encode_softsign(ctx, expr):
    x = expr.inputs[0]
    one = ctx.const_tensor(np.asarray(1, x.dtype), expr, "one")
    base = expr.outputs[0].name
    absolute = ctx.new_tensor(base + "__abs")
    ctx.emit(expr, "UnaryOp", "UnaryOp", {"opType": 0, "T": 1}, [x], outputs=[absolute])
    denom = ctx.new_tensor(base + "__den")
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 0, "T": 1}, [absolute, one], outputs=[denom])
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 7, "T": 1}, [x, denom])


@decoder("Reverse")
def _decode_reverse(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    x = inputs[0]
    axes = _static_ints(ctx, op, inputs[1], "the axis")
    if x.expr.metas[x.index].shape is None:
        # Rank known only at run time (a loop's scan output): the op checks the axes then.
        return _graph.apply("reverse", [x], axes=tuple(axes))
    if any(not -x.ndim <= a < x.ndim for a in axes):
        ctx.fail(op, f"axes {axes} out of range for rank {x.ndim}")
    return _graph.apply("reverse", [x], axes=tuple(sorted(a % x.ndim for a in axes)))


@encoder("reverse")
def _encode_reverse(ctx, expr):
    axes = list(expr.attrs["axes"])
    if not axes:
        ctx.emit(expr, "Identity", None, None, expr.inputs)
        return
    steps = [
        ("Reverse", None, None, [ctx.const_tensor(np.int32([a]), expr, f"axis{a}")]) for a in axes
    ]
    _chain(ctx, expr, steps)


# ONNX scatter reductions <-> the BinaryOp code in the op's parameter (-1: replace). MNN's
# CPU backend combines scattered values by ADD, MUL (and SUB) only: max/min are refused.
_SCATTER_REDUCTIONS = {"none": -1, "add": 0, "mul": 2}
_SCATTER_NAMES = {v: k for k, v in _SCATTER_REDUCTIONS.items()}


def _scatter_reduction(ctx, op):
    if op.get("main_type") != "BinaryOp" or op.get("main") is None:
        return "none"
    name = _SCATTER_NAMES.get(int(op["main"]["opType"]))
    if name is None:
        ctx.fail(op, f"scatter reduction {op['main']['opType']} is not supported")
    return name


@decoder("ScatterElements")
def _decode_scatter_elements(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3, 4)
    data, idx, upd = inputs[:3]
    axis = int(np.ravel(ctx.need_static(op, inputs[3], "the axis"))[0]) if len(inputs) == 4 else 0
    if not -data.ndim <= axis < data.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {data.ndim}")
    return _graph.apply(
        "onnx_scatter_elements",
        [data, idx, upd],
        axis=axis % data.ndim,
        reduction=_scatter_reduction(ctx, op),
    )


def _scatter_code(ctx, expr):
    code = _SCATTER_REDUCTIONS.get(expr.attrs["reduction"])
    if code is None:
        ctx.fail(
            expr,
            f"scatter reduction {expr.attrs['reduction']!r} has no MNN form (none, add and mul do)",
        )
    return code


@encoder("onnx_scatter_elements")
def _encode_scatter_elements(ctx, expr):
    axis = ctx.const_tensor(np.int32(expr.attrs["axis"]), expr, "axis")
    code = _scatter_code(ctx, expr)
    ctx.emit(
        expr, "ScatterElements", "BinaryOp", {"opType": code, "T": 1}, list(expr.inputs) + [axis]
    )


@encoder("onnx_scatter_nd")
def _encode_onnx_scatter_nd(ctx, expr):
    data, idx, upd = expr.inputs
    code = _scatter_code(ctx, expr)
    shape_meta = data.expr.metas[data.index].shape
    if shape_meta is not None:
        shape = ctx.const_tensor(_i32(shape_meta), expr, "shape")
    else:
        shape = ctx.new_tensor(expr.outputs[0].name + "__shape")
        ctx.emit(expr, "Shape", None, None, [data], outputs=[shape])
    main = {"opType": code, "T": 1} if code != -1 else None
    ctx.emit(expr, "ScatterNd", "BinaryOp" if main else None, main, [idx, upd, shape, data])


@decoder("ScatterNd")
def _decode_scatter_nd(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3, 4)
    if len(inputs) == 4:  # [indices, updates, shape, data]: a scatter into data
        return _graph.apply(
            "onnx_scatter_nd",
            [inputs[3], inputs[0], inputs[1]],
            reduction=_scatter_reduction(ctx, op),
        )
    shape = tuple(_static_ints(ctx, op, inputs[2], "the shape"))
    if any(d < 0 for d in shape):
        ctx.fail(op, f"shape {list(shape)} has a negative dimension")
    idx = inputs[0] if inputs[0].dtype == np.int32 else ew.cast(inputs[0], np.int32)
    return _graph.apply("scatter_nd", [idx, inputs[1]], shape=shape)


@encoder("scatter_nd")
def _encode_scatter_nd(ctx, expr):
    shape = ctx.const_tensor(_i32(expr.attrs["shape"]), expr, "shape")
    ctx.emit(expr, "ScatterNd", None, None, list(expr.inputs) + [shape])


@decoder("MatrixBandPart")
def _decode_band(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3)
    lower = int(np.ravel(ctx.need_static(op, inputs[1], "the lower band"))[0])
    upper = int(np.ravel(ctx.need_static(op, inputs[2], "the upper band"))[0])
    return _graph.apply("matrix_band_part", [inputs[0]], lower=lower, upper=upper)


@encoder("matrix_band_part")
def _encode_band(ctx, expr):
    lower = ctx.const_tensor(np.int32(expr.attrs["lower"]), expr, "lower")
    upper = ctx.const_tensor(np.int32(expr.attrs["upper"]), expr, "upper")
    ctx.emit(expr, "MatrixBandPart", None, None, [expr.inputs[0], lower, upper])


@decoder("Unpack")
def _decode_unpack(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    x = inputs[0]
    axis = int(ctx.param(op, "Axis")["axis"]) if op.get("main") is not None else 0
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    return movement.unstack(x, axis % x.ndim)


@encoder("onnx_slice")
def _encode_onnx_slice(ctx, expr):
    # MNN's converter writes ONNX Slice as StridedSlice with fromType 1 and the same inputs.
    # Constant starts/ends beyond int32 ("to the end", INT64_MAX) are clamped: the file
    # holds them as int32, as MNN computes them (an int64 tensor there crashes the real
    # MNN), and no dimension is that long.
    inputs = list(expr.inputs)
    for i in (1, 2):
        value = ctx.static(inputs[i]) if i < len(inputs) else None
        if value is not None and value.dtype.kind in "iu":
            limits = np.iinfo(np.int32)
            clipped = np.clip(value.astype(np.int64), limits.min, limits.max).astype(np.int32)
            inputs[i] = ctx.const_tensor(clipped, expr, ("starts", "ends")[i - 1])
    ctx.emit(expr, "StridedSlice", "StridedSliceParam", {"fromType": 1}, inputs)


def _reduce_axes(ctx, expr):
    """The axes input of an ONNX reduction for the file: an empty constant (ONNX: every
    axis) is written as the list of every axis, since MNN reduces none for an empty one."""
    x, axes = expr.inputs
    shape = axes.expr.metas[axes.index].shape  # an empty axes tensor is empty at run time
    value = ctx.static(axes)
    empty = (value is not None and value.size == 0) or (
        shape is not None and int(np.prod(shape)) == 0)
    if not empty:
        return axes
    from ..express.graph import partial_shape

    shape = partial_shape(x)
    if shape is None:
        ctx.fail(expr, "a reduction over every axis of a tensor of unknown rank has no "
                 "MNN form")
    return ctx.const_tensor(np.arange(len(shape), dtype=np.int32), expr, "axes")


def _encode_log_sum_exp(ctx, expr):
    """log(sum(exp(x - max))) + max: no overflow for large inputs."""
    x, axes = expr.inputs[0], _reduce_axes(ctx, expr)
    base = expr.outputs[0].name
    keep = bool(expr.attrs["keepdims"])

    def reduction(code, keep_dims):
        return {"operation": code, "keepDims": keep_dims, "dType": ctx.dtype_code(x)}

    top = ctx.new_tensor(base + "__max")
    ctx.emit(expr, "Reduction", "ReductionParam", reduction(4, True), [x, axes], outputs=[top])
    shifted = ctx.new_tensor(base + "__shifted")
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 1, "T": 1}, [x, top], outputs=[shifted])
    chain = ctx.new_tensor(base + "__exp")
    ctx.emit(expr, "UnaryOp", "UnaryOp", {"opType": 7, "T": 1}, [shifted], outputs=[chain])
    total = ctx.new_tensor(base + "__sum")
    ctx.emit(
        expr, "Reduction", "ReductionParam", reduction(0, keep), [chain, axes], outputs=[total]
    )
    logged = ctx.new_tensor(base + "__log")
    ctx.emit(expr, "UnaryOp", "UnaryOp", {"opType": 8, "T": 1}, [total], outputs=[logged])
    if keep:
        top_out = top
    else:
        top_out = ctx.new_tensor(base + "__max_dropped")
        ctx.emit(
            expr, "Reduction", "ReductionParam", reduction(4, False), [x, axes], outputs=[top_out]
        )
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 0, "T": 1}, [logged, top_out])


# ONNX reduction modes as (unary op before, MNN ReductionType, unary op after); MNN's CPU
# backend computes neither ASUM nor SUMSQ, so those go through ABS/SQUARE and a SUM.
_ONNX_REDUCE = {
    "sum": (None, 0, None),
    "mean": (None, 3, None),
    "max": (None, 4, None),
    "min": (None, 5, None),
    "prod": (None, 6, None),
    "l1": (0, 0, None),
    "sum_square": (4, 0, None),
    "l2": (4, 0, 5),
    "log_sum": (None, 0, 8),
}


@encoder("onnx_reduce")
def _encode_onnx_reduce(ctx, expr):
    a = expr.attrs
    if a.get("noop_with_empty_axes"):
        ctx.fail(expr, "noop_with_empty_axes has no MNN Reduction equivalent")
    if a["mode"] == "log_sum_exp":
        _encode_log_sum_exp(ctx, expr)
        return
    plan = _ONNX_REDUCE.get(a["mode"])
    if plan is None:
        ctx.fail(expr, f"reduction mode {a['mode']!r} has no MNN Reduction equivalent")
    before, code, after = plan
    x, axes = expr.inputs[0], _reduce_axes(ctx, expr)
    param = {"operation": code, "keepDims": bool(a["keepdims"]), "dType": ctx.dtype_code(x)}
    steps = []
    if before is not None:
        steps.append(("UnaryOp", "UnaryOp", {"opType": before, "T": 1}, []))
    steps.append(("Reduction", "ReductionParam", param, [axes]))
    if after is not None:
        steps.append(("UnaryOp", "UnaryOp", {"opType": after, "T": 1}, []))
    _chain(ctx, expr, steps)


@decoder("GatherElements")
def _decode_gather_elements(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2, 3)
    x, idx = inputs[0], inputs[1]
    axis = int(np.ravel(ctx.need_static(op, inputs[2], "the axis"))[0]) if len(inputs) == 3 else 0
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    if idx.dtype != np.int32:
        idx = ew.cast(idx, np.int32)
    return _graph.apply("gather_along_axis", [x, idx], axis=axis % x.ndim)


@encoder("gather_along_axis")
def _encode_gather_elements(ctx, expr):
    axis = ctx.const_tensor(np.int32(expr.attrs["axis"]), expr, "axis")
    ctx.emit(expr, "GatherElements", None, None, [expr.inputs[0], expr.inputs[1], axis])


@encoder("convert")
def _encode_convert(ctx, expr):
    # Our data formats are labels over logical layouts: NCHW <-> NHWC is a transpose.
    perm = tuple(expr.attrs["perm"])
    if not perm:
        ctx.emit(expr, "Identity", None, None, expr.inputs)
        return
    ctx.emit(expr, "Permute", "Permute", {"dims": _i32(perm)}, expr.inputs)


# -- shifts and bitwise not ------------------------------------------------------------------


@encoder("onnx_bit_shift", "left_shift", "right_shift")
def _encode_shift(ctx, expr):
    if expr.op.name == "onnx_bit_shift":
        left = expr.attrs["direction"] == "LEFT"
    else:
        left = expr.op.name == "left_shift"
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 27 if left else 28, "T": 3}, expr.inputs)


@encoder("bitwise_not")
def _encode_bitwise_not(ctx, expr):
    x = expr.inputs[0]
    if x.dtype == np.bool_:
        zero = ctx.const_tensor(np.int32(0), expr, "zero")
        ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 15, "T": 3}, [x, zero])
        return
    if x.dtype.kind != "i":
        ctx.fail(expr, f"bitwise not of {x.dtype} has no MNN op (signed integers and bool do)")
    ones = ctx.const_tensor(np.asarray(-1, x.dtype), expr, "ones")
    ctx.emit(expr, "BinaryOp", "BinaryOp", {"opType": 25, "T": 3}, [x, ones])


@decoder("ReverseSequence")
def _decode_reverse_sequence(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    p = ctx.param(op, "ReverseSequenceParam")
    lens = inputs[1] if inputs[1].dtype == np.int32 else ew.cast(inputs[1], np.int32)
    return _graph.apply(
        "reverse_sequence",
        [inputs[0], lens],
        batch_dim=int(p["batchDim"]),
        seq_dim=int(p["seqDim"]),
    )


@encoder("reverse_sequence")
def _encode_reverse_sequence(ctx, expr):
    ctx.emit(
        expr,
        "ReverseSequence",
        "ReverseSequenceParam",
        {"batchDim": int(expr.attrs["batch_dim"]), "seqDim": int(expr.attrs["seq_dim"])},
        expr.inputs,
    )
