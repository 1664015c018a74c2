"""3-D pooling (max, avg, Lp) and max pooling indices against torch (CPU) and onnxruntime."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

from converter.onnx import load_onnx

RNG = np.random.default_rng(31)


def _x(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# (shape, kernel, stride, pad, dilation, ceil_mode), all (d, h, w)
CASES = [
    ((1, 2, 5, 6, 7), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False),
    ((2, 3, 7, 5, 6), (3, 3, 2), (2, 1, 2), (1, 1, 1), (1, 1, 1), True),
    ((2, 1, 6, 7, 5), (2, 3, 2), (3, 2, 3), (1, 1, 0), (1, 1, 1), True),  # stride > kernel
    ((1, 2, 4, 5, 6), (4, 5, 6), (1, 1, 1), (0, 0, 0), (1, 1, 1), False),  # kernel = input
    ((2, 2, 9, 8, 7), (3, 2, 2), (1, 2, 1), (1, 1, 0), (2, 3, 2), True),  # dilated
]


def _grad(y, xv, dy):
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    return gx.read()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool3d_and_grad_match_torch(case, dtype):
    shape, k, s, p, d, ceil = case
    x = _x(shape, dtype)
    if dtype == np.float64:
        # NaNs, several in some windows: torch's value is NaN, its index the last NaN.
        x.reshape(-1)[::7] = np.nan
    xv = F.const(x)
    y = F.max_pool3d(xv, k, s, p, d, ceil)
    tx = torch.tensor(x, requires_grad=True)
    ty, ti = TF.max_pool3d(tx, k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(y.read(), ty.detach().numpy())
    np.testing.assert_array_equal(F.max_pool_indices(xv, k, s, p, d, ceil).read(), ti.numpy())
    dy = _x(ty.shape, dtype)
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(_grad(y, xv, dy), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c[4] == (1, 1, 1)])
@pytest.mark.parametrize("include", [True, False])
def test_avg_pool3d_and_grad_match_torch(case, include):
    shape, k, s, p, _, ceil = case
    x = _x(shape, np.float64)
    xv = F.const(x)
    y = F.avg_pool3d(xv, k, s, p, ceil, include)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.avg_pool3d(tx, k, s, p, ceil, include)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12)
    dy = _x(ty.shape, np.float64)
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(_grad(y, xv, dy), tx.grad.numpy(), rtol=1e-12)


def _ort(op, x, outputs=("y",), opset=19, **attrs):
    node = helper.make_node(op, ["x"], list(outputs), **attrs)
    types = [TensorProto.FLOAT, TensorProto.INT64]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info(o, t, None) for o, t in zip(outputs, types)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return model, sess.run(None, {"x": x})


@pytest.mark.parametrize("include", [0, 1])
@pytest.mark.parametrize("ceil", [0, 1])
def test_dilated_avg_and_lp_pool3d_match_onnxruntime(include, ceil):
    x = _x((1, 2, 9, 8, 10))
    geom = dict(kernel_shape=[2, 3, 2], strides=[2, 1, 3], pads=[1, 1, 0, 0, 1, 1],
                dilations=[2, 1, 3], ceil_mode=ceil)
    _, (want,) = _ort("AveragePool", x, count_include_pad=include, **geom)
    y = F.avg_pool3d(F.const(x), (2, 3, 2), (2, 1, 3), (1, 1, 0, 0, 1, 1), bool(ceil),
                     bool(include), (2, 1, 3))
    np.testing.assert_allclose(y.read(), want, rtol=1e-5, atol=1e-6)
    _, (want,) = _ort("LpPool", x, opset=18, p=3, **geom)
    y = F.lp_pool3d(F.const(x), (2, 3, 2), (2, 1, 3), 3, (1, 1, 0, 0, 1, 1), bool(ceil),
                    (2, 1, 3))
    np.testing.assert_allclose(y.read(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("k, s, p, d, ceil", [((3, 3), (2, 2), (1, 1), (1, 1), True),
                                              ((2, 3), (3, 1), (0, 1), (2, 2), False),
                                              ((2, 2), (2, 2), (0, 0), (1, 1), True)])
def test_max_pool_indices_2d_match_torch_with_nans(k, s, p, d, ceil):
    x = _x((2, 3, 9, 11))
    x[0, 0, 1, 1] = x[1, 2, 3, 4] = np.nan
    got = F.max_pool_indices(F.const(x), k, s, p, d, ceil).read()
    _, want = TF.max_pool2d(torch.tensor(x), k, s, p, d, ceil, return_indices=True)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (2, 2, 5, 6, 7), (2, 3, 11)])
def test_onnx_maxpool_indices_match_onnxruntime(storage_order, shape):
    x = _x(shape)
    n = len(shape) - 2
    attrs = dict(kernel_shape=[3] * n, strides=[2] * n, pads=[1] * (2 * n),
                 storage_order=storage_order)
    model, (want_y, want_i) = _ort("MaxPool", x, ("y", "i"), opset=12, **attrs)
    got = load_onnx(model).run({"x": x})
    np.testing.assert_array_equal(got["y"], want_y)
    np.testing.assert_array_equal(got["i"], want_i)


def test_pool3d_errors_name_the_problem():
    x = F.const(_x((1, 1, 4, 4, 4)))
    with pytest.raises(F.OpError, match="5-D"):
        F.max_pool3d(F.const(_x((1, 4, 4, 4))), 2)
    with pytest.raises(F.OpError, match="kernel must be one int or 3 ints"):
        F.avg_pool3d(x, (2, 2))
    with pytest.raises(F.OpError, match="smaller than the kernel"):
        F.max_pool3d(x, 2, 1, 2)
    with pytest.raises(F.OpError, match="empty output"):
        F.avg_pool3d(x, 5)
    with pytest.raises(F.OpError, match="float32 or float64"):
        F.max_pool3d(F.const(np.ones((1, 1, 4, 4, 4), np.int32)), 2)
    with pytest.raises(F.OpError, match="4-D or 5-D"):
        F.max_pool_indices(F.const(_x((4, 4, 4))), 2)
