"""A loop fed by another loop's scan output, written by us: the second body's values have a
shape only run time knows when the file is read, so its ops are built without their shapes
(the stacked RNN layers of converted LSTM/GRU models hit the same path). Checked against
numpy and the real wheel."""

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import ours_run, wheel_run

from mnn.express import io
from mnn.express.ops import movement
from mnn.express.ops.control_flow import Subgraph, loop
from mnn.format.reader import load_graph


def _numpy(x, sizes):
    scans = np.stack([x * 2.0, (x + 1.0) * 2.0])
    cut = np.cumsum(sizes)[:-1]
    parts = np.split(scans, cut, axis=2)
    return np.concatenate(parts[1:] + [parts[0] * 10.0], axis=2)[None]


@pytest.mark.parametrize("sizes", [[1, 2], [2, 1], [1, 1, 1]])
def test_split_in_a_body_fed_by_a_scan(sizes, tmp_path, rng):
    x = F.placeholder([2, 3])
    x.name = "x"
    body1 = Subgraph.trace(lambda i, c, v: [c, v + 1.0, v * 2.0],
                           [([], np.int32), ([], np.bool_), ([2, 3], np.float32)])
    _, scans = loop(F.const(np.int32(2)), True, body1, [x])

    def body(i, c, v):
        parts = movement.split(v, sizes, 2)
        return [c, v, F.concat(parts[1:] + [parts[0] * 10.0], 2)]

    body2 = Subgraph.trace(body, [([], np.int32), ([], np.bool_), ([2, 2, 3], np.float32)])
    _, out = loop(F.const(np.int32(1)), True, body2, [scans])
    path = str(tmp_path / "chain.mnn")
    io.save({"out": out}, path)
    value = rng.standard_normal((2, 3)).astype(np.float32)
    expect = _numpy(value, sizes)
    (ours,) = ours_run(path, {"x": value}, ["out"])
    (theirs,) = wheel_run(path, {"x": value}, ["out"])
    np.testing.assert_allclose(ours, expect, rtol=1e-6)
    np.testing.assert_allclose(theirs, expect, rtol=1e-6)


def _softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# Ops whose decoders need the rank of their input (negative axes, paddings): inside the
# second body they are decoded when the loop runs, from the actual shapes.
RANK_OPS = {
    "softmax": (lambda v: F.softmax(v, -1), _softmax),
    "argmax": (lambda v: F.argmax(v, -1), lambda v: v.argmax(-1).astype(np.int32)),
    "gather": (lambda v: F.gather(v, F.const(np.int32([1, 0]))), lambda v: v[[1, 0]]),
    "pad": (lambda v: F.pad(v, F.const(np.int32([[0, 0], [1, 2], [0, 0]]))),
            lambda v: np.pad(v, [(0, 0), (1, 2), (0, 0)])),
}


@pytest.mark.parametrize("name", sorted(RANK_OPS))
def test_rank_needing_op_in_a_body_fed_by_a_scan(name, tmp_path, rng):
    build, reference = RANK_OPS[name]
    x = F.placeholder([2, 3])
    x.name = "x"
    body1 = Subgraph.trace(lambda i, c, v: [c, v + 1.0, v * 2.0],
                           [([], np.int32), ([], np.bool_), ([2, 3], np.float32)])
    _, scans = loop(F.const(np.int32(2)), True, body1, [x])
    body2 = Subgraph.trace(lambda i, c, v: [c, v * 0.5, build(v)],
                           [([], np.int32), ([], np.bool_), ([2, 2, 3], np.float32)])
    _, out = loop(F.const(np.int32(3)), True, body2, [scans])
    path = str(tmp_path / "chain.mnn")
    io.save({"out": out}, path)
    value = rng.standard_normal((2, 3)).astype(np.float32)
    v = np.stack([value * 2.0, (value + 1.0) * 2.0]).astype(np.float32)
    expect = np.stack([reference(v * np.float32(0.5) ** k) for k in range(3)])
    (ours,) = ours_run(path, {"x": value}, ["out"])
    (theirs,) = wheel_run(path, {"x": value}, ["out"])
    np.testing.assert_allclose(ours, expect, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(theirs, expect, rtol=1e-5, atol=1e-7)
    # Read back by us (the op decoded at run time) and written again: still the wheel's op.
    rewritten = str(tmp_path / "rewritten.mnn")
    io.save(load_graph(path).outputs, rewritten)
    (again,) = wheel_run(rewritten, {"x": value}, ["out"])
    np.testing.assert_allclose(again, expect, rtol=1e-5, atol=1e-7)
