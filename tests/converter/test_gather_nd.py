"""GatherND with batch_dims through the converter (oracle: onnxruntime)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter.onnx.loader import ConvertError, convert_graph


def _model(dshape, ishape, batch_dims):
    node = helper.make_node("GatherND", ["d", "i"], ["y"], batch_dims=batch_dims)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("d", TensorProto.FLOAT, dshape),
                      helper.make_tensor_value_info("i", TensorProto.INT64, ishape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("dshape,ishape,b", [((2, 3, 4), (2, 1), 1),
                                             ((2, 3, 4, 5), (2, 3, 2, 1), 2),
                                             ((3, 2, 4), (3, 5, 2), 1),
                                             ((2, 2, 3, 2), (2, 2, 2), 2)])
def test_batch_dims_match_onnxruntime(dshape, ishape, b):
    rng = np.random.default_rng(sum(dshape))
    d = rng.standard_normal(dshape).astype(np.float32)
    k = ishape[-1]
    idx = np.stack([rng.integers(0, dshape[b + j], ishape[:-1]) for j in range(k)], -1)
    model = _model(dshape, ishape, b)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(
                                    None, {"d": d, "i": idx})[0]
    got = convert_graph(model).run({"d": d, "i": idx})["y"]
    np.testing.assert_array_equal(got, want)


def test_mismatched_batch_dims_name_the_node():
    with pytest.raises(ConvertError, match="GatherND.*batch_dims"):
        convert_graph(_model((2, 3), (3, 1), 1))
