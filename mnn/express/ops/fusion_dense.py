"""Evaluation-time fusion of a dense layer, ``matmul(a, w) + bias``, into one step; with
a classifier head's ``reshape(global_avg_pool(x))`` as ``a``, the pooling too, and the
convolution computing ``x`` when nothing else reads it (MobileNetV2's last 1x1 conv).

A network's classifier is four small ops after the last convolution: global average
pool, reshape to ``(N, C)``, matmul, bias add. Each costs a dispatch and its
bookkeeping (and, after the big kernels, Python runs with cold caches: 0.06 ms of
MobileNetV2's run went to the four). Fused, one step pools with the pooling kernel's
plane mean, multiplies with the matmul op's own GEMM and adds the bias in place in the
product's fresh array, then stores the add's value: the same operations, rounded the
same way, as the ops one by one. A convolution below the pool runs its own prepared
kernel in the same step (its output is pooled and dropped, never stored): the network's
tail is then one step instead of two (MobileNetV2 at 2 threads: the step between them
cost about 1% of the run). When that conv runs by the direct kernel on float32 planes of
16 pixels or more, :class:`mnn._cython.conv_pool.ConvMeanPlan` computes it and the plane
means in one call (a few output channels at a time, averaged while in cache, the same
values bit for bit); its setup and the packed weight are kept between runs. Each step of
Python after the network's big kernels runs with cold caches (a weight-cache lookup took
35 us there, 1 us warm): the conv's dispatch, output array and pooling call cost
MobileNetV2 0.1 ms per run at one thread.

Fused only when nothing else can read the intermediate values (each Var referenced only
by its one consumer, as :mod:`.fusion_add_relu` checks), ``a`` and ``w`` are matrices,
``a`` is not transposed, and the bias is a row of the product's width (shape ``(N,)`` or
``(1, N)``) of the product's float dtype. The skipped ops keep no values; should anything
read them later they are computed then like any released op.
"""
import sys
import weakref

import numpy as np

from ..._cython import conv_pool as _conv_pool_k
from ..runtime import get_thread_number
from . import nn_common as nc
from .linalg import _matmul_2d
from .movement import _reshape_target
from .nn_conv import _packed_weight, direct_call
from .nn_pool import pool_planes
from .pack_cache import PackCache

__all__ = ["Dense", "conv_means", "plan"]

_F32 = np.dtype(np.float32)
_FLOATS = (_F32, np.dtype(np.float64))
# References to an intermediate Var held only by the graph: its one consumer's inputs
# list, the planner's local variable, sole_reader's argument and getrefcount's own.
_GRAPH_ONLY_REFS = 4


