"""The rewrites behind :func:`converter.passes.optimize`.

Every Expr owns one Var per output and consumers hold those Var objects, so a rewrite
re-points a Var (``fix_as_const``, ``replace``) and every consumer sees the change.
"""
import numpy as np

from mnn.express.graph import _ancestors, apply
from mnn.express.ops.nn_conv import conv2d
from mnn.express.var import const

__all__ = [
    "consumers",
    "fold_constants",
    "fold_conv_batchnorm",
    "merge_duplicates",
    "topological",
]

# Ops never folded: their value is a Subgraph's run (cheap to keep, and the file keeps
# control flow explicit).
_KEEP = frozenset(["if", "while"])


def topological(outputs):
    """Every Expr above ``outputs``, inputs before consumers."""
    order, seen = [], set()
    for var in outputs:
        for expr in _ancestors(var.expr):
            if expr.id not in seen:
                seen.add(expr.id)
                order.append(expr)
    return order


def consumers(outputs):
    """Expr id -> list of consumer Exprs (graph outputs count as a consumer ``None``)."""
    users = {}
    for expr in topological(outputs):
        for v in expr.inputs:
            users.setdefault(v.expr.id, []).append(expr)
    for var in outputs:
        users.setdefault(var.expr.id, []).append(None)
    return users


def fold_constants(outputs, keep_growing=False):
    """Replace every op whose inputs are all constants by constants; returns the count.

    With ``keep_growing`` (``--optimizePrefer 1``: smallest file) an op whose folded
    result would hold more bytes than its inputs (broadcasts, tiles, ConstantOfShape-like
    fills) stays an op."""
    count = 0
    for expr in topological(outputs):
        if expr.op is None or expr.op.name in _KEEP or not expr.inputs:
            continue
        if all(v.expr.kind == "const" for v in expr.inputs):
            expr.evaluate()
            if keep_growing:
                before = sum(v.expr.values[v.index].nbytes for v in expr.inputs)
                after = sum(a.nbytes for a in expr.values)
                if after > before:
                    continue
            for var in list(expr.outputs):
                var.fix_as_const()
            count += 1
    return count


def _const_value(var):
    return var.expr.values[var.index] if var.expr.kind == "const" else None


def _per_channel(value, channels):
    """A (1, C, 1, 1)-broadcastable constant as a length-C vector, else None."""
    if value is None or value.ndim > 4:
        return None
    shape = (1,) * (4 - value.ndim) + value.shape
    if shape[0] != 1 or shape[2] != 1 or shape[3] != 1 or shape[1] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(shape[1]), (channels,))


def fold_conv_batchnorm(outputs):
    """conv2d -> multiply(per-channel const) -> add(per-channel const) becomes one conv2d
    with scaled weights and a shifted bias (inference BatchNormalization); returns the
    number of folds."""
    count = 0
    users = consumers(outputs)
    for expr in topological(outputs):
        if expr.op_type != "add" or len(expr.inputs) != 2:
            continue
        mul_var, shift_var = expr.inputs
        if mul_var.expr.op_type != "multiply":
            mul_var, shift_var = shift_var, mul_var
        mul = mul_var.expr
        if mul.op_type != "multiply" or len(users.get(mul.id, [])) != 1:
            continue
        conv_var, scale_var = mul.inputs
        if conv_var.expr.op_type != "conv2d":
            conv_var, scale_var = scale_var, conv_var
        conv = conv_var.expr
        if conv.op_type != "conv2d" or len(users.get(conv.id, [])) != 1:
            continue
        weight = _const_value(conv.inputs[1])
        bias = _const_value(conv.inputs[2]) if len(conv.inputs) > 2 else None
        if weight is None or (len(conv.inputs) > 2 and bias is None):
            continue
        channels = weight.shape[0]
        scale = _per_channel(_const_value(scale_var), channels)
        shift = _per_channel(_const_value(shift_var), channels)
        out_meta = expr.metas[0]
        if scale is None or shift is None or out_meta.dtype != weight.dtype:
            continue
        new_w = (weight * scale.reshape(-1, 1, 1, 1)).astype(weight.dtype)
        old_b = bias if bias is not None else np.zeros(channels, weight.dtype)
        new_b = (old_b * scale + shift).astype(weight.dtype)
        folded = apply("conv2d", [conv.inputs[0], const(new_w), const(new_b)],
                       **conv.attrs)[0]
        if folded.expr.metas[0].shape != out_meta.shape:
            continue
        folded.expr.name = expr.name
        expr.outputs[0].replace(folded)
        count += 1
    return count


