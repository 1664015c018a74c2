"""``conv_transpose3d``: transposed 3-D convolution built from the 2-D one.

A transposed convolution scatters each input plane through each kernel depth tap: input
depth slice ``i`` and tap ``k`` land on output depth ``i * stride + k * dilation`` (before
the depth padding is cut off), and each such pair is a :func:`conv2d_transpose` of the
slice with the tap. Summing them per output depth and stacking gives the 3-D result, on
the 2-D kernels and differentiable through them (as :func:`conv3d` does for the forward
convolution).
"""
import numpy as np

from ..errors import OpError
from ..var import to_var
from . import nn_common as nc

__all__ = ["conv_transpose3d"]


def _triple(value, what):
    arr = np.asarray(value).reshape(-1)
    if arr.size == 1:
        arr = np.repeat(arr, 3)
    if arr.size != 3:
        raise OpError(f"conv_transpose3d: {what} must be one int or three, got {list(arr)}")
    return [int(v) for v in arr]


def conv_transpose3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0, 0, 0, 0),
                     dilate=(1, 1, 1), group=1, output_padding=(0, 0, 0)):
    """Transposed 3-D convolution (torch's ``conv_transpose3d``; ONNX ConvTranspose).

    Parameters
    ----------
    input : Var
        ``(N, Cin, D, H, W)``.
    weight : Var
        ``(Cin, Cout / group, KD, KH, KW)``.
    bias : Var, optional
        ``(Cout,)``.
    stride, dilate : int or three ints
        ``(d, h, w)`` order.
    padding : int, three ints or six ints
        Rows cut from the output's borders: ``(d, h, w)`` on both sides, or ONNX's
        ``(d_begin, h_begin, w_begin, d_end, h_end, w_end)``.
    group : int
    output_padding : int or three ints
        Extra planes on the far side of each axis (less than the stride or the dilation).

    Returns
    -------
    Var
        ``(N, Cout, OD, OH, OW)`` with
        ``O = (I - 1) * stride - pad_begin - pad_end + dilate * (K - 1) + 1 + out_pad``.
    """
    from .creation import zeros_like
    from .elementwise import add
    from .movement import reshape, squeeze, stack
    from .nn_conv import conv2d_transpose
    from .slicing import slice as _slice

    x, w = to_var(input), to_var(weight)
    if len(x.shape) != 5 or len(w.shape) != 5:
        raise OpError(f"conv_transpose3d: input {x.shape} and weight {w.shape} must be 5-D")
    s, d = _triple(stride, "stride"), _triple(dilate, "dilate")
    out_pad = _triple(output_padding, "output_padding")
    pads = [int(v) for v in np.asarray(padding).reshape(-1)]
    if len(pads) in (1, 3):
        pads = _triple(pads, "padding") * 2
    if len(pads) != 6:
        raise OpError(f"conv_transpose3d: padding must have 1, 3 or 6 values, got {pads}")
    nc.positive(s, "stride")
    nc.positive(d, "dilate")
    if min(pads) < 0:
        raise OpError(f"conv_transpose3d: padding {pads} must not be negative")
    for i in range(3):
        if not 0 <= out_pad[i] < max(s[i], d[i]):
            raise OpError(f"conv_transpose3d: output_padding {out_pad} must be smaller than "
                          "the stride or the dilation")
    if x.shape[1] != w.shape[0]:
        raise OpError(f"conv_transpose3d: input has {x.shape[1]} channels, weight expects "
                      f"{w.shape[0]}")
    depth, kd = x.shape[2], w.shape[2]
    full = (depth - 1) * s[0] + (kd - 1) * d[0] + 1
    out_d = full - pads[0] - pads[3] + out_pad[0]
    if out_d < 1:
        raise OpError(f"conv_transpose3d: depth padding {pads[0]}, {pads[3]} leaves an empty "
                      "output")
    hw_pads = (pads[1], pads[2], pads[4], pads[5])

    def plane(z, k):
        xz = squeeze(_slice(x, [0, 0, z, 0, 0], [-1, -1, 1, -1, -1]), [2])
        wk = squeeze(_slice(w, [0, 0, k, 0, 0], [-1, -1, 1, -1, -1]), [2])
        return conv2d_transpose(xz, wk, None, (s[2], s[1]), hw_pads, (d[2], d[1]),
                                group, output_padding=(out_pad[2], out_pad[1]))

    planes = []
    for od in range(pads[0], pads[0] + out_d):
        acc = None
        for k in range(kd):
            rest = od - k * d[0]
            if rest < 0 or rest % s[0] or rest // s[0] >= depth:
                continue
            term = plane(rest // s[0], k)
            acc = term if acc is None else add(acc, term)
        if acc is None:  # no input plane reaches this depth: zeros (plus the bias)
            acc = zeros_like(plane(0, 0))
        planes.append(acc)
    y = stack(planes, 2)
    if bias is not None:
        b = to_var(bias)
        cout = w.shape[1] * int(group)
        if list(b.shape) != [cout]:
            raise OpError(f"conv_transpose3d: bias shape {b.shape} must be [{cout}]")
        y = add(y, reshape(b, [1, -1, 1, 1, 1]))
    return y
