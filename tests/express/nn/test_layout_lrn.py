"""channel_shuffle, crop and lrn against numpy, torch and onnxruntime."""
import mnn.expr as F
import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

RNG = np.random.default_rng(3)


def test_channel_shuffle_matches_numpy_and_mnn_definition():
    x = RNG.standard_normal((2, 6, 3, 4)).astype(np.float32)
    ref = x.reshape(2, 2, 3, 3, 4).transpose(0, 2, 1, 3, 4).reshape(2, 6, 3, 4)
    np.testing.assert_array_equal(F.channel_shuffle(F.const(x), 2).read(), ref)
    # MNN's definition, on NHWC: reshape (N, H, W, group, -1), swap the last two axes.
    nhwc = x.transpose(0, 2, 3, 1).reshape(2, 3, 4, 3, 2).swapaxes(3, 4).reshape(2, 3, 4, 6)
    np.testing.assert_array_equal(F.channel_shuffle(F.const(x), 3).read(),
                                  nhwc.transpose(0, 3, 1, 2))


def test_crop_matches_numpy_slicing():
    x = RNG.standard_normal((2, 5, 6, 7))
    ref_shape = F.const(np.zeros((2, 5, 3, 4)))
    np.testing.assert_array_equal(F.crop(F.const(x), ref_shape, 2, [1, 2]).read(),
                                  x[:, :, 1:4, 2:6])
    np.testing.assert_array_equal(F.crop(F.const(x), [3, 2, 2], -3, 1).read(),
                                  x[:, 1:4, 1:3, 1:3])
    with pytest.raises(F.OpError, match="exceeds"):
        F.crop(F.const(x), [3, 4], 2, [4, 0])


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn_and_grad_match_torch_for_odd_sizes(size):
    x = RNG.standard_normal((2, 7, 3, 4))
    xv = F.const(x)
    y = F.lrn(xv, size, 1e-2, 0.75, 2.0)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.local_response_norm(tx, size, 1e-2, 0.75, 2.0)
    np.testing.assert_allclose(y.read(), ty.detach().numpy(), rtol=1e-12)
    dy = RNG.standard_normal(x.shape)
    ty.backward(torch.tensor(dy))
    (gx,) = F.grad([y], [xv], [F.const(dy)])
    np.testing.assert_allclose(gx.read(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("size", [3, 5])
def test_lrn_matches_onnxruntime(size):
    x = RNG.standard_normal((1, 6, 3, 5)).astype(np.float32)
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=1e-3, beta=0.6, bias=1.5)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = sess.run(None, {"x": x})[0]
    np.testing.assert_allclose(F.lrn(F.const(x), size, 1e-3, 0.6, 1.5).read(), ref,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("size", [2, 4])
def test_lrn_even_sizes_follow_the_onnx_window(size):
    # ONNX: channels max(0, c - floor((size-1)/2)) .. min(C-1, c + ceil((size-1)/2));
    # torch centres even windows the other way and onnxruntime refuses even sizes.
    x = RNG.standard_normal((1, 6, 2, 3))
    sq = x * x
    ssum = np.stack([sq[:, max(0, c - (size - 1) // 2):c + size // 2 + 1].sum(1)
                     for c in range(6)], axis=1)
    ref = x / (1.5 + 1e-3 / size * ssum) ** 0.6
    np.testing.assert_allclose(F.lrn(F.const(x), size, 1e-3, 0.6, 1.5).read(), ref,
                               rtol=1e-12)
