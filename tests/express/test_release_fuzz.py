"""Random graphs read and written in random order: every value read equals numpy's,
whatever the engine released, fused (a*b+c, relu(a+b)) or revived in between."""
import gc

import mnn.expr as F
import numpy as np
import pytest

from mnn.express import graph
from mnn.express.ops import fusion

# Large enough for the multiply-add fusion.
N = fusion.MIN_SIZE + 7

_UNARY = {
    "sin": (F.sin, np.sin),
    "tanh": (F.tanh, np.tanh),
    "relu": (F.relu, lambda a: np.maximum(a, 0)),
    "scale": (lambda v: v * 0.5, lambda a: a * 0.5),
}
_BINARY = {
    "add": (lambda u, v: u + v, np.add),
    "sub": (lambda u, v: u - v, np.subtract),
    "mul": (lambda u, v: u * v, np.multiply),
}


def _build(rng, n_inputs, n_ops):
    """Random DAG: ``(placeholders, nodes)``; each node is ``(Var, numpy function of the
    input arrays)``."""
    holders = [F.placeholder([N], dtype=np.float64) for _ in range(n_inputs)]
    nodes = [(h, (lambda k: lambda xs: xs[k])(k)) for k, h in enumerate(holders)]
    for _ in range(n_ops):
        if rng.random() < 0.45:
            name = rng.choice(sorted(_UNARY))
            f, g = _UNARY[name]
            var, ref = nodes[rng.integers(len(nodes))]
            nodes.append((f(var), (lambda g, ref: lambda xs: g(ref(xs)))(g, ref)))
        else:
            name = rng.choice(sorted(_BINARY))
            f, g = _BINARY[name]
            (va, ra), (vb, rb) = (nodes[i] for i in rng.integers(len(nodes), size=2))
            nodes.append((f(va, vb), (lambda g, ra, rb: lambda xs: g(ra(xs), rb(xs)))(
                g, ra, rb)))
    return holders, nodes


def _upstream(var, rng, ref_of):
    """A random Var above ``var`` that the test can check (its numpy function known)."""
    for _ in range(int(rng.integers(1, 4))):
        inputs = var.expr.inputs
        if not inputs:
            break
        var = inputs[int(rng.integers(len(inputs)))]
    return var if id(var) in ref_of else None


@pytest.mark.parametrize("small_orders_release", [False, True])
@pytest.mark.parametrize("seed", range(16))
def test_random_reads_and_writes_match_numpy(seed, small_orders_release, monkeypatch):
    if small_orders_release:
        monkeypatch.setattr(graph, "_MIN_CACHED_ORDER", 1)
    rng = np.random.default_rng(seed)
    holders, nodes = _build(rng, 2, 20)
    # The user keeps only some Vars: the rest are referenced by the graph alone, so the
    # engine may release or fuse them away.
    kept = {i for i in range(len(nodes)) if rng.random() < 0.3} | {len(nodes) - 1}
    refs = [ref for _, ref in nodes]
    # By id: a Var kept here would count as a user's reference. The graph keeps the
    # Vars alive (kept ones reach all of them), so ids are not reused meanwhile.
    ref_of = {id(var): ref for var, ref in nodes}
    vars_kept = {i: nodes[i][0] for i in kept}
    del nodes
    gc.collect()
    xs = [rng.standard_normal(N) * 0.5 for _ in holders]
    for h, x in zip(holders, xs):
        h.write(x)
    collected = False
    for _ in range(40):
        action = rng.random()
        if action < 0.15:
            # an intermediate the engine may have released or fused away, read directly
            var = _upstream(vars_kept[sorted(vars_kept)[int(rng.integers(len(vars_kept)))]],
                            rng, ref_of)
            if var is not None:
                np.testing.assert_allclose(var.read(), ref_of[id(var)](xs), rtol=1e-12,
                                           atol=1e-12)
            del var
        elif action < 0.35:
            k = int(rng.integers(len(holders)))
            xs[k] = rng.standard_normal(N) * 0.5
            holders[k].write(xs[k])
        elif action < 0.42:
            # F.gc walks every object of the process (slow in a full test run): once in
            # a few seeds' runs
            if seed < 4 and not collected:
                F.gc(full=True)
                collected = True
        elif action < 0.55:
            # several outputs in one walk
            picks = sorted(vars_kept)[: 1 + int(rng.integers(len(vars_kept)))]
            values = graph.evaluate_many([vars_kept[i] for i in picks])
            for i, v in zip(picks, values):
                np.testing.assert_allclose(v, refs[i](xs), rtol=1e-12, atol=1e-12)
        else:
            i = sorted(vars_kept)[int(rng.integers(len(vars_kept)))]
            np.testing.assert_allclose(vars_kept[i].read(), refs[i](xs), rtol=1e-12,
                                       atol=1e-12)
