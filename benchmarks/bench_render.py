"""MNN's render op ``texture`` (2-D, float32) and its texture gradient: mnn.express vs
torch's grid_sample (the same sampling with uv as grid 2 * uv - 1, align_corners=False),
1 and 2 threads. The real MNN wheel cannot run the op on CPU (no peer there).

Each case runs as a graph built once on a placeholder (write uv, read the output);
torch runs under no_grad (forward) or autograd (gradient). Interleaved runs, CPU-time
medians; prints milliseconds and ratios ours/torch (< 1: we are faster).

Usage: ``python benchmarks/bench_render.py [--repeat 15] [--threads 1 2]``
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# mnn first: it sets OpenMP's wait policy before libgomp, which torch shares, is loaded.
import mnn.expr as F  # noqa: I001

import numpy as np
import torch
import torch.nn.functional as TF

_MODE = {"linear": "bilinear", "nearest": "nearest"}
_PAD = {"zero": "zeros", "clamp": "border"}


def _case(size, out_size, filter_mode, boundary_mode, grad):
    rng = np.random.default_rng(0)
    tex = rng.standard_normal((1, size, size, 3)).astype(np.float32)
    uv = rng.uniform(0, 1, (1, out_size, out_size, 2)).astype(np.float32)
    t = F.placeholder(list(tex.shape))
    t.write(tex)
    u = F.placeholder(list(uv.shape))
    out = F.texture(t, u, filter_mode, boundary_mode)
    if grad:
        out = F.grad(F.reduce_sum(out), [t])[0]

    def ours():
        u.write(uv)
        out.read()

    tt = torch.tensor(tex).permute(0, 3, 1, 2).requires_grad_(grad)
    grid = torch.tensor(uv) * 2 - 1

    def theirs():
        if grad:
            tt.grad = None
            TF.grid_sample(tt, grid, _MODE[filter_mode], _PAD[boundary_mode],
                           align_corners=False).sum().backward()
        else:
            with torch.no_grad():
                TF.grid_sample(tt, grid, _MODE[filter_mode], _PAD[boundary_mode],
                               align_corners=False)

    return ours, theirs


def _median_times(fns, repeat):
    times = [[] for _ in fns]
    for f in fns:
        f()  # warm up
    for _ in range(repeat):
        for k, f in enumerate(fns):
            start = time.process_time()
            f()
            times[k].append(time.process_time() - start)
    return [float(np.median(t)) * 1000 for t in times]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    print(f"{'case':44s} {'thr':>3s} {'ours ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for threads in args.threads:
        F.set_thread_number(threads)
        torch.set_num_threads(threads)
        for size, out_size, fm, bm, grad in ((512, 512, "linear", "clamp", False),
                                            (512, 512, "nearest", "zero", False),
                                            (256, 512, "linear", "zero", True)):
            ours, theirs = _case(size, out_size, fm, bm, grad)
            a, b = _median_times([ours, theirs], args.repeat)
            name = f"texture {fm}/{bm} {size}^2 -> {out_size}^2" + (" grad" if grad else "")
            print(f"{name:44s} {threads:3d} {a:9.2f} {b:9.2f} {a / b:6.2f}")


if __name__ == "__main__":
    main()
