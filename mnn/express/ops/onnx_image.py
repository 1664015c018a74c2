"""``image_decode``: ONNX ImageDecoder — an encoded image (1-d uint8 bytes: JPEG, PNG,
BMP, TIFF, WebP, PNM, JPEG 2000 as far as Pillow reads them) to an ``[H, W, C]`` uint8
tensor, ``pixel_format`` ``RGB`` or ``BGR`` (3 channels) or ``Grayscale`` (1 channel).

Decoding goes through :func:`mnn.cv.imdecode` (Pillow). Grayscale is the ITU-R 601-2 luma
of the decoded colours in Pillow's 16-bit fixed point (``(19595 R + 38470 G + 7471 B +
2**15) >> 16``), as ONNX's reference decoder converts. The output shape depends on the
data, so it is known only once the op runs.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["image_decode"]

_FORMATS = ("RGB", "BGR", "Grayscale")


def _infer(metas, pixel_format):
    x = metas[0]
    if pixel_format not in _FORMATS:
        raise OpError(f"image_decode: pixel_format must be one of {_FORMATS}, got "
                      f"{pixel_format!r}")
    if x.dtype is not None and x.dtype != np.uint8:
        raise OpError(f"image_decode: the encoded image must be uint8 bytes, got {x.dtype}")
    if x.shape is not None and len(x.shape) != 1:
        raise OpError(f"image_decode: the encoded image must be 1-d, got {list(x.shape)}")
    return [(None, np.dtype(np.uint8))]


def _compute(arrays, pixel_format):
    from ...cv import codecs, constants

    data = arrays[0]
    if data.size == 0:
        raise OpError("image_decode: the encoded image is empty")
    try:
        bgr = np.asarray(codecs.imdecode(data, constants.IMREAD_COLOR))
    except (OSError, ValueError) as exc:
        raise OpError(f"image_decode: cannot decode the image: {exc}") from None
    if pixel_format == "Grayscale":
        b, g, r = (bgr[..., i].astype(np.uint32) for i in range(3))
        gray = (19595 * r + 38470 * g + 7471 * b + (1 << 15)) >> 16
        return gray.astype(np.uint8)[..., None]
    return np.ascontiguousarray(bgr if pixel_format == "BGR" else bgr[..., ::-1])


register(OpDef("image_decode", _infer, _compute))


def image_decode(encoded, pixel_format="RGB"):
    """Decode an encoded image (see the module docstring)."""
    return apply("image_decode", [to_var(encoded)], pixel_format=str(pixel_format))[0]
