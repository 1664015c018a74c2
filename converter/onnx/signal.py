"""ONNX signal and image handlers: DFT, STFT (the window functions HannWindow ... expand
through their ONNX function bodies) and ImageDecoder."""
import numpy as np

import mnn.express as F

from .registry import onnx_op


def _int_value(ctx, var, what):
    return int(np.asarray(ctx.require_value(var, what)).reshape(-1)[0])


def _dft(ctx, input, dft_length, axis, inverse, onesided):
    if inverse not in (0, 1) or onesided not in (0, 1):
        raise ctx.error(f"attributes 'inverse' ({inverse}) and 'onesided' ({onesided}) must "
                        "be 0 or 1")
    length = -1 if dft_length is None else _int_value(ctx, dft_length, "dft_length")
    return F.onnx_dft(input, axis, length, bool(inverse), bool(onesided))


@onnx_op("DFT", since=17, until=20)
def dft_17(ctx, input, dft_length=None, axis=1, inverse=0, onesided=0):
    return _dft(ctx, input, dft_length, int(axis), inverse, onesided)


@onnx_op("DFT", since=20)
def dft(ctx, input, dft_length=None, axis=None, inverse=0, onesided=0):
    a = -2 if axis is None else _int_value(ctx, axis, "axis")
    return _dft(ctx, input, dft_length, a, inverse, onesided)


@onnx_op("STFT", since=17)
def stft(ctx, signal, frame_step, window=None, frame_length=None, onesided=1):
    if onesided not in (0, 1):
        raise ctx.error(f"attribute 'onesided' must be 0 or 1, got {onesided}")
    step = _int_value(ctx, frame_step, "frame_step")
    if frame_length is not None:
        length = _int_value(ctx, frame_length, "frame_length")
    elif window is not None:
        wshape = ctx.known_shape(window)
        if wshape is None or len(wshape) != 1:
            raise ctx.static_needed("the window's length must be known")
        length = wshape[0]
    else:
        raise ctx.error("needs a window or a frame_length")
    return F.onnx_stft(signal, step, length, window, bool(onesided))


@onnx_op("ImageDecoder", since=20)
def image_decoder(ctx, encoded_stream, pixel_format="RGB"):
    if pixel_format not in ("RGB", "BGR", "Grayscale"):
        raise ctx.error(f"attribute 'pixel_format' must be RGB, BGR or Grayscale, got "
                        f"{pixel_format!r}")
    return F.image_decode(encoded_stream, pixel_format)
