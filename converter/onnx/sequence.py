"""ONNX sequence and optional handlers, with sequences held as Python lists of Vars.

A sequence whose length is known at conversion time (built by SequenceConstruct,
SplitToSequence, SequenceInsert ... with constant positions) is a list of Vars in the
converter; each op on it picks or rearranges Vars, so nothing sequence-shaped reaches the
express graph. Sequences whose length depends on run-time data (carried through a Loop,
or fed as graph inputs) are not supported. An Optional is its value, or ``None`` when
empty.
"""
import numpy as np

import mnn.express as F

from .common import ints
from .registry import onnx_op
from .values import EMPTY, Sequence


def _sequence(ctx, seq, what="input_sequence"):
    if not isinstance(seq, list):
        raise ctx.error(f"{what} must be a sequence")
    return seq


def _position(ctx, position, length, insert=False):
    """A constant position (negative from the end) checked against ``length``."""
    value = ctx.value(position)
    if value is None:
        raise ctx.error("position must be a constant (sequences are fixed at conversion "
                        "time)")
    pos = int(np.asarray(value).reshape(-1)[0])
    hi = length if insert else length - 1
    if not -length <= pos <= hi:
        raise ctx.error(f"position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


@onnx_op("SequenceEmpty", since=11)
def sequence_empty(ctx, dtype=None):
    return Sequence()


@onnx_op("SequenceConstruct", since=11)
def sequence_construct(ctx, *inputs):
    return Sequence(inputs)


@onnx_op("SequenceLength", since=11)
def sequence_length(ctx, input_sequence):
    return F.const(np.array(len(_sequence(ctx, input_sequence)), np.int64))


@onnx_op("SequenceAt", since=11)
def sequence_at(ctx, input_sequence, position):
    seq = _sequence(ctx, input_sequence)
    return seq[_position(ctx, position, len(seq))]


@onnx_op("SequenceInsert", since=11)
def sequence_insert(ctx, input_sequence, tensor, position=None):
    seq = list(_sequence(ctx, input_sequence))
    pos = len(seq) if position is None else _position(ctx, position, len(seq), insert=True)
    seq.insert(pos, tensor)
    return Sequence(seq)


@onnx_op("SequenceErase", since=11)
def sequence_erase(ctx, input_sequence, position=None):
    seq = list(_sequence(ctx, input_sequence))
    if not seq:
        raise ctx.error("cannot erase from an empty sequence")
    pos = len(seq) - 1 if position is None else _position(ctx, position, len(seq))
    del seq[pos]
    return Sequence(seq)


@onnx_op("SplitToSequence", since=11)
def split_to_sequence(ctx, input, split=None, axis=0, keepdims=1):
    shape = ctx.known_shape(input)
    if shape is None:
        raise ctx.static_needed("the shape of the input must be known at conversion time")
    axis = axis % len(shape)
    dim = shape[axis]
    if split is None:
        parts = [1] * dim
        squeeze = not keepdims
    else:
        value = ctx.value(split)
        if value is None:
            raise ctx.error("split must be a constant (a sequence's length is fixed at "
                            "conversion time)")
        sizes = ints(value)
        squeeze = False
        if len(sizes) == 1 and np.ndim(ctx.value(split)) == 0:
            step = sizes[0]
            parts = [step] * (dim // step) + ([dim % step] if dim % step else [])
        else:
            parts = sizes
    if sum(parts) != dim:
        raise ctx.error(f"split sizes {parts} do not add up to {dim}")
    out, start = [], 0
    for size in parts:
        key = (slice(None),) * axis + (slice(start, start + size),)
        piece = input[key]
        out.append(F.squeeze(piece, [axis]) if squeeze else piece)
        start += size
    return Sequence(out)


@onnx_op("ConcatFromSequence", since=11)
def concat_from_sequence(ctx, input_sequence, axis=None, new_axis=0):
    seq = _sequence(ctx, input_sequence)
    if axis is None:
        raise ctx.error("attribute 'axis' is required")
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    if new_axis:
        return F.stack(seq, axis)
    return F.concat(seq, axis)


@onnx_op("Optional", since=15)
def optional(ctx, input=None, type=None):
    return EMPTY if input is None else (input if isinstance(input, Sequence) else [input])


@onnx_op("OptionalHasElement", since=15)
def optional_has_element(ctx, input=None):
    return F.const(np.array(input is not None and input is not EMPTY))


@onnx_op("OptionalGetElement", since=15)
def optional_get_element(ctx, input=None):
    if input is None or input is EMPTY:
        raise ctx.error("the optional is empty")
    return input if isinstance(input, Sequence) else [input]


@onnx_op("SequenceMap", since=17)
def sequence_map(ctx, input_sequence, *additional_inputs, body=None):
    """The body runs once per element (inlined: the length is fixed at conversion)."""
    seq = _sequence(ctx, input_sequence)
    if body is None:
        raise ctx.error("attribute 'body' is required")
    n_out = len(body.output)
    results = [Sequence() for _ in range(n_out)]
    for i in range(len(seq)):
        args = [seq[i]]
        for extra in additional_inputs:
            args.append(extra[i] if isinstance(extra, list) else extra)
        _, outs = ctx.subgraph(body, args, inline=True)
        for k, out in enumerate(outs):
            results[k].append(out)
    return results
