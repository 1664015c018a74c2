"""File mapping of sources and shape ops: Input, Const, TrainableParam, ConvertTensor,
Reshape, Flatten, Permute/Transpose, Squeeze/Unsqueeze/ExpandDims, Concat, Slice, Pack,
BroadcastTo, Fill, Range, Shape, Rank, Size, SliceTf.

Tensors keep their logical layout: NC4HW4 is NCHW with another label, so ConvertTensor
between NCHW and NC4HW4 is the identity, and only NHWC <-> NCHW moves data.
"""

import numpy as np

from ..express import graph as _graph
from ..express.formats import NC4HW4, NCHW, NHWC
from ..express.ops import creation, movement
from ..express.ops import elementwise as ew
from ..express.optable import all_ops
from ..express.var import const, placeholder
from .mapping import blob_to_array, datatype_of, decoder, dtype_of, encoder, file_dtype

__all__ = []

_FORMATS = {0: NCHW, 1: NHWC, 2: NC4HW4, 3: NHWC}
_FORMAT_CODES = {NCHW: 0, NHWC: 1, NC4HW4: 2}


def _format_code(var):
    return _FORMAT_CODES.get(var.data_format, 0)


# -- sources ---------------------------------------------------------------------------------


@decoder("Input")
def _decode_input(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 0)
    p = op.get("main") if op.get("main_type") == "Input" else None
    dims = [] if p is None or p.get("dims") is None else [int(d) for d in p["dims"]]
    if any(d < -1 for d in dims):
        ctx.fail(op, f"input dimensions {dims} hold a value below -1")
    dtype = dtype_of(p["dtype"] if p is not None else 1, "Input.dtype")
    fmt = _FORMATS.get(p["dformat"] if p is not None else 2, NCHW)
    var = placeholder(dims, fmt, dtype)
    var.expr.name = op.get("name")
    return [var]


@encoder("placeholder")
def _encode_input(ctx, expr):
    meta = expr.metas[0]
    dims = expr.attrs.get("declared_shape", meta.shape)
    # MNN computes booleans and 64-bit integers as int32 (see mapping.file_dtype).
    dtype = file_dtype(meta.dtype)
    param = {"dtype": datatype_of(dtype), "dformat": _FORMAT_CODES.get(expr.data_format, 0)}
    if dims is not None:  # no dims: not even the rank is known (a loop body's input)
        param["dims"] = np.asarray(dims, np.int32)
    ctx.emit(expr, "Input", "Input", param, [])


def _blob_reader(ctx, op):
    def read(offset, size, where):
        return ctx.weights(op).read(offset, size, where)

    return read


@decoder("Const", "TrainableParam")
def _decode_const(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 0)
    blob = ctx.param(op, "Blob")
    value = blob_to_array(blob, f"{ctx.source}: op {op.get('name')!r}", _blob_reader(ctx, op))
    var = const(value, dtype=value.dtype)
    var.expr.data_format = _FORMATS.get(blob["dataFormat"], NCHW)
    if op["_type_name"] == "TrainableParam":
        var.fix_as_trainable()
    return [var]


@encoder("const", "trainable")
def _encode_const(ctx, expr):
    value = np.asarray(expr.values[0])
    keep = expr.kind == "trainable" and ctx.options.keep_trainable
    kind = "TrainableParam" if keep else "Const"
    ctx.emit(expr, kind, "Blob", ctx.blob(value, _FORMAT_CODES.get(expr.data_format, 0)), [])


# -- layout ----------------------------------------------------------------------------------


@decoder("ConvertTensor")
def _decode_convert(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "TensorConvertInfo")
    src, dst = p["source"], p["dest"]
    x = inputs[0]
    nhwc_src, nhwc_dst = src in (1, 3), dst in (1, 3)
    if nhwc_src == nhwc_dst or x.ndim != 4:
        return [x]
    out = movement.transpose(x, [0, 3, 1, 2] if nhwc_src else [0, 2, 3, 1])
    out.expr.data_format = _FORMATS.get(dst, NCHW)
    return [out]


@decoder("Identity", "Dropout")
def _decode_identity(ctx, op, inputs):
    if not inputs:
        ctx.fail(op, "needs an input")
    return list(inputs)


# -- reshaping -------------------------------------------------------------------------------


