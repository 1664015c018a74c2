"""Timing, and onnxruntime sessions, shared by the benchmark scripts."""
import time

import numpy as np

# Seconds to wait before timing a peer: onnxruntime 1.32's worker threads spin for about
# 35 ms after a run (libgomp's, torch's and ours spin too), and on two cores a spinning
# worker holds the core the next peer's second thread needs.
PAUSE = 0.05
# Untimed calls after the pause: the first calls wake the peer's own sleeping workers
# (measured at 0.4-8 ms on this machine).
WARMUP = 2


def median_ms(fn, repeat, pause=PAUSE, warmup=WARMUP):
    """(wall, cpu) medians in ms of ``repeat`` calls of ``fn``, after a pause and
    ``warmup`` untimed calls (caches, packed weights, waking the worker threads).

    CPU time is process time (all threads): on a loaded machine wall time mostly
    measures waiting for a core, so at one thread the CPU time is the fairer comparison
    (at two, spinning worker threads inflate it).
    """
    time.sleep(pause)
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall) * 1e3), float(np.median(cpu) * 1e3)


def ort_session(model, threads):
    """An onnxruntime CPU session of an ONNX ``model`` (a ModelProto) at ``threads``
    intra-op threads and one inter-op thread. (onnxruntime is imported here, not with
    this module: scripts import mnn first, before the peers load their libraries.)"""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
