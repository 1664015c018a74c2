"""ONNX RNN, GRU and LSTM as express ops.

Per direction the input projection of every step is one matmul; each step then adds the
recurrent projection and applies the gate equations of the ONNX spec. Gate order in the
weights: LSTM ``i, o, f, c``; GRU ``z, r, h``; RNN one gate. ``sequence_lens`` (also given
at run time) masks each batch entry's steps past its length.

A sequence length known at conversion time is unrolled into one cell per step. One only
run time knows (a model exported with a dynamic sequence axis) becomes a ``loop`` (MNN's
``While``) whose body is one cell, reading step ``t`` of the projection with a gather; the
batch may be dynamic in both forms (states start as zeros shaped like the input's steps).
"""
import builtins

import numpy as np

import mnn.express as F
from mnn.express.ops.control_flow import Subgraph, loop

from .common import same_dtype_const
from .registry import onnx_op

# name -> (function(x, alpha, beta), number of alpha/beta values it consumes)
_ACTIVATIONS = {
    "sigmoid": (lambda x, a, b: F.sigmoid(x), 0),
    "tanh": (lambda x, a, b: F.tanh(x), 0),
    "relu": (lambda x, a, b: F.relu(x), 0),
    "leakyrelu": (lambda x, a, b: F.relu(x, a), 1),
    "thresholdedrelu": (lambda x, a, b: F.select(F.greater(x, same_dtype_const(a, x)), x,
                                                 F.zeros_like(x)), 1),
    "hardsigmoid": (lambda x, a, b: F.hardsigmoid(x, a, b), 2),
    "elu": (lambda x, a, b: F.elu(x, a), 1),
    "softsign": (lambda x, a, b: F.softsign(x), 0),
    "softplus": (lambda x, a, b: F.softplus(x), 0),
    "affine": (lambda x, a, b: F.add(F.multiply(x, same_dtype_const(a, x)),
                                     same_dtype_const(b, x)), 2),
    "scaledtanh": (lambda x, a, b: F.multiply(same_dtype_const(a, x),
                                              F.tanh(F.multiply(x, same_dtype_const(b, x)))),
                   2),
}
# Defaults of alpha/beta when the attribute lists do not give them (ONNX's defaults).
_DEFAULTS = {"leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0),
             "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0), "affine": (1.0, 0.0),
             "scaledtanh": (1.0, 1.0)}


def _activation_fns(ctx, names, alphas, betas, default, directions):
    names = list(names) if names else default * directions
    if len(names) != len(default) * directions:
        raise ctx.error(f"activations {names} need {len(default)} per direction")
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATIONS:
            raise ctx.error(f"activation {name!r} is not supported")
        fn, uses = _ACTIVATIONS[key]
        a, b = _DEFAULTS.get(key, (0.0, 0.0))
        if uses >= 1 and alphas:
            a = alphas.pop(0)
        if uses >= 2 and betas:
            b = betas.pop(0)
        fns.append(lambda x, fn=fn, a=a, b=b: fn(x, a, b))
    return fns


def _columns(x, start, size):
    """``x[..., start:start + size]`` (a static slice of the last axis)."""
    return x[..., builtins.slice(start, start + size)]


def _gates(x, count, hidden):
    """``count`` parts of ``hidden`` columns each of the last axis."""
    return [_columns(x, k * hidden, hidden) for k in range(count)]


def _direction_count(ctx, direction):
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ctx.error(f"direction must be forward, reverse or bidirectional, got "
                        f"{direction!r}")
    return 2 if direction == "bidirectional" else 1


def _prepare(ctx, X, layout):
    """``(X, seq)`` with X in (seq, batch, input) layout; ``seq`` an int when known at
    conversion time, else None (only the rank must be known)."""
    shape = ctx.partial_shape(X)
    if shape is None:
        raise ctx.static_needed("the rank of the input must be known at conversion time")
    if len(shape) != 3:
        raise ctx.error(f"the input must be 3-D, got shape {shape}")
    if layout:
        X = F.transpose(X, [1, 0, 2])
        shape = [shape[1], shape[0], shape[2]]
    return X, (shape[0] if shape[0] >= 0 else None)


