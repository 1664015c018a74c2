"""Expr and the graph machinery: building ops, staleness and evaluation.

An :class:`Expr` is one node: either an op applied to input Vars, or a source holding a
value (placeholder, constant, trainable). Each Expr owns one :class:`~mnn.express.var.Var`
per output, created once, so that rewriting a Var (``fix_as_const``, ``replace``) is seen by
every consumer.

Evaluation is lazy and cached. Every Expr carries a ``version`` that grows whenever its
values change; an op Expr remembers the versions of its inputs at the time it computed.
Reading a Var walks the graph above it, recomputing only the Exprs whose inputs changed;
:func:`evaluate_many` reads several Vars (an optimizer's gradients) in one walk.
Cached arrays are never written in place (sources are replaced on ``write``), so ops may
return views of their inputs and ``read()`` results stay valid.
"""
import sys
import threading
from collections import OrderedDict
from functools import partial
from types import SimpleNamespace
from weakref import WeakKeyDictionary
from weakref import ref as _weakref

import numpy as np

from .errors import OpError
from .formats import NCHW
from .optable import TensorMeta, get_op
from .runtime import get_thread_number
from .var import Var

__all__ = ["SOURCE_KINDS", "Expr", "apply", "evaluate_many", "partial_shape"]

# Kinds of source Exprs (no op, a value of their own).
PLACEHOLDER = "placeholder"
CONST = "const"
TRAINABLE = "trainable"
SOURCE_KINDS = (PLACEHOLDER, CONST, TRAINABLE)
# Sources whose new values move _source_epoch (placeholders, written run after run, do
# not): what is prepared from them is kept while the epoch stands (source_epoch).
EPOCH_SOURCES = (CONST, TRAINABLE)

_counter = [0]


def _next_id():
    _counter[0] += 1
    return _counter[0]


