"""Files our writer makes from express graphs run in the real MNN wheel (and in our reader)
with numpy's results."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import ours_run, wheel_run

from mnn.express import io
from mnn.format.errors import ModelFileError


def _x(shape=(2, 3, 4)):
    x = F.placeholder(list(shape), F.NCHW)
    x.name = "x"
    return x


def _math():
    x = _x()
    y = F.exp(x) * 2.0 - F.reduce_mean(x, [2], True) / F.sqrt(F.abs(x) + 1.0)
    return x, y, lambda a: np.exp(a) * 2 - a.mean(2, keepdims=True) / np.sqrt(np.abs(a) + 1)


def _unary_chain():
    x = _x()
    y = F.tanh(F.sigmoid(x)) + F.floor(x) + F.square(F.sin(x)) + F.maximum(x, 0.5)
    ref = lambda a: (
        np.tanh(1 / (1 + np.exp(-a))) + np.floor(a) + np.sin(a) ** 2 + np.maximum(a, 0.5)
    )
    return x, y, ref


def _shapes():
    x = _x()
    t = F.transpose(x, [0, 2, 1])
    r = F.reshape(x, [2, 4, 3])
    c = F.concat([t, r], 1)
    s = F.squeeze(F.unsqueeze(c, [0]), [0])
    a, b = F.split(s, [3, 5], 1)
    y = F.matmul(a, F.reshape(b, [2, 3, 5]))

    def ref(v):
        cc = np.concatenate([v.transpose(0, 2, 1), v.reshape(2, 4, 3)], 1)
        return cc[:, :3] @ cc[:, 3:].reshape(2, 3, 5)

    return x, y, ref


def _reductions():
    x = _x()
    y = F.concat(
        [F.reduce_sum(x, [1]), F.reduce_max(x, [1]), F.reduce_min(x, [1]), F.reduce_prod(x, [1])], 1
    )
    ref = lambda a: np.concatenate([a.sum(1), a.max(1), a.min(1), a.prod(1)], 1)
    return x, y, ref


def _select_broadcast():
    x = _x()
    y = F.select(F.greater(x, 0.0), x, F.broadcast_to(F.const([0.5, -1.0, 2.0, 3.0]), [2, 3, 4]))
    ref = lambda a: np.where(a > 0, a, np.broadcast_to(np.float32([0.5, -1, 2, 3]), a.shape))
    return x, y, ref


def _matmul_weights():
    x = _x((3, 5))
    w = F.const(np.arange(20, dtype=np.float32).reshape(4, 5) / 10)
    y = F.matmul(x, w, False, True) + F.const(np.float32([1, 2, 3, 4]))
    ref = lambda a: (
        a @ (np.arange(20, dtype=np.float32).reshape(4, 5) / 10).T + np.float32([1, 2, 3, 4])
    )
    return x, y, ref


GRAPHS = [_math, _unary_chain, _shapes, _reductions, _select_broadcast, _matmul_weights]


@pytest.mark.parametrize("make", GRAPHS, ids=[g.__name__.strip("_") for g in GRAPHS])
def test_express_graph_runs_in_wheel(make, tmp_path, rng):
    x, y, ref = make()
    path = str(tmp_path / "m.mnn")
    io.save({"y": y}, path)
    value = rng.standard_normal(x.shape).astype(np.float32)
    expect = ref(value)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=2e-4, atol=2e-5)
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(ours, expect, rtol=1e-5, atol=1e-6)


def test_load_as_dict_and_inputs_outputs(tmp_path):
    x = _x((2, 2))
    h = F.exp(x)
    h.name = "h"
    y = F.minimum(F.maximum(h, 0.0), 6.0)
    y.name = "y"
    path = str(tmp_path / "m.mnn")
    io.save([y], path)
    var_map = io.load_as_dict(path)
    assert {"x", "h", "y"} <= set(var_map)
    inputs, outputs = io.get_inputs_and_outputs(var_map)
    assert list(inputs) == ["x"] and list(outputs) == ["y"]
    inputs["x"].write(np.float32([[0, 1], [2, 3]]))
    np.testing.assert_allclose(
        outputs["y"].read(), np.minimum(np.exp(np.float32([[0, 1], [2, 3]])), 6), rtol=1e-6
    )
    assert len(io.load_as_list(path)) == len({id(v.expr) for v in var_map.values()})


def test_save_rejects_what_mnn_cannot_hold(tmp_path):
    x = F.placeholder([3], dtype=F.int)
    with pytest.raises(ModelFileError, match="truncation"):
        io.save([x / F.const(np.int32([1, 2, 3]))], str(tmp_path / "m.mnn"))
    with pytest.raises(ModelFileError, match="Vars"):
        io.save([np.zeros(3)], str(tmp_path / "m.mnn"))
    from mnn.express import graph

    f = F.placeholder([3])
    with pytest.raises(ModelFileError, match="op 'isnan' .* no MNN op maps to it"):
        io.save([graph.apply("isnan", [f])[0]], str(tmp_path / "m.mnn"))
    with pytest.raises(ModelFileError, match="weight_quant_bits must be 0 or 2..8"):
        io.save([f + 1.0], str(tmp_path / "m.mnn"), weight_quant_bits=9)
    with pytest.raises(ModelFileError, match="cannot write model file"):
        io.save([f + 1.0], str(tmp_path / "no" / "such" / "m.mnn"))


def _cnn(rng):
    x = _x((1, 8, 12, 12))
    w = F.const((rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32))
    b = F.const(rng.standard_normal(16).astype(np.float32))
    y = F.relu(F.conv2d(x, w, b, stride=(2, 2), padding=(1, 1)))
    wd = F.const(rng.standard_normal((16, 1, 3, 3)).astype(np.float32))
    y = F.conv2d(y, wd, None, padding=(1, 1), group=16)
    y = F.relu6(F.max_pool(y, (2, 2), (2, 2)))
    y = F.avg_pool(y, (3, 3), (1, 1), pads=(1, 1))
    y = F.softmax(F.reshape(y, [1, -1]), -1)
    return x, y


SAVE_OPTIONS = {
    "float": {},
    "q8_sym": {"weight_quant_bits": 8},
    "q4_asym": {"weight_quant_bits": 4, "weight_quant_asymmetric": True},
    "q3_sym": {"weight_quant_bits": 3},
    "fp16": {"fp16": True},
    "external": {"external_data": True},
    "q8_external": {"weight_quant_bits": 8, "external_data": True},
}


@pytest.mark.parametrize("tag", list(SAVE_OPTIONS))
def test_cnn_with_weight_options_runs_in_wheel(tag, tmp_path, rng):
    x, y = _cnn(rng)
    value = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
    x.write(value)
    exact = y.read()
    path = str(tmp_path / "cnn.mnn")
    io.save({"y": y}, path, **SAVE_OPTIONS[tag])
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-7)
    # Quantisation error stays within what the storage allows.
    tol = {
        "float": 1e-6,
        "external": 1e-6,
        "fp16": 2e-3,
        "q8_sym": 0.05,
        "q8_external": 0.05,
        "q4_asym": 0.3,
        "q3_sym": 0.6,
    }[tag]
    np.testing.assert_allclose(ours, exact, atol=tol * np.abs(exact).max())


@pytest.mark.parametrize("for_inference", [True, False])
def test_trainables_for_inference_or_training(for_inference, tmp_path):
    import MNN

    x = _x((2, 3))
    w = F.const(np.arange(12, dtype=np.float32).reshape(3, 4))
    w.fix_as_trainable()
    w.name = "w"
    y = F.matmul(x, w)
    path = str(tmp_path / "m.mnn")
    io.save({"y": y}, path, forInference=for_inference)
    value = np.ones((2, 3), np.float32)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, value @ np.arange(12, dtype=np.float32).reshape(3, 4))
    var_map = io.load_as_dict(path)
    assert var_map["w"].expr.kind == ("const" if for_inference else "trainable")
    kind = MNN.expr.load_as_dict(path)["w"].op_type
    assert kind == ("Const" if for_inference else "Trainable")


def test_convolution_with_trainable_weights_runs_in_wheel(tmp_path, rng):
    x = _x((1, 3, 8, 8))
    w = F.const(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b = F.const(rng.standard_normal(4).astype(np.float32))
    w.fix_as_trainable()
    b.fix_as_trainable()
    y = F.relu(F.conv2d(x, w, b, padding=(1, 1)))
    value = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "m.mnn")
    io.save({"y": y}, path, forInference=False)  # weights become inputs of the conv
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-6)


def test_file_saved_by_the_wheels_express_api(tmp_path, rng):
    """pymnn's ``conv2d`` defaults to VALID with pads: MNN still shifts by them."""
    import MNN

    mf = MNN.expr
    x = mf.placeholder([1, 3, 8, 8], mf.NCHW)
    x.name = "x"
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    y = mf.conv2d(
        mf.convert(x, mf.NC4HW4),
        mf.const(w.ravel(), [4, 3, 3, 3], mf.NCHW),
        mf.const(b, [4], mf.NCHW),
        [1, 1],
        [1, 1],
    )
    y = mf.softmax(mf.reshape(mf.convert(mf.relu(y), mf.NCHW), [1, -1]) * 2.0 + 1.0)
    z = mf.reduce_sum(mf.transpose(mf.reshape(x, [3, 64]), [1, 0]), [0])
    y.name, z.name = "y", "z"
    path = str(tmp_path / "pymnn.mnn")
    mf.save([y, z], path)
    value = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    theirs = wheel_run(path, {"x": value}, ["y", "z"])
    ours = ours_run(path, {"x": value}, ["y", "z"])
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
