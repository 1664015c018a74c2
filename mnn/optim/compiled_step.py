"""Compiled training steps: the gradient graph of a loss, planned once per graph structure.

A training loop usually builds the same loss graph every step (new batch constants, the
same parameters and ops). Differentiating it and walking the lazy graph again each step
costs more Python time than a small model's kernels. :class:`StepCache` keys a loss
graph by its structure:

* each op with its attributes, which earlier node feeds each input, and its inferred
  output shapes and dtypes;
* parameters and other module state by identity (their values are read at every run);
* small constants (scalars, shape vectors, axes: at most ``_BAKED_MAX`` elements) by
  value, so ops on them are folded into the plan once;
* batch constants and placeholders by shape and dtype only: they are the plan's inputs.

On a key seen before, the step feeds this graph's sources into the compiled
:class:`~mnn.runtime.plan.Plan` of the earlier graph, which computes the forward pass,
the gradients and the state updates (batch norm's running statistics) with no graph walk
and releases each intermediate as soon as its last reader ran. A graph the key cannot
describe (shapes only computing tells, attributes holding objects such as subgraphs) is
not compiled: the optimizer differentiates and evaluates it lazily, as before.
"""
from collections import OrderedDict

import numpy as np

from ..express.autodiff import grad as _grad
from ..express.var import Var
from ..runtime.plan import Plan
from .step_fusion import drop_unit_products, fuse_dense_layers

__all__ = ["StepCache"]

# Constants up to this many elements are part of the key (and folded into the plan):
# scalars, shapes and axes, whose values ops' inference may depend on. Larger ones are
# data (batches, one-hot targets, dropout masks) and become plan inputs.
_BAKED_MAX = 16

# Plans kept per optimizer (a loop alternating a few graph shapes: train/last batch).
_MAX_PLANS = 4


class _Uncacheable(Exception):
    """The graph has something the structural key cannot describe."""


