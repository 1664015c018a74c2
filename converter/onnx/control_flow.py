"""ONNX If, Loop and Scan -> the express ``if`` / ``while`` ops with Subgraph attributes.

Bodies are converted into self-contained Subgraphs (see ``mnn.express.ops.control_flow``):
values a body reads from the enclosing graph become extra subgraph inputs (captures) that
the op feeds. Loop maps to the ONNX-style ``while`` (no cond graph), captures riding along
as loop-carried values the body passes through unchanged. Scan is a ``while`` over the scan
axis: the body picks element ``i`` of each scan input and the loop stacks the scan outputs.
"""
import numpy as np

import mnn.express as F
from mnn.express.ops.control_flow import Subgraph, if_, loop

from .common import onnx_type
from .registry import onnx_op
from .values import EMPTY, RuntimeOptional, RuntimeSequence, Sequence, to_runtime

_INT64_MAX = np.iinfo(np.int64).max


def _fresh_like(var):
    meta = var.expr.metas[var.index]
    if meta.shape is None:
        raise ValueError(f"the shape of {var.name or 'a loop value'} is only known at run "
                         "time")
    return F.placeholder(list(meta.shape), F.NCHW, meta.dtype)


def _fresh_vector(var):
    """A placeholder for a 1-d tensor whose length may change (packed sequences)."""
    return F.placeholder([-1], F.NCHW, var.dtype)


def _check_tensors(ctx, values, what):
    for v in values:
        if not isinstance(v, F.Var):
            raise ctx.error(f"{what} returns a sequence; only tensors are supported")


@onnx_op("If", since=1)
def if_op(ctx, cond, then_branch=None, else_branch=None):
    if then_branch is None or else_branch is None:
        raise ctx.error("attributes 'then_branch' and 'else_branch' are required")
    known = ctx.value(cond)
    if known is not None:
        # A constant condition: only the chosen branch exists (constant folding).
        branch = then_branch if bool(np.asarray(known).reshape(-1)[0]) else else_branch
        _, outs = ctx.subgraph(branch, inline=True)
        return outs
    then_scope, then_outs = ctx.subgraph(then_branch)
    else_scope, else_outs = ctx.subgraph(else_branch)
    if len(then_outs) != len(else_outs):
        raise ctx.error(f"the branches have {len(then_outs)} and {len(else_outs)} outputs")
    # Sequences of one length in both branches travel as their elements; other sequences
    # and optionals travel packed (see _branch_layout).
    layout, then_outs, else_outs = _branch_layout(ctx, then_branch, then_outs, else_outs)
    then_outs, else_outs = _flatten(then_outs), _flatten(else_outs)
    _check_tensors(ctx, then_outs + else_outs, "a branch")
    names = list(then_scope.captures) + [n for n in else_scope.captures
                                         if n not in then_scope.captures]
    outer = {}
    for scope in (then_scope, else_scope):
        for name, (var, _) in scope.captures.items():
            outer[name] = var

    def inputs_of(scope):
        return [scope.captures[n][1] if n in scope.captures else _fresh_like(outer[n])
                for n in names]

    then_graph = Subgraph(inputs_of(then_scope), then_outs, name=f"{ctx.name}_then")
    else_graph = Subgraph(inputs_of(else_scope), else_outs, name=f"{ctx.name}_else")
    results = if_(cond, then_graph, else_graph, [outer[n] for n in names])
    return _regroup(results, layout)


def _is_optional(value):
    return value is EMPTY or isinstance(value, RuntimeOptional)


def _is_sequence(value):
    return isinstance(value, (list, RuntimeSequence))


