"""ONNX neural-network handlers: Conv, ConvTranspose, pooling, activations, softmax, norms.

ONNX lists spatial attributes height first (``strides [sh, sw]``, ``pads [top, left,
bottom, right]``); MNN's conv2d/pool functions take pairs width first (``(x, y)``) and
four pads in ONNX's order. ``auto_pad`` SAME_UPPER/SAME_LOWER/VALID are resolved to
explicit pads here from the static input shape; when the spatial dims are only known at run
time, 1-d/2-d SAME_UPPER becomes the ops' ``SAME`` padding mode (the same rule, worked out
from the actual size when the op runs) and SAME_LOWER the same on flipped spatial axes
(see :func:`_same_at_run_time`).
"""
import itertools

import numpy as np

import mnn.express as F
from mnn.express.enums import Padding_Mode
from mnn.express.graph import partial_shape

from .common import same_dtype_const
from .registry import onnx_op
from .tensor import flatten_2d


def _shape(ctx, var, what="input"):
    shape = ctx.known_shape(var)
    if shape is None:
        raise ctx.static_needed(f"the shape of the {what} must be known at conversion time")
    return shape


def _spatial(ctx, values, n, default, what):
    if values is None:
        return [default] * n
    values = [int(v) for v in values]
    if len(values) != n:
        raise ctx.error(f"{what} {values} needs {n} entries")
    return values


