"""DataLoader: batching, stacking, shuffling, drop_last, workers, pymnn's and Python's
iteration."""
import threading

import numpy as np
import pytest

import mnn
import mnn.expr as F
from mnn import data


class Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return [F.const(np.full((2, 3), i, np.float32)), np.float32(i) * 10], \
            [F.const(np.int32(i * i))]

    def __len__(self):
        return self.n


def test_pymnn_iteration_stacks_in_order():
    loader = data.DataLoader(Squares(10), batch_size=4, shuffle=False)
    assert loader.size == 10 and loader.iter_number == 3
    seen = []
    for _ in range(loader.iter_number):
        inputs, targets = loader.next()
        assert len(inputs) == 2 and len(targets) == 1
        ids = inputs[0].read()[:, 0, 0]
        assert inputs[0].shape[1:] == [2, 3]
        np.testing.assert_array_equal(inputs[1].read(), ids * 10)
        np.testing.assert_array_equal(targets[0].read(), (ids * ids).astype(np.int32))
        seen.extend(ids.tolist())
    assert seen == list(range(10))
    with pytest.raises(mnn.expr.MnnError, match="exhausted"):
        loader.next()
    loader.reset()
    assert loader.next()[0][0].shape[0] == 4


def test_shuffle_covers_everything_once_and_reshuffles():
    loader = data.DataLoader(Squares(23), batch_size=5, shuffle=True, seed=0)
    epochs = []
    for _ in range(2):
        ids = np.concatenate([b[0][0].read()[:, 0, 0] for b in loader])
        assert sorted(ids.tolist()) == list(range(23))
        epochs.append(ids)
    assert not np.array_equal(epochs[0], epochs[1])


def test_drop_last():
    loader = data.DataLoader(Squares(10), 4, shuffle=False, drop_last=True)
    assert loader.iter_number == 2 and len(list(loader)) == 2


def test_bad_arguments():
    with pytest.raises(mnn.expr.MnnError, match="batch_size"):
        data.DataLoader(Squares(3), 0)
    with pytest.raises(mnn.expr.MnnError, match="__getitem__"):
        data.DataLoader(object(), 2)

    class Ragged(Squares):
        def __getitem__(self, i):
            return [np.zeros(i + 1, np.float32)], [np.int32(i)]

    with pytest.raises(mnn.expr.MnnError, match="different shapes"):
        data.DataLoader(Ragged(3), 3, shuffle=False).next()


def test_workers_read_examples_concurrently_in_order():
    class Meeting(Squares):
        # Two reads must be in __getitem__ at once to pass the barrier: proof that two
        # worker threads run, without timing anything.
        barrier = threading.Barrier(2, timeout=10)

        def __getitem__(self, i):
            self.barrier.wait()
            return super().__getitem__(i)

    loader = data.DataLoader(Meeting(8), 4, shuffle=False, num_workers=2)
    batches = list(loader)
    ids = np.concatenate([b[0][0].read()[:, 0, 0] for b in batches])
    assert ids.tolist() == list(range(8))
    with pytest.raises(mnn.expr.MnnError, match="num_workers"):
        data.DataLoader(Squares(3), 2, num_workers=-1)
