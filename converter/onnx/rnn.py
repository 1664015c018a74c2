"""ONNX RNN, GRU and LSTM, unrolled over the (static) sequence length into express ops.

Per direction the input projection of every step is one matmul; each step then adds the
recurrent projection and applies the gate equations of the ONNX spec. Gate order in the
weights: LSTM ``i, o, f, c``; GRU ``z, r, h``; RNN one gate. ``sequence_lens`` (also given
at run time) masks each batch entry's steps past its length.
"""
import builtins

import numpy as np

import mnn.express as F

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


def _gates(x, count):
    """``count`` equal parts of the last axis (one split op)."""
    return F.split(x, [count], -1) if count > 1 else [x]


def _steps(proj, seq):
    """The per-step (batch, width) slices of a (seq, batch, width) tensor."""
    shape = proj.shape
    parts = F.split(proj, [seq], 0) if seq > 1 else [proj]
    return [F.reshape(p, shape[1:]) for p in parts]


def _direction_count(ctx, direction):
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ctx.error(f"direction must be forward, reverse or bidirectional, got "
                        f"{direction!r}")
    return 2 if direction == "bidirectional" else 1


def _prepare(ctx, X, sequence_lens, layout):
    shape = ctx.known_shape(X)
    if shape is None or len(shape) != 3:
        raise ctx.error("the input must be 3-D with a shape known at conversion time")
    if layout:
        X = F.transpose(X, [1, 0, 2])
        shape = [shape[1], shape[0], shape[2]]
    return X, shape


def _step_masks(ctx, sequence_lens, seq, batch):
    """Per step t, a (batch, 1) bool Var ``t < sequence_lens`` (None: every step counts).

    A batch entry past its length keeps its state and outputs zeros; in the reverse
    direction the same rule makes each entry start from its own last element (ONNX)."""
    if sequence_lens is None:
        return None
    lens = ctx.value(sequence_lens)
    if lens is not None and np.all(np.asarray(lens) == seq):
        return None
    col = F.reshape(F.cast(sequence_lens, np.int64), [batch, 1])
    return [F.less(F.const(np.array(t, np.int64)), col) for t in range(seq)]


def _masked(masks, t, new, old):
    return new if masks is None else F.select(masks[t], new, old)


def _output(masks, t, h):
    return h if masks is None else F.select(masks[t], h, F.zeros_like(h))


def _initial(state, d, batch, hidden, like):
    if state is None:
        return F.const(np.zeros((batch, hidden), dtype=like.dtype))
    return F.reshape(state[d], [batch, hidden])


def _finish(ctx, per_dir_steps, finals, layout):
    """Y (seq, dirs, batch, hidden) and the final states (dirs, batch, hidden)."""
    ys = [F.stack(steps, 0) for steps in per_dir_steps]  # each (seq, batch, hidden)
    y = F.stack(ys, 1)
    outs = [y] + [F.stack(list(states), 0) for states in finals]
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


@onnx_op("LSTM", since=7)
def lstm(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None,
         P=None, activation_alpha=None, activation_beta=None, activations=None, clip=None,
         direction="forward", hidden_size=None, input_forget=0, layout=0):
    dirs = _direction_count(ctx, direction)
    X, (seq, batch, _) = _prepare(ctx, X, sequence_lens, layout)
    masks = _step_masks(ctx, sequence_lens, seq, batch)
    hidden = hidden_size or ctx.known_shape(R)[2]
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta,
                          ["Sigmoid", "Tanh", "Tanh"], dirs)
    steps_all, finals_h, finals_c = [], [], []
    for d in range(dirs):
        f_gate, g_act, h_act = fns[3 * d:3 * d + 3]
        proj = _projections(X, W, B, d, 4, hidden)
        r_t = F.transpose(R[d], [1, 0])
        h = _initial(initial_h, d, batch, hidden, X)
        c = _initial(initial_c, d, batch, hidden, X)
        peep = P[d] if P is not None else None
        reverse = direction == "reverse" or d == 1
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        steps = [None] * seq
        x_steps = _steps(proj, seq)
        for t in order:
            gates = F.add(x_steps[t], F.matmul(h, r_t))
            gi, go, gf, gc = _gates(gates, 4)
            if peep is not None:
                gi = F.add(gi, F.multiply(_columns(peep, 0, hidden), c))
                gf = F.add(gf, F.multiply(_columns(peep, 2 * hidden, hidden), c))
            i = f_gate(_clip(gi, clip))
            f = F.subtract(same_dtype_const(1, i), i) if input_forget else \
                f_gate(_clip(gf, clip))
            cand = g_act(_clip(gc, clip))
            c_new = F.add(F.multiply(f, c), F.multiply(i, cand))
            if peep is not None:
                go = F.add(go, F.multiply(_columns(peep, hidden, hidden), c_new))
            o = f_gate(_clip(go, clip))
            h_new = F.multiply(o, h_act(c_new))
            steps[t] = _output(masks, t, h_new)
            h, c = _masked(masks, t, h_new, h), _masked(masks, t, c_new, c)
        steps_all.append(steps)
        finals_h.append(h)
        finals_c.append(c)
    return _finish(ctx, steps_all, [finals_h, finals_c], layout)


