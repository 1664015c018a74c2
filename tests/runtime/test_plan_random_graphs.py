"""Random DAGs through the compiled Plan (liveness, folding, fusion) against numpy."""
import mnn.expr as F
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mnn.runtime.plan import Plan

f32 = np.float32
_UNARY = {"tanh": (F.tanh, np.tanh), "neg": (F.negative, np.negative),
          "relu": (F.relu, lambda a: np.maximum(a, f32(0)))}
_BINARY = {"add": (F.add, np.add), "mul": (F.multiply, np.multiply),
           "max": (F.maximum, np.maximum), "sub": (F.subtract, np.subtract)}


@st.composite
def dags(draw):
    """(n_inputs, n_consts, nodes, outputs); a node reads earlier values by index."""
    n_in = draw(st.integers(1, 3))
    n_const = draw(st.integers(0, 2))
    nodes = []
    for k in range(draw(st.integers(1, 14))):
        avail = n_in + n_const + k
        if draw(st.booleans()):
            nodes.append(("u", draw(st.sampled_from(sorted(_UNARY))),
                          draw(st.integers(0, avail - 1))))
        else:
            nodes.append(("b", draw(st.sampled_from(sorted(_BINARY))),
                          draw(st.integers(0, avail - 1)), draw(st.integers(0, avail - 1))))
    total = n_in + n_const + len(nodes)
    outs = draw(st.lists(st.integers(0, total - 1), min_size=1, max_size=4))
    return n_in, n_const, nodes, outs


@settings(max_examples=60, deadline=None)
@given(dags(), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_random_dag_matches_numpy(dag, width, seed):
    n_in, n_const, nodes, outs = dag
    rng = np.random.default_rng(seed)
    consts = [rng.standard_normal(width).astype(f32) for _ in range(n_const)]
    inputs = [F.placeholder([-1]) for _ in range(n_in)]
    vals = list(inputs) + [F.const(c) for c in consts]
    for node in nodes:
        if node[0] == "u":
            vals.append(_UNARY[node[1]][0](vals[node[2]]))
        else:
            vals.append(_BINARY[node[1]][0](vals[node[2]], vals[node[3]]))
    plan = Plan(inputs, [vals[i] for i in outs])
    for n in (width, width + 2):  # a second shape is checked and planned anew
        arrays = [rng.standard_normal(n).astype(f32) for _ in range(n_in)]
        ref = list(arrays) + [np.broadcast_to(c, (width,)) if n == width else None
                              for c in consts]
        if n != width and n_const:
            continue  # constants of the first width do not broadcast to another
        for node in nodes:
            if node[0] == "u":
                ref.append(_UNARY[node[1]][1](ref[node[2]]).astype(f32))
            else:
                ref.append(_BINARY[node[1]][1](ref[node[2]], ref[node[3]]).astype(f32))
        got = plan.run(arrays)
        for g, i in zip(got, outs):
            np.testing.assert_allclose(g, ref[i], rtol=1e-6, atol=1e-6)
