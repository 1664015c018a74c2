"""Resize (MNN's Interp) both ways against the real wheel and onnxruntime."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

from mnn.express import graph as _graph
from mnn.express import io

CASES = {
    "near_asym_floor": {
        "mode": "nearest",
        "coordinate_transformation_mode": "asymmetric",
        "nearest_mode": "floor",
    },
    "near_half_rpf": {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
    },
    "lin_half": {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
    "lin_align": {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
    "lin_pyt": {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
    "lin_asym": {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
    "cubic_half": {"mode": "cubic", "coordinate_transformation_mode": "half_pixel"},
}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    nodes = [helper.make_node("Resize", ["x", "", "scales"], [k], **kw) for k, kw in CASES.items()]
    nodes.append(
        helper.make_node(
            "Resize",
            ["x", "", "", "sizes"],
            ["sized"],
            mode="linear",
            coordinate_transformation_mode="half_pixel",
        )
    )
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 7])],
        [helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, None) for n in nodes],
        [
            numpy_helper.from_array(np.float32([1, 1, 2, 1.5]), "scales"),
            numpy_helper.from_array(np.int64([1, 2, 8, 3]), "sizes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model, convert_onnx(model, tmp_path_factory.mktemp("resize"))


@pytest.mark.parametrize("name", list(CASES) + ["sized"])
def test_converted_resize(name, converted, rng):
    ort = pytest.importorskip("onnxruntime")
    model, path = converted
    x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    (expect,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run([name], {"x": x})
    (ours,) = ours_run(path, {"x": x}, [name])
    np.testing.assert_allclose(ours, expect, rtol=1e-5, atol=1e-5)
    if name != "cubic_half":  # the wheel's cubic Interp disagrees with onnxruntime
        (theirs,) = wheel_run(path, {"x": x}, [name])
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


WRITTEN = {
    "nearest_floor": {
        "out_hw": (10, 14),
        "scales": None,
        "mode": "nearest",
        "coord": "asymmetric",
        "nearest_mode": "floor",
    },
    "nearest_round": {
        "out_hw": (9, 4),
        "scales": None,
        "mode": "nearest",
        "coord": "half_pixel",
        "nearest_mode": "round_prefer_floor",
    },
    "linear_scales": {
        "out_hw": (10, 10),
        "scales": (2.0, 1.5),
        "mode": "linear",
        "coord": "half_pixel",
        "nearest_mode": "round_prefer_floor",
    },
    "linear_align": {
        "out_hw": (3, 11),
        "scales": None,
        "mode": "linear",
        "coord": "align_corners",
        "nearest_mode": "round_prefer_floor",
    },
}


@pytest.mark.parametrize("name", list(WRITTEN))
def test_written_resize_runs_in_wheel(name, tmp_path, rng):
    x = F.placeholder([1, 2, 5, 7])
    x.name = "x"
    y = _graph.apply("resize", [x], cubic_a=-0.75, exclude_outside=False, **WRITTEN[name])[0]
    value = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "r.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-6)
