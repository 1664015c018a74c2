"""The JSON dump against the real wheel's own dump (``-f MNN --JsonFile``)."""

import json
import os
import pathlib
import sys

import numpy as np
from format_oracle import convert_onnx
from onnx import TensorProto, helper, numpy_helper

from mnn.format import to_json
from mnn.format.json_dump import main


def _model():
    w = numpy_helper.from_array(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) / 7, "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("ReduceMean", ["r"], ["y"], axes=[2, 3], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _wheel_json(model_path, folder):
    sys.modules["MNN.tools.utils.log"] = None
    import _tools

    out = os.path.join(folder, "wheel.json")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        _tools.mnnconvert(["mnnconvert", "-f", "MNN", "--modelFile", model_path, "--JsonFile", out])
    finally:
        os.chdir(cwd)
    return json.loads(pathlib.Path(out).read_text())


def test_dump_agrees_with_wheel_dump(tmp_path):
    path = convert_onnx(_model(), tmp_path)
    ours = json.loads(to_json(path))
    theirs = _wheel_json(path, str(tmp_path))
    assert ours["outputName"] == theirs["outputName"]
    assert ours["tensorName"] == theirs["tensorName"]
    assert ours["sourceType"] == theirs["sourceType"] == "ONNX"
    assert [op["type"] for op in ours["oplists"]] == [op["type"] for op in theirs["oplists"]]
    for mine, wheel in zip(ours["oplists"], theirs["oplists"]):
        assert mine["main_type"] == wheel["main_type"]
        if mine["type"] == "Convolution":
            for key in ("kernelX", "padMode", "outputCount", "relu"):
                assert mine["main"]["common"].get(key) == wheel["main"]["common"][key]
            np.testing.assert_allclose(mine["main"]["weight"], wheel["main"]["weight"], rtol=1e-5)
        if mine["type"] == "Reduction":
            assert mine["main"]["operation"] == wheel["main"]["operation"] == "MEAN"


def test_command_line(tmp_path, capsys):
    path = convert_onnx(_model(), tmp_path)
    out = str(tmp_path / "m.json")
    assert main([path, "-o", out]) == 0
    assert json.loads(pathlib.Path(out).read_text())["oplists"][0]["type"] == "Input"
    assert main([str(tmp_path / "missing.mnn")]) == 1
    assert "cannot read model file" in capsys.readouterr().err
