"""``DataLoader``: batches of a Dataset, optionally shuffled (pymnn's
``MNN.data.DataLoader``)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import express as F
from ..express.errors import MnnError

__all__ = ["DataLoader"]


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Each batch is ``[inputs, targets]``: two lists of Vars, entry ``i`` stacking the
    ``i``-th input (target) of every example along a new first axis (MNN's
    ``StackTransform``). Use it pymnn's way (``reset()``, then ``next()``
    ``iter_number`` times) or as a Python iterable (each ``for`` loop is one epoch).

    Parameters
    ----------
    dataset : Dataset
        Anything with ``__getitem__`` and ``__len__``.
    batch_size : int
    shuffle : bool, default True
        A new random order every epoch (MNN's default is to shuffle).
    num_workers : int, default 0
        Threads that read the examples of a batch in parallel (0: the calling thread).
        Worth it when ``__getitem__`` waits (files, decoding in C code that releases
        the GIL); the batch order is the same either way.
    drop_last : bool, default False
        Leave out a last batch smaller than ``batch_size``.
    seed : int or None
        Seed of the shuffling generator.
    """

    def __init__(self, dataset, batch_size, shuffle=True, num_workers=0, drop_last=False,
                 seed=None):
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise MnnError(f"mnn: DataLoader needs a dataset with __getitem__ and __len__, "
                           f"got {type(dataset).__name__}")
        batch_size = int(batch_size)
        if batch_size <= 0:
            raise MnnError(f"mnn: DataLoader batch_size must be positive, got {batch_size}")
        if int(num_workers) < 0:
            raise MnnError(f"mnn: DataLoader num_workers must be >= 0, got {num_workers}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.num_workers = int(num_workers)
        self.drop_last = bool(drop_last)
        self._rng = np.random.default_rng(seed)
        self._pool = None
        self.reset()

    @property
    def size(self):
        """Number of examples in the dataset."""
        return len(self.dataset)

    @property
    def iter_number(self):
        """Number of batches per epoch."""
        n, b = self.size, self.batch_size
        return n // b if self.drop_last else (n + b - 1) // b

    def reset(self):
        """Start a new epoch (reshuffled when ``shuffle``)."""
        n = self.size
        self._order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        self._pos = 0

    def next(self):
        """The next batch ``[inputs, targets]``; raises once the epoch is exhausted."""
        n = len(self._order)
        remaining = n - self._pos
        if remaining <= 0 or (self.drop_last and remaining < self.batch_size):
            raise MnnError("mnn: DataLoader: the epoch is exhausted; call reset() to start "
                           "a new one")
        indices = self._order[self._pos:self._pos + self.batch_size]
        self._pos += len(indices)
        indices = [int(i) for i in indices]
        if self.num_workers > 0:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.num_workers,
                                                thread_name_prefix="mnn-data")
            examples = list(self._pool.map(self.dataset.__getitem__, indices))
        else:
            examples = [self.dataset[i] for i in indices]
        return self._collate(examples)

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False)

    def __len__(self):
        return self.iter_number

    def __iter__(self):
        self.reset()
        for _ in range(self.iter_number):
            yield self.next()

    def _collate(self, examples):
        first = examples[0]
        if not isinstance(first, (list, tuple)) or len(first) != 2:
            raise MnnError("mnn: DataLoader: dataset[i] must return (inputs, targets), two "
                           f"lists; got {type(first).__name__}")
        return [self._stack([ex[0] for ex in examples], "input"),
                self._stack([ex[1] for ex in examples], "target")]

    @staticmethod
    def _stack(groups, what):
        count = len(groups[0])
        out = []
        for i in range(count):
            arrays = []
            for group in groups:
                if len(group) != count:
                    raise MnnError(f"mnn: DataLoader: examples have different numbers of "
                                   f"{what}s ({count} and {len(group)})")
                arrays.append(np.asarray(group[i]))
            shapes = {a.shape for a in arrays}
            if len(shapes) != 1:
                raise MnnError(f"mnn: DataLoader: {what} {i} has different shapes in one "
                               f"batch: {sorted(shapes)}")
            out.append(F.const(np.stack(arrays)))
        return out
