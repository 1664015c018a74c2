"""ResNet18's 3x3 stride-1 convolutions, one layer shape at a time: ours vs onnxruntime.

Each shape (64ch 56x56, 128ch 28x28, 256ch 14x14, 512ch 7x7; batch 1, pad 1, bias, relu
fused as in a converted ResNet) runs as our conv2d op's compute and as a one-node ONNX
model (Conv + Relu, which onnxruntime fuses) in onnxruntime with the same weights. The two
run interleaved, a short burst each per round, so load on the machine hits both alike. Prints
median milliseconds and the ratio ours/ort (< 1: we are faster) per shape and thread count,
and the sum over ResNet18's layers (4, 3, 3, 3 convolutions of the four shapes).

At one thread the clock is this process's CPU time (a loaded machine mostly adds waiting
for a core to wall time); at two threads it is wall time (CPU time would add both threads).

Usage: ``python benchmarks/bench_conv3x3.py [--repeat 20] [--threads 1 2]``
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mnn.expr as F  # noqa: I001,F401 - sets OpenMP's wait policy before other libraries

import numpy as np
from onnx import TensorProto, helper

from mnn.express import set_thread_number
from mnn.express.enums import Padding_Mode
from mnn.express.optable import get_op
from timing import ort_session

# (channels, height = width, how many such convolutions ResNet18 has)
SHAPES = [(64, 56, 4), (128, 28, 3), (256, 14, 3), (512, 7, 3)]
CALLS = 5       # calls per timed burst
PAUSE = 0.05    # seconds before each burst (onnxruntime 1.32's workers spin ~35 ms)
WARM = 2        # untimed calls after each pause


def _model(x, w, b):
    inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "conv3x3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])



def bench_shape(channels, size, threads, repeat, rng):
    x = rng.standard_normal((1, channels, size, size)).astype(np.float32)
    w = (rng.standard_normal((channels, channels, 3, 3)) / np.sqrt(9 * channels)).astype(
        np.float32)
    b = rng.standard_normal(channels).astype(np.float32)
    for a in (x, w, b):     # as the engine hands constants to ops: transformed weights cache
        a.flags.writeable = False
    compute = get_op("conv2d").compute
    attrs = dict(strides=(1, 1), pads=(1, 1, 1, 1), dilations=(1, 1), group=1,
                 padding_mode=int(Padding_Mode.CAFFE), clamp=(0.0, float("inf")))
    set_thread_number(threads)
    sess = ort_session(_model(x, w, b), threads)
    ours = compute([x, w, b], **attrs)
    theirs = sess.run(None, {"x": x})[0]
    err = float(np.abs(ours - theirs).max() / (np.abs(theirs).max() + 1e-30))
    if err > 1e-4:
        raise AssertionError(f"{channels}ch {size}x{size}: ours differs from onnxruntime "
                             f"by {err:.2e} (relative to the largest output)")
    clock = time.process_time if threads == 1 else time.perf_counter
    t_ours, t_ort = [], []
    for _ in range(3):      # warm both (caches, packed weights, thread pools)
        compute([x, w, b], **attrs)
        sess.run(None, {"x": x})
    for _ in range(repeat):
        # Bursts of CALLS calls, each after a pause that lets the other peer's worker
        # threads stop spinning (on two cores they would hold the core this peer's second
        # thread needs), then WARM untimed calls: the first calls after a pause pay for
        # waking the worker threads (measured at 0.4-8 ms on this 2-core machine), and
        # this compares the kernels' steady-state calls, as bench_models does.
        time.sleep(PAUSE)
        for _ in range(WARM):
            compute([x, w, b], **attrs)
        t0 = clock()
        for _ in range(CALLS):
            compute([x, w, b], **attrs)
        t_ours.append((clock() - t0) / CALLS)
        time.sleep(PAUSE)
        for _ in range(WARM):
            sess.run(None, {"x": x})
        t0 = clock()
        for _ in range(CALLS):
            sess.run(None, {"x": x})
        t_ort.append((clock() - t0) / CALLS)
    return statistics.median(t_ours) * 1e3, statistics.median(t_ort) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'shape':<22}{'threads':>8}{'ours ms':>10}{'ort ms':>10}{'ours/ort':>10}")
    for threads in args.threads:
        sum_ours = sum_ort = 0.0
        for channels, size, count in SHAPES:
            ours, theirs = bench_shape(channels, size, threads, args.repeat, rng)
            sum_ours += count * ours
            sum_ort += count * theirs
            name = f"{channels}ch {size}x{size} (x{count})"
            print(f"{name:<22}{threads:>8}{ours:>10.3f}{theirs:>10.3f}{ours / theirs:>10.2f}")
        print(f"{'ResNet18 3x3 s1 sum':<22}{threads:>8}{sum_ours:>10.3f}{sum_ort:>10.3f}"
              f"{sum_ours / sum_ort:>10.2f}")


if __name__ == "__main__":
    main()
