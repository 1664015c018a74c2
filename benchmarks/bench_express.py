"""mnn.express against numpy and torch in one process: large-array ops and per-op overhead.

Run: ``python benchmarks/bench_express.py [--repeat N]``. Prints, for 1 and 2 threads, the
median time of each case for mnn, numpy and torch, and the ratios ours/theirs (below 1:
mnn is faster). Cases: ``a*b+c``, ``exp``, ``sum`` on 1e6 float32 elements and
``matmul`` of two 512x512 float32 matrices; then the overhead of building and reading one
``add`` of two 4-element Vars, and of writing a placeholder and reading the add again.
Times are wall-clock medians; on a loaded machine compare ratios from the same run.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mnn.expr as F


def _median_time(fn, repeat, inner=1):
    return _median_times([fn], repeat, inner)[0]


_CLOCK = [time.perf_counter]
_MODE = ["interleaved"]


def _median_times(fns, repeat, inner=1):
    """Median wall time of each of ``fns``, timed in turn within each repeat so that a
    load change on the (shared, noisy) machine hits all of them alike."""
    for fn in fns:
        fn()  # warm up (allocations, caches, thread pools)
    times = [[] for _ in fns]
    if _MODE[0] == "blocks":
        # Each peer repeated back to back: its own inputs stay hot in cache (timeit-like).
        for k, fn in enumerate(fns):
            for _ in range(repeat):
                start = _CLOCK[0]()
                for _ in range(inner):
                    fn()
                times[k].append((_CLOCK[0]() - start) / inner)
        return [statistics.median(t) for t in times]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            # Let the previous peer's spinning OpenMP/BLAS workers go to sleep first, or
            # they steal a core from whoever is timed next.
            time.sleep(0.0005)
            clock = _CLOCK[0]
            start = clock()
            for _ in range(inner):
                fn()
            times[k].append((clock() - start) / inner)
    return [statistics.median(t) for t in times]


def _cases(n=1_000_000, m=512, seed=0):
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    x, y = (rng.standard_normal((m, m)).astype(np.float32) for _ in range(2))
    ca, cb, cc, cx, cy = (F.const(v) for v in (a, b, c, x, y))

    def ours(build):
        # Build the graph and read it: a fresh Expr each call, so it really computes.
        # np.asarray gives the engine's (read-only) result without read()'s copy.
        return lambda: np.asarray(build())

    import torch

    # Each peer reads its own copy of the inputs (F.const copied ours), so that no peer
    # finds its inputs hot in cache because another peer just read the same memory.
    ta, tb, tc, tx, ty = (torch.from_numpy(v.copy()) for v in (a, b, c, x, y))
    return {
        "a*b+c": (ours(lambda: ca * cb + cc), lambda: a * b + c, lambda: ta * tb + tc),
        "exp": (ours(lambda: F.exp(ca)), lambda: np.exp(a), lambda: torch.exp(ta)),
        "sum": (ours(lambda: F.reduce_sum(ca)), lambda: a.sum(), lambda: ta.sum()),
        "matmul 512": (ours(lambda: F.matmul(cx, cy)), lambda: x @ y, lambda: tx @ ty),
    }


def _overhead(repeat):
    a = np.arange(4, dtype=np.float32)

    x, y = F.const(a), F.const(a)

    def build_and_read():
        return np.asarray(x + y)

    p, q = F.placeholder([4]), F.placeholder([4])
    q.write(a)
    s = p + q

    def write_and_read():
        p.write(a)
        return s.read()

    return {"build+read add (4 elems)": _median_time(build_and_read, repeat, 200),
            "write+read add (4 elems)": _median_time(write_and_read, repeat, 200),
            "numpy add (4 elems)": _median_time(lambda: a + a, repeat, 200)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: this process's CPU time (steadier on a loaded machine; "
                             "at 2 threads it adds both threads' time)")
    parser.add_argument("--mode", choices=["interleaved", "blocks"], default="interleaved",
                        help="interleaved: peers take turns (each finds its inputs evicted by "
                             "the others); blocks: each peer's runs back to back (hot cache)")
    args = parser.parse_args()
    _MODE[0] = args.mode
    if args.clock == "cpu":
        _CLOCK[0] = time.process_time
    import torch

    print(f"{'case':<14}{'thr':>4}{'mnn ms':>10}{'numpy ms':>10}{'torch ms':>10}"
          f"{'mnn/np':>9}{'mnn/torch':>11}")
    for threads in (1, 2):
        F.set_thread_number(threads)
        torch.set_num_threads(threads)
        for name, (ours, np_fn, torch_fn) in _cases().items():
            t_ours, t_np, t_torch = _median_times([ours, np_fn, torch_fn], args.repeat)
            print(f"{name:<14}{threads:>4}{t_ours * 1e3:>10.3f}{t_np * 1e3:>10.3f}"
                  f"{t_torch * 1e3:>10.3f}{t_ours / t_np:>9.2f}{t_ours / t_torch:>11.2f}")
    print()
    for name, t in _overhead(args.repeat).items():
        print(f"{name:<28}{t * 1e6:>8.2f} us")


if __name__ == "__main__":
    main()
