"""Samples of the movement ops (mnn/express/ops/movement.py): reshape, transpose,
broadcast_to, squeeze, unsqueeze, concat, split. Values move unchanged, so every dtype
is sampled; references are numpy's own reshape/transpose/broadcast_to/... calls."""
import numpy as np
from opdb_core import ALL_DTYPES, Sample, values


def _reshape_ref(a, shape, zero_copies):
    target = [a.shape[i] if d == 0 and zero_copies else d for i, d in enumerate(shape)]
    return a.reshape(target)


def _transpose_ref(a, perm):
    return np.transpose(a, perm)


def _broadcast_ref(a, shape):
    return np.broadcast_to(a, np.broadcast_shapes(a.shape, tuple(shape)))


def _squeeze_ref(a, axes):
    return np.squeeze(a, axis=tuple(axes) if axes else None)


def _unsqueeze_ref(a, axes):
    return np.expand_dims(a, tuple(axes))


def _concat_ref(*arrays, axis):
    return np.concatenate(arrays, axis=axis)


def _split_ref(a, sizes, axis):
    if len(sizes) == 1:
        return np.split(a, sizes[0], axis=axis)
    return np.split(a, np.cumsum(sizes)[:-1], axis=axis)


SAMPLES = {k: [] for k in ("reshape", "transpose", "broadcast_to", "squeeze", "unsqueeze",
                           "concat", "split")}
for _dt in ALL_DTYPES:
    v = values
    SAMPLES["reshape"] += [
        Sample([v((), _dt)], {"shape": (1, 1), "zero_copies": True}, _reshape_ref),
        Sample([v((3, 5), _dt)], {"shape": (5, -1), "zero_copies": True}, _reshape_ref),
        Sample([v((2, 3, 5), _dt)], {"shape": (0, 15), "zero_copies": True}, _reshape_ref),
        Sample([v((1,), _dt)], {"shape": (), "zero_copies": False}, _reshape_ref),
        Sample([v((0, 3), _dt)], {"shape": (3, 0), "zero_copies": False}, _reshape_ref),
    ]
    SAMPLES["transpose"] += [
        Sample([v((), _dt)], {"perm": ()}, _transpose_ref),
        Sample([v((3, 5), _dt)], {"perm": (1, 0)}, _transpose_ref),
        Sample([v((2, 3, 5), _dt)], {"perm": (2, 0, 1)}, _transpose_ref),
        Sample([v((1, 7), _dt)], {"perm": (0, 1)}, _transpose_ref),
    ]
    SAMPLES["broadcast_to"] += [
        Sample([v((), _dt)], {"shape": (3, 5)}, _broadcast_ref),
        Sample([v((3, 1), _dt)], {"shape": (2, 3, 5)}, _broadcast_ref),
        Sample([v((1,), _dt)], {"shape": (1,)}, _broadcast_ref),
        Sample([v((3, 5), _dt)], {"shape": (5,)}, _broadcast_ref, note="shape-smaller"),
    ]
    SAMPLES["squeeze"] += [
        Sample([v((1,), _dt)], {"axes": ()}, _squeeze_ref),
        Sample([v((3, 1, 5, 1), _dt)], {"axes": (1,)}, _squeeze_ref),
        Sample([v((3, 1, 5, 1), _dt)], {"axes": (-1, 1)}, _squeeze_ref),
    ]
    SAMPLES["unsqueeze"] += [
        Sample([v((), _dt)], {"axes": (0,)}, _unsqueeze_ref),
        Sample([v((3, 5), _dt)], {"axes": (0, 3)}, _unsqueeze_ref),
        Sample([v((3, 5), _dt)], {"axes": (-1,)}, _unsqueeze_ref),
    ]
    SAMPLES["concat"] += [
        Sample([v((1,), _dt)], {"axis": 0}, _concat_ref),
        Sample([v((3, 5), _dt), v((3, 2), _dt, seed=1)], {"axis": 1}, _concat_ref),
        Sample([v((1, 5), _dt), v((3, 5), _dt, seed=1), v((0, 5), _dt)], {"axis": -2},
               _concat_ref),
    ]
    SAMPLES["split"] += [
        Sample([v((6, 5), _dt)], {"sizes": (3,), "axis": 0}, _split_ref),
        Sample([v((3, 7), _dt)], {"sizes": (2, 0, 5), "axis": -1}, _split_ref),
        Sample([v((1,), _dt)], {"sizes": (1,), "axis": 0}, _split_ref),
    ]
# concat promotes mixed dtypes like numpy.
SAMPLES["concat"] += [
    Sample([values((2,), np.int32), values((3,), np.float32)], {"axis": 0}, _concat_ref),
    Sample([values((2,), np.uint8), values((3,), np.int8), values((1,), np.bool_)],
           {"axis": 0}, lambda *a, axis: np.concatenate(a, axis=axis).astype(np.int16)
           .astype(np.int32)),
]

REJECTS = {
    "reshape": [Sample([np.zeros((3, 5), np.float32)], {"shape": (4, -1), "zero_copies": True}),
                Sample([np.zeros((3, 5), np.float32)], {"shape": (-1, -1), "zero_copies": True})],
    "transpose": [Sample([np.zeros((3, 5), np.float32)], {"perm": (0, 0)})],
    "broadcast_to": [Sample([np.zeros((3,), np.float32)], {"shape": (4,)})],
    "squeeze": [Sample([np.zeros((3, 1), np.float32)], {"axes": (0,)})],
    "concat": [Sample([np.zeros((3, 5), np.float32), np.zeros((4, 4), np.float32)], {"axis": 0}),
               Sample([np.zeros((3,), np.float32)], {"axis": 1})],
    "split": [Sample([np.zeros((7,), np.float32)], {"sizes": (2,), "axis": 0}),
              Sample([np.zeros((7,), np.float32)], {"sizes": (3, 3), "axis": 0})],
}
