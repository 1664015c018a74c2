"""MobileNetV2 and ResNet18 (1x3x224x224, float32): mnn.express vs torch vs onnxruntime.

All three run the same weights in this process (the torch model is built from a fixed
seed, exported to ONNX for onnxruntime and rebuilt from mnn.express ops with conv+BN
folded, as converters do). Prints median milliseconds over repeated runs at 1 and 2
threads, the ratios ours/theirs (< 1: we are faster) and the largest output difference.
The peers take turns for ``--rounds`` rounds: the times shown are each peer's best
round, and the last column is the median over rounds of ours / onnxruntime within a
round (the two timed a few tenths of a second apart, so a slow spell of the shared
machine hits both alike). With ``--memory`` each runtime also runs alone in a
subprocess and the peak resident memory added by building and running the model is
reported.

Usage: ``python benchmarks/bench_models.py [--repeat 20] [--rounds 3] [--threads 1 2]
[--models ...] [--memory]``
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# mnn first: its import sets the process heap's thresholds (mnn/express/heap.py) before
# the other peers allocate, as in a user's script that imports mnn.
import mnn.expr as F  # noqa: I001

import models
from timing import median_ms
import onnxruntime as ort
import torch

MODELS = {"MobileNetV2": models.MobileNetV2, "ResNet18": models.ResNet18}
SHAPE = (1, 3, 224, 224)


def build(name, tmp):
    torch.manual_seed(0)
    model = models.randomize_bn(MODELS[name]())
    path = os.path.join(tmp, f"{name}.onnx")
    models.export_onnx(model, path, SHAPE)
    x = F.placeholder(list(SHAPE))
    y = models.build_mnn(model, x)
    return model, path, x, y


def _ort_session(path, threads):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def bench(name, threads, repeat, tmp, rounds=3):
    model, path, xv, yv = build(name, tmp)
    data = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    rows = []
    for n in threads:
        F.set_thread_number(n)
        torch.set_num_threads(n)
        sess = _ort_session(path, n)
        tx = torch.tensor(data)

        def ours():
            xv.write(data)
            return yv.read()

        def theirs_torch():
            with torch.no_grad():
                return model(tx)

        def theirs_ort():
            return sess.run(None, {"x": data})[0]

        ref = theirs_torch().numpy()
        diff = max(float(np.abs(np.asarray(ours()) - ref).max()),
                   float(np.abs(theirs_ort() - ref).max()))
        # Interleave the peers so machine noise hits them alike.
        t_ours, t_torch, t_ort = [], [], []
        for _ in range(rounds):
            t_ours.append(median_ms(ours, repeat))
            t_torch.append(median_ms(theirs_torch, repeat))
            t_ort.append(median_ms(theirs_ort, repeat))
        best = [(min(t[0] for t in ts), min(t[1] for t in ts))
                for ts in (t_ours, t_torch, t_ort)]
        by_round = float(np.median([o[0] / r[0] for o, r in zip(t_ours, t_ort)]))
        rows.append((name, n, best[0], best[1], best[2], by_round, diff))
    return rows


def peak_memory(name, runtime):
    """Peak RSS growth (MB) of a process, after its imports, while it builds the torch
    model and runs ``name`` three times in ``runtime`` ("none": torch model only, the
    baseline). Linux only: the peak is reset through /proc/self/clear_refs."""
    code = f"""
import os, sys, tempfile
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
import mnn.expr as F
import numpy as np, torch, onnxruntime as ort, models
torch.set_num_threads(1); F.set_thread_number(1)
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024.0
open("/proc/self/clear_refs", "w").write("5")  # reset the peak (VmHWM) to the current RSS
base = status("VmRSS")
data = np.random.default_rng(0).standard_normal({SHAPE}).astype(np.float32)
torch.manual_seed(0)
model = models.randomize_bn(models.{name}())
if {runtime!r} == "none":
    pass
elif {runtime!r} == "ours":
    x = F.placeholder(list({SHAPE})); y = models.build_mnn(model, x)
    del model
    for _ in range(3):
        x.write(data); y.read()
elif {runtime!r} == "torch":
    with torch.no_grad():
        for _ in range(3):
            model(torch.tensor(data))
else:
    tmp = tempfile.mkdtemp(); path = os.path.join(tmp, "m.onnx")
    models.export_onnx(model, path, {SHAPE}); del model
    opts = ort.SessionOptions(); opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    for _ in range(3):
        sess.run(None, {{"x": data}})
print(status("VmHWM") - base)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    # names as printed, in any case (--models mobilenetv2)
    by_lower = {name.lower(): name for name in MODELS}
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        type=lambda s: by_lower.get(s.lower(), s), choices=list(MODELS))
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1:
        parser.error("--rounds and --repeat must be at least 1")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}  "
          f"load average {os.getloadavg()[0]:.1f}")
    print("wall / cpu: median milliseconds of wall and process CPU time")
    print(f"{'model':12s} {'thr':>3s} {'mnn wall/cpu':>14s} {'torch wall/cpu':>15s} "
          f"{'ort wall/cpu':>14s} {'mnn/torch':>10s} {'mnn/ort':>10s} {'max diff':>9s} "
          f"{'mnn/ort by round':>16s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            for row in bench(name, args.threads, args.repeat, tmp, args.rounds):
                name_, n, (aw, ac), (bw, bc), (cw, cc), by_round, d = row
                print(f"{name_:12s} {n:3d} {aw:6.1f}/{ac:6.1f} {bw:7.1f}/{bc:6.1f} "
                      f"{cw:6.1f}/{cc:6.1f} {aw / bw:4.2f}/{ac / bc:4.2f} "
                      f"{aw / cw:4.2f}/{ac / cc:4.2f} {d:9.1e} {by_round:16.2f}",
                      flush=True)
    if args.memory:
        print("peak resident memory added (MB, one thread):")
        for name in args.models:
            mem = {rt: peak_memory(name, rt) for rt in ("none", "ours", "torch", "ort")}
            base = mem["none"]
            print(f"  {name:12s} mnn {mem['ours'] - base:7.1f}  torch "
                  f"{mem['torch'] - base:7.1f}  onnxruntime {mem['ort'] - base:7.1f}  "
                  f"(torch model alone {base:.0f})")


if __name__ == "__main__":
    main()