def _resolve_pads(ctx, in_hw, kernel, strides, dilations, pads, auto_pad):
    """Explicit (begin..., end...) pads for ``auto_pad`` (ONNX's rules)."""
    n = len(in_hw)
    if auto_pad in ("NOTSET", "", None):
        return _spatial(ctx, pads, 2 * n, 0, "pads")
    if auto_pad == "VALID":
        return [0] * (2 * n)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"unknown auto_pad {auto_pad!r}")
    begin, end = [], []
    for size, k, s, d in zip(in_hw, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, big = total // 2, total - total // 2
        if auto_pad == "SAME_UPPER":
            begin.append(small), end.append(big)
        else:
            begin.append(big), end.append(small)
    return begin + end


def _geometry_shape(ctx, X, auto_pad, runtime_same_ok=True):
    """``(shape, candidate)``: what the op needs of X's shape, and whether SAME padding may
    be left to run time (see :func:`_same_at_run_time`) because a spatial dim is dynamic.

    Explicit pads need only the rank, so dynamic dims stay dynamic; so does SAME padding
    of a 1-d or 2-d op with a dynamic spatial dim."""
    partial = ctx.partial_shape(X)
    if auto_pad in ("NOTSET", "VALID", "", None) and partial is not None:
        return partial, False
    if runtime_same_ok and auto_pad in ("SAME_UPPER", "SAME_LOWER") and \
            partial is not None and len(partial) in (3, 4) and \
            any(d < 0 for d in partial[2:]):
        return partial, True
    return _shape(ctx, X), False


def _same_at_run_time(ctx, X, candidate, auto_pad, kernel, strides, dilations):
    """How SAME padding on dynamic dims is computed when the op runs: None (pads resolved
    from the static shape), "upper" (the ops' SAME mode: ONNX's SAME_UPPER rule),
    "lower" (SAME_UPPER on the spatially flipped input, flipped back) or "padded" (the
    input padded and cut to the SAME windows with run-time bounds: :func:`_same_input`).

    Flipping turns SAME_LOWER's larger leading pad into a trailing one and keeps every
    window whenever the padding total is never clipped at zero, which holds for any
    input size when each stride is at most the dilated kernel; otherwise SAME_LOWER is
    "padded"."""
    if not candidate:
        return None
    if auto_pad == "SAME_UPPER":
        return "upper"
    if all(s <= (k - 1) * d + 1 for k, s, d in zip(kernel, strides, dilations)):
        return "lower"
    return "padded"


def _same_inputs(x, n, kernel, strides, dilations, auto_pad, fill):
    """``x`` with each of its ``n`` trailing axes made ready for a VALID window op: see
    :func:`_same_input`."""
    for i in range(n):
        x = _same_input(x, 2 + i, (kernel[i] - 1) * dilations[i] + 1, strides[i],
                        auto_pad == "SAME_LOWER", fill)
    return x


def _same_input(x, axis, reach, stride, lower, fill):
    """``x`` padded along ``axis`` as ONNX's SAME padding pads it, the amounts computed
    from the run-time size: padded by ``reach - 1`` (the most SAME ever adds) with
    ``fill`` on both sides, then cut from ``reach - 1 - begin`` to the end of the last
    window, so that a VALID window op with ``stride`` gives the SAME output (``ceil(L /
    stride)`` windows). SAME_LOWER puts the larger half of the total first."""
    from mnn.express.enums import PadValue_Mode
    from mnn.express.graph import apply

    extra = reach - 1
    begin, out = _same_begin(x, axis, reach, stride, lower)
    pads = [(0, 0)] * len(partial_shape(x))
    pads[axis] = (extra, extra)
    padded = apply("pad", [x], pads=tuple(pads), mode=PadValue_Mode.CONSTANT,
                   value=float(fill))[0]
    start = F.subtract(_i64([extra]), begin)
    stop = F.add(start, F.add(F.multiply(F.subtract(out, _i64([1])), _i64([stride])),
                              _i64([reach])))
    return F.onnx_slice(padded, start, stop, _i64([axis]))


def _same_begin(x, axis, reach, stride, lower):
    """``(begin, out)``: SAME's leading pad along ``axis`` of ``x`` and the output size,
    1-element int64 Vars computed from the run-time size (ONNX's rule: the total pads
    ``(out - 1) * stride + reach - size``, at least 0)."""
    size = F.gather(F.cast(F.shape(x), np.int64), F.const(np.array([axis], np.int32)), 0)
    out = F.floordiv(F.add(size, _i64([stride - 1])), _i64([stride]))
    total = F.maximum(F.subtract(F.add(F.multiply(F.subtract(out, _i64([1])), _i64([stride])),
                                       _i64([reach])), size), _i64([0]))
    half = F.floordiv(total, _i64([2]))
    return (F.subtract(total, half) if lower else half), out


def _flip_spatial(x, n):
    """``x`` reversed along its ``n`` trailing (spatial) axes."""
    for axis in range(2, 2 + n):
        x = F.reverse(x, axis)
    return x


def _to_2d(ctx, x, w=None):
    """1-D ops run as 2-D ops of height 1: (N, C, L) -> (N, C, 1, L)."""
    x = F.unsqueeze(x, [2])
    if w is not None:
        w = F.unsqueeze(w, [2])
    return x, w


def _lift_1d(values, fill):
    return [fill] + list(values)


def _lift_pads_1d(pads):
    return [0, pads[0], 0, pads[1]]


def _pin_channels(ctx, X, channels):
    """X whose channel count only run time knows, reshaped to the weight's ``channels``
    (other dims from the run-time shape): the shape inference after it knows the rank
    and the channel count again (its probes would give X a channel count the weight
    refuses), and another count fails that Reshape, as it fails the convolution."""
    partial = ctx.partial_shape(X)
    if partial is None or len(partial) < 3 or partial[1] >= 0:
        return X
    dims = F.cast(F.shape(X), np.int64)
    big = np.iinfo(np.int64).max
    return F.onnx_reshape(X, F.concat([F.onnx_slice(dims, _i64([0]), _i64([1])),
                                       _i64([channels]),
                                       F.onnx_slice(dims, _i64([2]), _i64([big]))], 0))


@onnx_op("Conv", since=1)
def conv(ctx, X, W, B=None, auto_pad="NOTSET", dilations=None, group=1,
         kernel_shape=None, pads=None, strides=None):
    X = _pin_channels(ctx, X, _shape(ctx, W, "weight")[1] * int(group))
    partial = ctx.partial_shape(X)
    if partial is not None and len(partial) == 5 and any(d < 0 for d in partial):
        return _conv3d_dynamic(ctx, X, W, B, auto_pad, dilations, group, pads, strides)
    xs, candidate = _geometry_shape(ctx, X, auto_pad)
    ws = _shape(ctx, W, "weight")
    n = len(xs) - 2
    if n not in (1, 2, 3):
        raise ctx.error(f"{n}-d convolution is not supported (1-d, 2-d and 3-d are)")
    kernel = ws[2:]
    strides = _spatial(ctx, strides, n, 1, "strides")
    dilations = _spatial(ctx, dilations, n, 1, "dilations")
    runtime = _same_at_run_time(ctx, X, candidate, auto_pad, kernel, strides, dilations)
    if runtime == "lower":
        X, W = _flip_spatial(X, n), _flip_spatial(W, n)
    if runtime == "padded":
        X = _same_inputs(X, n, kernel, strides, dilations, auto_pad, 0.0)
        pads, mode = [0] * (2 * n), Padding_Mode.VALID
    elif runtime:
        pads, mode = [0] * (2 * n), Padding_Mode.SAME
    else:
        pads = _resolve_pads(ctx, xs[2:], kernel, strides, dilations, pads, auto_pad)
        mode = Padding_Mode.VALID
    if n == 3:
        return _conv3d(X, W, B, strides, pads, dilations, group)
    if n == 1:
        X, W = _to_2d(ctx, X, W)
        strides, dilations = _lift_1d(strides, 1), _lift_1d(dilations, 1)
        pads = _lift_pads_1d(pads)
    y = F.conv2d(X, W, B, stride=(strides[1], strides[0]), padding=tuple(pads),
                 dilate=(dilations[1], dilations[0]), group=int(group), padding_mode=mode)
    y = F.squeeze(y, [2]) if n == 1 else y
    return _flip_spatial(y, n) if runtime == "lower" else y


def _conv3d_dynamic(ctx, X, W, B, auto_pad, dilations, group, pads, strides):
    """3-d convolution of an input with dynamic dims: padded first (explicit pads with
    zeros; SAME from the run-time sizes, :func:`_same_input`), then
    :func:`_valid_conv3d`."""
    ws = _shape(ctx, W, "weight")
    if len(ws) != 5:
        raise ctx.error(f"weight {ws} must be 5-d for a 3-d convolution")
    kernel = ws[2:]
    strides = _spatial(ctx, strides, 3, 1, "strides")
    dilations = _spatial(ctx, dilations, 3, 1, "dilations")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        X = _same_inputs(X, 3, kernel, strides, dilations, auto_pad, 0.0)
    else:
        p = _resolve_pads(ctx, [0] * 3, kernel, strides, dilations, pads, auto_pad)
        X = _zero_pad(X, p[:3], p[3:])
    return _valid_conv3d(X, W, B, kernel, strides, dilations, int(group))


def _zero_pad(x, begin, end):
    """``x`` padded with zeros on its trailing spatial axes (``begin``/``end`` per axis)."""
    if not any(begin) and not any(end):
        return x
    from mnn.express.enums import PadValue_Mode
    from mnn.express.graph import apply

    pads = ((0, 0), (0, 0)) + tuple(zip(begin, end))
    return apply("pad", [x], pads=pads, mode=PadValue_Mode.CONSTANT, value=0.0)[0]


def _valid_conv3d(x, w, bias, kernel, strides, dilations, group):
    """A VALID 3-d convolution from 2-d ones, every size read when the graph runs: for
    each kernel depth tap, the input's depth slices that tap meets (a strided slice with
    constant bounds) are moved into the batch, ``(N * OD, C, H, W)``, and convolved
    with that tap's 2-d kernel; the sums go back to ``(N, O, OD, OH, OW)``."""
    kd, sd, dd = kernel[0], strides[0], dilations[0]
    big = np.iinfo(np.int64).max
    total = None
    for t in range(kd):
        xs = F.onnx_slice(x, _i64([t * dd]), _i64([-(kd - 1 - t) * dd or big]), _i64([2]),
                          _i64([sd]))
        xs = F.transpose(xs, [0, 2, 1, 3, 4])
        dims = F.cast(F.shape(xs), np.int64)
        # (N, OD): the same for every tap; kept for the reshape back.
        lead = F.onnx_slice(dims, _i64([0]), _i64([2]))
        xs = F.onnx_reshape(xs, F.concat([_i64([-1]), F.onnx_slice(dims, _i64([2]),
                                                                     _i64([5]))], 0))
        tap = F.squeeze(F.onnx_slice(w, _i64([t]), _i64([t + 1]), _i64([2])), [2])
        y = F.conv2d(xs, tap, None, stride=(strides[2], strides[1]), padding=(0, 0, 0, 0),
                     dilate=(dilations[2], dilations[1]), group=group,
                     padding_mode=Padding_Mode.VALID)
        total = y if total is None else F.add(total, y)
    # N and OD given, not -1: the shape inference before run time then keeps the depth
    # dynamic (its probes give each dynamic dim one size, so N * OD / N would look static).
    dims = F.cast(F.shape(total), np.int64)
    y = F.onnx_reshape(total, F.concat([lead, F.onnx_slice(dims, _i64([1]), _i64([4]))], 0))
    y = F.transpose(y, [0, 2, 1, 3, 4])
    if bias is not None:
        y = F.add(y, F.reshape(bias, [1, -1, 1, 1, 1]))
    return y


@onnx_op("ConvTranspose", since=1)
def conv_transpose(ctx, X, W, B=None, auto_pad="NOTSET", dilations=None, group=1,
                   kernel_shape=None, output_padding=None, output_shape=None, pads=None,
                   strides=None):
    X = _pin_channels(ctx, X, _shape(ctx, W, "weight")[0])
    partial = ctx.partial_shape(X)
    if partial is not None and len(partial) in (3, 4, 5) and any(d < 0 for d in partial):
        return _conv_transpose_dynamic(ctx, X, W, B, auto_pad, dilations, group,
                                       output_padding, output_shape, pads, strides, partial)
    # conv2d_transpose fixes its output size when built: the input shape must be static.
    xs, ws = _shape(ctx, X), _shape(ctx, W, "weight")
    n = len(xs) - 2
    if n not in (1, 2, 3):
        raise ctx.error(f"{n}-d transposed convolution is not supported (1-d, 2-d and 3-d "
                        "are)")
    kernel = ws[2:]
    strides = _spatial(ctx, strides, n, 1, "strides")
    dilations = _spatial(ctx, dilations, n, 1, "dilations")
    out_pad = _spatial(ctx, output_padding, n, 0, "output_padding")
    pads, out_pad = _transpose_pads(ctx, xs[2:], kernel, strides, dilations, out_pad,
                                    output_shape, auto_pad, pads)
    if n == 3:
        if any(p >= max(s, d) for p, s, d in zip(out_pad, strides, dilations)):
            raise ctx.error(f"output_padding {out_pad} must be smaller than the strides "
                            f"{strides} or the dilations {dilations} for 3-d")
        return F.conv_transpose3d(X, W, B, strides, pads, dilations, int(group), out_pad)
    if n == 1:
        X, W = _to_2d(ctx, X, W)
        strides, dilations = _lift_1d(strides, 1), _lift_1d(dilations, 1)
        out_pad, pads = _lift_1d(out_pad, 0), _lift_pads_1d(pads)
    if any(p >= max(s, d) for p, s, d in zip(out_pad, strides, dilations)):
        y = F.conv2d_transpose(X, W, B, stride=(strides[1], strides[0]),
                               padding=tuple(pads), dilate=(dilations[1], dilations[0]),
                               group=int(group), padding_mode=Padding_Mode.VALID)
        # Output padding larger than conv2d_transpose allows: pad the bottom/right with
        # what the transposed convolution puts there (only the bias reaches it).
        y = _pad_bottom_right(ctx, y, out_pad, B)
    else:
        y = F.conv2d_transpose(X, W, B, stride=(strides[1], strides[0]),
                               padding=tuple(pads), dilate=(dilations[1], dilations[0]),
                               group=int(group), padding_mode=Padding_Mode.VALID,
                               output_padding=(out_pad[1], out_pad[0]))
    return F.squeeze(y, [2]) if n == 1 else y


def _transpose_pads(ctx, in_sizes, kernel, strides, dilations, out_pad, output_shape,
                    auto_pad, pads):
    """``(pads, output_padding)`` of a transposed convolution in explicit form (ONNX's
    rules): ``output_shape`` and SAME padding give the total padding, split between the
    two ends; a larger output than the stride gives goes to the output padding.

    ``in_sizes`` (the input's spatial sizes) is read only with ``output_shape``: for SAME
    the output is the input times the stride, so the total padding, ``output_padding +
    dilated kernel - stride``, is the same for every input size."""
    n = len(kernel)
    out_pad = list(out_pad)
    if output_shape is None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        if auto_pad == "VALID":
            return [0] * (2 * n), out_pad
        return _spatial(ctx, pads, 2 * n, 0, "pads"), out_pad
    begin, end = [], []
    for i in range(n):
        reach = (kernel[i] - 1) * dilations[i] + 1
        if output_shape is not None:
            target = [int(v) for v in output_shape][-n:][i]
            total = strides[i] * (in_sizes[i] - 1) + out_pad[i] + reach - target
        else:
            total = out_pad[i] + reach - strides[i]
        if total < 0:
            # A larger output than the stride gives: the extra goes to output padding.
            out_pad[i] -= total
            total = 0
        if auto_pad == "SAME_UPPER":
            begin.append(total // 2), end.append(total - total // 2)
        else:
            begin.append(total - total // 2), end.append(total // 2)
    return begin + end, out_pad


def _conv_transpose_dynamic(ctx, X, W, B, auto_pad, dilations, group, output_padding,
                            output_shape, pads, strides, partial):
    """A 1-d, 2-d or 3-d transposed convolution of an input with dynamic dims, as the convolution
    it is the transpose of: zeros inserted between the input's pixels (stride - 1 per
    gap), then a stride-1 convolution with the kernel flipped and its in/out channels
    swapped per group, padded by ``dilated kernel - 1 - pad`` (plus the output padding
    at the end). Pads past the dilated kernel crop the result instead (slices with
    constant bounds). SAME padding does not depend on the input size; ``output_shape``
    needs the static spatial sizes (only the batch may be dynamic)."""
    n = len(partial) - 2
    ws = _shape(ctx, W, "weight")
    kernel = ws[2:]
    strides = _spatial(ctx, strides, n, 1, "strides")
    dilations = _spatial(ctx, dilations, n, 1, "dilations")
    out_pad = _spatial(ctx, output_padding, n, 0, "output_padding")
    if output_shape is not None and any(d < 0 for d in partial[2:]):
        _shape(ctx, X)  # raises: the padding follows from the run-time spatial sizes
    pads, out_pad = _transpose_pads(ctx, partial[2:], kernel, strides, dilations, out_pad,
                                    output_shape, auto_pad, pads)
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    begin = [r - p for r, p in zip(reach, pads[:n])]
    end = [r - p + o for r, p, o in zip(reach, pads[n:], out_pad)]
    group = int(group)
    cin, cout_g = ws[0], ws[1]
    if cin % group:
        raise ctx.error(f"weight {ws} does not split into {group} groups")
    # (Cin, Cout/g, k...) -> (Cout, Cin/g, k...), each group's block transposed.
    w = F.reshape(W, [group, cin // group, cout_g] + list(kernel))
    w = F.transpose(w, [0, 2, 1] + list(range(3, 3 + n)))
    w = _flip_spatial(F.reshape(w, [group * cout_g, cin // group] + list(kernel)), n)
    x = X
    for axis, s in zip(range(2, 2 + n), strides):
        x = _insert_zeros(x, axis, s)
    crop = [(axis, -min(b, 0), min(e, 0)) for axis, b, e in zip(range(2, 2 + n), begin, end)]
    begin, end = [max(b, 0) for b in begin], [max(e, 0) for e in end]
    dil = dilations
    if n == 3:
        y = _valid_conv3d(_zero_pad(x, begin, end), w, B, kernel, [1, 1, 1], dilations, group)
        return _crop(y, crop)
    if n == 1:
        x, w = _to_2d(ctx, x, w)
        dil, begin, end = _lift_1d(dilations, 1), [0] + begin, [0] + end
        crop = [(3, b, e) for _, b, e in crop]
    y = F.conv2d(x, w, B, stride=(1, 1), padding=tuple(begin + end),
                 dilate=(dil[1], dil[0]), group=group, padding_mode=Padding_Mode.VALID)
    y = _crop(y, crop)
    return F.squeeze(y, [2]) if n == 1 else y


def _crop(y, crop):
    """``y`` without ``head`` leading and ``-tail`` trailing entries per ``(axis, head,
    tail)``: pads past the kernel, which the convolution could not drop."""
    big = np.iinfo(np.int64).max
    for axis, head, tail in crop:
        if head or tail:
            y = F.onnx_slice(y, _i64([head]), _i64([tail or big]), _i64([axis]))
    return y


def _insert_zeros(x, axis, s):
    """``x`` with ``s - 1`` zeros between neighbours along ``axis`` (length (L-1)*s + 1),
    the length read when the graph runs."""
    if s == 1:
        return x
    u = F.unsqueeze(x, [axis + 1])
    z = F.zeros_like(u)
    v = F.concat([u] + [z] * (s - 1), axis + 1)  # (..., L, s, ...)
    dims = F.cast(F.shape(v), np.int64)

    def part(start, stop):
        return F.onnx_slice(dims, F.const(np.array([start], np.int64)),
                            F.const(np.array([stop], np.int64)))
    merged = F.multiply(part(axis, axis + 1), F.const(np.array([s], np.int64)))
    big = np.iinfo(np.int64).max
    target = F.concat([part(0, axis), merged, part(axis + 2, big)], 0)
    v = F.onnx_reshape(v, target)
    return F.onnx_slice(v, F.const(np.array([0], np.int64)),
                        F.const(np.array([-(s - 1)], np.int64)),
                        F.const(np.array([axis], np.int64)))


def _conv3d(X, W, B, strides, pads, dilations, group):
    """3-d convolution: ``conv3d`` pads both sides alike, so unequal ONNX pads pad the
    input first."""
    begin, end = pads[:3], pads[3:]
    if begin != end:
        X = F.pad(X, [[0, 0], [0, 0]] + [[b, e] for b, e in zip(begin, end)])
        begin = [0, 0, 0]
    return F.conv3d(X, W, B, strides, begin, dilations, int(group))


def _pad_bottom_right(ctx, y, out_pad, bias):
    shape = _shape(ctx, y)
    for axis, extra in ((2, out_pad[0]), (3, out_pad[1])):
        if extra <= 0:
            continue
        block_shape = list(shape)
        block_shape[axis] = extra
        block = F.const(np.zeros(block_shape, dtype=y.dtype))
        if bias is not None:
            block = F.add(block, F.reshape(bias, [1, -1, 1, 1]))
        y = F.concat([y, block], axis)
        shape[axis] += extra
    return y


def _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations,
               runtime_same_ok=True, fill=None):
    """``(X, n, geometry)``: X lifted to 2-D when 1-D, n the ONNX spatial rank, geometry
    lists in ONNX order (height first; pads begins then ends) for 2 or 3 axes.

    ``fill``: what padding holds for the pooling (-inf for a maximum, 0 for sums), when
    SAME padding on dynamic dims may pad the input itself (:func:`_same_input`); None
    when it may not (then those shapes must be static)."""
    xs, candidate = _geometry_shape(ctx, X, auto_pad, runtime_same_ok)
    n = len(xs) - 2
    if n not in (1, 2, 3):
        raise ctx.error(f"{n}-d pooling is not supported (1-d, 2-d and 3-d are)")
    if kernel_shape is None:
        raise ctx.error("attribute 'kernel_shape' is required")
    kernel = _spatial(ctx, kernel_shape, n, 1, "kernel_shape")
    strides = _spatial(ctx, strides, n, 1, "strides")
    dil = _spatial(ctx, dilations, n, 1, "dilations")
    runtime = _same_at_run_time(ctx, X, candidate, auto_pad, kernel, strides, dil)
    if runtime == "padded" and fill is None:
        _shape(ctx, X)  # raises: the shape is dynamic
    if runtime == "lower":
        X = _flip_spatial(X, n)
    if runtime == "padded":
        X = _same_inputs(X, n, kernel, strides, dil, auto_pad, fill)
    if runtime:
        pads = [0] * (2 * n)
    else:
        pads = _resolve_pads(ctx, xs[2:], kernel, strides, dil, pads, auto_pad)
    if n == 1:
        X, _ = _to_2d(ctx, X)
        kernel, strides, dil = _lift_1d(kernel, 1), _lift_1d(strides, 1), _lift_1d(dil, 1)
        pads = _lift_pads_1d(pads)
    mode = Padding_Mode.SAME if runtime in ("upper", "lower") else Padding_Mode.VALID
    return X, n, dict(kernel=kernel, strides=strides, pads=pads, dilations=dil, mode=mode,
                      flip=runtime == "lower", shifted=runtime == "padded")


def _unlift(y, n, g):
    """A 2-D pooling result back to the ONNX spatial rank, flipped back for run-time
    SAME_LOWER."""
    y = F.squeeze(y, [2]) if n == 1 else y
    return _flip_spatial(y, n) if g["flip"] else y


def _mnn_pool_args(g):
    """MNN's 2-D pooling arguments (pairs width first) from ONNX-order geometry."""
    k, s, d = g["kernel"], g["strides"], g["dilations"]
    return dict(kernel=(k[1], k[0]), stride=(s[1], s[0]), dilation=(d[1], d[0]),
                padding_mode=g["mode"], pads=tuple(g["pads"]))


def _torch_pool_args(g):
    return dict(kernel=g["kernel"], stride=g["strides"], pads=g["pads"],
                dilation=g["dilations"])


def _max_pool_indices(ctx, X, n, g, ceil_mode, storage_order):
    """ONNX MaxPool's ``Indices``: flat positions in the whole input tensor, the plane in
    row-major order (``storage_order`` 0) or column-major (1)."""
    if storage_order not in (0, 1):
        raise ctx.error(f"storage_order must be 0 or 1, got {storage_order}")
    xs = _shape(ctx, X)  # after the 1-d lift: (N, C, 1, L)
    idx = F.max_pool_indices(X, ceil_mode=bool(ceil_mode), **_torch_pool_args(g))
    sizes = xs[2:]
    if storage_order == 1 and n >= 2:
        # Row-major (…, iy, ix) -> column-major: ix varies slowest, the first axis fastest.
        coords, rest = [], idx
        for size in reversed(sizes[1:]):
            coords.append(F.floormod(rest, same_dtype_const(size, idx)))
            rest = F.floordiv(rest, same_dtype_const(size, idx))
        coords.append(rest)  # coords: last axis first
        col = coords[0]
        for coord, size in zip(coords[1:], reversed(sizes[:-1])):
            col = F.add(F.multiply(col, same_dtype_const(size, idx)), coord)
        idx = col
    plane = int(np.prod(sizes))
    offsets = np.arange(xs[0] * xs[1], dtype=np.int64).reshape(
        [xs[0], xs[1]] + [1] * len(sizes)) * plane
    idx = F.add(idx, F.const(offsets))
    return F.squeeze(idx, [2]) if n == 1 else idx


def _i64(values):
    return F.const(np.array(values, np.int64))


def _pool_taps(X, g):
    """The windows of a 2-d or 3-d max pooling with explicit pads (no ceil mode) as one
    axis: ``(N, C, taps, O...)``, from ops that take run-time sizes. The input is padded
    with -inf and each kernel tap is a strided slice with constant bounds (tap ``t``
    starts at ``t * dilation`` and ends ``(k - 1 - t) * dilation`` before the end), so
    the taps are in the window's row-major order. Serves where MNN's Pooling does not:
    dilated windows, and MaxPool's ``Indices``."""
    from mnn.express.enums import PadValue_Mode
    from mnn.express.graph import apply

    k, s, d = g["kernel"], g["strides"], g["dilations"]
    m = len(k)
    pads = g["pads"]
    padded = apply("pad", [X], pads=((0, 0), (0, 0)) + tuple(zip(pads[:m], pads[m:])),
                   mode=PadValue_Mode.CONSTANT, value=float("-inf"))[0]
    big = np.iinfo(np.int64).max
    taps = []
    for tap in itertools.product(*[range(v) for v in k]):
        starts = [t * d[i] for i, t in enumerate(tap)]
        ends = [-(k[i] - 1 - t) * d[i] or big for i, t in enumerate(tap)]
        piece = F.onnx_slice(padded, _i64(starts), _i64(ends), _i64(list(range(2, 2 + m))),
                             _i64(list(s)))
        taps.append(F.unsqueeze(piece, [2]))
    return F.concat(taps, 2)


def _indices_from_taps(ctx, X, stacked, n, g, storage_order):
    """MaxPool's ``Indices`` from :func:`_pool_taps`' windows: the first tap holding the
    maximum (argmax, row-major like the window), its input position worked out from the
    output position and the tap, plus the plane's offset in the whole tensor. The
    position in the plane is row-major (``storage_order`` 0) or column-major (1: the
    first spatial axis varies fastest)."""
    if storage_order not in (0, 1):
        raise ctx.error(f"storage_order must be 0 or 1, got {storage_order}")
    k, s, d = g["kernel"], g["strides"], g["dilations"]
    m = len(k)
    # Where the windows start: the leading pads (run-time Vars for SAME on dynamic dims).
    origin = g.get("origin") or [_i64(p) for p in g["pads"][:m]]
    rest = F.cast(F.argmax(stacked, 2), np.int64)  # (N, C, O...)
    taps = [None] * m
    for i in reversed(range(m)):
        taps[i] = F.floormod(rest, _i64(k[i]))
        rest = F.floordiv(rest, _i64(k[i]))
    out_dims = F.cast(F.shape(stacked), np.int64)
    in_dims = F.cast(F.shape(X), np.int64)

    def dim(dims, i):
        return F.reshape(F.gather(dims, F.const(np.array(i, np.int32)), 0), [])

    def arange(size, axis, rank):
        shape = [1] * rank
        shape[axis] = -1
        return F.reshape(F.range(_i64(0), size, _i64(1)), shape)

    sizes = [dim(in_dims, 2 + i) for i in range(m)]
    pos = [F.add(F.multiply(arange(dim(out_dims, 3 + i), i, m), _i64(s[i])),
                 F.subtract(F.multiply(taps[i], _i64(d[i])), origin[i])) for i in range(m)]
    order = list(reversed(range(m))) if storage_order == 1 else list(range(m))
    plane_pos = pos[order[0]]
    for i in order[1:]:
        plane_pos = F.add(F.multiply(plane_pos, sizes[i]), pos[i])
    # Plane number n * C + c, times the plane size.
    plane = F.add(F.multiply(arange(dim(in_dims, 0), 0, 2 + m), dim(in_dims, 1)),
                  arange(dim(in_dims, 1), 1, 2 + m))
    area = sizes[0]
    for size in sizes[1:]:
        area = F.multiply(area, size)
    idx = F.add(plane_pos, F.multiply(plane, area))
    return F.squeeze(idx, [2]) if n == 1 else idx


def _max_pool_same_with_indices(ctx, X, auto_pad, dilations, kernel_shape, strides,
                                storage_order):
    """MaxPool with ``Indices`` and SAME padding on dynamic dims (1-d, 2-d, 3-d): the input
    padded with -inf and cut to the SAME windows (:func:`_same_input`), the windows as
    slices (:func:`_pool_taps`), the indices counted from the run-time leading pads."""
    n = len(ctx.partial_shape(X)) - 2
    if kernel_shape is None:
        raise ctx.error("attribute 'kernel_shape' is required")
    kernel = _spatial(ctx, kernel_shape, n, 1, "kernel_shape")
    strides = _spatial(ctx, strides, n, 1, "strides")
    dil = _spatial(ctx, dilations, n, 1, "dilations")
    dtype = X.dtype
    x = X if dtype.kind == "f" else F.cast(X, np.float64)
    if n == 1:
        x, _ = _to_2d(ctx, x)
        kernel, strides, dil = _lift_1d(kernel, 1), _lift_1d(strides, 1), _lift_1d(dil, 1)
    lower = auto_pad == "SAME_LOWER"
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    m = len(kernel)
    origin = [_same_begin(x, 2 + i, reach[i], strides[i], lower)[0] for i in range(m)]
    padded = x
    for i in range(m):
        padded = _same_input(padded, 2 + i, reach[i], strides[i], lower, float("-inf"))
    g = dict(kernel=kernel, strides=strides, dilations=dil, pads=[0] * (2 * m), origin=origin)
    stacked = _pool_taps(padded, g)
    y = F.reduce_max(stacked, [2], False)
    y = y if dtype.kind == "f" else F.cast(y, dtype)
    y = F.squeeze(y, [2]) if n == 1 else y
    return y, _indices_from_taps(ctx, x, stacked, n, g, storage_order)


@onnx_op("MaxPool", since=1)
def max_pool(ctx, X, auto_pad="NOTSET", ceil_mode=0, dilations=None,
             kernel_shape=None, pads=None, storage_order=0, strides=None):
    ceil_mode = _ceil_mode(ceil_mode, auto_pad)
    partial = ctx.partial_shape(X)
    if len(ctx.node.output) > 1 and ctx.node.output[1] and not ceil_mode and \
            auto_pad in ("SAME_UPPER", "SAME_LOWER") and partial is not None and \
            len(partial) in (3, 4, 5) and any(d < 0 for d in partial):
        return _max_pool_same_with_indices(ctx, X, auto_pad, dilations, kernel_shape,
                                           strides, int(storage_order))
    if _pool3d_dynamic_case(ctx, X) and \
            not (len(ctx.node.output) > 1 and ctx.node.output[1]):
        return _max_pool3d_dynamic(ctx, X, auto_pad, dilations, kernel_shape, pads, strides,
                                   ceil_mode)
    X, n, g = _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations,
                         fill=float("-inf"))
    dtype = X.dtype
    if dtype.kind != "f":
        # Integer images: the maximum of exactly representable values is exact in float.
        X = F.cast(X, np.float64)
    indices = len(ctx.node.output) > 1 and ctx.node.output[1]
    # Windows as slices for what MNN's Pooling lacks (dilation, the indices), where the
    # window positions do not depend on the input size (explicit pads, no ceil mode).
    stacked = None
    if (n in (1, 2) or (n == 3 and indices)) and g["mode"] == Padding_Mode.VALID and \
            not (indices and g["shifted"]) and (indices or any(v > 1 for v in g["dilations"])):
        if ceil_mode:
            stacked = _ceil_cut(_pool_taps(X, _ceil_extended(g)), X, g,
                                tuple(range(3, 3 + len(g["kernel"]))))
        else:
            stacked = _pool_taps(X, g)
        y = F.reduce_max(stacked, [2], False)
    elif n == 3:
        y = F.max_pool3d(X, ceil_mode=bool(ceil_mode), **_torch_pool_args(g))
    else:
        y = F.max_pool(X, ceil_mode=bool(ceil_mode), **_mnn_pool_args(g))
    if dtype.kind != "f":
        y = F.cast(y, dtype)
    y = _unlift(y, n, g)
    if not indices:
        return y
    if stacked is not None:
        return y, _indices_from_taps(ctx, X, stacked, n, g, int(storage_order))
    return y, _max_pool_indices(ctx, X, n, g, ceil_mode, int(storage_order))


@onnx_op("AveragePool", since=1)
def average_pool(ctx, X, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0,
                 dilations=None, kernel_shape=None, pads=None, strides=None):
    ceil_mode = _ceil_mode(ceil_mode, auto_pad)
    partial = ctx.partial_shape(X)
    if _pool3d_dynamic_case(ctx, X):
        x, g = _pool3d_input(ctx, X, auto_pad, dilations, kernel_shape, pads, strides, 0.0,
                             ceil_mode)
        sums = _window_sums3d(x, g, partial[1])
        if count_include_pad and not g["ceil"]:
            y = F.divide(sums, same_dtype_const(float(np.prod(g["kernel"])), X))
        else:
            # The taps counted: the same sums over a mask of ones (the pads holding ones
            # when padding counts; ceil mode's extension never counts).
            mask, _ = _pool3d_input(ctx, F.ones_like(X), auto_pad, dilations, kernel_shape,
                                    pads, strides, 0.0, ceil_mode,
                                    pad_fill=1.0 if count_include_pad else None)
            counts = _window_sums3d(mask, g, partial[1])
            if g["ceil"]:
                # A window wholly in the extension (cut below) counts no taps: not 0 / 0.
                counts = F.maximum(counts, same_dtype_const(1.0, X))
            y = F.divide(sums, counts)
        return _ceil_cut(y, X, g, (2, 3, 4)) if g["ceil"] else y
    if count_include_pad and not ceil_mode and partial is not None and \
            len(partial) in (3, 4) and any(d < 0 for d in partial):
        # Padding counted on dynamic dims: the window sums over the whole kernel (a
        # depthwise convolution, padding adding zeros) divided by the kernel's size. (The
        # real wheel's Pooling counts SAME and uneven explicit pads differently.)
        X, n, g = _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations,
                             fill=0.0)
        area = same_dtype_const(float(np.prod(g["kernel"])), X)
        return _unlift(F.divide(_window_sums(X, g, partial[1]), area), n, g)
    # The real wheel's SAME average pooling does not count padding as ONNX's
    # count_include_pad does: those pads are resolved from a static shape.
    channels = partial[1] if partial is not None and len(partial) > 1 else -1
    source = X
    X, n, g = _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations,
                         runtime_same_ok=not count_include_pad,
                         fill=0.0 if partial is not None else None)
    if g["shifted"]:
        # SAME_LOWER with strides over the kernel, padding not counted: the input padded
        # and cut to the SAME windows, its window sums over those of a mask of ones.
        mask, _, _ = _pool_args(ctx, F.ones_like(source), kernel_shape, strides, pads,
                                auto_pad, dilations, fill=0.0)
        return _unlift(F.divide(_window_sums(X, g, channels), _window_sums(mask, g, channels)),
                       n, g)
    if n == 3:
        return F.avg_pool3d(X, ceil_mode=bool(ceil_mode),
                            count_include_pad=bool(count_include_pad), **_torch_pool_args(g))
    y = F.avg_pool(X, ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                   **_mnn_pool_args(g))
    return _unlift(y, n, g)


@onnx_op("LpPool", since=2)
def lp_pool(ctx, X, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=None,
            p=2, pads=None, strides=None):
    ceil_mode = _ceil_mode(ceil_mode, auto_pad)
    if not float(p) > 0:
        raise ctx.error(f"p must be positive, got {p}")
    partial = ctx.partial_shape(X)
    if _pool3d_dynamic_case(ctx, X):
        powered = F.pow(F.abs(X), same_dtype_const(float(p), X))
        x, g = _pool3d_input(ctx, powered, auto_pad, dilations, kernel_shape, pads, strides,
                             0.0, ceil_mode)
        sums = _window_sums3d(x, g, partial[1])
        sums = _ceil_cut(sums, X, g, (2, 3, 4)) if g["ceil"] else sums
        return F.pow(sums, same_dtype_const(1.0 / float(p), X))
    if partial is not None and len(partial) in (3, 4) and any(d < 0 for d in partial):
        return _lp_pool_dynamic(ctx, X, auto_pad, dilations, kernel_shape, p, pads, strides,
                                partial[1], ceil_mode)
    X, n, g = _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations)
    if n == 3:
        return F.lp_pool3d(X, p=float(p), ceil_mode=bool(ceil_mode), **_torch_pool_args(g))
    a = _mnn_pool_args(g)
    y = F.lp_pool(X, a["kernel"], a["stride"], float(p), a["padding_mode"], a["pads"],
                  bool(ceil_mode), a["dilation"])
    return _unlift(y, n, g)


def _lp_pool_dynamic(ctx, X, auto_pad, dilations, kernel_shape, p, pads, strides, channels,
                     ceil_mode):
    """1-d/2-d LpPool of an input with dynamic dims: the window sums of
    ``|x|^p`` are a depthwise convolution with a kernel of ones (padding adds zeros, as
    in LpPool), then the p-th root. The convolution takes explicit or SAME padding on
    any input size; in ceil mode the taps past the end padding add zeros too."""
    X, n, g = _pool_args(ctx, X, kernel_shape, strides, pads, auto_pad, dilations, fill=0.0)
    powered = F.pow(F.abs(X), same_dtype_const(float(p), X))
    if ceil_mode:
        sums = _ceil_cut(_window_sums(powered, _ceil_extended(g), channels), X, g, (2, 3))
    else:
        sums = _window_sums(powered, g, channels)
    return _unlift(F.pow(sums, same_dtype_const(1.0 / float(p), X)), n, g)


def _ceil_extended(g):
    """2-d or 3-d pooling geometry with each end pad grown by ``stride - 1``: VALID
    windows over it include every window ceil mode has (and maybe one more, see
    :func:`_ceil_cut`)."""
    m = len(g["strides"])
    ends = [e + s - 1 for e, s in zip(g["pads"][m:], g["strides"])]
    return dict(g, pads=list(g["pads"][:m]) + ends)


def _ceil_cut(y, X, g, axes):
    """``y`` (windows over :func:`_ceil_extended` geometry) cut to ceil mode's window
    count along its two spatial ``axes``, worked out from X's run-time size: ``ceil((L +
    pads - reach) / stride) + 1``, less one when the last window would start in the end
    padding (ONNX's and torch's rule)."""
    dims = F.cast(F.shape(X), np.int64)
    for i, axis in enumerate(axes):
        k, s, d = g["kernel"][i], g["strides"][i], g["dilations"][i]
        if s == 1:
            continue  # ceil and floor agree
        begin, end = g["pads"][i], g["pads"][len(axes) + i]
        size = F.onnx_slice(dims, _i64([2 + i]), _i64([3 + i]))
        reach = (k - 1) * d + 1
        out = F.add(F.floordiv(F.add(size, _i64([begin + end - reach + s - 1])), _i64([s])),
                    _i64([1]))
        # The last window must start before the end padding: (out - 1) * s < size +
        # begin. (A minimum rather than a comparison: integer shape chains keep their
        # probe values, so the result's rank stays known.)
        out = F.minimum(out, F.add(F.floordiv(F.add(size, _i64([begin - 1])), _i64([s])),
                                   _i64([1])))
        y = F.onnx_slice(y, _i64([0]), out, _i64([axis]))
    return y


def _window_sums(x, g, channels):
    """The sums over each pooling window of the (lifted 2-d) ``x``: a depthwise
    convolution with a kernel of ones, padded as the pooling is (zeros). A channel count
    only run time knows (``channels`` -1) is moved into the batch, one channel left."""
    k, s, d = g["kernel"], g["strides"], g["dilations"]
    if channels < 0:
        flat, lead = _channels_into_batch(x)
        return _batch_into_channels(_window_sums(flat, g, 1), lead)
    ones = F.const(np.ones((channels, 1, k[0], k[1]), x.dtype))
    return F.conv2d(x, ones, None, stride=(s[1], s[0]), padding=tuple(g["pads"]),
                    dilate=(d[1], d[0]), group=channels, padding_mode=g["mode"])


def _channels_into_batch(x):
    """``(N, C, ...)`` as ``(N * C, 1, ...)`` with run-time sizes, and ``(N, C)`` to undo
    it (:func:`_batch_into_channels`)."""
    dims = F.cast(F.shape(x), np.int64)
    lead = F.onnx_slice(dims, _i64([0]), _i64([2]))
    rest = F.onnx_slice(dims, _i64([2]), _i64([np.iinfo(np.int64).max]))
    return F.onnx_reshape(x, F.concat([_i64([-1, 1]), rest], 0)), lead


def _batch_into_channels(y, lead):
    """``(N * C, 1, ...)`` back to ``(N, C, ...)``, ``lead`` holding ``(N, C)``."""
    dims = F.cast(F.shape(y), np.int64)
    rest = F.onnx_slice(dims, _i64([2]), _i64([np.iinfo(np.int64).max]))
    return F.onnx_reshape(y, F.concat([lead, rest], 0))


def _ceil_mode(ceil_mode, auto_pad):
    """ceil_mode as it applies: SAME padding fixes the output size (``ceil(L / stride)``),
    whatever ceil_mode says."""
    return 0 if auto_pad in ("SAME_UPPER", "SAME_LOWER") else int(ceil_mode)


def _pool3d_dynamic_case(ctx, X):
    """Whether X is 5-d with dynamic dims: then the pooling is written from 2-d ops and
    slices (MNN's Pooling3D has symmetric pads only, and the real wheel's differs from
    ONNX on some sizes)."""
    partial = ctx.partial_shape(X)
    return partial is not None and len(partial) == 5 and any(d < 0 for d in partial)


def _pool3d_input(ctx, X, auto_pad, dilations, kernel_shape, pads, strides, fill,
                  ceil_mode=0, pad_fill=None):
    """``(x, geometry)``: the 3-d pooling input padded with ``fill`` (explicit pads, or
    SAME from the run-time sizes), ready for VALID windows.

    In ceil mode (explicit pads) the end pads grow by ``stride - 1`` (:func:`_ceil_extended`),
    and the windows are cut afterwards with :func:`_ceil_cut` (``geometry["ceil"]``).
    ``pad_fill``, when given, is what the explicit pads hold (``fill`` then fills only the
    ceil mode extension): a mask counting padding but not the extension."""
    if kernel_shape is None:
        raise ctx.error("attribute 'kernel_shape' is required")
    kernel = _spatial(ctx, kernel_shape, 3, 1, "kernel_shape")
    strides = _spatial(ctx, strides, 3, 1, "strides")
    dil = _spatial(ctx, dilations, 3, 1, "dilations")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        x = _same_inputs(X, 3, kernel, strides, dil, auto_pad, fill)
    else:
        p = _resolve_pads(ctx, [0] * 3, kernel, strides, dil, pads, auto_pad)
        grow = [s - 1 for s in strides] if ceil_mode else [0] * 3
        if pad_fill is not None:
            x = _const_pad(X, p[:3], p[3:], pad_fill)
            x = _const_pad(x, [0] * 3, grow, fill)
        else:
            x = _const_pad(X, p[:3], [e + g for e, g in zip(p[3:], grow)], fill)
        return x, dict(kernel=kernel, strides=strides, dilations=dil, pads=p,
                       ceil=bool(ceil_mode))
    return x, dict(kernel=kernel, strides=strides, dilations=dil, ceil=False)


def _const_pad(x, begins, ends, fill):
    """The (N, C, ...) ``x`` padded with ``fill`` on its spatial axes."""
    if not any(begins) and not any(ends):
        return x
    from mnn.express.enums import PadValue_Mode
    from mnn.express.graph import apply

    return apply("pad", [x], pads=((0, 0), (0, 0)) + tuple(zip(begins, ends)),
                 mode=PadValue_Mode.CONSTANT, value=float(fill))[0]


def _window_sums3d(x, g, channels):
    """The sums over each 3-d pooling window of the padded ``x``: a depthwise VALID 3-d
    convolution with a kernel of ones (channels -1: moved into the batch)."""
    if channels < 0:
        flat, lead = _channels_into_batch(x)
        return _batch_into_channels(_window_sums3d(flat, g, 1), lead)
    ones = F.const(np.ones([channels, 1] + list(g["kernel"]), x.dtype))
    return _valid_conv3d(x, ones, None, g["kernel"], g["strides"], g["dilations"], channels)


def _max_pool3d_dynamic(ctx, X, auto_pad, dilations, kernel_shape, pads, strides,
                        ceil_mode):
    """3-d max pooling on dynamic dims: for each kernel depth tap, a 2-d max pooling of
    the depth slices it meets (moved into the batch), the maximum over the taps."""
    dtype = X.dtype
    x = X if dtype.kind == "f" else F.cast(X, np.float64)
    x, g = _pool3d_input(ctx, x, auto_pad, dilations, kernel_shape, pads, strides,
                         float("-inf"), ceil_mode)
    k, s, d = g["kernel"], g["strides"], g["dilations"]
    plane = dict(kernel=k[1:], strides=s[1:], dilations=d[1:], pads=[0, 0, 0, 0],
                 mode=Padding_Mode.VALID)
    big = np.iinfo(np.int64).max
    best = None
    for t in range(k[0]):
        xs = F.onnx_slice(x, _i64([t * d[0]]), _i64([-(k[0] - 1 - t) * d[0] or big]),
                          _i64([2]), _i64([s[0]]))
        xs = F.transpose(xs, [0, 2, 1, 3, 4])
        dims = F.cast(F.shape(xs), np.int64)
        lead = F.onnx_slice(dims, _i64([0]), _i64([2]))  # (N, OD), as in _valid_conv3d
        xs = F.onnx_reshape(xs, F.concat([_i64([-1]), F.onnx_slice(dims, _i64([2]),
                                                                     _i64([5]))], 0))
        if any(v > 1 for v in d[1:]):
            y = F.reduce_max(_pool_taps(xs, plane), [2], False)
        else:
            y = F.max_pool(xs, **_mnn_pool_args(plane))
        best = y if best is None else F.maximum(best, y)
    dims = F.cast(F.shape(best), np.int64)
    y = F.onnx_reshape(best, F.concat([lead, F.onnx_slice(dims, _i64([1]), _i64([4]))], 0))
    y = F.transpose(y, [0, 2, 1, 3, 4])
    y = _ceil_cut(y, X, g, (2, 3, 4)) if g["ceil"] else y
    return y if dtype.kind == "f" else F.cast(y, dtype)


def _global(ctx, X, reduce):
    rank = len(ctx.partial_shape(X) or _shape(ctx, X))
    if rank == 4:
        return F.global_max_pool(X) if reduce == "max" else F.global_avg_pool(X)
    axes = list(range(2, rank))
    if reduce == "max":
        return F.reduce_max(X, axes, True)
    return F.reduce_mean(X, axes, True)


@onnx_op("GlobalMaxPool", since=1)
def global_max_pool(ctx, X):
    return _global(ctx, X, "max")


@onnx_op("GlobalAveragePool", since=1)
def global_average_pool(ctx, X):
    return _global(ctx, X, "mean")


# -- activations --------------------------------------------------------------------------

@onnx_op("Relu", since=6)
def relu(ctx, X):
    if X.dtype.kind != "f":
        return F.maximum(X, same_dtype_const(0, X))
    return F.relu(X)


@onnx_op("LeakyRelu", since=6)
def leaky_relu(ctx, X, alpha=0.01):
    return F.relu(X, float(alpha))


@onnx_op("PRelu", since=7)
def prelu(ctx, X, slope):
    # The rank and a static channel count are all the per-channel form needs.
    shape = ctx.partial_shape(X) or _shape(ctx, X)
    sshape = _shape(ctx, slope, "slope")
    if len(shape) >= 2 and (int(np.prod(sshape)) == 1 or
                            0 <= shape[1] == int(np.prod(sshape))) and \
            all(d == 1 for i, d in enumerate(sshape) if len(sshape) - i != len(shape) - 1):
        return F.prelu(X, F.reshape(slope, [-1]))
    # General broadcast slope: x if x > 0 else slope * x.
    return F.select(F.greater(X, same_dtype_const(0, X)), X, F.multiply(slope, X))


@onnx_op("Elu", since=6)
def elu(ctx, X, alpha=1.0):
    return F.elu(X, float(alpha))


@onnx_op("Selu", since=6)
def selu(ctx, X, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    return F.selu(X, float(gamma), float(alpha))


@onnx_op("Celu", since=12)
def celu(ctx, X, alpha=1.0):
    # celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) = alpha * elu(x / alpha)
    a = same_dtype_const(alpha, X)
    return F.multiply(a, F.elu(F.divide(X, a), 1.0))


@onnx_op("HardSigmoid", since=6)
def hard_sigmoid(ctx, X, alpha=0.2, beta=0.5):
    return F.hardsigmoid(X, float(alpha), float(beta))


@onnx_op("HardSwish", since=14)
def hard_swish(ctx, X):
    return F.hardswish(X)


@onnx_op("Softplus", since=1)
def softplus(ctx, X):
    return F.softplus(X)


@onnx_op("Softsign", since=1)
def softsign(ctx, X):
    return F.softsign(X)


@onnx_op("ThresholdedRelu", since=10)
def thresholded_relu(ctx, X, alpha=1.0):
    return F.select(F.greater(X, same_dtype_const(alpha, X)), X, F.zeros_like(X))


@onnx_op("Mish", since=18)
def mish(ctx, X):
    return F.multiply(X, F.tanh(F.softplus(X)))


@onnx_op("Swish", since=24)
def swish(ctx, X, alpha=1.0):
    if alpha == 1.0:
        return F.silu(X)
    return F.multiply(X, F.sigmoid(F.multiply(X, same_dtype_const(alpha, X))))


@onnx_op("Gelu", since=20)
def gelu(ctx, X, approximate="none"):
    if approximate == "tanh":
        return F.gelu_tanh(X)
    if approximate != "none":
        raise ctx.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return F.gelu(X)


@onnx_op("Shrink", since=9)
def shrink(ctx, input, bias=0.0, lambd=0.5):
    lam, b = same_dtype_const(lambd, input), same_dtype_const(bias, input)
    neg = F.less(input, F.negative(lam))
    pos = F.greater(input, lam)
    return F.select(neg, F.add(input, b),
                    F.select(pos, F.subtract(input, b), F.zeros_like(input)))


@onnx_op("Clip", since=6, until=11)
def clip_attr(ctx, input, max=3.402823e38, min=-3.402823e38):
    return _clip(ctx, input, same_dtype_const(min, input), same_dtype_const(max, input))


@onnx_op("Clip", since=11)
def clip(ctx, input, min=None, max=None):
    return _clip(ctx, input, min, max)


def _clip(ctx, x, lo, hi):
    lo_v, hi_v = ctx.value(lo), ctx.value(hi)
    if x.dtype.kind == "f" and lo_v is not None and hi_v is not None and \
            float(lo_v) == 0.0 and float(hi_v) == 6.0:
        return F.relu6(x)
    if lo is not None:
        x = F.maximum(x, lo)
    if hi is not None:
        x = F.minimum(x, hi)
    return x


# -- softmax family -------------------------------------------------------------------------

def _coerced_2d(ctx, x, axis, fn):
    """Opsets before 13 flatten to 2-D at ``axis`` and normalize over the second part."""
    shape = ctx.partial_shape(x) or _shape(ctx, x)
    rank = len(shape)
    axis = axis % rank if rank else 0
    y = fn(flatten_2d(x, shape, axis), 1)
    return _reshape_like(y, x, shape)


def _reshape_like(y, x, shape):
    """``y`` reshaped to ``x``'s shape (read at run time when dynamic dims remain)."""
    if all(d >= 0 for d in shape):
        return F.reshape(y, list(shape))
    return F.onnx_reshape(y, F.cast(F.shape(x), np.int64))


@onnx_op("Softmax", since=1, until=13)
def softmax_v1(ctx, input, axis=1):
    return _coerced_2d(ctx, input, axis, F.softmax)


@onnx_op("Softmax", since=13)
def softmax(ctx, input, axis=-1):
    return F.softmax(input, axis)


@onnx_op("LogSoftmax", since=1, until=13)
def log_softmax_v1(ctx, input, axis=1):
    return _coerced_2d(ctx, input, axis, F.log_softmax)


@onnx_op("LogSoftmax", since=13)
def log_softmax(ctx, input, axis=-1):
    return F.log_softmax(input, axis)


# -- normalization -------------------------------------------------------------------------

def _moments(x, axes):
    mean = F.reduce_mean(x, axes, True)
    centred = F.subtract(x, mean)
    var = F.reduce_mean(F.multiply(centred, centred), axes, True)
    return centred, var


@onnx_op("BatchNormalization", since=7)
def batch_norm(ctx, X, scale, B, input_mean, input_var, epsilon=1e-5, momentum=0.9,
               training_mode=0, spatial=1):
    rank = len(ctx.partial_shape(X) or _shape(ctx, X))  # only the rank is used
    if training_mode:
        return _batch_norm_training(X, scale, B, input_mean, input_var, epsilon, momentum,
                                    rank)
    bshape = [1, -1] + [1] * (rank - 2)
    inv = F.rsqrt(F.add(input_var, same_dtype_const(epsilon, input_var)))
    mul = F.reshape(F.multiply(scale, inv), bshape)
    add = F.reshape(F.subtract(B, F.multiply(F.multiply(input_mean, inv), scale)), bshape)
    return F.add(F.multiply(X, mul), add)


def _batch_norm_training(X, scale, B, running_mean, running_var, epsilon, momentum, rank):
    """Training mode: normalise with the batch statistics and return the updated running
    statistics (ONNX: biased batch variance for both)."""
    axes = [0] + list(range(2, rank))
    bshape = [1, -1] + [1] * (rank - 2)
    mean = F.reduce_mean(X, axes, False)
    centred = F.subtract(X, F.reshape(mean, bshape))
    var = F.reduce_mean(F.multiply(centred, centred), axes, False)
    inv = F.rsqrt(F.add(var, same_dtype_const(epsilon, var)))
    y = F.add(F.multiply(F.multiply(centred, F.reshape(inv, bshape)),
                         F.reshape(scale, bshape)), F.reshape(B, bshape))
    m = same_dtype_const(momentum, mean)
    one_minus = same_dtype_const(1.0 - momentum, mean)
    new_mean = F.add(F.multiply(running_mean, m), F.multiply(mean, one_minus))
    new_var = F.add(F.multiply(running_var, m), F.multiply(var, one_minus))
    return y, new_mean, new_var


@onnx_op("InstanceNormalization", since=6)
def instance_norm(ctx, input, scale, B, epsilon=1e-5):
    rank = len(ctx.partial_shape(input) or _shape(ctx, input))  # only the rank is used
    centred, var = _moments(input, list(range(2, rank)))
    bshape = [1, -1] + [1] * (rank - 2)
    y = F.multiply(centred, F.rsqrt(F.add(var, same_dtype_const(epsilon, var))))
    return F.add(F.multiply(y, F.reshape(scale, bshape)), F.reshape(B, bshape))


@onnx_op("LayerNormalization", since=17)
def layer_norm(ctx, X, Scale, B=None, axis=-1, epsilon=1e-5, stash_type=1):
    shape = ctx.partial_shape(X) or _shape(ctx, X)  # only the rank is used
    rank = len(shape)
    axis = axis % rank
    axes = list(range(axis, rank))
    mean = F.reduce_mean(X, axes, True)
    centred = F.subtract(X, mean)
    var = F.reduce_mean(F.multiply(centred, centred), axes, True)
    inv = F.rsqrt(F.add(var, same_dtype_const(epsilon, var)))
    y = F.multiply(F.multiply(centred, inv), Scale)
    if B is not None:
        y = F.add(y, B)
    outs = [y]
    if len(ctx.node.output) > 1:
        outs.append(mean)
    if len(ctx.node.output) > 2:
        outs.append(inv)
    return outs


@onnx_op("LayerNorm", since=1)
def mnn_layer_norm(ctx, X, gamma, beta=None, axis=-1, epsilon=1e-10, group=1):
    """MNN's own ``LayerNorm`` node (emitted by MNN's graph-surgeon layer-norm fusion
    script): MNN's converter keeps one entry per ``axis`` attribute and normalizes that
    many trailing dims, so a node with its one int ``axis`` normalizes the last dim, with
    constant ``gamma`` and optional ``beta``; ``epsilon`` defaults to MNN's 1e-10."""
    if group != 1:
        raise ctx.error(f"attribute 'group' {group} is not supported (MNN applies gamma per "
                        "element of a group there, which no exporter we know writes)")
    if not isinstance(axis, int):
        raise ctx.error(f"attribute 'axis' must be one int, got {axis!r}")
    g = ctx.value(gamma)
    b = ctx.value(beta) if beta is not None else None
    if g is None or (beta is not None and b is None):
        raise ctx.error("gamma and beta must be initializers (MNN keeps them in the op)")
    return F.layer_norm(X, [-1], g, b, epsilon)


@onnx_op("GroupNormalization", since=18)
def group_norm(ctx, X, scale, bias, epsilon=1e-5, num_groups=None, stash_type=1):
    # The rank must be static; the channel count too unless scale's length gives it
    # (opset 21) or it is not needed (opset 18: scale and bias per group).
    shape = ctx.partial_shape(X) or _shape(ctx, X)
    if len(shape) < 2:
        shape = _shape(ctx, X)
    if num_groups is None:
        raise ctx.error("attribute 'num_groups' is required")
    per_group = ctx.opset.get("", 1) < 21
    c = shape[1]
    if c < 0 and not per_group:
        scale_shape = ctx.partial_shape(scale)
        if scale_shape is None or len(scale_shape) != 1 or scale_shape[0] < 0:
            shape = _shape(ctx, X)  # raises: the channel count is dynamic
        c = scale_shape[0]
        # Pinned to scale's length: the shape inference after it then knows the rank.
        X = _pin_channels(ctx, X, c)
    if c >= 0 and c % num_groups:
        raise ctx.error(f"{c} channels do not split into {num_groups} groups")
    grouped = F.onnx_reshape(X, F.const(np.array([0, num_groups, -1], np.int64)))
    centred, var = _moments(grouped, [2])
    y = F.multiply(centred, F.rsqrt(F.add(var, same_dtype_const(epsilon, var))))
    if per_group:
        # Opset 18's scale and bias have one entry per group: applied before the
        # channels are split out again.
        y = F.add(F.multiply(y, F.reshape(scale, [num_groups, 1])),
                  F.reshape(bias, [num_groups, 1]))
        return _reshape_like(y, X, shape)
    y = _reshape_like(y, X, shape)
    bshape = [1, c] + [1] * (len(shape) - 2)
    return F.add(F.multiply(y, F.reshape(scale, bshape)), F.reshape(bias, bshape))


@onnx_op("LpNormalization", since=1)
def lp_normalization(ctx, input, axis=-1, p=2):
    if p == 1:
        norm = F.reduce_sum(F.abs(input), [axis], True)
    elif p == 2:
        norm = F.sqrt(F.reduce_sum(F.multiply(input, input), [axis], True))
    else:
        raise ctx.error(f"p must be 1 or 2, got {p}")
    # A zero norm gives zeros (as onnxruntime and the ONNX reference do), not 0/0.
    zero = F.zeros_like(norm)
    safe = F.select(F.greater(norm, zero), norm, F.ones_like(norm))
    return F.select(F.greater(norm, zero), F.divide(input, safe), F.zeros_like(input))


@onnx_op("ATen", since=1)
def aten(ctx, *inputs, operator=None, dim=1, eps=1e-8, **attrs):
    """PyTorch's ATen fallback node; MNN's converter maps ``cosine_similarity`` (old torch
    exports): ``sum(a * b, dim) / max(sqrt(sum(a^2, dim) * sum(b^2, dim)), eps)``."""
    if operator != "cosine_similarity":
        raise ctx.error(f"attribute 'operator' {operator!r} is not supported (only "
                        "cosine_similarity)")
    if attrs:
        raise ctx.error(f"unknown attributes {sorted(attrs)} for cosine_similarity")
    if len(inputs) != 2:
        raise ctx.error(f"cosine_similarity takes 2 inputs, got {len(inputs)}")
    a, b = inputs
    axes = [int(dim)]
    dot = F.reduce_sum(F.multiply(a, b), axes, False)
    norms = F.multiply(F.reduce_sum(F.multiply(a, a), axes, False),
                       F.reduce_sum(F.multiply(b, b), axes, False))
    return F.divide(dot, F.maximum(F.sqrt(norms), same_dtype_const(float(eps), dot)))


@onnx_op("MeanVarianceNormalization", since=9)
def mean_variance_normalization(ctx, X, axes=(0, 2, 3)):
    centred, var = _moments(X, list(axes))
    return F.divide(centred, F.add(F.sqrt(var), same_dtype_const(1e-9, var)))


@onnx_op("LRN", since=1)
def lrn(ctx, X, alpha=0.0001, beta=0.75, bias=1.0, size=None):
    if size is None:
        raise ctx.error("attribute 'size' is required")
    # Only the rank must be static.
    shape = ctx.partial_shape(X) or _shape(ctx, X)
    if len(shape) < 2:
        shape = _shape(ctx, X)
    c = shape[1]
    if c < 0:
        window = _channel_window_sums(F.multiply(X, X), size, shape)
        scale = F.add(same_dtype_const(bias, X),
                      F.multiply(same_dtype_const(alpha / size, X), window))
        return F.divide(X, F.pow(scale, same_dtype_const(beta, X)))
    # Sum of squares over a window of channels [c - (size-1)//2, c + size//2]: a banded
    # matrix product over the channel axis.
    lo, hi = (size - 1) // 2, size // 2
    band = np.zeros((c, c), dtype=X.dtype)
    for i in range(c):
        band[max(0, i - lo):min(c, i + hi + 1), i] = 1
    sq = F.multiply(X, X)
    perm = [0] + list(range(2, len(shape))) + [1]
    back = [0, len(shape) - 1] + list(range(1, len(shape) - 1))
    window = F.transpose(F.matmul(F.transpose(sq, perm), F.const(band)), back)
    scale = F.add(same_dtype_const(bias, X),
                  F.multiply(same_dtype_const(alpha / size, X), window))
    return F.divide(X, F.pow(scale, same_dtype_const(beta, X)))


def _channel_window_sums(x, size, shape):
    """LRN's sums over channels ``[c - (size-1)//2, c + size//2]`` when the channel count
    is dynamic: x as ``(N, 1, C, rest)`` (run-time sizes) convolved with a ``size x 1``
    kernel of ones, zero padded on the channel axis, then back to x's shape."""
    dims = F.cast(F.shape(x), np.int64)
    planes = F.onnx_reshape(x, F.concat([F.onnx_slice(dims, _i64([0]), _i64([1])), _i64([1]),
                                         F.onnx_slice(dims, _i64([1]), _i64([2])),
                                         _i64([-1])], 0))
    ones = F.const(np.ones((1, 1, size, 1), x.dtype))
    sums = F.conv2d(planes, ones, None, stride=(1, 1),
                    padding=((size - 1) // 2, 0, size // 2, 0), padding_mode=Padding_Mode.VALID)
    return _reshape_like(sums, x, shape)
