"""ONNX sequence and optional handlers.

A sequence whose length is known at conversion time (built by SequenceConstruct,
SplitToSequence, SequenceInsert ... with constant positions) is a list of Vars in the
converter; each op on it picks or rearranges Vars, so nothing sequence-shaped reaches the
express graph. A sequence whose length or positions depend on run-time data (carried
through a Loop that is not unrolled, picked by an If, indexed by a graph input) becomes a
:class:`~converter.onnx.values.RuntimeSequence`: the packed tensors of the
``sequence_*`` express ops. An Optional is its value, ``EMPTY`` when empty, or a
:class:`~converter.onnx.values.RuntimeOptional` when only run time decides.
"""
import numpy as np

import mnn.express as F

from .common import ints, onnx_type
from .registry import onnx_op
from .values import EMPTY, RuntimeOptional, RuntimeSequence, Sequence, to_runtime


def _sequence(ctx, seq, what="input_sequence"):
    if not isinstance(seq, (list, RuntimeSequence)):
        raise ctx.error(f"{what} must be a sequence")
    return seq


def _runtime(ctx, seq):
    try:
        return to_runtime(seq)
    except TypeError as exc:
        raise ctx.error(str(exc)) from None


def _position(ctx, position, length, insert=False):
    """A constant position (negative from the end) checked against ``length``; None when
    the position is only known at run time."""
    value = ctx.value(position)
    if value is None:
        return None
    pos = int(np.asarray(value).reshape(-1)[0])
    hi = length if insert else length - 1
    if not -length <= pos <= hi:
        raise ctx.error(f"position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


@onnx_op("SequenceEmpty", since=11)
def sequence_empty(ctx, dtype=1):
    return Sequence(elem_dtype=onnx_type(ctx, dtype))


@onnx_op("SequenceConstruct", since=11)
def sequence_construct(ctx, *inputs):
    dtypes = {x.dtype for x in inputs}
    if len(dtypes) > 1:
        raise ctx.error(f"the tensors have different dtypes {sorted(map(str, dtypes))}")
    return Sequence(inputs)


@onnx_op("SequenceLength", since=11)
def sequence_length(ctx, input_sequence):
    seq = _sequence(ctx, input_sequence)
    if isinstance(seq, RuntimeSequence):
        return F.sequence_length(seq.index)
    return F.const(np.array(len(seq), np.int64))


@onnx_op("SequenceAt", since=11)
def sequence_at(ctx, input_sequence, position):
    seq = _sequence(ctx, input_sequence)
    if isinstance(seq, list):
        pos = _position(ctx, position, len(seq))
        if pos is not None:
            return seq[pos]
    seq = _runtime(ctx, seq)
    return F.sequence_at(seq.data, seq.index, position)


@onnx_op("SequenceInsert", since=11)
def sequence_insert(ctx, input_sequence, tensor, position=None):
    seq = _sequence(ctx, input_sequence)
    held = getattr(seq, "dtype", None)
    if held is not None and tensor.dtype != held:
        raise ctx.error(f"the tensor is {tensor.dtype}, the sequence holds {held}")
    if isinstance(seq, list):
        pos = len(seq) if position is None else _position(ctx, position, len(seq),
                                                          insert=True)
        if pos is not None:
            out = Sequence(seq, elem_dtype=tensor.dtype)
            out.insert(pos, tensor)
            return out
    if isinstance(seq, list) and not seq and held is None:
        seq = Sequence(elem_dtype=tensor.dtype)
    seq = _runtime(ctx, seq)
    return RuntimeSequence(*F.sequence_insert(seq.data, seq.index, tensor, position))


@onnx_op("SequenceErase", since=11)
def sequence_erase(ctx, input_sequence, position=None):
    seq = _sequence(ctx, input_sequence)
    if isinstance(seq, list):
        if not seq:
            raise ctx.error("cannot erase from an empty sequence")
        pos = len(seq) - 1 if position is None else _position(ctx, position, len(seq))
        if pos is not None:
            out = Sequence(seq, elem_dtype=getattr(seq, "dtype", None))
            del out[pos]
            return out
    seq = _runtime(ctx, seq)
    return RuntimeSequence(*F.sequence_erase(seq.data, seq.index, position))


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
            # The number of pieces depends on run-time values: a packed sequence.
            return RuntimeSequence(*F.sequence_split(input, split, axis, bool(keepdims)))
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
    return Sequence(out, elem_dtype=input.dtype)


@onnx_op("ConcatFromSequence", since=11)
def concat_from_sequence(ctx, input_sequence, axis=None, new_axis=0):
    seq = _sequence(ctx, input_sequence)
    if axis is None:
        raise ctx.error("attribute 'axis' is required")
    if isinstance(seq, RuntimeSequence):
        return F.sequence_concat(seq.data, seq.index, axis, bool(new_axis))
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    if new_axis:
        return F.stack(seq, axis)
    return F.concat(seq, axis)


@onnx_op("Optional", since=15)
def optional(ctx, input=None, type=None):
    if input is None:
        return EMPTY
    # A list would read as one value per output: wrap a sequence.
    return [input] if isinstance(input, list) else input


@onnx_op("OptionalHasElement", since=15)
def optional_has_element(ctx, input=None):
    if isinstance(input, RuntimeOptional):
        return input.present
    return F.const(np.array(input is not None and input is not EMPTY))


@onnx_op("OptionalGetElement", since=15)
def optional_get_element(ctx, input=None):
    if input is None or input is EMPTY:
        raise ctx.error("the optional is empty")
    if isinstance(input, RuntimeOptional):
        got = F.optional_get(input.present, input.vars[1:])
        value = RuntimeSequence(*got) if isinstance(input.value, RuntimeSequence) \
            else got[0]
        return value
    return [input] if isinstance(input, list) else input


@onnx_op("SequenceMap", since=17)
def sequence_map(ctx, input_sequence, *additional_inputs, body=None):
    """The body runs once per element (inlined: the length is fixed at conversion)."""
    seq = _sequence(ctx, input_sequence)
    if body is None:
        raise ctx.error("attribute 'body' is required")
    if isinstance(seq, RuntimeSequence) or any(isinstance(e, RuntimeSequence)
                                               for e in additional_inputs):
        raise ctx.error("a sequence whose length is known only at run time cannot be "
                        "mapped (the body is inlined per element)")
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