class Dense:
    """``add(matmul(a, w), bias)``, ``a`` optionally ``reshape(avg_pool(x))``, ``x``
    optionally ``conv2d(...)``."""

    __slots__ = ("add", "conv", "matmul", "members", "pool", "reshape", "checked",
                 "prepared")

    def __init__(self, conv, pool, reshape, matmul, add, checked=None, prepared=None):
        self.conv, self.pool, self.reshape = conv, pool, reshape
        self.matmul, self.add = matmul, add
        self.members = [e for e in (conv, pool, reshape, matmul) if e is not None]
        # The pooled shapes whose reshape to (N, C) was checked (kept by the runner: a
        # model run over and over checks once; after the conv's kernel the check, cold in
        # the caches, cost 0.02 ms)
        self.checked = set() if checked is None else checked
        # the conv + mean kernel's setups and last packed weight (see conv_means)
        self.prepared = {} if prepared is None else prepared

    def runner(self, position):
        """``run(order) -> bool``: :meth:`compute` for a later evaluation of the same
        order, from positions in it (keeps no Exprs)."""
        at = [None if e is None else position[id(e)]
              for e in (self.conv, self.pool, self.reshape, self.matmul, self.add)]
        checked, prepared = set(), {}

        def run(order):
            return Dense(*[None if i is None else order[i] for i in at],
                         checked=checked, prepared=prepared).compute()
        return run

    def compute(self):
        """Compute the add's value in one step; False when the arrays do not allow it
        (then the caller computes the ops one by one)."""
        matmul = self.matmul
        w = _value(matmul.inputs[1])
        bias = _value(_other_input(self.add, matmul))
        if self.pool is not None:
            a = self._pooled()
        else:
            a = _value(matmul.inputs[0])
        # The arrays, not the metas: after a resize the metas are inferred again only
        # when the result is stored.
        if a is None or w is None or bias is None or a.ndim != 2 or w.ndim != 2 or \
                a.dtype not in _FLOATS or w.dtype != a.dtype or bias.dtype != a.dtype:
            return False
        width = w.shape[0] if matmul.attrs["transpose_b"] else w.shape[1]
        if bias.shape not in ((width,), (1, width)) or a.shape[1] != \
                (w.shape[1] if matmul.attrs["transpose_b"] else w.shape[0]):
            return False
        out = _matmul_2d(a, w, False, matmul.attrs["transpose_b"])
        np.add(out, bias, out=out)
        self.add.store_result(out, self.members)
        return True

    def _pooled(self):
        """The plane means of the pool's input as the reshape's ``(N, C)`` matrix, or
        None when the input is not what the global pool kernel takes."""
        if self.conv is not None:
            arrays = [_value(v) for v in self.conv.inputs]
            if any(a is None for a in arrays):
                return None  # released upstream: op by op (the ops revive it)
            sig = tuple([(a.shape, a.dtype) for a in arrays])
            if sig != self.conv.in_sig:
                return None  # new input shapes: op by op, checked by the conv's inference
            means = conv_means(arrays, self.conv.attrs, self.prepared)
            if means is not None:
                return means if self._flattens(means.shape) else None
            # the conv's own prepared kernel, as its _compute would call it
            x = self.conv.call_op(arrays, sig)
        else:
            x = _value(self.pool.inputs[0])
        if type(x) is not np.ndarray or x.ndim != 4 or x.dtype not in _FLOATS or \
                x.shape[2] * x.shape[3] == 0:
            return None
        n, c = x.shape[:2]
        if not self._flattens((n, c)):
            return None
        return pool_planes(nc.c_array(x), False).reshape(n, c)

    def _flattens(self, nc_shape):
        """Whether the reshape takes the pooled ``(N, C, 1, 1)`` to ``nc_shape``
        ``(N, C)``."""
        if nc_shape not in self.checked:
            attrs = self.reshape.attrs
            if _reshape_target(nc_shape + (1, 1), attrs["shape"], attrs["zero_copies"]) != \
                    nc_shape:
                return False
            self.checked.add(nc_shape)
        return True


# :func:`conv_means`'s setup for shapes the kernel does not take
_UNFIT = "unfit"
_MAX_PREPARED = 16


def conv_means(arrays, attrs, prepared):
    """The ``(N, M)`` plane means of ``conv2d(*arrays)`` (these attributes) by
    :class:`~mnn._cython.conv_pool.ConvMeanPlan`, or None when the kernel does not take
    them (then the conv and the pool run as they would alone: same values).

    ``prepared`` (kept by the caller for this conv) holds the plans per input shapes and
    thread count, and the last weight's packed form while that weight lives (a weight
    nobody can write: the pack cache's rule)."""
    if not _conv_pool_k.available() or \
            any(type(a) is not np.ndarray or a.dtype != _F32 for a in arrays):
        return None
    x, w = arrays[0], arrays[1]
    bias = arrays[2] if len(arrays) == 3 else None
    if bias is not None and bias.shape != w.shape[:1]:
        return None  # (the conv's own checks name what is wrong)
    key = (x.shape, w.shape, bias is None, get_thread_number())
    plan = prepared.get(key)
    if plan is None:
        plan = _mean_plan(x.shape, w.shape, attrs)
        if len(prepared) >= _MAX_PREPARED:
            prepared.clear()  # shapes that never repeat: bounded
        prepared[key] = plan
    if plan is _UNFIT:
        return None
    last = prepared.get("weight")
    if last is not None and last[0]() is w:
        packed = last[1]
    else:
        packed = _packed_weight(w, 1, direct=True)[0]
        if PackCache.immutable(w):
            prepared["weight"] = (weakref.ref(w), packed)
    m = w.shape[0]
    if bias is None:
        bias = np.zeros(m, np.float32)
    means = np.empty((x.shape[0], m), np.float32)
    pad = nc.scratch("conv_direct_pad", (plan[1],), np.float32) if plan[1] else None
    plan[0].run(packed, nc.c_array(x), nc.c_array(bias), means, pad)
    return means


