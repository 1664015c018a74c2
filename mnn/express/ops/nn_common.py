"""Shared argument handling of the NN op modules: pairs, padding modes, output sizes.

Public NN functions take MNN's arguments: pairs in MNN's ``(x, y)`` order (width first:
``stride=(sx, sy)``), a ``padding_mode`` from :mod:`mnn.express.enums` and explicit pads.
The ops themselves store plain attributes in ONNX's order (height first):

- ``strides``, ``dilations``, ``kernel``: ``(h, w)``;
- ``pads``: ``(top, left, bottom, right)``;
- ``padding_mode``: the int value of :class:`~mnn.express.enums.Padding_Mode`. ``SAME``
  pads are computed from the actual input size when the op infers or computes (so a
  resized placeholder stays right): output ``ceil(in / stride)``, the total padding split
  with the smaller half first (MNN, TensorFlow, ONNX ``SAME_UPPER``). ``VALID`` and
  ``CAFFE`` both use ``pads`` as given (the real wheel ignores pads under ``VALID``; we
  honour them, so scripts that pass pads get the padding they asked for).
"""
import math
import threading

import numpy as np

from ..enums import Padding_Mode
from ..errors import OpError
from ..runtime import blas_epoch, get_thread_number

__all__ = []


def mnn_pair(value, name):
    """An MNN ``(x, y)`` pair (or one int for both) as ``(h, w)`` ints."""
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    vals = [int(v) for v in value]
    if len(vals) != 2:
        raise OpError(f"{name} must be one int or a pair (x, y), got {list(value)}")
    return vals[1], vals[0]


def mnn_pads(padding, name="padding"):
    """MNN's ``padding``: a pair ``(px, py)`` (symmetric) or four ints in ONNX order
    ``(top, left, bottom, right)``. Returns ``(top, left, bottom, right)``."""
    if isinstance(padding, (int, np.integer)):
        p = int(padding)
        return p, p, p, p
    vals = [int(v) for v in padding]
    if len(vals) == 2:
        px, py = vals
        pads = (py, px, py, px)
    elif len(vals) == 4:
        pads = tuple(vals)
    else:
        raise OpError(f"{name} must be (x, y) or (top, left, bottom, right), got {vals}")
    if min(pads) < 0:
        raise OpError(f"{name} must not be negative, got {list(pads)}")
    return pads


def padding_mode_value(mode):
    """The int value of a :class:`Padding_Mode`, its int, or its name as a string in any
    case (``"same"``, as TensorFlow and ONNX users write it), checked."""
    try:
        if isinstance(mode, str):
            return int(Padding_Mode[mode.upper()])
        return int(Padding_Mode(int(mode)))
    except (KeyError, ValueError, TypeError):
        raise OpError(f"padding_mode must be Padding_Mode.CAFFE, VALID or SAME (or one of "
                      f"those names), got {mode!r}") from None


def positive(values, name):
    if min(values) < 1:
        raise OpError(f"{name} must be >= 1, got {list(values)}")


def conv_out_size(size, k_eff, stride, pad_begin, pad_end, ceil_mode=False):
    """Output length of a sliding window (torch/ONNX rule: floor unless ``ceil_mode``).

    In ceil mode the last window must still start inside the input or the left padding
    (torch's rule), so no window lies wholly in the right padding.
    """
    span = size + pad_begin + pad_end - k_eff
    if span < 0:
        return 0
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + pad_begin:
            out -= 1
        return out
    return span // stride + 1