@decoder("Reshape")
def _decode_reshape(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    if len(inputs) == 2:
        if ctx.static(inputs[1]) is None:
            # Target shape computed at run time (after a loop): MNN's Reshape copies 0 dims,
            # ONNX's with allowzero=0.
            return [_graph.apply("onnx_reshape", list(inputs), allowzero=0)[0]]
        dims = ctx.need_static(op, inputs[1], "the target shape")
    else:
        dims = ctx.param(op, "Reshape")["dims"]
        if dims is None:
            ctx.fail(op, "has neither a shape input nor dims")
    return [movement.reshape(inputs[0], [int(d) for d in np.ravel(dims)])]


@encoder("reshape")
def _encode_reshape(ctx, expr):
    if not expr.attrs.get("zero_copies", True) and 0 in expr.attrs["shape"]:
        # MNN's Reshape always copies 0 dims: write the resolved shape.
        shape = expr.metas[0].shape
    else:
        shape = expr.attrs["shape"]
    ctx.emit(
        expr, "Reshape", "Reshape", {"dims": np.asarray(shape, np.int32), "dimType": 0}, expr.inputs
    )


@decoder("Flatten")
def _decode_flatten(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "Flatten")
    x = inputs[0]
    shape, nd = x.shape, x.ndim
    axis, end = int(p["axis"]), int(p["endAxis"])
    axis = axis + nd if axis < 0 else axis
    end = end + nd if end < 0 else end
    if not 0 <= axis <= nd or not 0 <= end <= nd:
        ctx.fail(op, f"axes {p['axis']}, {p['endAxis']} out of range for rank {nd}")
    if end == 0:  # ONNX Flatten: two dims split at axis
        new = [
            int(np.prod(shape[:axis], dtype=np.int64)),
            int(np.prod(shape[axis:], dtype=np.int64)),
        ]
    else:
        new = (
            list(shape[:axis])
            + [int(np.prod(shape[axis : end + 1], dtype=np.int64))]
            + list(shape[end + 1 :])
        )
    return [movement.reshape(x, new)]


@decoder("Permute")
def _decode_permute(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    dims = ctx.param(op, "Permute")["dims"]
    return [movement.transpose(inputs[0], [int(d) for d in dims])]


@decoder("Transpose")
def _decode_transpose(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    perm = ctx.need_static(op, inputs[1], "the permutation")
    return [movement.transpose(inputs[0], [int(d) for d in np.ravel(perm)])]


@encoder("transpose")
def _encode_transpose(ctx, expr):
    ctx.emit(
        expr, "Permute", "Permute", {"dims": np.asarray(expr.attrs["perm"], np.int32)}, expr.inputs
    )


def _axes_param(ctx, op, inputs, field="squeezeDims"):
    if len(inputs) == 2:
        return [int(a) for a in np.ravel(ctx.need_static(op, inputs[1], "the axes"))]
    p = op.get("main")
    if p is None:
        return []
    if op.get("main_type") == "ExpandDims":
        return [int(p["axis"])]
    dims = ctx.param(op, "SqueezeParam")[field]
    return [] if dims is None else [int(d) for d in dims]


def _runtime_axes(ctx, inputs):
    """Whether the axes come as a tensor only run time fills (an ONNX model's input)."""
    return len(inputs) == 2 and ctx.static(inputs[1]) is None


@decoder("Squeeze")
def _decode_squeeze(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    if _runtime_axes(ctx, inputs):
        return _graph.apply("onnx_squeeze", list(inputs))
    return [movement.squeeze(inputs[0], _axes_param(ctx, op, inputs))]


@encoder("squeeze")
def _encode_squeeze(ctx, expr):
    x = expr.inputs[0]
    axes = expr.attrs.get("axes")
    # Inside loop bodies the input's shape may be known only at run time: it is needed
    # only to list the unit axes or resolve negative ones.
    if not axes and x.expr.metas[x.index].shape is None:
        axes = []  # MNN's Squeeze without dims drops every unit dimension, as ours does
    elif not axes or any(a < 0 for a in axes):
        in_shape = x.shape
        axes = axes or [i for i, d in enumerate(in_shape) if d == 1]
        axes = [a + len(in_shape) if a < 0 else a for a in axes]
    ctx.emit(
        expr, "Squeeze", "SqueezeParam", {"squeezeDims": np.asarray(axes, np.int32)}, expr.inputs
    )


@decoder("Unsqueeze", "ExpandDims")
def _decode_unsqueeze(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    if _runtime_axes(ctx, inputs):
        return _graph.apply("onnx_unsqueeze", list(inputs))
    axes = _axes_param(ctx, op, inputs)
    if not axes:
        ctx.fail(op, "names no axis to insert")
    return [movement.unsqueeze(inputs[0], axes)]


@encoder("unsqueeze")
def _encode_unsqueeze(ctx, expr):
    ctx.emit(
        expr,
        "Unsqueeze",
        "SqueezeParam",
        {"squeezeDims": np.asarray(expr.attrs["axes"], np.int32)},
        expr.inputs,
    )


@decoder("Concat")
def _decode_concat(ctx, op, inputs):
    if not inputs:
        ctx.fail(op, "needs at least one input")
    axis = int(ctx.param(op, "Axis")["axis"])
    return [movement.concat(list(inputs), axis)]


@encoder("concat")
def _encode_concat(ctx, expr):
    ctx.emit(expr, "Concat", "Axis", {"axis": int(expr.attrs["axis"])}, expr.inputs)


@decoder("Slice")
def _decode_slice(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    p = ctx.param(op, "Slice")
    x = inputs[0]
    axis = int(p["axis"])
    if x.expr.metas[x.index].shape is None:
        return _runtime_split(ctx, op, x, axis, inputs)
    if not -x.ndim <= axis < x.ndim:
        ctx.fail(op, f"axis {axis} out of range for rank {x.ndim}")
    dim = x.shape[axis]
    n_out = len(op.get("outputIndexes") if op.get("outputIndexes") is not None else [])
    if len(inputs) == 2:  # ONNX/torch Split with a sizes input
        sizes = [int(v) for v in np.ravel(ctx.need_static(op, inputs[1], "the split sizes"))]
        if len(sizes) == 1 and n_out > 1:
            sizes = sizes * n_out
        points = sizes
    else:
        points = [] if p["slicePoints"] is None else [int(v) for v in p["slicePoints"]]
    if len(inputs) == 1 and len(points) == 1 and p["sourceType"] in (1, 4):
        # MNN: one slice point is TensorFlow's number of parts / torch's part size.
        parts = points[0] if p["sourceType"] == 1 else (dim // points[0] if points[0] else 0)
        if parts != n_out or dim % n_out:
            ctx.fail(op, f"cannot split {dim} into {n_out} equal parts (slice point {points})")
        return movement.split(x, [dim // n_out] * n_out, axis)
    if len(inputs) == 2 or p["sourceType"] == 1 or (len(points) == n_out and n_out > 1):
        sizes = points  # TensorFlow / ONNX style: sizes of each part
    elif points:
        bounds = [0] + points + [dim]  # Caffe style: cut positions
        sizes = [int(v) for v in np.diff(bounds)]
    else:
        if n_out < 1 or dim % n_out:
            ctx.fail(op, f"cannot split {dim} into {n_out} equal parts")
        sizes = [dim // n_out] * n_out
    if -1 in sizes:
        rest = dim - sum(s for s in sizes if s != -1)
        sizes = [rest if s == -1 else s for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != dim:
        ctx.fail(op, f"slice sizes {sizes} do not add up to {dim}")
    return movement.split(x, sizes, axis)


@encoder("split")
def _encode_split(ctx, expr):
    sizes = [int(s) for s in expr.attrs["sizes"]]
    points = list(np.cumsum(sizes)[:-1])
    ctx.emit(
        expr,
        "Slice",
        "Slice",
        {
            "axis": int(expr.attrs["axis"]),
            "slicePoints": np.asarray(points, np.int32),
            "sourceType": 0,
        },
        expr.inputs,
    )


@decoder("Pack")
def _decode_pack(ctx, op, inputs):
    if not inputs:
        ctx.fail(op, "needs at least one input")
    axis = int(ctx.param(op, "PackParam")["axis"])
    return [movement.stack(list(inputs), axis)]


@decoder("BroadcastTo")
def _decode_broadcast(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    if ctx.static(inputs[1]) is None or inputs[0].expr.metas[inputs[0].index].shape is None:
        # Known only at run time: ONNX's Expand (the same two-way broadcast).
        return _graph.apply("onnx_expand", list(inputs))
    shape = [int(d) for d in np.ravel(ctx.need_static(op, inputs[1], "the target shape"))]
    x = inputs[0]
    # ONNX Expand broadcasts both ways (a 1 in shape keeps x's dim).
    nd = max(len(shape), x.ndim)
    xs = [1] * (nd - x.ndim) + list(x.shape)
    ts = [1] * (nd - len(shape)) + shape
    target = [a if b == 1 else b for a, b in zip(xs, ts)]
    return [movement.broadcast_to(x, target)]


@encoder("broadcast_to")
def _encode_broadcast(ctx, expr):
    shape = ctx.const_tensor(np.asarray(expr.attrs["shape"], np.int32), expr, "shape")
    ctx.emit(expr, "BroadcastTo", None, None, [expr.inputs[0], shape])


@decoder("Fill")
def _decode_fill(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    value = ctx.static(inputs[1])
    if ctx.static(inputs[0]) is None and value is not None and value.size == 1:
        # Shape computed at run time (a recurrent net's zero initial state): ONNX's
        # ConstantOfShape.
        return [_graph.apply("onnx_constant_of_shape", [inputs[0]], value=value.item(),
                             dtype=value.dtype)[0]]
    shape = [int(d) for d in np.ravel(ctx.need_static(op, inputs[0], "the shape"))]
    return [creation.fill(shape, inputs[1])]


@encoder("fill")
def _encode_fill(ctx, expr):
    shape = ctx.const_tensor(np.asarray(expr.attrs["shape"], np.int32), expr, "shape")
    ctx.emit(expr, "Fill", "Fill", {}, [shape, expr.inputs[0]])


@decoder("ZerosLike")
def _decode_zeros_like(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    return [creation.zeros_like(inputs[0])]


@encoder("full_like")
def _encode_full_like(ctx, expr):
    value = expr.attrs["value"]
    if value == 0:
        ctx.emit(expr, "ZerosLike", None, None, expr.inputs)
        return
    x = expr.inputs[0]
    fill_value = ctx.const_tensor(np.asarray(value, expr.metas[0].dtype), expr, "value")
    # zeros_like(x) + value: no shape needed when writing (it may be known only at run time)
    zeros = ctx.new_tensor(expr.outputs[0].name + "__zeros")
    ctx.emit(expr, "ZerosLike", None, None, [x], outputs=[zeros])
    ctx.emit(
        expr,
        "BinaryOp",
        "BinaryOp",
        {"opType": 0, "T": datatype_of(expr.metas[0].dtype)},
        [zeros, fill_value],
    )


@decoder("Range")
def _decode_range(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3)
    return [creation.range(*inputs)]


@encoder("range")
def _encode_range(ctx, expr):
    ctx.emit(expr, "Range", "Range", {"Tidx": datatype_of(expr.metas[0].dtype)}, expr.inputs)


# -- shape queries: constants whenever the input's shape is known when loading ----------------


def _static_shape(ctx, op, x):
    meta = x.expr.metas[x.index]
    if meta.shape is None:
        if "shape" not in all_ops():
            ctx.fail(op, "the input's shape is only known at run time")
        return None
    return list(meta.shape)


@decoder("Shape")
def _decode_shape(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    shape = _static_shape(ctx, op, inputs[0])
    if shape is None:
        return _graph.apply("shape", [inputs[0]])
    if inputs[0].data_format == NHWC and op.get("defaultDimentionFormat") == 0 and len(shape) == 4:
        shape = [shape[0], shape[3], shape[1], shape[2]]
    return [const(np.asarray(shape, np.int32))]


@decoder("Rank")
def _decode_rank(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    shape = _static_shape(ctx, op, inputs[0])
    if shape is None:
        return _graph.apply("rank", [inputs[0]])
    return [const(np.asarray(len(shape), np.int32))]


@decoder("Size")
def _decode_size(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    shape = _static_shape(ctx, op, inputs[0])
    if shape is None:
        return _graph.apply("size", [inputs[0]])
    return [const(np.asarray(int(np.prod(shape, dtype=np.int64)), np.int32))]


@decoder("SliceTf")
def _decode_slice_tf(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3)
    x = inputs[0]
    if (
        ctx.static(inputs[1]) is None
        or ctx.static(inputs[2]) is None
        or x.expr.metas[x.index].shape is None
    ):
        return [_runtime_slice_tf(x, inputs[1], inputs[2])]
    begin = [int(v) for v in np.ravel(ctx.need_static(op, inputs[1], "the begin"))]
    size = [int(v) for v in np.ravel(ctx.need_static(op, inputs[2], "the size"))]
    if len(begin) != x.ndim or len(size) != x.ndim:
        ctx.fail(op, f"begin {begin} and size {size} need one entry per dimension of {x.shape}")
    value = ctx.static(x)
    index = []
    for b, s, d in zip(begin, size, x.shape):
        if b < 0:  # MNN counts a negative begin from the end
            b += d
        if not 0 <= b <= d:
            ctx.fail(op, f"begin {begin} out of range for shape {x.shape}")
        end = d if s == -1 else b + s
        if s < -1 or end > d:
            ctx.fail(op, f"size {size} out of range for shape {x.shape} at begin {begin}")
        index.append(slice(b, end))
    if value is not None:
        return [const(np.ascontiguousarray(value[tuple(index)]), dtype=value.dtype)]
    if "strided_slice" not in all_ops():
        ctx.fail(op, "slicing a run-time tensor needs the strided_slice op")
    return [x[tuple(index)]]


def _runtime_slice_tf(x, begin, size):
    """SliceTf with begin/size computed at run time, as ONNX's Slice: ``end = begin +
    size``, or to the end where ``size`` is -1 (a negative begin counts from the end, as
    both MNN and ONNX do)."""
    from ..express.ops.selection import select

    # (dtypes from metadata: they too may be known only at run time)
    if begin.expr.metas[begin.index].dtype != np.int32:
        begin = ew.cast(begin, np.int32)
    if size.expr.metas[size.index].dtype != np.int32:
        size = ew.cast(size, np.int32)
    to_end = const(np.int32(np.iinfo(np.int32).max))
    end = select(ew.equal(size, np.int32(-1)), to_end, ew.add(begin, size))
    # A begin of -k with size k ends at 0: ONNX would read that as an empty slice.
    end = select(
        ew.logical_and(ew.less(begin, np.int32(0)), ew.greater_equal(end, np.int32(0))), to_end, end
    )
    return _graph.apply("onnx_slice", [x, begin, end])[0]


def _runtime_split(ctx, op, x, axis, inputs):
    """Slice of a tensor whose shape only run time tells (inside loop bodies): one ONNX
    slice per output, with bounds from the sizes when the file gives them, else equal
    parts of the axis' run-time length."""
    n_out = len(op.get("outputIndexes") if op.get("outputIndexes") is not None else [])
    if n_out < 1:
        ctx.fail(op, "has no outputs")
    sizes = None
    bounds = None
    p = ctx.param(op, "Slice")
    points = None if p["slicePoints"] is None else [int(v) for v in p["slicePoints"]]
    if len(inputs) == 2:
        sizes = [int(v) for v in np.ravel(ctx.need_static(op, inputs[1], "the split sizes"))]
        if len(sizes) == 1 and n_out > 1:
            sizes = sizes * n_out
    elif points and p["sourceType"] == 0:
        # Caffe: cut positions; the last part runs to the end (ONNX slices clamp the end).
        if len(points) != n_out - 1:
            ctx.fail(op, f"{len(points)} cut positions for {n_out} outputs")
        bounds = np.int32([0] + points + [np.iinfo(np.int32).max])
    elif points and len(points) == 1 and p["sourceType"] == 4:
        sizes = points * n_out  # torch: the size of each part
    elif points and len(points) == 1:
        if points[0] != n_out:  # TensorFlow: the number of equal parts
            ctx.fail(op, f"{points[0]} equal parts for {n_out} outputs")
    elif points:
        sizes = points
        if sizes[-1] == -1 and -1 not in sizes[:-1] and len(sizes) == n_out:
            bounds = np.int32([0] + list(np.cumsum(sizes[:-1])) + [np.iinfo(np.int32).max])
    axes = const(np.int32([axis]))
    if sizes is not None or bounds is not None:
        if bounds is None and (-1 in sizes or len(sizes) != n_out):
            ctx.fail(op, f"split sizes {sizes} for {n_out} outputs of a run-time shape")
        if bounds is None:
            bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
        return [
            _graph.apply(
                "onnx_slice", [x, const(bounds[k : k + 1]), const(bounds[k + 1 : k + 2]), axes]
            )[0]
            for k in range(n_out)
        ]
    index = const(np.int32(axis))
    if axis < 0:  # counted from the end: the rank is known only at run time too
        index = ew.add(_graph.apply("rank", [x])[0], np.int32(axis))
    dim = _graph.apply("gather", [_graph.apply("shape", [x])[0], index], axis=0)[0]
    part = ew.floordiv(dim, np.int32(n_out))
    outs = []
    for k in range(n_out):
        start = movement.reshape(ew.multiply(part, np.int32(k)), [1])
        end = movement.reshape(ew.multiply(part, np.int32(k + 1)), [1])
        outs.append(_graph.apply("onnx_slice", [x, start, end, axes])[0])
    return outs