def _freeze(value):
    """A hashable stand-in for an attribute value (raises _Uncacheable for objects)."""
    if value is None or isinstance(value, (bool, int, float, str, np.dtype, np.generic)):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray) and value.size <= _BAKED_MAX:
        return ("nd", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    raise _Uncacheable(type(value).__name__)


def _attrs_key(attrs, memo):
    # One graph shares attribute dicts rarely, but the same op rebuilt each step gets an
    # equal dict: freezing is a handful of tuple builds.
    if not attrs:
        return ()
    key = memo.get(id(attrs))
    if key is None:
        items = sorted(attrs.items())
        for _, v in items:
            kind = type(v)
            if kind not in _PLAIN and not (kind is tuple and all(type(e) in _PLAIN
                                                                 for e in v)):
                key = tuple([(k, _freeze(v)) for k, v in items])
                break
        else:
            # Scalars, strings and tuples of them (the usual attributes) are their own
            # frozen form.
            key = tuple(items)
        memo[id(attrs)] = key
    return key


# Attribute value types that are hashable and compare by value as they are.
_PLAIN = frozenset([bool, int, float, str, type(None)])


def graph_key(order, identity_ids):
    """The structural key of the Exprs in ``order`` and the sources fed to its plan.

    Parameters
    ----------
    order : list of Expr
        Inputs before consumers (``topological_order``).
    identity_ids : set of int
        Ids of source Exprs keyed by identity (parameters, module state).

    Returns
    -------
    tuple
        ``(key, fed)``: the hashable key, and the source Exprs the plan takes as inputs,
        in order.
    """
    index = {}
    parts = []
    fed = []
    memo = {}
    for i, expr in enumerate(order):
        index[expr.id] = i
        if expr.op is None:
            if expr.values is None:
                raise _Uncacheable("unwritten placeholder")
            value = expr.values[0]
            if expr.kind == "trainable":
                parts.append(("T", expr.id, value.shape, value.dtype))
            elif expr.id in identity_ids:
                parts.append(("S", expr.id, value.shape, value.dtype))
                fed.append(expr)
            elif expr.kind == "const" and value.size <= _BAKED_MAX:
                parts.append(("c", value.shape, value.dtype, value.tobytes()))
            else:
                parts.append(("F", expr.kind, value.shape, value.dtype))
                fed.append(expr)
            continue
        for meta in expr.metas:
            if meta.shape is None or meta.dtype is None:
                raise _Uncacheable("shape known only by computing")
        # The inferred output shapes too: inference may have read a constant's values
        # (a boolean mask's count), and gradient rules build on those shapes.
        parts.append((expr.op.name, _attrs_key(expr.attrs, memo), expr.data_format,
                      tuple([(index[v.expr.id], v.index) for v in expr.inputs]),
                      tuple([(m.shape, m.dtype) for m in expr.metas])))
    return tuple(parts), fed


class StepCache:
    """Compiled gradient plans of the loss graphs an optimizer steps on."""

    def __init__(self):
        self._plans = OrderedDict()  # key -> Plan

    def clear(self):
        """Forget every plan (e.g. after parameters were replaced)."""
        self._plans.clear()

    def run(self, order, wanted, params, extra, identity_ids, computed=0):
        """Gradients of ``wanted`` (the loss) w.r.t. ``params`` and the values of ``extra``.

        Parameters
        ----------
        order : list of Expr
            Every Expr above the loss and ``extra`` (inputs before consumers).
        wanted : Var
            The scalar loss.
        params : list of Var
            Trainable parameters (sources).
        extra : list of Var
            Further values computed with the gradients (state updates).
        identity_ids : set of int
            Source Expr ids read by identity (see :func:`graph_key`).
        computed : int
            How many leading Exprs of ``order`` hold fresh values (the loss was read):
            the plan takes them instead of computing the forward pass again.

        Returns
        -------
        list of ndarray or None
            The gradients, then ``extra``'s values; None when the graph cannot be compiled
            (the caller differentiates it lazily instead).
        """
        try:
            key, fed = graph_key(order, identity_ids)
        except _Uncacheable:
            return None
        key = (key, _position(order, wanted), tuple([(v.expr.id, v.index) for v in params]),
               tuple([_position(order, v) for v in extra]))
        plan = self._plans.get(key)
        if plan is None:
            outputs = _grad([wanted], params) + list(extra)
            plan = Plan([Var(e, 0) for e in fed], outputs, fold_constants=True,
                        source_inputs=True)
            metas = _slot_metas(plan, fed)
            drop_unit_products(plan, metas)
            fuse_dense_layers(plan, metas)
            # The plan needs slots, not the graph it came from: do not keep this step's
            # Exprs (and any values read from them) alive. Slots are kept by position
            # in ``order``, which later graphs of this key share.
            slot_of = plan.slot_of
            plan.slot_at = [
                [slot_of.get((e.id, i)) for i in range(len(e.metas))] if e.op is not None
                else () for e in order]
            plan.slot_of = None
            plan.input_vars = [_Named(v.name) for v in plan.input_vars]
            plan.output_vars = None
            self._plans[key] = plan
            if len(self._plans) > _MAX_PLANS:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        arrays = [e.values[0] for e in fed]
        if not computed:
            return plan.run(arrays)
        seeds = {}
        for expr, slots in zip(order[:computed], plan.slot_at):
            for s, value in zip(slots, expr.values or ()):
                if s is not None:
                    seeds[s] = value
        return plan.run_seeded(arrays, seeds)


def _slot_metas(plan, fed):
    """``slot -> TensorMeta`` of every plan slot whose shape inference knows (the key
    fixed the fed sources' shapes)."""
    metas = plan.infer_slots([e.metas[0] for e in fed])
    return {s: m for s, m in enumerate(metas) if m is not None and m.shape is not None}


def _position(order, var):
    for i, expr in enumerate(order):
        if expr is var.expr:
            return (i, var.index)
    raise RuntimeError("mnn internal error: a state update is not in its step's graph")


class _Named:
    """Stands for a plan input in error messages once its graph is released."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name
