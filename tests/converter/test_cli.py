"""mnnconvert end to end: ONNX -> .mnn -> our reader (oracle: onnxruntime)."""
import json
import os

import numpy as np
import onnx
import pytest
from ort_oracle import run_ort
from onnx import TensorProto, helper

from converter.cli import main
from converter.onnx import UnsupportedOpsError, load_onnx
from mnn.express.io import load_as_dict
from mnn import nn as mnn_nn
import mnn.expr as F

X = np.random.default_rng(1).normal(size=(1, 3, 8, 8)).astype(np.float32)


def _save(model, folder, name="m.onnx"):
    path = os.path.join(folder, name)
    onnx.save(model, path)
    return path


def _run_file(path, x):
    var_map = load_as_dict(path)
    var_map["x"].write(x)
    return var_map


def test_quickstart_command_converts_and_matches_onnxruntime(cnn_model, tmp_path, capsys):
    src = _save(cnn_model, tmp_path)
    dst = str(tmp_path / "m.mnn")
    # The documented example, with argparse's prefix match of --MNN for --MNNModel.
    assert main(["-f", "ONNX", "--modelFile", src, "--MNN", dst, "--bizCode", "demo"]) == 0
    assert "Converted" in capsys.readouterr().out
    want = run_ort(cnn_model, {"x": X})
    got = _run_file(dst, X)
    np.testing.assert_allclose(got["y"].read(), want["y"], rtol=1e-4, atol=1e-5)


def test_identity_and_dropout_outputs_come_back(cnn_model):
    graph = load_onnx(cnn_model)
    out = graph.run({"x": X})
    assert list(out) == ["y", "x_copy", "x_drop"]
    np.testing.assert_array_equal(out["x_copy"], X)
    np.testing.assert_array_equal(out["x_drop"], X)


def test_batchnorm_is_folded_into_the_convolution(cnn_model, tmp_path, capsys):
    src = _save(cnn_model, tmp_path)
    dst = str(tmp_path / "m.mnn")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst]) == 0
    out = capsys.readouterr().out
    assert "batchnorms folded into conv 1" in out
    assert "activations fused into conv 1" in out
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                 "--optimizeLevel", "0"]) == 0
    out = capsys.readouterr().out
    assert "batchnorms folded" not in out and "activations fused" not in out


