"""Random convolution and pooling geometries against torch (hypothesis): every kernel
path (im2col, 1x1, depthwise, Winograd, pooling windows) on odd shapes, strides,
paddings and dilations, forward and backward."""
import numpy as np
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import mnn.expr as F


@st.composite
def conv_case(draw):
    group = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = draw(st.booleans())
    cin = group * draw(st.integers(1, 3))
    cout = group * draw(st.integers(1, 3))
    if depthwise:
        group = cin = draw(st.integers(1, 5))
        cout = cin * draw(st.integers(1, 2))
    if draw(st.booleans()):  # large enough for the Winograd path
        group, cin, cout = 1, 16, 16
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ph, pw = draw(st.integers(0, kh)), draw(st.integers(0, kw))
    h = draw(st.integers((kh - 1) * dh + 1, 17))
    w = draw(st.integers((kw - 1) * dw + 1, 17))
    n = draw(st.integers(1, 2))
    return n, cin, cout, h, w, (kh, kw), (sh, sw), (ph, pw), (dh, dw), group


@settings(max_examples=40, deadline=None)
@given(conv_case(), st.integers(0, 2 ** 31 - 1))
def test_random_conv2d_and_grads_match_torch(case, seed):
    n, cin, cout, h, w, k, s, p, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, cin, h, w))
    wt = rng.standard_normal((cout, cin // g) + k)
    xv, wv = F.const(x), F.const(wt)
    y = F.conv2d(xv, wv, None, s[::-1], p[::-1], d[::-1], g)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(wt, requires_grad=True)
    ty = TF.conv2d(tx, tw, None, s, p, d, g)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-9, atol=1e-9)
    dy = rng.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    gx, gw = F.grad([y], [xv, wv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(gw.read(), tw.grad.numpy(), rtol=1e-9, atol=1e-9)


@st.composite
def pool_case(draw):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    h, w = draw(st.integers(kh, 15)), draw(st.integers(kw, 15))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w, (kh, kw), (sh, sw),
            (ph, pw), draw(st.booleans()), draw(st.booleans()))


@settings(max_examples=40, deadline=None)
@given(pool_case(), st.integers(0, 2 ** 31 - 1))
def test_random_pooling_and_grads_match_torch(case, seed):
    n, c, h, w, k, s, p, ceil, include = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w))
    for ours, theirs in (
            (lambda v: F.max_pool(v, k[::-1], s[::-1], pads=p[::-1], ceil_mode=ceil),
             lambda t: TF.max_pool2d(t, k, s, p, ceil_mode=ceil)),
            (lambda v: F.avg_pool(v, k[::-1], s[::-1], pads=p[::-1], ceil_mode=ceil,
                                  count_include_pad=include),
             lambda t: TF.avg_pool2d(t, k, s, p, ceil_mode=ceil, count_include_pad=include))):
        xv = F.const(x)
        y = ours(xv)
        tx = torch.tensor(x, requires_grad=True)
        ty = theirs(tx)
        np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
        dy = rng.standard_normal(ty.shape)
        ty.backward(torch.tensor(dy))
        (gx,) = F.grad([y], [xv], [F.const(dy)])
        np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
