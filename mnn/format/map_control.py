"""File mapping of control flow: MNN's ``If`` and ``While`` <-> the express ``if``/``while``
ops with :class:`~mnn.express.ops.control_flow.Subgraph` attributes.

MNN facts: subgraphs live in ``Net.subgraphs`` (``SubGraphProto``: name, tensor names,
input and output tensor indexes, ops), referred to by name from ``IfParam``/``WhileParam``.

- ``If``: op inputs ``[cond, x_1 … x_n]``. ``aliases_inputs[j]`` lists, for op input ``j``,
  the subgraph input names it feeds (empty for ``cond``); ``aliases_outputs[k]`` holds the
  then- and else-branch output names of op output ``k``.
- ``While`` without a cond graph is ONNX's Loop: op inputs ``[trip_count, cond, v_1 …
  v_n]``; the body's inputs are ``[iteration, cond, v_1 … v_n]`` and its outputs
  ``[cond', v'_1 … v'_n, scan_1 … scan_k]``; op outputs ``[v_1 … v_n, scan_1 … scan_k]``,
  all positional (the converter turns captured outer values into extra loop-carried
  values). This is exactly the express ``while`` op's ONNX-Loop form.

The subgraph's own ``Input`` ops describe shapes loosely (the converter writes ``[1]``
int32 placeholders), so the reader makes the subgraph placeholders from the op's actual
inputs instead.
"""

from ..express import graph as _graph
from ..express.ops.control_flow import Subgraph
from ..express.var import placeholder
from .errors import ModelFileError
from .mapping import decoder, dtype_of, encoder
from .schema import OP_TYPE_NAMES

__all__ = []


def _sub_proto(ctx, op, name):
    sub = ctx.subgraphs.get(name)
    if sub is None:
        ctx.fail(op, f"refers to subgraph {name!r}, which the file does not have")
    return sub


def _like(var, declared=None):
    """A placeholder with ``var``'s shape and dtype.

    When only run time knows the shape (a loop's scan output feeding the next layer's loop,
    say), the placeholder's shape is left unknown, rank included: asking ``var`` for its
    rank would compute it, and the file's own Input op only sketches the shape. The body's
    ops then infer their shapes when the loop runs, from the values it is given. Where the
    dtype is unknown too, ``declared`` (the subgraph Input op's dtype) is used.
    """
    meta = var.expr.metas[var.index]
    if meta.shape is None:
        dtype = meta.dtype if meta.dtype is not None else declared
        if dtype is None:
            raise ModelFileError(f"mnn: the dtype of {var.name} is known only at run time and "
                                 "the subgraph does not declare it")
        free = placeholder([-1], dtype=dtype)
        # Not even the rank is known: no declared shape to check writes against.
        free.expr.attrs = {}
        return free
    return placeholder(list(meta.shape), dtype=meta.dtype)


def _declared_dtypes(sub):
    """Tensor index -> dtype declared by the subgraph's Input ops."""
    found = {}
    for node in sub.get("nodes") or []:
        outs = node.get("outputIndexes")
        p = node.get("main")
        if (OP_TYPE_NAMES.get(node.get("type")) == "Input" and outs is not None
                and len(outs) == 1 and node.get("main_type") == "Input" and p is not None):
            found[int(outs[0])] = dtype_of(p["dtype"], "Input.dtype")
    return found


def _build(ctx, op, sub, feeds):
    """Subgraph from ``SubGraphProto`` ``sub``; ``feeds`` maps its input tensor index ->
    the Var that will feed it (for shape and dtype)."""
    from .reader import build_subgraph

    name = sub["name"]
    if name in ctx.building:
        ctx.fail(op, f"subgraph {name!r} contains itself")
    ctx.building.add(name)
    try:
        declared = _declared_dtypes(sub)
        overrides = {i: _like(v, declared.get(i)) for i, v in feeds.items()}
        ins, outs = build_subgraph(ctx, sub, overrides)
    finally:
        ctx.building.discard(name)
    return ins, outs


def _names_of(sub):
    return list(sub.get("tensors") or [])


