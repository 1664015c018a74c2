"""Window tables of the pooling ops (2-D and 3-D), shared by nn_pool and nn_pool3d.

Per spatial axis a window is the taps ``start + j*dilation`` (``j < kernel``) with
``start = o*stride - pad_begin``. The table kernel in ``mnn/_cython/pool.pyx`` reads, per
output ``o``, the taps in ``lo[o] <= i < hi[o]`` stepping by the dilation (``lo[o]`` is the
first tap inside the input). Average pooling divides by the product over the axes of the
tap counts: every tap up to the end padding (``count_include_pad``; taps past the end
padding, which ceil mode can add, are not counted — torch's and ONNX's rule) or only the
taps inside the input.
"""
import functools

import numpy as np

from ..errors import OpError
from . import nn_common as nc

__all__ = []


def axis_windows(size, k, s, pb, pe, d, ceil_mode):
    """``(lo, hi, count_with_pad, count_inside)`` for one axis (int64, int64, f64, f64)."""
    out = nc.conv_out_size(size, (k - 1) * d + 1, s, pb, pe, ceil_mode)
    start = np.arange(out, dtype=np.int64) * s - pb
    last = start + (k - 1) * d  # last tap, maybe outside the input
    # First tap at or after 0 (on the dilation grid), and one past the last inside tap.
    lo = np.where(start >= 0, start, start + d * ((-start + d - 1) // d))
    hi = np.minimum(last + 1, size)
    inside = np.maximum(hi - lo, 0)
    count_inside = -(-inside // d)
    lo = np.minimum(lo, size)
    hi = np.maximum(np.minimum(hi, size), lo)
    end_pad = np.minimum(last + 1, size + pe)
    count_pad = -(-(end_pad - start) // d)
    return lo, hi, count_pad.astype(np.float64), count_inside.astype(np.float64)


def adaptive_windows(size, out):
    """torch's adaptive windows ``floor(i*size/out) .. ceil((i+1)*size/out)``."""
    i = np.arange(out, dtype=np.int64)
    lo = (i * size) // out
    hi = -((-(i + 1) * size) // out)
    return lo, hi, (hi - lo).astype(np.float64), (hi - lo).astype(np.float64)


def check_geometry(kernel, strides, pads, dilations):
    """Positive kernel/strides/dilations and pads smaller than the dilated kernel (a
    larger pad would make windows of padding only)."""
    nc.positive(kernel, "kernel")
    nc.positive(strides, "stride")
    nc.positive(dilations, "dilation")
    n = len(kernel)
    for a in range(n):
        k_eff = (kernel[a] - 1) * dilations[a] + 1
        if pads[a] >= k_eff or pads[a + n] >= k_eff:
            raise OpError(f"pads {list(pads)} must be smaller than the kernel {list(kernel)}"
                          + (f" dilated by {list(dilations)}" if max(dilations) > 1 else ""))


@functools.lru_cache(maxsize=512)
def tables(in_sizes, kernel, strides, pads, dilations, ceil_mode, count_include_pad, dtype,
           global_pool=False, output_size=None):
    """Kernel arguments for input spatial sizes ``in_sizes`` (1 to 3 axes), padded to
    three axes with a leading axis of size 1: ``(windows, steps, divisors, out_sizes)``.

    Cached: building tables with numpy cost more than the pooling itself on mid-sized
    inputs. The arrays are read-only, as every caller only reads them.
    """
    n = len(in_sizes)
    axes = []
    for a, size in enumerate(in_sizes):
        if global_pool:
            one = np.ones(1, np.float64) * size
            axes.append((np.zeros(1, np.int64), np.full(1, size, np.int64), one, one, 1))
        elif output_size is not None:
            axes.append(adaptive_windows(size, output_size[a]) + (1,))
        else:
            axes.append(axis_windows(size, kernel[a], strides[a], pads[a], pads[a + n],
                                     dilations[a], ceil_mode) + (dilations[a],))
    pad = [(np.zeros(1, np.int64), np.ones(1, np.int64), np.ones(1), np.ones(1), 1)]
    axes = pad * (3 - n) + axes
    windows = tuple(np.ascontiguousarray(np.stack([lo, hi])) for lo, hi, _, _, _ in axes)
    divisors = tuple((cp if count_include_pad else ci).astype(dtype) for _, _, cp, ci, _ in axes)
    steps = tuple(int(s) for *_, s in axes)
    out_sizes = tuple(len(w[0]) for w in windows[3 - n:])
    for arr in windows + divisors:
        arr.flags.writeable = False
    return windows, steps, divisors, out_sizes


def pool_out_sizes(in_sizes, **attrs):
    """Output spatial sizes; an OpError when a window does not fit (empty output)."""
    out = tables(tuple(in_sizes), dtype=np.dtype(np.float64), **attrs)[3]
    if min(out) < 1:
        raise OpError(f"pooling window does not fit the input {list(in_sizes)}: empty output")
    return out


def powered_abs(x, p, what):
    """``|x| ** p`` for Lp pooling (``p`` > 0)."""
    from .elementwise import abs as _abs
    from .elementwise import pow as _pow

    p = float(p)
    if not p > 0:
        raise OpError(f"{what}: p must be positive, got {p}")
    return _pow(_abs(x), p)


def lp_root(mean, counts, p):
    """``(mean * counts) ** (1/p)``: the window sums of ``|x|^p`` (the padded mean times
    the window's tap count up to the end padding), then the p-th root."""
    from ..var import const
    from .elementwise import multiply
    from .elementwise import pow as _pow

    total = multiply(mean, const(np.ascontiguousarray(counts, dtype=mean.dtype)))
    return _pow(total, 1.0 / float(p))
