"""Ops MNN's converter maps beside the node suite's: RandomNormal(Like) (oracle: the
normal distribution's moments and scipy's normality test; seeded draws repeat),
MaxRoiPool (oracle: onnxruntime), ATen cosine_similarity and MNN's own LayerNorm node
(oracle: torch)."""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
from scipy import stats

from converter.onnx.loader import convert_graph


def _model(nodes, inputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_random_normal_has_the_requested_distribution():
    node = helper.make_node("RandomNormal", [], ["y"], shape=[200, 100], mean=2.0,
                            scale=0.5, seed=3.0)
    y = convert_graph(_model([node], [])).run({})["y"]
    assert y.shape == (200, 100) and y.dtype == np.float32
    assert abs(y.mean() - 2.0) < 0.02 and abs(y.std() - 0.5) < 0.02
    assert stats.normaltest(y.ravel()).pvalue > 1e-3
    again = convert_graph(_model([node], [])).run({})["y"]
    np.testing.assert_array_equal(y, again)  # one seed, one stream


def test_random_normal_like_takes_the_input_shape():
    node = helper.make_node("RandomNormalLike", ["x"], ["y"])
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [300, 40])])
    y = convert_graph(model).run({"x": np.zeros((300, 40), np.float32)})["y"]
    assert y.shape == (300, 40)
    assert abs(y.mean()) < 0.03 and abs(y.std() - 1.0) < 0.03


def test_max_roi_pool_matches_onnxruntime():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    rois = np.array([[0, 1, 1, 8, 6], [1, 0, 2, 9, 11], [0, 3, 3, 4, 4]], np.float32)
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[3, 2],
                            spatial_scale=1.0)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                            helper.make_tensor_value_info("rois", TensorProto.FLOAT,
                                                          rois.shape)])
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(
                                    None, {"x": x, "rois": rois})[0]
    got = convert_graph(model).run({"x": x, "rois": rois})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_aten_cosine_similarity_matches_torch():
    import torch

    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5, 3)).astype(np.float32)
    b = rng.standard_normal((2, 5, 3)).astype(np.float32)
    b[0, :, 0] = 0  # a zero vector: eps keeps the quotient finite
    node = helper.make_node("ATen", ["a", "b"], ["y"], operator="cosine_similarity", dim=1,
                            eps=1e-6)
    model = _model([node], [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape),
                            helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape)])
    got = convert_graph(model).run({"a": a, "b": b})["y"]
    want = torch.nn.functional.cosine_similarity(torch.from_numpy(a), torch.from_numpy(b),
                                                 dim=1, eps=1e-6).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _mnn_layer_norm_model(shape, norm_dims, with_beta, attrs):
    import onnx.numpy_helper as nh

    rng = np.random.default_rng(1)
    gamma = rng.standard_normal(shape[-norm_dims:]).astype(np.float32)
    beta = rng.standard_normal(shape[-norm_dims:]).astype(np.float32)
    inits = [nh.from_array(gamma, "gamma")] + ([nh.from_array(beta, "beta")] if with_beta
                                               else [])
    node = helper.make_node("LayerNorm", ["x", "gamma"] + (["beta"] if with_beta else []),
                            ["y"], **attrs)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, gamma, (beta if with_beta else None)


def test_mnn_layer_norm_node_matches_torch():
    # MNN's own LayerNorm node normalizes the last dim (oracle: torch;
    # onnxruntime has no such op).
    import torch
    import torch.nn.functional as tF

    shape = (2, 5, 6, 8)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    for norm_dims, with_beta, attrs in ((1, True, {"axis": -1, "epsilon": 1e-5}),
                                        (1, False, {"axis": 2}),
                                        (1, False, {})):
        model, gamma, beta = _mnn_layer_norm_model(shape, norm_dims, with_beta, attrs)
        got = convert_graph(model).run({"x": x})["y"]
        want = tF.layer_norm(torch.from_numpy(x), shape[-norm_dims:], torch.from_numpy(gamma),
                             None if beta is None else torch.from_numpy(beta),
                             attrs.get("epsilon", 1e-10)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_mnn_layer_norm_node_refuses_groups_and_axis_lists():
    import pytest

    for attrs, what in (({"axis": -1, "group": 2}, "group"), ({"axis": [2, 3]}, "axis")):
        model, _, _ = _mnn_layer_norm_model((2, 4, 3), 1, True, attrs)
        with pytest.raises(Exception, match=what):
            convert_graph(model)
