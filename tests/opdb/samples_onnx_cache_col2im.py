"""Samples of ``onnx_col2im`` (mnn/express/ops/onnx_col2im.py; reference: torch's fold for
2-d images, a plain per-element loop for 1-d and 3-d) and ``onnx_tensor_scatter``
(onnx_cache.py; reference: a row-by-row Python loop over the spec)."""
import itertools

import numpy as np
import torch
from opdb_core import Sample, values


def _fold_ref(x, image, block, dilations, pads, strides):
    if len(image) == 2 and pads[0] == pads[2] and pads[1] == pads[3]:
        return torch.nn.functional.fold(torch.from_numpy(x), tuple(image), tuple(block),
                                        tuple(dilations), tuple(pads[:2]),
                                        tuple(strides)).numpy()
    n = len(image)
    k = int(np.prod(block))
    c = x.shape[1] // k
    padded = [image[i] + pads[i] + pads[n + i] for i in range(n)]
    grid = [(padded[i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
            for i in range(n)]
    out = np.zeros((x.shape[0], c, *padded), x.dtype)
    for b, ch in itertools.product(range(x.shape[0]), range(c)):
        for kk, off in enumerate(itertools.product(*(range(v) for v in block))):
            for ll, pos in enumerate(itertools.product(*(range(g) for g in grid))):
                at = tuple(p * s + o * d for p, s, o, d in zip(pos, strides, off, dilations))
                out[(b, ch) + at] += x[b, ch * k + kk, ll]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(n))
    return out[(slice(None), slice(None)) + crop]


def _scatter_ref(cache, update, *indices, axis, mode):
    out = cache.copy()
    a = axis % cache.ndim
    starts = indices[0] if indices else np.zeros(cache.shape[0], np.int64)
    for prefix in np.ndindex(cache.shape[:a]):
        for i in range(update.shape[a]):
            row = int(starts[prefix[0]]) + i
            if mode == "circular":
                row %= cache.shape[a]
            out[prefix + (row,)] = update[prefix + (i,)]
    return out


def _col(shape, dtype=np.float32, seed=0):
    return values(shape, dtype, seed=seed)


_G2 = dict(image=(5, 6), block=(2, 3), dilations=(1, 1), pads=(0, 0, 0, 0),
           strides=(1, 1))

SAMPLES = {
    "onnx_col2im": [
        Sample([_col((2, 3 * 6, 4 * 4))], _G2, _fold_ref),
        Sample([_col((1, 2 * 4, 9), seed=1)],
               dict(image=(5, 5), block=(2, 2), dilations=(2, 2), pads=(1, 1, 1, 1),
                    strides=(2, 2)), _fold_ref, note="dilated strided padded"),
        Sample([_col((1, 4, 8), np.float64, seed=2)],
               dict(image=(7, 4), block=(2, 2), dilations=(1, 1), pads=(1, 0, 0, 2),
                    strides=(2, 3)), _fold_ref, note="unequal pads"),
        Sample([_col((1, 2 * 3, 4), seed=3)],
               dict(image=(6,), block=(3,), dilations=(1,), pads=(0, 0), strides=(1,)),
               _fold_ref, note="1-d"),
        Sample([_col((1, 1 * 8, 8), seed=4)],
               dict(image=(3, 3, 3), block=(2, 2, 2), dilations=(1, 1, 1),
                    pads=(0, 0, 0, 0, 0, 0), strides=(1, 1, 1)), _fold_ref, note="3-d"),
    ],
    "onnx_tensor_scatter": [
        Sample([_col((2, 3, 6, 4)), _col((2, 3, 2, 4), seed=5), np.array([1, 4], np.int64)],
               dict(axis=-2, mode="linear"), _scatter_ref),
        Sample([_col((2, 5, 3), np.int32), _col((2, 3, 3), np.int32, seed=6),
                np.array([4, 1], np.int32)], dict(axis=1, mode="circular"), _scatter_ref,
               note="circular"),
        Sample([_col((3, 4)), _col((3, 2), seed=7)], dict(axis=1, mode="linear"),
               _scatter_ref, note="default indices"),
    ],
}

REJECTS = {
    "onnx_col2im": [Sample([_col((2, 3 * 6, 5))], _G2),
                    Sample([_col((2, 7, 16))], _G2)],
    "onnx_tensor_scatter": [
        Sample([_col((2, 6, 4)), _col((2, 2, 4)), np.array([5, 0], np.int64)],
               dict(axis=1, mode="linear")),
        Sample([_col((2, 6, 4)), _col((2, 7, 4))], dict(axis=1, mode="linear")),
        Sample([_col((2, 6, 4)), _col((2, 2, 4))], dict(axis=0, mode="linear")),
        Sample([_col((2, 6, 4)), _col((2, 2, 4))], dict(axis=1, mode="ring")),
    ],
}