class Expr:
    """A node of the graph.

    Attributes
    ----------
    op : OpDef or None
        The op, or None for a source.
    kind : str
        ``"op"`` or one of ``placeholder``, ``const``, ``trainable``.
    inputs : list of Var
    attrs : dict
        The op's attributes (keyword arguments of its compute/infer).
    metas : list of TensorMeta
        Static shape/dtype per output (shape None when only computing tells).
    """

    __slots__ = ("op", "kind", "inputs", "attrs", "metas", "values", "version",
                 "input_versions", "name", "_outs", "data_format", "id", "in_sig",
                 "meta_epoch", "ancestry", "prepared", "fused", "__weakref__")

    def __init__(self, op, kind, inputs, attrs, metas, name=None, data_format=None,
                 in_sig=None):
        self.op = op
        self.kind = kind
        self.inputs = list(inputs)
        self.attrs = attrs
        self.metas = list(metas)
        self.values = None
        self.version = 0
        self.input_versions = None
        self.id = _next_id()
        self.in_sig = _signature(self.inputs) if in_sig is None else in_sig
        self.meta_epoch = _epoch[0]
        # (structure epoch, (the op Exprs above it in order, led by the first, [their
        # evaluation plan]) or None): _op_ancestors
        self.ancestry = None
        # (input signature, threads, fn): the op's prepared compute (call_op)
        self.prepared = None
        # A member of a fused group of some evaluation plan (_order_plan): computing it
        # on its own moves _fused_epoch (see _refresh_members).
        self.fused = False
        self.name = name
        self.data_format = NCHW if data_format is None else data_format
        # Weak references: a Var nobody holds can go (and with it a graph nobody reads),
        # without waiting for the cycle collector; ``outputs`` makes a new one on demand.
        self._outs = [None] * len(self.metas)

    @property
    def outputs(self):
        """One Var per output (the same Var object for as long as anything holds it)."""
        outs = self._outs
        result = []
        for i in range(len(outs)):
            ref = outs[i]
            var = ref() if ref is not None else None
            if var is None:
                var = Var(self, i)
                outs[i] = _weakref(var)
            result.append(var)
        return result

    @outputs.setter
    def outputs(self, variables):
        self._outs = [_weakref(v) for v in variables]

    @property
    def op_type(self):
        """The op name, or the source kind for sources (MNN calls sources ``Input``)."""
        return self.op.name if self.op is not None else self.kind

    def __repr__(self):
        return f"Expr({self.op_type}, id={self.id}, name={self.name!r})"

    # -- sources -----------------------------------------------------------------------
    def set_source_value(self, array):
        """Replace a source's value (never in place: readers may hold the old array)."""
        array.flags.writeable = False
        self.values = [array]
        self.metas = [TensorMeta(array.shape, array.dtype,
                                 array if self.kind == CONST else None)]
        self.version += 1
        if self.kind in EPOCH_SOURCES:
            _source_epoch[0] += 1

    # -- evaluation --------------------------------------------------------------------
    def evaluate(self):
        """Compute this Expr's outputs if stale (and everything stale above it)."""
        if self.op is None:
            if self.values is None:
                raise OpError(f"mnn: placeholder {self.name or self.id} has not been "
                              "written: call write() before reading what depends on it")
            return self.values
        if _only_sources(self.inputs):
            # Only sources above: no graph walk needed (the common small case).
            if self.input_versions != tuple([v.expr.version for v in self.inputs]):
                self._compute()
            elif self.values is None:
                # Released after an evaluation (_release_plan): the same values again,
                # under the same version, so that consumers stay fresh.
                version = self.version
                self._compute()
                self.version = version
            return self.values
        _evaluate_roots([self])
        return self.values

    def store_result(self, out, members=()):
        """Record ``out`` as this single-output op's value, computed outside
        :meth:`_compute` (fused evaluation); the same checks and bookkeeping.

        ``members`` are the fused ops above it, inputs first. When the inputs changed shape
        since the last inference (a resize), their metas and this op's are inferred again
        from the inputs' current ones first, as :meth:`_compute` does for a single op."""
        meta = self.metas[0]
        if members and (out.shape != meta.shape or out.dtype != meta.dtype):
            for expr in list(members) + [self]:
                if _signature(expr.inputs) != expr.in_sig:
                    expr._reinfer([v.expr.metas[v.index] for v in expr.inputs])
            meta = self.metas[0]
        if len(self._outs) != 1 or out.shape != meta.shape or out.dtype != meta.dtype:
            raise RuntimeError(f"mnn internal error: fused result {out.shape} {out.dtype} "
                               f"does not match op {self.op.name}'s {meta.shape} "
                               f"{meta.dtype}")
        out.flags.writeable = False
        self.values = [out]
        inputs = self.inputs
        self.in_sig = _signature(inputs)
        self.input_versions = tuple([v.expr.version for v in inputs])
        self.version += 1

    def refresh_metas(self):
        """Re-infer static shapes above and including this Expr after a ``resize``.

        Only needed when some placeholder changed shape since the metas were inferred
        (tracked by a global epoch), so ordinary graphs pay nothing.
        """
        if self.meta_epoch == _epoch[0]:
            return
        for expr in _ancestors(self):
            if expr.op is not None and _signature(expr.inputs) != expr.in_sig:
                expr._reinfer([v.expr.metas[v.index] for v in expr.inputs])
            expr.meta_epoch = _epoch[0]

    def _reinfer(self, metas):
        self.in_sig = tuple((m.shape, m.dtype) for m in metas)
        if any(m.shape is None for m in metas):
            self.metas, partial = _infer_unknown(self.op, metas, self.attrs, self.inputs)
            _set_partial(self, partial)
        else:
            self.metas = _run_infer(self.op, metas, self.attrs)
            if len(self.metas) == 1 and self.metas[0].shape is None and \
                    self.op.name in _SHAPE_INPUT:
                _set_partial(self, _rank_partial(self.op, self.inputs))

    def call_op(self, arrays, sig=None):
        """The op's result on ``arrays`` (values of the inputs; ``sig`` their ``(shape,
        dtype)`` pairs when the caller has them): through the op's prepared compute when
        it has one (OpDef.prepare), kept here per input signature and thread count."""
        op = self.op
        if op.prepare is None:
            return op.compute(arrays, **self.attrs)
        if sig is None:
            sig = tuple([(a.shape, a.dtype) for a in arrays])
        threads = get_thread_number()
        prepared = self.prepared
        if prepared is None or prepared[1] != threads or prepared[0] != sig:
            prepared = self.prepared = (sig, threads, op.prepare(sig, threads, **self.attrs))
        return prepared[2](arrays)

    def _compute(self):
        if self.fused:
            _fused_epoch[0] += 1
        arrays = []
        for v in self.inputs:
            src = v.expr
            if src.values is None:
                raise OpError(f"mnn: placeholder {src.name or src.id} has not been written:"
                              f" call write() before reading {self.op_type}")
            arrays.append(src.values[v.index])
        sig = tuple([(a.shape, a.dtype) for a in arrays])
        if sig != self.in_sig:
            # Inputs changed shape (resize, or shapes that only computing told): check
            # the op accepts them and learn the output shapes, with a proper error.
            self._reinfer([TensorMeta(a.shape, a.dtype, a) for a in arrays])
        try:
            result = self.call_op(arrays, sig)
        except OpError as exc:
            raise OpError(_describe(self.op.name, [_meta_of(a) for a in arrays], str(exc)))
        if type(result) is np.ndarray and len(self._outs) == 1:
            meta = self.metas[0]
            if meta.shape == result.shape and meta.dtype == result.dtype:
                # The common case, as inferred: skip the general bookkeeping below.
                if result.flags.writeable:
                    result.flags.writeable = False
                self.values = [result]
                self.in_sig = sig
                self.input_versions = tuple([v.expr.version for v in self.inputs])
                self.version += 1
                return
        if isinstance(result, np.ndarray) or np.isscalar(result):
            result = [result]
        outs = []
        metas_match = len(result) == len(self.metas)
        for i, out in enumerate(result):
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            meta = self.metas[i] if i < len(self.metas) else None
            if meta is None or meta.shape is None:
                metas_match = False
            elif out.shape != meta.shape or out.dtype != meta.dtype:
                metas_match = False
                # The metas may be the last run's, and data may decide the shape (if,
                # while): ask inference again, this time with the input values.
                self._reinfer([TensorMeta(a.shape, a.dtype, a) for a in arrays])
                meta = self.metas[i]
                if meta.shape is not None and (out.shape != tuple(meta.shape)
                                               or out.dtype != meta.dtype):
                    raise RuntimeError(
                        f"mnn internal error: op {self.op.name} computed {out.shape} "
                        f"{out.dtype} but inferred {meta.shape} {meta.dtype}")
            if out.flags.writeable:
                out.flags.writeable = False
            outs.append(out)
        if len(outs) != len(self._outs):
            raise RuntimeError(f"mnn internal error: op {self.op.name} returned {len(outs)} "
                               f"outputs, expected {len(self._outs)}")
        self.values = outs
        if not metas_match:
            self.metas = [TensorMeta(o.shape, o.dtype) for o in outs]
        self.in_sig = sig
        self.input_versions = tuple([v.expr.version for v in self.inputs])
        self.version += 1