def _branch_layout(ctx, branch, then_outs, else_outs):
    """Per output: None for a tensor, the length for a static sequence of one length in
    both branches, ``"seq"`` for a packed sequence, ``("opt", kind)`` for an optional
    decided at run time (kind: ``"seq"`` or ``"tensor"``). Returns the layout and both
    branches' outputs brought to it."""
    layout, new_then, new_else = [], [], []
    for i, (a, b) in enumerate(zip(then_outs, else_outs)):
        declared = branch.output[i].type if i < len(branch.output) else None
        if isinstance(a, F.Var) and isinstance(b, F.Var):
            layout.append(None)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a:
            layout.append(len(a))
        elif _is_optional(a) or _is_optional(b) or (
                declared is not None and declared.HasField("optional_type")):
            kind, dtype = _optional_kind(ctx, a, b, declared)
            a, b = (_as_runtime_optional(ctx, v, kind, dtype) for v in (a, b))
            layout.append(("opt", kind))
        elif _is_sequence(a) and _is_sequence(b):
            dtype = _sequence_dtype(ctx, [a, b], declared)
            a, b = (_packed(ctx, v, dtype) for v in (a, b))
            layout.append("seq")
        else:
            raise ctx.error(f"output {i}: the branches return a sequence and a tensor")
        new_then.append(a)
        new_else.append(b)
    return layout, new_then, new_else


def _sequence_dtype(ctx, values, declared):
    for v in values:
        dtype = getattr(v, "dtype", None)
        if dtype is not None:
            return dtype
    t = declared
    while t is not None and t.WhichOneof("value") in ("optional_type", "sequence_type"):
        t = t.optional_type.elem_type if t.HasField("optional_type") else \
            t.sequence_type.elem_type
    if t is not None and t.HasField("tensor_type") and t.tensor_type.elem_type:
        return onnx_type(ctx, t.tensor_type.elem_type)
    raise ctx.error("the element type of a sequence is unknown in both branches")


def _packed(ctx, value, dtype):
    if isinstance(value, list) and not value:
        value = Sequence(elem_dtype=dtype)
    try:
        return to_runtime(value)
    except TypeError as exc:
        raise ctx.error(str(exc)) from None


def _optional_kind(ctx, a, b, declared):
    """("seq" or "tensor", element dtype) of an optional output of two branches."""
    contents = [v.value if isinstance(v, RuntimeOptional) else v for v in (a, b)
                if v is not EMPTY]
    if contents:
        kind = "seq" if _is_sequence(contents[0]) else "tensor"
    else:
        t = declared.optional_type.elem_type if declared is not None and \
            declared.HasField("optional_type") else None
        if t is None:
            raise ctx.error("both branches return an empty optional of unknown type")
        kind = "seq" if t.HasField("sequence_type") else "tensor"
    return kind, _sequence_dtype(ctx, contents, declared)


def _as_runtime_optional(ctx, value, kind, dtype):
    if isinstance(value, RuntimeOptional):
        return value
    present = F.const(np.array(value is not EMPTY))
    if kind == "seq":
        content = Sequence(elem_dtype=dtype) if value is EMPTY else value
        return RuntimeOptional(present, _packed(ctx, content, dtype))
    if value is EMPTY:
        # The content of an empty optional is never read: an empty tensor of its type.
        return RuntimeOptional(present, F.const(np.zeros(0, dtype)))
    if not isinstance(value, F.Var):
        raise ctx.error("an optional holds a sequence in one branch and a tensor in the "
                        "other")
    return RuntimeOptional(present, value)


def _flatten(outs):
    flat = []
    for v in outs:
        if isinstance(v, (RuntimeSequence, RuntimeOptional)):
            flat.extend(v.vars)
        else:
            flat.extend(v if isinstance(v, list) else [v])
    return flat


def _regroup(results, layout):
    out, i = [], 0
    for item in layout:
        if item is None:
            out.append(results[i])
            i += 1
        elif item == "seq":
            out.append(RuntimeSequence(results[i], results[i + 1]))
            i += 2
        elif isinstance(item, tuple):
            if item[1] == "seq":
                out.append(RuntimeOptional(results[i], RuntimeSequence(results[i + 1],
                                                                       results[i + 2])))
                i += 3
            else:
                out.append(RuntimeOptional(results[i], results[i + 1]))
                i += 2
        else:
            out.append(Sequence(results[i:i + item]))
            i += item
    return out