@decoder("If")
def _decode_if(ctx, op, inputs):
    if not inputs:
        ctx.fail(op, "needs a condition input")
    p = ctx.param(op, "IfParam")
    cond, xs = inputs[0], list(inputs[1:])
    aliases_in = p["aliases_inputs"] or []
    aliases_out = p["aliases_outputs"] or []
    n_out = len(op.get("outputIndexes") if op.get("outputIndexes") is not None else [])
    graphs = []
    for branch, key in enumerate(("then_graph", "else_graph")):
        sub = _sub_proto(ctx, op, p[key])
        names = _names_of(sub)
        sub_inputs = [int(i) for i in (sub.get("inputs") if sub.get("inputs") is not None else [])]
        # Which op input feeds each subgraph input.
        feeds, order = {}, []
        for j, x in enumerate(xs, start=1):
            wanted = (
                set(aliases_in[j]["data"] or []) if j < len(aliases_in) and aliases_in[j] else set()
            )
            match = [i for i in sub_inputs if 0 <= i < len(names) and names[i] in wanted]
            if not aliases_in and j - 1 < len(sub_inputs):
                match = [sub_inputs[j - 1]]
            if match:
                feeds[match[0]] = x
            order.append(match[0] if match else None)
        for i in sub_inputs:
            if i not in feeds:
                ctx.fail(
                    op,
                    f"input {names[i] if 0 <= i < len(names) else i!r} of subgraph "
                    f"{sub['name']!r} is fed by no input of the op",
                )
        ins, outs = _build(ctx, op, sub, feeds)
        by_index = dict(zip(sub_inputs, ins))
        placeholders = [by_index[i] if i is not None else _like(x) for i, x in zip(order, xs)]
        out_index = {
            names[i]: v
            for i, v in zip(
                [int(i) for i in (sub.get("outputs") if sub.get("outputs") is not None else [])],
                outs,
            )
            if 0 <= i < len(names)
        }
        if aliases_out:
            if len(aliases_out) != n_out:
                ctx.fail(op, f"{len(aliases_out)} output aliases for {n_out} outputs")
            chosen = []
            for k, alias in enumerate(aliases_out):
                data = (alias or {}).get("data") or []
                if branch >= len(data) or data[branch] not in out_index:
                    ctx.fail(op, f"output {k} names no output of subgraph {sub['name']!r}")
                chosen.append(out_index[data[branch]])
        else:
            chosen = outs
        graphs.append(Subgraph(placeholders, chosen, name=f"{ctx.source}:{sub['name']}"))
    return _graph.apply("if", [cond] + xs, then_graph=graphs[0], else_graph=graphs[1])


@decoder("While")
def _decode_while(ctx, op, inputs):
    p = ctx.param(op, "WhileParam")
    if p["cond_graph"]:
        ctx.fail(
            op, "TensorFlow-style While with a cond graph is not supported (ONNX Loop style is)"
        )
    if len(inputs) < 2:
        ctx.fail(op, "needs a trip count and a condition input")
    sub = _sub_proto(ctx, op, p["body_graph"])
    sub_inputs = [int(i) for i in (sub.get("inputs") if sub.get("inputs") is not None else [])]
    if len(sub_inputs) != len(inputs):
        ctx.fail(
            op, f"body {sub['name']!r} takes {len(sub_inputs)} inputs, the op has {len(inputs)}"
        )
    trip, cond = inputs[0], inputs[1]
    # The iteration counter has the trip count's dtype.
    feeds = dict(zip(sub_inputs, [trip, cond] + list(inputs[2:])))
    ins, outs = _build(ctx, op, sub, feeds)
    body = Subgraph(ins, outs, name=f"{ctx.source}:{sub['name']}")
    return _graph.apply("while", list(inputs), cond_graph=None, body_graph=body)


# -- writing -----------------------------------------------------------------------------


@encoder("if")
def _encode_if(ctx, expr):
    a = expr.attrs
    then_name = ctx.subgraph(a["then_graph"])
    else_name = ctx.subgraph(a["else_graph"])
    t_in = ctx.subgraph_names(a["then_graph"], "inputs")
    e_in = ctx.subgraph_names(a["else_graph"], "inputs")
    t_out = ctx.subgraph_names(a["then_graph"], "outputs")
    e_out = ctx.subgraph_names(a["else_graph"], "outputs")
    aliases_in = [{}] + [{"data": sorted({t, e})} for t, e in zip(t_in, e_in)]
    aliases_out = [{"data": [t, e]} for t, e in zip(t_out, e_out)]
    ctx.emit(
        expr,
        "If",
        "IfParam",
        {
            "then_graph": then_name,
            "else_graph": else_name,
            "aliases_inputs": aliases_in,
            "aliases_outputs": aliases_out,
        },
        expr.inputs,
    )


@encoder("while")
def _encode_while(ctx, expr):
    a = expr.attrs
    if a["cond_graph"] is not None:
        ctx.fail(expr, "only the ONNX-Loop form of while (no cond graph) maps to MNN's While")
    body = ctx.subgraph(a["body_graph"])
    ctx.emit(expr, "While", "WhileParam", {"body_graph": body}, expr.inputs)
