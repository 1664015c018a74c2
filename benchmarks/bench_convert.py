"""Conversion time and file size: our ``mnnconvert`` against the real MNN wheel's converter.

Both run in this process on the same ONNX files (hand-written torch models, random
weights, exported once). The wheel's converter is driven through its compiled module
(never its console script, which posts telemetry), each conversion in its own temporary
folder (it writes a scratch file into the working directory). Prints medians of repeated
runs and ours/theirs ratios, then weight-quantised MobileNetV2 sizes and relative L2
errors (ours through our reader, the wheel's through the wheel; oracle: onnxruntime).

Run: ``python benchmarks/bench_convert.py [--repeat 3] [--models mobilenet_v2,resnet18]``
"""
import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "converter"))
sys.path.insert(0, os.path.join(HERE, ".."))

from models import export

# 224x224 for the image models, as the wheel's numbers in the issue use.
SHAPES = {"mobilenet_v2": (1, 3, 224, 224), "resnet18": (1, 3, 224, 224),
          "squeezenet": (1, 3, 224, 224), "shufflenet_v2": (1, 3, 224, 224)}


def _wheel_convert(src, dst, extra=()):
    """The real wheel's converter, in its own folder, output silenced."""
    sys.modules["MNN.tools.utils.log"] = None
    import _tools

    folder = tempfile.mkdtemp(prefix="wheelconv_")
    cwd = os.getcwd()
    os.chdir(folder)
    # The converter prints from C: silence file descriptor 1 itself.
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", src,
                           "--MNNModel", dst, "--bizCode", "bench", *extra])
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
        os.chdir(cwd)
    if not os.path.isfile(dst):
        raise RuntimeError(f"the wheel's converter wrote no {dst}")


def _our_convert(src, dst, extra=()):
    from converter.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "bench", *extra])
    if status != 0:
        raise RuntimeError(f"mnnconvert failed on {src}")


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _rel(got, want):
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def _ours_output(path, feeds):
    from mnn.express.io import load_as_dict

    var_map = load_as_dict(path)
    for k, v in feeds.items():
        var_map[k].write(v)
    return var_map["output"].read()


def _wheel_output(path, feeds):
    with contextlib.redirect_stdout(io.StringIO()):
        import MNN
    names = list(feeds)
    module = MNN.nn.load_module_from_file(path, names, ["output"])
    args = [MNN.expr.const(v, list(v.shape), MNN.expr.NCHW) for v in feeds.values()]
    return np.array(module.forward(args)[0].read(), copy=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default="mobilenet_v2,resnet18,squeezenet,"
                        "shufflenet_v2,transformer,lstm")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench_convert_")
    print(f"{'model':14s} {'ours s':>8s} {'wheel s':>8s} {'ratio':>6s} "
          f"{'ours MB':>8s} {'wheel MB':>9s} {'ratio':>6s}")
    for name in args.models.split(","):
        src = export(name, folder, shape=SHAPES.get(name))
        ours, theirs = os.path.join(folder, f"{name}_ours.mnn"), \
            os.path.join(folder, f"{name}_wheel.mnn")
        try:
            t_ours = _median_time(lambda: _our_convert(src, ours), args.repeat)  # noqa: B023
            s_ours = os.path.getsize(ours) / 1e6
        except RuntimeError as exc:
            print(f"{name:14s} ours failed: {exc}")
            continue
        t_wheel = _median_time(lambda: _wheel_convert(src, theirs), args.repeat)  # noqa: B023
        s_wheel = os.path.getsize(theirs) / 1e6
        print(f"{name:14s} {t_ours:8.2f} {t_wheel:8.2f} {t_ours / t_wheel:6.2f} "
              f"{s_ours:8.2f} {s_wheel:9.2f} {s_ours / s_wheel:6.2f}")

    import onnxruntime as ort

    name = "mobilenet_v2"
    src = os.path.join(folder, f"{name}.onnx")
    if not os.path.isfile(src):
        src = export(name, folder, shape=SHAPES[name])
    x = np.random.default_rng(0).normal(size=SHAPES[name]).astype(np.float32)
    feeds = {"input": x}
    want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    print("\nMobileNetV2 weight quantisation (relative L2 error against onnxruntime)")
    print(f"{'bits':>5s} {'ours MB':>8s} {'ours err':>9s} {'wheel MB':>9s} {'wheel err':>10s}")
    for bits in (0, 8, 4):
        extra = ["--weightQuantBits", str(bits)] if bits else []
        ours = os.path.join(folder, f"q{bits}_ours.mnn")
        theirs = os.path.join(folder, f"q{bits}_wheel.mnn")
        _our_convert(src, ours, extra)
        _wheel_convert(src, theirs, extra)
        e_ours = _rel(_ours_output(ours, feeds), want)
        e_wheel = _rel(_wheel_output(theirs, feeds), want)
        print(f"{bits or 32:5d} {os.path.getsize(ours) / 1e6:8.2f} {e_ours:9.4f} "
              f"{os.path.getsize(theirs) / 1e6:9.2f} {e_wheel:10.4f}")


if __name__ == "__main__":
    main()
