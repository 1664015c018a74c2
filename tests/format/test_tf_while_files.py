"""TensorFlow-style While (a cond graph and a body graph, loop values matched by name) in
.mnn files: written by us from express graphs, run by the real wheel and read back by us;
numpy loops are the reference."""

import copy

import mnn.expr as F
import numpy as np
import pytest
from format_oracle import ours_run, wheel_run

import mnn
from mnn.express import io
from mnn.express.ops.control_flow import Subgraph, while_
from mnn.format.errors import ModelFileError
from mnn.format.reader import build_graph, read_net

SPECS = [([], np.int32), ([2, 3], np.float32), ([2, 3], np.float32)]


def _counted_loop(path):
    """while i < limit: i, v, acc = i + 1, v / 2 + 1, acc + tanh(v); limit is a loop value
    the body passes through unchanged."""
    x = F.placeholder([2, 3])
    x.name = "x"
    start = F.placeholder([], dtype=np.int32)
    start.name = "start"
    specs = SPECS + [([], np.int32)]
    cond = Subgraph.trace(lambda i, v, acc, limit: [F.less(i, limit)], specs, name="cond")
    body = Subgraph.trace(
        lambda i, v, acc, limit: [i + 1, v * 0.5 + 1.0, acc + F.tanh(v), limit], specs,
        name="body")
    outs = while_(cond, body, [start, x, F.zeros_like(x), F.const(np.int32(4))])
    io.save({"i": outs[0], "v": outs[1], "acc": outs[2]}, path)
    return x, start, outs[:3]


def _counted_numpy(x, start):
    i, v, acc = start, x, np.zeros_like(x)
    while i < 4:
        i, v, acc = i + 1, v * np.float32(0.5) + np.float32(1), acc + np.tanh(v)
    return [np.int32(i), v, acc]


@pytest.mark.parametrize("start", [0, 3, 4, 9])  # 4 and 9: the loop runs zero times
def test_counted_while_written_by_us_runs_in_wheel(start, tmp_path, rng):
    path = str(tmp_path / "while.mnn")
    x, s, outs = _counted_loop(path)
    value = rng.standard_normal((2, 3)).astype(np.float32)
    x.write(value)
    s.write(np.int32(start))
    feed = {"x": value, "start": np.array(start, np.int32)}
    expect = _counted_numpy(value, start)
    theirs = wheel_run(path, feed, ["i", "v", "acc"])
    ours = ours_run(path, feed, ["i", "v", "acc"])
    module = mnn.nn.load_module_from_file(path, ["x", "start"], ["i", "v", "acc"])
    loaded = [np.asarray(v.read()) for v in module.forward([value, feed["start"]])]
    for o, t, e, g, m in zip(ours, theirs, expect, outs, loaded):
        np.testing.assert_allclose(g.read(), e, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(t, e, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o, e, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(m, e, rtol=1e-6, atol=1e-6)


def test_data_dependent_while_with_swapped_values_runs_in_wheel(tmp_path, rng):
    """The cond reads data (sum of |a| below a bound); the body swaps its two values and
    doubles one: outputs that are other inputs of the body, passed through."""
    a0 = F.placeholder([3])
    a0.name = "a"
    b0 = F.placeholder([3])
    b0.name = "b"
    specs = [([3], np.float32), ([3], np.float32)]
    cond = Subgraph.trace(lambda a, b: [F.less(F.reduce_sum(F.abs(a)), 50.0)], specs)
    body = Subgraph.trace(lambda a, b: [b * 2.0, a], specs)
    a_f, b_f = while_(cond, body, [a0, b0])
    path = str(tmp_path / "swap.mnn")
    io.save({"af": a_f, "bf": b_f}, path)
    for scale in (1.0, 100.0):
        a = (rng.standard_normal(3) * scale).astype(np.float32)
        b = rng.standard_normal(3).astype(np.float32) + np.float32(2)
        ea, eb = a, b
        while np.abs(ea).sum() < 50:
            ea, eb = eb * np.float32(2), ea
        feed = {"a": a, "b": b}
        theirs = wheel_run(path, feed, ["af", "bf"])
        ours = ours_run(path, feed, ["af", "bf"])
        for o, t, e in zip(ours, theirs, (ea, eb)):
            np.testing.assert_allclose(t, e, rtol=1e-6)
            np.testing.assert_allclose(o, e, rtol=1e-6)


def _while_op(net):
    (op,) = [op for op in net["oplists"] if op.get("main_type") == "WhileParam"]
    return op["main"]


def test_reader_matches_names_across_subgraphs(tmp_path, rng):
    """MNN matches loop values by name: an output alias may name the body output that
    updates a value (as MNN's converter writes it), and op inputs may be listed in any
    order of names."""
    path = str(tmp_path / "while.mnn")
    _counted_loop(path)
    net, _ = read_net(path)
    p = _while_op(net)
    updates = {u["data"][1]: u["data"][0] for u in p["aliases_updates"]}
    p["aliases_outputs"] = [updates[name] if k == 1 else name
                            for k, name in enumerate(p["aliases_outputs"])]
    p["aliases_inputs"] = [{"data": list(reversed(a["data"]))} for a in p["aliases_inputs"]]
    graph = build_graph(net)
    value = rng.standard_normal((2, 3)).astype(np.float32)
    graph.inputs["x"].write(value)
    graph.inputs["start"].write(np.int32(1))
    for name, e in zip(["i", "v", "acc"], _counted_numpy(value, 1)):
        np.testing.assert_allclose(graph.outputs[name].read(), e, rtol=1e-6)


@pytest.mark.parametrize("corrupt, message", [
    (lambda p: p.update(aliases_inputs=p["aliases_inputs"][:-1]), "input aliases"),
    (lambda p: p.update(aliases_updates=[]), "could not end"),
    (lambda p: p.update(aliases_outputs=["nowhere"] + p["aliases_outputs"][1:]),
     "neither a subgraph input"),
    (lambda p: p.update(cond_graph="missing"), "which the file does not have"),
    (lambda p: p["aliases_updates"].append(copy.deepcopy(p["aliases_updates"][0])),
     "updated twice"),
])
def test_reader_rejects_bad_while_aliases(corrupt, message, tmp_path):
    path = str(tmp_path / "while.mnn")
    _counted_loop(path)
    net, _ = read_net(path)
    corrupt(_while_op(net))
    with pytest.raises(ModelFileError, match=message):
        build_graph(net)


def test_writer_rejects_a_float_cond(tmp_path):
    """MNN reads the cond graph's output as int32: a float flag would be misread."""
    specs = [([], np.float32)]
    cond = Subgraph.trace(lambda v: [F.cast(F.less(v, 3.0), np.float32)], specs)
    body = Subgraph.trace(lambda v: [v + 1.0], specs)
    (out,) = while_(cond, body, [F.const(np.float32(0))])
    np.testing.assert_array_equal(out.read(), np.float32(3))
    with pytest.raises(ModelFileError, match="cond graph's output is float32"):
        io.save({"out": out}, str(tmp_path / "float_cond.mnn"))
