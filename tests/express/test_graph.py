"""The lazy graph: staleness, recomputation, placeholders, fix/replace, errors."""
import numpy as np
import pytest

import mnn
import mnn.expr as F


def test_values_computed_on_read_and_recomputed_after_write():
    a = F.placeholder([3])
    b = F.const(np.array([1.0, 2.0, 3.0], np.float32))
    c = a * b + 2.0
    a.write([1.0, 1.0, 1.0])
    np.testing.assert_allclose(c.read(), np.array([1, 1, 1]) * [1, 2, 3] + 2.0)
    a.write([2.0, 3.0, 4.0])
    np.testing.assert_allclose(c.read(), np.array([2, 3, 4]) * [1, 2, 3] + 2.0)


def test_only_dependents_recompute():
    a = F.placeholder([2])
    b = F.placeholder([2])
    a.write([1.0, 2.0])
    b.write([3.0, 4.0])
    ea, eb = F.exp(a), F.exp(b)
    ea.read(), eb.read()
    version_b = eb.expr.version
    a.write([0.0, 0.0])
    np.testing.assert_allclose(ea.read(), np.exp([0.0, 0.0]))
    eb.read()
    assert eb.expr.version == version_b


def test_read_returns_independent_copy():
    a = F.const([1.0, 2.0])
    r = a.read()
    r[0] = 100.0
    np.testing.assert_array_equal(a.read(), np.array([1.0, 2.0], np.float32))


def test_shape_mismatch_names_op_shapes_and_dtypes():
    with pytest.raises(ValueError) as info:
        F.add(F.const(np.zeros((2, 3), np.float32)), F.const(np.zeros((4,), np.float32)))
    msg = str(info.value)
    assert "add" in msg and "[2, 3]" in msg and "[4]" in msg and "float32" in msg


def test_unwritten_placeholder_read_is_clear_error():
    p = F.placeholder([2])
    with pytest.raises(mnn.expr.OpError, match="not been written"):
        (p + 1.0).read()


def test_write_wrong_size_is_clear_error():
    p = F.placeholder([2, 2])
    with pytest.raises(ValueError, match="does not fit"):
        p.write(np.zeros(5))


def test_resize_then_write_reinfers_downstream_shapes():
    p = F.placeholder([2])
    y = F.reduce_sum(p * 2.0, axis=[0], keepdims=True)
    p.resize([3, 4])
    p.write(np.ones((3, 4), np.float32))
    assert y.shape == [1, 4]
    np.testing.assert_allclose(y.read(), np.full((1, 4), 6.0))


def test_fix_as_const_seen_by_consumers():
    p = F.placeholder([2])
    p.write([1.0, 2.0])
    q = p * 3.0
    r = q + 1.0
    q.fix_as_const()
    assert q.op_type == "const"
    p.write([10.0, 10.0])
    np.testing.assert_allclose(r.read(), [4.0, 7.0])


def test_numpy_promotion_rules():
    i = F.const(np.array([1, 2], np.int32))
    assert (i + 1).dtype == np.int32
    assert (i / i).dtype == np.float64  # true division, not MNN's floor
    np.testing.assert_array_equal((F.const([7, -7]) // 2).read(), np.array([7, -7]) // 2)
    f = F.const(np.array([1.0], np.float32))
    assert (f * 2.5).dtype == np.float32
    assert (f < 2).dtype == np.bool_


def test_array_protocol_and_repr():
    v = F.const([[1, 2], [3, 4]])
    assert np.asarray(v).tolist() == [[1, 2], [3, 4]]
    assert "var(" in repr(v)
    assert len(v) == 2


def test_gradients_against_finite_differences():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((3, 4))
    w0 = rng.standard_normal((4, 2))
    x, w = F.const(x0), F.const(w0)
    y = F.reduce_sum(F.tanh(F.matmul(x, w)) ** 2.0)
    gx, gw = F.grad(y, [x, w])

    def f(xv, wv):
        return np.sum(np.tanh(xv @ wv) ** 2)

    eps = 1e-6
    num = np.zeros_like(w0)
    for idx in np.ndindex(*w0.shape):
        d = np.zeros_like(w0)
        d[idx] = eps
        num[idx] = (f(x0, w0 + d) - f(x0, w0 - d)) / (2 * eps)
    np.testing.assert_allclose(gw.read(), num, rtol=1e-6, atol=1e-8)
    assert gx.shape == [3, 4]


def test_show_config_lists_kernels(capsys):
    mnn.show_config()
    out = capsys.readouterr().out
    assert "compiled kernels" in out and "parallel" in out
    from mnn._cython import matmul

    # which matmul the build runs: our kernel with AVX-512, else BLAS
    assert ("own kernel" in out) == matmul.fast() and "GEMM tile" in out


def test_a_root_read_again_follows_rewired_vars():
    # From its second read a root keeps the list of the ops above it; rewiring a Var
    # (replace, fix_as_const) must make the next read walk the new graph.
    from mnn.express import graph

    a = F.placeholder([3])
    b = a * 2.0
    y = (b + 1.0) * 3.0
    for v in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]):
        a.write(v)
        np.testing.assert_allclose(y.read(), (np.array(v) * 2 + 1) * 3)
    assert [e.op.name for e in y.expr.ancestry[1][0]] == ["multiply", "add", "multiply"]
    b.replace(a - 1.0)
    for v in ([1.0, 2.0, 3.0], [7.0, 8.0, 9.0], [0.0, 1.0, 2.0]):
        a.write(v)
        np.testing.assert_allclose(y.read(), (np.array(v) - 1 + 1) * 3)
    assert [e.op.name for e in y.expr.ancestry[1][0]] == ["subtract", "add", "multiply"]
    b.fix_as_const()  # holds a - 1 of the last write
    a.write([5.0, 5.0, 5.0])
    np.testing.assert_allclose(y.read(), (np.array([0.0, 1.0, 2.0]) - 1 + 1) * 3)
    assert y.expr.ancestry[0] == graph._structure_epoch[0]