_epoch = [0]
# Moved by every new value of a constant or trainable source (placeholders, written run
# after run, do not move it): values derived from those sources and cached between runs
# stay valid while it stands (see source_epoch).
_source_epoch = [0]
# Moved whenever a member of a fused group computes on its own (Expr.fused).
_fused_epoch = [0]
_PLANNERS = []


def source_epoch():
    """A pair of counters that changes whenever a constant or trainable source gets a new
    value, or a Var is rewired: what a fused step prepared from such values (its weights'
    arrays) serves again while the pair stands."""
    return (_source_epoch[0], _structure_epoch[0])


def _only_sources(inputs):
    # A function of its own: a loop variable left in evaluate's frame would hold a Var
    # and hide from the fusion planner that nothing else references it.
    for v in inputs:
        if v.expr.op is not None:
            return False
    return True


def _planners():
    """The fusion planners, one attribute per module of mnn/express/ops (``fusion``,
    ``fusion_block``, ``fusion_conv_pool``, ``fusion_add_relu``, ``fusion_dense``),
    imported on first use: they import this module."""
    if not _PLANNERS:
        from .ops import (fusion, fusion_add_relu, fusion_block, fusion_conv_pool,
                          fusion_dense)

        _PLANNERS.append(SimpleNamespace(
            fusion=fusion, fusion_block=fusion_block, fusion_conv_pool=fusion_conv_pool,
            fusion_add_relu=fusion_add_relu, fusion_dense=fusion_dense))
    return _PLANNERS[0]


def bump_shape_epoch():
    """Note that some placeholder changed shape: static metas must be re-checked."""
    _epoch[0] += 1


def _signature(inputs):
    sig = []
    for v in inputs:
        m = v.expr.metas[v.index]
        sig.append((m.shape, m.dtype))
    return tuple(sig)


def topological_order(roots, stop_ids=(), seen=None, ops_only=False):
    """Exprs above and including ``roots``, inputs before consumers (iterative: graphs
    of thousands of ops would overflow Python's recursion limit); with ``ops_only``,
    their op Exprs alone (sources are not listed).

    Parameters
    ----------
    roots : iterable of Expr
    stop_ids : collection of int
        Ids of Exprs that are listed but not walked past (a subgraph's inputs).
    seen : set of int, optional
        Ids already listed by an earlier call; shared, so that several calls list each
        Expr once. Updated in place.
    """
    seen = set() if seen is None else seen
    order = []
    stack = [(root, False) for root in roots if not (ops_only and root.op is None)]
    pop, push = stack.pop, stack.append
    while stack:
        expr, expanded = pop()
        if expanded:
            order.append(expr)
            continue
        if expr.id in seen:
            continue
        seen.add(expr.id)
        push((expr, True))
        if expr.id in stop_ids:
            continue
        for v in expr.inputs:
            src = v.expr
            if src.id not in seen and not (ops_only and src.op is None):
                push((src, False))
    return order


def _ancestors(root):
    """All Exprs above and including ``root``, inputs before consumers."""
    return topological_order([root])


def _stale_order(roots, revived=None):
    """Stale op Exprs above and including each of ``roots``, inputs before consumers.

    One pass for all roots (reading several outputs, e.g. every gradient of a step,
    shares the graph above them) over their op Exprs in topological order
    (:func:`_op_ancestors`). An Expr is stale when it never computed, an input is stale,
    or an input's version moved since it computed.

    A released Expr (see :func:`_release_plan`) is fresh but holds no values. It is
    listed only when a stale consumer or a root needs its values; its ids go into
    ``revived`` so that recomputing it keeps its version (its consumers stay fresh).
    """
    if revived is None:
        revived = set()  # a caller that only asks whether anything is stale
    ops = None
    if len(roots) == 1:
        known = _op_ancestors(roots[0])
        if known is not None:
            ops, led, _ = known
            # A network led by one op (its first conv, reading the input placeholder
            # and weights): once that op is stale, every op is, and the walk below
            # would list them all. A model run over and over skips the walk.
            if led:
                first = ops[0]
                if first.input_versions != tuple([v.expr.version for v in first.inputs]):
                    return ops
    if ops is None:
        ops = _op_order(roots)
    order = []
    state = {}  # Expr id -> _STALE / _FRESH / _RELEASED / _REVIVED; sources absent
    for expr in ops:
        inputs = expr.inputs
        stale = expr.input_versions != tuple([v.expr.version for v in inputs])
        released_input = False
        for v in inputs:
            input_state = state.get(v.expr.id)
            if input_state is _STALE:
                stale = True
            elif input_state is _RELEASED:
                released_input = True
        if stale:
            if released_input:
                _revive_inputs(expr, state, order, revived)
            state[expr.id] = _STALE
            order.append(expr)
        elif expr.values is None:
            state[expr.id] = _RELEASED
        else:
            state[expr.id] = _FRESH
    for root in roots:
        if state.get(root.id) is _RELEASED:
            _revive_inputs(root, state, order, revived)
            _mark_revived(root, state, order, revived)
    return order


