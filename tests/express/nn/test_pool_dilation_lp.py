"""Dilated max/avg pooling and Lp pooling: torch (max_pool2d with dilation, lp_pool2d) and
onnxruntime (AveragePool with dilations, LpPool with pads and ceil mode) as oracles."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

RNG = np.random.default_rng(7)


def _x(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _mnn(pair):
    return (pair[1], pair[0])


def _ort(op, x, opset=19, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


# (N, C, H, W, kernel(h,w), stride(h,w), pad(h,w), dilation(h,w), ceil_mode)
DILATED = [
    (1, 2, 9, 11, (3, 3), (2, 2), (1, 1), (2, 2), False),
    (2, 3, 10, 9, (3, 2), (1, 2), (1, 1), (2, 3), True),
    (3, 1, 7, 8, (2, 2), (3, 3), (0, 1), (3, 2), True),   # stride > kernel
    (1, 2, 5, 6, (2, 3), (1, 1), (0, 0), (4, 2), False),  # window spans the input
    (2, 2, 13, 12, (3, 3), (2, 1), (1, 0), (1, 4), True),
]


@pytest.mark.parametrize("case", DILATED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dilated_max_pool_and_grad_match_torch(case, dtype):
    n, c, h, w, k, s, p, d, ceil = case
    x = _x((n, c, h, w), dtype)
    xv = F.const(x)
    y = F.max_pool(xv, _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil, dilation=_mnn(d))
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.max_pool2d(tx, k, s, p, dilation=d, ceil_mode=ceil)
    np.testing.assert_array_equal(y.read(), ty.detach().numpy())
    dy = _x(ty.shape, dtype)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", DILATED)
@pytest.mark.parametrize("include", [0, 1])
def test_dilated_avg_pool_matches_onnxruntime(case, include):
    n, c, h, w, k, s, p, d, ceil = case
    x = _x((n, c, h, w))
    y = F.avg_pool(F.const(x), _mnn(k), _mnn(s), pads=_mnn(p), ceil_mode=ceil,
                   count_include_pad=bool(include), dilation=_mnn(d))
    want = _ort("AveragePool", x, kernel_shape=list(k), strides=list(s),
                pads=[p[0], p[1], p[0], p[1]], dilations=list(d), ceil_mode=int(ceil),
                count_include_pad=include)
    np.testing.assert_allclose(y.read(), want, rtol=1e-5, atol=1e-6)


def test_dilated_avg_pool_gradient_by_finite_differences(gradcheck):
    def fn(xv):
        return F.avg_pool(xv, (2, 3), (2, 1), pads=(1, 1), ceil_mode=True,
                          count_include_pad=False, dilation=(2, 2))

    gradcheck(fn, [RNG.standard_normal((2, 2, 7, 6))])


def test_dilated_max_pool_with_nans_matches_torch():
    x = _x((2, 3, 9, 10))
    x[0, 1, 2, 3] = np.nan
    x[1, 2, 4, 4] = x[1, 2, 6, 6] = np.nan
    xv = F.const(x)
    y = F.max_pool(xv, (3, 3), (2, 2), pads=(1, 1), dilation=(2, 2), ceil_mode=True)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.max_pool2d(tx, 3, 2, 1, dilation=2, ceil_mode=True)
    np.testing.assert_array_equal(y.read(), ty.detach().numpy())
    dy = _x(ty.shape)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("geom", [((2, 3), (1, 2)), ((3, 3), (2, 2)), ((2, 2), (3, 3))])
def test_lp_pool_matches_torch(p, geom):
    k, s = geom
    x = _x((2, 3, 9, 8))
    xv = F.const(x)
    y = F.lp_pool(xv, _mnn(k), _mnn(s), p=p)
    # torch raises x (not |x|) to p; ONNX and we take |x|.
    tx = torch.tensor(np.abs(x), requires_grad=True)
    ty = TF.lp_pool2d(tx, p, k, s)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("ceil", [0, 1])
@pytest.mark.parametrize("geom", [((3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
                                  ((2, 3), (2, 2), (1, 0, 0, 2), (1, 1)),
                                  ((2, 2), (1, 2), (1, 1, 1, 1), (2, 2))])
def test_lp_pool_pads_and_ceil_mode_match_onnxruntime(p, ceil, geom):
    k, s, pads, d = geom
    x = _x((1, 2, 9, 10))
    y = F.lp_pool(F.const(x), _mnn(k), _mnn(s), p=float(p), pads=pads, ceil_mode=bool(ceil),
                  dilation=_mnn(d))
    want = _ort("LpPool", x, opset=18, kernel_shape=list(k), strides=list(s), pads=list(pads),
                p=p, ceil_mode=ceil, dilations=list(d))
    np.testing.assert_allclose(y.read(), want, rtol=1e-5, atol=1e-5)


def test_lp_pool_gradient_by_finite_differences(gradcheck):
    def fn(xv):
        return F.lp_pool(xv, (2, 2), (2, 1), p=3.0, pads=(1, 1), ceil_mode=True)

    gradcheck(fn, [RNG.uniform(0.5, 2.0, (1, 2, 5, 6))])


def test_dilation_errors_name_the_problem():
    x = F.const(_x((1, 1, 6, 6)))
    with pytest.raises(F.OpError, match="dilation must be >= 1"):
        F.max_pool(x, (2, 2), (1, 1), dilation=(0, 1))
    with pytest.raises(F.OpError, match="smaller than the kernel"):
        F.max_pool(x, (2, 2), (1, 1), pads=(3, 0), dilation=(2, 1))
    with pytest.raises(F.OpError, match="empty output"):
        F.max_pool(x, (3, 3), (1, 1), dilation=(3, 3))
    with pytest.raises(F.OpError, match="p must be positive"):
        F.lp_pool(x, (2, 2), (1, 1), p=0)
