"""Intermediate values nothing else can read are released after an evaluation; reading
anything later gives the same numbers (numpy is the oracle), computing only what is needed."""
import gc

import mnn.expr as F
import numpy as np
import pytest

from mnn.express import graph


@pytest.fixture
def counts(compute_counts):
    return compute_counts


@pytest.fixture(autouse=True)
def release_in_small_graphs(monkeypatch):
    """These graphs are small: release (planned only for orders of several ops) here too."""
    monkeypatch.setattr(graph, "_MIN_CACHED_ORDER", 1)


def _chain(x):
    # exp -> sin -> tanh: two intermediates only the graph references
    return F.tanh(F.sin(F.exp(x)))


def test_graph_only_intermediates_are_released_and_output_is_right():
    a = np.linspace(-1, 1, 7)
    x = F.placeholder([7], dtype=np.float64)
    x.write(a)
    y = _chain(x)
    np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp(a))))
    sin = y.expr.inputs[0].expr
    assert sin.values is None and sin.inputs[0].expr.values is None


def test_a_held_intermediate_keeps_its_value(counts):
    a = np.linspace(-1, 1, 7)
    x = F.placeholder([7], dtype=np.float64)
    x.write(a)
    e = F.exp(x)
    y = F.tanh(F.sin(e))
    y.read()
    assert e.expr.values is not None
    counts.clear()
    np.testing.assert_allclose(e.read(), np.exp(a))
    assert counts == {}


def test_nothing_recomputes_on_a_second_read(counts):
    x = F.placeholder([5], dtype=np.float64)
    x.write(np.arange(5.0))
    y = _chain(x)
    y.read()
    counts.clear()
    np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp(np.arange(5.0)))))
    assert counts == {}


def test_released_value_is_recomputed_once_for_a_new_consumer(counts):
    a = np.array([0.5, 1.5, -2.0])
    x = F.placeholder([3], dtype=np.float64)
    x.write(a)
    y = _chain(x)
    y.read()
    sin_var = y.expr.inputs[0]
    z = sin_var * 2.0  # a new consumer of the released sin: exp and sin come back
    counts.clear()
    np.testing.assert_allclose(z.read(), np.sin(np.exp(a)) * 2.0)
    assert counts == {"exp": 1, "sin": 1, "multiply": 1}
    # y did not go stale: the revived values kept their versions
    counts.clear()
    np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp(a))))
    assert counts == {}


def test_released_value_read_directly():
    a = np.array([0.25, -0.75])
    x = F.placeholder([2], dtype=np.float64)
    x.write(a)
    y = F.tanh(F.sin(F.exp(x) + 1.0))
    y.read()
    inner = y.expr.inputs[0].expr.outputs[0]  # a Var made again from the released Expr
    assert inner.expr.values is None
    np.testing.assert_allclose(inner.read(), np.sin(np.exp(a) + 1.0))


def test_second_output_read_later_shares_the_trunk(counts):
    a = np.arange(6.0).reshape(2, 3)
    x = F.placeholder([2, 3], dtype=np.float64)
    x.write(a)
    trunk = F.exp(x) * 0.5
    y1, y2 = F.sin(trunk), F.cos(trunk)
    del trunk  # held only by its two consumers now
    np.testing.assert_allclose(y1.read(), np.sin(np.exp(a) * 0.5))
    counts.clear()
    np.testing.assert_allclose(y2.read(), np.cos(np.exp(a) * 0.5))
    # the trunk was kept for y2, which had not computed yet
    assert counts == {"cos": 1}


def test_write_after_release_recomputes_everything_right():
    x = F.placeholder([4], dtype=np.float64)
    y = _chain(x)
    for k in range(3):
        a = np.arange(4.0) * (k + 1)
        x.write(a)
        np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp(a))))


def test_values_above_trainables_are_kept_for_the_step():
    w = F.const(np.array([1.0, 2.0]))
    w.fix_as_trainable()
    y = F.reduce_sum(F.sin(F.exp(w)))
    y.read()
    assert y.expr.inputs[0].expr.values is not None


