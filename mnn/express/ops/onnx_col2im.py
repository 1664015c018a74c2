"""``onnx_col2im``: ONNX Col2Im, the inverse of an im2col unfold (torch's ``fold``), any
number of spatial dims.

``x`` is ``[N, C * prod(block), L]``: for each of the ``L`` block positions (row-major
over the grid of blocks), the ``C * prod(block)`` values of one block. Each value is
added into the image position it came from; overlapping blocks sum. The image is padded
by ``pads`` (begins then ends) while summing and cropped after. Output
``[N, C, *image_shape]``.
"""
import itertools

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_col2im"]


def _geometry(x_shape, image, block, dilations, pads, strides):
    n = len(image)
    for name, values, size in (("block_shape", block, n), ("dilations", dilations, n),
                               ("strides", strides, n), ("pads", pads, 2 * n)):
        if len(values) != size:
            raise OpError(f"onnx_col2im: {name} {list(values)} must have {size} values")
    if min(block) < 1 or min(dilations) < 1 or min(strides) < 1 or min(pads) < 0 or \
            min(image) < 0:
        raise OpError("onnx_col2im: block, dilations and strides must be positive, pads "
                      "and image dims non-negative")
    if len(x_shape) != 3:
        raise OpError(f"onnx_col2im: input must be [N, C * prod(block), L], got "
                      f"{list(x_shape)}")
    k = int(np.prod(block))
    if x_shape[1] % k:
        raise OpError(f"onnx_col2im: {x_shape[1]} values per block are not a multiple of "
                      f"the block size {k}")
    grid = []
    for i in range(n):
        span = dilations[i] * (block[i] - 1) + 1
        padded = image[i] + pads[i] + pads[n + i]
        if padded < span:
            raise OpError(f"onnx_col2im: block {block} does not fit image {image} (axis {i})")
        grid.append((padded - span) // strides[i] + 1)
    if int(np.prod(grid)) != x_shape[2]:
        raise OpError(f"onnx_col2im: {x_shape[2]} blocks given, the geometry makes "
                      f"{int(np.prod(grid))} ({grid})")
    return x_shape[1] // k, grid


def _infer(metas, image, block, dilations, pads, strides):
    x = metas[0]
    if x.shape is None:
        return [(None, x.dtype)]
    c, _ = _geometry(x.shape, image, block, dilations, pads, strides)
    return [((x.shape[0], c) + tuple(image), x.dtype)]


def _compute(arrays, image, block, dilations, pads, strides):
    x = arrays[0]
    c, grid = _geometry(x.shape, image, block, dilations, pads, strides)
    n = len(image)
    padded = [image[i] + pads[i] + pads[n + i] for i in range(n)]
    acc = np.zeros((x.shape[0], c) + tuple(padded), dtype=x.dtype)
    cols = x.reshape((x.shape[0], c) + tuple(block) + tuple(grid))
    for offset in itertools.product(*(range(b) for b in block)):
        window = tuple(slice(o * d, o * d + s * (g - 1) + 1, s)
                       for o, d, s, g in zip(offset, dilations, strides, grid))
        acc[(slice(None), slice(None)) + window] += cols[(slice(None), slice(None)) + offset]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(n))
    return np.ascontiguousarray(acc[(slice(None), slice(None)) + crop])


register(OpDef("onnx_col2im", _infer, _compute))


def onnx_col2im(x, image_shape, block_shape, dilations=None, pads=None, strides=None):
    """ONNX Col2Im of ``x`` (see the module docstring); attributes default as in ONNX."""
    n = len(image_shape)

    def as_tuple(v, fill, k):
        return tuple(int(a) for a in v) if v is not None else (fill,) * k

    return apply("onnx_col2im", [to_var(x)], image=as_tuple(image_shape, 0, n),
                 block=as_tuple(block_shape, 1, n), dilations=as_tuple(dilations, 1, n),
                 pads=as_tuple(pads, 0, 2 * n), strides=as_tuple(strides, 1, n))[0]