def _op_order(roots):
    """The op Exprs above and including ``roots``, inputs before consumers, the first
    root's first."""
    return topological_order(list(reversed(roots)), ops_only=True)


def _op_ancestors(root):
    """``(ops, led, plan)``: :func:`_op_order` of ``root`` alone, whether
    :func:`_led_by_first` holds for it and a list holding the evaluation plan of ``ops``
    once made (:func:`_order_plan`), kept on ``root`` from its second evaluation on (a
    network read run after run then skips the walk's stack work: MobileNetV2's stale pass
    took 0.031 instead of 0.045 ms), or None at its first (a value read once keeps no
    list).

    Valid while no Var is rewired: an Expr's inputs change only through ``replace`` and
    ``fix_as_*``, which move the structure epoch the entry is stamped with."""
    if root.op is None:
        return None
    epoch = _structure_epoch[0]
    cached = root.ancestry
    if cached is None or cached[0] != epoch:
        root.ancestry = (epoch, None)
        return None
    if cached[1] is None:
        ops = _op_order([root])
        root.ancestry = cached = (epoch, (ops, _led_by_first(ops), []))
    return cached[1]


def _led_by_first(ops):
    """Whether the first op of ``ops`` (inputs before consumers) reads sources only and
    every other op is computed from it: then all of them are stale whenever it is."""
    first = ops[0]
    if any(v.expr.op is not None for v in first.inputs):
        return False
    below = {first.id}
    for expr in ops[1:]:
        if not any(v.expr.id in below for v in expr.inputs):
            return False
        below.add(expr.id)
    return True


_STALE, _FRESH, _RELEASED, _REVIVED = "stale", "fresh", "released", "revived"


def _revive_inputs(expr, state, order, revived):
    """List the released Exprs above ``expr`` whose values it needs, inputs first."""
    stack = [(v.expr, False) for v in reversed(expr.inputs)
             if state.get(v.expr.id) is _RELEASED]
    while stack:
        src, expanded = stack.pop()
        if state[src.id] is not _RELEASED:
            continue
        if expanded:
            _mark_revived(src, state, order, revived)
            continue
        stack.append((src, True))
        for v in reversed(src.inputs):
            if state.get(v.expr.id) is _RELEASED:
                stack.append((v.expr, False))


def _mark_revived(expr, state, order, revived):
    state[expr.id] = _REVIVED
    order.append(expr)
    revived.add(expr.id)


def _run_order(order, revived=(), held=None):
    """Compute the stale Exprs of ``order`` (from :func:`_stale_order`) in turn, fusing
    the chains the fusion planners find and releasing intermediate values nothing else
    can read (:func:`_order_plan`). Exprs in ``revived`` were released earlier: they
    compute their values again without a new version."""
    if len(order) == 1 and not revived:
        order[0]._compute()
        return
    plan = _order_plan(order, held)
    if revived:
        # Reviving recomputes single Exprs (rare): no groups, releases as planned.
        schedule = _schedule(len(order), {}, {}, plan[2])
    else:
        schedule = plan[3]
    if schedule is None:  # nothing fused or released: each Expr in turn
        for expr in order:
            _compute_one(expr, revived)
        return
    for i, group, drops in schedule:
        expr = order[i]
        if group is None:
            _compute_one(expr, revived)
        else:
            if group[1](order):
                _refresh_members(order, group)
            else:
                for m in group[0]:  # the arrays did not allow fusing: op by op
                    order[m]._compute()
                expr._compute()
        for j in drops:
            order[j].values = None


def _refresh_members(order, group):
    """After a group's fused run: its members were not computed, and are made fresh
    without values, as if released (computed again only if something reads them; a value
    an earlier, unfused run left is out of date: dropped).

    Fresh means each member's input versions are its inputs' current ones. Those of a
    member reading only other members and constant or trainable sources change only when
    such a source gets a new value or a member computes on its own (both move an epoch);
    otherwise, as in a model run over and over, only the members reading anything else
    (the group's input) are brought up to date: a group of 60 ops spent 0.04 ms on the
    others after every run."""
    members, _, volatile, stamp = group
    now = (_source_epoch[0], _fused_epoch[0])
    for m in (volatile if stamp[0] == now else members):
        m = order[m]
        m.values = None
        m.input_versions = tuple([v.expr.version for v in m.inputs])
    stamp[0] = now


def _compute_one(expr, revived):
    if revived and expr.id in revived:
        version = expr.version  # released earlier: the same values, the same version
        expr._compute()
        expr.version = version
    else:
        expr._compute()


