"""The ``if`` and ``while`` ops against numpy and onnxruntime semantics."""
import mnn.expr as F
import numpy as np
import pytest

from mnn.express.errors import OpError
from mnn.express.ops.control_flow import Subgraph
from runtime_models import loop_model

f32 = np.float32


def _branches():
    then_g = Subgraph.trace(lambda x, y: [x + y, x * 2.0], [((-1,), f32), ((-1,), f32)],
                            name="then")
    else_g = Subgraph.trace(lambda x, y: [x - y, F.exp(y)], [((-1,), f32), ((-1,), f32)],
                            name="else")
    return then_g, else_g


@pytest.mark.parametrize("flag", [True, False])
def test_if_picks_the_branch(flag):
    then_g, else_g = _branches()
    c = F.placeholder([], dtype=F.bool)
    x = np.array([1.0, 2.0, 3.0], f32)
    y = np.array([0.5, -1.0, 2.0], f32)
    a, b = F.if_(c, then_g, else_g, [x, y])
    c.write(flag)
    if flag:
        np.testing.assert_allclose(a.read(), x + y)
        np.testing.assert_allclose(b.read(), x * 2)
    else:
        np.testing.assert_allclose(a.read(), x - y)
        np.testing.assert_allclose(b.read(), np.exp(y), rtol=1e-6)


def test_if_uses_mnn_rule_for_int_conditions():
    then_g = Subgraph.trace(lambda x: x + 1, [((), np.int32)])
    else_g = Subgraph.trace(lambda x: x - 1, [((), np.int32)])
    c = F.placeholder([1], dtype=F.int32)
    (out,) = F.if_(c, then_g, else_g, [np.int32(10)])
    for cond, want in [(1, 11), (5, 11), (0, 9), (-3, 9)]:  # MNN: then when > 0
        c.write([cond])
        assert out.read() == want


def test_if_static_shapes():
    then_g = Subgraph.trace(lambda x: F.concat([x, x], 0), [((2,), f32)])
    else_g = Subgraph.trace(lambda x: x * 3.0, [((2,), f32)])
    c = F.placeholder([], dtype=F.bool)
    (out,) = F.if_(c, then_g, else_g, [np.ones(2, f32)])
    assert out.expr.metas[0].shape is None  # the branches disagree: data decides
    c.write(True)
    assert out.shape == [4]
    c.write(False)
    np.testing.assert_allclose(out.read(), [3.0, 3.0])
    (known,) = F.if_(F.const(True), then_g, else_g, [np.ones(2, f32)])
    assert known.expr.metas[0].shape == (4,)  # a constant condition picks statically


def test_tf_while_matches_python_loop():
    n = F.placeholder([], dtype=F.int32)
    cond = Subgraph.trace(lambda i, acc, lim: i < lim,
                          [((), np.int32), ((3,), f32), ((), np.int32)], name="cond")
    body = Subgraph.trace(lambda i, acc, lim: [i + 1, acc * 0.5 + F.cast(i, F.float), lim],
                          [((), np.int32), ((3,), f32), ((), np.int32)], name="body")
    start = np.array([1.0, 2.0, 4.0], f32)
    i_out, acc_out, _ = F.while_(cond, body, [np.int32(0), start, n])
    for lim in [0, 1, 7]:
        n.write(lim)
        acc = start.copy()
        for i in range(lim):
            acc = acc * f32(0.5) + f32(i)
        assert i_out.read() == lim
        np.testing.assert_allclose(acc_out.read(), acc, rtol=1e-6)
    assert acc_out.expr.metas[acc_out.index].shape == (3,)


def test_while_growing_value_has_unknown_static_shape():
    # Constants typed explicitly: a -1 placeholder's dtype is known, its shape is not.
    five, one = F.const(np.float32(5)), F.const(np.float32(1))
    cond = Subgraph.trace(lambda v: F.reduce_sum(F.ones_like(v)) < five, [((-1,), f32)])
    body = Subgraph.trace(lambda v: F.concat([v, F.reshape(F.reduce_max(v) + one, [1])], 0),
                          [((-1,), f32)])
    (out,) = F.while_(cond, body, [np.array([1.0], f32)])
    assert out.expr.metas[0].shape is None
    np.testing.assert_allclose(out.read(), [1, 2, 3, 4, 5])


@pytest.mark.parametrize("trips, cond, stop", [(3, True, 100.0), (0, True, 100.0),
                                               (5, False, 100.0), (10, True, 2.0),
                                               (1, True, -1.0)])
