"""Reverse-mode autodiff over the express graph.

Gradients are built with express ops from each op's rule in the op table, so they are
lazy graphs themselves (and can be differentiated again). An op on the path without a
rule raises, naming it: MNN silently skips such ops; a silently missing gradient is a
training bug nobody finds.
"""
import numpy as np

from .errors import OpError
from .graph import topological_order
from .var import Var, const, to_var

__all__ = ["grad"]


def _path_exprs(outputs, wanted):
    """Op Exprs between ``wanted`` sources and ``outputs``, consumers before producers."""
    wanted_ids = {v.expr.id for v in wanted}
    order = topological_order([v.expr for v in outputs])
    # Keep only Exprs that depend on a wanted Var.
    reaches = set()
    for expr in order:
        if expr.id in wanted_ids or any(v.expr.id in reaches for v in expr.inputs):
            reaches.add(expr.id)
    return [e for e in reversed(order) if e.id in reaches and e.op is not None], reaches


def grad(outputs, wrt, output_grads=None):
    """Gradients of ``outputs`` with respect to each Var in ``wrt``.

    Parameters
    ----------
    outputs : Var or list of Var
        What to differentiate. A non-scalar output needs its ``output_grads`` entry.
    wrt : list of Var
        The Vars to differentiate with respect to (any Vars, usually parameters).
    output_grads : list of (Var or array_like or None), optional
        The gradient flowing into each output; default ones for scalar outputs.

    Returns
    -------
    list of Var
        One gradient per ``wrt`` entry, shaped like it (zeros where no path exists).
    """
    from .ops.creation import ones_like, zeros_like

    if isinstance(outputs, Var):
        outputs = [outputs]
    outputs = list(outputs)
    wrt = list(wrt)
    if output_grads is None:
        output_grads = [None] * len(outputs)
    grads = {}  # (expr id, output index) -> Var

    def add(key, g):
        grads[key] = g if key not in grads else grads[key] + g

    for out, g in zip(outputs, output_grads):
        if g is None:
            if out.size != 1:
                raise OpError(f"grad: output {out.name} has shape {out.shape}; pass its "
                              "gradient in output_grads")
            g = _ones_for(out, ones_like)
        add((out.expr.id, out.index), to_var(g))

    exprs, reaches = _path_exprs(outputs, wrt)
    wrt_keys = {(v.expr.id, v.index) for v in wrt}
    for expr in exprs:
        eid = expr.id
        n_out = len(expr._outs)  # not ``outputs``: that makes Vars we may not need
        out_grads = [grads.get((eid, i)) for i in range(n_out)]
        if all(g is None for g in out_grads):
            continue
        needed = [v.expr.id in reaches and _is_float(v) for v in expr.inputs]
        if not any(needed):
            continue
        if expr.op.grad is None:
            raise OpError(f"grad: op {expr.op.name} has no gradient rule, and a gradient "
                          "must pass through it")
        in_grads = expr.op.grad(expr.inputs, expr.outputs, out_grads, **expr.attrs)
        for v, g, need in zip(expr.inputs, in_grads, needed):
            if g is not None and need:
                add((v.expr.id, v.index), g)
        # Free what is no longer needed unless it is asked for.
        for i in range(n_out):
            if (eid, i) not in wrt_keys:
                grads.pop((eid, i), None)
    result = []
    for v in wrt:
        g = grads.get((v.expr.id, v.index))
        # No path from the outputs: the gradient is zero (built only in that case).
        result.append(g if g is not None else zeros_like(v))
    return result


def _ones_for(out, ones_like):
    # A constant when the shape is known: the gradient ops that only reshape and
    # broadcast it are then constant too, and compiled plans fold them once.
    meta = out.expr.metas[out.index]
    if meta.shape is None or meta.dtype is None:
        return ones_like(out)
    return const(np.ones(meta.shape, meta.dtype))


def _is_float(v):
    # The static dtype without the ``dtype`` property's layers; unknown (data-dependent)
    # dtypes ask the property, which computes.
    expr = v.expr
    expr.refresh_metas()
    dtype = expr.metas[v.index].dtype
    if dtype is None:
        dtype = v.dtype
    return dtype.kind == "f"
