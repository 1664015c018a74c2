"""MobileNetV2's inverted-residual blocks one by one: mnn.express vs onnxruntime.

Each block (1x1 expand + relu6, depthwise 3x3 + relu6, 1x1 project, the residual add
where the block has one) of MobileNetV2 at 1x3x224x224 runs, with the same random
weights, as our fused kernel call (``fusion_block.run_chain``: what a model's graph runs
for the block) and as a small ONNX model in onnxruntime. The peers take turns in
rounds of ``--repeat`` calls, each round after a pause and two untimed calls
(``timing.median_ms``); per block the median over the rounds of each peer's median
milliseconds and ours/ort are printed (< 1: we are faster), then the totals over the
model's 17 blocks.

onnxruntime's time includes its per-run cost (about 5 us here), which a whole model pays
once, not per block: the script measures it (a one-Relu model) and prints it, so small
blocks can be read with it in mind.

One thread only: at two, onnxruntime's one-block sessions in this process ran at about
their one-thread speed (0.45 ms for a 96 -> 576 -> 96 block that takes 0.28 ms at two
threads in a process of its own, and whose whole model does scale), so the ratios would
flatter us. ``benchmarks/bench_models.py`` compares whole models at 1 and 2 threads.

Usage: ``python benchmarks/bench_blocks.py [--repeat 100] [--rounds 3]``
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mnn.expr as F  # noqa: I001

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from mnn.express.ops import fusion_block
from timing import median_ms, ort_session

# MobileNetV2's stages after the stem: (expansion t, output channels c, repeats n,
# first stride s).
STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
          (6, 160, 3, 2), (6, 320, 1, 1)]


def blocks():
    """``(cin, ce, cout, hw, stride, residual)`` of each block, input size ``hw``."""
    out, cin, hw = [], 32, 112
    for t, c, n, s in STAGES:
        for i in range(n):
            stride = s if i == 0 else 1
            out.append((cin, cin * t, c, hw, stride, stride == 1 and cin == c))
            hw, cin = (hw - 1) // stride + 1, c
    return out


def _weights(rng, cin, ce, cout):
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)
    expand = ce != cin
    return (w(ce, cin, 1, 1) if expand else None, w(ce) if expand else None,
            w(ce, 1, 3, 3), w(ce), w(cout, ce, 1, 1), w(cout))



def _onnx_block(cin, cout, hw, stride, residual, weights):
    w1, b1, wd, b2, w3, b3 = weights
    ce = wd.shape[0]
    inits = [numpy_helper.from_array(np.float32(0), "lo"),
             numpy_helper.from_array(np.float32(6), "hi")]
    nodes, cur = [], "x"
    if w1 is not None:
        inits += [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1")]
        nodes += [helper.make_node("Conv", ["x", "w1", "b1"], ["e0"]),
                  helper.make_node("Clip", ["e0", "lo", "hi"], ["e"])]
        cur = "e"
    inits += [numpy_helper.from_array(a, n) for a, n in
              ((wd, "wd"), (b2, "b2"), (w3, "w3"), (b3, "b3"))]
    nodes += [helper.make_node("Conv", [cur, "wd", "b2"], ["d0"], group=ce,
                               pads=[1, 1, 1, 1], strides=[stride, stride]),
              helper.make_node("Clip", ["d0", "lo", "hi"], ["d"]),
              helper.make_node("Conv", ["d", "w3", "b3"], ["p" if residual else "y"])]
    if residual:
        nodes.append(helper.make_node("Add", ["p", "x"], ["y"]))
    oh = (hw - 1) // stride + 1
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, oh, oh])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run_cost(threads, repeat):
    """Median ms of onnxruntime's run of a one-Relu model (its per-run cost)."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess, x = ort_session(model, threads), np.zeros((1, 4), np.float32)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, {"x": x})
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    F.set_thread_number(1)
    rng = np.random.default_rng(0)
    print(f"one thread; onnxruntime's per-run cost {_run_cost(1, 10 * args.repeat) * 1e3:.1f} us")
    print("block (in -> expanded -> out, input size, stride)      ours ms   ort ms  "
          "ours/ort  max diff")
    total_ours = total_ort = 0.0
    todo = blocks()
    for i, (cin, ce, cout, hw, stride, residual) in enumerate(todo):
        weights = _weights(rng, cin, ce, cout)
        w1, b1, wd, b2, w3, b3 = weights
        spec = (w1, b1, (0.0, 6.0), wd, b2, (0.0, 6.0), stride, w3, b3, (-np.inf, np.inf),
                residual)
        x = rng.standard_normal((1, cin, hw, hw)).astype(np.float32)
        prepared = {}
        sess = ort_session(_onnx_block(cin, cout, hw, stride, residual, weights), 1)

        def ours():
            return fusion_block.run_chain(x, [spec], prepared)

        def theirs():
            return sess.run(None, {"x": x})[0]

        diff = float(np.abs(ours() - theirs()).max())
        times = ([], [])
        for r in range(args.rounds):
            for k in ((0, 1) if r % 2 else (1, 0)):
                times[k].append(median_ms((ours, theirs)[k], args.repeat)[0])
        a, b = (float(np.median(t)) for t in times)
        total_ours += a
        total_ort += b
        name = f"{cin}->{ce}->{cout} {hw}x{hw} s{stride}{' +x' if residual else ''}"
        print(f"{name:50s}  {a:8.3f} {b:8.3f}  {a / b:8.2f}  {diff:.1e}")
        print(f"\r{i + 1}/{len(todo)} blocks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"all {len(todo)} blocks: ours {total_ours:.2f} ms, onnxruntime {total_ort:.2f} ms, "
          f"ours/ort {total_ours / total_ort:.3f}")


if __name__ == "__main__":
    main()
