"""nn.load_module: inference (compiled) and training (rebuilt, trainable weights) forms,
against numpy and torch."""
import mnn.expr as F
import numpy as np
import pytest

import mnn
from mnn.express.errors import MnnError

f32 = np.float32
RNG = np.random.default_rng(21)
W = RNG.standard_normal((4, 3)).astype(f32)
B = RNG.standard_normal(3).astype(f32)


def _graph():
    x = F.placeholder([-1, 4])
    h = F.matmul(x, F.const(W)) + F.const(B)
    y = F.tanh(h)
    return x, h, y


def test_inference_form_matches_numpy():
    x, _, y = _graph()
    m = mnn.nn.load_module([x], [y], False)
    xs = RNG.standard_normal((5, 4)).astype(f32)
    np.testing.assert_allclose(m.forward(xs).read(), np.tanh(xs @ W + B), rtol=1e-5)
    assert m.parameters == []


def test_training_form_trains_the_weight_like_torch():
    torch = pytest.importorskip("torch")
    x, _, y = _graph()
    m = mnn.nn.load_module([x], [y], True)
    assert len(m.parameters) == 1  # the matmul weight became trainable
    (w,) = m.parameters
    xs = RNG.standard_normal((5, 4)).astype(f32)
    out = m.forward(F.const(xs))
    loss = F.reduce_sum(out * out)
    (g,) = F.grad(loss, [w])
    tw = torch.tensor(W, requires_grad=True)
    tloss = (torch.tanh(torch.from_numpy(xs) @ tw + torch.from_numpy(B)) ** 2).sum()
    tloss.backward()
    np.testing.assert_allclose(loss.read(), tloss.item(), rtol=1e-5)
    np.testing.assert_allclose(g.read(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
    # Training the copy leaves the source graph's constant alone.
    w.write(np.zeros_like(W))
    np.testing.assert_allclose(m.forward(F.const(xs)).read(), np.tanh(np.broadcast_to(
        B, (5, 3))), rtol=1e-5)
    src = mnn.nn.load_module([x], [y], False)
    np.testing.assert_allclose(src.forward(xs).read(), np.tanh(xs @ W + B), rtol=1e-5)


def test_training_form_from_an_inner_tensor_and_errors():
    x, h, y = _graph()
    tail = mnn.nn.load_module([h], [y], True)
    hs = RNG.standard_normal((2, 3)).astype(f32)
    np.testing.assert_allclose(tail.forward(hs).read(), np.tanh(hs), rtol=1e-6)
    assert tail.parameters == []
    other = F.placeholder([2, 4])
    with pytest.raises(MnnError, match="not an input"):
        mnn.nn.load_module([x], [y + F.reduce_sum(other)], True)
    with pytest.raises(MnnError, match="takes 1 inputs"):
        tail.forward(hs, hs)
