"""The FlatBuffer layer on files from the real converter: decode, re-encode, same model."""

import pathlib

import numpy as np
from format_oracle import convert_onnx, wheel_run
from onnx import TensorProto, helper

from mnn.format import flat
from mnn.format.schema import OP_TYPES


def _small_onnx():
    w = helper.make_tensor(
        "w", TensorProto.FLOAT, [4, 3], np.linspace(-1, 1, 12).astype(np.float32).tolist()
    )
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Exp", ["m"], ["e"]),
        helper.make_node("ReduceSum", ["e"], ["y"], keepdims=1, axes=[1]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _equal(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def test_decode_encode_roundtrip_runs_in_wheel(tmp_path, rng):
    path = convert_onnx(_small_onnx(), tmp_path / "conv")
    data = pathlib.Path(path).read_bytes()
    net = flat.decode(data)
    assert net["outputName"] == ["y"]
    assert net["oplists"][0]["type"] == OP_TYPES["Input"]
    again = flat.encode(net)
    assert _equal(flat.decode(again), net)
    copy = tmp_path / "copy.mnn"
    copy.write_bytes(again)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    expect = np.exp(x @ np.linspace(-1, 1, 12).astype(np.float32).reshape(4, 3)).sum(
        1, keepdims=True
    )
    for p in (path, str(copy)):
        (y,) = wheel_run(p, {"x": x}, ["y"])
        np.testing.assert_allclose(y, expect, rtol=1e-4)


def test_scalar_defaults_and_absent_fields():
    net = flat.decode(
        flat.encode({"oplists": [{"type": 7, "main_type": "BinaryOp", "main": {"opType": 2}}]})
    )
    op = net["oplists"][0]
    assert op["main"]["T"] == 1  # DT_FLOAT default
    assert op["defaultDimentionFormat"] == 1
    assert op["inputIndexes"] is None and net["bizCode"] is None
