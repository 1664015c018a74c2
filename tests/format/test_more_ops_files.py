"""Composite and rarer ops written by us run in the real wheel (and read back by us) with
the express values: hard sigmoid, softsign, reverse, band part, scatter, boolean logic, the
converter's run-time-shaped slice and reductions, any/all."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import ours_run, wheel_run

from mnn.express import graph as g
from mnn.express import io


def _i32(values):
    return F.const(np.int32(values))


def _reduce(x, axes, mode, keepdims=1):
    return g.apply(
        "onnx_reduce", [x, _i32(axes)], mode=mode, keepdims=keepdims, noop_with_empty_axes=0
    )[0]


CASES = {
    "reverse_sequence": lambda x: g.apply(
        "reverse_sequence", [x, _i32([3, 1])], batch_dim=0, seq_dim=1
    )[0],
    "convert_nhwc": lambda x: F.convert(F.reshape(x, [1, 2, 4, 6]), F.NHWC) * 2.0,
    "convert_same": lambda x: F.convert(F.reshape(x, [1, 2, 4, 6]), F.NC4HW4) * 2.0,
    "hardsigmoid": lambda x: g.apply("hardsigmoid", [x], alpha=0.2, beta=0.5)[0],
    "softsign": lambda x: g.apply("softsign", [x])[0],
    "reverse": lambda x: g.apply("reverse", [x], axes=(0, 2))[0],
    "band_part": lambda x: g.apply("matrix_band_part", [x], lower=1, upper=2)[0],
    "scatter_nd": lambda x: g.apply(
        "scatter_nd",
        [_i32([[1], [3]]), F.const(np.ones((2, 6), np.float32)) * F.reduce_max(x)],
        shape=(5, 6),
    )[0],
    "logic": lambda x: F.cast(
        g.apply("logical_and", [F.greater(x, 0.0), g.apply("logical_not", [F.greater(x, 0.5)])[0]])[
            0
        ],
        F.float,
    ),
    "onnx_slice": lambda x: g.apply(
        "onnx_slice", [x, _i32([1, 0]), _i32([4, 5]), _i32([1, 2]), _i32([2, 2])]
    )[0],
    "reduce_l2": lambda x: _reduce(x, [1], "l2"),
    "reduce_l1": lambda x: _reduce(x, [0, 1], "l1", 0),
    "reduce_log_sum": lambda x: _reduce(F.abs(x), [2], "log_sum"),
    "reduce_sum_square": lambda x: _reduce(x, [2], "sum_square"),
    "reduce_mean": lambda x: _reduce(x, [2, 0], "mean", 0),
    "any_all": lambda x: F.cast(
        F.logical_or(F.reduce_any(F.greater(x, 1.0), [2]), F.reduce_all(F.greater(x, -1.0), [2])),
        F.float,
    ),
}


def _lse(x):
    return g.apply(
        "onnx_reduce",
        [x * 20.0, _i32([2])],
        mode="log_sum_exp",
        keepdims=0,
        noop_with_empty_axes=0,
    )[0]


MORE = {
    "pad_value": lambda x: g.apply("pad", [x], pads=((0, 1), (2, 0), (1, 1)), mode=0, value=1.5)[0],
    "log_sum_exp": _lse,
    "log_sum_exp_keep": lambda x: g.apply(
        "onnx_reduce",
        [x, _i32([0, 2])],
        mode="log_sum_exp",
        keepdims=1,
        noop_with_empty_axes=0,
    )[0],
    "shifts": lambda x: F.cast(
        g.apply("left_shift", [F.cast(F.abs(x) * 10.0, F.int), _i32([2])])[0]
        + g.apply("right_shift", [F.cast(F.abs(x) * 100.0, F.int), _i32([3])])[0]
        + g.apply("bitwise_not", [F.cast(x * 10.0, F.int)])[0],
        F.float,
    ),
    "zeros_plus_unknown": lambda x: g.apply("full_like", [x], value=2.5)[0] * x,
}
CASES.update(MORE)


@pytest.mark.parametrize("name", list(CASES))
def test_written_op_runs_in_wheel(name, tmp_path, rng):
    x = F.placeholder([2, 4, 6])
    x.name = "x"
    y = CASES[name](x)
    value = rng.standard_normal((2, 4, 6)).astype(np.float32)
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "m.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs.astype(np.float64), expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.astype(np.float64), expect, rtol=1e-6, atol=1e-6)


_IDX = np.int32([[1, 0], [3, 2], [0, 0]])
_UPD = np.float32([[1, 2], [3, 4], [5, 6]])


@pytest.mark.parametrize("kind", ["elements", "nd"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul"])
def test_written_scatter_runs_in_wheel(kind, reduction, tmp_path):
    x = F.placeholder([3, 4])
    x.name = "x"
    if kind == "elements":
        y = g.apply(
            "onnx_scatter_elements", [x, F.const(_IDX), F.const(_UPD)], axis=1, reduction=reduction
        )[0]
    else:
        y = g.apply(
            "onnx_scatter_nd",
            [x, F.const(np.int32([[0, 1], [2, 3], [0, 1]])), F.const(np.float32([7, 8, 9]))],
            reduction=reduction,
        )[0]
    value = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    x.write(value)
    expect = y.read()
    path = str(tmp_path / "s.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect)
    np.testing.assert_allclose(ours, expect)


def test_scatter_max_is_refused(tmp_path):
    from mnn.format.errors import ModelFileError

    x = F.placeholder([3, 4])
    y = g.apply(
        "onnx_scatter_elements", [x, F.const(_IDX), F.const(_UPD)], axis=1, reduction="max"
    )[0]
    with pytest.raises(ModelFileError, match="scatter reduction 'max' has no MNN form"):
        io.save({"y": y}, str(tmp_path / "s.mnn"))


_TIES = np.float32([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, 0.6, -0.6, 3.49, 1e6 + 0.5, -7.0])


def test_written_round_halves_to_even_in_wheel(tmp_path):
    # MNN's ROUND is C's roundf; numpy's round (ours) halves to even: written as a composite.
    x = F.placeholder([12])
    x.name = "x"
    y = F.round(x)
    x.write(_TIES)
    path = str(tmp_path / "r.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": _TIES}, ["y"])
    (ours,) = ours_run(path, {"x": _TIES}, ["y"])
    np.testing.assert_array_equal(theirs, np.round(_TIES))
    np.testing.assert_array_equal(ours, np.round(_TIES))


def test_converted_round_is_roundf(tmp_path):
    from format_oracle import convert_onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Round", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = convert_onnx(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path
    )
    (theirs,) = wheel_run(path, {"x": _TIES}, ["y"])
    (ours,) = ours_run(path, {"x": _TIES}, ["y"])
    np.testing.assert_array_equal(ours, theirs)  # the file says ROUND: C's roundf
    np.testing.assert_array_equal(ours, np.sign(_TIES) * np.floor(np.abs(_TIES) + 0.5))
