"""Per-op-kind time of MobileNetV2 / ResNet18 in mnn.express and in onnxruntime.

Ours: every op's compute is wrapped with a CPU-time timer while the model runs repeatedly; conv2d
calls are split by kind (depthwise, 1x1, Winograd 3x3, im2col), and the chains the engine
fuses (inverted-residual blocks, relu(conv + skip)) are timed as kinds of their own (the
convolution inside conv+add+relu is also counted under its conv kind). onnxruntime: its own
profiler (``enable_profiling``), node times grouped the same way from the node's weight
shape (its profiler measures wall time: compare on a quiet machine). Totals are CPU
time. Prints milliseconds per run for each kind, ours and onnxruntime's, so the gap to
onnxruntime can be located.

With ``--by-shape`` the convolutions are told apart by their channels and output size too
(``conv 3x3 s1 512->512 7x7``), which locates the gap layer by layer.

Usage: ``python benchmarks/profile_models.py [--threads 1] [--repeat 20] [--models ...]
[--by-shape]``
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mnn.expr as F  # noqa: I001

import numpy as np
import onnxruntime as ort

import bench_models
from mnn.express import optable
from mnn.express.ops import fusion_add_relu, fusion_block, fusion_conv_pool, fusion_dense


# Set by --by-shape: conv kinds name their channels and output size as well.
_BY_SHAPE = False


def _conv_kind(w_shape, group, strides, out_hw=None):
    kind = _conv_kind_plain(w_shape, group, strides)
    if _BY_SHAPE and out_hw is not None:
        o, cg = w_shape[0], w_shape[1]
        kind += f" {cg * group}->{o} {out_hw[0]}x{out_hw[1]}"
    return kind


def _conv_kind_plain(w_shape, group, strides):
    o, cg, kh, kw = w_shape
    if group > 1 and cg == 1:
        return f"conv dw{kh}x{kw} s{strides[0]}"
    if kh == 1 and kw == 1:
        return f"conv 1x1 s{strides[0]}"
    return f"conv {kh}x{kw} s{strides[0]}"


# CPU time of this process: on a loaded machine wall time mostly measures waiting for a
# core. (At one thread it is the op's own time; at more it adds the workers' time.)
_clock = time.process_time


def profile_ours(x, y, data, repeat):
    times = collections.defaultdict(float)
    originals = {}
    for name in ("conv2d", "add", "relu", "global_avg_pool", "max_pool", "matmul",
                 "reshape"):
        try:
            op = optable.get_op(name)
        except Exception:  # noqa: BLE001 - op absent under this name: not profiled
            continue
        originals[name] = (op.compute, op.prepare)
        op.prepare = None  # every call through the timed compute (OpDef.prepare)

        def timed(arrays, _name=name, _f=op.compute, **attrs):
            t0 = _clock()
            out = _f(arrays, **attrs)
            key = _name
            if _name == "conv2d":
                key = _conv_kind(arrays[1].shape, attrs["group"], attrs["strides"],
                                 out.shape[2:] if hasattr(out, "shape") else None)
            times[key] += _clock() - t0
            return out

        op.compute = timed
    # Fused groups run as one call each and are timed as kinds of their own: chains of
    # inverted-residual blocks (fusion_block._compute_chain, the first block's expand
    # possibly the stem), relu(conv + skip) (its convolution is also counted under its
    # conv kind), max_pool(conv) and the dense head (pool, matmul, bias).
    def timed_block(chain, strides, stem=None, _f=fusion_block._compute_chain):
        t0 = _clock()
        done = _f(chain, strides, stem)
        key = "fused block" if len(chain) == 1 else "fused chain"
        times[f"{key} s{max(strides)}"] += _clock() - t0
        return done

    def timer(key, f):
        def timed_method(self, *args):
            t0 = _clock()
            done = f(self, *args)
            times[key] += _clock() - t0
            return done
        return timed_method

    methods = [(fusion_add_relu.AddRelu, "conv+add+relu"),
               (fusion_conv_pool.ConvPool, "conv+max_pool"),
               (fusion_dense.Dense, "dense head")]
    originals[fusion_block] = fusion_block._compute_chain
    fusion_block._compute_chain = timed_block
    for cls, key in methods:
        originals[cls] = cls.compute
        cls.compute = timer(key, cls.compute)
    try:
        x.write(data)
        y.read()
        times.clear()
        t0 = _clock()
        for _ in range(repeat):
            x.write(data)
            y.read()
        total = (_clock() - t0) / repeat
    finally:
        for name, f in originals.items():
            if isinstance(name, str):
                optable.get_op(name).compute, optable.get_op(name).prepare = f
            elif name is fusion_block:
                fusion_block._compute_chain = f
            else:
                name.compute = f
    return {k: v / repeat * 1e3 for k, v in times.items()}, total * 1e3


def profile_ort(path, data, threads, repeat):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        opts.profile_file_prefix = os.path.join(tmp, "prof")
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        sess.run(None, {"x": data})
        t0 = _clock()
        for _ in range(repeat):
            sess.run(None, {"x": data})
        total = (_clock() - t0) / repeat
        events = json.load(open(sess.end_profiling()))
    times = collections.defaultdict(float)
    runs = collections.Counter()
    for ev in events:
        if ev.get("cat") != "Node" or not ev["name"].endswith("_kernel_time"):
            continue
        args = ev.get("args", {})
        op = args.get("op_name", "?")
        key = op
        if op in ("Conv", "FusedConv"):
            shapes = args.get("input_type_shape", [])
            w = list(shapes[1].values())[0] if len(shapes) > 1 else None
            x = list(shapes[0].values())[0]
            out = list(args.get("output_type_shape", [{}])[0].values())[0]
            stride = x[2] // out[2] if out and out[2] else 1
            group = x[1] // w[1] if w and w[1] else 1
            key = _conv_kind(w, group, (stride, stride), out[2:] if out else None) if w else op
        times[key] += ev["dur"] / 1e3
        runs[key] += 1
    # the first run (warm-up) is in the trace too
    return {k: v / (repeat + 1) for k, v in times.items()}, total * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--models", nargs="+", default=list(bench_models.MODELS))
    parser.add_argument("--by-shape", action="store_true",
                        help="tell convolutions apart by channels and output size")
    args = parser.parse_args()
    global _BY_SHAPE
    _BY_SHAPE = args.by_shape
    F.set_thread_number(args.threads)
    data = np.random.default_rng(0).standard_normal(bench_models.SHAPE).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            _, path, x, y = bench_models.build(name, tmp)
            ours, ours_total = profile_ours(x, y, data, args.repeat)
            theirs, ort_total = profile_ort(path, data, args.threads, args.repeat)
            print(f"{name}, {args.threads} thread(s): total ours {ours_total:.2f} ms, "
                  f"onnxruntime {ort_total:.2f} ms")
            for key in sorted(set(ours) | set(theirs), key=lambda k: -ours.get(k, 0)):
                print(f"  {key:28s} ours {ours.get(key, 0):7.2f}  ort {theirs.get(key, 0):7.2f}")


if __name__ == "__main__":
    main()
