"""ONNX's discrete Fourier transforms: ``onnx_dft`` (DFT) and ``onnx_stft`` (STFT).

ONNX holds complex values as a trailing axis of 2 (real, imaginary); a real signal may
have a trailing axis of 1. Both ops compute with numpy's FFT in float64 and return the
input's float dtype.

- ``onnx_dft(x[, ...]; axis, length, inverse, onesided)``: the transform along ``axis``
  (not the trailing component axis) with ``length`` points (``-1``: the axis length, or
  ``2 * (n - 1)`` for an inverse one-sided transform; shorter signals are zero-padded,
  longer ones cut). Forward: ``[..., n or n // 2 + 1, ..., 2]`` (``onesided`` keeps the
  non-negative frequencies). Inverse: complex output ``[..., 2]``, or, when ``onesided``
  (the input holds non-negative frequencies of a real signal), the real signal
  ``[..., 1]``; scaled by ``1 / length``.
- ``onnx_stft(signal[, window]; step, length, onesided)``: ``signal`` ``[batch, L, 1|2]``,
  frames of ``length`` samples every ``step`` (``1 + (L - length) // step`` of them), each
  multiplied by ``window`` (default ones) and transformed: ``[batch, frames, bins, 2]``.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["onnx_dft", "onnx_stft"]


def _complex(x, what):
    if x.ndim < 2 or x.shape[-1] not in (1, 2):
        raise OpError(f"{what}: the last axis must hold 1 (real) or 2 (real, imaginary) "
                      f"components, got shape {list(x.shape)}")
    z = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        z = z + 1j * x[..., 1].astype(np.float64)
    return z


def _pairs(z, dtype):
    return np.stack([z.real, z.imag], -1).astype(dtype)


def _dft_axis(shape, axis):
    rank = len(shape)
    if not -rank <= axis < rank:
        raise OpError(f"onnx_dft: axis {axis} is out of range for shape {list(shape)}")
    a = axis % rank
    if a == rank - 1:
        raise OpError("onnx_dft: the axis cannot be the last (component) axis")
    return a


def _dft_length(n, length, inverse, onesided):
    if length == -1:
        return 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise OpError(f"onnx_dft: dft_length must be positive, got {length}")
    return length


def _dft_infer(metas, axis, length, inverse, onesided):
    x = metas[0]
    if x.dtype is not None and x.dtype.kind != "f":
        raise OpError(f"onnx_dft: the signal must be float, got {x.dtype}")
    if x.shape is None:
        return [(None, x.dtype)]
    shape = list(x.shape)
    a = _dft_axis(shape, axis)
    if len(shape) < 2 or shape[-1] not in (1, 2):
        raise OpError(f"onnx_dft: the last axis must hold 1 or 2 components, got shape "
                      f"{shape}")
    n = _dft_length(shape[a], length, inverse, onesided)
    if inverse:
        shape[a] = n
        shape[-1] = 1 if onesided else 2
    else:
        shape[a] = n // 2 + 1 if onesided else n
        shape[-1] = 2
    return [(tuple(shape), x.dtype)]


def _dft_compute(arrays, axis, length, inverse, onesided):
    x = arrays[0]
    z = _complex(x, "onnx_dft")
    a = _dft_axis(x.shape, axis)
    n = _dft_length(x.shape[a], length, inverse, onesided)
    if inverse and onesided:
        return np.fft.irfft(z, n=n, axis=a)[..., None].astype(x.dtype)
    if inverse:
        return _pairs(np.fft.ifft(z, n=n, axis=a), x.dtype)
    out = np.fft.fft(z, n=n, axis=a)
    if onesided:
        out = np.take(out, np.arange(n // 2 + 1), axis=a)
    return _pairs(out, x.dtype)


register(OpDef("onnx_dft", _dft_infer, _dft_compute))


def onnx_dft(x, axis, length=-1, inverse=False, onesided=False):
    """ONNX DFT of ``x`` along ``axis`` (see the module docstring)."""
    return apply("onnx_dft", [to_var(x)], axis=int(axis), length=int(length),
                 inverse=bool(inverse), onesided=bool(onesided))[0]


def _stft_geometry(shape, step, length):
    if len(shape) != 3 or shape[-1] not in (1, 2):
        raise OpError(f"onnx_stft: the signal must be [batch, length, 1 or 2], got "
                      f"{list(shape)}")
    if step < 1 or length < 1:
        raise OpError(f"onnx_stft: frame_step {step} and frame_length {length} must be "
                      "positive")
    if length > shape[1]:
        raise OpError(f"onnx_stft: frame_length {length} is longer than the signal "
                      f"({shape[1]})")
    return 1 + (shape[1] - length) // step


def _stft_infer(metas, step, length, onesided):
    x = metas[0]
    if x.dtype is not None and x.dtype.kind != "f":
        raise OpError(f"onnx_stft: the signal must be float, got {x.dtype}")
    if len(metas) > 1 and metas[1].shape is not None and list(metas[1].shape) != [length]:
        raise OpError(f"onnx_stft: window shape {list(metas[1].shape)} must be [{length}]")
    if x.shape is None:
        return [(None, x.dtype)]
    frames = _stft_geometry(x.shape, step, length)
    bins = length // 2 + 1 if onesided else length
    return [((x.shape[0], frames, bins, 2), x.dtype)]


def _stft_compute(arrays, step, length, onesided):
    x = arrays[0]
    frames = _stft_geometry(x.shape, step, length)
    z = _complex(x, "onnx_stft")
    window = np.ones(length) if len(arrays) < 2 else arrays[1].astype(np.float64)
    if window.shape != (length,):
        raise OpError(f"onnx_stft: window shape {list(window.shape)} must be [{length}]")
    starts = np.arange(frames) * step
    framed = z[:, starts[:, None] + np.arange(length)[None, :]] * window
    out = np.fft.fft(framed, n=length, axis=-1)
    if onesided:
        out = out[..., :length // 2 + 1]
    return _pairs(out, x.dtype)


register(OpDef("onnx_stft", _stft_infer, _stft_compute))


def onnx_stft(signal, step, length, window=None, onesided=True):
    """ONNX STFT of ``signal`` (see the module docstring)."""
    args = [to_var(signal)] + ([to_var(window)] if window is not None else [])
    return apply("onnx_stft", args, step=int(step), length=int(length),
                 onesided=bool(onesided))[0]