def test_loop_matches_onnxruntime(trips, cond, stop):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(loop_model().SerializeToString())
    rng = np.random.default_rng(0)
    feeds = {"M": np.array(trips, np.int64), "c": np.array(cond),
             "v0": rng.standard_normal((2, 3)).astype(f32),
             "x": rng.standard_normal((2, 3)).astype(f32), "stop": np.array(stop, f32)}
    want = sess.run(None, feeds)

    # The outer-scope values x and stop become explicit loop-carried inputs.
    def body_fn(it, c, v, x, stop):
        it_f = F.cast(it, F.float)
        v2 = v + x
        return [it_f < stop, v2, x, stop, v2 * it_f]

    body = Subgraph.trace(body_fn, [((), np.int64), ((), np.bool_), ((2, 3), f32),
                                    ((2, 3), f32), ((), f32)])
    v, _, _, s = F.loop(feeds["M"], feeds["c"], body,
                        [feeds["v0"], feeds["x"], feeds["stop"]])
    np.testing.assert_allclose(v.read(), want[0], rtol=1e-6)
    assert s.shape == list(want[1].shape)
    np.testing.assert_allclose(s.read(), want[1], rtol=1e-6)


def test_loop_zero_trips_from_a_placeholder():
    m = F.placeholder([], dtype=F.int64)
    body = Subgraph.trace(lambda it, c, v: [c, v + 1.0, F.concat([v, v], 0)],
                          [((), np.int64), ((), np.bool_), ((2,), f32)])
    v, s = F.loop(m, True, body, [np.zeros(2, f32)])
    m.write(0)
    assert v.read().tolist() == [0, 0]
    assert s.shape == [0, 4] and s.dtype == np.float32
    m.write(2)
    np.testing.assert_allclose(s.read(), [[0, 0, 0, 0], [1, 1, 1, 1]])


def test_nested_loop_inside_if():
    inner = Subgraph.trace(lambda it, c, v: [c, v * 2.0],
                           [((), np.int64), ((), np.bool_), ((), f32)])

    def then_fn(n, v):
        return F.loop(n, True, inner, [v])

    then_g = Subgraph.trace(then_fn, [((), np.int64), ((), f32)])
    else_g = Subgraph.trace(lambda n, v: [v], [((), np.int64), ((), f32)])
    c = F.placeholder([], dtype=F.bool)
    (out,) = F.if_(c, then_g, else_g, [np.int64(4), np.float32(1.5)])
    c.write(True)
    assert out.read() == pytest.approx(24.0)
    c.write(False)
    assert out.read() == pytest.approx(1.5)


def test_subgraph_rejects_outer_placeholder():
    outer = F.placeholder([2])
    with pytest.raises(OpError, match="not one of the inputs"):
        Subgraph.trace(lambda x: x + outer, [((2,), f32)])


def test_errors_name_the_problem():
    then_g, else_g = _branches()
    one = Subgraph.trace(lambda x, y: [x], [((-1,), f32), ((-1,), f32)])
    x = np.ones(2, f32)
    with pytest.raises(OpError, match="one element"):
        F.if_(np.array([True, False]), then_g, else_g, [x, x])
    with pytest.raises(OpError, match="2 outputs, else-branch 1"):
        F.if_(True, then_g, one, [x, x])
    with pytest.raises(OpError, match="takes 2 inputs, given 1"):
        F.if_(True, then_g, else_g, [x])
    with pytest.raises(OpError, match="input 1 must be float32, given int32"):
        F.if_(True, then_g, else_g, [x, np.ones(2, np.int32)])
    cond = Subgraph.trace(lambda v: v < 3, [((), np.int32)])
    to_float = Subgraph.trace(lambda v: F.cast(v, F.float), [((), np.int32)])
    with pytest.raises(OpError, match="dtypes differ"):
        F.while_(cond, to_float, [np.int32(0)])
    body = Subgraph.trace(lambda it, c: [c], [((), np.int64), ((), np.bool_)])
    with pytest.raises(OpError, match="integer"):
        F.loop(F.const(np.float32(2)), True, body, [])


def test_subgraph_runs_from_threads():
    from concurrent.futures import ThreadPoolExecutor

    g = Subgraph.trace(lambda x: F.reduce_sum(x * x), [((-1,), f32)])
    arrays = [np.arange(n, dtype=f32) for n in range(1, 40)]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda a: g.run([a])[0], arrays))
    for a, r in zip(arrays, got):
        assert r == pytest.approx(float((a * a).sum()))
