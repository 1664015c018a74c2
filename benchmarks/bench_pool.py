"""Pooling: mnn.express vs torch vs onnxruntime, float32, 1 and 2 threads.

Forward cases run as a graph built once on a placeholder (write the input, read the
output), torch's functional op under no_grad, and a one-node onnxruntime model. Training
cases time forward + backward as a training step runs them: ours reads the pooled output
and the input gradient of a graph built once, torch calls ``backward`` on the pooled
output (onnxruntime has no backward: no ratio). Prints median milliseconds (best of
interleaved rounds) and the ratios ours/theirs (< 1: we are faster).

Usage: ``python benchmarks/bench_pool.py [--repeat 30] [--threads 1 2] [-k PATTERN]``
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# mnn first: it sets OpenMP's wait policy (passive) before libgomp, which torch shares,
# is loaded. The setting then holds for torch's threads too.
import mnn.expr as F  # noqa: I001

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _onnx(op, x, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def forward_cases():
    """(name, input, ours(Var) -> Var, torch(tensor) -> tensor, onnx model)."""
    xp = _arr(1, 64, 112, 112)
    xg = _arr(1, 1280, 7, 7)
    return [
        ("maxpool 3x3 s2 p1 64x112x112", xp,
         lambda v: F.max_pool(v, (3, 3), (2, 2), pads=(1, 1)),
         lambda t: TF.max_pool2d(t, 3, 2, 1),
         _onnx("MaxPool", xp, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("maxpool 2x2 s2 64x112x112", xp,
         lambda v: F.max_pool(v, (2, 2), (2, 2)),
         lambda t: TF.max_pool2d(t, 2, 2),
         _onnx("MaxPool", xp, kernel_shape=[2, 2], strides=[2, 2])),
        ("avgpool 2x2 s2 64x112x112", xp,
         lambda v: F.avg_pool(v, (2, 2), (2, 2)),
         lambda t: TF.avg_pool2d(t, 2, 2),
         _onnx("AveragePool", xp, kernel_shape=[2, 2], strides=[2, 2])),
        ("avgpool 3x3 s2 p1 64x112x112", xp,
         lambda v: F.avg_pool(v, (3, 3), (2, 2), pads=(1, 1)),
         lambda t: TF.avg_pool2d(t, 3, 2, 1),
         _onnx("AveragePool", xp, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               count_include_pad=1)),
        ("global avgpool 1280x7x7", xg,
         F.global_avg_pool,
         lambda t: TF.adaptive_avg_pool2d(t, 1),
         _onnx("GlobalAveragePool", xg)),
    ]


def training_cases():
    """(name, input, ours(Var) -> Var, torch(tensor) -> tensor)."""
    return [
        ("maxpool 2x2 s2 fwd+bwd 64x20x24x24", _arr(64, 20, 24, 24),
         lambda v: F.max_pool(v, (2, 2), (2, 2)), lambda t: TF.max_pool2d(t, 2, 2)),
        ("maxpool 2x2 s2 fwd+bwd 64x50x8x8", _arr(64, 50, 8, 8),
         lambda v: F.max_pool(v, (2, 2), (2, 2)), lambda t: TF.max_pool2d(t, 2, 2)),
        ("maxpool 3x3 s2 p1 fwd+bwd 8x64x56x56", _arr(8, 64, 56, 56),
         lambda v: F.max_pool(v, (3, 3), (2, 2), pads=(1, 1)),
         lambda t: TF.max_pool2d(t, 3, 2, 1)),
        ("avgpool 2x2 s2 fwd+bwd 64x20x24x24", _arr(64, 20, 24, 24),
         lambda v: F.avg_pool(v, (2, 2), (2, 2)), lambda t: TF.avg_pool2d(t, 2, 2)),
    ]


def _median_ms(fn, repeat):
    fn()
    wall = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
    return float(np.median(wall) * 1e3)


def _best_of_rounds(fns, repeat, rounds=3):
    """Interleaved rounds (the machine is noisy); each peer's best round median. A pause
    before each block lets the previous peer's worker threads (torch's OpenMP, onnxruntime's
    pool) stop spinning: on two cores they otherwise hold the core the next peer's second
    thread needs, and that peer's run waits a scheduler slice."""
    runs = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            time.sleep(0.05)
            runs[k].append(_median_ms(f, repeat))
    return {k: min(v) for k, v in runs.items()}


def _set_threads(n):
    F.set_thread_number(n)
    torch.set_num_threads(n)


def run_forward(args, pattern):
    for name, x, ours, theirs, model in forward_cases():
        if pattern and not re.search(pattern, name):
            continue
        xv = F.placeholder(list(x.shape))
        yv = ours(xv)
        tx = torch.tensor(x)
        for n in args.threads:
            _set_threads(n)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = n
            sess = ort.InferenceSession(model.SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])

            def run_ours(xv=xv, yv=yv, x=x):
                xv.write(x)
                return yv.read()

            def run_torch(theirs=theirs, tx=tx):
                with torch.no_grad():
                    return theirs(tx)

            def run_ort(sess=sess, x=x):
                return sess.run(None, {"x": x})[0]

            ref = run_torch().numpy()
            for got in (np.asarray(run_ours()), run_ort()):
                np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
            t = _best_of_rounds({"mnn": run_ours, "torch": run_torch, "ort": run_ort},
                                args.repeat)
            print(f"{name:38s} {n:3d} {t['mnn']:8.3f} {t['torch']:8.3f} {t['ort']:8.3f} "
                  f"{t['mnn'] / t['torch']:9.2f} {t['mnn'] / t['ort']:9.2f}", flush=True)


def run_training(args, pattern):
    for name, x, ours, theirs in training_cases():
        if pattern and not re.search(pattern, name):
            continue
        xv = F.placeholder(list(x.shape))
        yv = ours(xv)
        dy = _arr(*yv.shape)
        dyv = F.placeholder(list(dy.shape))
        (gv,) = F.grad([yv], [xv], [dyv])
        tdy = torch.tensor(dy)
        for n in args.threads:
            _set_threads(n)

            def run_ours(xv=xv, dyv=dyv, yv=yv, gv=gv, x=x, dy=dy):
                xv.write(x)
                dyv.write(dy)
                return yv.read(), gv.read()

            def run_torch(theirs=theirs, x=x, tdy=tdy):
                tx = torch.tensor(x, requires_grad=True)
                ty = theirs(tx)
                ty.backward(tdy)
                return ty, tx.grad

            (oy, og), (ty, tg) = run_ours(), run_torch()
            np.testing.assert_allclose(oy, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(og, tg.numpy(), rtol=1e-5, atol=1e-6)
            t = _best_of_rounds({"mnn": run_ours, "torch": run_torch}, args.repeat)
            print(f"{name:38s} {n:3d} {t['mnn']:8.3f} {t['torch']:8.3f} {'-':>8s} "
                  f"{t['mnn'] / t['torch']:9.2f} {'-':>9s}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("-k", "--pattern", help="regular expression on case names")
    args = parser.parse_args()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}  "
          f"load average {os.getloadavg()[0]:.1f}")
    print("median wall milliseconds (best of 3 interleaved rounds)")
    print(f"{'case':38s} {'thr':>3s} {'mnn':>8s} {'torch':>8s} {'ort':>8s} "
          f"{'mnn/torch':>9s} {'mnn/ort':>9s}")
    run_forward(args, args.pattern)
    run_training(args, args.pattern)


if __name__ == "__main__":
    main()