def resolve_pads(in_hw, kernel, strides, dilations, pads, padding_mode):
    """The explicit ``(top, left, bottom, right)`` pads for this input size."""
    if padding_mode != Padding_Mode.SAME:
        return tuple(pads)
    begin, end = [], []
    for size, k, s, d in zip(in_hw, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin[0], begin[1], end[0], end[1]


def float_dtype(metas, what):
    """The common float dtype of ``metas`` (float32 or float64), else an OpError."""
    dts = {m.dtype for m in metas}
    if len(dts) != 1 or next(iter(dts)) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise OpError(f"{what} needs float32 or float64 inputs of one dtype, got "
                      f"{', '.join(str(m.dtype) for m in metas)}")
    return next(iter(dts))


def threads(work=None):
    """Thread count for a kernel call; 1 when ``work`` (elements touched) is too small
    for a parallel region to pay for waking the other threads."""
    if work is not None and work < 1 << 15:
        return 1
    return get_thread_number()


_BLAS_LIBS = []
_BLAS_CHECKED = [-1]  # runtime.blas_epoch when the count was last made 1


def blas_single_thread():
    """Keep the BLAS that gemm.pyx calls (scipy's OpenBLAS) at one thread.

    Kernels parallelize with OpenMP themselves (``gemm_split``); a second thread pool
    spinning for the same cores made two-thread runs many times slower, and switching
    BLAS's thread count back and forth around every call wakes its pool each time. So
    the setting is left at one: only our kernels call scipy's OpenBLAS through Cython
    (numpy's BLAS, used by matmul, is a separate library and keeps its threads).
    ``set_thread_number`` raises it again; the next convolution lowers it. Found once
    through threadpoolctl (a runtime dependency). Checked again only after
    ``set_thread_number`` ran (``runtime.blas_epoch``): a count changed behind our back
    (threadpoolctl in the user's code) stays until then, which costs speed, not results.
    """
    if _BLAS_CHECKED[0] == blas_epoch[0]:
        return
    if not _BLAS_LIBS:
        from scipy.linalg import cython_blas  # noqa: F401 - loads scipy's OpenBLAS
        from threadpoolctl import ThreadpoolController

        libs = [c for c in ThreadpoolController().lib_controllers
                if c.internal_api == "openblas" and "scipy.libs" in c.filepath]
        _BLAS_LIBS.extend(libs or [None])
    for lib in _BLAS_LIBS:
        if lib is not None and lib.get_num_threads() != 1:
            lib.set_num_threads(1)
    _BLAS_CHECKED[0] = blas_epoch[0]


def c_array(a):
    """``a`` as a C-contiguous array (kernels take contiguous memoryviews)."""
    return np.ascontiguousarray(a)


_scratch = threading.local()


def scratch(name, shape, dtype):
    """A reusable work array (contents undefined) of ``shape`` and ``dtype``.

    Kernels' large temporaries (im2col columns, Winograd tiles) are reused across calls:
    a fresh multi-megabyte array costs more in page faults than the convolution itself.
    One buffer per name and thread (Python threads may evaluate graphs concurrently);
    a buffer only grows. Never return a scratch array as an op result.
    """
    dtype = np.dtype(dtype)
    # math.prod: numpy's prod costs a few microseconds per call, on every convolution
    size = math.prod(int(d) for d in shape) * dtype.itemsize
    pool = getattr(_scratch, "pool", None)
    if pool is None:
        pool = _scratch.pool = {}
    buf = pool.get(name)
    if buf is None or buf.size < size:
        buf = pool[name] = np.empty(max(size, 64), np.uint8)
    return buf[:size].view(dtype).reshape(shape)


def as_nchw(x):
    """``(x as NCHW data, was_nhwc)``: a Var labelled NHWC (channels last) is transposed
    to NCHW for the NCHW kernels, so an NHWC image is never read as if it were NCHW.
    NCHW and NC4HW4 Vars pass unchanged (NC4HW4 is a label on NCHW data)."""
    from ..formats import is_channels_last

    if is_channels_last(x.data_format) and len(x.shape) >= 3:
        from ..formats import NCHW
        from .utility import convert

        return convert(x, NCHW), True
    return x, False


def restore(y, was_nhwc):
    """``y`` back in NHWC layout (and label) when the input was NHWC."""
    if not was_nhwc:
        return y
    from ..formats import NHWC
    from .utility import convert

    return convert(y, NHWC)
