"""Two builds of our kernels on the same models, in one process, called in turns.

Kernel changes on this project's shared 2-core machine are usually smaller than the
drift between two runs a minute apart (the same model's time moves by 1.5x within an
hour). Timing the builds in separate processes then measures the machine. Here the
compiled kernel modules of another checkout (``BASE``, its extensions built in place,
e.g. ``git worktree add /tmp/base HEAD`` and ``python setup.py build_ext --inplace``
there) are loaded beside this tree's, and one graph per build runs MobileNetV2 /
ResNet18 (1x3x224x224, the same random weights) alternately, the order switching every
round. Prints each build's median milliseconds and the median and quartiles of the
per-round ratio this tree / BASE (< 1: this tree is faster), after checking that the two
builds' outputs agree.

Only the Cython kernel modules are swapped (``--modules``); the Python layer is this
tree's for both, so this compares kernel builds, not whole checkouts. Two identical
builds read 0.98-1.01 here (20-40 rounds): differences within that are not findings.

Usage: ``python benchmarks/ab_builds.py BASE [--models ResNet18] [--threads 1]
[--repeat 40] [--modules sgemm winograd ...]``
"""
import argparse
import glob
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mnn.expr as F  # noqa: I001

import models
import torch
from bench_models import MODELS, SHAPE
# The modules with the convolution kernels the two models run.
KERNELS = ["sgemm", "fused_block", "conv_pool", "winograd", "depthwise"]


def load_module(root, name):
    """The extension module ``mnn._cython.<name>`` built in ``root``, as a module object
    of its own (not entered in ``sys.modules``)."""
    found = glob.glob(os.path.join(root, "mnn", "_cython", f"{name}.cpython*.so"))
    if not found:
        raise SystemExit(f"ab_builds: no built {name} extension under {root}/mnn/_cython "
                         f"(run python setup.py build_ext --inplace there)")
    full = f"mnn._cython.{name}"
    loader = importlib.machinery.ExtensionFileLoader(full, found[0])
    spec = importlib.util.spec_from_file_location(full, found[0], loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def use(table, others):
    """Point every reference the Python layer holds to a module of ``others`` (any
    build) at the same-named module of ``table``."""
    swap = {id(m): table[name] for name, m in others}
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("mnn.") or name.startswith("mnn._cython"):
            continue
        for attr, value in list(vars(mod).items()):
            target = swap.get(id(value))
            if target is not None and value is not target:
                setattr(mod, attr, target)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="checkout whose built kernels are compared")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--modules", nargs="+", default=KERNELS)
    args = parser.parse_args()
    ours = {m: importlib.import_module(f"mnn._cython.{m}") for m in args.modules}
    base = {m: load_module(args.base, m) for m in args.modules}
    every = list(ours.items()) + list(base.items())
    data = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    for name in args.models:
        torch.manual_seed(0)
        model = models.randomize_bn(MODELS[name]())
        for threads in args.threads:
            F.set_thread_number(threads)
            graphs = {}
            for tag, table in (("base", base), ("this", ours)):
                # one graph per build: its plans and packed weights come from that build
                use(table, every)
                x = F.placeholder(list(SHAPE))
                graphs[tag] = (table, x, models.build_mnn(model, x))

            def run(tag):
                # the swap before the clock starts: it walks every module of the package
                table, x, y = graphs[tag]
                use(table, every)
                t0 = time.perf_counter()
                x.write(data)
                out = y.read()
                return out, time.perf_counter() - t0

            diff = float(np.abs(run("base")[0] - run("this")[0]).max())
            for _ in range(3):
                run("base")
                run("this")
            times = {"base": [], "this": []}
            for i in range(args.repeat):
                for tag in (("base", "this") if i % 2 else ("this", "base")):
                    times[tag].append(run(tag)[1])
                print(f"\r{name} {threads} thread(s): round {i + 1}/{args.repeat}", end="",
                      file=sys.stderr, flush=True)
            print(file=sys.stderr)
            a, b = np.array(times["base"]) * 1e3, np.array(times["this"]) * 1e3
            r = b / a
            print(f"{name} {threads} thread(s): base {np.median(a):.2f} ms, this "
                  f"{np.median(b):.2f} ms; this / base median {np.median(r):.3f} "
                  f"[quartiles {np.percentile(r, 25):.3f}, {np.percentile(r, 75):.3f}]; "
                  f"max output difference {diff:.1e}")
            use(ours, every)


if __name__ == "__main__":
    main()
