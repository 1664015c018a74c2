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
- ``While`` with a cond graph (TensorFlow style) matches values by tensor name across the
  two subgraphs: ``aliases_inputs[j]`` lists the body and cond inputs op input ``j``
  feeds; ``aliases_updates`` holds ``[body output, subgraph input]`` pairs applied after
  each iteration; ``aliases_outputs[k]`` names what op output ``k`` returns (a subgraph
  input, i.e. its latest value, or a body output that updates one). The loop runs while the
  cond graph's first output is > 0. The reader turns every subgraph input into a loop value
  of the express ``while`` op's TensorFlow form; the writer names loop value ``i`` by the
  body's and the cond graph's input ``i``.

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
        return _decode_tf_while(ctx, op, inputs, p)
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


def _io_names(sub, which):
    """Tensor names of a subgraph proto's ``"inputs"`` or ``"outputs"``, in order."""
    names = _names_of(sub)
    idx = sub.get(which)
    return [names[int(i)] if 0 <= int(i) < len(names) else None
            for i in ([] if idx is None else idx)]


def _tf_while_state(ctx, op, inputs, p, body_sub, cond_sub):
    """MNN's name aliases of a TensorFlow-style While as loop state.

    Returns ``(init, updates, results)``: ``init`` maps each subgraph input name to the op
    input that feeds it first (``aliases_inputs[j]`` lists the names op input ``j`` feeds,
    in the body and in the cond graph); ``updates`` maps a name to the body output that
    replaces it after each iteration (``aliases_updates``: ``[output, input]`` pairs);
    ``results`` names, for each op output, the state entry it returns (``aliases_outputs``
    names a subgraph input, or a body output that updates one).
    """
    body_in, body_out = _io_names(body_sub, "inputs"), _io_names(body_sub, "outputs")
    cond_in, cond_out = _io_names(cond_sub, "inputs"), _io_names(cond_sub, "outputs")
    aliases_in = p["aliases_inputs"] or []
    if len(aliases_in) != len(inputs):
        ctx.fail(op, f"{len(aliases_in)} input aliases for {len(inputs)} inputs")
    init = {}
    for j, alias in enumerate(aliases_in):
        for name in (alias or {}).get("data") or []:
            if name not in body_in and name not in cond_in:
                ctx.fail(op, f"input {j} feeds {name!r}, an input of neither subgraph")
            if name in init:
                ctx.fail(op, f"subgraph input {name!r} is fed by two op inputs")
            init[name] = inputs[j]
    for name in body_in + cond_in:
        if name not in init:
            ctx.fail(op, f"subgraph input {name!r} is fed by no input of the op")
    updates = {}
    for k, alias in enumerate(p["aliases_updates"] or []):
        data = list((alias or {}).get("data") or [])
        if len(data) != 2:
            ctx.fail(op, f"update alias {k} must name [output, input], has {data}")
        out, name = data
        if out not in body_out:
            where = "the cond graph's output" if out in cond_out else "no body output"
            ctx.fail(op, f"update alias {k}: {out!r} is {where} (only body outputs update)")
        if name not in init:
            ctx.fail(op, f"update alias {k}: {name!r} is no subgraph input")
        if name in updates:
            ctx.fail(op, f"subgraph input {name!r} is updated twice")
        updates[name] = out
    if not any(name in cond_in for name in updates):
        ctx.fail(op, "no body output updates the cond graph's inputs: the loop could not end")
    results = []
    n_out = len(op.get("outputIndexes") if op.get("outputIndexes") is not None else [])
    aliases_out = list(p["aliases_outputs"] or [])
    if len(aliases_out) != n_out:
        ctx.fail(op, f"{len(aliases_out)} output aliases for {n_out} outputs")
    for k, name in enumerate(aliases_out):
        if name in init:
            results.append(name)
            continue
        fed = [s for s, out in updates.items() if out == name]
        if not fed:
            ctx.fail(op, f"output {k} ({name!r}) is neither a subgraph input nor a body output "
                         "that updates one")
        results.append(fed[0])
    return init, updates, results