def test_a_network_led_by_its_first_op_recomputes_only_what_is_stale():
    # Every op below the first one (which reads sources only): a read after a write of
    # the input skips the staleness walk and computes them all. Reads that find the first
    # op fresh must still compute only what is stale.
    a = F.placeholder([3])
    b = a * 2.0
    c = b + 1.0
    y = c * b
    for v in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]):
        a.write(v)
        np.testing.assert_allclose(y.read(), (np.array(v) * 2 + 1) * np.array(v) * 2)
    ops, led, _ = y.expr.ancestry[1]
    assert led and [e.op.name for e in ops] == ["multiply", "add", "multiply"]
    versions = [v.expr.version for v in (b, c, y)]
    y.read()  # nothing written: nothing computes
    assert [v.expr.version for v in (b, c, y)] == versions
    a.write([0.5, 1.0, 1.5])
    np.testing.assert_allclose(c.read(), [2.0, 3.0, 4.0])
    after_c = [v.expr.version for v in (b, c)]
    assert after_c == [versions[0] + 1, versions[1] + 1]
    np.testing.assert_allclose(y.read(), [2.0, 6.0, 12.0])
    assert [v.expr.version for v in (b, c, y)] == after_c + [versions[2] + 1]


def test_a_root_keeps_its_evaluation_plan_and_a_new_shape_plans_again(monkeypatch):
    # A network read run after run keeps its plan beside its op list (no key of its
    # Exprs' ids); a resize (new shapes) makes a new plan, whose fused values are right.
    torch = pytest.importorskip("torch")
    from mnn.express import graph

    rng = np.random.default_rng(3)
    ws = [rng.standard_normal((4, 3 if i == 0 else 4, 3, 3)).astype(np.float32) * 0.3
          for i in range(4)]
    x = F.placeholder([1, 3, 8, 8])
    # (conv, relu) four times and a residual from the first: 9 ops, all below the first
    first = F.relu(F.conv2d(x, F.const(ws[0]), None, (1, 1), (1, 1)))
    h = first
    for w in ws[1:]:
        h = F.relu(F.conv2d(h, F.const(w), None, (1, 1), (1, 1)))
    y = h + first

    def want(data):
        t = first_t = torch.relu(tf.conv2d(torch.from_numpy(data), torch.from_numpy(ws[0]),
                                           padding=1))
        for w in ws[1:]:
            t = torch.relu(tf.conv2d(t, torch.from_numpy(w), padding=1))
        return (t + first_t).numpy()

    tf = torch.nn.functional
    for _ in range(3):
        data = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
        x.write(data)
        np.testing.assert_allclose(y.read(), want(data), rtol=1e-5, atol=1e-5)
    ops, led, held = y.expr.ancestry[1]
    assert led and len(ops) >= 8 and held[0] == (graph._epoch[0], graph._structure_epoch[0])
    assert graph._order_plan(ops, held) is held[1]
    x.resize([2, 3, 5, 6])
    for _ in range(2):
        data = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
        x.write(data)
        np.testing.assert_allclose(y.read(), want(data), rtol=1e-5, atol=1e-5)
    assert held[0] == (graph._epoch[0], graph._structure_epoch[0])
    # A small network (under the size whose plans are cached by key) read run after run
    # keeps its plan beside its op list too: the planners run once.
    small = F.relu(F.conv2d(x, F.const(ws[0]), None, (1, 1), (1, 1))) + 1.0
    planned = []
    monkeypatch.setattr(graph, "_planners",
                        lambda f=graph._planners: planned.append(1) or f())
    for _ in range(4):
        data = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
        x.write(data)
        first = torch.relu(tf.conv2d(torch.from_numpy(data), torch.from_numpy(ws[0]),
                                     padding=1)) + 1.0
        np.testing.assert_allclose(small.read(), first.numpy(), rtol=1e-5, atol=1e-5)
    ops, led, held = small.expr.ancestry[1]
    assert led and len(ops) < graph._MIN_CACHED_ORDER and held[1] is not None
    assert len(planned) == 2  # the first read, and the second (which keeps the plan)


def test_a_network_with_two_inputs_is_not_led_by_one():
    a, d = F.placeholder([2]), F.placeholder([2])
    left = a * 2.0
    y = left + d * 3.0
    for v in ([1.0, 2.0], [3.0, 4.0]):
        a.write(v)
        d.write(v)
        np.testing.assert_allclose(y.read(), np.array(v) * 5)
    assert y.expr.ancestry[1][1] is False
    version = left.expr.version
    d.write([10.0, 20.0])
    np.testing.assert_allclose(y.read(), [36.0, 68.0])
    assert left.expr.version == version  # not downstream of d: not computed again

