"""Every 1x1 and strided (non-depthwise) convolution shape of MobileNetV2 and ResNet18:
mnn.express vs onnxruntime, float32, batch 1, 1 and 2 threads.

Each distinct shape (input size, channels, kernel, stride, pads, fused activation) runs
as a single-conv graph in mnn (weight and bias constants, the activation fused as the
model builder does) and as a single-Conv ONNX model with the same weights followed by the
model's Relu / Clip(0, 6) (onnxruntime fuses them into its FusedConv). The peers are
timed in interleaved rounds; per shape the median milliseconds (wall and process CPU
time) and the ratio ours/ort are printed (< 1: we are faster), then per model the totals
weighted by how many times each shape occurs in it.

"ours" is the conv2d op's compute on the arrays (what a model's graph runs for the node,
as benchmarks/profile_models.py times it); "graph" is the one-op graph run from Python
(``write`` copies the input, then the graph evaluates), shown for reference: its extra
cost is the engine's per-run bookkeeping, not the kernel's.

Usage: ``python benchmarks/bench_conv_shapes.py [--repeat 30] [--threads 1 2]
[--models MobileNetV2 ResNet18] [--only 1x1]``
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# mnn first: it sets OpenMP's wait policy (passive) before libgomp, which torch shares,
# is loaded.
import mnn.expr as F  # noqa: I001

import models
import numpy as np
from timing import median_ms
from mnn.express import optable
import onnxruntime as ort
import torch
from onnx import TensorProto, helper

MODELS = {"MobileNetV2": models.MobileNetV2, "ResNet18": models.ResNet18}
SHAPE = (1, 3, 224, 224)

# (cin, cout, k, stride, pad, h, w, act)
Shape = collections.namedtuple("Shape", "cin cout k stride pad h w act")


def _label(s):
    return (f"{s.k}x{s.k} s{s.stride} {s.cin:4d}->{s.cout:<4d} {s.h}x{s.w}"
            f" {s.act or 'none'}")


def model_shapes(name):
    """Counter of the 1x1 / strided group-1 convolution shapes of model ``name``."""
    model = MODELS[name]()
    found = collections.Counter()

    def hook(module, inputs, _out):
        conv = module.conv
        if conv.groups != 1:
            return
        k, s = conv.kernel_size[0], conv.stride[0]
        if k != 1 and s == 1:
            return
        _, c, h, w = inputs[0].shape
        found[Shape(c, conv.out_channels, k, s, conv.padding[0], h, w, module.act)] += 1

    for m in model.modules():
        if isinstance(m, models.ConvBN):
            m.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.zeros(SHAPE))
    return found


def _onnx_conv(s, w, b):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv" if s.act else "y"],
                              strides=[s.stride] * 2, pads=[s.pad] * 4)]
    inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())]
    if s.act == "relu":
        nodes.append(helper.make_node("Relu", ["conv"], ["y"]))
    elif s.act == "relu6":
        inits += [helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                  helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])]
        nodes.append(helper.make_node("Clip", ["conv", "lo", "hi"], ["y"]))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                   [1, s.cin, s.h, s.w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_shape(s, threads, repeat, rng):
    """{threads: ((ours wall, cpu), (ort wall, cpu), (graph wall, cpu))} for shape ``s``."""
    x = rng.standard_normal((1, s.cin, s.h, s.w)).astype(np.float32)
    w = (rng.standard_normal((s.cout, s.cin, s.k, s.k)) / np.sqrt(s.cin * s.k * s.k))
    w = w.astype(np.float32)
    b = rng.standard_normal(s.cout).astype(np.float32)
    xv = F.placeholder(list(x.shape))
    yv = F.conv2d(xv, F.const(w), F.const(b), (s.stride, s.stride), (s.pad, s.pad),
                  activation=s.act)
    compute, attrs = optable.get_op("conv2d").compute, dict(yv.expr.attrs)
    # Read-only like the engine's constants (packed weights are cached for those).
    arrays = [x.copy(), w.copy(), b.copy()]
    for a in arrays:
        a.flags.writeable = False
    model = _onnx_conv(s, w, b).SerializeToString()
    out = {}
    for n in threads:
        F.set_thread_number(n)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = n
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])

        def ours():
            return compute(arrays, **attrs)

        def graph():
            xv.write(x)
            return yv.read()

        def theirs():
            return sess.run(None, {"x": x})[0]

        np.testing.assert_allclose(np.asarray(ours()), theirs(), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(np.asarray(graph()), theirs(), rtol=1e-3, atol=1e-3)
        rounds = {ours: [], theirs: [], graph: []}
        for _ in range(3):  # interleaved rounds; keep each peer's best round
            for f in rounds:
                rounds[f].append(median_ms(f, repeat))
        out[n] = tuple((min(r[0] for r in v), min(r[1] for r in v)) for v in rounds.values())
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--only", default="", help="run the shapes whose label has this")
    args = parser.parse_args()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}  "
          f"load average {os.getloadavg()[0]:.1f}")
    print("median ms, wall/cpu (cpu = process time of all threads); ratio = ours/ort")
    rng = np.random.default_rng(0)
    per_model = {name: model_shapes(name) for name in args.models}
    shapes = sorted({s for c in per_model.values() for s in c},
                    key=lambda s: (s.k, s.stride, -s.h, s.cin, s.cout))
    results = {}
    for s in shapes:
        if args.only not in _label(s):
            continue
        results[s] = run_shape(s, args.threads, args.repeat, rng)
        for n, ((ow, oc), (tw, tc), (gw, gc)) in results[s].items():
            print(f"{_label(s):38s} thr {n}  ours {ow:6.3f}/{oc:6.3f}  ort {tw:6.3f}/{tc:6.3f}"
                  f"  ratio {ow / tw:4.2f}/{oc / tc:4.2f}  graph {gw:6.3f}/{gc:6.3f}",
                  flush=True)
    for name, counts in per_model.items():
        for n in args.threads:
            tot = np.zeros(4)
            for s, k in counts.items():
                if s in results:
                    (ow, oc), (tw, tc), _ = results[s][n]
                    tot += k * np.array([ow, oc, tw, tc])
            print(f"{name} total ({sum(counts.values())} convs) thr {n}: ours "
                  f"{tot[0]:.2f}/{tot[1]:.2f} ms  ort {tot[2]:.2f}/{tot[3]:.2f} ms  ratio "
                  f"{tot[0] / max(tot[2], 1e-9):.2f}/{tot[1] / max(tot[3], 1e-9):.2f}")


if __name__ == "__main__":
    main()