@onnx_op("GRU", since=7)
def gru(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None,
        activation_alpha=None, activation_beta=None, activations=None, clip=None,
        direction="forward", hidden_size=None, layout=0, linear_before_reset=0):
    dirs = _direction_count(ctx, direction)
    X, (seq, batch, _) = _prepare(ctx, X, sequence_lens, layout)
    masks = _step_masks(ctx, sequence_lens, seq, batch)
    hidden = hidden_size or ctx.known_shape(R)[2]
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta,
                          ["Sigmoid", "Tanh"], dirs)
    steps_all, finals = [], []
    for d in range(dirs):
        f_gate, g_act = fns[2 * d:2 * d + 2]
        w = W[d]
        x_proj = F.matmul(X, w, False, True)  # (seq, batch, 3h)
        r = R[d]
        rz_t = F.transpose(r[builtins.slice(0, 2 * hidden)], [1, 0])
        rh_t = F.transpose(r[builtins.slice(2 * hidden, 3 * hidden)], [1, 0])
        if B is not None:
            wb, rb = _columns(B[d], 0, 3 * hidden), _columns(B[d], 3 * hidden, 3 * hidden)
        else:
            wb = rb = F.const(np.zeros(3 * hidden, dtype=X.dtype))
        h = _initial(initial_h, d, batch, hidden, X)
        reverse = direction == "reverse" or d == 1
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        steps = [None] * seq
        x_steps = _steps(F.add(x_proj, wb), seq)
        for t in order:
            xp_zr, xp_h = F.split(x_steps[t], [2 * hidden, hidden], -1)
            zr = F.add(F.add(xp_zr, F.matmul(h, rz_t)), _columns(rb, 0, 2 * hidden))
            z, rr = (f_gate(g) for g in _gates(_clip(zr, clip), 2))
            rbh = _columns(rb, 2 * hidden, hidden)
            if linear_before_reset:
                rec = F.multiply(rr, F.add(F.matmul(h, rh_t), rbh))
            else:
                rec = F.add(F.matmul(F.multiply(rr, h), rh_t), rbh)
            cand = g_act(_clip(F.add(xp_h, rec), clip))
            h_new = F.add(F.multiply(F.subtract(same_dtype_const(1, z), z), cand),
                          F.multiply(z, h))
            steps[t] = _output(masks, t, h_new)
            h = _masked(masks, t, h_new, h)
        steps_all.append(steps)
        finals.append(h)
    return _finish(ctx, steps_all, [finals], layout)


@onnx_op("RNN", since=7)
def rnn(ctx, X, W, R, B=None, sequence_lens=None, initial_h=None,
        activation_alpha=None, activation_beta=None, activations=None, clip=None,
        direction="forward", hidden_size=None, layout=0):
    dirs = _direction_count(ctx, direction)
    X, (seq, batch, _) = _prepare(ctx, X, sequence_lens, layout)
    masks = _step_masks(ctx, sequence_lens, seq, batch)
    hidden = hidden_size or ctx.known_shape(R)[2]
    fns = _activation_fns(ctx, activations, activation_alpha, activation_beta, ["Tanh"],
                          dirs)
    steps_all, finals = [], []
    for d in range(dirs):
        proj = _projections(X, W, B, d, 1, hidden)
        r_t = F.transpose(R[d], [1, 0])
        h = _initial(initial_h, d, batch, hidden, X)
        reverse = direction == "reverse" or d == 1
        order = range(seq - 1, -1, -1) if reverse else range(seq)
        steps = [None] * seq
        x_steps = _steps(proj, seq)
        for t in order:
            h_new = fns[d](_clip(F.add(x_steps[t], F.matmul(h, r_t)), clip))
            steps[t] = _output(masks, t, h_new)
            h = _masked(masks, t, h_new, h)
        steps_all.append(steps)
        finals.append(h)
    return _finish(ctx, steps_all, [finals], layout)
