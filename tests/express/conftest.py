"""Shared helpers for the express tests: a finite-difference gradient check, a count of
op computations."""
import mnn.expr as F
import numpy as np
import pytest


def numeric_gradcheck(fn, arrays, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """Compare ``F.grad`` of ``sum(fn(*vars) * w)`` with central differences (float64).

    ``fn`` maps Vars to one Var; ``arrays`` are the float64 inputs. The forward values
    themselves are checked against numpy elsewhere; this checks the gradient rules.
    """
    rng = np.random.default_rng(seed)
    holders = [F.placeholder(list(a.shape), dtype=np.float64) for a in arrays]
    for h, a in zip(holders, arrays):
        h.write(a)
    out = fn(*holders)
    weight = rng.standard_normal(out.shape)
    loss = F.reduce_sum(out * F.const(weight))
    grads = F.grad(loss, holders)
    for k, (h, a) in enumerate(zip(holders, arrays)):
        numeric = np.zeros(a.shape)
        flat = numeric.reshape(-1)
        for i in range(a.size):
            for sign in (1.0, -1.0):
                b = a.copy().reshape(-1)
                b[i] += sign * eps
                h.write(b.reshape(a.shape))
                flat[i] += sign * float(loss.read()) / (2 * eps)
            h.write(a)
        np.testing.assert_allclose(np.asarray(grads[k].read()), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k}")


@pytest.fixture
def gradcheck():
    return numeric_gradcheck


@pytest.fixture
def compute_counts(monkeypatch):
    """``{op name: computations}`` from now on (to check what a read recomputes)."""
    from mnn.express import graph

    counts = {}
    original = graph.Expr._compute

    def counted(self):
        counts[self.op.name] = counts.get(self.op.name, 0) + 1
        original(self)

    monkeypatch.setattr(graph.Expr, "_compute", counted)
    return counts
