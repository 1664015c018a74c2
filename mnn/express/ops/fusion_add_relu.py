"""Evaluation-time fusion of a residual ``relu(add(a, b))`` (ResNet's block ending) into
one pass, into the convolution's own output when ``a`` is one.

``relu(conv2d(...) + skip)``: where the convolution runs by Winograd or the direct kernel
(float32, no activation of its own), its kernel adds the skip and applies the relu as it
stores each output tile (:func:`.nn_conv.conv2d_add_clamp`): the output is written once.
Otherwise the convolution computes as usual, then one threaded pass of
:func:`mnn._cython.elementwise.add_relu` adds the skip and applies the relu in place in
its fresh output, which becomes the relu's value. Run op by op, the add writes a new array
and the relu another, each in a single-threaded numpy pass. Without a convolution below,
the add and relu still run as one pass into one new array.

Fused only when nothing else can read the intermediate values (their Vars are referenced
only by the next op, as :mod:`.fusion` checks for a product), the relu has slope 0, and
the add does not broadcast; float32 and float64. The skipped ops keep no values; should
anything read them later they are computed then like any released op. Values are the
ops' own: the same additions and comparisons.
"""
import sys

import numpy as np

from ..._cython import elementwise as _kernels
from ..runtime import get_thread_number
from . import nn_conv

__all__ = ["AddRelu", "add_relu_into", "owns_its_memory", "plan"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements one thread is faster than waking the others.
_PARALLEL_MIN = 1 << 15
# References to an intermediate Var held only by the graph: its one consumer's inputs
# list, the caller's local variable, this function's argument and getrefcount's own.
_GRAPH_ONLY_REFS = 4


def _graph_only(v):
    return sys.getrefcount(v) == _GRAPH_ONLY_REFS


class AddRelu:
    """``relu`` of ``add`` (and of the ``conv`` feeding one side of it, or None)."""

    __slots__ = ("add", "conv", "members", "relu")

    def __init__(self, conv, add, relu):
        self.conv, self.add, self.relu = conv, add, relu
        self.members = [conv, add] if conv is not None else [add]

    def runner(self, position):
        """``run(order) -> bool``: :meth:`compute` for a later evaluation of the same
        order, from positions in it (keeps no Exprs)."""
        at = [None if e is None else position[id(e)] for e in (self.conv, self.add,
                                                                 self.relu)]

        def run(order):
            c, a, r = [None if i is None else order[i] for i in at]
            return AddRelu(c, a, r).compute()
        return run

    def compute(self):
        """Compute ``relu`` in one pass; False when the arrays do not allow it (then the
        caller computes the ops one by one)."""
        if self.conv is not None:
            skip_var = next(v for v in self.add.inputs if v.expr is not self.conv)
            arrays = [_value(v) for v in self.conv.inputs]
            skip = _value(skip_var)
            if skip is None or any(a is None for a in arrays):
                return False
            if self.conv.op.name == "conv2d" and isinstance(skip, np.ndarray) and \
                    all(isinstance(a, np.ndarray) for a in arrays):
                out = nn_conv.conv2d_add_clamp(arrays, skip, 0.0, np.inf, **self.conv.attrs)
                if out is not None:
                    self.relu.store_result(out, self.members)
                    return True
            out = self.conv.call_op(arrays)
            if not owns_its_memory(out):
                out = np.array(out, order="C")  # only the conv's own array is written
            first = out
        else:
            first, skip = (_value(v) for v in self.add.inputs)
            if first is None or skip is None:
                return False
            out = None
        # The arrays, not the metas: after a resize the metas are inferred again only
        # when the result is stored.
        if first.shape != skip.shape or first.dtype != skip.dtype or \
                first.dtype not in _FLOATS:
            return False  # broadcasting or a cast: op by op
        if out is None:
            out = np.empty(first.shape, first.dtype)
        self.relu.store_result(add_relu_into(first, skip, out), self.members)
        return True


def owns_its_memory(a):
    """Whether ``a`` is an array owning contiguous, writable memory (an op's fresh output,
    which may then be written in place)."""
    return type(a) is np.ndarray and a.base is None and a.flags.writeable and \
        a.flags.c_contiguous


def add_relu_into(first, skip, out):
    """``out = max(first + skip, 0)`` in one threaded pass and return ``out``; the three
    have one shape and float dtype, and ``out`` (contiguous) may be ``first``."""
    first = np.ascontiguousarray(first)
    skip = np.ascontiguousarray(skip)
    n = out.size
    _kernels.add_relu(first.reshape(n), skip.reshape(n), out.reshape(n),
                      get_thread_number() if n >= _PARALLEL_MIN else 1)
    return out


def _value(v):
    values = v.expr.values
    return None if values is None else values[v.index]


def _consumer_counts(order):
    counts = {}
    for e in order:
        for v in e.inputs:
            counts[id(v.expr)] = counts.get(id(v.expr), 0) + 1
    return counts


def plan(order):
    """``{id(relu Expr): AddRelu}`` for the fusable ``relu(add(.))`` of ``order``."""
    position = {id(e): i for i, e in enumerate(order)}
    counts = _consumer_counts(order)
    found = {}
    for relu in order:
        if relu.op.name != "relu" or relu.attrs.get("slope", 0.0) != 0.0 or \
                len(relu.inputs) != 1:
            continue
        meta = relu.metas[0]
        if meta.shape is None or meta.dtype not in _FLOATS:
            continue
        a_var = relu.inputs[0]
        add = a_var.expr
        if add.op is None or add.op.name != "add" or len(add.inputs) != 2 or \
                id(add) not in position or counts.get(id(add)) != 1 or not _graph_only(a_var):
            continue
        if any(_meta(v) != (meta.shape, meta.dtype) for v in add.inputs):
            continue  # broadcasting or a cast: op by op
        found[id(relu)] = AddRelu(_conv_side(add, position, counts), add, relu)
    return found


def _meta(v):
    m = v.expr.metas[v.index]
    return (m.shape, m.dtype)


def _conv_side(add, position, counts):
    """A graph-only conv2d feeding ``add`` (computed then into its own output), else None."""
    for i in range(2):
        v = add.inputs[i]
        src = v.expr
        if src.op is not None and src.op.name == "conv2d" and id(src) in position and \
                counts.get(id(src)) == 1 and add.inputs[1 - i].expr is not src and \
                _graph_only(v):
            return src
    return None
