"""Timing shared by the benchmark scripts."""
import time

import numpy as np


def median_ms(fn, repeat):
    """(wall, cpu) medians in ms of ``repeat`` calls of ``fn`` after one warm-up call.

    CPU time is process time (all threads): on a loaded machine wall time mostly
    measures waiting for a core, so at one thread the CPU time is the fairer comparison
    (at two, spinning worker threads inflate it).
    """
    fn()  # warm-up (caches, packed weights)
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall) * 1e3), float(np.median(cpu) * 1e3)
