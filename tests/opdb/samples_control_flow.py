"""Samples of the control-flow ops ``if`` and ``while`` (attributes hold Subgraphs),
checked against plain Python/numpy loops and branches."""
import mnn.expr as F
import numpy as np
from opdb_core import Sample, values

from mnn.express.ops.control_flow import Subgraph

f32, i32, i64 = np.float32, np.int32, np.int64

# if: then -> (x + y, x * y), else -> (x - y, x / y); cond decides (MNN: > 0).
_THEN = Subgraph.trace(lambda x, y: [x + y, x * y], [((-1, -1), f32), ((-1, -1), f32)])
_ELSE = Subgraph.trace(lambda x, y: [x - y, x / y], [((-1, -1), f32), ((-1, -1), f32)])
_THEN_I = Subgraph.trace(lambda x: [x * 2], [((), i64)])
_ELSE_I = Subgraph.trace(lambda x: [x - 7], [((), i64)])


def _if_ref(cond, *xs, then_graph, else_graph):
    x, y = xs
    if cond.reshape(-1)[0] > 0:
        return [x + y, x * y]
    return [x - y, x / y]


def _if_int_ref(cond, x, then_graph, else_graph):
    return [x * 2] if cond.reshape(-1)[0] > 0 else [x - 7]


# while, TensorFlow style: (i, acc) -> (i + 1, acc * 1.5 + i) while i < limit.
_COND = Subgraph.trace(lambda i, acc, lim: i < lim, [((), i32), ((-1,), f32), ((), i32)])
_BODY = Subgraph.trace(lambda i, acc, lim: [i + 1, acc * F.const(f32(1.5))
                                            + F.cast(i, F.float), lim],
                       [((), i32), ((-1,), f32), ((), i32)])


def _tf_while_ref(i, acc, lim, cond_graph, body_graph):
    i, acc = i.copy(), acc.copy()
    while i < lim:
        acc = (acc * f32(1.5) + f32(i)).astype(f32)
        i = i + i32(1)
    return [np.asarray(i, i32), acc, lim]


# while, ONNX-Loop style: body (it, c, v) -> (c, v + 1, v * it) with scan output v * it.
_LOOP = Subgraph.trace(lambda it, c, v: [c, v + F.const(f32(1)), v * F.cast(it, F.float)],
                       [((), i64), ((), np.bool_), ((2, 3), f32)])


def _loop_ref(trip, cond, v, cond_graph, body_graph):
    scans = []
    n = int(trip) if bool(cond) else 0
    for it in range(n):
        scans.append((v * f32(it)).astype(f32))
        v = (v + f32(1)).astype(f32)
    stacked = np.stack(scans) if scans else np.zeros((0, 2, 3), f32)
    return [v, stacked]


SAMPLES = {
    "if": [
        Sample([np.array(True), values((2, 3), f32, seed=1), values((2, 3), f32, seed=2,
                                                                   nonzero=True)],
               {"then_graph": _THEN, "else_graph": _ELSE}, _if_ref, note="bool-then"),
        Sample([np.array([0], i32), values((3, 1), f32, seed=3), values((3, 1), f32, seed=4,
                                                                       nonzero=True)],
               {"then_graph": _THEN, "else_graph": _ELSE}, _if_ref, note="int-else"),
        Sample([np.array(-2.5, f32), np.array(5, i64)],
               {"then_graph": _THEN_I, "else_graph": _ELSE_I}, _if_int_ref,
               note="negative-float-is-false"),
    ],
    "while": [
        Sample([np.array(0, i32), values((4,), f32, seed=5), np.array(5, i32)],
               {"cond_graph": _COND, "body_graph": _BODY}, _tf_while_ref, rtol=1e-5,
               note="tf-style"),
        Sample([np.array(0, i32), values((1,), f32, seed=6), np.array(0, i32)],
               {"cond_graph": _COND, "body_graph": _BODY}, _tf_while_ref,
               note="tf-style-no-iteration"),
        Sample([np.array(3, i64), np.array(True), values((2, 3), f32, seed=7)],
               {"cond_graph": None, "body_graph": _LOOP}, _loop_ref, note="loop-scan"),
        Sample([np.array(0, i64), np.array(True), values((2, 3), f32, seed=8)],
               {"cond_graph": None, "body_graph": _LOOP}, _loop_ref,
               note="loop-trip-count-0"),
        Sample([np.array(4, i64), np.array(False), values((2, 3), f32, seed=9)],
               {"cond_graph": None, "body_graph": _LOOP}, _loop_ref, note="loop-cond-false"),
    ],
}

REJECTS = {
    "if": [
        Sample([np.array([True, False]), values((2,), f32), values((2,), f32)],
               {"then_graph": _THEN, "else_graph": _ELSE}, note="two-element-cond"),
        Sample([np.array(True), values((2,), f32)],
               {"then_graph": _THEN, "else_graph": _ELSE}, note="missing-input"),
        Sample([np.array(True), values((2,), np.float64), values((2,), np.float64)],
               {"then_graph": _THEN, "else_graph": _ELSE}, note="dtype-mismatch"),
    ],
    "while": [
        Sample([np.array(2.0, f32), np.array(True), values((2, 3), f32)],
               {"cond_graph": None, "body_graph": _LOOP}, note="float-trip-count"),
        Sample([np.array(0, i32), values((4,), f32)],
               {"cond_graph": _COND, "body_graph": _BODY}, note="missing-loop-value"),
    ],
}
