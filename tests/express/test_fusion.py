"""a * b + c fused at evaluation: same values as numpy, same graph semantics."""
import mnn.expr as F
import numpy as np

from mnn.express.ops import fusion

N = fusion.MIN_SIZE + 3  # odd length above the threshold


def _arrays(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(N).astype(dtype) for _ in range(3)]


def test_fused_result_equals_numpy_bitwise():
    for dtype in (np.float32, np.float64):
        a, b, c = _arrays(dtype)
        pa = F.placeholder([N], dtype=dtype)
        pa.write(a)
        y = pa * F.const(b) + F.const(c)
        np.testing.assert_array_equal(y.read(), a * b + c)
        assert y.inputs[0].expr.values is None  # the product was never stored
        z = F.const(c) + pa * F.const(b)  # product on the right
        np.testing.assert_array_equal(z.read(), c + a * b)


def test_referenced_product_is_kept_and_correct():
    a, b, c = _arrays(np.float32, 1)
    prod = F.const(a) * F.const(b)
    y = prod + F.const(c)
    np.testing.assert_array_equal(y.read(), a * b + c)
    assert prod.expr.values is not None
    np.testing.assert_array_equal(prod.read(), a * b)


def test_rewrite_recomputes_and_gradient_flows():
    a, b, c = _arrays(np.float64, 2)
    pa = F.placeholder([N], dtype=np.float64)
    pa.write(a)
    y = pa * F.const(b) + F.const(c)
    y.read()
    pa.write(a * 3)
    np.testing.assert_array_equal(y.read(), (a * 3) * b + c)
    (g,) = F.grad(F.reduce_sum(y), [pa])
    np.testing.assert_allclose(g.read(), b)


def test_non_contiguous_inputs_fall_back():
    a, b, c = (np.repeat(x, 2)[::2] for x in _arrays(np.float32, 3))
    x = F.const(np.repeat(a, 2))[::2]  # a strided view: not fusable, computed normally
    y = x * F.const(b) + F.const(c)
    np.testing.assert_array_equal(y.read(), a * b + c)


def test_small_arrays_are_not_fused(monkeypatch):
    calls = []
    monkeypatch.setattr(fusion, "compute_fused", lambda *pair: calls.append(pair))
    a = np.arange(5, dtype=np.float32)
    y = F.const(a) * F.const(a) + F.const(a)
    np.testing.assert_array_equal(y.read(), a * a + a)
    assert calls == []


def test_fused_after_resize_equals_numpy():
    pa = F.placeholder([N], dtype=np.float32)
    pb = F.placeholder([N], dtype=np.float32)
    y = pa * pb + pa
    for n in (N, N + 1000, N):
        if pa.shape[0] != n:
            pa.resize([n])
            pb.resize([n])
        # Two reads per size: the first after a resize plans from metas not yet inferred
        # again and may run op by op; the second fuses.
        for seed in range(2):
            a, b, _ = (np.resize(x, n) for x in _arrays(np.float32, seed))
            pa.write(a)
            pb.write(b)
            np.testing.assert_array_equal(y.read(), a * b + a)
        assert y.inputs[0].expr.values is None  # the product was not stored


def test_product_read_after_a_fused_run_is_current():
    # Run 1 is op by op (the user holds the product, so it is stored); run 2 fuses
    # (nothing holds it then); the product read afterwards must be run 2's, not run 1's.
    a, b, c = _arrays(np.float32, 5)
    pa = F.placeholder([N], dtype=np.float32)
    pa.write(a)
    prod = pa * F.const(b)
    y = prod + F.const(c)
    y.read()
    assert prod.expr.values is not None
    del prod  # the graph alone holds the product now, so the next run fuses
    pa.write(a * 2)
    np.testing.assert_array_equal(y.read(), (a * 2) * b + c)
    np.testing.assert_array_equal(y.inputs[0].read(), (a * 2) * b)
