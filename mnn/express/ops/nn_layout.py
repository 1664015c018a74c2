"""Channel and window rearrangements of NCHW tensors: channel_shuffle, crop.

Composites over movement ops (reshape, transpose, slice), so they work on every dtype and
differentiate through those ops' rules.
"""
import numpy as np

from ..errors import OpError
from ..var import Var, to_var
from . import nn_common as nc
from .movement import reshape, transpose
from .slicing import slice as _slice

__all__ = ["channel_shuffle", "crop"]


def channel_shuffle(x, group):
    """ShuffleNet's channel shuffle (MNN's ``channel_shuffle``): view the C channels as
    ``(group, C / group)``, transpose to ``(C / group, group)``, flatten back.

    Parameters
    ----------
    x : Var
        ``(N, C, ...)`` with C divisible by ``group``.
    group : int
    """
    x, nhwc = nc.as_nchw(to_var(x))
    shape = list(x.shape)
    group = int(group)
    if len(shape) < 2 or group < 1 or shape[1] % group != 0:
        raise OpError(f"channel_shuffle: {shape[1] if len(shape) > 1 else '?'} channels of "
                      f"{shape} do not split into {group} groups")
    rest = shape[2:]
    y = reshape(x, [shape[0], group, shape[1] // group] + rest)
    y = transpose(y, [0, 2, 1] + list(range(3, 3 + len(rest))))
    return nc.restore(reshape(y, shape), nhwc)


def crop(x, size, axis, offset):
    """Crop ``x`` to the shape of ``size`` on the axes from ``axis`` on (Caffe/MNN Crop).

    Parameters
    ----------
    x : Var
    size : Var or sequence of int
        A Var whose shape (or a list that) gives the target extent of axes ``axis ..``.
    axis : int
        First cropped axis (negative counts from the end).
    offset : int or sequence of int
        Start of the crop: one value for every cropped axis, or one per axis.
    """
    x = to_var(x)
    nd = len(x.shape)
    target = list(size.shape) if isinstance(size, Var) else [int(v) for v in size]
    axis = int(axis)
    if not -nd <= axis < nd:
        raise OpError(f"crop: axis {axis} out of range for {x.shape}")
    axis %= nd
    if isinstance(size, Var):
        if len(target) != nd:
            raise OpError(f"crop: size Var {target} must have the rank of x {x.shape}")
        target = target[axis:]
    if len(target) != nd - axis:
        raise OpError(f"crop: {len(target)} sizes for the {nd - axis} axes from {axis}")
    offs = [int(v) for v in np.atleast_1d(offset)]
    if len(offs) == 1:
        offs = offs * len(target)
    if len(offs) != len(target):
        raise OpError(f"crop: {len(offs)} offsets for {len(target)} cropped axes")
    starts, sizes = [0] * axis, list(x.shape[:axis])
    for i, (o, s) in enumerate(zip(offs, target)):
        if o < 0 or s < 0 or o + s > x.shape[axis + i]:
            raise OpError(f"crop: offset {o} + size {s} exceeds axis {axis + i} of {x.shape}")
        starts.append(o)
        sizes.append(s)
    return _slice(x, starts, sizes)
