"""File mapping of the math ops: BinaryOp, UnaryOp, Reduction, Cast, Eltwise, MatMul, and
the one-op activations (Sigmoid, TanH, Exp, Log, AbsVal).

MNN facts that shape the mapping: integer ``DIV``/``REALDIV`` truncate; on floats ``MOD``
is ``fmod`` (C semantics) and ``FLOORMOD`` floors like numpy, but on integers MNN's CPU
computes ``MOD`` as the floored remainder (Python's ``%``) and ``FLOORMOD`` as
``x - (x / y) * y`` with a truncating division (C's ``%``): the integer forms are written
and read the other way round; comparisons give
int32 in MNN (bool here); ``GELU`` is the tanh approximation and ``GELU_STANDARD`` the erf
form.
"""

import numpy as np

from ..express import graph as _graph
from ..express.ops import elementwise as ew
from ..express.ops import reduce as red
from ..express.ops.linalg import matmul
from ..express.ops.nn_activation import relu
from ..express.ops.selection import select
from ..express.optable import all_ops
from .mapping import datatype_of, decoder, dtype_of, encoder, file_dtype

__all__ = []

# BinaryOpOperation numbers <-> express ops.
_BINARY = {
    0: "add",
    1: "subtract",
    2: "multiply",
    6: "pow",
    8: "minimum",
    9: "maximum",
    10: "greater",
    11: "greater_equal",
    12: "less",
    13: "floordiv",
    14: "squared_difference",
    15: "equal",
    16: "less_equal",
    17: "floormod",
    20: "atan2",
    21: "logical_or",
    22: "not_equal",
    23: "bitwise_and",
    24: "bitwise_or",
    25: "bitwise_xor",
    26: "logical_xor",
}
_BINARY_CODE = {name: code for code, name in _BINARY.items()}
_BINARY_CODE["mod"] = 17  # numpy's mod floors: MNN's FLOORMOD
_BINARY_CODE["divide"] = 7  # REALDIV (float inputs only, see the encoder)
_BINARY_CODE["maximum"] = 9
_BINARY_CODE["minimum"] = 8

# UnaryOpOperation numbers <-> express ops (one-input, no attributes).
_UNARY = {
    0: "abs",
    1: "negative",
    2: "floor",
    3: "ceil",
    4: "square",
    5: "sqrt",
    6: "rsqrt",
    7: "exp",
    8: "log",
    9: "sin",
    10: "cos",
    11: "tan",
    12: "asin",
    13: "acos",
    14: "atan",
    15: "reciprocal",
    16: "log1p",
    18: "acosh",
    19: "sinh",
    20: "asinh",
    21: "atanh",
    22: "sign",
    24: "cosh",
    25: "erf",
    26: "erfc",
    27: "erfinv",
    28: "expm1",
    29: "sigmoid",
    30: "tanh",
    33: "gelu",
}
_UNARY_CODE = {name: code for code, name in _UNARY.items()}

# Old single-purpose op types that are unary ops.
_UNARY_TYPES = {"AbsVal": "abs", "Exp": "exp", "Log": "log", "Sigmoid": "sigmoid", "TanH": "tanh"}


def _op(name):
    """An express op function by table name (None when no module defines it yet)."""
    return name if name in all_ops() else None


def _apply1(name, inputs, **attrs):
    return _graph.apply(name, inputs, **attrs)


def _static_kind(var):
    """numpy dtype kind of ``var`` from its metadata, or None when only run time knows."""
    dtype = var.expr.metas[var.index].dtype
    return None if dtype is None else dtype.kind


@decoder("BinaryOp")
def _decode_binary(ctx, op, inputs):
    out = _decode_binary_op(ctx, op, inputs)
    # MNN's converter fuses a ReLU that follows the op into it (activationType 1).
    if (ctx.param(op, "BinaryOp").get("activationType") or 0) == 1:
        out = [_fused_relu(v) for v in out]
    return out