def _hidden_size(ctx, hidden_size, R):
    if hidden_size:
        return int(hidden_size)
    shape = ctx.partial_shape(R)
    if shape is None or len(shape) != 3 or shape[2] < 0:
        raise ctx.error("hidden_size is not given and R's shape is not known")
    return shape[2]


def _lens_column(sequence_lens):
    """``sequence_lens`` as a (batch, 1) int64 Var (a dynamic batch stays dynamic)."""
    return F.reshape(F.cast(sequence_lens, np.int64), [-1, 1])


def _uses_lens(ctx, sequence_lens, seq):
    if sequence_lens is None:
        return False
    lens = ctx.value(sequence_lens)
    return not (lens is not None and seq is not None and np.all(np.asarray(lens) == seq))


def _first_step(proj):
    """Step 0 of a (seq, batch, width) tensor: (batch, width)."""
    return F.gather(proj, F.const(np.array(0, np.int64)), 0)


def _initial(state, d, hidden, proj):
    """Direction ``d``'s initial state (batch, hidden); zeros when not given, shaped from
    the projection so a dynamic batch stays dynamic."""
    if state is None:
        return F.zeros_like(_columns(_first_step(proj), 0, hidden))
    return F.reshape(state[d], [-1, hidden])


def _stack(values, axis):
    """``stack`` for Vars whose dynamic dims are known only as partial shapes (which
    stack would read): unsqueeze each, then concat."""
    return F.concat([F.unsqueeze(v, [axis]) for v in values], axis)


def _finish(ctx, ys, finals, layout):
    """Y (seq, dirs, batch, hidden) and the final states (dirs, batch, hidden), from each
    direction's (seq, batch, hidden) outputs."""
    y = _stack(ys, 1)
    outs = [y] + [_stack(list(states), 0) for states in finals]
    if layout:
        outs[0] = F.transpose(y, [2, 0, 1, 3])
        outs[1:] = [F.transpose(s, [1, 0, 2]) for s in outs[1:]]
    return outs


def _clip(x, clip):
    if clip is None:
        return x
    return F.minimum(F.maximum(x, same_dtype_const(-clip, x)), same_dtype_const(clip, x))


def _projections(X, W, B, d, gates, hidden):
    """X_t W^T + Wb + Rb for every step at once: (seq, batch, gates*hidden)."""
    w = W[d]
    proj = F.matmul(X, w, False, True)
    if B is not None:
        bias = F.add(_columns(B[d], 0, gates * hidden),
                     _columns(B[d], gates * hidden, gates * hidden))
        proj = F.add(proj, bias)
    return proj


def _masked_step(cell, xp, states, params, mask):
    """One cell step; past a batch entry's length (``mask`` false) its states are kept
    and its output is zero."""
    out, new = cell(xp, states, params)
    if mask is None:
        return out, new
    return (F.select(mask, out, F.zeros_like(out)),
            [F.select(mask, n, o) for n, o in zip(new, states)])


def _direction(ctx, cell, proj, states, params, seq, lens, reverse, tag):
    """Run one direction over a (seq, batch, width) projection.

    Returns ``(Y, final states)`` with Y (seq, batch, hidden) in sequence order."""
    if seq is not None:
        return _unrolled(cell, proj, states, params, seq, lens, reverse)
    return _looped(ctx, cell, proj, states, params, lens, reverse, tag)


def _unrolled(cell, proj, states, params, seq, lens, reverse):
    parts = F.split(proj, [seq], 0) if seq > 1 else [proj]
    x_steps = [F.squeeze(p, [0]) for p in parts]
    outs = [None] * seq
    for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
        mask = None if lens is None else F.less(F.const(np.array(t, np.int64)), lens)
        outs[t], states = _masked_step(cell, x_steps[t], states, params, mask)
    return _stack(outs, 0), states


def _placeholder_like(ctx, var):
    """A subgraph input standing for ``var`` (its dynamic dims left dynamic)."""
    return F.placeholder(list(ctx.partial_shape(var)), F.NCHW, var.dtype)