@onnx_op("Loop", since=1)
def loop_op(ctx, M=None, cond=None, *v_initial, body=None):
    if body is None:
        raise ctx.error("attribute 'body' is required")
    if len(body.input) != 2 + len(v_initial):
        raise ctx.error(f"the body takes {len(body.input)} inputs, expected "
                        f"{2 + len(v_initial)} (iteration, cond, loop values)")
    if any(not isinstance(v, F.Var) for v in v_initial):
        static = all(isinstance(v, (F.Var, list)) for v in v_initial)
        if static and (M is None or ctx.value(M) is not None) and \
                (cond is None or ctx.value(cond) is not None):
            try:
                return _unrolled_loop(ctx, M, cond, v_initial, body)
            except _NotUnrollable:
                pass
        return _sequence_loop(ctx, M, cond, v_initial, body)
    _check_tensors(ctx, v_initial, "a loop input")
    trip = M if M is not None else F.const(np.array(_INT64_MAX, np.int64))
    go = cond if cond is not None else F.const(np.array(True))
    iter_ph = F.placeholder([], F.NCHW, np.int64)
    cond_ph = F.placeholder([], F.NCHW, np.bool_)
    carried = [_fresh_like(v) for v in v_initial]
    scope, outs = ctx.subgraph(body, [iter_ph, cond_ph] + carried)
    _check_tensors(ctx, outs, "the loop body")
    n = len(v_initial)
    if len(outs) < 1 + n:
        raise ctx.error(f"the body returns {len(outs)} values, expected at least {1 + n}")
    caps = list(scope.captures.values())
    body_inputs = [iter_ph, cond_ph] + carried + [inner for _, inner in caps]
    new_cond = outs[0]
    if new_cond.dtype != np.bool_:
        new_cond = F.cast(new_cond, np.bool_)
    body_outputs = ([new_cond] + outs[1:1 + n] + [inner for _, inner in caps]
                    + outs[1 + n:])
    graph = Subgraph(body_inputs, body_outputs, name=f"{ctx.name}_body")
    results = loop(trip, F.cast(go, np.bool_), graph,
                   list(v_initial) + [outer for outer, _ in caps])
    return results[:n] + results[n + len(caps):]


class _NotUnrollable(Exception):
    """An iteration's condition is only known at run time: the loop cannot be unrolled."""


def _sequence_loop(ctx, M, cond, v_initial, body):
    """A Loop carrying sequences of run-time length: each sequence rides as its packed
    (data, index) tensors, which may change shape between iterations."""
    kinds, flat_init, body_values = [], [], []
    for i, v in enumerate(v_initial):
        if isinstance(v, F.Var):
            kinds.append("tensor")
            flat_init.append(v)
            body_values.append(_fresh_like(v))
        elif _is_sequence(v):
            packed = _packed(ctx, v, getattr(v, "dtype", None) or _body_input_dtype(
                ctx, body, 2 + i))
            kinds.append("seq")
            flat_init.extend(packed.vars)
            body_values.append(RuntimeSequence(_fresh_vector(packed.data),
                                               _fresh_vector(packed.index)))
        else:
            raise ctx.error(f"loop value {i} is an optional that may be empty; only tensors "
                            "and sequences can be carried")
    trip = M if M is not None else F.const(np.array(_INT64_MAX, np.int64))
    go = cond if cond is not None else F.const(np.array(True))
    iter_ph = F.placeholder([], F.NCHW, np.int64)
    cond_ph = F.placeholder([], F.NCHW, np.bool_)
    scope, outs = ctx.subgraph(body, [iter_ph, cond_ph] + body_values)
    n = len(v_initial)
    if len(outs) < 1 + n:
        raise ctx.error(f"the body returns {len(outs)} values, expected at least {1 + n}")
    new_values = []
    for i, (kind, out) in enumerate(zip(kinds, outs[1:1 + n])):
        if kind == "tensor":
            _check_tensors(ctx, [out], "the loop body")
            new_values.extend([out])
        else:
            if not _is_sequence(out):
                raise ctx.error(f"loop value {i} is a sequence but the body returns a "
                                f"{type(out).__name__}")
            new_values.extend(_packed(ctx, out, body_values[i].dtype).vars)
    _check_tensors(ctx, outs[1 + n:], "a scan output of the loop body")
    flat_inputs = [v for bv in body_values
                   for v in (bv.vars if isinstance(bv, RuntimeSequence) else [bv])]
    caps = list(scope.captures.values())
    new_cond = outs[0]
    if new_cond.dtype != np.bool_:
        new_cond = F.cast(new_cond, np.bool_)
    graph = Subgraph([iter_ph, cond_ph] + flat_inputs + [inner for _, inner in caps],
                     [new_cond] + new_values + [inner for _, inner in caps] + outs[1 + n:],
                     name=f"{ctx.name}_body")
    results = loop(trip, F.cast(go, np.bool_), graph,
                   flat_init + [outer for outer, _ in caps])
    values, j = [], 0
    for kind in kinds:
        if kind == "tensor":
            values.append(results[j])
            j += 1
        else:
            values.append(RuntimeSequence(results[j], results[j + 1]))
            j += 2
    return values + results[j + len(caps):]