def _fused_relu(v):
    # A relu op, not maximum(v, 0) (the same values for numbers): the engine and the
    # plans fuse relu(conv + skip), a ResNet block's ending, into one pass.
    if _static_kind(v) in ("f", "i", "u"):
        return relu(v)
    return ew.maximum(v, 0)


def _decode_binary_op(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    code = ctx.param(op, "BinaryOp")["opType"]
    x, y = inputs
    kinds = [_static_kind(v) for v in (x, y)]
    if None in kinds:  # only run time knows: the file's element type says
        is_int = ctx.param(op, "BinaryOp")["T"] in (3, 4, 5, 6, 9, 10)
    else:
        is_int = all(k in "iub" for k in kinds)
    if code in (3, 7):
        if is_int:
            if _op("onnx_trunc_div") is None:
                ctx.fail(op, "integer division (truncating) needs the onnx_trunc_div op")
            return _apply1("onnx_trunc_div", [x, y])
        return [ew.divide(x, y)]
    if code == 19 and is_int:  # the floored remainder on integers (see the module doc)
        return [ew.floormod(x, y)]
    if code == 17 and is_int:  # C's remainder on integers
        code = 19
    if code == 19:
        if _op("onnx_fmod") is None:
            ctx.fail(op, "MOD (C fmod semantics) needs the onnx_fmod op")
        return _apply1("onnx_fmod", [x, y])
    if code in (27, 28):  # LEFTSHIFT / RIGHTSHIFT on integers
        return _apply1("left_shift" if code == 27 else "right_shift", [x, y])
    if code == 29:  # MUL_SILU: x * silu(y)
        return [ew.multiply(x, ew.multiply(y, ew.sigmoid(y)))]
    name = _BINARY.get(code)
    if name is None:
        ctx.fail(op, f"binary operation {code} is not supported")
    return [getattr(ew, name)(x, y)]


@encoder(*sorted(_BINARY_CODE))
def _encode_binary(ctx, expr):
    name = expr.op.name
    x, y = expr.inputs
    if name == "divide" and (x.dtype.kind != "f" or y.dtype.kind != "f"):
        ctx.fail(
            expr,
            "MNN divides integers with truncation; cast the inputs to float "
            "before dividing to write this graph",
        )
    code = _BINARY_CODE[name]
    dtype = x.expr.metas[x.index].dtype  # None: only run time knows
    if code == 17 and dtype is not None and dtype.kind in "iub":
        code = 19  # MNN's integer MOD is the floored remainder (see the module doc)
    ctx.emit(
        expr,
        "BinaryOp",
        "BinaryOp",
        {"opType": code, "T": ctx.dtype_code(x)},
        expr.inputs,
    )


@decoder("UnaryOp")
def _decode_unary(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    code = ctx.param(op, "UnaryOp")["opType"]
    x = inputs[0]
    if code == 17:  # BNLL: log(1 + exp(x)), computed stably
        return [ew.add(ew.maximum(x, 0.0), ew.log1p(ew.exp(ew.negative(ew.abs(x)))))]
    if code == 23:  # ROUND is C's roundf: halves away from zero (numpy rounds to even)
        if x.dtype.kind != "f":
            return [x]
        half = np.asarray(0.5, x.dtype)
        return [ew.multiply(ew.sign(x), ew.floor(ew.add(ew.abs(x), half)))]
    activation = _UNARY_ACTIVATIONS.get(code)
    if activation is not None:
        return _apply1(activation, [x])
    name = _UNARY.get(code)
    if name is None:
        ctx.fail(op, f"unary operation {code} is not supported")
    return [getattr(ew, name)(x)]


# UnaryOp codes whose express op lives with the NN activations.
_UNARY_ACTIVATIONS = {31: "hardswish", 32: "gelu_tanh", 34: "silu"}
_UNARY_CODE.update({name: code for code, name in _UNARY_ACTIVATIONS.items()})


@encoder(*sorted(_UNARY_CODE))
def _encode_unary(ctx, expr):
    x = expr.inputs[0]
    ctx.emit(
        expr,
        "UnaryOp",
        "UnaryOp",
        {"opType": _UNARY_CODE[expr.op.name], "T": ctx.dtype_code(x)},
        expr.inputs,
    )


@decoder(*sorted(_UNARY_TYPES))
def _decode_unary_type(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    return [getattr(ew, _UNARY_TYPES[op["_type_name"]])(inputs[0])]


@decoder("Cast")
def _decode_cast(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    p = ctx.param(op, "CastParam")
    return [ew.cast(inputs[0], dtype_of(p["dstT"], "Cast.dstT"))]


def _cast_target(dtype):
    """Cast's ``dstT``: a cast to bool stays DT_BOOL (non-zero test); 64-bit integers are
    computed as int32 in MNN (see mapping.file_dtype)."""
    dtype = np.dtype(dtype)
    return datatype_of(dtype if dtype == np.bool_ else file_dtype(dtype))


@encoder("cast")
def _encode_cast(ctx, expr):
    x = expr.inputs[0]
    ctx.emit(
        expr,
        "Cast",
        "CastParam",
        {"srcT": ctx.dtype_code(x), "dstT": _cast_target(expr.attrs["dtype"])},
        expr.inputs,
    )


# ReductionType numbers <-> express reductions.
_REDUCE = {
    0: "reduce_sum",
    3: "reduce_mean",
    4: "reduce_max",
    5: "reduce_min",
    6: "reduce_prod",
    7: "reduce_any",
    8: "reduce_all",
}
_REDUCE_CODE = {name: code for code, name in _REDUCE.items()}


_RUNTIME_MODES = {0: "sum", 1: "l1", 2: "sum_square", 3: "mean", 4: "max", 5: "min", 6: "prod"}


@decoder("Reduction")
def _decode_reduction(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1, 2)
    p = ctx.param(op, "ReductionParam")
    x = inputs[0]
    if len(inputs) == 2:
        axes = ctx.static(inputs[1])
        if axes is None:
            # Axes computed at run time: ONNX's reduction (empty axes reduce everything).
            mode = _RUNTIME_MODES.get(p["operation"])
            if mode is None:
                ctx.fail(op, "any/all over run-time axes is not supported")
            return _apply1(
                "onnx_reduce",
                list(inputs),
                mode=mode,
                keepdims=int(bool(p["keepDims"])),
                noop_with_empty_axes=0,
            )
    else:
        axes = p["dim"]
    axes = None if axes is None or len(axes) == 0 else [int(a) for a in np.ravel(axes)]
    keep = bool(p["keepDims"])
    code = p["operation"]
    if code == 1:  # ASUM
        return [red.reduce_sum(ew.abs(x), axes, keep)]
    if code == 2:  # SUMSQ
        return [red.reduce_sum(ew.square(x), axes, keep)]
    name = _REDUCE.get(code)
    if name is None:
        ctx.fail(op, f"reduction {code} is not supported")
    return [getattr(red, name)(x, axes, keep)]


@encoder(*sorted(_REDUCE_CODE))
def _encode_reduction(ctx, expr):
    x = expr.inputs[0]
    axes = expr.attrs.get("axes")
    dims = list(range(len(x.shape))) if axes is None else [int(a) for a in axes]
    ctx.emit(
        expr,
        "Reduction",
        "ReductionParam",
        {
            "operation": _REDUCE_CODE[expr.op.name],
            "dim": np.asarray(dims, np.int32),
            "keepDims": bool(expr.attrs.get("keepdims", False)),
            "dType": ctx.dtype_code(x),
        },
        expr.inputs,
    )


@decoder("Eltwise")
def _decode_eltwise(ctx, op, inputs):
    if len(inputs) < 1:
        ctx.fail(op, "needs at least one input")
    p = ctx.param(op, "Eltwise")
    coeff = p.get("coeff")
    kind = p["type"]
    fn = {0: ew.multiply, 1: ew.add, 2: ew.maximum, 3: ew.subtract}.get(kind)
    if fn is None:
        ctx.fail(op, f"eltwise type {kind} is not supported")
    terms = list(inputs)
    if kind == 1 and coeff is not None and len(coeff):
        if len(coeff) != len(terms):
            ctx.fail(op, f"{len(coeff)} coefficients for {len(terms)} inputs")
        terms = [ew.multiply(t, np.asarray(c, t.dtype)) for t, c in zip(terms, coeff)]
    out = terms[0]
    for t in terms[1:]:
        out = fn(out, t)
    return [out]


@decoder("MatMul")
def _decode_matmul(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2, 3)
    p = ctx.param(op, "MatMul") if op.get("main") is not None else {}
    out = matmul(
        inputs[0], inputs[1], bool(p.get("transposeA", False)), bool(p.get("transposeB", False))
    )
    if len(inputs) == 3:
        out = ew.add(out, inputs[2])
    return [out]


@decoder("BatchMatMul")
def _decode_batch_matmul(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 2)
    p = ctx.param(op, "BatchMatMulParam") if op.get("main") is not None else {}
    return [matmul(inputs[0], inputs[1], bool(p.get("adjX", False)), bool(p.get("adjY", False)))]


@encoder("matmul")
def _encode_matmul(ctx, expr):
    a = expr.inputs[0]
    ctx.emit(
        expr,
        "MatMul",
        "MatMul",
        {
            "T": ctx.dtype_code(a),
            "transposeA": bool(expr.attrs.get("transpose_a")),
            "transposeB": bool(expr.attrs.get("transpose_b")),
        },
        expr.inputs,
    )


@decoder("Select")
def _decode_select(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 3)
    cond = inputs[0]
    if cond.dtype != np.bool_:
        cond = ew.not_equal(cond, np.zeros((), cond.dtype))
    return [select(cond, inputs[1], inputs[2])]


@encoder("select")
def _encode_select(ctx, expr):
    ctx.emit(expr, "Select", None, None, expr.inputs)


@encoder("round")
def _encode_round(ctx, expr):
    """numpy's round (halves to even) from MNN ops: MNN's ROUND is C's roundf (halves away
    from zero). r = floor(x + 0.5), minus 1 where x was a tie and r is odd."""
    x = expr.inputs[0]
    if x.dtype.kind != "f":
        ctx.emit(expr, "Identity", None, None, [x])
        return
    base = expr.outputs[0].name
    dtype = x.dtype

    def const(value, suffix):
        return ctx.const_tensor(np.asarray(value, dtype), expr, suffix)

    def step(type_name, main_type, main, inputs, suffix, last=False):
        outputs = None if last else [ctx.new_tensor(f"{base}__{suffix}")]
        return ctx.emit(expr, type_name, main_type, main, inputs, outputs=outputs)[0]

    def binary(code, a, b, suffix, last=False):
        return step("BinaryOp", "BinaryOp", {"opType": code, "T": 1}, [a, b], suffix, last)

    shifted = binary(0, x, const(0.5, "half"), "shifted")
    up = step("UnaryOp", "UnaryOp", {"opType": 2, "T": 1}, [shifted], "floor")
    tie = binary(15, binary(1, up, x, "diff"), const(0.5, "half_again"), "tie")
    odd = binary(22, binary(17, up, const(2, "two"), "parity"), const(0, "zero"), "odd")
    both = binary(2, tie, odd, "fix_int")
    fix = step("Cast", "CastParam", {"srcT": 3, "dstT": datatype_of(dtype)}, [both], "fix")
    binary(1, up, fix, "out", last=True)