def _looped(ctx, cell, proj, states, params, lens, reverse, tag):
    """The recurrence as a ``loop`` over the run-time sequence length: the body takes the
    states, the projection, the lengths and the weights (passed through unchanged) and
    emits one step's output as the loop's scan output."""
    carried = list(states) + [proj] + ([lens] if lens is not None else []) + list(params)
    it = F.placeholder([], F.NCHW, np.int64)
    go = F.placeholder([], F.NCHW, np.bool_)
    phs = [_placeholder_like(ctx, v) for v in carried]
    n = len(states)
    state_ph, proj_ph = phs[:n], phs[n]
    lens_ph = phs[n + 1] if lens is not None else None
    param_ph = phs[n + 1 + (lens is not None):]
    t = it
    if reverse:
        length = F.cast(F.gather(F.shape(proj_ph), F.const(np.array(0, np.int64)), 0),
                        np.int64)
        t = F.subtract(F.subtract(length, F.const(np.array(1, np.int64))), it)
    mask = None if lens_ph is None else F.less(t, lens_ph)
    out, new = _masked_step(cell, F.gather(proj_ph, t, 0), state_ph, param_ph, mask)
    graph = Subgraph([it, go] + phs, [go] + new + phs[n:] + [out], name=f"{ctx.name}_{tag}")
    steps = F.cast(F.gather(F.shape(proj), F.const(np.array(0, np.int64)), 0), np.int64)
    results = loop(steps, F.const(np.array(True)), graph, carried)
    # The scan output's shape is only known once the loop ran: give it its rank and
    # hidden size back from the projection's run-time (seq, batch) dims.
    hidden = ctx.partial_shape(states[0])[-1]
    dims = F.cast(F.onnx_slice(F.shape(proj), F.const(np.array([0], np.int64)),
                               F.const(np.array([2], np.int64))), np.int64)
    y = F.onnx_reshape(results[-1], F.concat([dims, F.const(np.array([hidden], np.int64))],
                                             0))
    if reverse:
        big = np.iinfo(np.int64).max
        y = F.onnx_slice(y, F.const(np.array([-1], np.int64)),
                         F.const(np.array([-big], np.int64)),
                         F.const(np.array([0], np.int64)), F.const(np.array([-1], np.int64)))
    return y, [F.reshape(s, [-1, hidden]) for s in results[:n]]


def _lstm_cell(fns, clip, input_forget, hidden):
    f_gate, g_act, h_act = fns

    def cell(xp, states, params):
        h, c = states
        r_t, peep = params[0], (params[1] if len(params) > 1 else None)
        gi, go, gf, gc = _gates(F.add(xp, F.matmul(h, r_t)), 4, hidden)
        if peep is not None:
            gi = F.add(gi, F.multiply(_columns(peep, 0, hidden), c))
            gf = F.add(gf, F.multiply(_columns(peep, 2 * hidden, hidden), c))
        i = f_gate(_clip(gi, clip))
        f = F.subtract(same_dtype_const(1, i), i) if input_forget else \
            f_gate(_clip(gf, clip))
        c_new = F.add(F.multiply(f, c), F.multiply(i, g_act(_clip(gc, clip))))
        if peep is not None:
            go = F.add(go, F.multiply(_columns(peep, hidden, hidden), c_new))
        h_new = F.multiply(f_gate(_clip(go, clip)), h_act(c_new))
        return h_new, [h_new, c_new]
    return cell


@onnx_op("LSTM", since=7)
def lstm(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None,
         P=None, activation_alpha=None, activation_beta=None, activations=None, clip=None,
         direction="forward", hidden_size=None, input_forget=0, layout=0):
    dirs = _direction_count(ctx, direction)
    X, seq = _prepare(ctx, X, layout)
    lens = _lens_column(sequence_lens) if _uses_lens(ctx, sequence_lens, seq) else None
    hidden = _hidden_size(ctx, hidden_size, R)
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta,
                          ["Sigmoid", "Tanh", "Tanh"], dirs)
    ys, finals_h, finals_c = [], [], []
    for d in range(dirs):
        cell = _lstm_cell(fns[3 * d:3 * d + 3], clip, input_forget, hidden)
        proj = _projections(X, W, B, d, 4, hidden)
        params = [F.transpose(R[d], [1, 0])] + ([P[d]] if P is not None else [])
        states = [_initial(initial_h, d, hidden, proj), _initial(initial_c, d, hidden, proj)]
        reverse = direction == "reverse" or d == 1
        y, (h, c) = _direction(ctx, cell, proj, states, params, seq, lens, reverse, f"d{d}")
        ys.append(y)
        finals_h.append(h)
        finals_c.append(c)
    return _finish(ctx, ys, [finals_h, finals_c], layout)


