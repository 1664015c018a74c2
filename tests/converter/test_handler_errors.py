"""Unsupported attribute values fail the conversion with a message naming the node, the
op and the attribute (handlers added for the node suite's remaining ops)."""
import pytest
from onnx import TensorProto, helper

from converter.onnx.loader import ConvertError, convert_graph


def _model(op, inputs, attrs, domain="", opset=24, elem=TensorProto.FLOAT):
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], name="the_node", domain=domain,
                            **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs],
        [helper.make_tensor_value_info("y", elem, None)])
    imports = [helper.make_opsetid("", opset)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    return helper.make_model(graph, opset_imports=imports)


F32 = TensorProto.FLOAT
CASES = [
    ("QuantizeLinear", [("x", (F32, [4])), ("s", (F32, []))], {"precision": 10}, "",
     "precision"),
    ("DFT", [("x", (F32, [1, 8, 1]))], {"inverse": 2}, "", "inverse"),
    ("TensorScatter", [("c", (F32, [2, 4, 3])), ("u", (F32, [2, 1, 3]))], {"mode": "ring"},
     "", "mode"),
    ("Cast", [("x", (F32, [3]))], {"to": TensorProto.FLOAT8E8M0, "round_mode": "even"}, "",
     "round_mode"),
    ("Cast", [("x", (F32, [3]))], {"to": TensorProto.FLOAT8E4M3FN, "saturate": 3}, "",
     "saturate"),
    ("ImageDecoder", [("x", (TensorProto.UINT8, [10]))], {"pixel_format": "HSV"}, "",
     "pixel_format"),
    ("Momentum", [("r", (F32, [])), ("t", (TensorProto.INT64, [])), ("x", (F32, [2])),
                  ("g", (F32, [2])), ("v", (F32, [2]))],
     {"alpha": 0.9, "beta": 0.1, "mode": "heavy", "norm_coefficient": 0.0},
     "ai.onnx.preview.training", "mode"),
    ("GridSample", [("x", (F32, [1, 1, 3, 3])), ("g", (F32, [1, 2, 2, 2]))],
     {"padding_mode": "wrap"}, "", "padding_mode"),
    ("TfIdfVectorizer", [("x", (TensorProto.INT64, [4]))],
     {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0,
      "ngram_counts": [0], "ngram_indexes": [0], "pool_strings": ["a"]}, "", "pool_strings"),
]


@pytest.mark.parametrize("op,inputs,attrs,domain,attr", CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_bad_attribute_names_node_op_and_attribute(op, inputs, attrs, domain, attr):
    model = _model(op, inputs, attrs, domain)
    with pytest.raises(ConvertError) as info:
        convert_graph(model)
    message = str(info.value)
    assert "the_node" in message and op in message and attr in message, message
