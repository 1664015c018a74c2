"""Evaluation-time fusion of a convolution and the max pool that alone reads it
(ResNet's stem: conv 7x7 stride 2, then max pool 3x3 stride 2) into one kernel call.

Op by op, the convolution writes its whole output (3.2 MB for ResNet18 at 224x224, more
than L2 holds) and the pool reads it back from memory. :mod:`mnn._cython.conv_pool`
computes the conv rows each band of pooled rows needs into scratch that stays in L2 and
pools them there; only the pooled rows reach memory. It runs the direct kernel the conv
would run alone, so the values are the two ops' own, bit for bit.

Fused only when the conv runs by the direct kernel (float32, one group, the shapes
:func:`.nn_conv.direct_geometry` accepts), the pool is a regular 2-D max pool, and
nothing else can read the conv's value (its Var referenced only by the pool, as
:mod:`.fusion_add_relu` checks). The skipped conv keeps no value; should anything read it
later it is computed then like any released op.
"""
import sys

import numpy as np

from ..._cython import conv_pool as _kernel
from ..runtime import get_thread_number
from . import nn_common as nc
from .nn_conv import _packed_weight, direct_call, direct_geometry
from .nn_pool import _attrs_key, _out_hw, _regular

__all__ = ["ConvPool", "plan", "run"]

_F32 = np.dtype(np.float32)
# References to the conv's Var held only by the graph: the pool's inputs list, the
# planner's local variable, _graph_only's argument and getrefcount's own.
_GRAPH_ONLY_REFS = 4


def _graph_only(v):
    return sys.getrefcount(v) == _GRAPH_ONLY_REFS


class ConvPool:
    """``max_pool(conv2d(...))``, computed by one call that stores the pool's value."""

    __slots__ = ("conv", "members", "pool")

    def __init__(self, conv, pool):
        self.conv, self.pool = conv, pool
        self.members = [conv]

    def runner(self, position):
        """``run(order) -> bool``: :meth:`compute` for a later evaluation of the same
        order, from positions in it (keeps no Exprs)."""
        at = position[id(self.conv)], position[id(self.pool)]
        prepared = {}

        def run(order):
            return ConvPool(order[at[0]], order[at[1]]).compute(prepared)
        return run

    def compute(self, prepared=None):
        """Compute the pool's value in one kernel call; False when the arrays do not allow
        it (then the caller computes the ops one by one). ``prepared``: as for
        :func:`run`."""
        arrays = [_value(v) for v in self.conv.inputs]
        if any(a is None for a in arrays):
            return False
        y = run(arrays, self.conv.attrs, self.pool.attrs, prepared)
        if y is None:
            return False
        self.pool.store_result(y, self.members)
        return True


def run(arrays, conv_attrs, pool_attrs, prepared=None):
    """``max_pool(conv2d(*arrays))`` for these ops' attributes in one kernel call, or None
    when the arrays or attributes are not what the kernel takes (then the caller computes
    the ops one by one).

    ``prepared``: a dict the caller keeps for these two ops (whose attributes never
    change) between runs: the kernel's geometry is kept there per input shapes and thread
    count instead of being derived again on each call (a tenth of a small model's run)."""
    if any(type(a) is not np.ndarray or a.dtype != _F32 for a in arrays):
        return None
    x, w = arrays[0], arrays[1]
    bias = arrays[2] if len(arrays) == 3 else None
    # The arrays, not the metas: after a resize the metas are inferred again only when
    # the result is stored.
    if x.ndim != 4 or w.ndim != 4 or x.shape[1] != w.shape[1] or \
            (bias is not None and bias.shape != (w.shape[0],)):
        return None
    # the thread count: _setup's kernel threads follow it
    key = (x.shape, w.shape, bias is None, get_thread_number())
    setup = prepared.get(key) if prepared is not None else None
    if setup is None:
        setup = _setup(x.shape, w.shape, conv_attrs, pool_attrs)
        if prepared is not None:
            if len(prepared) >= _MAX_PREPARED:
                prepared.clear()  # shapes that never repeat: bounded
            prepared[key] = setup
    if setup is _UNFIT:
        return None
    conv, oh, ow, window, lo, hi, pad_elements, out_shape, nthreads = setup
    o = w.shape[0]
    pad = nc.scratch("conv_direct_pad", (pad_elements,), np.float32) if pad_elements else None
    y = np.empty(out_shape, np.float32)
    nc.blas_single_thread()
    _kernel.conv_max_pool(_packed_weight(w, 1, direct=True)[0], o, nc.c_array(x), y,
                          np.zeros(o, np.float32) if bias is None else nc.c_array(bias),
                          conv, oh, ow, window, lo, hi, nthreads, pad)
    return y


# Kept setups per caller; :func:`_setup`'s answer when the kernel does not take the ops.
_MAX_PREPARED = 16
_UNFIT = "unfit"


def _setup(x_shape, w_shape, attrs, pool_attrs):
    """``(conv, oh, ow, window, lo, hi, pad elements, output shape, kernel threads)`` of
    :func:`run`'s kernel call for inputs of these shapes, or ``_UNFIT``."""
    call = direct_call(x_shape, w_shape, attrs)
    if call is None or not _regular(pool_attrs):
        return _UNFIT
    conv, (oh, ow), (lo, hi), pad_elements, nthreads = call
    key = _attrs_key((oh, ow), pool_attrs)
    ph, pw = _out_hw((oh, ow), pool_attrs)
    window = (*key["kernel"], *key["strides"], key["pads"][0], key["pads"][1],
              *key["dilations"])
    if not (_kernel.windows_inside(oh, ph, window[0], window[2], window[4], window[6])
            and _kernel.windows_inside(ow, pw, window[1], window[3], window[5],
                                       window[7])):
        return _UNFIT  # a window of padding only: the pool op's own rule for it
    return (conv, oh, ow, window, lo, hi, pad_elements, (x_shape[0], w_shape[0], ph, pw),
            nthreads)


def _value(v):
    values = v.expr.values
    return None if values is None else values[v.index]


def plan(order):
    """``{id(max_pool Expr): ConvPool}`` for the fusable conv + max pool pairs of
    ``order``."""
    position = {id(e): i for i, e in enumerate(order)}
    counts = {}
    for e in order:
        for v in e.inputs:
            counts[id(v.expr)] = counts.get(id(v.expr), 0) + 1
    found = {}
    for pool in order:
        if pool.op.name != "max_pool" or len(pool.inputs) != 1 or not _regular(pool.attrs):
            continue
        v = pool.inputs[0]
        conv = v.expr
        if conv.op is None or conv.op.name != "conv2d" or id(conv) not in position or \
                counts.get(id(conv)) != 1 or len(conv._outs) != 1 or not _graph_only(v):
            continue
        x, w = (u.expr.metas[u.index] for u in conv.inputs[:2])
        if x.shape is None or w.shape is None or x.dtype != _F32 or w.dtype != _F32:
            continue
        attrs = conv.attrs
        if direct_geometry(x.shape, x.dtype, w.shape, attrs["strides"], attrs["pads"],
                           attrs["dilations"], attrs["group"],
                           attrs["padding_mode"]) is None:
            continue
        found[id(pool)] = ConvPool(conv, pool)
    return found