def _decode_tf_while(ctx, op, inputs, p):
    """A While with a cond graph: the express ``while`` with every subgraph input as a
    loop value (fed to the body and to the cond graph by name)."""
    body_sub = _sub_proto(ctx, op, p["body_graph"])
    cond_sub = _sub_proto(ctx, op, p["cond_graph"])
    init, updates, results = _tf_while_state(ctx, op, inputs, p, body_sub, cond_sub)
    state = list(init)
    graphs = {}
    for key, sub in (("body", body_sub), ("cond", cond_sub)):
        names = _names_of(sub)
        idx = [int(i) for i in (sub.get("inputs") if sub.get("inputs") is not None else [])]
        ins, outs = _build(ctx, op, sub, {i: init[names[i]] for i in idx})
        by_name = {names[i]: v for i, v in zip(idx, ins)}
        placeholders = [by_name[s] if s in by_name else _like(init[s]) for s in state]
        graphs[key] = (placeholders, dict(zip(_io_names(sub, "outputs"), outs)), outs)
    body_ins, body_by_name, _ = graphs["body"]
    body_outs = [body_by_name[updates[s]] if s in updates else v
                 for s, v in zip(state, body_ins)]
    cond_ins, _, cond_outs = graphs["cond"]
    if not cond_outs:
        ctx.fail(op, f"cond graph {cond_sub['name']!r} has no output")
    body = Subgraph(body_ins, body_outs, name=f"{ctx.source}:{body_sub['name']}")
    cond = Subgraph(cond_ins, cond_outs[:1], name=f"{ctx.source}:{cond_sub['name']}")
    outs = _graph.apply("while", [init[s] for s in state], cond_graph=cond, body_graph=body)
    return [outs[state.index(name)] for name in results]


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
    if a["cond_graph"] is None:
        body = ctx.subgraph(a["body_graph"])
        ctx.emit(expr, "While", "WhileParam", {"body_graph": body}, expr.inputs)
        return
    ctx.emit(expr, "While", "WhileParam", _tf_while_param(ctx, expr), expr.inputs)


def _tf_while_param(ctx, expr):
    """WhileParam of a TensorFlow-style while: loop value ``i`` feeds body input ``i`` and
    cond input ``i`` (by name), body output ``i`` replaces both after each iteration, and
    op output ``i`` is body input ``i``'s value when the loop ends (the initial value when
    it runs zero times)."""
    cond, body = expr.attrs["cond_graph"], expr.attrs["body_graph"]
    b_in = ctx.subgraph_names(body, "inputs")
    b_out = ctx.subgraph_names(body, "outputs")
    c_in = ctx.subgraph_names(cond, "inputs")
    c_out = ctx.subgraph_names(cond, "outputs")
    # MNN matches these names across both subgraphs: each must point at one loop value.
    for i, (b, c) in enumerate(zip(b_in, c_in)):
        if b_in.index(b) != i or c_in.index(c) != i or (b in c_in and c_in.index(b) != i) \
                or (c in b_in and b_in.index(c) != i):
            ctx.fail(expr, f"subgraph input names {b!r}/{c!r} of loop value {i} are ambiguous "
                           "between the body and the cond graph; rename the placeholders")
    flag = cond.outputs[0]
    dtype = flag.expr.metas[flag.index].dtype
    if dtype is None or dtype.kind not in "biu":
        # MNN reads the first element of the cond graph's output as an int32 (it computes
        # bools and 64-bit integers as int32).
        ctx.fail(expr, f"the cond graph's output is {dtype}; MNN needs a bool or an integer "
                       "there (cast it)")
    for out in b_out:
        if out in c_out:
            ctx.fail(expr, f"body output {out!r} has the name of a cond graph output")
    updates = []
    for i, (b, c) in enumerate(zip(b_in, c_in)):
        updates.append({"data": [b_out[i], b]})
        if c != b:
            updates.append({"data": [b_out[i], c]})
    return {
        "cond_graph": ctx.subgraph(cond),
        "body_graph": ctx.subgraph(body),
        "aliases_inputs": [{"data": sorted({b, c})} for b, c in zip(b_in, c_in)],
        "aliases_outputs": list(b_in),
        "aliases_updates": updates,
    }
