"""Transformed weights (packed for a GEMM, Winograd-transformed; a float32 matmul's
right operand packed into strips) cached by the array's identity, shared by the ops
that prepare weights once and reuse them on every run (:mod:`.nn_conv`, :mod:`.linalg`),
within one byte budget."""
import threading
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["PACKED", "PackCache"]


class PackCache:
    """LRU of transformed weights keyed on the weight array's identity.

    Only arrays nobody can write are cached (the engine makes every value read-only and
    replaces, never mutates, a written source; an array viewing writeable memory is
    repacked each call), so a cached transform cannot go stale. An entry holds its array
    weakly and is dropped when the array dies (before its id can be reused): training,
    which makes new weight arrays every step, keeps no old weights alive. Bounded in
    bytes as well.
    """

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.entries = OrderedDict()  # (tag, id) -> (weakref to array, value, nbytes)
        # Graphs may be evaluated from several Python threads at once; reentrant because
        # a weakref callback (garbage collection) can run while the lock is held.
        self.lock = threading.RLock()

    @staticmethod
    def immutable(a):
        """Whether nobody can write ``a``'s memory: ``a`` and every array it views are
        read-only, down to memory numpy owns or immutable bytes."""
        while isinstance(a, np.ndarray):
            if a.flags.writeable:
                return False
            a = a.base
        return a is None or isinstance(a, bytes)

    def _drop(self, key, ref):
        with self.lock:
            hit = self.entries.get(key)
            if hit is not None and hit[0] is ref:
                del self.entries[key]
                self.bytes -= hit[2]

    def get(self, tag, w, make):
        key = (tag, id(w))
        with self.lock:
            hit = self.entries.get(key)
            if hit is not None and hit[0]() is w:
                self.entries.move_to_end(key)
                return hit[1]
        value = make(w)
        if self.immutable(w):
            size = sum(v.nbytes for v in value) if isinstance(value, tuple) else value.nbytes
            ref = weakref.ref(w, lambda r, key=key: self._drop(key, r))
            with self.lock:
                old = self.entries.pop(key, None)
                if old is not None:
                    self.bytes -= old[2]
                self.entries[key] = (ref, value, size)
                self.bytes += size
                while self.bytes > self.max_bytes and len(self.entries) > 1:
                    _, (_, _, nbytes) = self.entries.popitem(last=False)
                    self.bytes -= nbytes
        return value


PACKED = PackCache(256 << 20)
