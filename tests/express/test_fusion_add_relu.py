"""relu(conv + skip) and relu(a + b) fused at evaluation: same values as torch / numpy."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import elementwise
from mnn.express.ops import fusion_add_relu


@pytest.fixture
def fused_calls(monkeypatch):
    calls = []
    original = fusion_add_relu.AddRelu.compute

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(fusion_add_relu.AddRelu, "compute", counted)
    return calls


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_add_relu_matches_torch(threads, fused_calls):
    torch = pytest.importorskip("torch")
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(threads)
        w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.2
        b = rng.standard_normal(16).astype(np.float32)
        x = F.placeholder([2, 16, 40, 40])
        y = F.relu(F.conv2d(x, F.const(w), F.const(b), (1, 1), (1, 1)) + x)
        for _ in range(2):
            data = rng.standard_normal((2, 16, 40, 40)).astype(np.float32)
            x.write(data)
            t = torch.from_numpy(data)
            want = torch.relu(torch.nn.functional.conv2d(
                t, torch.from_numpy(w), torch.from_numpy(b), padding=1) + t)
            # (Winograd F(4x4) rounds differently from torch: 1e-4)
            np.testing.assert_allclose(y.read(), want.numpy(), rtol=1e-4, atol=1e-4)
        assert len(fused_calls) == 2 and fused_calls[0].conv is not None
        add = y.expr.inputs[0].expr
        assert add.values is None and add.inputs[0].expr.values is None
    finally:
        F.set_thread_number(1)


def test_plain_add_relu_equals_numpy_bitwise(fused_calls):
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a, b = (rng.standard_normal((3, 50000)).astype(dtype) for _ in range(2))
        a[0, :3] = [np.nan, np.inf, -np.inf]
        pa = F.placeholder([3, 50000], dtype=dtype)
        pa.write(a)
        got = F.relu((pa - 1.0) + F.const(b)).read()
        np.testing.assert_array_equal(got, np.maximum((a - dtype(1.0)) + b, 0))
    assert len(fused_calls) == 2 and all(c.conv is None for c in fused_calls)


def test_held_sum_broadcast_and_leaky_relu_are_not_fused(fused_calls):
    rng = np.random.default_rng(1)
    a = F.const(rng.standard_normal((4, 5)))
    s = a + F.const(rng.standard_normal((4, 5)))
    F.relu(s).read()  # the sum is held by the user
    np.testing.assert_array_equal(s.read(), s.read())
    F.relu(a + F.const(rng.standard_normal(5))).read()  # broadcasting add
    F.relu(a + a, 0.1).read()  # leaky
    assert fused_calls == []


def test_released_sum_is_recomputed_when_read():
    rng = np.random.default_rng(2)
    a_np, b_np = rng.standard_normal((2, 6)), rng.standard_normal((2, 6))
    a = F.placeholder([2, 6], dtype=np.float64)
    a.write(a_np)
    y = F.relu(F.exp(a) + F.const(b_np))
    y.read()
    sum_var = y.expr.inputs[0]
    assert sum_var.expr.values is None
    np.testing.assert_allclose(sum_var.read(), np.exp(a_np) + b_np)


def test_kernel_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="lengths"):
        elementwise.add_relu(np.zeros(3), np.zeros(4), np.zeros(3), 1)


def test_fused_after_resize_and_broadcast_after_resize_fall_back(fused_calls):
    # Each shape is read twice: the first read after a resize plans from the metas not yet
    # inferred again (no fusion then), the second fuses; a broadcasting add never does.
    rng = np.random.default_rng(3)
    a = F.placeholder([2, 40000])
    b = F.placeholder([2, 40000])
    y = F.relu((a - 1.0) + b)
    fused_per_shape = []
    for shapes in (((2, 40000), (2, 40000)), ((3, 50000), (3, 50000)),
                   ((3, 50000), (1, 50000))):  # the last one broadcasts
        for p, shape in zip((a, b), shapes):
            if tuple(p.shape) != shape:
                p.resize(list(shape))
        before = len(fused_calls)
        for _ in range(2):
            an, bn = (rng.standard_normal(s).astype(np.float32) for s in shapes)
            a.write(an)
            b.write(bn)
            np.testing.assert_array_equal(y.read(), np.maximum((an - np.float32(1.0)) + bn,
                                                               0))
        fused_per_shape.append(len(fused_calls) - before)
    assert fused_per_shape == [2, 1, 0]
