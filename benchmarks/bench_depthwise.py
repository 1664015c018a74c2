"""MobileNetV2's depthwise 3x3 layers, one by one: mnn.express vs onnxruntime.

Each layer (batch 1, pads 1, bias, relu6 fused) runs as a one-convolution graph built
once on a placeholder, as benchmarks/models.py builds the model (``F.conv2d(...,
group=C, activation="relu6")``), and as a one-Conv + Clip(0, 6) ONNX model for
onnxruntime with the same weights (its optimizer fuses the clip and runs NCHWc). The
two peers are timed in interleaved rounds; each sample is the mean of a short burst of
calls (single layers take tens of microseconds). Prints per-layer median milliseconds
and ours/ort ratios, then the total weighted by how often MobileNetV2 runs the layer.

"ours op" is the convolution op's own time inside our runs (its compute function
timed alone, as benchmarks/profile_models.py does): a one-op graph also pays for
copying the input into the placeholder and for the graph's fixed per-run cost, which a
whole model pays once, not per layer.

At one thread the ratio uses process CPU time (on a loaded machine wall time mostly
measures waiting for a core); at two threads it uses wall time (spinning worker
threads inflate CPU time). Both are printed.

Usage: ``python benchmarks/bench_depthwise.py [--threads 1 2] [--rounds 5] [--only 14x14]``
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mnn.expr as F  # noqa: I001
from mnn.express import optable

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import PAUSE, WARMUP  # noqa: E402 - the benchmarks folder, just added

# (channels, height = width, stride, how many times MobileNetV2 runs it)
LAYERS = [
    (32, 112, 1, 1), (96, 112, 2, 1), (144, 56, 1, 1), (144, 56, 2, 1),
    (192, 28, 1, 2), (192, 28, 2, 1), (384, 14, 1, 4), (576, 14, 1, 2),
    (576, 14, 2, 1), (960, 7, 1, 2),
]


def layer_name(c, hw, s):
    return f"dw3x3 s{s} {c}ch {hw}x{hw}"


def onnx_model(x, w, b, stride):
    """Conv(group=C, pads 1) + Clip(0, 6) with ``w``, ``b`` as initializers."""
    c = x.shape[1]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], group=c, pads=[1, 1, 1, 1],
                              strides=[stride, stride], kernel_shape=[3, 3]),
             helper.make_node("Clip", ["conv", "lo", "hi"], ["y"])]
    inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel()),
             helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
             helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])]
    graph = helper.make_graph(
        nodes, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def burst(fn, calls):
    """(wall, cpu) seconds per call, averaged over ``calls`` calls."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls, (time.process_time() - c0) / calls


class OpTimer:
    """Accumulates the wall and CPU time of the conv2d op's compute while installed."""

    def __init__(self):
        self.wall = self.cpu = 0.0
        self.op = optable.get_op("conv2d")
        self.compute = self.op.compute

    def __enter__(self):
        def timed(arrays, **attrs):
            t0, c0 = time.perf_counter(), time.process_time()
            out = self.compute(arrays, **attrs)
            self.wall += time.perf_counter() - t0
            self.cpu += time.process_time() - c0
            return out

        self.prepare = self.op.prepare
        self.op.prepare = None  # every call through the timed compute (OpDef.prepare)
        self.op.compute = timed
        return self

    def __exit__(self, *exc):
        self.op.compute = self.compute
        self.op.prepare = self.prepare


def measure(run_ours, run_ort, rounds, samples):
    """Median (wall, cpu) ms per call of each peer and of our op alone, sampled
    alternately."""
    # Calls per sample: enough for about 2 ms of work.
    per_call = burst(run_ort, 5)[0]
    calls = max(1, min(200, int(2e-3 / max(per_call, 1e-6))))
    got = {"ours": [], "op": [], "ort": []}
    with OpTimer() as op:
        for _ in range(rounds):
            for _ in range(samples):
                # A pause before each burst lets the other peer's worker threads stop
                # spinning: on two cores they otherwise hold the core this peer's
                # second thread needs, and its run waits a scheduler slice.
                # (and WARMUP untimed calls: the first calls after a pause wake the
                # peer's own workers, 0.4-8 ms here)
                time.sleep(PAUSE)
                burst(run_ours, WARMUP)
                w0, c0 = op.wall, op.cpu
                got["ours"].append(burst(run_ours, calls))
                got["op"].append(((op.wall - w0) / calls, (op.cpu - c0) / calls))
                time.sleep(PAUSE)
                burst(run_ort, WARMUP)
                got["ort"].append(burst(run_ort, calls))
    return {k: (float(np.median([s[0] for s in v]) * 1e3),
                float(np.median([s[1] for s in v]) * 1e3)) for k, v in got.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--only", default="", help="run the layers whose name contains this")
    args = parser.parse_args()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}  "
          f"load average {os.getloadavg()[0]:.1f}")
    rng = np.random.default_rng(0)
    layers = [spec for spec in LAYERS if args.only in layer_name(*spec[:3])]
    for n in args.threads:
        F.set_thread_number(n)
        print(f"\nthreads {n}: median ms per call (wall / cpu); ratio ours/ort uses "
              f"{'cpu' if n == 1 else 'wall'} time")
        print(f"{'layer':26s} {'x':>2s} {'ours wall/cpu':>15s} {'ours op':>15s} "
              f"{'ort wall/cpu':>15s} {'ours/ort':>8s} {'op/ort':>6s}")
        tot_ours = tot_op = tot_ort = 0.0
        for c, hw, s, count in layers:
            x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
            w = (rng.standard_normal((c, 1, 3, 3)) * 0.5).astype(np.float32)
            b = rng.standard_normal(c).astype(np.float32)
            xv = F.placeholder(list(x.shape))
            yv = F.conv2d(xv, F.const(w), F.const(b), (s, s), (1, 1), group=c,
                          activation="relu6")
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = n
            sess = ort.InferenceSession(onnx_model(x, w, b, s).SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])

            def run_ours(xv=xv, yv=yv, x=x):
                xv.write(x)
                return yv.read()

            def run_ort(sess=sess, x=x):
                return sess.run(None, {"x": x})[0]

            np.testing.assert_allclose(np.asarray(run_ours()), run_ort(), rtol=1e-4,
                                       atol=1e-4)
            t = measure(run_ours, run_ort, args.rounds, args.samples)
            k = 1 if n == 1 else 0
            tot_ours += count * t["ours"][k]
            tot_op += count * t["op"][k]
            tot_ort += count * t["ort"][k]
            print(f"{layer_name(c, hw, s):26s} {count:2d} "
                  + " ".join(f"{t[p][0]:7.3f}/{t[p][1]:7.3f}" for p in ("ours", "op", "ort"))
                  + f" {t['ours'][k] / t['ort'][k]:8.2f} {t['op'][k] / t['ort'][k]:6.2f}",
                  flush=True)
        print(f"{'weighted total':26s} {'':2s} {tot_ours:15.3f} {tot_op:15.3f} "
              f"{tot_ort:15.3f} {tot_ours / tot_ort:8.2f} {tot_op / tot_ort:6.2f}")


if __name__ == "__main__":
    main()
