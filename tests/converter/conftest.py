"""Small ONNX models built with onnx.helper (fast; no torch export needed)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


@pytest.fixture
def cnn_model():
    """Conv 5x5 (64 channels) -> BatchNormalization -> Relu -> Clip(0,6) -> GlobalAveragePool -> Flatten ->
    Gemm, plus an output that is only an Identity of the input and one that is a Dropout
    of it."""
    rng = np.random.default_rng(0)
    # Big enough (about 20 k weights) that an int8 codebook beats float32 in size.
    c = 64
    w = rng.normal(size=(c, 3, 5, 5)).astype(np.float32)
    b = rng.normal(size=c).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.normal(size=c).astype(np.float32)
    mean = rng.normal(size=c).astype(np.float32)
    var = rng.uniform(0.5, 2, c).astype(np.float32)
    fc = rng.normal(size=(10, c)).astype(np.float32) / 8
    fcb = rng.normal(size=10).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[2, 2, 2, 2]),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("Clip", ["r", "lo", "hi"], ["r6"]),
        helper.make_node("GlobalAveragePool", ["r6"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("Dropout", ["x"], ["x_drop"]),
    ]
    inits = [_init("w", w), _init("b", b), _init("gamma", gamma), _init("beta", beta),
             _init("mean", mean), _init("var", var), _init("fc", fc), _init("fcb", fcb),
             _init("lo", np.float32(0)), _init("hi", np.float32(6))]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
         helper.make_tensor_value_info("x_copy", TensorProto.FLOAT, [1, 3, 8, 8]),
         helper.make_tensor_value_info("x_drop", TensorProto.FLOAT, [1, 3, 8, 8])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model