def _schedule(length, groups, member_final, release):
    """``[(position, group or None, positions released after it)]`` for the positions of
    an order of ``length`` that compute (fused members compute with their group's final
    Expr, so the values they were the last reader of are released only after it)."""
    deferred = {}
    for m, final in member_final.items():
        done = release.get(m)
        if done:
            deferred.setdefault(final, []).extend(done)
    schedule = []
    for i in range(length):
        if i in member_final:
            continue
        schedule.append((i, groups.get(i), tuple(release.get(i, ())) +
                         tuple(deferred.get(i, ()))))
    return schedule


# Plans of recent evaluation orders, by the order's Expr ids and the shape and structure
# epochs (a resize or a rewired Var makes a new key). Positions only, no Exprs: a cached
# plan keeps no graph alive. A release planned while nothing else held a value stays
# right if something takes hold of it later: reading it then recomputes it.
_ORDER_PLANS = OrderedDict()
_ORDER_PLANS_LOCK = threading.Lock()  # graphs may be read from several Python threads
_MAX_ORDER_PLANS = 64
_MIN_CACHED_ORDER = 8
_NO_PLAN = ({}, {}, {}, None)
_structure_epoch = [0]


def bump_structure_epoch():
    """Note that a Var was rewired (``replace``, ``fix_as_*``): cached plans are stale."""
    _structure_epoch[0] += 1


def _order_plan(order, held=None):
    """``(groups, member_final, release, schedule)`` for ``order``, by positions in it:
    ``groups[final] = (member positions, compute(order) -> bool, positions of the
    members with inputs from outside, [stamp])`` (see :func:`_refresh_members`) for
    chains computed by one call that stores the final Expr's value
    (:mod:`.ops.fusion_block` blocks first, then :mod:`.ops.fusion_conv_pool` conv + max
    pool pairs, :mod:`.ops.fusion_add_relu`, :mod:`.ops.fusion_dense` dense layers and
    :mod:`.ops.fusion` multiply-add pairs, each not touching an earlier group);
    ``member_final[m]`` the final position of member ``m``; ``release[i]`` the positions
    whose values go after position ``i`` computed (:func:`_release_plan`); ``schedule``
    what a run does, in turn (:func:`_schedule`), None when nothing is fused or
    released.

    ``held``: a list kept beside ``order`` (a root's op list, :func:`_op_ancestors`) that
    holds its plan with the epochs it was made at; found there, the plan needs no key of
    the order's Expr ids (0.01 ms for a network's list, after its kernels left the
    caches cold)."""
    epochs = (_epoch[0], _structure_epoch[0])
    if held and held[0] == epochs:
        return held[1]
    # Small orders (a few ops of a numpy-like script, built afresh each time) are planned
    # each time: cheaper than keying, caching and evicting them. A small network read run
    # after run keeps its plan in ``held`` all the same (its planners cost 0.04 ms a
    # run for a classifier head of five ops).
    cached = len(order) >= _MIN_CACHED_ORDER
    if cached:
        key = (tuple([e.id for e in order]),) + epochs
        with _ORDER_PLANS_LOCK:
            plan = _ORDER_PLANS.get(key)
            if plan is not None:
                _ORDER_PLANS.move_to_end(key)
        if plan is not None:
            if held is not None:
                held[:] = [epochs, plan]
            return plan
    names = {e.op.name for e in order}
    if not cached and "add" not in names and "conv2d" not in names:
        return _NO_PLAN  # nothing to fuse (chains end in an add or a conv) or release
    position = {id(e): i for i, e in enumerate(order)}
    groups = {}
    claimed = set()

    def add_group(final, members, run):
        if final in claimed or any(m in claimed for m in members):
            return
        claimed.add(final)
        claimed.update(members)
        groups[final] = (tuple(members), run, _volatile_members(order, members), [None])

    # Each planner only where its ops occur (a planner's walk costs more than the check).
    planners = _planners()
    if "conv2d" in names:
        for block in planners.fusion_block.plan(order).values():
            add_group(position[id(block.final)], [position[id(m)] for m in block.members],
                      block.runner(position))
    if "max_pool" in names and "conv2d" in names:
        for fused in planners.fusion_conv_pool.plan(order).values():
            add_group(position[id(fused.pool)], [position[id(m)] for m in fused.members],
                      fused.runner(position))
    if "relu" in names and "add" in names:
        for fused in planners.fusion_add_relu.plan(order).values():
            add_group(position[id(fused.relu)], [position[id(m)] for m in fused.members],
                      fused.runner(position))
    if "matmul" in names and "add" in names:
        for dense in planners.fusion_dense.plan(order).values():
            add_group(position[id(dense.add)], [position[id(m)] for m in dense.members],
                      dense.runner(position))
    if "multiply" in names and "add" in names:
        for consumer, producer in planners.fusion.plan(order).values():
            c, p = position[id(consumer)], position[id(producer)]
            add_group(c, [p], partial(_compute_fused_at, c, p))
    member_final = {m: f for f, group in groups.items() for m in group[0]}
    for m in member_final:
        order[m].fused = True
    # Small orders keep their values: a release plan costs more than it saves there, and
    # a network is never that small.
    release = {i: tuple([position[id(e)] for e in exprs])
               for i, exprs in _release_plan(order).items()} if cached else {}
    schedule = _schedule(len(order), groups, member_final, release) \
        if groups or release else None
    plan = (groups, member_final, release, schedule)
    # After a resize the metas of the ops below it are inferred again only as they compute
    # (or, fused, as they store): a plan made from stale metas may have missed a fusion
    # (never made a wrong one: the fused computes check the arrays), so it serves this
    # run only and the next run plans again from fresh metas.
    if (cached or held is not None) and all(_signature(e.inputs) == e.in_sig
                                             for e in order):
        if cached:
            with _ORDER_PLANS_LOCK:
                _ORDER_PLANS[key] = plan
                if len(_ORDER_PLANS) > _MAX_ORDER_PLANS:
                    _ORDER_PLANS.popitem(last=False)
        if held is not None:
            held[:] = [epochs, plan]
    return plan


