"""Load time and latency of the same .mnn files: mnn vs the real MNN wheel, and onnxruntime.

Models are made here: a small CNN (onnx.helper), and MobileNetV2 / ResNet18 at
1x3x224x224 written in torch (benchmarks/models.py), exported to ONNX and converted by the
wheel's converter (its compiled module, in a temp folder of its own). Each .mnn file is
then run by

* mnn: ``nn.load_module_from_file`` (compiled plan) and the ``Interpreter``/Session API,
* the wheel: its Module API (threads through a runtime manager) and its Session API,
* onnxruntime on the source ONNX file,

at 1 and 2 threads, in one process. Latency is the median of repeated runs (inputs
prepared outside the timing, outputs read inside); the ratio column is ours / theirs
(below 1: mnn is faster). The machine is shared and noisy: compare ratios of one run.

Usage: ``python benchmarks/bench_runtime.py [--quick] [--runs N]``
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
# The repository (for an uninstalled checkout), the benchmark models and the test models.
for _path in (os.path.join(_HERE, ".."), _HERE, os.path.join(_HERE, "..", "tests", "runtime")):
    sys.path.insert(0, os.path.abspath(_path))

from timing import PAUSE, WARMUP  # noqa: E402 - found through the path just set


def _median_ms(fn, runs, warmup=WARMUP):
    time.sleep(PAUSE)  # the previous peer's spinning workers let go of the cores
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def _timed_ms(fn):
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1e3, out


def _make_models(folder, quick):
    from runtime_models import conv_model, convert_with_wheel

    models = {"small_cnn": convert_with_wheel(conv_model(), os.path.join(folder, "cnn"))}
    if quick:
        return models
    import onnx
    import torch
    from models import MobileNetV2, ResNet18, export_onnx

    torch.manual_seed(0)
    for name, cls in (("mobilenet_v2", MobileNetV2), ("resnet18", ResNet18)):
        net = cls().eval()
        sub = os.path.join(folder, name)
        os.makedirs(sub, exist_ok=True)
        src = os.path.join(sub, "src.onnx")
        export_onnx(net, src)
        models[name] = convert_with_wheel(onnx.load(src), sub)
    return models


def _input_arrays(onnx_path):
    import onnx

    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def bench_model(name, onnx_path, mnn_path, threads, runs):
    import MNN
    import onnxruntime as ort

    import mnn

    feeds = _input_arrays(onnx_path)
    arrays = list(feeds.values())
    rows = {}

    # mnn, Module API
    load, ours = _timed_ms(lambda: mnn.nn.load_module_from_file(mnn_path, [], [],
                                                                thread_num=threads))
    ours_ms = _median_ms(lambda: [np.asarray(v) for v in ours.onForward(arrays)], runs)
    rows["mnn Module"] = (load, ours_ms)

    # mnn, Session API
    def our_session():
        it = mnn.Interpreter(mnn_path)
        s = it.createSession({"numThread": threads})
        return it, s

    load_s, (it, s) = _timed_ms(our_session)
    ins = it.getSessionInputAll(s)

    def run_ours_session():
        for k, a in feeds.items():
            ins[k].copyFrom(a)
        it.runSession(s)
        return [t.getNumpyData() for t in it.getSessionOutputAll(s).values()]

    rows["mnn Session"] = (load_s, _median_ms(run_ours_session, runs))

    # the wheel, Module API (its thread_num argument is ignored: use a runtime manager)
    def wheel_module():
        rt = MNN.nn.create_runtime_manager(({"backend": 0, "numThread": threads},))
        return MNN.nn.load_module_from_file(mnn_path, [], [], runtime_manager=rt)

    load_w, wm = _timed_ms(wheel_module)
    info = wm.get_info()
    wvars = []
    for a, v in zip(arrays, info["inputs"]):
        x = MNN.expr.placeholder(list(a.shape), v.data_format, v.dtype)
        x.write(a.ravel().tolist())
        wvars.append(x)
    rows["wheel Module"] = (load_w, _median_ms(
        lambda: [np.array(o.read()) for o in wm.onForward(wvars)], runs))

    # the wheel, Session API
    def wheel_session():
        wit = MNN.Interpreter(mnn_path)
        return wit, wit.createSession({"numThread": threads})

    load_ws, (wit, ws) = _timed_ms(wheel_session)
    hosts = {k: MNN.Tensor(a.shape, MNN.Halide_Type_Float, a.ravel().tolist(),
                           MNN.Tensor_DimensionType_Caffe) for k, a in feeds.items()}
    wins = {k: wit.getSessionInput(ws, k) for k in feeds}

    def run_wheel_session():
        for k in feeds:
            wins[k].copyFrom(hosts[k])
        wit.runSession(ws)
        return [np.array(t.getNumpyData()) for t in wit.getSessionOutputAll(ws).values()]

    rows["wheel Session"] = (load_ws, _median_ms(run_wheel_session, runs))

    # onnxruntime on the source ONNX
    def ort_session():
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])

    load_o, sess = _timed_ms(ort_session)
    rows["onnxruntime"] = (load_o, _median_ms(lambda: sess.run(None, feeds), runs))

    # Same outputs (a benchmark of wrong answers is worthless).
    want = sess.run(None, feeds)
    got = [np.asarray(v) for v in ours.onForward(arrays)]
    err = max(float(np.max(np.abs(g.reshape(w.shape) - w)) / (np.max(np.abs(w)) + 1e-12))
              for g, w in zip(got, want))
    return rows, err


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the small CNN")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per case")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        models = _make_models(folder, args.quick)
        for name, (onnx_path, mnn_path) in models.items():
            for threads in (1, 2):
                try:
                    rows, err = bench_model(name, onnx_path, mnn_path, threads, args.runs)
                except Exception as exc:  # noqa: BLE001 - report, go on with the others
                    print(f"\n{name}, {threads} thread(s): failed: {type(exc).__name__}: "
                          f"{exc}")
                    continue
                print(f"\n{name}, {threads} thread(s)  (max relative error vs onnxruntime "
                      f"{err:.1e})")
                print(f"  {'runtime':<15}{'load ms':>10}{'latency ms':>12}"
                      f"{'ours/theirs (Module)':>22}{'(Session)':>11}")
                mod, ses = rows["mnn Module"][1], rows["mnn Session"][1]
                for key, (load, lat) in rows.items():
                    print(f"  {key:<15}{load:>10.2f}{lat:>12.3f}{mod / lat:>22.2f}"
                          f"{ses / lat:>11.2f}")


if __name__ == "__main__":
    main()
