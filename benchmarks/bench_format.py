"""Reading and writing .mnn files: mnn against the real MNN wheel, in one process.

The model is a ResNet18-sized stack of 3x3 convolutions (about 11M weights) built with
mnn.express and written once by our writer. Timings are medians of repeated runs; the
ratios are ours / theirs (below 1: we are faster).

- load: ``mnn.format.reader.load_graph`` vs the wheel's ``nn.load_module_from_file`` and
  ``expr.load_as_dict`` (both parse the file and build their graph);
- save: ``mnn.express.save`` vs the wheel's ``expr.save`` of the same graph (loaded with
  ``load_as_dict``);
- 8-bit save: ``save(..., weight_quant_bits=8)`` (the wheel has no Python API for this).

Run: ``python benchmarks/bench_format.py [--repeat N]``.
"""

import os
import statistics
import sys
import tempfile
import time

import numpy as np

# Run from a checkout without installing: the repository root holds the mnn package.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import mnn.expr as F

from mnn.express import io
from mnn.format.reader import load_graph

# (channels, number of 3x3 convolutions) per stage, like ResNet18's.
_STAGES = [(64, 4), (128, 4), (256, 4), (512, 4)]


def _model(path):
    rng = np.random.default_rng(0)
    x = F.placeholder([1, 3, 64, 64])
    x.name = "x"
    y, cin = x, 3
    for cout, n in _STAGES:
        for i in range(n):
            w = (rng.standard_normal((cout, cin, 3, 3)) * 0.05).astype(np.float32)
            y = F.relu(
                F.conv2d(
                    y,
                    F.const(w),
                    F.const(np.zeros(cout, np.float32)),
                    (2, 2) if i == 0 else (1, 1),
                    (1, 1),
                )
            )
            cin = cout
    y = F.reshape(F.reduce_mean(y, [2, 3], True), [1, -1])
    io.save({"y": y}, path)
    return y


def _median(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(repeats=7):
    import MNN

    folder = tempfile.mkdtemp(prefix="bench_format_")
    path = os.path.join(folder, "resnet_like.mnn")
    y = _model(path)
    size_mb = os.path.getsize(path) / 1e6
    print(f"model: {size_mb:.1f} MB, {repeats} repeats, medians")

    ours_load = _median(lambda: load_graph(path), repeats)
    module_load = _median(lambda: MNN.nn.load_module_from_file(path, ["x"], ["y"]), repeats)
    dict_load = _median(lambda: MNN.expr.load_as_dict(path), repeats)
    print(
        f"load   ours {ours_load * 1e3:8.1f} ms | wheel load_module_from_file "
        f"{module_load * 1e3:8.1f} ms (ratio {ours_load / module_load:.2f}) | wheel "
        f"load_as_dict {dict_load * 1e3:8.1f} ms (ratio {ours_load / dict_load:.2f})"
    )

    out = os.path.join(folder, "out.mnn")
    theirs_vars = MNN.expr.load_as_dict(path)
    ours_save = _median(lambda: io.save({"y": y}, out), repeats)
    wheel_save = _median(lambda: MNN.expr.save([theirs_vars["y"]], out), repeats)
    print(
        f"save   ours {ours_save * 1e3:8.1f} ms | wheel expr.save {wheel_save * 1e3:8.1f} ms "
        f"(ratio {ours_save / wheel_save:.2f})"
    )

    q8 = _median(lambda: io.save({"y": y}, out, weight_quant_bits=8), repeats)
    print(f"save 8-bit ours {q8 * 1e3:8.1f} ms, file {os.path.getsize(out) / 1e6:.1f} MB")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case (median)")
    main(parser.parse_args().repeat)
