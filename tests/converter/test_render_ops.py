"""MNN's render nodes ``texture``, ``texture_mipmap`` and ``raster_grad``: our converter
against torch formulas (grid_sample with uv in [0, 1] as grid 2 * uv - 1, align_corners
False; differences), and the .mnn files both ways against the real wheel.

The real wheel converts these nodes but cannot run them (its CPU backend is built without
MNN's render ops), so file interop is checked as: the wheel's files load and run in ours
(checked against torch), and the files we write load in the wheel and its own JSON dump
shows the same ops and parameters as its conversion of the same ONNX model.
"""
import json
import os
import sys

import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

from converter.cli import main
from converter.onnx.loader import ConvertError, convert_graph
from mnn.format import to_json
from mnn.format.reader import load_graph

rng = np.random.default_rng(3)

TEX = rng.standard_normal((1, 4, 5, 3)).astype(np.float32)
UV = rng.uniform(-0.3, 1.3, (1, 3, 6, 2)).astype(np.float32)
IMG = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _texture_model(op="texture", extra_inputs=0, **attrs):
    names = ["tex", "uv"] + [f"mip{i}" for i in range(extra_inputs)]
    node = helper.make_node(op, names, ["out"], **attrs)
    inputs = [_vi("tex", TEX.shape), _vi("uv", UV.shape)]
    inputs += [_vi(f"mip{i}", (1, 2 >> i, 3 >> i, 3)) for i in range(extra_inputs)]
    graph = helper.make_graph([node], "g", inputs, [_vi("out", None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _raster_grad_model():
    node = helper.make_node("raster_grad", ["img"], ["dx", "dy"])
    graph = helper.make_graph([node], "g", [_vi("img", IMG.shape)],
                              [_vi("dx", None), _vi("dy", None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _torch_texture(tex, uv, mode, padding):
    out = TF.grid_sample(torch.tensor(tex).permute(0, 3, 1, 2), torch.tensor(uv) * 2 - 1,
                         mode, padding, align_corners=False)
    return out.permute(0, 2, 3, 1).numpy()


def _differences(x):
    dx = np.concatenate([np.diff(x, axis=2), np.zeros_like(x[:, :, :1])], axis=2)
    dy = np.concatenate([np.diff(x, axis=1), np.zeros_like(x[:, :1])], axis=1)
    return dx, dy


# (attributes, torch mode, torch padding) as MNN's converter maps nvdiffrast's enums:
# filter 0 nearest, 1/2/3 linear; boundary 1 (wrap) and 2 clamp, 3 zero; absent: linear,
# zero.
ATTRIBUTE_CASES = [
    ({"filter_mode": 1, "boundary_mode": 3}, "bilinear", "zeros"),
    ({"filter_mode": 0, "boundary_mode": 3}, "nearest", "zeros"),
    ({"filter_mode": 1, "boundary_mode": 2}, "bilinear", "border"),
    ({"filter_mode": 0, "boundary_mode": 2}, "nearest", "border"),
    ({"filter_mode": 1, "boundary_mode": 1}, "bilinear", "border"),
    ({"filter_mode": 3, "boundary_mode": 2}, "bilinear", "border"),
    ({"filter_mode": 2, "boundary_mode": 3}, "bilinear", "zeros"),
    ({}, "bilinear", "zeros"),
]


@pytest.mark.parametrize("attrs,mode,padding", ATTRIBUTE_CASES)
@pytest.mark.parametrize("op", ["texture", "texture_mipmap"])
def test_texture_matches_grid_sample(op, attrs, mode, padding):
    got = convert_graph(_texture_model(op, **attrs)).run({"tex": TEX, "uv": UV})["out"]
    np.testing.assert_allclose(got, _torch_texture(TEX, UV, mode, padding), rtol=1e-5,
                               atol=1e-6)


def test_texture_mipmap_samples_the_base_level():
    # MNN's CPU kernel never reads the mip levels: the result is the base level's.
    feeds = {"tex": TEX, "uv": UV, "mip0": np.ones((1, 2, 3, 3), np.float32),
             "mip1": np.ones((1, 1, 1, 3), np.float32)}
    got = convert_graph(_texture_model("texture_mipmap", 2, filter_mode=3,
                                       boundary_mode=2)).run(feeds)["out"]
    np.testing.assert_allclose(got, _torch_texture(TEX, UV, "bilinear", "border"),
                               rtol=1e-5, atol=1e-6)


def test_texture_cube_boundary_samples_the_face_centre():
    # boundary_mode 0 is a cube map (6 faces); direction +z lands at the centre of face 4
    # (+z), where bilinear sampling of a 2 x 2 face averages its four texels.
    tex = rng.standard_normal((1, 6, 2, 2, 3)).astype(np.float32)
    dirs = np.array([[[[0, 0, 1], [0, 0, -2], [3, 0, 0]]]], np.float32)
    node = helper.make_node("texture", ["tex", "uv"], ["out"], filter_mode=1, boundary_mode=0)
    graph = helper.make_graph([node], "g", [_vi("tex", tex.shape), _vi("uv", dirs.shape)],
                              [_vi("out", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got = convert_graph(model).run({"tex": tex, "uv": dirs})["out"]
    np.testing.assert_allclose(got[0, 0], tex[0, [4, 5, 0]].mean(axis=(1, 2)), rtol=1e-6)


def test_raster_grad_gives_forward_differences():
    got = convert_graph(_raster_grad_model()).run({"img": IMG})
    dx, dy = _differences(IMG)
    np.testing.assert_allclose(got["dx"], dx, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["dy"], dy, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("attrs,match", [
    ({"filter_mode": 4}, "filter_mode"),
    ({"boundary_mode": 7}, "boundary_mode"),
])
def test_bad_attribute_is_a_clear_error(attrs, match):
    with pytest.raises(ConvertError, match=f"texture.*{match}"):
        convert_graph(_texture_model(**attrs))


def test_wrong_shapes_name_the_op():
    node = helper.make_node("texture", ["tex", "uv"], ["out"])
    graph = helper.make_graph([node], "g", [_vi("tex", (4, 5, 3)), _vi("uv", UV.shape)],
                              [_vi("out", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ConvertError, match=r"texture.*\(N, H, W, C\)"):
        convert_graph(model)


# ------------------------------------------------------------ files against the wheel


def _wheel(args, folder):
    """Run the real wheel's converter (its compiled module, never the console script) in
    its own folder."""
    pytest.importorskip("MNN")
    sys.modules["MNN.tools.utils.log"] = None
    import _tools

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        _tools.mnnconvert(["mnnconvert", *args])
    finally:
        os.chdir(cwd)


def _wheel_convert(model, folder):
    os.makedirs(folder, exist_ok=True)
    src, dst = os.path.join(folder, "m.onnx"), os.path.join(folder, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    _wheel(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--bizCode", "t"], folder)
    assert os.path.exists(dst), "the real converter produced no file"
    return dst


def _wheel_json(path, folder):
    out = os.path.join(folder, "dump.json")
    _wheel(["-f", "MNN", "--modelFile", path, "--JsonFile", out], folder)
    with open(out) as fh:
        return json.load(fh)


# A FlatBuffer field at its default may be left out of the file; a dump then omits it.
_GRID_SAMPLE_DEFAULTS = {"mode": "BILINEAR", "paddingMode": "ZEROS", "alignCorners": False,
                         "backward": False}


def _render_ops(dump):
    ops = []
    for op in dump["oplists"]:
        if op["type"] not in ("Texture", "RasterDiff"):
            continue
        main = op.get("main")
        if op.get("main_type") == "GridSample":
            main = {**_GRID_SAMPLE_DEFAULTS, **main}
        ops.append((op["type"], op.get("main_type") or "NONE", main, len(op["inputIndexes"]),
                    len(op["outputIndexes"])))
    return ops


def _ours_convert(model, folder):
    os.makedirs(folder, exist_ok=True)
    src, dst = os.path.join(folder, "m.onnx"), os.path.join(folder, "ours.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst]) == 0
    return dst


FILE_CASES = [
    ("texture", {"filter_mode": 1, "boundary_mode": 3}, "bilinear", "zeros"),
    ("texture", {"filter_mode": 0, "boundary_mode": 2}, "nearest", "border"),
    ("texture_mipmap", {"filter_mode": 3, "boundary_mode": 1}, "bilinear", "border"),
]


@pytest.mark.parametrize("op,attrs,mode,padding", FILE_CASES)
def test_wheel_texture_file_runs_in_ours(op, attrs, mode, padding, tmp_path):
    path = _wheel_convert(_texture_model(op, **attrs), str(tmp_path / "wheel"))
    graph = load_graph(path)
    graph.inputs["tex"].write(TEX)
    graph.inputs["uv"].write(UV)
    np.testing.assert_allclose(graph.outputs["out"].read(),
                               _torch_texture(TEX, UV, mode, padding), rtol=1e-5, atol=1e-6)


def test_wheel_raster_grad_file_runs_in_ours(tmp_path):
    path = _wheel_convert(_raster_grad_model(), str(tmp_path / "wheel"))
    graph = load_graph(path)
    graph.inputs["img"].write(IMG)
    dx, dy = _differences(IMG)
    np.testing.assert_allclose(graph.outputs["dx"].read(), dx, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(graph.outputs["dy"].read(), dy, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("model", [
    _texture_model("texture", filter_mode=1, boundary_mode=3),
    _texture_model("texture", filter_mode=0, boundary_mode=2),
    _raster_grad_model(),
], ids=["texture-linear-zero", "texture-nearest-clamp", "raster_grad"])
def test_our_file_matches_the_wheels_conversion(model, tmp_path):
    import MNN

    ours = _ours_convert(model, str(tmp_path / "ours"))
    theirs = _wheel_convert(model, str(tmp_path / "wheel"))
    assert _render_ops(_wheel_json(ours, str(tmp_path / "ours"))) == \
        _render_ops(_wheel_json(theirs, str(tmp_path / "wheel")))
    names = ["img"] if len(model.graph.input) == 1 else ["tex", "uv"]
    outputs = [o.name for o in model.graph.output]
    assert MNN.nn.load_module_from_file(ours, names, outputs) is not None
    # Our reader agrees with the wheel's dump on the parameter table.
    assert _render_ops(json.loads(to_json(ours))) == _render_ops(json.loads(to_json(theirs)))


def test_gradient_ops_round_trip_through_a_file(tmp_path):
    """MNN's gradient forms (Texture with backward=True and the texture's shape as input
    2; RasterDiff with an Extra table) are written and read back; values against torch's
    autograd."""
    tex = F.placeholder(list(TEX.shape))
    uv = F.placeholder(list(UV.shape))
    img = F.placeholder(list(IMG.shape))
    tex.name, uv.name, img.name = "tex", "uv", "img"
    out = F.texture(tex, uv, "linear", "clamp")
    dx, dy = F.raster_diff(img)
    w1 = rng.standard_normal(out.shape).astype(np.float32)
    w2 = rng.standard_normal(IMG.shape).astype(np.float32)
    gtex, gimg = F.grad(F.reduce_sum(out * F.const(w1)) +
                        F.reduce_sum((dx + dy * 2.0) * F.const(w2)), [tex, img])
    gtex.name, gimg.name = "gtex", "gimg"
    path = str(tmp_path / "grads.mnn")
    F.save([gtex, gimg], path)
    # The wheel reads the gradient forms as MNN's training code writes them.
    wheel = [op for op in _wheel_json(path, str(tmp_path))["oplists"]
             if op["type"] in ("Texture", "RasterDiff")]
    assert [(op["type"], op.get("main_type"), len(op["inputIndexes"])) for op in wheel] == \
        [("Texture", "GridSample", 3), ("RasterDiff", "Extra", 2)]
    assert wheel[0]["main"] == {"paddingMode": "CLAMP", "backward": True}
    graph = load_graph(path)
    # Both gradients are linear in what they differentiate: only uv stays an input.
    assert list(graph.inputs) == ["uv"]
    graph.inputs["uv"].write(UV)

    ttex = torch.tensor(TEX, requires_grad=True)
    timg = torch.tensor(IMG, requires_grad=True)
    tout = TF.grid_sample(ttex.permute(0, 3, 1, 2), torch.tensor(UV) * 2 - 1, "bilinear",
                          "border", align_corners=False).permute(0, 2, 3, 1)
    tdx = TF.pad(timg[:, :, 1:] - timg[:, :, :-1], (0, 0, 0, 1))
    tdy = TF.pad(timg[:, 1:] - timg[:, :-1], (0, 0, 0, 0, 0, 1))
    ((tout * torch.tensor(w1)).sum() + ((tdx + tdy * 2) * torch.tensor(w2)).sum()).backward()
    np.testing.assert_allclose(graph.outputs["gtex"].read(), ttex.grad.numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(graph.outputs["gimg"].read(), timg.grad.numpy(), rtol=1e-5,
                               atol=1e-5)


def test_dynamic_dims_stay_dynamic_in_the_file(tmp_path):
    node = helper.make_node("texture", ["tex", "uv"], ["out"], filter_mode=1, boundary_mode=2)
    graph = helper.make_graph([node], "g", [_vi("tex", ["N", "H", "W", 3]),
                                            _vi("uv", ["N", "h", "w", 2])], [_vi("out", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    loaded = load_graph(_ours_convert(model, str(tmp_path)))
    for n, hw, ohw in ((1, (4, 5), (3, 6)), (2, (7, 3), (2, 2))):
        tex = rng.standard_normal((n, *hw, 3)).astype(np.float32)
        uv = rng.uniform(-0.2, 1.2, (n, *ohw, 2)).astype(np.float32)
        loaded.inputs["tex"].write(tex)
        loaded.inputs["uv"].write(uv)
        np.testing.assert_allclose(loaded.outputs["out"].read(),
                                   _torch_texture(tex, uv, "bilinear", "border"), rtol=1e-5,
                                   atol=1e-6)


def test_wheel_texture_mipmap_file_with_mip_inputs_runs_in_ours(tmp_path):
    model = _texture_model("texture_mipmap", 2, filter_mode=2, boundary_mode=2)
    path = _wheel_convert(model, str(tmp_path / "wheel"))
    texture_ops = [op for op in json.loads(to_json(path))["oplists"] if op["type"] == "Texture"]
    assert len(texture_ops) == 1 and len(texture_ops[0]["inputIndexes"]) == 4
    graph = load_graph(path)
    graph.inputs["tex"].write(TEX)
    graph.inputs["uv"].write(UV)
    np.testing.assert_allclose(graph.outputs["out"].read(),
                               _torch_texture(TEX, UV, "bilinear", "border"), rtol=1e-5,
                               atol=1e-6)
