"""Per-op-kind time of MobileNetV2 / ResNet18 in mnn.express and in onnxruntime.

Ours: every op's compute is wrapped with a timer while the model runs repeatedly; conv2d
calls are split by kind (depthwise, 1x1, Winograd 3x3, im2col), and the chains the engine
fuses (inverted-residual blocks, relu(conv + skip)) are timed as kinds of their own (the
convolution inside conv+add+relu is also counted under its conv kind, marked ``+skip``). onnxruntime: its own
profiler (``enable_profiling``), node times grouped the same way from the node's weight
shape. Both are wall time; at one thread the two engines run in turns (one run of ours,
one of onnxruntime's), so that a noisy machine's slow moments fall on both alike. Prints
milliseconds per run for each kind, ours and onnxruntime's, so the gap to onnxruntime
can be located.

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
from mnn.express.ops import fusion_add_relu, fusion_block, fusion_conv_pool, fusion_dense, nn_conv


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


# Wall time, as onnxruntime's profiler measures (CPU time would add the workers' time at
# more than one thread).
_clock = time.perf_counter


class _OursProfiler:
    """Wraps our ops' computes with timers while active (``with``): every call adds its
    time to ``times`` under its kind."""

    def __init__(self):
        self.times = collections.defaultdict(float)
        self._originals = {}

    def __enter__(self):
        times, originals = self.times, self._originals
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
        # possibly the stem), relu(conv + skip) (its convolution also timed by shape,
        # marked +skip), max_pool(conv) and the dense head (pool, matmul, bias).
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

        # relu(conv + skip) done in the conv kernel's store: its conv timed by shape too
        def timed_skip(arrays, skip, *args, _f=nn_conv.conv2d_add_clamp, **attrs):
            t0 = _clock()
            out = _f(arrays, skip, *args, **attrs)
            if out is not None:
                kind = _conv_kind(arrays[1].shape, attrs["group"], attrs["strides"],
                                  out.shape[2:])
                times[kind + " +skip"] += _clock() - t0
            return out

        originals[nn_conv] = nn_conv.conv2d_add_clamp
        nn_conv.conv2d_add_clamp = timed_skip
        methods = [(fusion_add_relu.AddRelu, "conv+add+relu"),
                   (fusion_conv_pool.ConvPool, "conv+max_pool"),
                   (fusion_dense.Dense, "dense head")]
        originals[fusion_block] = fusion_block._compute_chain
        fusion_block._compute_chain = timed_block
        for cls, key in methods:
            originals[cls] = cls.compute
            cls.compute = timer(key, cls.compute)
        return self

    def __exit__(self, *exc):
        for name, f in self._originals.items():
            if isinstance(name, str):
                optable.get_op(name).compute, optable.get_op(name).prepare = f
            elif name is fusion_block:
                fusion_block._compute_chain = f
            elif name is nn_conv:
                nn_conv.conv2d_add_clamp = f
            else:
                name.compute = f
        self._originals.clear()


def ort_session(path, threads, prefix):
    """An onnxruntime session of the model at ``path`` with its profiler on."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = prefix
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def ort_times(sess, runs):
    """Milliseconds per run of each kind from the session's profile of ``runs`` runs."""
    events = json.load(open(sess.end_profiling()))
    times = collections.defaultdict(float)
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
    return {k: v / runs for k, v in times.items()}


def profile(x, y, sess, data, repeat, interleave):
    """Both engines' times per kind and in total (ms per run), ``repeat`` runs each. With
    ``interleave`` one run of ours, then one of onnxruntime's, and so on, so that both see
    the same moments of a noisy machine; else all of ours, then all of onnxruntime's
    (with more than one thread each engine's workers spin for a while after its run and
    would slow the other's next run)."""
    feed = {sess.get_inputs()[0].name: data}
    x.write(data)
    y.read()
    sess.run(None, feed)  # warm-up: in onnxruntime's profile too (counted in runs below)
    totals = [0.0, 0.0]

    def run_ours():
        t0 = _clock()
        x.write(data)
        y.read()
        totals[0] += _clock() - t0

    def run_theirs():
        t0 = _clock()
        sess.run(None, feed)
        totals[1] += _clock() - t0

    with _OursProfiler() as ours:
        x.write(data)
        y.read()  # a warm-up through the timed computes, not counted
        ours.times.clear()
        if interleave:
            for _ in range(repeat):
                run_ours()
                run_theirs()
        else:
            for _ in range(repeat):
                run_ours()
    if not interleave:
        for _ in range(repeat):
            run_theirs()
    ours_ms = {k: v / repeat * 1e3 for k, v in ours.times.items()}
    return ours_ms, ort_times(sess, repeat + 1), totals[0] / repeat * 1e3, \
        totals[1] / repeat * 1e3


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
            sess = ort_session(path, args.threads, os.path.join(tmp, "prof"))
            ours, theirs, ours_total, ort_total = profile(x, y, sess, data, args.repeat,
                                                           args.threads == 1)
            print(f"{name}, {args.threads} thread(s): total ours {ours_total:.2f} ms, "
                  f"onnxruntime {ort_total:.2f} ms")
            for key in sorted(set(ours) | set(theirs), key=lambda k: -ours.get(k, 0)):
                print(f"  {key:28s} ours {ours.get(key, 0):7.2f}  ort {theirs.get(key, 0):7.2f}")


if __name__ == "__main__":
    main()
