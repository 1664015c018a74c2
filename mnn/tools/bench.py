"""``mnn-bench``: time a model like MNN's MNNBenchmark (``benchmark.out``).

Usage::

    mnn-bench model.mnn [more.mnn | folder ...] [--loops 10] [--warmup 3] [--threads 4]
              [--shape x:1,3,224,224] [--seed 0] [--per-op]

For each model: load time, then the average, min and max latency in ms over ``--loops``
runs after ``--warmup`` runs, and the peak memory: the largest total of arrays alive during
one run (numpy reports its buffers to :mod:`tracemalloc`) plus the weights, and the
process's peak resident size. ``--per-op`` adds a table of time and MFLOPs per op type
from one profiled run. Inputs are random normal floats (zeros for integer inputs)
of the declared shapes; unknown dimensions are 1 unless ``--shape`` gives them.
"""
import argparse
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

__all__ = ["benchmark_model", "main", "parse_shape"]


def parse_shape(text):
    """``name:1,3,224,224`` (or ``1x3x224x224``) -> (name, [1, 3, 224, 224])."""
    if ":" not in text:
        raise argparse.ArgumentTypeError(f"--shape needs name:dims, got {text!r}")
    name, dims = text.rsplit(":", 1)
    try:
        shape = [int(d) for d in dims.replace("x", ",").split(",") if d.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape {text!r}: dimensions must be integers") \
            from None
    if any(d < 0 for d in shape):
        raise argparse.ArgumentTypeError(f"--shape {text!r}: negative dimension")
    return name, shape


def _inputs(module, shapes, rng):
    from ..runtime.module import declared_shape

    arrays = []
    for name, var in zip(module.input_names, module._input_vars):
        shape = shapes.get(name) or [d if d >= 0 else 1 for d in (declared_shape(var) or [])]
        dtype = var.expr.metas[var.index].dtype
        if dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(dtype))
        else:
            arrays.append(np.zeros(shape, dtype))
    return arrays


def _progress(done, total, stream):
    width = 30
    filled = width * done // max(total, 1)
    stream.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        stream.write("\n")
    stream.flush()


def benchmark_model(path, loops=10, warmup=3, threads=4, shapes=None, seed=0,
                    progress=None):
    """Load ``path`` and time it; returns a dict of the measurements (ms and MB).

    Parameters
    ----------
    path : str
        A ``.mnn`` file.
    loops, warmup : int
        Timed runs and untimed runs before them.
    threads : int
        Threads for the compiled kernels.
    shapes : dict, optional
        Input name -> shape for inputs with unknown dimensions (or to override).
    progress : file-like, optional
        Where to draw a progress bar (None: no bar).
    """
    from ..nn.loader import load_module_from_file

    if loops < 1 or warmup < 0:
        raise ValueError(f"mnn-bench: loops must be >= 1 and warmup >= 0, got {loops}, "
                         f"{warmup}")
    t0 = time.perf_counter()
    module = load_module_from_file(path, [], [], thread_num=threads)
    load_ms = (time.perf_counter() - t0) * 1e3
    arrays = _inputs(module, dict(shapes or {}), np.random.default_rng(seed))
    total = warmup + loops
    times = []
    for i in range(total):
        t0 = time.perf_counter()
        module.run_arrays(arrays)
        elapsed = (time.perf_counter() - t0) * 1e3
        if i >= warmup:
            times.append(elapsed)
        if progress is not None:
            _progress(i + 1, total, progress)
    # One more run under tracemalloc: numpy reports every buffer it allocates.
    tracemalloc.start()
    try:
        module.run_arrays(arrays)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    weights = sum(v.nbytes for v in module.plan.constants.values())
    per_op = _profile_ops(module, arrays)
    return {"per_op": per_op, "model": path, "load_ms": load_ms, "avg_ms": float(np.mean(times)),
            "min_ms": float(np.min(times)), "max_ms": float(np.max(times)),
            "peak_run_mb": peak / 2**20, "weights_mb": weights / 2**20,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "ops": len(module.plan.steps), "threads": threads}


def _profile_ops(module, arrays):
    """One run with a hook after each op: op type -> [count, ms, MFLOPs]."""
    from ..runtime.session import op_mflops

    table = {}

    def after(step, args, outs, seconds):
        row = table.setdefault(step.op.name, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += seconds * 1e3
        row[2] += op_mflops(step.op.name, [a.shape for a in args], [o.shape for o in outs])
        return True

    module.run_arrays(arrays, after=after)
    return table


def _model_paths(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".mnn"))
        else:
            out.append(p)
    return out


def main(argv=None):
    """Entry point of ``mnn-bench``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="mnn-bench", description="Time .mnn models (average/min/max ms, peak memory).")
    parser.add_argument("models", nargs="+", help=".mnn files or folders of them")
    parser.add_argument("--loops", type=int, default=10, help="timed runs (default 10)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (3)")
    parser.add_argument("--threads", type=int, default=4, help="kernel threads (4)")
    parser.add_argument("--shape", type=parse_shape, action="append", default=[],
                        help="input shape, name:1,3,224,224 (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--per-op", action="store_true",
                        help="time per op type (one profiled run)")
    args = parser.parse_args(argv)
    from ..express.errors import MnnError

    paths = _model_paths(args.models)
    if not paths:
        parser.error("no .mnn models found")
    status = 0
    for path in paths:
        print(f"{path}: loops {args.loops}, warmup {args.warmup}, threads {args.threads}")
        try:
            r = benchmark_model(path, args.loops, args.warmup, args.threads,
                                dict(args.shape), args.seed,
                                progress=None if args.quiet else sys.stderr)
        except (MnnError, ValueError, OSError) as exc:
            print(f"  error: {exc}")
            status = 1
            continue
        print(f"  load {r['load_ms']:.2f} ms, {r['ops']} ops")
        print(f"  [ - ] {os.path.basename(path)}    max = {r['max_ms']:8.3f} ms  "
              f"min = {r['min_ms']:8.3f} ms  avg = {r['avg_ms']:8.3f} ms")
        print(f"  peak memory: {r['peak_run_mb'] + r['weights_mb']:.2f} MB (weights "
              f"{r['weights_mb']:.2f} MB + run {r['peak_run_mb']:.2f} MB), max RSS "
              f"{r['max_rss_mb']:.1f} MB")
        if args.per_op:
            total = sum(row[1] for row in r["per_op"].values()) or 1.0
            print(f"  {'op type':<22}{'count':>6}{'ms':>10}{'%':>7}{'MFLOPs':>10}")
            for name, (count, ms, mflops) in sorted(r["per_op"].items(),
                                                   key=lambda kv: -kv[1][1]):
                print(f"  {name:<22}{count:>6}{ms:>10.3f}{100 * ms / total:>7.1f}"
                      f"{mflops:>10.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
