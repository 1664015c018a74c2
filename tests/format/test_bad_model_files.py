"""Hostile or broken model files get a clear ModelFileError, never a crash: truncation,
corruption, random bytes, bad indexes and parameters, missing or short external weights,
paths outside the model's folder, and a bounded seeded fuzz of the reader."""

import os
import pathlib

import mnn.expr as F
import numpy as np
import pytest

from mnn.express import io
from mnn.format import flat
from mnn.format.errors import ModelFileError
from mnn.format.reader import load_graph
from mnn.format.schema import OP_TYPES


def _model_bytes(tmp_path, rng, **save_options):
    x = F.placeholder([1, 4, 6, 6])
    x.name = "x"
    w = F.const((rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32))
    y = F.relu(F.conv2d(x, w, F.const(np.ones(8, np.float32)), padding=(1, 1)))
    y = F.softmax(F.reshape(F.reduce_mean(y, [2, 3]), [1, 8]), -1)
    a, b = F.split(F.concat([y, F.exp(y)], 1), [6, 10], 1)
    path = str(tmp_path / "m.mnn")
    io.save({"a": a, "b": b}, path, **save_options)
    return path, pathlib.Path(path).read_bytes()


def _edit(data, fn):
    net = flat.decode(data)
    fn(net)
    return flat.encode(net)


def test_truncated_files(tmp_path, rng):
    _, data = _model_bytes(tmp_path, rng)
    # (the last bytes may be alignment padding, so cuts stop at 90%)
    for cut in [0, 3, 7, 8, 40, len(data) // 3, len(data) // 2, len(data) * 9 // 10]:
        with pytest.raises(ModelFileError, match="mnn: <bytes>"):
            load_graph(data[:cut])


def test_random_bytes(rng):
    for size in [8, 64, 1000, 5000]:
        with pytest.raises(ModelFileError):
            load_graph(rng.integers(0, 256, size).astype(np.uint8).tobytes())


def test_out_of_range_tensor_index(tmp_path, rng):
    _, data = _model_bytes(tmp_path, rng)

    def bad_index(net):
        net["oplists"][2]["inputIndexes"] = np.int32([9999])

    with pytest.raises(ModelFileError, match="input tensor index 9999 is out of range"):
        load_graph(_edit(data, bad_index))

    def before_made(net):
        last = len(net["tensorName"]) - 1
        net["oplists"][1]["inputIndexes"] = np.int32([last])

    with pytest.raises(ModelFileError, match="before any op produced it"):
        load_graph(_edit(data, before_made))


def test_wrong_op_parameters(tmp_path, rng):
    _, data = _model_bytes(tmp_path, rng)

    def find(net, type_name):
        return next(op for op in net["oplists"] if op["type"] == OP_TYPES[type_name])

    def zero_stride(net):
        find(net, "Convolution")["main"]["common"]["strideX"] = 0

    with pytest.raises(ModelFileError, match="Convolution.*must be positive"):
        load_graph(_edit(data, zero_stride))

    def short_weights(net):
        conv = find(net, "Convolution")["main"]
        conv["weight"] = conv["weight"][:10]

    with pytest.raises(ModelFileError, match="weights do not fit"):
        load_graph(_edit(data, short_weights))

    def unknown_binary(net):
        op = {"type": OP_TYPES["BinaryOp"], "main_type": "BinaryOp", "main": {"opType": 99}}
        find(net, "Concat").update(op)

    with pytest.raises(ModelFileError, match="binary operation 99"):
        load_graph(_edit(data, unknown_binary))

    def wrong_table(net):
        find(net, "Softmax")["main_type"] = "Reshape"
        find(net, "Softmax")["main"] = {"dims": np.int32([1])}

    with pytest.raises(ModelFileError, match="expected a Axis parameter table"):
        load_graph(_edit(data, wrong_table))

    def unknown_type(net):
        find(net, "Softmax")["type"] = 4000

    with pytest.raises(ModelFileError, match="unknown op type number 4000"):
        load_graph(_edit(data, unknown_type))

    def bad_output(net):
        net["outputName"] = ["nope"]

    with pytest.raises(ModelFileError, match="output 'nope'"):
        load_graph(_edit(data, bad_output))


def test_missing_and_short_external_weights(tmp_path, rng):
    path, _ = _model_bytes(tmp_path, rng, external_data=True)
    assert os.path.getsize(path + ".weight") > 0
    load_graph(path)
    weight_file = pathlib.Path(path + ".weight")
    weight_file.write_bytes(weight_file.read_bytes()[: weight_file.stat().st_size // 2])
    with pytest.raises(ModelFileError, match="outside the weight file 'm.mnn.weight'"):
        load_graph(path)
    os.remove(path + ".weight")
    with pytest.raises(ModelFileError, match="'m.mnn.weight' cannot be read"):
        load_graph(path)
    with pytest.raises(ModelFileError, match="given as bytes"):
        load_graph(pathlib.Path(path).read_bytes())


def test_external_path_outside_model_folder(tmp_path, rng):
    path, data = _model_bytes(tmp_path, rng, external_data=True)

    def escape(net):
        for op in net["oplists"]:
            if op["type"] == OP_TYPES["Convolution"]:
                op["externalPath"] = "../../etc/passwd"

    pathlib.Path(path).write_bytes(_edit(data, escape))
    with pytest.raises(ModelFileError, match="points outside the model's folder"):
        load_graph(path)


def test_missing_file(tmp_path):
    with pytest.raises(ModelFileError, match="cannot read model file"):
        load_graph(str(tmp_path / "nothing.mnn"))


def test_fuzzed_files_fail_cleanly(tmp_path, rng):
    """Seeded mutations of real files: each either loads or raises ModelFileError."""
    _, ours = _model_bytes(tmp_path, rng)
    x = F.placeholder([3])
    from mnn.express.ops.control_flow import Subgraph, loop

    body = Subgraph.trace(
        lambda i, c, v: [c, v * 2.0, F.exp(v)],
        [([], np.int32), ([], np.int32), ([3], np.float32)],
        name="b",
    )
    final, scans = loop(F.const(np.int32(2)), F.const(np.int32(1)), body, [x])
    with_loop = (
        io.save([final, scans], str(tmp_path / "l.mnn")) or (tmp_path / "l.mnn").read_bytes()
    )
    fuzz = np.random.default_rng(2024)
    loaded = failed = 0
    for k in range(300):
        data = bytearray(ours if k % 2 else with_loop)
        if k % 5 == 4:
            data = data[: fuzz.integers(0, len(data))]
        else:
            for _ in range(fuzz.integers(1, 4)):
                data[fuzz.integers(0, len(data))] = fuzz.integers(0, 256)
        try:
            load_graph(bytes(data))
            loaded += 1
        except ModelFileError:
            failed += 1
    assert loaded + failed == 300 and failed > 0