def _body_input_dtype(ctx, body, i):
    """Element dtype a body's input ``i`` declares (an empty sequence's type)."""
    return _sequence_dtype(ctx, [], body.input[i].type)


# Longer Loops carrying sequences run as a ``while`` over packed sequences instead.
_UNROLL_LIMIT = 256


def _unrolled_loop(ctx, M, cond, v_initial, body):
    """A Loop carrying a sequence (a list fixed at conversion time) is unrolled when its
    trip count and every iteration's condition are constants (at most ``_UNROLL_LIMIT``
    iterations); otherwise ``_NotUnrollable`` sends it to :func:`_sequence_loop`."""
    trip = None if M is None else ctx.value(M)
    if M is not None and trip is None:
        raise ctx.error("a Loop carrying a sequence needs a constant trip count")
    go = True if cond is None else ctx.value(cond)
    if go is None:
        raise ctx.error("a Loop carrying a sequence needs a constant condition")
    limit = int(np.asarray(trip).reshape(-1)[0]) if trip is not None else None
    values, scans, i = list(v_initial), [], 0
    n = len(v_initial)
    while bool(np.asarray(go).reshape(-1)[0]) and (limit is None or i < limit):
        if i >= _UNROLL_LIMIT:
            raise _NotUnrollable()
        it = F.const(np.array(i, np.int64))
        c = F.const(np.array(True))
        _, outs = ctx.subgraph(body, [it, c] + values, inline=True)
        go = ctx.value(outs[0])
        if go is None or any(isinstance(v, (RuntimeSequence, RuntimeOptional))
                             for v in outs[1:]):
            raise _NotUnrollable()
        values = list(outs[1:1 + n])
        scans.append(outs[1 + n:])
        i += 1
    k = len(body.output) - 1 - n
    if k and not scans:
        raise ctx.error("scan outputs of a Loop that runs zero times have no known shape")
    stacked = [F.stack([step[j] for step in scans], 0) for j in range(k)]
    return values + stacked


@onnx_op("Scan", since=9)
def scan_op(ctx, *inputs, body=None, num_scan_inputs=None, scan_input_axes=None,
            scan_input_directions=None, scan_output_axes=None, scan_output_directions=None):
    if body is None or num_scan_inputs is None:
        raise ctx.error("attributes 'body' and 'num_scan_inputs' are required")
    m = int(num_scan_inputs)
    states, scans = list(inputs[:len(inputs) - m]), list(inputs[len(inputs) - m:])
    _check_tensors(ctx, inputs, "a scan input")
    return _scan(ctx, body, states, scans, scan_input_axes or [0] * m,
                 scan_input_directions or [0] * m, scan_output_axes, scan_output_directions)


@onnx_op("Scan", since=8, until=9)
def scan_batched(ctx, sequence_lens, *inputs, body=None, num_scan_inputs=None,
                 directions=None):
    """Opset 8: axis 0 of every input is a batch, the scan runs along axis 1 of each
    batch entry (the batch is unrolled; sequence_lens must be omitted or all full)."""
    if body is None or num_scan_inputs is None:
        raise ctx.error("attributes 'body' and 'num_scan_inputs' are required")
    m = int(num_scan_inputs)
    _check_tensors(ctx, inputs, "a scan input")
    states = list(inputs[:len(inputs) - m])
    shapes = [ctx.known_shape(x) for x in inputs]
    if any(s is None for s in shapes):
        raise ctx.error("the shapes of the scan inputs must be known")
    batch = shapes[0][0]
    if sequence_lens is not None:
        lens = ctx.value(sequence_lens)
        full = shapes[len(states)][1]
        if lens is None or np.any(np.asarray(lens) != full):
            raise ctx.error("sequence_lens shorter than the scan axis are not supported")
    per_batch = []
    for b in range(batch):
        pick = [_element(x, b) for x in inputs]
        per_batch.append(_scan(ctx, body, pick[:len(states)], pick[len(states):], [0] * m,
                               directions or [0] * m, None, None))
    axis0 = F.const(np.array([0], np.int64))
    # Loop outputs may have shapes known only at run time: unsqueeze + concat copes.
    return [F.concat([F.onnx_unsqueeze(outs[i], axis0) for outs in per_batch], 0)
            for i in range(len(per_batch[0]))]


