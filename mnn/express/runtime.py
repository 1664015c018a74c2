"""Process-wide engine settings: thread count and evaluation mode."""
import os

from .heap import keep_freed_memory

# OpenMP's wait policy is left to libgomp's default (spin briefly, then sleep). Forcing
# PASSIVE made every parallel region pay a futex wake-up: on a quiet 2-core machine a
# LeNet training step took 58 ms at 2 threads against 18 ms with the default (and 21 ms
# at 1 thread). Users on an oversubscribed machine can set OMP_WAIT_POLICY=PASSIVE.

__all__ = ["set_thread_number", "get_thread_number", "lazy_eval", "is_lazy", "HEAP_KEPT"]

_state = {"threads": max(1, min(os.cpu_count() or 1, 4)), "lazy": True}

# Freed arrays stay in the heap for the next run instead of being faulted in again
# (mnn/express/heap.py says why and how to opt out). True when the settings were applied.
HEAP_KEPT = keep_freed_memory()


def set_thread_number(n):
    """Set how many threads the compiled kernels (and BLAS) use.

    Parameters
    ----------
    n : int
        Thread count, at least 1.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"mnn: set_thread_number needs a count >= 1, got {n}")
    _state["threads"] = n
    _set_kernel_threads(n)
    _set_blas_threads(n)


_parallel = []


def _set_kernel_threads(n):
    # Loaded modules switch thread counts around every run: import once.
    if not _parallel:
        from .._cython import parallel  # a missing build is an ImportError, never ignored

        _parallel.append(parallel)
    _parallel[0].set_openmp_threads(n)


def use_kernel_threads(n):
    """Switch only the compiled kernels' thread count (OpenMP), leaving BLAS alone.

    For a scoped switch around one run of a loaded module: resizing BLAS's thread
    pools costs more than a small model's run, and our kernels keep the BLAS they call
    (scipy's) at one thread anyway. Callers restore the previous count afterwards.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"mnn: thread count must be >= 1, got {n}")
    _state["threads"] = n
    _set_kernel_threads(n)


def get_thread_number():
    """The thread count kernels use."""
    return _state["threads"]


_blas = []
# Bumped whenever BLAS's thread count is set here, so that nn_common.blas_single_thread
# knows when it must check scipy's OpenBLAS again (reading the count is a foreign call per
# convolution otherwise).
blas_epoch = [0]


def _set_blas_threads(n):
    # BLAS (scipy's OpenBLAS) has its own thread pool; keep it in step with ours. Scanning
    # the loaded libraries costs ~1 ms, so it is done once; setting each library's count
    # directly is then ~1 us (loaded modules switch thread counts on every run).
    if not _blas:
        from threadpoolctl import ThreadpoolController

        _blas.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    blas_epoch[0] += 1
    for lib in _blas[0]:
        # Reading the count is a plain call; setting it goes through threadpoolctl's
        # thread-ownership checks.
        if lib.get_num_threads() != n:
            lib.set_num_threads(n)


def lazy_eval(flag=True):
    """Accepted for pymnn compatibility.

    mnn always builds graphs lazily and computes values when they are read, so training
    and graph reuse work in every mode; the flag is recorded and reported by
    :func:`is_lazy` but changes no result.
    """
    _state["lazy"] = bool(flag)


def is_lazy():
    """The flag last given to :func:`lazy_eval` (True by default)."""
    return _state["lazy"]
