"""mnn.numpy against the real wheel's MNN.numpy and against numpy itself, in one process.

Each workload builds its expression from inputs prepared outside the timing and reads
the result (``np.asarray`` for mnn, ``read()`` + copy for the wheel, whose buffers later
computations may overwrite). Times are medians of repeated runs; the ratio columns are
ours / theirs (below 1: mnn.numpy is faster). Workloads the wheel leaves unimplemented
(median, unique, roll, ...) are compared with numpy only. The machine is shared and
noisy: compare the ratios of one run.

Usage: ``python benchmarks/bench_numpy.py [--runs N] [--threads N]``
"""
import argparse
import contextlib
import io
import os
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(_HERE, "..")))


def _median_ms(fn, runs, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def _workloads(a, b, small, ints):
    """name -> function(lib, vars) building the result; lib is a numpy-like module."""
    return {
        "add+mul+sum(axis=1) 512x512": lambda m, v: m.sum(v["a"] * v["b"] + v["a"], axis=1),
        "mean/std(axis=0) 512x512": lambda m, v: m.std(v["a"], axis=0) + m.mean(v["b"],
                                                                               axis=0),
        "dot 256x256": lambda m, v: m.dot(v["a256"], v["b256"]),
        "sort(axis=-1) 256x1024": lambda m, v: m.sort(v["wide"], axis=-1),
        "argmax(axis=1) 512x512": lambda m, v: m.argmax(v["a"], axis=1),
        "transpose+reshape 512x512": lambda m, v: m.reshape(m.transpose(v["a"]), [-1]),
        "concatenate 3x512x512": lambda m, v: m.concatenate([v["a"], v["b"], v["a"]], 0),
        "pad constant 512x512": lambda m, v: m.pad(v["a"], 2),
        "x + 1 (4 elements)": lambda m, v: v["small"] + 1.0,
        "zeros+eye (small)": lambda m, v: m.zeros([8, 8]) + m.eye(8),
        "median(axis=1) 512x512": lambda m, v: m.median(v["a"], axis=1),
        "unique 1e5 ints": lambda m, v: m.unique(v["ints"]),
        "roll 512x512": lambda m, v: m.roll(v["a"], 3, axis=1),
        "percentile 512x512": lambda m, v: m.percentile(v["a"], 90, axis=0),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import mnn
    import mnn.expr as F
    import mnn.numpy as mnp

    with contextlib.redirect_stdout(io.StringIO()):
        import MNN
        import MNN.numpy as wnp
    F.set_thread_number(args.threads)
    MNN.expr.set_thread_number(args.threads)

    r = np.random.default_rng(0)
    arrays = {
        "a": r.standard_normal((512, 512)).astype(np.float32),
        "b": r.standard_normal((512, 512)).astype(np.float32),
        "a256": r.standard_normal((256, 256)).astype(np.float32),
        "b256": r.standard_normal((256, 256)).astype(np.float32),
        "wide": r.standard_normal((256, 1024)).astype(np.float32),
        "small": r.standard_normal(4).astype(np.float32),
        "ints": r.integers(0, 1000, 100000).astype(np.int32),
    }
    ours = {k: F.const(v) for k, v in arrays.items()}
    theirs = {k: MNN.expr.const(v, list(v.shape), MNN.expr.NCHW,
                                MNN.expr.int if v.dtype == np.int32 else MNN.expr.float)
              for k, v in arrays.items()}

    def read_ours(x):
        return [np.asarray(e) for e in x] if isinstance(x, tuple) else np.asarray(x)

    def read_theirs(x):
        return np.array(x.read(), copy=True)

    print(f"mnn {mnn.__version__} vs MNN {MNN.version()} vs numpy {np.__version__}, "
          f"{args.threads} thread(s), median of {args.runs} runs (ms)")
    print(f"{'workload':30s} {'mnn':>9s} {'wheel':>9s} {'numpy':>9s} "
          f"{'mnn/wheel':>10s} {'mnn/numpy':>10s}")
    for name, fn in _workloads(**{k: arrays[k] for k in ("a", "b", "small", "ints")}).items():
        t_ours = _median_ms(lambda: read_ours(fn(mnp, ours)), args.runs)
        t_np = _median_ms(lambda: fn(np, arrays), args.runs)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                read_theirs(fn(wnp, theirs))
            t_theirs = _median_ms(lambda: read_theirs(fn(wnp, theirs)), args.runs)
            wheel, ratio = f"{t_theirs:9.3f}", f"{t_ours / t_theirs:10.2f}"
        except (NotImplementedError, RuntimeError, TypeError, ValueError, AttributeError):
            wheel, ratio = f"{'n/a':>9s}", f"{'-':>10s}"
        print(f"{name:30s} {t_ours:9.3f} {wheel} {t_np:9.3f} {ratio} {t_ours / t_np:10.2f}")


if __name__ == "__main__":
    main()
