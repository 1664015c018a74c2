"""Image file codecs (imread, imwrite, imdecode, imencode) through Pillow.

Decoded images are BGR / BGRA like OpenCV's, returned as Var as MNN's ``cv.imread`` does.
Pillow is imported only when a codec is used, so ``import mnn.cv`` works without it.
"""
import io
import os

import numpy as np

from . import constants as C
from ._image import as_image
from ..express.var import const

__all__ = ["imread", "imwrite", "imdecode", "imencode", "haveImageReader", "haveImageWriter"]

# File extensions Pillow writes, mapped to its format names.
_WRITERS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".bmp": "BMP",
            ".tif": "TIFF", ".tiff": "TIFF", ".webp": "WEBP", ".ppm": "PPM", ".pgm": "PPM",
            ".pbm": "PPM", ".pnm": "PPM"}


def _pil():
    try:
        from PIL import Image, ImageOps
    except ImportError as exc:
        raise ImportError("mnn.cv codecs need Pillow: pip install pillow") from exc
    return Image, ImageOps


def _gray_from_rgb_png(rgb):
    # What libpng's rgb_to_gray does for OpenCV's PNG reader: 15-bit weights, truncated.
    r = rgb[..., 0].astype(np.int64)
    g = rgb[..., 1].astype(np.int64)
    b = rgb[..., 2].astype(np.int64)
    return ((r * 9797 + g * 19234 + b * 3737) >> 15).astype(rgb.dtype)


def _gray_from_rgb(rgb):
    # OpenCV's fixed-point luma weights (0.299, 0.587, 0.114 in 15 bits), as cvtColor uses.
    r = rgb[..., 0].astype(np.int64)
    g = rgb[..., 1].astype(np.int64)
    b = rgb[..., 2].astype(np.int64)
    return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(rgb.dtype)