def _attrs_key(attrs):
    return tuple(sorted(attrs.items(), key=lambda kv: kv[0]))


def merge_duplicates(outputs):
    """Merge ops with the same op, inputs and attributes, and equal constants; returns
    the number of Exprs merged away."""
    count = 0
    seen_ops, seen_consts = {}, {}
    for expr in topological(outputs):
        if expr.kind == "const":
            value = expr.values[0]
            if value.size > 1 << 20:
                continue  # hashing big weights costs more than sharing them saves
            key = (value.dtype.str, value.shape, value.tobytes())
            keep = seen_consts.setdefault(key, expr)
            if keep is not expr:
                expr.outputs[0].replace(keep.outputs[0])
                count += 1
            continue
        if expr.op is None:
            continue
        try:
            key = (expr.op.name, tuple((v.expr.id, v.index) for v in expr.inputs),
                   _attrs_key(expr.attrs))
            hash(key)
        except TypeError:
            continue
        keep = seen_ops.setdefault(key, expr)
        if keep is not expr:
            for mine, theirs in zip(expr.outputs, keep.outputs):
                mine.replace(theirs)
            count += 1
    return count


def matmul_to_conv(outputs):
    """``matmul(x, W)`` with a constant 2-D ``W`` and a 2-D ``x`` becomes a 1x1 conv2d
    between reshapes (MNN stores such layers as convolutions, whose weights the writer
    can quantise); returns the number of rewrites."""
    count = 0
    for expr in topological(outputs):
        if expr.op_type != "matmul" or len(expr.inputs) != 2:
            continue
        x, w = expr.inputs
        weight = _const_value(w)
        xmeta = x.expr.metas[x.index]
        if weight is None or weight.ndim != 2 or xmeta.shape is None or len(xmeta.shape) != 2:
            continue
        if weight.dtype.kind != "f" or xmeta.dtype != weight.dtype:
            continue
        if expr.attrs.get("transpose_a"):
            continue
        kernel = weight.T if not expr.attrs.get("transpose_b") else weight  # (M, K)
        n, k = xmeta.shape
        m = kernel.shape[0]
        image = apply("reshape", [x], shape=(n, k, 1, 1), zero_copies=False)[0]
        conv = conv2d(image, const(np.ascontiguousarray(kernel.reshape(m, k, 1, 1))))
        flat = apply("reshape", [conv], shape=(n, m), zero_copies=False)[0]
        flat.expr.name = expr.name
        expr.outputs[0].replace(flat)
        count += 1
    return count


def fuse_activations(outputs):
    """``relu`` (slope 0) or ``relu6`` (0, 6) whose input is a conv2d read by nothing else
    becomes the conv2d's ``clamp`` (MNN's Convolution2DCommon relu/relu6 flags); returns
    the number of fusions. Clip(0, 6) already arrives as relu6 from the frontend."""
    count = 0
    users = consumers(outputs)
    for expr in topological(outputs):
        if expr.op_type == "relu" and expr.attrs.get("slope", 0.0) == 0.0:
            clamp = (0.0, float("inf"))
        elif expr.op_type == "relu6" and (expr.attrs.get("min_value"),
                                         expr.attrs.get("max_value")) == (0.0, 6.0):
            clamp = (0.0, 6.0)
        else:
            continue
        conv = expr.inputs[0].expr
        if conv.op_type != "conv2d" or conv.attrs.get("clamp") is not None:
            continue
        if len(users.get(conv.id, [])) != 1:
            continue
        fused = apply("conv2d", list(conv.inputs), **dict(conv.attrs, clamp=clamp))[0]
        fused.expr.name = expr.name
        expr.outputs[0].replace(fused)
        count += 1
    return count
