"""IDST weight quantisation: our encoder against the real wheel's converter, bit packing."""

import pathlib

import numpy as np
import pytest
from format_oracle import convert_onnx
from onnx import TensorProto, helper, numpy_helper

from mnn.format import flat, quantize
from mnn.format.errors import ModelFileError


@pytest.mark.parametrize("bits", range(2, 9))
def test_pack_unpack_roundtrip(bits, rng):
    values = rng.integers(0, 1 << bits, size=101)
    packed = quantize._pack(values, bits)
    assert packed.size == (101 * bits + 7) // 8
    np.testing.assert_array_equal(quantize._unpack(packed, 101, bits), values)


def _conv_weights_from(path):
    net = flat.decode(pathlib.Path(path).read_bytes())
    (conv,) = [op for op in net["oplists"] if op["main_type"] == "Convolution2D"]
    return conv["main"]


# (our options, the wheel's flags storing the same thing: its plain --weightQuantBits is
# asymmetric and adding --weightQuantAsymmetric makes it symmetric)
CASES = {
    "q8_asym": ({"bits": 8, "asymmetric": True, "block": 0}, ["--weightQuantBits", "8"]),
    "q8_sym": (
        {"bits": 8, "asymmetric": False, "block": 0},
        ["--weightQuantBits", "8", "--weightQuantAsymmetric"],
    ),
    "q4_block32": (
        {"bits": 4, "asymmetric": True, "block": 32},
        ["--weightQuantBits", "4", "--weightQuantBlock", "32"],
    ),
    "q2_asym": ({"bits": 2, "asymmetric": True, "block": 0}, ["--weightQuantBits", "2"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_encoder_matches_wheel_converter(case, tmp_path, rng):
    opts, flags = CASES[case]
    w = (rng.standard_normal((8, 64, 3, 3)) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    theirs = _conv_weights_from(convert_onnx(model, tmp_path, *flags))["quanParameter"]
    ours = quantize.encode_idst(w, opts["bits"], opts["asymmetric"], opts["block"], 64)
    # Same layout facts as the wheel's converter writes ...
    for field in ("type", "aMaxOrBits", "readType", "aMin", "shapeInt32"):
        assert ours.get(field, 0) == theirs[field], field
    assert np.asarray(ours["alpha"]).size == theirs["alpha"].size
    # ... and the same weights once decoded (scales may differ in the last bit).
    mine = quantize.decode_idst(dict(theirs, **ours), "ours", w.size)
    wheel = quantize.decode_idst(theirs, "theirs", w.size)
    step = np.abs(theirs["alpha"]).max()
    np.testing.assert_allclose(mine, wheel, atol=1.01 * step)
    assert np.mean(np.abs(mine - wheel) < 1e-6) > 0.99


def test_decoder_refuses_corrupted_buffers():
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    quan = dict(
        quantize.encode_idst(w, 4, True),
        useInt32=False,
        has_scaleInt=False,
        quantScale=1.0,
        scaleStorage=0,
        index=None,
        alphaFp16=None,
        weightSize=0,
    )
    quan.setdefault("readType", 0)
    quan.setdefault("aMin", 0)
    np.testing.assert_allclose(
        quantize.decode_idst(quan, "m", 64), w.reshape(-1), atol=np.abs(quan["alpha"][1::2]).max()
    )
    with pytest.raises(ModelFileError, match="truncated"):
        quantize.decode_idst(dict(quan, buffer=quan["buffer"][:20]), "m", 64)
    with pytest.raises(ModelFileError, match="more than"):
        quantize.decode_idst(quan, "m", 10)
    with pytest.raises(ModelFileError, match="type 7"):
        quantize.decode_idst(dict(quan, type=7), "m", 64)
    with pytest.raises(ModelFileError, match="scale groups"):
        quantize.decode_idst(dict(quan, alpha=quan["alpha"][:6]), "m", 64)


def test_raw_int8_type4_decodes_with_scales():
    """IDST type 4: the buffer holds the int8 values themselves (one scale per row here)."""
    q = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    alpha = np.float32([0.5, 0.25, 2.0])
    quan = {
        "buffer": q.reshape(-1),
        "alpha": alpha,
        "type": 4,
        "readType": 0,
        "aMin": 0,
        "quantScale": 1.0,
        "has_scaleInt": False,
        "shapeInt32": False,
        "index": None,
        "alphaFp16": None,
        "scaleStorage": 0,
        "weightSize": 0,
    }
    np.testing.assert_array_equal(
        quantize.decode_idst(quan, "m", 12), (q * alpha[:, None]).reshape(-1)
    )
    # Old type-4 files (aMin and quantScale both 0) are asymmetric (min, scale) pairs.
    pairs = np.float32([1.0, 0.5, -1.0, 0.25, 0.0, 2.0])
    old = dict(quan, alpha=pairs, quantScale=0.0)
    expect = q * pairs[1::2, None] + (pairs[0::2] + 128 * pairs[1::2])[:, None]
    np.testing.assert_allclose(quantize.decode_idst(old, "m", 12), expect.reshape(-1))