def _volatile_members(order, members):
    """The positions of ``members`` with an input that is neither another member nor a
    constant or trainable source (see :func:`_refresh_members`)."""
    inside = {id(order[m]) for m in members}
    return tuple([m for m in members if any(
        id(v.expr) not in inside and (v.expr.op is not None or
                                      v.expr.kind not in EPOCH_SOURCES)
        for v in order[m].inputs)])


def _compute_fused_at(consumer, producer, order):
    return _planners().fusion.compute_fused(order[consumer], order[producer])


def _evaluate_roots(roots):
    """Bring every Expr of ``roots`` up to date (computing, reviving as needed)."""
    revived = set()
    order = _stale_order(roots, revived)
    if order:
        # The whole of a root's cached op list (a model run over and over): its plan is
        # kept beside the list.
        known = roots[0].ancestry[1] if len(roots) == 1 and roots[0].ancestry else None
        _run_order(order, revived, known[2] if known and known[0] is order else None)


# References to a Var held only by this evaluation's consumers: one per consumer inputs
# list that holds it, plus the ``uses`` entry, the loop variable and getrefcount's argument
# in :func:`_release_plan` (Expr.outputs holds weak references).
_RELEASE_EXTRA_REFS = 3


def _release_plan(order):
    """``{position in order: [Exprs whose values can go once that Expr computed]}``.

    An intermediate value is released after its last consumer in ``order`` computed when
    nothing outside this evaluation can read it: its Var is referenced only by the input
    lists of consumers in ``order`` (no user variable, no fresh consumer, no gradient rule
    holds it). Without this, every intermediate of a network stays cached and each op
    writes to memory that no cache holds; with it the allocator hands the freed arrays to
    the next ops while they are still in cache, as an inference engine's arena does.
    Should anything read a released Expr later, it is computed again like any stale op.

    Values computed from trainable parameters are kept: a training step that follows a
    read of the loss takes the forward pass from them. So are values computed from
    constants only (a weight scaled in the graph, say): they never go stale, and
    releasing them would mean computing them again on every later evaluation.
    """
    in_order = {id(e) for e in order}
    constant = _constant_only(order)
    uses = {}  # id(var) -> [var, consumers in order, position of the last one]
    for i, expr in enumerate(order):
        for v in expr.inputs:
            src = v.expr
            if src.op is None:
                if src.kind == TRAINABLE:
                    return {}
                continue
            if id(src) not in in_order:
                continue
            entry = uses.get(id(v))
            if entry is None:
                uses[id(v)] = [v, 1, i]
            else:
                entry[1] += 1
                entry[2] = i
    release = {}
    for entry in uses.values():
        v = entry[0]
        if len(v.expr._outs) == 1 and id(v.expr) not in constant and \
                sys.getrefcount(v) == entry[1] + _RELEASE_EXTRA_REFS:
            release.setdefault(entry[2], []).append(v.expr)
    return release


def _constant_only(order):
    """Ids of the Exprs of ``order`` computed from constants only (a function of its own:
    a loop variable holding a Var would hide a graph-only one from _release_plan)."""
    constant = set()
    for expr in order:
        if expr.inputs and all(id(v.expr) in constant if v.expr.op is not None
                               else v.expr.kind == CONST for v in expr.inputs):
            constant.add(id(expr))
    return constant


def evaluate_many(variables):
    """Values of several Vars, computing what is stale above them in one graph walk.

    Reading Vars one by one walks the shared graph above them once each; an optimizer
    step reading every gradient would pay that walk per parameter.

    Parameters
    ----------
    variables : list of Var

    Returns
    -------
    list of numpy.ndarray
        The engine's cached (read-only) values, one per Var.
    """
    variables = list(variables)
    exprs = [v.expr for v in variables]
    _evaluate_roots(exprs)
    values = []
    for v, expr in zip(variables, exprs):
        if expr.values is None:
            expr.evaluate()  # an unwritten placeholder: raises its clear error
        values.append(expr.values[v.index])
    return values


def _meta_of(array):
    return TensorMeta(array.shape, array.dtype)


def _describe(opname, metas, message):
    shapes = ", ".join(str(list(m.shape)) if m.shape is not None else "?" for m in metas)
    dtypes = ", ".join(str(m.dtype) for m in metas)
    return f"{opname}: {message} (input shapes: {shapes}; dtypes: {dtypes})"


