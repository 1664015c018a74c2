"""Old-opset forms (attributes that later became inputs) against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from ort_oracle import run_ort
from converter.onnx import load_onnx

X = np.random.default_rng(5).normal(size=(2, 3, 4, 4)).astype(np.float32)


def _model(nodes, outputs, opset):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


CASES = {
    "topk_attr": ([helper.make_node("TopK", ["x"], ["y", "idx"], k=2, axis=3)], ["y"]),
    "clip_attr": ([helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.5)], ["y"]),
    "pad_attr": ([helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 2, 0, 0, 2, 1],
                                   value=1.5)], ["y"]),
    "split_attr": ([helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 2])],
                   ["a", "b"]),
    "squeeze_unsqueeze_attr": ([helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0]),
                                helper.make_node("Squeeze", ["u"], ["y"], axes=[0])], ["y"]),
    "reduce_attr": ([helper.make_node("ReduceSum", ["x"], ["y"], axes=[1, 3], keepdims=0)],
                    ["y"]),
    "softmax_2d_coerced": ([helper.make_node("Softmax", ["x"], ["y"], axis=2)], ["y"]),
    "sum_mean_max": ([helper.make_node("Sum", ["x", "x", "x"], ["s"]),
                      helper.make_node("Mean", ["x", "s"], ["m"]),
                      helper.make_node("Max", ["x", "m"], ["y"])], ["y"]),
    "upsample": ([helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0])],
                 ["y"]),
    "slice_attr": ([helper.make_node("Slice", ["x"], ["y"], starts=[1, -3], ends=[3, 100],
                                     axes=[1, 3])], ["y"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_opset_7_form_matches_onnxruntime(name):
    nodes, outputs = CASES[name]
    model = _model(nodes, outputs, 7)
    want = run_ort(model, {"x": X})
    got = load_onnx(model).run({"x": X})
    for out in outputs:
        np.testing.assert_allclose(got[out], want[out], rtol=1e-5, atol=1e-6)
