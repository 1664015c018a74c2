"""conv2d, its backprop ops, conv2d_transpose and conv1d against torch (CPU)."""
import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

RNG = np.random.default_rng(1234)

# (N, C, H, W, O, KH, KW, stride(h,w), pad(h,w), dilation(h,w), group)
CASES = [
    (1, 3, 9, 11, 5, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    (2, 4, 8, 7, 6, 3, 2, (2, 1), (0, 1), (1, 1), 2),
    (2, 6, 10, 9, 6, 3, 3, (2, 2), (1, 1), (2, 2), 6),     # depthwise, dilated
    (1, 4, 7, 7, 8, 3, 3, (1, 1), (1, 1), (1, 1), 4),      # depthwise, multiplier 2
    (3, 5, 6, 6, 7, 1, 1, (1, 1), (0, 0), (1, 1), 1),      # 1x1 as plain GEMM
    (1, 4, 6, 5, 4, 1, 1, (2, 2), (0, 0), (1, 1), 2),      # strided 1x1, groups
    (2, 3, 13, 5, 2, 5, 3, (3, 2), (2, 1), (1, 2), 1),
]


def _data(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _mnn_pair(hw):
    return (hw[1], hw[0])  # MNN passes (x, y)


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_forward_and_grads_match_torch(case, dtype):
    n, c, h, w, o, kh, kw, s, p, d, g = case
    x, wt, b = _data((n, c, h, w), dtype), _data((o, c // g, kh, kw), dtype), _data(o, dtype)
    xv, wv, bv = F.const(x), F.const(wt), F.const(b)
    y = F.conv2d(xv, wv, bv, _mnn_pair(s), _mnn_pair(p), _mnn_pair(d), g)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    ty = TF.conv2d(tx, tw, tb, s, p, d, g)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), **_tol(dtype))
    dy = _data(ty.shape, dtype)
    ty.backward(torch.tensor(dy))
    gx, gw, gb = F.grad([y], [xv, wv, bv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), **_tol(dtype))
    np.testing.assert_allclose(gw.read(), tw.grad.numpy(), **_tol(dtype))
    np.testing.assert_allclose(gb.read(), tb.grad.numpy(), **_tol(dtype))


def test_conv2d_asymmetric_pads_match_torch_on_padded_input():
    x, wt = _data((2, 3, 8, 9)), _data((4, 3, 3, 3))
    y = F.conv2d(F.const(x), F.const(wt), None, padding=(1, 0, 2, 1))  # top, left, bottom, right
    ref = TF.conv2d(TF.pad(torch.tensor(x), (0, 1, 1, 2)), torch.tensor(wt)).numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("h,w,s,k", [(9, 11, 2, 3), (8, 8, 2, 3), (7, 5, 3, 2), (6, 6, 1, 4)])
def test_conv2d_same_padding_matches_torch_explicit_pads(h, w, s, k):
    x, wt = _data((1, 2, h, w)), _data((3, 2, k, k))
    y = F.conv2d(F.const(x), F.const(wt), None, (s, s), padding_mode=F.SAME)
    pads = []
    for size in (h, w):
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        pads.append((total // 2, total - total // 2))
    padded = TF.pad(torch.tensor(x), (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    ref = TF.conv2d(padded, torch.tensor(wt), stride=s).numpy()
    assert y.shape == list(ref.shape)
    np.testing.assert_allclose(y.read(), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_same_grads_match_torch():
    x, wt = _data((2, 4, 7, 6), np.float64), _data((4, 1, 3, 3), np.float64)
    xv, wv = F.const(x), F.const(wt)
    y = F.conv2d(xv, wv, None, (2, 2), group=4, padding_mode=F.SAME)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    ty = TF.conv2d(TF.pad(tx, (0, 1, 1, 1)), tw, stride=2, groups=4)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10)
    ty.sum().backward()
    gx, gw = F.grad([F.reduce_sum(y)], [xv, wv])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gw.read(), tw.grad.numpy(), rtol=1e-10)


def test_conv2d_placeholder_rewrite_recomputes():
    x = F.placeholder([1, 2, 5, 5])
    wt = _data((3, 2, 3, 3))
    y = F.relu(F.conv2d(x, F.const(wt), None, padding=(1, 1)))
    for _ in range(2):
        a = _data((1, 2, 5, 5))
        x.write(a)
        ref = TF.relu(TF.conv2d(torch.tensor(a), torch.tensor(wt), padding=1)).numpy()
        np.testing.assert_allclose(y.read(), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [
    # N, Cin, H, W, Cout, K, stride, pad, out_pad, dilation, group
    (1, 3, 5, 4, 2, 3, 2, 1, 1, 1, 1),
    (2, 4, 3, 3, 6, 4, 2, 1, 0, 1, 2),
    (1, 2, 4, 5, 3, 3, 1, 0, 0, 2, 1),
    (2, 4, 4, 4, 4, 3, 2, 1, 1, 1, 4),
])
def test_conv2d_transpose_and_grads_match_torch(case):
    n, ci, h, w, co, k, s, p, op, d, g = case
    x, wt, b = _data((n, ci, h, w)), _data((ci, co // g, k, k)), _data(co)
    xv, wv, bv = F.const(x), F.const(wt), F.const(b)
    y = F.conv2d_transpose(xv, wv, bv, (s, s), (p, p), (d, d), g, output_padding=(op, op))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    ty = TF.conv_transpose2d(tx, tw, tb, s, p, op, g, d)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    dy = _data(ty.shape)
    ty.backward(torch.tensor(dy))
    gx, gw, gb = F.grad([y], [xv, wv, bv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw.read(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.read(), tb.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_conv1d_matches_torch():
    x, wt, b = _data((2, 4, 17)), _data((6, 2, 3)), _data(6)
    y = F.conv1d(F.const(x), F.const(wt), F.const(b), stride=2, padding=1, dilate=2, group=2)
    ref = TF.conv1d(torch.tensor(x), torch.tensor(wt), torch.tensor(b), 2, 1, 2, 2).numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("group", [1, 3])
def test_conv2d_second_order_gradients_by_finite_differences(gradcheck, group):
    x = RNG.standard_normal((1, 3, 5, 4))
    wt = RNG.standard_normal((3, 3 // group, 3, 2))

    def fn(xv, wv):
        y = F.conv2d(xv, wv, None, (1, 2), (1, 1), group=group)
        gx, = F.grad([F.reduce_sum(y * y)], [xv])
        return gx

    gradcheck(fn, [x, wt], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("args,match", [
    (dict(x=(1, 3, 5, 5), w=(4, 2, 3, 3)), "channels"),
    (dict(x=(1, 4, 5, 5), w=(3, 2, 3, 3), group=2), "divisible"),
    (dict(x=(1, 3, 2, 2), w=(4, 3, 3, 3)), "empty output"),
    (dict(x=(3, 5, 5), w=(4, 3, 3, 3)), "4-D"),
])
def test_conv2d_bad_shapes_raise_clear_errors(args, match):
    x, w = F.const(_data(args["x"])), F.const(_data(args["w"]))
    with pytest.raises(F.OpError, match=match):
        F.conv2d(x, w, None, group=args.get("group", 1))


def test_conv2d_rejects_mixed_and_integer_dtypes():
    w = F.const(_data((2, 1, 1, 1)))
    with pytest.raises(F.OpError, match="float32 or float64"):
        F.conv2d(F.const(_data((1, 1, 2, 2), np.float64)), w)
    with pytest.raises(F.OpError, match="float32 or float64"):
        F.conv2d(F.const(np.ones((1, 1, 2, 2), np.int32)), w)


def test_conv2d_same_with_explicit_padding_is_an_error():
    with pytest.raises(F.OpError, match="SAME"):
        F.conv2d(F.const(_data((1, 1, 4, 4))), F.const(_data((1, 1, 3, 3))), None,
                 padding=(1, 1), padding_mode=F.SAME)


@pytest.mark.parametrize("n,c,o,h,w,pad", [
    (2, 16, 24, 25, 27, (1, 1)),       # Winograd F(4x4,3x3): edge tiles cut off
    (1, 32, 16, 24, 23, (0, 0)),
    (1, 20, 17, 26, 24, (0, 1, 2, 1)),  # asymmetric pads (top, left, bottom, right)
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_3x3_winograd_shapes_match_torch(n, c, o, h, w, pad, dtype):
    x, wt, b = _data((n, c, h, w), dtype), _data((o, c, 3, 3), dtype), _data(o, dtype)
    wv = F.const(wt)
    tx = torch.tensor(x)
    if len(pad) == 4:
        tx, tpad = TF.pad(tx, (pad[1], pad[3], pad[0], pad[2])), 0
    else:
        tpad = pad[0]
    ref = TF.conv2d(tx, torch.tensor(wt), torch.tensor(b), 1, tpad).numpy()
    for _ in range(2):  # the second run uses the cached transformed weight
        y = F.conv2d(F.const(x), wv, F.const(b), padding=pad)
        # Winograd F(4x4, 3x3) rounds to about 1e-5 (float32) / 1e-14 (float64) of the
        # output's scale (outputs here reach ~40), also on outputs near zero: a purely
        # relative or a fixed absolute tolerance failed for some random data.
        scale = float(np.abs(ref).max())
        tol = (dict(rtol=1e-4, atol=2e-5 * scale) if dtype == np.float32
               else dict(rtol=1e-10, atol=1e-12 * scale))
        np.testing.assert_allclose(y.read(), ref, **tol)


def test_depthwise_stride1_dilated_matches_torch():
    x, wt = _data((2, 5, 9, 8)), _data((5, 1, 3, 3))
    y = F.conv2d(F.const(x), F.const(wt), None, padding=(2, 2), dilate=(2, 2), group=5)
    ref = TF.conv2d(torch.tensor(x), torch.tensor(wt), None, 1, 2, 2, 5).numpy()
    np.testing.assert_allclose(y.read(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act,ref_act", [("relu", TF.relu), ("relu6", TF.relu6)])
@pytest.mark.parametrize("c,o,k,g", [(3, 5, 3, 1), (20, 18, 3, 1), (6, 6, 3, 6), (4, 8, 1, 1)])
def test_conv2d_fused_activation_and_grads_match_torch(act, ref_act, c, o, k, g):
    x = _data((1, c, 25, 24), np.float64) * 3
    wt, b = _data((o, c // g, k, k), np.float64), _data(o, np.float64)
    xv, wv, bv = F.const(x), F.const(wt), F.const(b)
    y = F.conv2d(xv, wv, bv, padding=(k // 2, k // 2), group=g, activation=act)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    ty = ref_act(TF.conv2d(tx, tw, tb, 1, k // 2, 1, g))
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-9, atol=1e-9)
    ty.sum().backward()
    grads = F.grad([F.reduce_sum(y)], [xv, wv, bv])
    for ours, theirs in zip(grads, (tx, tw, tb)):
        np.testing.assert_allclose(ours.read(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("s,p,d,g", [((1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
                                     ((2, 1, 2), (0, 1, 2), (1, 2, 1), 2),
                                     ((1, 2, 1), (2, 0, 1), (2, 1, 1), 1)])
def test_conv3d_and_grads_match_torch(s, p, d, g):
    x, wt, b = _data((2, 4, 5, 6, 7), np.float64), _data((6, 4 // g, 3, 2, 3), np.float64), \
        _data(6, np.float64)
    xv, wv, bv = F.const(x), F.const(wt), F.const(b)
    y = F.conv3d(xv, wv, bv, s, p, d, g)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    ty = TF.conv3d(tx, tw, tb, s, p, d, g)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    dy = _data(ty.shape, np.float64)
    ty.backward(torch.tensor(dy))
    grads = F.grad([y], [xv, wv, bv], [F.const(dy)])
    for ours, theirs in zip(grads, (tx, tw, tb)):
        np.testing.assert_allclose(ours.read(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)
