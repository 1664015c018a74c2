"""Evaluation-time fusion of ``a * b + c`` into one compiled pass.

When the engine is about to compute a ``multiply`` whose only consumer is an ``add`` in
the same evaluation, and nothing else can ever read the product (its Var is referenced
only by the graph itself), the product is not stored: the ``add`` computes
``a * b + c`` in one pass of :func:`mnn._cython.elementwise.fma`, rounded exactly as
numpy's two steps. The skipped ``multiply`` keeps no value but stays fresh, as a released
value does (mnn/express/graph.py); should anything read it later (a gradient rule, say),
it is computed then, under the same version. Results never change; only the temporary
and one pass over memory are saved.
"""
import math
import sys

import numpy as np

from ..._cython import elementwise as _kernels
from ..runtime import get_thread_number

__all__ = ["compute_fused", "plan"]

# Below this many elements the saved pass costs less than the bookkeeping.
MIN_SIZE = 1 << 15
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# References to a product Var held only by the graph: the one consumer's inputs list,
# plus the loop variable and getrefcount's argument here (Expr.outputs holds weak refs).
_GRAPH_ONLY_REFS = 3


def plan(order):
    """Pairs ``{id(add_expr): (add_expr, mul_expr)}`` to fuse within ``order``."""
    position = {id(e): i for i, e in enumerate(order)}
    fused = {}
    for consumer in order:
        if consumer.op.name != "add" or len(consumer.inputs) != 2:
            continue
        meta = consumer.metas[0]
        if meta.shape is None or meta.dtype not in _FLOATS:
            continue
        if math.prod(meta.shape) < MIN_SIZE:
            continue
        for v in consumer.inputs:
            producer = v.expr
            if (producer.op is None or producer.op.name != "multiply"
                    or id(producer) not in position or producer is order[-1]
                    or sys.getrefcount(v) != _GRAPH_ONLY_REFS):
                continue
            if all(_same(u.expr.metas[u.index], meta) for u in producer.inputs) and all(
                    _same(u.expr.metas[u.index], meta) for u in consumer.inputs):
                fused[id(consumer)] = (consumer, producer)
                break
    return fused


def _same(m, meta):
    return m.shape == meta.shape and m.dtype == meta.dtype


def compute_fused(consumer, producer):
    """Compute ``consumer`` (an add) as ``a * b + c``; False if the arrays do not allow
    it (then the caller computes both ops the ordinary way)."""
    product = next(v for v in consumer.inputs if v.expr is producer)
    other = next(v for v in consumer.inputs if v is not product)
    arrays = [u.expr.values[u.index] if u.expr.values is not None else None
              for u in list(producer.inputs) + [other]]
    if any(a is None or not a.flags.c_contiguous for a in arrays):
        return False
    a, b, c = arrays
    if not (a.shape == b.shape == c.shape and a.dtype == b.dtype == c.dtype):
        return False
    out = np.empty(c.shape, c.dtype)
    _kernels.fma(a.reshape(-1), b.reshape(-1), c.reshape(-1), out.reshape(-1),
                 get_thread_number())
    consumer.store_result(out, [producer])
    return True