def _scan(ctx, body, states, scans, in_axes, in_dirs, scan_output_axes,
          scan_output_directions):
    # Move each scan axis to the front (and reverse the backward ones) so iteration i
    # reads element i along axis 0.
    fronted = []
    for x, axis, direction in zip(scans, in_axes, in_dirs):
        shape = ctx.known_shape(x)
        if shape is None:
            raise ctx.error("the shapes of the scan inputs must be known")
        axis = axis % len(shape)
        if axis:
            perm = [axis] + [i for i in range(len(shape)) if i != axis]
            x = F.transpose(x, perm)
        if direction:
            x = _reverse0(x)
        fronted.append(x)
    lengths = {ctx.known_shape(x)[0] for x in fronted}
    if len(lengths) != 1:
        raise ctx.error(f"scan inputs have different lengths along the scan axis: {lengths}")
    length = lengths.pop()

    iter_ph = F.placeholder([], F.NCHW, np.int64)
    cond_ph = F.placeholder([], F.NCHW, np.bool_)
    state_phs = [_fresh_like(s) for s in states]
    scan_phs = [_fresh_like(x) for x in fronted]
    elements = [_element(ph, iter_ph) for ph in scan_phs]
    scope, outs = ctx.subgraph(body, state_phs + elements)
    _check_tensors(ctx, outs, "the scan body")
    n = len(states)
    caps = list(scope.captures.values())
    body_inputs = [iter_ph, cond_ph] + state_phs + scan_phs + [inner for _, inner in caps]
    body_outputs = ([cond_ph] + outs[:n] + scan_phs + [inner for _, inner in caps]
                    + outs[n:])
    graph = Subgraph(body_inputs, body_outputs, name=f"{ctx.name}_body")
    results = loop(F.const(np.array(length, np.int64)), F.const(np.array(True)), graph,
                   states + fronted + [outer for outer, _ in caps])
    final_states = results[:n]
    stacked = results[n + len(fronted) + len(caps):]
    k = len(stacked)
    out_axes = scan_output_axes or [0] * k
    out_dirs = scan_output_directions or [0] * k
    outputs = []
    for y, axis, direction in zip(stacked, out_axes, out_dirs):
        if direction:
            y = _reverse0(y)
        rank = len(ctx.known_shape(y) or []) or None
        if axis:
            if rank is None:
                raise ctx.error("scan output axes need outputs of known rank")
            axis = axis % rank
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
            y = F.transpose(y, perm)
        outputs.append(y)
    return final_states + outputs


def _element(x, i):
    """``x[i]`` along axis 0 for an int or a scalar int64 Var ``i`` (x's shape known)."""
    if not isinstance(i, int):
        # A gather at a run-time index keeps the element's shape static (a slice at an
        # unknown start would not), so the body converts to ops a .mnn file can hold.
        return F.gather(x, i, 0)
    start, end = F.const(np.array([i], np.int64)), F.const(np.array([i + 1], np.int64))
    piece = F.onnx_slice(x, start, end, F.const(np.array([0], np.int64)))
    shape = x.expr.metas[x.index].shape
    return F.onnx_reshape(piece, F.const(np.array(shape[1:], np.int64)))


def _reverse0(x):
    """``x`` reversed along axis 0."""
    big = np.iinfo(np.int64).max
    return F.onnx_slice(x, F.const(np.array([-1], np.int64)),
                        F.const(np.array([-big], np.int64)),
                        F.const(np.array([0], np.int64)), F.const(np.array([-1], np.int64)))
