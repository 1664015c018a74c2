"""Every differentiable op of the table, on the op database's samples, against central
finite differences in float64.

For each op with a gradient rule, its samples with float inputs of at most ``MAX_ELEMENTS``
elements run through the op (float inputs as float64 placeholders, the others as the
sample's constants), and ``F.grad`` of a random weighting of its float outputs is
compared with finite differences. Op-specific reference checks against torch live in the
other test_grad_* files; this sweep makes sure no rule is missed.
"""
import os
import sys

import numpy as np
import pytest

import mnn.expr as F
from mnn.express.graph import apply
from test_grad_checker import check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "opdb"))
from opdb_core import load  # noqa: E402 - the op database lives beside, not in a package

MAX_ELEMENTS = 48

# Ops whose samples sit where the function is not differentiable, or whose gradient is
# zero/undefined by definition; each with the reason.
EXCLUDED = {
    "floor": "piecewise constant (zero gradient; samples may sit on integers)",
    "ceil": "piecewise constant",
    "round": "piecewise constant",
    "rint": "piecewise constant",
    "trunc": "piecewise constant",
    "sign": "piecewise constant",
    "heaviside": "piecewise constant",
    "full_like": "output does not depend on the input's values",
    "cast": "casts to float32 or integers: a float64 finite difference cannot see through "
            "them (test_grad_elementwise checks cast against torch)",
}

# Samples where the op refuses a gradient with a clear error (a documented limitation,
# not a silent wrong value): (op, substring of the error).
REFUSED = {
    "einsum": "repeated index",
    "np_pad": "no gradient for mode",
}

# Wrong gradients found by this sweep and not yet fixed, by (op, sample index), with the
# reason. Empty: every rule agrees with finite differences.
KNOWN_BUGS = {}


def _cases():
    samples = load("SAMPLES")
    ops = F.all_ops()
    cases = []
    for name in sorted(ops):
        if ops[name].grad is None or name in EXCLUDED or name not in samples:
            continue
        for i, (_, s) in enumerate(samples[name]):
            floats = [a for a in s.inputs if a.dtype.kind == "f"]
            if floats and sum(a.size for a in floats) <= MAX_ELEMENTS and \
                    all(a.size > 0 for a in floats):
                bug = KNOWN_BUGS.get((name, i))
                marks = [pytest.mark.xfail(strict=False, reason=bug)] if bug else []
                cases.append(pytest.param(name, s, id=f"{name}-{i}{s.describe()}",
                                          marks=marks))
    return cases


def _run(name, sample, holders):
    it = iter(holders)
    inputs = [next(it) if a.dtype.kind == "f" else F.const(a) for a in sample.inputs]
    outs = [o for o in apply(name, inputs, **sample.attrs) if o.dtype.kind == "f"]
    if not outs:
        pytest.skip("no float output (e.g. sort returning indices)")
    return F.concat([F.reshape(o, [-1]) for o in outs], 0) if len(outs) > 1 else \
        F.reshape(outs[0], [-1])


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Thousands of evaluations of tiny inputs: thread hand-offs would dominate.
    before = F.get_thread_number()
    F.set_thread_number(1)
    yield
    F.set_thread_number(before)


@pytest.mark.parametrize("name,sample", _cases())
def test_rule_matches_finite_differences(name, sample):
    floats = [a.astype(np.float64) for a in sample.inputs if a.dtype.kind == "f"]
    try:
        out = _run(name, sample, [F.const(a) for a in floats]).read()
    except (ValueError, TypeError) as exc:
        pytest.skip(f"sample does not take float64 inputs: {exc}")
    if not np.all(np.isfinite(out)):
        pytest.skip("the sample's output is not finite (outside the function's domain)")
    if name in REFUSED:
        try:
            check(lambda *h: _run(name, sample, h), floats)
        except F.OpError as exc:
            assert REFUSED[name] in str(exc)
        return
    check(lambda *h: _run(name, sample, h), floats)
