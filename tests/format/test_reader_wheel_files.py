"""Files made by the real wheel's converter load through our reader and give the wheel's
outputs (float, weight-quantised 2/4/8 bit, block-wise, fp16, external weights)."""

import pathlib

import numpy as np
import pytest
from format_oracle import convert_onnx, ours_run, wheel_run
from onnx import TensorProto, helper, numpy_helper

from mnn.format.errors import ModelFileError


def _cnn_onnx():
    """A small CNN with every layer a converted MobileNet/ResNet-like model has."""
    rng = np.random.default_rng(7)

    def t(name, *shape, scale=0.3):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name
        )

    inits = [
        t("w1", 16, 3, 3, 3),
        t("b1", 16),
        t("gamma", 16),
        t("beta", 16),
        t("mean", 16),
        numpy_helper.from_array(rng.uniform(0.5, 2, 16).astype(np.float32), "var"),
        t("wd", 16, 1, 3, 3),
        t("w2", 32, 16, 1, 1),
        t("b2", 32),
        t("wfc", 10, 32),
        t("bfc", 10),
        numpy_helper.from_array(np.float32([0.0]), "lo"),
        numpy_helper.from_array(np.float32([6.0]), "hi"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "wd"], ["dw"], group=16, strides=[2, 2], pads=[0, 0, 1, 1]),
        helper.make_node("Clip", ["dw", "lo", "hi"], ["r6"]),
        helper.make_node("Conv", ["r6", "w2", "b2"], ["c2"]),
        helper.make_node("Sigmoid", ["c2"], ["sg"]),
        helper.make_node("Mul", ["c2", "sg"], ["sw"]),
        helper.make_node("GlobalAveragePool", ["sw"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "wfc", "bfc"], ["fc"], transB=1),
        helper.make_node("Softmax", ["fc"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _pool_onnx(nodes, names):
    graph = helper.make_graph(
        nodes,
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 8])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_converted_pooling_matches_wheel_and_onnxruntime(tmp_path, rng):
    # Standalone: the wheel's converter dies with an illegal instruction when padded
    # average pooling is followed by a Gemm. Output ``d`` (asymmetric pads, padding
    # counted) is checked against onnxruntime only: the wheel counts the right padding
    # as if it equalled the left one.
    ort = pytest.importorskip("onnxruntime")
    model = _pool_onnx(
        [
            helper.make_node(
                "AveragePool",
                ["x"],
                ["b"],
                kernel_shape=[3, 2],
                strides=[2, 1],
                pads=[1, 1, 1, 1],
                count_include_pad=1,
            ),
            helper.make_node(
                "MaxPool", ["x"], ["c"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1
            ),
            helper.make_node(
                "AveragePool",
                ["x"],
                ["d"],
                kernel_shape=[3, 2],
                strides=[2, 1],
                pads=[1, 0, 1, 1],
                count_include_pad=1,
            ),
        ],
        "bcd",
    )
    path = convert_onnx(model, tmp_path)
    x = rng.standard_normal((1, 4, 9, 8)).astype(np.float32)
    theirs = wheel_run(path, {"x": x}, list("bc"))
    ours = ours_run(path, {"x": x}, list("bcd"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expect = sess.run(None, {"x": x})
    for o, e in zip(ours, expect):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_pooling_with_zero_stride_is_refused(tmp_path):
    # The wheel's converter writes stride 0 when the ONNX node omits strides; the wheel
    # itself then dies with SIGFPE. We refuse the file with a clear error.
    model = _pool_onnx(
        [helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], "a"
    )
    path = convert_onnx(model, tmp_path)
    with pytest.raises(ModelFileError, match="op 'a' .Pooling.*strides must be positive"):
        ours_run(path, {"x": np.zeros((1, 4, 9, 8), np.float32)}, ["a"])


def _quant_onnx():
    """Conv + Gemm with enough input channels for block-wise quantisation."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((16, 64, 3, 3)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((10, 16 * 6 * 6)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "W2"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [
            numpy_helper.from_array(w, "W"),
            numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "B"),
            numpy_helper.from_array(w2, "W2"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_converted_cnn_matches_wheel_and_onnxruntime(tmp_path, rng):
    ort = pytest.importorskip("onnxruntime")
    model = _cnn_onnx()
    path = convert_onnx(model, tmp_path)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    (theirs,) = wheel_run(path, {"x": x}, ["y"])
    (ours,) = ours_run(path, {"x": x}, ["y"])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expect,) = sess.run(None, {"x": x})
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours, expect, rtol=1e-4, atol=1e-6)


QUANT_FLAGS = {
    "float": [],
    "q8": ["--weightQuantBits", "8"],
    "q8_flag_asym": ["--weightQuantBits", "8", "--weightQuantAsymmetric"],
    "q4": ["--weightQuantBits", "4"],
    "q4_block32": ["--weightQuantBits", "4", "--weightQuantBlock", "32"],
    "q2": ["--weightQuantBits", "2"],
    "fp16": ["--fp16"],
    "external": ["--saveExternalData"],
    "q8_external": ["--weightQuantBits", "8", "--saveExternalData"],
    "q4_fp16_scales": ["--weightQuantBits", "4", "--weightQuantScaleBit", "16"],
    "q4_fp16_scales_external": [
        "--weightQuantBits",
        "4",
        "--weightQuantScaleBit",
        "16",
        "--saveExternalData",
    ],
}


@pytest.mark.parametrize("tag", list(QUANT_FLAGS))
def test_weight_storage_variants_match_wheel(tag, tmp_path, rng):
    path = convert_onnx(_quant_onnx(), tmp_path / tag, *QUANT_FLAGS[tag])
    x = rng.standard_normal((1, 64, 6, 6)).astype(np.float32)
    (theirs,) = wheel_run(path, {"x": x}, ["y"])
    (ours,) = ours_run(path, {"x": x}, ["y"])
    scale = np.abs(theirs).max()
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5 * scale)


def test_converted_file_from_bytes(tmp_path, rng):
    path = convert_onnx(_quant_onnx(), tmp_path, "--weightQuantBits", "8")
    data = pathlib.Path(path).read_bytes()
    x = rng.standard_normal((1, 64, 6, 6)).astype(np.float32)
    np.testing.assert_array_equal(
        ours_run(data, {"x": x}, ["y"])[0], ours_run(path, {"x": x}, ["y"])[0]
    )


@pytest.mark.parametrize("asymmetric", [True, False])
def test_sparse_quantised_weights_match_wheel(asymmetric, tmp_path, rng):
    """IDST type 2 (sparse codebook), written by the converter for mostly-zero weights."""
    from mnn.format import flat

    w = rng.standard_normal((16, 32, 3, 3)).astype(np.float32)
    w[rng.random(w.shape) < 0.9] = 0
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    # (the wheel's plain --weightQuantBits is asymmetric; the flag makes it symmetric)
    flags = ["--weightQuantBits", "8", "--detectSparseSpeedUp"]
    flags += [] if asymmetric else ["--weightQuantAsymmetric"]
    path = convert_onnx(model, tmp_path, *flags)
    net = flat.decode(pathlib.Path(path).read_bytes())
    (conv,) = [op for op in net["oplists"] if op["main_type"] == "Convolution2D"]
    assert conv["main"]["quanParameter"]["type"] == 2
    assert (conv["main"]["quanParameter"]["readType"] != 0) == asymmetric
    x = rng.standard_normal((1, 32, 6, 6)).astype(np.float32)
    (theirs,) = wheel_run(path, {"x": x}, ["y"])
    (ours,) = ours_run(path, {"x": x}, ["y"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5 * np.abs(theirs).max())