def _gru_cell(fns, clip, hidden, linear_before_reset):
    f_gate, g_act = fns

    def cell(xp, states, params):
        (h,), (rz_t, rh_t, rb) = states, params
        xp_zr, xp_h = _columns(xp, 0, 2 * hidden), _columns(xp, 2 * hidden, hidden)
        zr = F.add(F.add(xp_zr, F.matmul(h, rz_t)), _columns(rb, 0, 2 * hidden))
        z, rr = (f_gate(g) for g in _gates(_clip(zr, clip), 2, hidden))
        rbh = _columns(rb, 2 * hidden, hidden)
        if linear_before_reset:
            rec = F.multiply(rr, F.add(F.matmul(h, rh_t), rbh))
        else:
            rec = F.add(F.matmul(F.multiply(rr, h), rh_t), rbh)
        cand = g_act(_clip(F.add(xp_h, rec), clip))
        h_new = F.add(F.multiply(F.subtract(same_dtype_const(1, z), z), cand),
                      F.multiply(z, h))
        return h_new, [h_new]
    return cell


@onnx_op("GRU", since=7)
def gru(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None,
        activation_alpha=None, activation_beta=None, activations=None, clip=None,
        direction="forward", hidden_size=None, layout=0, linear_before_reset=0):
    dirs = _direction_count(ctx, direction)
    X, seq = _prepare(ctx, X, layout)
    lens = _lens_column(sequence_lens) if _uses_lens(ctx, sequence_lens, seq) else None
    hidden = _hidden_size(ctx, hidden_size, R)
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta,
                          ["Sigmoid", "Tanh"], dirs)
    ys, finals = [], []
    for d in range(dirs):
        cell = _gru_cell(fns[2 * d:2 * d + 2], clip, hidden, linear_before_reset)
        r = R[d]
        rz_t = F.transpose(r[builtins.slice(0, 2 * hidden)], [1, 0])
        rh_t = F.transpose(r[builtins.slice(2 * hidden, 3 * hidden)], [1, 0])
        if B is not None:
            wb, rb = _columns(B[d], 0, 3 * hidden), _columns(B[d], 3 * hidden, 3 * hidden)
        else:
            wb = rb = F.const(np.zeros(3 * hidden, dtype=X.dtype))
        proj = F.add(F.matmul(X, W[d], False, True), wb)  # (seq, batch, 3h)
        states = [_initial(initial_h, d, hidden, proj)]
        reverse = direction == "reverse" or d == 1
        y, (h,) = _direction(ctx, cell, proj, states, [rz_t, rh_t, rb], seq, lens, reverse,
                             f"d{d}")
        ys.append(y)
        finals.append(h)
    return _finish(ctx, ys, [finals], layout)


@onnx_op("RNN", since=7)
def rnn(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None,
        activation_alpha=None, activation_beta=None, activations=None, clip=None,
        direction="forward", hidden_size=None, layout=0):
    dirs = _direction_count(ctx, direction)
    X, seq = _prepare(ctx, X, layout)
    lens = _lens_column(sequence_lens) if _uses_lens(ctx, sequence_lens, seq) else None
    hidden = _hidden_size(ctx, hidden_size, R)
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta, ["Tanh"],
                          dirs)
    ys, finals = [], []
    for d in range(dirs):
        def cell(xp, states, params, act=fns[d]):
            h_new = act(_clip(F.add(xp, F.matmul(states[0], params[0])), clip))
            return h_new, [h_new]
        proj = _projections(X, W, B, d, 1, hidden)
        states = [_initial(initial_h, d, hidden, proj)]
        reverse = direction == "reverse" or d == 1
        y, (h,) = _direction(ctx, cell, proj, states, [F.transpose(R[d], [1, 0])], seq,
                             lens, reverse, f"d{d}")
        ys.append(y)
        finals.append(h)
    return _finish(ctx, ys, [finals], layout)
