"""Model files for the runtime tests, made by the real MNN wheel's converter (helpers).

Each model is a small ONNX graph built here with ``onnx.helper`` and converted by the wheel
(through its compiled module, never its console script) in a folder of its own, once per
test session.
"""
import os
import sys

import numpy as np
import pytest

f32 = np.float32


def _onnx():
    onnx = pytest.importorskip("onnx")
    return onnx, onnx.helper, onnx.TensorProto, onnx.numpy_helper


def convert_with_wheel(model, folder):
    """Convert ONNX ``model`` to ``folder/m.mnn`` with the wheel; returns the paths."""
    onnx, *_ = _onnx()
    pytest.importorskip("MNN")
    sys.modules["MNN.tools.utils.log"] = None  # keep the wheel's telemetry out
    import _tools

    os.makedirs(folder, exist_ok=True)
    src = os.path.join(folder, "m.onnx")
    dst = os.path.join(folder, "m.mnn")
    onnx.save(model, src)
    cwd = os.getcwd()
    os.chdir(folder)  # the converter writes a scratch file into the working directory
    try:
        _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", src, "--MNNModel",
                           dst, "--bizCode", "biz"])
    finally:
        os.chdir(cwd)
    if not os.path.exists(dst):
        pytest.fail(f"the wheel's converter did not write {dst}")
    return src, dst


ELEMENTWISE_B = np.random.default_rng(0).standard_normal(3).astype(f32)


def elementwise_model():
    """y = exp(tanh(x + b)); z = y * x2 (inputs x [2,3], x2 [2,3])."""
    _, h, T, nh = _onnx()
    b = ELEMENTWISE_B
    g = h.make_graph(
        [h.make_node("Add", ["x", "b"], ["a"]), h.make_node("Tanh", ["a"], ["r"]),
         h.make_node("Exp", ["r"], ["y"]), h.make_node("Mul", ["y", "x2"], ["z"])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("x2", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("z", T.FLOAT, [2, 3])],
        [nh.from_array(b, "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def add_relu_model():
    """y = relu(x + b): MNN's converter fuses the ReLU into the BinaryOp."""
    _, h, T, nh = _onnx()
    g = h.make_graph(
        [h.make_node("Add", ["x", "b"], ["a"]), h.make_node("Relu", ["a"], ["y"])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [nh.from_array(ELEMENTWISE_B, "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def residual_model():
    """y = relu(conv3x3(x) + x), a ResNet block's ending: the converter fuses the ReLU
    into the Add's BinaryOp."""
    _, h, T, nh = _onnx()
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((4, 4, 3, 3)) * 0.3).astype(f32)
    b = rng.standard_normal(4).astype(f32) * 0.1
    g = h.make_graph(
        [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         h.make_node("Add", ["c", "x"], ["a"]), h.make_node("Relu", ["a"], ["y"])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 6, 5])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 6, 5])],
        [nh.from_array(w, "w"), nh.from_array(b, "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def shape_chain_model():
    """y = reshape(x, [shape(x)[0], -1]) * 2 for x [1, 3, 4]: a shape chain the reader
    computes for the declared input shape."""
    _, h, T, nh = _onnx()
    g = h.make_graph(
        [h.make_node("Shape", ["x"], ["s"]),
         h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         h.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
         h.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
         h.make_node("Reshape", ["x", "target"], ["r"]),
         h.make_node("Mul", ["r", "two"], ["y"])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 12])],
        [nh.from_array(np.array(0, np.int64), "zero"),
         nh.from_array(np.array([0], np.int64), "axes"),
         nh.from_array(np.array([-1], np.int64), "minus1"),
         nh.from_array(np.array(2, f32), "two")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def if_model():
    """out = (sum(x) > 0) ? x * 2 + 1 : x - 3 (the branches read x from the outer scope)."""
    _, h, T, nh = _onnx()
    two, one, three = (nh.from_array(np.array(v, f32), n) for v, n in
                       ((2, "two"), (1, "one"), (3, "three")))
    then_g = h.make_graph(
        [h.make_node("Mul", ["x", "two"], ["t0"]), h.make_node("Add", ["t0", "one"], ["t"])],
        "then", [], [h.make_tensor_value_info("t", T.FLOAT, [2, 3])])
    else_g = h.make_graph([h.make_node("Sub", ["x", "three"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [2, 3])])
    g = h.make_graph(
        [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         h.make_node("Greater", ["s", "zero"], ["c"]),
         h.make_node("If", ["c"], ["out"], then_branch=then_g, else_branch=else_g)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("out", T.FLOAT, [2, 3])],
        [nh.from_array(np.array(0, f32), "zero"), two, one, three])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def loop_model():
    """ONNX Loop: v <- v + x for M iterations (while iter < stop), scan of v * iter."""
    _, h, T, _nh = _onnx()
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "x"], ["v_out"]),
         h.make_node("Cast", ["iter"], ["iter_f"], to=T.FLOAT),
         h.make_node("Less", ["iter_f", "stop"], ["cond_out"]),
         h.make_node("Mul", ["v_out", "iter_f"], ["scan"])],
        "body",
        [h.make_tensor_value_info("iter", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("v_out", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("scan", T.FLOAT, [2, 3])])
    g = h.make_graph(
        [h.make_node("Loop", ["M", "c", "v0"], ["v", "s"], body=body)], "g",
        [h.make_tensor_value_info("M", T.INT64, []),
         h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("v0", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("stop", T.FLOAT, [])],
        [h.make_tensor_value_info("v", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("s", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def conv_model():
    """A small CNN: conv 3x3 -> relu -> max pool -> conv 1x1 -> global average."""
    _, h, T, nh = _onnx()
    rng = np.random.default_rng(1)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(f32)
    b1 = rng.standard_normal(8).astype(f32) * 0.1
    w2 = (rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(f32)
    g = h.make_graph(
        [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c1"], ["r1"]),
         h.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
         h.make_node("Conv", ["p1", "w2"], ["c2"]),
         h.make_node("GlobalAveragePool", ["c2"], ["y"])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 1, 1])],
        [nh.from_array(w1, "w1"), nh.from_array(b1, "b1"), nh.from_array(w2, "w2")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def wheel_module_outputs(path, feeds, input_names=(), output_names=()):
    """Run the real wheel's Module API on ``feeds`` (list of arrays) -> list of arrays."""
    MNN = pytest.importorskip("MNN")
    m = MNN.nn.load_module_from_file(path, list(input_names), list(output_names))
    info = m.get_info()
    vars_ = []
    for arr, var in zip(feeds, info["inputs"]):
        arr = np.ascontiguousarray(arr)
        v = MNN.expr.placeholder(list(arr.shape), var.data_format, var.dtype)
        v.write(arr.ravel().tolist())
        vars_.append(v)
    return [np.array(o.read(), copy=True) for o in m.onForward(vars_)]
