"""ONNX MaxUnpool and Col2Im (the inverses of MaxPool-with-indices and of an im2col
unfold), and DeformConv (sampling at shifted positions, then a convolution).

MaxUnpool (MNN's converter maps it too):
Each input value goes to the flat position its index names in the output (indices as
MaxPool's ``Indices`` output gives them: flat over the whole N x C x spatial tensor);
every other position is zero. The output shape is ``output_shape`` when given, else the
one MaxPool's inverse geometry gives: ``(in - 1) * stride - pad_begin - pad_end + kernel``.
Indices address that inferred shape; a larger ``output_shape`` (MaxPool's input was cut
by its floor rounding) holds it in its leading corner, zeros after.
"""
import numpy as np

import mnn.express as F

from .registry import onnx_op


@onnx_op("MaxUnpool", since=9)
def max_unpool(ctx, X, I, output_shape=None, kernel_shape=None, pads=None, strides=None):
    xs = ctx.known_shape(X)
    if xs is None:
        raise ctx.static_needed("the input's shape must be known")
    n = len(xs) - 2
    if n < 1:
        raise ctx.error(f"the input must have spatial dims, got shape {xs}")
    if kernel_shape is None or len(kernel_shape) != n:
        raise ctx.error(f"attribute 'kernel_shape' must have {n} values, got {kernel_shape}")
    strides = list(strides) if strides is not None else [1] * n
    pads = list(pads) if pads is not None else [0] * (2 * n)
    if len(strides) != n or len(pads) != 2 * n:
        raise ctx.error(f"attributes 'strides' {strides} / 'pads' {pads} do not fit {n} "
                        "spatial dims")
    inferred = xs[:2] + [(xs[2 + i] - 1) * strides[i] - pads[i] - pads[n + i]
                         + kernel_shape[i] for i in range(n)]
    shape = inferred
    if output_shape is not None:
        shape = [int(v) for v in np.asarray(ctx.require_value(output_shape,
                                                              "output_shape")).reshape(-1)]
        if len(shape) != len(xs) or any(s < d for s, d in zip(shape, inferred)):
            raise ctx.error(f"output_shape {shape} is smaller than the unpooled shape "
                            f"{inferred}")
    total = int(np.prod(inferred))
    index = F.reshape(F.cast(I, np.int64), [-1, 1])
    y = F.reshape(F.scatter_nd(index, F.reshape(X, [-1]), [total]), inferred)
    if shape != inferred:
        y = F.pad(y, [[0, s - d] for s, d in zip(shape, inferred)])
    return y


@onnx_op("Col2Im", since=18)
def col2im(ctx, input, image_shape, block_shape, dilations=None, pads=None, strides=None):
    image = [int(v) for v in np.asarray(ctx.require_value(image_shape,
                                                          "image_shape")).reshape(-1)]
    block = [int(v) for v in np.asarray(ctx.require_value(block_shape,
                                                          "block_shape")).reshape(-1)]
    return F.onnx_col2im(input, image, block, dilations, pads, strides)


@onnx_op("DeformConv", since=19)
def deform_conv(ctx, X, W, offset, B=None, mask=None, dilations=None, group=1,
                kernel_shape=None, offset_group=1, pads=None, strides=None):
    ws = ctx.known_shape(W)
    if ws is None:
        raise ctx.static_needed("the weight's shape must be known")
    if len(ws) != 4:
        raise ctx.error(f"only 2-d deformable convolution is supported, weight {ws}")
    if kernel_shape is not None and list(kernel_shape) != ws[2:]:
        raise ctx.error(f"attribute 'kernel_shape' {kernel_shape} differs from the weight's "
                        f"{ws[2:]}")
    return F.deform_conv2d(X, W, offset, B, mask, strides or (1, 1), pads or (0, 0, 0, 0),
                           dilations or (1, 1), group, offset_group)