def _decode(stream, flags, what):
    Image, ImageOps = _pil()
    flags = int(flags)
    gray = flags >= 0 and not flags & (C.IMREAD_COLOR | C.IMREAD_ANYCOLOR)
    try:
        img = Image.open(stream)
        if gray and img.format == "JPEG" and img.mode in ("RGB", "YCbCr"):
            # libjpeg then hands back the luma plane itself, as OpenCV's reader gets.
            img.draft("L", img.size)
        img.load()
        fmt = img.format
    except Exception as exc:  # Pillow raises many types for bad data; name the source
        raise ValueError(f"mnn.cv: cannot decode image {what}: {exc}") from exc
    unchanged = flags < 0
    if not unchanged and not flags & C.IMREAD_IGNORE_ORIENTATION:
        img = ImageOps.exif_transpose(img)
    keep_depth = unchanged or bool(flags & C.IMREAD_ANYDEPTH)
    arr = _to_array(img, keep_depth)
    if unchanged:
        pass
    elif flags & C.IMREAD_ANYCOLOR and not flags & C.IMREAD_COLOR:
        if arr.ndim == 3:
            arr = arr[..., :3]
    elif flags & C.IMREAD_COLOR or flags & C.IMREAD_ANYCOLOR:
        if arr.ndim == 2:
            arr = np.repeat(arr[..., np.newaxis], 3, axis=2)
        else:
            arr = arr[..., :3]
    elif arr.ndim == 3:
        arr = _gray_from_rgb_png(arr) if fmt == "PNG" else _gray_from_rgb(arr)
    # Pillow gives RGB(A); OpenCV's convention is BGR(A).
    if arr.ndim == 3 and arr.shape[2] >= 3:
        order = [2, 1, 0] + ([3] if arr.shape[2] == 4 else [])
        arr = arr[..., order]
    reduce_by = {C.IMREAD_REDUCED_GRAYSCALE_2: 2, C.IMREAD_REDUCED_COLOR_2: 2,
                 C.IMREAD_REDUCED_GRAYSCALE_4: 4, C.IMREAD_REDUCED_COLOR_4: 4,
                 C.IMREAD_REDUCED_GRAYSCALE_8: 8, C.IMREAD_REDUCED_COLOR_8: 8}.get(flags)
    if reduce_by:
        from .geometric import resize

        h, w = arr.shape[:2]
        arr = resize(arr, (-(-w // reduce_by), -(-h // reduce_by)), interpolation=C.INTER_AREA)
    return np.ascontiguousarray(arr)


def _to_array(img, keep_depth):
    mode = img.mode
    if mode in ("I;16", "I;16B", "I;16L"):
        arr = np.asarray(img, dtype=np.uint16)
        return arr if keep_depth else (arr >> 8).astype(np.uint8)
    if mode in ("I", "F"):
        arr = np.asarray(img)
        if keep_depth:
            return arr.astype(np.float32) if mode == "F" else arr.astype(np.int32)
        return np.clip(arr, 0, 255).astype(np.uint8)
    if mode in ("L", "RGB", "RGBA"):
        return np.asarray(img)
    if mode == "1":
        return np.asarray(img.convert("L"))
    if mode in ("LA", "PA"):
        return np.asarray(img.convert("RGBA"))
    if mode == "P":
        has_alpha = "transparency" in img.info
        return np.asarray(img.convert("RGBA" if has_alpha else "RGB"))
    return np.asarray(img.convert("RGBA" if "A" in mode else "RGB"))


def imread(filename, flags=C.IMREAD_COLOR):
    """Read an image file.

    Parameters
    ----------
    filename : str or os.PathLike
        Path of the image.
    flags : int
        ``IMREAD_COLOR`` (BGR, the default), ``IMREAD_GRAYSCALE``, ``IMREAD_UNCHANGED``
        (keeps alpha and 16-bit depth), ``IMREAD_ANYDEPTH``, ``IMREAD_ANYCOLOR``,
        ``IMREAD_REDUCED_*``.

    Returns
    -------
    Var
        HWC (HW for grayscale) image.
    """
    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"mnn.cv.imread: no such file: {path!r}")
    with open(path, "rb") as stream:
        data = stream.read()
    return const(_decode(io.BytesIO(data), flags, repr(path)))


def imdecode(buf, flags=C.IMREAD_COLOR):
    """Decode an image from an in-memory buffer (uint8 array or bytes).

    Returns
    -------
    Var
        The decoded image, BGR like :func:`imread`.
    """
    if isinstance(buf, (bytes, bytearray, memoryview)):
        data = bytes(buf)
    else:
        arr = np.asarray(buf)
        if arr.dtype != np.uint8:
            raise TypeError(f"mnn.cv.imdecode: buf must be uint8 bytes, got dtype {arr.dtype}")
        data = arr.tobytes()
    if not data:
        raise ValueError("mnn.cv.imdecode: buf is empty")
    return const(_decode(io.BytesIO(data), flags, "from buffer"))


def _params_dict(params, func):
    params = [] if params is None else [int(p) for p in params]
    if len(params) % 2:
        raise ValueError(f"mnn.cv.{func}: params must be (flag, value) pairs, got {params}")
    return dict(zip(params[::2], params[1::2]))


def _encode(fmt, img, params, func):
    Image, _ = _pil()
    arr, _ = as_image(img, func, "img", dtypes=(np.uint8, np.uint16))
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    if arr.ndim == 3:
        if arr.shape[2] not in (3, 4):
            raise ValueError(f"mnn.cv.{func}: img must have 1, 3 or 4 channels, "
                             f"got {arr.shape[2]}")
        order = [2, 1, 0] + ([3] if arr.shape[2] == 4 else [])
        arr = arr[..., order]
        if arr.dtype == np.uint16:
            arr = (arr >> 8).astype(np.uint8)  # Pillow has no 16-bit colour mode
        if fmt == "JPEG" and arr.shape[2] == 4:
            arr = arr[..., :3]
    opts = _params_dict(params, func)
    kwargs = {}
    if fmt == "JPEG":
        kwargs["quality"] = int(opts.get(C.IMWRITE_JPEG_QUALITY, 95))
    elif fmt == "PNG":
        kwargs["compress_level"] = int(opts.get(C.IMWRITE_PNG_COMPRESSION, 1))
    elif fmt == "WEBP":
        kwargs["quality"] = int(opts.get(C.IMWRITE_JPEG_QUALITY, 95))
    if arr.ndim == 2 and arr.dtype == np.uint16 and fmt not in ("PNG", "TIFF"):
        arr = (arr >> 8).astype(np.uint8)
    pil = Image.fromarray(np.ascontiguousarray(arr))
    out = io.BytesIO()
    pil.save(out, format=fmt, **kwargs)
    return out.getvalue()


def _format_of(ext, func):
    ext = ext.lower()
    if not ext.startswith("."):
        ext = "." + ext
    if ext not in _WRITERS:
        raise ValueError(f"mnn.cv.{func}: no writer for extension {ext!r} "
                         f"(supported: {', '.join(sorted(_WRITERS))})")
    return _WRITERS[ext]


def imencode(ext, img, params=None):
    """Encode an image into a buffer.

    Parameters
    ----------
    ext : str
        File extension naming the format, e.g. ``".jpg"`` or ``".png"``.
    img : ndarray or Var
        BGR, BGRA or gray uint8 image.
    params : sequence of int, optional
        ``(flag, value)`` pairs such as ``(IMWRITE_JPEG_QUALITY, 90)``.

    Returns
    -------
    (bool, ndarray)
        ``True`` and the encoded bytes as a 1-D uint8 array.
    """
    data = _encode(_format_of(ext, "imencode"), img, params, "imencode")
    return True, np.frombuffer(data, dtype=np.uint8).copy()


def imwrite(filename, img, params=None):
    """Write an image file; the extension picks the format. Returns True."""
    path = os.fspath(filename)
    data = _encode(_format_of(os.path.splitext(path)[1], "imwrite"), img, params, "imwrite")
    with open(path, "wb") as stream:
        stream.write(data)
    return True


def haveImageReader(filename):
    """True when ``filename`` exists and Pillow recognises its format."""
    Image, _ = _pil()
    path = os.fspath(filename)
    if not os.path.isfile(path):
        return False
    try:
        with Image.open(path) as img:
            return img.format is not None
    except Exception:  # any decoding failure means "no reader for this file"
        return False


def haveImageWriter(filename):
    """True when the extension of ``filename`` names a format that can be written."""
    ext = os.path.splitext(os.fspath(filename))[1].lower()
    return ext in _WRITERS
