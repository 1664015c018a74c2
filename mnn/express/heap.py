"""Keep freed array memory in the process heap between runs (glibc only).

A training step allocates the same batch-sized arrays (activations, gradients, column
matrices) every step. With glibc's default, dynamic thresholds, freeing them gives the
memory back to the kernel (``munmap`` or heap trimming) and the next step faults it in
again, page by page: a LeNet step at batch 64 took about 2,200 page faults and 17 ms
alone in its process, against 12.5 ms with the memory kept. MNN keeps a memory pool
for the same reason.

At import, :func:`keep_freed_memory` sets glibc's mmap threshold to 32 MB (arrays below
it come from the heap, whose freed blocks are reused) and its trim threshold to 128 MB
(up to that much free heap stays mapped). Peak memory is unchanged; an idle process may
keep up to 128 MB more resident. It is not applied when the user tunes malloc already
(``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` set) or sets
``MNN_KEEP_MALLOC_DEFAULTS=1``, and on C libraries other than glibc.
"""
import ctypes
import ctypes.util
import os
import sys

__all__ = ["keep_freed_memory"]

# glibc's mallopt parameter numbers (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 << 20  # glibc's upper limit for this setting on 64-bit systems
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory():
    """Apply the heap settings above; returns True when they were applied.

    Returns False (and changes nothing) off glibc, when the user set glibc's own
    ``MALLOC_*`` variables, or with ``MNN_KEEP_MALLOC_DEFAULTS=1``.
    """
    if not sys.platform.startswith("linux"):
        return False
    env = os.environ
    if env.get("MNN_KEEP_MALLOC_DEFAULTS") == "1" or "MALLOC_MMAP_THRESHOLD_" in env or \
            "MALLOC_TRIM_THRESHOLD_" in env:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        getattr(libc, "gnu_get_libc_version")  # only glibc has it: musl has no such knobs
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; both are plain settings that glibc accepts.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
