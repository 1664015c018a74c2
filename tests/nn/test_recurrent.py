"""lstm and gru against torch.nn.LSTM / GRU with the same weights: outputs, states and
gradients."""
import numpy as np
import pytest
import torch

import mnn
import mnn.expr as F
from mnn import nn

RNG = np.random.default_rng(4)


def _copy_to_torch(layer, tlayer):
    with torch.no_grad():
        tlayer.weight_ih_l0.copy_(torch.from_numpy(layer.weight_ih.read()))
        tlayer.weight_hh_l0.copy_(torch.from_numpy(layer.weight_hh.read()))
        tlayer.bias_ih_l0.copy_(torch.from_numpy(layer.bias_ih.read()))
        tlayer.bias_hh_l0.copy_(torch.from_numpy(layer.bias_hh.read()))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_matches_torch(kind):
    seq, batch, inp, hid = 4, 3, 5, 6
    layer = getattr(nn, kind)(inp, hid)
    k = 1 / np.sqrt(hid)
    assert np.abs(layer.weight_hh.read()).max() <= k
    tlayer = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(inp, hid)
    _copy_to_torch(layer, tlayer)
    x = RNG.standard_normal((seq, batch, inp)).astype(np.float32)
    h0 = RNG.standard_normal((batch, hid)).astype(np.float32)
    c0 = RNG.standard_normal((batch, hid)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    xv = F.const(x)
    if kind == "lstm":
        out, (h, c) = layer(xv, (F.const(h0), F.const(c0)))
        tout, (th, tc) = tlayer(tx, (torch.from_numpy(h0)[None], torch.from_numpy(c0)[None]))
        np.testing.assert_allclose(c.read(), tc[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    else:
        out, h = layer(xv, F.const(h0))
        tout, th = tlayer(tx, torch.from_numpy(h0)[None])
    np.testing.assert_allclose(out.read(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.read(), th[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    w = RNG.standard_normal(out.shape).astype(np.float32)
    (tout * torch.from_numpy(w)).sum().backward()
    gx, gwi, gwh, gb = [g.read() for g in F.grad(F.reduce_sum(out * F.const(w)),
                                                 [xv, layer.weight_ih, layer.weight_hh,
                                                  layer.bias_hh])]
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gwi, tlayer.weight_ih_l0.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gwh, tlayer.weight_hh_l0.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb, tlayer.bias_hh_l0.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_zero_state_default_and_errors():
    layer = nn.gru(2, 3)
    x = F.const(RNG.standard_normal((2, 4, 2)).astype(np.float32))
    out, h = layer(x)
    assert out.shape == [2, 4, 3] and h.shape == [4, 3]
    with pytest.raises(mnn.expr.MnnError, match=r"input must be \[seq, batch, 2\]"):
        layer(F.const(np.zeros((4, 2), np.float32)))
    with pytest.raises(mnn.expr.MnnError, match=r"h must be \[4, 3\]"):
        layer(x, F.const(np.zeros((4, 2), np.float32)))
