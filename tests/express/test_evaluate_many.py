"""evaluate_many: several Vars read in one graph walk, against numpy."""
import numpy as np
import pytest

import mnn.expr as F
from mnn.express.graph import evaluate_many


def test_values_match_numpy_and_shared_ops_compute_once(compute_counts):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.random((3, 4)), rng.random((4, 2))
    a = F.placeholder([3, 4], dtype=np.float64)
    b = F.const(b_np)
    shared = F.matmul(a, b)  # both outputs read it
    outs = [F.exp(shared), F.reduce_sum(shared * 2.0), shared, a, b]
    a.write(a_np)
    counts = compute_counts
    counts.clear()  # count from here on
    values = evaluate_many(outs)
    expect = a_np @ b_np
    np.testing.assert_allclose(values[0], np.exp(expect))
    np.testing.assert_allclose(values[1], (expect * 2.0).sum())
    np.testing.assert_allclose(values[2], expect)
    np.testing.assert_array_equal(values[3], a_np)
    np.testing.assert_array_equal(values[4], b_np)
    assert counts["matmul"] == 1
    # Everything is fresh now: nothing computes again.
    counts.clear()
    evaluate_many(outs)
    assert counts == {}


def test_only_what_a_write_made_stale_recomputes(compute_counts):
    x = F.placeholder([2], dtype=np.float64)
    y = F.placeholder([2], dtype=np.float64)
    ex, ey = F.exp(x), F.sin(y)
    x.write([0.0, 1.0])
    y.write([2.0, 3.0])
    evaluate_many([ex, ey])
    counts = compute_counts
    counts.clear()  # count from here on
    y.write([4.0, 5.0])
    vx, vy = evaluate_many([ex, ey])
    assert counts == {"sin": 1}
    np.testing.assert_allclose(vx, np.exp([0.0, 1.0]))
    np.testing.assert_allclose(vy, np.sin([4.0, 5.0]))


def test_matches_reading_one_by_one_for_gradients():
    rng = np.random.default_rng(1)
    w_np, x_np = rng.standard_normal((5, 3)), rng.standard_normal((4, 5))
    w = F.const(w_np)
    w.fix_as_trainable()
    bias = F.const(np.zeros(3))
    bias.fix_as_trainable()
    loss = F.reduce_sum(F.tanh(F.matmul(F.const(x_np), w) + bias))
    grads = F.grad(loss, [w, bias])
    together = evaluate_many(grads + [loss])
    # numpy: d/dz sum(tanh(z)) = 1 - tanh(z)^2
    dz = 1.0 - np.tanh(x_np @ w_np) ** 2
    np.testing.assert_allclose(together[0], x_np.T @ dz, rtol=1e-12)
    np.testing.assert_allclose(together[1], dz.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(together[2], np.tanh(x_np @ w_np).sum(), rtol=1e-12)


def test_unwritten_placeholder_is_a_clear_error():
    p = F.placeholder([2])
    with pytest.raises(F.MnnError, match="has not been written"):
        evaluate_many([F.exp(p)])
    with pytest.raises(F.MnnError, match="has not been written"):
        evaluate_many([p])