def apply(opname, inputs, **attrs):
    """Build op ``opname`` on ``inputs`` (Vars) and return its output Vars.

    Shape and dtype inference runs now, so a mismatch raises on the caller's line with the
    op, the input shapes and dtypes in the message. Nothing is computed.
    """
    op = get_op(opname)
    metas = [v.expr.metas[v.index] for v in inputs]
    unknown = False
    for m in metas:
        if m.shape is None:
            unknown = True
            break
    if unknown:
        # Shape depends on data upstream: ask the op anyway when it copes with unknowns
        # (it returns shapes of None), otherwise computing will tell.
        out_metas, partial = _infer_unknown(op, metas, attrs, inputs)
    else:
        out_metas = _run_infer(op, metas, attrs)
        partial = None
        if len(out_metas) == 1 and out_metas[0].shape is None and op.name in _SHAPE_INPUT:
            partial = _rank_partial(op, inputs)
    fmt = inputs[0].expr.data_format if inputs else None
    expr = Expr(op, "op", inputs, attrs, out_metas, data_format=fmt,
                in_sig=tuple([(m.shape, m.dtype) for m in metas]))
    if partial is not None:
        _set_partial(expr, partial)
    return expr.outputs


def _run_infer(op, metas, attrs):
    try:
        out = op.infer(metas, **attrs)
    except OpError as exc:
        raise OpError(_describe(op.name, metas, str(exc))) from None
    result = []
    for s, d in out:
        if s is not None:
            for m in metas:
                if s is m.shape:  # handed through from an input: already ints
                    break
            else:
                s = tuple(map(int, s))
        if d is not None and not isinstance(d, np.dtype):
            d = np.dtype(d)
        result.append(_new_meta(TensorMeta, (s, d, None)))
    return result


# TensorMeta(shape, dtype) without the NamedTuple constructor's Python-level overhead.
_new_meta = tuple.__new__


# What is known of shapes only run time fixes (dynamic input dims): per op Expr, a
# _Partial. Kept beside the Expr, not in its metas: ``TensorMeta.shape`` stays None for
# such outputs, so that nothing mistakes a partial shape for a computed one. Weak keys:
# the entry goes with the Expr.
_PARTIAL = WeakKeyDictionary()

# Sizes tried for the dynamic dimensions when inferring through them (see _infer_unknown):
# large, so that kernels, strides and pads fit, and different, so that a dimension that
# depends on them shows it by differing between the two tries.
_PROBES = (1031, 1297)

# Shape-chain values (Shape, Gather, Concat ... of dims) are computed during the tries
# when they are integer tensors at most this large: a Reshape's target then has a rank.
_PROBE_VALUE_LIMIT = 64

# Ops whose result depends on their input's shape only (not its values).
_SHAPE_READERS = frozenset(["shape", "rank", "size"])


class _Partial:
    """What the two tries of :func:`_infer_unknown` learnt about an Expr's outputs.

    ``shapes``: per output, a tuple with -1 for dims that differed between the tries
    (None: unknown rank). ``values``: per try, per output, the small integer value the
    output had in that try (None where it has none).
    """

    __slots__ = ("shapes", "values")

    def __init__(self, shapes, values):
        self.shapes, self.values = shapes, values


def partial_shape(var):
    """What is known of ``var``'s shape before it is computed.

    Parameters
    ----------
    var : Var

    Returns
    -------
    tuple of int or None
        The shape with ``-1`` for each dimension only run time fixes (a placeholder's
        dynamic dims and what follows from them); None when not even the rank is known
        (data-dependent shapes: NonZero, a loop's results ...).
    """
    expr = var.expr
    meta = expr.metas[var.index]
    if meta.shape is not None:
        return tuple(meta.shape)
    if expr.op is None:
        declared = expr.attrs.get("declared_shape")
        return tuple(declared) if declared is not None else None
    partial = _PARTIAL.get(expr)
    if partial is None or var.index >= len(partial.shapes):
        return None
    return partial.shapes[var.index]


def _probe_meta(var, meta, trial):
    """``var``'s meta in try number ``trial``: dynamic dims set to that try's size, and
    the value it had in that try when it is a tracked shape-chain value."""
    if meta.shape is not None:
        return meta
    shape = partial_shape(var)
    if shape is None or meta.dtype is None:
        return None
    value = None
    partial = _PARTIAL.get(var.expr)
    if partial is not None and partial.values is not None:
        value = partial.values[trial][var.index]
    size = _PROBES[trial]
    return TensorMeta(tuple(size if d < 0 else d for d in shape), meta.dtype, value)


def _set_partial(expr, partial):
    if partial is None:
        _PARTIAL.pop(expr, None)
    else:
        _PARTIAL[expr] = partial


