"""Values the frontend passes between handlers besides Vars: sequences and optionals.

A sequence whose length is fixed at conversion time is a :class:`Sequence` (a list of
Vars); one whose length depends on run-time data is a :class:`RuntimeSequence` (the packed
``data``/``index`` tensors of ``mnn.express.ops.onnx_sequence``). An optional is its value
when known to be present, :data:`EMPTY` when known to be empty, and a
:class:`RuntimeOptional` when only run time decides (an ``If`` returning one in one branch
and none in the other).
"""
import numpy as np

import mnn.express as F

__all__ = ["EMPTY", "RuntimeOptional", "RuntimeSequence", "Sequence", "to_runtime"]


class Sequence(list):
    """An ONNX sequence whose length is fixed at conversion time: a list of Vars. Handlers
    return one as a single output (a plain list means one value per node output).
    ``elem_dtype`` is the element type when the sequence is empty (None if unknown)."""

    def __init__(self, items=(), elem_dtype=None):
        super().__init__(items)
        self.elem_dtype = None if elem_dtype is None else np.dtype(elem_dtype)

    @property
    def dtype(self):
        """numpy dtype of the elements (None for an empty sequence of unknown type)."""
        if self:
            return self[0].dtype
        return self.elem_dtype


class RuntimeSequence:
    """A sequence known only at run time: packed ``data`` (1-d) and ``index`` (int64)."""

    def __init__(self, data, index):
        self.data = data
        self.index = index

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def vars(self):
        return [self.data, self.index]

    def __repr__(self):
        return f"RuntimeSequence({self.data.dtype})"


class RuntimeOptional:
    """An optional whose presence is known only at run time: ``present`` (bool scalar
    Var) and ``value`` (a Var or a RuntimeSequence; its content is meaningless when the
    optional is empty)."""

    def __init__(self, present, value):
        self.present = present
        self.value = value

    @property
    def vars(self):
        inner = self.value.vars if isinstance(self.value, RuntimeSequence) else [self.value]
        return [self.present] + inner

    def __repr__(self):
        return f"RuntimeOptional({self.value!r})"


class _Empty:
    """The value of an empty Optional."""

    def __repr__(self):
        return "<empty optional>"


EMPTY = _Empty()


def to_runtime(seq, what="a sequence"):
    """A :class:`RuntimeSequence` for a Sequence (packed) or a RuntimeSequence."""
    if isinstance(seq, RuntimeSequence):
        return seq
    if not isinstance(seq, list):
        raise TypeError(f"{what} is not a sequence")
    dtype = seq.dtype if isinstance(seq, Sequence) else (seq[0].dtype if seq else None)
    if dtype is None:
        raise TypeError(f"{what} is empty and its element type is unknown")
    data, index = F.sequence_pack(list(seq), dtype)
    return RuntimeSequence(data, index)