def test_full_gc_then_read_is_right():
    x = F.placeholder([3], dtype=np.float64)
    x.write(np.array([1.0, 2.0, 3.0]))
    y = _chain(x)
    y.read()
    F.gc(full=True)
    gc.collect()
    np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp([1.0, 2.0, 3.0]))))


def test_model_output_matches_torch_after_repeated_runs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((8, 1, 3, 3)).astype(np.float32)
    x = F.placeholder([1, 3, 12, 12])
    h = F.conv2d(x, F.const(w1), None, (1, 1), (1, 1), activation="relu")
    y = F.conv2d(h, F.const(w2), None, (1, 1), (1, 1), group=8) + h
    for seed in range(3):
        data = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
        x.write(data)
        t = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(data),
                                                  torch.from_numpy(w1), padding=1))
        want = torch.nn.functional.conv2d(t, torch.from_numpy(w2), padding=1, groups=8) + t
        np.testing.assert_allclose(y.read(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_rewired_var_gets_a_new_plan():
    # Same stale Exprs before and after the rewiring: only the structure epoch tells the
    # cached plan (which released values after which op) from the new wiring.
    a = np.array([0.5, 1.0, 2.0])
    x = F.placeholder([3], dtype=np.float64)
    e1, e2 = F.exp(x), F.sin(x)
    u, w = e1 * 1.0, e2 * 1.0
    c = u - w
    d = F.tanh(e1)
    x.write(a)
    np.testing.assert_allclose(graph.evaluate_many([c, d])[0],
                               np.exp(a) - np.sin(a))
    u.replace(w)  # c = w - w from now on
    for k in (1.0, 3.0):
        x.write(a * k)
        got_c, got_d = graph.evaluate_many([c, d])
        np.testing.assert_allclose(got_c, np.zeros(3))
        np.testing.assert_allclose(got_d, np.tanh(np.exp(a * k)))


def test_values_from_constants_only_are_kept(counts):
    w = F.const(np.array([1.0, 2.0, 3.0]))
    scaled = F.exp(w) * 2.0  # computed from constants only
    x = F.placeholder([3], dtype=np.float64)
    y = F.sin(x * scaled)
    del scaled
    for k in (1.0, 2.0):
        x.write(np.full(3, k))
        np.testing.assert_allclose(y.read(), np.sin(k * np.exp([1.0, 2.0, 3.0]) * 2.0))
    counts.clear()
    x.write(np.full(3, 3.0))
    y.read()
    assert counts == {"multiply": 1, "sin": 1}  # not exp, nor the scaling


def test_step_after_a_write_below_a_fused_product():
    # The loss graph holds w * k + x, fused by the engine (the product keeps no value).
    # After a new batch x is written, the product is fresh but its value is gone: the
    # optimizer's check whether the loss is still fresh must cope with that.
    from mnn import nn, optim
    from mnn.express.ops import fusion

    n = fusion.MIN_SIZE + 5

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = F.const(np.ones(n, np.float32))
            self.w.fix_as_trainable()

        def forward(self, x):
            return self.w * F.const(np.full(n, 2.0, np.float32)) + x

    rng = np.random.default_rng(0)
    net = Scale()
    x = F.placeholder([n])
    x.write(rng.standard_normal(n).astype(np.float32))
    loss = F.reduce_sum(F.square(net(x)))
    loss.read()
    batch = rng.standard_normal(n).astype(np.float32)
    x.write(batch)
    optim.SGD(net, 0.1, momentum=0.0).step(loss)
    # d/dw sum((2w + x)^2) = 4 (2w + x), from the new batch
    np.testing.assert_allclose(net.w.read(), 1.0 - 0.1 * 4 * (2.0 + batch), rtol=1e-5,
                               atol=1e-5)


def test_small_orders_keep_their_values(monkeypatch):
    # Releasing costs more than it saves for a few ops: a short order keeps its values.
    monkeypatch.setattr(graph, "_MIN_CACHED_ORDER", 8)
    x = F.placeholder([3], dtype=np.float64)
    x.write(np.array([0.1, 0.2, 0.3]))
    y = _chain(x)
    np.testing.assert_allclose(y.read(), np.tanh(np.sin(np.exp([0.1, 0.2, 0.3]))))
    assert y.expr.inputs[0].expr.values is not None
