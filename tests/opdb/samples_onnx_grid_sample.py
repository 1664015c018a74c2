"""Samples of ``onnx_grid_sample`` (mnn/express/ops/onnx_grid_sample.py; reference:
torch.nn.functional.grid_sample — bicubic 2-d, trilinear and nearest 3-d)."""
import numpy as np
import torch
from opdb_core import Sample, values

_TORCH_MODE = {"linear": "bilinear", "nearest": "nearest", "cubic": "bicubic"}


def _ref(x, grid, mode, padding_mode, align_corners):
    out = torch.nn.functional.grid_sample(
        torch.from_numpy(x.astype(np.float64)), torch.from_numpy(grid.astype(np.float64)),
        mode=_TORCH_MODE[mode], padding_mode=padding_mode, align_corners=align_corners)
    return out.numpy().astype(x.dtype)


def _grid(shape, seed):
    # Inside and somewhat outside [-1, 1], away from exact half-pixel ties.
    return values(shape, np.float32, low=-1.3, high=1.3, seed=seed)


_X2 = values((2, 3, 5, 6), np.float32, seed=1)
_X3 = values((1, 2, 4, 5, 3), np.float64, seed=2)

SAMPLES = {
    "onnx_grid_sample": [
        Sample([_X2, _grid((2, 4, 7, 2), 3)],
               dict(mode="cubic", padding_mode="zeros", align_corners=False), _ref,
               rtol=1e-4, atol=1e-5, note="bicubic"),
        Sample([_X2, _grid((2, 3, 3, 2), 4)],
               dict(mode="cubic", padding_mode="zeros", align_corners=True), _ref,
               rtol=1e-4, atol=1e-5, note="bicubic aligned"),
        Sample([_X3, _grid((1, 3, 2, 4, 3), 5).astype(np.float64)],
               dict(mode="linear", padding_mode="zeros", align_corners=False), _ref,
               note="trilinear"),
        Sample([_X3, _grid((1, 2, 2, 2, 3), 6).astype(np.float64)],
               dict(mode="linear", padding_mode="border", align_corners=True), _ref,
               note="trilinear border"),
        Sample([_X3, _grid((1, 2, 3, 2, 3), 7).astype(np.float64)],
               dict(mode="nearest", padding_mode="zeros", align_corners=False), _ref,
               note="nearest 3-d"),
        Sample([_X2, _grid((2, 2, 5, 2), 8)],
               dict(mode="linear", padding_mode="border", align_corners=False), _ref,
               rtol=1e-5, atol=1e-5, note="bilinear border"),
    ],
}

REJECTS = {
    "onnx_grid_sample": [
        Sample([_X2, _grid((2, 4, 7, 3), 3)],
               dict(mode="linear", padding_mode="zeros", align_corners=False)),
        Sample([_X2, _grid((2, 4, 7, 2), 3)],
               dict(mode="area", padding_mode="zeros", align_corners=False)),
        Sample([_X2, _grid((2, 4, 7, 2), 3)],
               dict(mode="linear", padding_mode="wrap", align_corners=False)),
    ],
}