def test_every_unsupported_op_is_listed(tmp_path):
    nodes = [helper.make_node("FancyOp", ["x"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("OtherOp", ["b"], ["y"], name="second", domain="com.acme")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.acme", 1)])
    with pytest.raises(UnsupportedOpsError) as info:
        load_onnx(model)
    message = str(info.value)
    assert "2 unsupported op(s)" in message
    assert "'first': FancyOp (domain 'ai.onnx', opset 13)" in message
    assert "'second': OtherOp (domain 'com.acme', opset 1)" in message
    src = _save(model, tmp_path)
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", str(tmp_path / "o.mnn")]) == 1


def test_op_list(capsys):
    assert main(["--OP"]) == 0
    out = capsys.readouterr().out
    for op in ("Conv", "Loop", "Scan", "If", "Softmax", "Reshape"):
        assert f"  {op} " in out


def test_missing_model_file_is_a_clear_error(tmp_path, capsys):
    assert main(["-f", "ONNX", "--modelFile", str(tmp_path / "nope.onnx"),
                 "--MNNModel", str(tmp_path / "o.mnn")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_weight_quantisation_and_fp16_shrink_the_file(cnn_model, tmp_path):
    # Big enough weights that the codebook pays off.
    src = _save(cnn_model, tmp_path)
    sizes = {}
    for tag, flags in (("f32", []), ("q8", ["--weightQuantBits", "8"]),
                       ("f16", ["--fp16"])):
        dst = str(tmp_path / f"{tag}.mnn")
        assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst] + flags) == 0
        sizes[tag] = os.path.getsize(dst)
        want = run_ort(cnn_model, {"x": X})["y"]
        got = _run_file(dst, X)["y"].read()
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert rel < (1e-5 if tag == "f32" else 2e-2), (tag, rel)
    assert sizes["q8"] < sizes["f32"] and sizes["f16"] < sizes["f32"]


def test_reencode_mnn_and_info(cnn_model, tmp_path, capsys):
    src = _save(cnn_model, tmp_path)
    first = str(tmp_path / "a.mnn")
    second = str(tmp_path / "b.mnn")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", first]) == 0
    assert main(["-f", "MNN", "--modelFile", first, "--MNNModel", second, "--fp16"]) == 0
    want = run_ort(cnn_model, {"x": X})["y"]
    np.testing.assert_allclose(_run_file(second, X)["y"].read(), want, rtol=1e-2, atol=1e-2)
    capsys.readouterr()
    assert main(["-f", "ONNX", "--modelFile", src, "--info"]) == 0
    out = capsys.readouterr().out
    assert "x: shape [1, 3, 8, 8], dtype float32" in out and "conv2d: 1" in out


def _testdir(folder, model, x, corrupt=False):
    os.makedirs(folder, exist_ok=True)
    want = run_ort(model, {"x": x})
    with open(os.path.join(folder, "input.json"), "w") as fh:
        json.dump({"inputs": [{"name": "x", "shape": list(x.shape)}], "outputs": ["y"]}, fh)
    np.savetxt(os.path.join(folder, "x.txt"), x.ravel())
    y = want["y"] + (1.0 if corrupt else 0.0)
    np.savetxt(os.path.join(folder, "y.txt"), y.ravel())


def test_testdir_checks_outputs(cnn_model, tmp_path, capsys):
    src = _save(cnn_model, tmp_path)
    good, bad = str(tmp_path / "good"), str(tmp_path / "bad")
    _testdir(good, cnn_model, X)
    _testdir(bad, cnn_model, X, corrupt=True)
    dst = str(tmp_path / "m.mnn")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--testdir", good]) == 0
    assert "TEST_SUCCESS" in capsys.readouterr().out
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--testdir", bad]) == 1


def test_input_config_file_fixes_a_dynamic_shape(tmp_path, capsys):
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    src = _save(model, tmp_path)
    cfg = tmp_path / "config.txt"
    cfg.write_text("input_names = x\ninput_dims = 2x3x4\n")
    assert main(["-f", "ONNX", "--modelFile", src, "--info",
                 "--inputConfigFile", str(cfg)]) == 0
    assert "y: shape [2, 12]" in capsys.readouterr().out
    cfg.write_text("input_names = x\ninput_dims = 2xfour\n")
    assert main(["-f", "ONNX", "--modelFile", src, "--info",
                 "--inputConfigFile", str(cfg)]) == 1
    assert "bad dims" in capsys.readouterr().err


def test_dynamic_batch_stays_dynamic(cnn_model, tmp_path, capsys):
    # Make the batch dimension symbolic: the converted graph runs any batch size.
    model = onnx.ModelProto()
    model.CopyFrom(cnn_model)
    for vi in list(model.graph.input) + list(model.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_param = "batch"
    graph = load_onnx(model)
    for batch in (1, 3):
        x = np.random.default_rng(batch).normal(size=(batch, 3, 8, 8)).astype(np.float32)
        want = run_ort(model, {"x": x})
        got = graph.run({"x": x})
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(got["x_copy"], x)
    # The .mnn file keeps the batch dynamic (Flatten reads only the static dims) and runs
    # at any batch size; --inputConfigFile still fixes it.
    src = _save(model, tmp_path)
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel",
                 str(tmp_path / "d.mnn")]) == 0
    module = mnn_nn.load_module_from_file(str(tmp_path / "d.mnn"), ["x"], ["y"])
    for batch in (1, 3):
        x = np.random.default_rng(batch).normal(size=(batch, 3, 8, 8)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(module.forward(F.const(x)).read()),
                                   run_ort(model, {"x": x})["y"], rtol=1e-4, atol=1e-5)
    cfg = tmp_path / "config.txt"
    cfg.write_text("input_names = x\ninput_dims = 2x3x8x8\n")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", str(tmp_path / "d.mnn"),
                 "--inputConfigFile", str(cfg)]) == 0


def test_json_dump_of_a_converted_model(cnn_model, tmp_path, capsys):
    src = _save(cnn_model, tmp_path)
    dst, js = str(tmp_path / "m.mnn"), str(tmp_path / "m.json")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--bizCode", "jj"]) == 0
    assert main(["-f", "MNN", "--modelFile", dst, "--JsonFile", js]) == 0
    with open(js) as fh:
        net = json.load(fh)
    assert net["bizCode"] == "jj"
    assert "y" in net["outputName"]


def test_external_data_initializers(cnn_model, tmp_path):
    # Weights stored beside the model (onnx's external data) are read from its folder.
    want = run_ort(cnn_model, {"x": X})
    path = str(tmp_path / "ext.onnx")
    # onnx.save moves the tensors of the model it is given: save a copy.
    copy = onnx.ModelProto()
    copy.CopyFrom(cnn_model)
    onnx.save(copy, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.weights", size_threshold=0)
    assert os.path.isfile(tmp_path / "ext.weights")
    got = load_onnx(path).run({"x": X})
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-4, atol=1e-5)
    dst = str(tmp_path / "ext.mnn")
    assert main(["-f", "ONNX", "--modelFile", path, "--MNNModel", dst,
                 "--saveExternalData"]) == 0
    assert os.path.isfile(dst + ".weight")
    np.testing.assert_allclose(_run_file(dst, X)["y"].read(), want["y"], rtol=1e-4,
                               atol=1e-5)


