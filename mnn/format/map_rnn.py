"""File mapping of MNN's ``RNN`` op (ONNX's plain RNN, as the MNN converter keeps it).

MNN facts: the op takes ``[X, W, R, B]`` and optionally ``initial_h`` (ONNX's
``sequence_lens`` is dropped by the converter), with X ``[seq, batch, input]``, W
``[directions, hidden, input]``, R ``[directions, hidden, hidden]`` and B ``[directions,
hidden]`` (ONNX's input and recurrent biases, which the converter adds up). Its parameter table is an ``LSTM`` table whose
``outputCount`` is the hidden size. Outputs: Y ``[seq, directions, batch, hidden]`` and Y_h
``[directions, batch, hidden]``; the second direction runs from the last step to the first.
The activation is always tanh: the file has no field for ONNX's ``activations`` and MNN's
engine computes tanh whatever the source model asked for.

The reader unrolls the recurrence over the sequence length, which must be known when the
file is read, with the express ops (matmul, add, tanh, stack).
"""

from ..express.ops import elementwise as ew
from ..express.ops import linalg, movement
from .mapping import decoder

__all__ = []


def _static_shape(ctx, op, var, what, rank):
    meta = var.expr.metas[var.index]
    if meta.shape is None:
        ctx.fail(op, f"the shape of {what} must be known when the file is read")
    if len(meta.shape) != rank:
        ctx.fail(op, f"{what} must have rank {rank}, has shape {list(meta.shape)}")
    return tuple(meta.shape)


@decoder("RNN")
def _decode_rnn(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 4, 5)
    x, w, r, b = inputs[:4]
    seq, batch, size = _static_shape(ctx, op, x, "X", 3)
    dirs, hidden, w_in = _static_shape(ctx, op, w, "W", 3)
    if dirs not in (1, 2) or w_in != size:
        ctx.fail(op, f"W of shape {[dirs, hidden, w_in]} does not fit X of shape "
                     f"{[seq, batch, size]} (1 or 2 directions)")
    if _static_shape(ctx, op, r, "R", 3) != (dirs, hidden, hidden):
        ctx.fail(op, f"R must have shape {[dirs, hidden, hidden]}")
    if _static_shape(ctx, op, b, "B", 2) != (dirs, hidden):
        ctx.fail(op, f"B must have shape {[dirs, hidden]}")
    count = int(ctx.param(op, "LSTM")["outputCount"])
    if count != hidden:
        ctx.fail(op, f"outputCount {count} differs from the weights' hidden size {hidden}")
    if seq < 1:
        ctx.fail(op, "the sequence is empty")
    h0 = None
    if len(inputs) == 5:
        if _static_shape(ctx, op, inputs[4], "initial_h", 3) != (dirs, batch, hidden):
            ctx.fail(op, f"initial_h must have shape {[dirs, batch, hidden]}")
        h0 = inputs[4]
    steps = movement.unstack(x, 0)
    per_dir, finals = [], []
    for d in range(dirs):
        w_d, r_d, bias = w[d], r[d], b[d]
        h = h0[d] if h0 is not None else None
        outs = [None] * seq
        order = range(seq) if d == 0 else range(seq - 1, -1, -1)
        for t in order:
            z = ew.add(linalg.matmul(steps[t], w_d, transposeB=True), bias)
            if h is not None:
                z = ew.add(z, linalg.matmul(h, r_d, transposeB=True))
            h = ew.tanh(z)
            outs[t] = h
        per_dir.append(movement.stack(outs, 0))
        finals.append(h)
    y = movement.stack(per_dir, 1)
    y_h = movement.stack(finals, 0)
    return [y, y_h]