def _infer_unknown(op, metas, attrs, inputs):
    """Output metas of ``op`` when some input shape is only known at run time.

    The outputs' shapes stay None (run time fixes them), but their dtypes, and what is
    known of their shapes, are worked out: when every input's rank is known (see
    :func:`partial_shape`), the op's own inference runs twice, with every dynamic
    dimension set to one probe size and then to another. An output dimension that comes
    out the same both times does not depend on the dynamic dims; one that differs is
    dynamic (-1). Small integer outputs (shape chains) are computed in both tries, so that
    ops reading them as shapes (Reshape) infer too. Returns ``(metas, _Partial or None)``.
    """
    n = op.n_outputs
    if callable(n):  # control flow: the count is set by the op's subgraph attributes
        n = n(attrs)
    tries = []
    for trial in range(len(_PROBES)):
        probe = [_probe_meta(v, m, trial) for v, m in zip(inputs, metas)]
        out = None if any(m is None for m in probe) else _probe_infer(op, probe, attrs)
        if out is None or (n >= 0 and len(out) != n) or (tries and len(out) != len(tries[0][0])):
            tries = None
            break
        tries.append((out, _probe_values(op, probe, attrs, out)))
    if tries is None:
        if n < 0:
            raise OpError(_describe(op.name, metas, "the number of outputs depends on an "
                                    "input shape that is not known yet; write the "
                                    "placeholder first"))
        partial = _rank_partial(op, inputs) if n == 1 and metas[0].dtype is not None \
            else None
        if partial is not None:
            return [TensorMeta(None, metas[0].dtype)], partial
        return [TensorMeta(None, None)] * n, None
    out_metas, shapes = [], []
    for (s1, d1), (s2, d2) in zip(tries[0][0], tries[1][0]):
        dtype = d1 if d1 == d2 else None
        if dtype is not None and not isinstance(dtype, np.dtype):
            dtype = np.dtype(dtype)
        if s1 is None or s2 is None or len(s1) != len(s2):
            rank = _rank_from_shape_input(op, inputs) if len(tries[0][0]) == 1 else None
            shapes.append(None if rank is None else (-1,) * rank)
        else:
            shapes.append(tuple(int(a) if int(a) == int(b) else -1 for a, b in zip(s1, s2)))
        out_metas.append(TensorMeta(None, dtype))
    values = [t[1] for t in tries]
    if any(v is None for v in values):
        values = None
    return out_metas, _Partial(tuple(shapes), values)


# Ops whose result takes its rank from the length of a 1-d shape tensor (input number
# given): when that tensor's values are only known at run time their inference can say
# nothing, but the rank follows from its length (Expand: at least the input's rank).
_SHAPE_INPUT = {"onnx_reshape": 1, "onnx_expand": 1}


def _rank_from_shape_input(op, inputs):
    """The result rank of a :data:`_SHAPE_INPUT` op from its shape tensor's length."""
    which = _SHAPE_INPUT.get(op.name)
    if which is None or which >= len(inputs):
        return None
    target = partial_shape(inputs[which])
    if target is None or len(target) != 1 or target[0] < 0:
        return None
    rank = target[0]
    if op.name == "onnx_expand":
        data = partial_shape(inputs[0])
        if data is None:
            return None
        rank = max(rank, len(data))
    return rank


def _rank_partial(op, inputs):
    """What a :data:`_SHAPE_INPUT` op's result shape is known to be from its shape tensor
    alone: a Reshape to sizes the tries computed (all positive) has them, as far as the
    two tries agree; otherwise only the rank is known."""
    if op.name == "onnx_reshape" and len(inputs) > 1:
        partial = _PARTIAL.get(inputs[1].expr)
        values = None if partial is None or partial.values is None else \
            [v[inputs[1].index] for v in partial.values]
        if values is not None and all(v is not None and v.ndim == 1 and (v > 0).all()
                                      for v in values) and values[0].size == values[1].size:
            return _Partial((tuple(int(a) if a == b else -1
                                   for a, b in zip(values[0], values[1])),), None)
    rank = _rank_from_shape_input(op, inputs)
    return None if rank is None else _Partial(((-1,) * rank,), None)


def _probe_infer(op, probe, attrs):
    """``op``'s inference on the metas of one try; None when the op refuses those shapes
    (then nothing is known of its outputs, as before trying)."""
    try:
        out = op.infer(probe, **attrs)
    except Exception:  # any refusal means "unknown", as before trying
        return None
    return list(out)


def _probe_values(op, probe, attrs, out):
    """The outputs' values in one try when they are small integer tensors computed from
    known values only (shape chains); None otherwise."""
    if not out:
        return None
    arrays = []
    for m in probe:
        if m.value is not None:
            arrays.append(np.asarray(m.value))
        elif op.name in _SHAPE_READERS:
            # Only the shape is read: a zero-strided array of the try's shape (no memory).
            arrays.append(np.broadcast_to(np.zeros((), m.dtype), m.shape))
        else:
            return None
    for s, d in out:
        if s is None or d is None or np.dtype(d).kind not in "iu" or \
                int(np.prod(s, dtype=np.int64)) > _PROBE_VALUE_LIMIT:
            return None
    try:
        with np.errstate(all="ignore"):
            result = op.compute(arrays, **attrs)
    except Exception:  # a value that cannot be computed stays unknown
        return None
    if isinstance(result, np.ndarray) or np.isscalar(result):
        result = [result]
    result = [np.asarray(r) for r in result]
    for r, (s, d) in zip(result, out):
        if r.shape != tuple(s):
            return None
        r.flags.writeable = False
    return result