def test_optimize_prefer_small_keeps_growing_constants(tmp_path):
    # Expand of a small constant to a big one: folded by default, kept as an op with
    # --optimizePrefer 1 (a smaller file); both give onnxruntime's values.
    nodes = [helper.make_node("Expand", ["c", "shape"], ["big"]),
             helper.make_node("Add", ["x", "big"], ["y"])]
    inits = [helper.make_tensor("c", TensorProto.FLOAT, [1, 1], [2.0]),
             helper.make_tensor("shape", TensorProto.INT64, [2], [64, 64])]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    src = _save(model, tmp_path)
    x = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32)
    want = run_ort(model, {"x": x})["y"]
    sizes = {}
    for prefer in ("0", "1"):
        dst = str(tmp_path / f"p{prefer}.mnn")
        assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                     "--optimizePrefer", prefer]) == 0
        sizes[prefer] = os.path.getsize(dst)
        np.testing.assert_allclose(_run_file(dst, x)["y"].read(), want, rtol=1e-6)
    assert sizes["1"] < sizes["0"] - 64 * 64 * 4 // 2


def test_keep_input_format_0_labels_inputs_nc4hw4(cnn_model, tmp_path):
    src = _save(cnn_model, tmp_path)
    formats = {}
    for keep in ("1", "0"):
        dst, js = str(tmp_path / f"k{keep}.mnn"), str(tmp_path / f"k{keep}.json")
        assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                     "--keepInputFormat", keep]) == 0
        assert main(["-f", "MNN", "--modelFile", dst, "--JsonFile", js]) == 0
        with open(js) as fh:
            net = json.load(fh)
        (inp,) = [op for op in net["oplists"] if op.get("type") == "Input"]
        formats[keep] = inp["main"]["dformat"]
        np.testing.assert_allclose(_run_file(dst, X)["y"].read(),
                                   run_ort(cnn_model, {"x": X})["y"], rtol=1e-4, atol=1e-5)
    assert formats == {"1": "NCHW", "0": "NC4HW4"}


def test_large_model_shows_progress_and_converts(tmp_path, capsys):
    """A model of more than 200 nodes prints a progress bar on stderr (lines at 25% steps
    when stderr is not a terminal) and still converts right."""
    n = 240
    nodes, prev = [], "x"
    for i in range(n):
        out = f"h{i}" if i < n - 1 else "y"
        op = "Relu" if i % 2 else "Neg"
        nodes.append(helper.make_node(op, [prev], [out]))
        prev = out
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    src = _save(model, tmp_path)
    dst = str(tmp_path / "m.mnn")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--bizCode", "t"]) == 0
    err = capsys.readouterr().err
    assert f"({n}/{n} nodes)" in err and "100%" in err
    assert err.count("converting [") >= 4
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    want = run_ort(model, {"x": x})
    var_map = load_as_dict(dst)
    var_map["x"].write(x)
    np.testing.assert_allclose(var_map["y"].read(), want["y"], rtol=1e-6)


def test_info_shows_dynamic_dims_as_onnx_shape_inference_does(tmp_path, capsys):
    """A model with symbolic dims converts without --inputConfigFile; --info on the .mnn
    lists -1 where ONNX's own shape inference has a symbolic dim, the size elsewhere."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("ReduceMean", ["r"], ["y"], axes=[2, 3], keepdims=0)]
    graph = helper.make_graph(
        nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    inferred = onnx.shape_inference.infer_shapes(model).graph.output[0]
    want = [d.dim_value if d.HasField("dim_value") else -1
            for d in inferred.type.tensor_type.shape.dim]
    src = _save(model, tmp_path)
    dst = str(tmp_path / "m.mnn")
    assert main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst, "--bizCode", "t"]) == 0
    capsys.readouterr()
    assert main(["-f", "MNN", "--modelFile", dst, "--info"]) == 0
    out = capsys.readouterr().out
    assert "x: shape [-1, 3, -1, -1], dtype float32" in out
    assert f"y: shape {want}, dtype float32" in out
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 7)).astype(np.float32)
    np.testing.assert_allclose(_run_file(dst, x)["y"].read(), run_ort(model, {"x": x})["y"],
                               rtol=1e-6)