def _mean_plan(x_shape, w_shape, attrs):
    """``(ConvMeanPlan, padded input floats)`` for :func:`conv_means`, or ``_UNFIT``."""
    if len(x_shape) != 4 or len(w_shape) != 4 or x_shape[1] != w_shape[1]:
        return _UNFIT  # (the conv's own checks name what is wrong)
    call = direct_call(x_shape, w_shape, attrs)
    if call is None:
        return _UNFIT
    conv, (oh, ow), (lo, hi), pad, nthreads = call
    if oh * ow < 16:
        return _UNFIT  # the pool averages small planes in order: its own loop
    return (_conv_pool_k.conv_mean_plan(x_shape, w_shape[0], conv, oh, ow, lo, hi,
                                        nthreads), pad)


def _value(v):
    values = v.expr.values
    return None if values is None else values[v.index]


def _other_input(add, producer):
    first = add.inputs[0]
    return add.inputs[1] if first.expr is producer else first


def plan(order):
    """``{id(add Expr): Dense}`` for the fusable dense layers of ``order``."""
    position = {id(e): i for i, e in enumerate(order)}
    counts = {}
    for e in order:
        for v in e.inputs:
            counts[id(v.expr)] = counts.get(id(v.expr), 0) + 1

    def sole_reader(v, name):
        # ``v`` is computed by op ``name`` in this order and read by one consumer only.
        src = v.expr
        return src.op is not None and src.op.name == name and id(src) in position and \
            counts.get(id(src)) == 1 and len(src._outs) == 1 and \
            sys.getrefcount(v) == _GRAPH_ONLY_REFS

    found = {}
    for add in order:
        if add.op.name != "add" or len(add.inputs) != 2:
            continue
        meta = add.metas[0]
        if meta.shape is None or len(meta.shape) != 2 or meta.dtype not in _FLOATS:
            continue
        for i in range(2):
            v, bias = add.inputs[i], add.inputs[1 - i]
            if v.expr is bias.expr or not sole_reader(v, "matmul"):
                continue
            matmul = v.expr
            if matmul.attrs["transpose_a"] or _meta(v) != (meta.shape, meta.dtype):
                continue
            if any(len(_meta(u)[0] or ()) != 2 for u in matmul.inputs):
                continue
            if _meta(bias) not in (((meta.shape[1],), meta.dtype),
                                   ((1, meta.shape[1]), meta.dtype)):
                continue
            found[id(add)] = Dense(*_head(matmul.inputs[0], sole_reader), matmul, add)
            break
    return found


def _head(a, sole_reader):
    """``(conv, pool, reshape)`` when ``a`` is ``reshape(global avg_pool(x))`` read only
    by the matmul (``conv`` the conv2d computing ``x`` when the pool alone reads it, else
    None), else ``(None, None, None)``."""
    if not sole_reader(a, "reshape"):
        return None, None, None
    reshape = a.expr
    p = reshape.inputs[0]
    if not sole_reader(p, "avg_pool") or not p.expr.attrs["global_pool"]:
        return None, None, None
    x = p.expr.inputs[0]
    conv = x.expr if sole_reader(x, "conv2d") else None
    return conv, p.expr, reshape


def _meta(v):
    m = v.expr.metas[v.index]
    return (m.shape, m.dtype)
