"""MNN's ImageProcess and Matrix (also under the legacy names CVImageProcess/CVMatrix).

One ``convert`` call does the usual model preprocessing: sample the source through a
destination-to-source matrix (nearest, bilinear or bicubic; clamp, zero or repeat at the
edges), convert the pixel format, and write ``normal * (pixel - mean)`` as a float
tensor (NHWC or NCHW), or the converted uint8 pixels.

Semantics follow MNN (checked against the real wheel): destination pixel (x, y) reads
the source at ``M (x, y)`` with no half-pixel offset; samples are rounded to uint8 before
the format conversion; gray is MNN's ``(19 R + 38 G + 7 B) >> 6``; rows are walked in
512-pixel tiles with single-precision steps, as MNN does. Differences from the x86
wheel: REPEAT really tiles the image (the wheel clamps), BICUBIC is bicubic (a = -0.5,
MNN's formula; the wheel samples nearest), and YCrCb/YUV/HSV/XYZ/BGR565/555
destinations use OpenCV's formulas.
"""
import math

import numpy as np

from . import constants as C
from ._image import as_array, threads
from .color import cvtColor
from .._cython import image_process as _k

__all__ = ["Matrix", "ImageProcess", "CVMatrix", "CVImageProcess",
           "CV_ImageFormat_RGBA", "CV_ImageFormat_RGB", "CV_ImageFormat_BGR",
           "CV_ImageFormat_GRAY", "CV_ImageFormat_BGRA", "CV_ImageFormat_YCrCb",
           "CV_ImageFormat_YUV", "CV_ImageFormat_HSV", "CV_ImageFormat_XYZ",
           "CV_ImageFormat_BGR555", "CV_ImageFormat_BGR565", "CV_ImageFormat_YUV_NV21",
           "CV_ImageFormat_YUV_NV12", "CV_ImageFormat_YUV_I420", "CV_ImageFormat_HSV_FULL",
           "CV_Filter_NEAREST", "CV_Filter_BILINEAL", "CV_Filter_BILINEAR",
           "CV_Filter_BICUBIC", "CV_Wrap_CLAMP_TO_EDGE", "CV_Wrap_ZERO", "CV_Wrap_REPEAT"]

# MNN's ImageFormat, Filter and Wrap numbering.
CV_ImageFormat_RGBA, CV_ImageFormat_RGB, CV_ImageFormat_BGR, CV_ImageFormat_GRAY = 0, 1, 2, 3
CV_ImageFormat_BGRA, CV_ImageFormat_YCrCb, CV_ImageFormat_YUV, CV_ImageFormat_HSV = 4, 5, 6, 7
CV_ImageFormat_XYZ, CV_ImageFormat_BGR555, CV_ImageFormat_BGR565 = 8, 9, 10
CV_ImageFormat_YUV_NV21, CV_ImageFormat_YUV_NV12, CV_ImageFormat_YUV_I420 = 11, 12, 13
CV_ImageFormat_HSV_FULL = 14
CV_Filter_NEAREST, CV_Filter_BILINEAL, CV_Filter_BICUBIC = 0, 1, 2
CV_Filter_BILINEAR = CV_Filter_BILINEAL
CV_Wrap_CLAMP_TO_EDGE, CV_Wrap_ZERO, CV_Wrap_REPEAT = 0, 1, 2

_BPP = {CV_ImageFormat_RGBA: 4, CV_ImageFormat_RGB: 3, CV_ImageFormat_BGR: 3,
        CV_ImageFormat_GRAY: 1, CV_ImageFormat_BGRA: 4, CV_ImageFormat_YCrCb: 3,
        CV_ImageFormat_YUV: 3, CV_ImageFormat_HSV: 3, CV_ImageFormat_XYZ: 3,
        CV_ImageFormat_BGR555: 2, CV_ImageFormat_BGR565: 2, CV_ImageFormat_HSV_FULL: 3}
_YUV420 = {CV_ImageFormat_YUV_NV21: C.COLOR_YUV2RGB_NV21,
           CV_ImageFormat_YUV_NV12: C.COLOR_YUV2RGB_NV12,
           CV_ImageFormat_YUV_I420: C.COLOR_YUV2RGB_I420}
# Channel orders (as indices into R, G, B, A) of the plain formats.
_ORDER = {CV_ImageFormat_RGBA: (0, 1, 2, 3), CV_ImageFormat_RGB: (0, 1, 2),
          CV_ImageFormat_BGR: (2, 1, 0), CV_ImageFormat_BGRA: (2, 1, 0, 3)}
# Colour spaces reached from RGB with OpenCV's formulas.
_FROM_RGB = {CV_ImageFormat_YCrCb: C.COLOR_RGB2YCrCb, CV_ImageFormat_YUV: C.COLOR_RGB2YUV,
             CV_ImageFormat_HSV: C.COLOR_RGB2HSV, CV_ImageFormat_XYZ: C.COLOR_RGB2XYZ,
             CV_ImageFormat_BGR555: C.COLOR_RGB2BGR555,
             CV_ImageFormat_BGR565: C.COLOR_RGB2BGR565,
             CV_ImageFormat_HSV_FULL: C.COLOR_RGB2HSV_FULL}


class Matrix:
    """A 3x3 transform in MNN's (Skia's) conventions, stored as float32 row-major.

    ``set*`` replace the matrix; ``pre*`` multiply on the right (the new transform applies
    first to points); ``post*`` multiply on the left. Angles are in degrees; positive
    rotates clockwise in image coordinates (y down).
    """

    def __init__(self):
        self._m = np.eye(3, dtype=np.float64)

    # -- reading and writing -------------------------------------------------------------
    def read(self):
        """The 9 values, row by row."""
        return [float(np.float32(v)) for v in self._m.reshape(-1)]

    def write(self, values):
        """Set all 9 values from a flat sequence."""
        vals = [float(v) for v in values]
        if len(vals) != 9:
            raise ValueError(f"mnn.cv.Matrix.write: needs 9 values, got {len(vals)}")
        m = np.array(vals, dtype=np.float64).reshape(3, 3)
        if not np.all(np.isfinite(m)):
            raise ValueError(f"mnn.cv.Matrix.write: values must be finite, got {vals}")
        self._m = m

    def get(self, index):
        """Value at flat index 0..8."""
        return float(np.float32(self._m.reshape(-1)[int(index)]))

    def set(self, index, value):
        """Set the value at flat index 0..8."""
        if not np.isfinite(float(value)):
            raise ValueError(f"mnn.cv.Matrix.set: value must be finite, got {value}")
        flat = self._m.reshape(-1)
        flat[int(index)] = float(value)

    def reset(self):
        """Back to the identity."""
        self._m = np.eye(3)

    setIdentity = reset

    def isIdentity(self):
        return bool(np.array_equal(self._m, np.eye(3)))

    def array(self):
        """The matrix as a (3, 3) float64 array (a copy)."""
        return self._m.copy()

    def __repr__(self):
        return f"Matrix({self.read()})"

    # -- building blocks -----------------------------------------------------------------
    # Building blocks are computed in single precision, as MNN's (Skia's) matrix does, so
    # pivots and translations round the same way.
    @staticmethod
    def _scale(sx, sy, px, py):
        sx, sy, px, py = (np.float32(v) for v in (sx, sy, px, py))
        return np.array([[sx, 0, px - sx * px], [0, sy, py - sy * py], [0, 0, 1]], float)

    @staticmethod
    def _rotate(degrees, px, py):
        rad = math.radians(degrees)
        s, c = np.float32(math.sin(rad)), np.float32(math.cos(rad))
        px, py, one = np.float32(px), np.float32(py), np.float32(1)
        return np.array([[c, -s, s * py + (one - c) * px],
                         [s, c, -s * px + (one - c) * py], [0, 0, 1]], float)

    @staticmethod
    def _translate(dx, dy):
        return np.array([[1, 0, np.float32(dx)], [0, 1, np.float32(dy)], [0, 0, 1]], float)

    @staticmethod
    def _skew(kx, ky, px, py):
        kx, ky, px, py = (np.float32(v) for v in (kx, ky, px, py))
        return np.array([[1, kx, -kx * py], [ky, 1, -ky * px], [0, 0, 1]], float)

    def _f32(self):
        # MNN keeps float32 entries; round after every operation as it does.
        m = self._m.astype(np.float32).astype(np.float64)
        if not np.all(np.isfinite(m)):
            raise ValueError(f"mnn.cv.Matrix: the result has non-finite values: "
                             f"{m.reshape(-1).tolist()}")
        self._m = m

    def _apply(self, other, how):
        if how == "set":
            self._m = other
        elif how == "pre":
            self._m = self._m @ other
        else:
            self._m = other @ self._m
        self._f32()

    def setScale(self, sx, sy, px=0.0, py=0.0):
        self._apply(self._scale(float(sx), float(sy), float(px), float(py)), "set")

    def preScale(self, sx, sy, px=0.0, py=0.0):
        self._apply(self._scale(float(sx), float(sy), float(px), float(py)), "pre")

    def postScale(self, sx, sy, px=0.0, py=0.0):
        self._apply(self._scale(float(sx), float(sy), float(px), float(py)), "post")

    def setRotate(self, degrees, px=0.0, py=0.0):
        self._apply(self._rotate(float(degrees), float(px), float(py)), "set")

    def preRotate(self, degrees, px=0.0, py=0.0):
        self._apply(self._rotate(float(degrees), float(px), float(py)), "pre")

    def postRotate(self, degrees, px=0.0, py=0.0):
        self._apply(self._rotate(float(degrees), float(px), float(py)), "post")

    def setTranslate(self, dx, dy):
        self._apply(self._translate(float(dx), float(dy)), "set")

    def preTranslate(self, dx, dy):
        self._apply(self._translate(float(dx), float(dy)), "pre")

    def postTranslate(self, dx, dy):
        self._apply(self._translate(float(dx), float(dy)), "post")

    def setSkew(self, kx, ky, px=0.0, py=0.0):
        self._apply(self._skew(float(kx), float(ky), float(px), float(py)), "set")

    def preSkew(self, kx, ky, px=0.0, py=0.0):
        self._apply(self._skew(float(kx), float(ky), float(px), float(py)), "pre")

    def postSkew(self, kx, ky, px=0.0, py=0.0):
        self._apply(self._skew(float(kx), float(ky), float(px), float(py)), "post")

    def setConcat(self, a, b):
        """self = a * b."""
        self._apply(_as_matrix(a)._m @ _as_matrix(b)._m, "set")

    def preConcat(self, other):
        self._apply(_as_matrix(other)._m, "pre")

    def postConcat(self, other):
        self._apply(_as_matrix(other)._m, "post")

    def invert(self):
        """Invert in place (as pymnn's ``CVMatrix.invert``); a singular matrix raises."""
        det = np.linalg.det(self._m)
        if not np.isfinite(det) or abs(det) < 1e-12:
            raise ValueError(f"mnn.cv.Matrix.invert: matrix is singular: {self.read()}")
        self._m = np.linalg.inv(self._m)
        self._f32()

    def mapPoints(self, points):
        """Map a flat [x0, y0, x1, y1, ...] list; returns the mapped flat list."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        homo = np.hstack([pts, np.ones((len(pts), 1))]) @ self._m.T
        with np.errstate(divide="ignore", invalid="ignore"):
            out = homo[:, :2] / np.where(homo[:, 2:] == 0, 1.0, homo[:, 2:])
        return [float(v) for v in out.reshape(-1)]

    def setPolyToPoly(self, src, dst):
        """The transform mapping 1-4 ``src`` points onto ``dst`` points (flat x, y lists):
        translation, scale+rotation, affine or perspective by the point count."""
        s = np.asarray(src, dtype=np.float64).reshape(-1, 2)
        d = np.asarray(dst, dtype=np.float64).reshape(-1, 2)
        if len(s) != len(d) or not 1 <= len(s) <= 4:
            raise ValueError("mnn.cv.Matrix.setPolyToPoly: needs 1 to 4 points in both lists "
                             f"(got {len(s)} and {len(d)})")
        n = len(s)
        if n == 1:
            m = self._translate(*(d[0] - s[0]))
        elif n == 2:
            # Similarity: rotation + uniform scale + translation.
            vs, vd = s[1] - s[0], d[1] - d[0]
            denom = vs @ vs
            if denom == 0:
                raise ValueError("mnn.cv.Matrix.setPolyToPoly: the two src points coincide")
            a = (vs @ vd) / denom
            b = (vs[0] * vd[1] - vs[1] * vd[0]) / denom
            m = np.array([[a, -b, 0], [b, a, 0], [0, 0, 1]], float)
            m[:2, 2] = d[0] - m[:2, :2] @ s[0]
        elif n == 3:
            from .warp import getAffineTransform

            m = np.vstack([getAffineTransform(s, d), [0, 0, 1]])
        else:
            from .warp import getPerspectiveTransform

            m = getPerspectiveTransform(s, d)
        self._apply(m, "set")


def _as_matrix(m):
    if isinstance(m, Matrix):
        return m
    out = Matrix()
    arr = np.asarray(m, dtype=np.float64)
    if arr.size == 6:
        arr = np.vstack([arr.reshape(2, 3), [0, 0, 1]])
    if arr.size != 9:
        raise ValueError(f"mnn.cv: a matrix needs 6 or 9 values, got {arr.size}")
    out.write(arr.reshape(-1))
    return out


class ImageProcess:
    """MNN's image preprocessing: sample + format conversion + normalisation in one call.

    Parameters
    ----------
    config : dict, optional
        pymnn's keys: ``filterType`` (``CV_Filter_*``, default NEAREST), ``sourceFormat``
        and ``destFormat`` (``CV_ImageFormat_*``, default RGBA), ``wrap`` (``CV_Wrap_*``,
        default CLAMP_TO_EDGE), ``mean`` and ``normal`` (up to 4 floats; defaults 0 and 1).
        The same names are accepted as keyword arguments.
    """

    def __init__(self, config=None, **kwargs):
        cfg = dict(config or {})
        cfg.update(kwargs)
        unknown = set(cfg) - {"filterType", "sourceFormat", "destFormat", "wrap", "mean",
                              "normal"}
        if unknown:
            raise ValueError(f"mnn.cv.ImageProcess: unknown config keys {sorted(unknown)}")
        self.filterType = int(cfg.get("filterType", CV_Filter_NEAREST))
        self.sourceFormat = int(cfg.get("sourceFormat", CV_ImageFormat_RGBA))
        self.destFormat = int(cfg.get("destFormat", CV_ImageFormat_RGBA))
        self.wrap = int(cfg.get("wrap", CV_Wrap_CLAMP_TO_EDGE))
        self.mean = self._four(cfg.get("mean", (0, 0, 0, 0)), 0.0, "mean")
        self.normal = self._four(cfg.get("normal", (1, 1, 1, 1)), 1.0, "normal")
        if self.filterType not in (0, 1, 2):
            raise ValueError(f"mnn.cv.ImageProcess: filterType {self.filterType} is not one "
                             f"of CV_Filter_NEAREST/BILINEAL/BICUBIC")
        if self.wrap not in (0, 1, 2):
            raise ValueError(f"mnn.cv.ImageProcess: wrap {self.wrap} is not one of "
                             f"CV_Wrap_CLAMP_TO_EDGE/ZERO/REPEAT")
        if self.sourceFormat not in _BPP and self.sourceFormat not in _YUV420:
            raise ValueError(f"mnn.cv.ImageProcess: unknown sourceFormat {self.sourceFormat}")
        if self.sourceFormat in _FROM_RGB:
            raise ValueError("mnn.cv.ImageProcess: sourceFormat must be RGBA, RGB, BGR, BGRA, "
                             "GRAY or a YUV 4:2:0 format")
        if self.destFormat not in _BPP:
            raise ValueError(f"mnn.cv.ImageProcess: destFormat {self.destFormat} cannot be "
                             f"produced")
        self._matrix = Matrix()
        self._padding = 0

    @staticmethod
    def _four(values, fill, name):
        vals = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
        if len(vals) > 4:
            raise ValueError(f"mnn.cv.ImageProcess: {name} has more than 4 values")
        return np.array(vals + [fill] * (4 - len(vals)), dtype=np.float32)

    def setMatrix(self, matrix):
        """Set the destination -> source transform (a Matrix, or 6/9 numbers)."""
        self._matrix = _as_matrix(matrix)

    def matrix(self):
        return self._matrix

    def setPadding(self, value):
        """Value of source pixels outside the image with CV_Wrap_ZERO (0..255)."""
        value = int(value)
        if not 0 <= value <= 255:
            raise ValueError(f"mnn.cv.ImageProcess.setPadding: value must be 0..255, got {value}")
        self._padding = value

    # -- the pipeline ------------------------------------------------------------------
    def _source(self, src, iw, ih, stride):
        data = np.ascontiguousarray(as_array(src, "ImageProcess.convert", "src"))
        if data.dtype != np.uint8:
            raise TypeError(f"mnn.cv.ImageProcess.convert: src must be uint8, got {data.dtype}")
        iw, ih, stride = int(iw), int(ih), int(stride)
        if iw <= 0 or ih <= 0:
            raise ValueError(f"mnn.cv.ImageProcess.convert: bad source size {iw}x{ih}")
        flat = data.reshape(-1)
        if self.sourceFormat in _YUV420:
            stride = stride or iw
            need = stride * ih * 3 // 2
            if ih % 2 or iw % 2 or stride < iw or flat.size < need:
                raise ValueError(f"mnn.cv.ImageProcess.convert: a {iw}x{ih} YUV 4:2:0 image "
                                 f"with stride {stride} needs even sizes and {need} bytes, "
                                 f"got {flat.size}")
            planes = flat[:need].reshape(ih * 3 // 2, stride)[:, :iw]
            rgb = cvtColor(np.ascontiguousarray(planes), _YUV420[self.sourceFormat])
            return np.ascontiguousarray(rgb.reshape(ih, iw * 3)), 3, (0, 1, 2)
        bpp = _BPP[self.sourceFormat]
        stride = stride or iw * bpp
        if stride < iw * bpp or flat.size < stride * (ih - 1) + iw * bpp:
            raise ValueError(f"mnn.cv.ImageProcess.convert: a {iw}x{ih} image with {bpp} "
                             f"bytes per pixel and stride {stride} needs "
                             f"{stride * (ih - 1) + iw * bpp} bytes, got {flat.size}")
        if flat.size < stride * ih:
            flat = np.concatenate([flat, np.zeros(stride * ih - flat.size, np.uint8)])
        rows = flat[:stride * ih].reshape(ih, stride)
        return rows, bpp, _ORDER.get(self.sourceFormat)

    def _convert_format(self, img, src_order):
        dst = self.destFormat
        if self.sourceFormat == CV_ImageFormat_GRAY:
            if dst == CV_ImageFormat_GRAY:
                return img
            if dst in _ORDER:
                out = np.repeat(img, len(_ORDER[dst]), axis=2)
                if len(_ORDER[dst]) == 4:
                    out[..., 3] = 255
                return out
            raise ValueError("mnn.cv.ImageProcess: GRAY converts only to GRAY, RGB(A), BGR(A)")
        # Planes in R, G, B(, A) order.
        rgb = [img[..., src_order[k]] for k in range(3)]
        alpha = img[..., src_order[3]] if len(src_order) == 4 else None
        if dst == CV_ImageFormat_GRAY:
            r, g, b = (p.astype(np.int32) for p in rgb)
            return ((19 * r + 38 * g + 7 * b) >> 6).astype(np.uint8)[..., np.newaxis]
        if dst in _ORDER:
            planes = rgb + [alpha if alpha is not None else np.full_like(rgb[0], 255)]
            return np.ascontiguousarray(np.stack([planes[i] for i in _ORDER[dst]], axis=2))
        return cvtColor(np.ascontiguousarray(np.stack(rgb, axis=2)), _FROM_RGB[dst]).reshape(
            img.shape[0], img.shape[1], -1)

    def _run(self, src, iw, ih, stride, ow, oh):
        rows, bpp, order = self._source(src, iw, ih, stride)
        if ow <= 0 or oh <= 0:
            raise ValueError(f"mnn.cv.ImageProcess.convert: bad destination size {ow}x{oh}")
        sampled = np.empty((oh, ow, bpp), dtype=np.uint8)
        m = np.ascontiguousarray(self._matrix._m.reshape(-1), dtype=np.float32)
        try:
            inv = np.linalg.inv(self._matrix._m)
        except np.linalg.LinAlgError:
            inv = np.zeros((3, 3))  # MNN leaves the inverse unset: clipping maps to 0
        inv = np.ascontiguousarray(inv.reshape(-1), dtype=np.float32)
        _k.sample(rows, int(iw), bpp, sampled, m, inv, self.filterType, self.wrap,
                  self._padding, threads(sampled.size * 4))
        return self._convert_format(sampled, order)

    def convert(self, src, iw, ih, stride, dst):
        """Process ``src`` (``iw`` x ``ih`` pixels, rows ``stride`` bytes apart, 0 for
        packed) into ``dst``.

        ``dst`` is an ``mnn.Tensor`` (its dimension type picks NHWC or NCHW; float32 gets
        ``normal * (pixel - mean)``, uint8 the converted pixels) or a writable numpy array
        of shape (1, H, W, C) / (H, W, C), filled in place as NHWC. Returns None.
        """
        if hasattr(dst, "getDimensionType") and hasattr(dst, "fromNumpy"):
            shape = tuple(dst.getShape())
            nchw = dst.getDimensionType() != 0
            dtype = np.asarray(dst.getNumpyData()).dtype
            result = self._tensor_data(src, iw, ih, stride, shape, nchw, dtype)
            dst.fromNumpy(result)
            return None
        if not isinstance(dst, np.ndarray) or not dst.flags.writeable:
            raise TypeError("mnn.cv.ImageProcess.convert: dst must be an mnn.Tensor or a "
                            "writable numpy array")
        shape = dst.shape if dst.ndim == 4 else (1,) + dst.shape
        if (dst.dtype == np.float32 and dst.flags.c_contiguous and len(shape) == 4
                and not (isinstance(src, np.ndarray) and np.shares_memory(dst, src))):
            # The fused path can write straight into a packed float32 NHWC array.
            target = dst.reshape(shape[1:])
        else:
            target = None
        result = self._tensor_data(src, iw, ih, stride, shape, False, dst.dtype, target)
        if result is not target:
            dst[...] = result.reshape(dst.shape)
        return None

    def _fused_channels(self, oc, dtype, ow, oh):
        # Source byte per output channel for the fused bilinear path (-1: an added opaque
        # alpha, -2: a channel beyond the format's), or None when that path does not
        # apply (other filters, wraps, perspective, colour spaces, uint8 output).
        src_order = _ORDER.get(self.sourceFormat)
        dst_order = _ORDER.get(self.destFormat)
        affine = np.array_equal(self._matrix._m[2], [0.0, 0.0, 1.0])
        if (np.dtype(dtype) != np.float32 or self.filterType != CV_Filter_BILINEAL
                or self.wrap != CV_Wrap_CLAMP_TO_EDGE or not affine or src_order is None
                or dst_order is None or oc < len(dst_order) or ow <= 0 or oh <= 0):
            return None
        chan = [-2] * oc
        for c, plane in enumerate(dst_order):
            if plane < 3:
                chan[c] = src_order[plane]
            else:
                chan[c] = src_order[3] if len(src_order) == 4 else -1
        return np.array(chan, dtype=np.intc)

    def _tensor_data(self, src, iw, ih, stride, shape, nchw, dtype, target=None):
        # ``target``: an (H, W, C) float32 C-contiguous array the fused path may fill in
        # place (then it is returned); any other path returns a new (1, ...) array.
        if len(shape) != 4 or shape[0] != 1:
            raise ValueError(f"mnn.cv.ImageProcess.convert: dst must be 1 x H x W x C "
                             f"(or 1 x C x H x W), got shape {shape}")
        oc, oh, ow = (shape[1], shape[2], shape[3]) if nchw else (shape[3], shape[1], shape[2])
        fused = self._fused_channels(oc, dtype, ow, oh)
        if fused is not None:
            # The usual preprocessing step in one pass: sample, reorder, normalise.
            rows, bpp, _ = self._source(src, iw, ih, stride)
            fill = target is not None and not nchw and target.shape == (oh, ow, oc)
            out = target if fill else np.empty((oc, oh, ow) if nchw else (oh, ow, oc),
                                               np.float32)
            m = np.ascontiguousarray(self._matrix._m.reshape(-1), dtype=np.float32)
            _k.sample_linear_norm(rows, int(iw), bpp, out, m, fused, self.mean, self.normal,
                                  int(nchw), threads(out.size * 4))
            return out if fill else out[np.newaxis]
        img = self._run(src, iw, ih, stride, ow, oh)
        cn = img.shape[2]
        if oc < cn:
            raise ValueError(f"mnn.cv.ImageProcess.convert: dst has {oc} channels but "
                             f"destFormat gives {cn}")
        if np.dtype(dtype) == np.uint8:
            out = np.zeros((oh, ow, oc), np.uint8)
            out[..., :cn] = img
            return out.transpose(2, 0, 1)[np.newaxis] if nchw else out[np.newaxis]
        if np.dtype(dtype) != np.float32:
            raise TypeError(f"mnn.cv.ImageProcess.convert: dst must be float32 or uint8, "
                            f"got {np.dtype(dtype)}")
        out = np.empty((oc, oh, ow) if nchw else (oh, ow, oc), np.float32)
        _k.normalize(np.ascontiguousarray(img), out, self.mean, self.normal, int(nchw),
                     threads(out.size))
        return out[np.newaxis]

    def createImageTensor(self, dtype, width, height, channel, data=None):
        """A (1, height, width, channel) NHWC ``mnn.Tensor`` (pymnn's helper)."""
        from ..runtime.tensor import Tensor, Tensor_DimensionType_Tensorflow

        return Tensor((1, int(height), int(width), int(channel)), dtype,
                      Tensor_DimensionType_Tensorflow)


# pymnn's legacy names.
CVMatrix = Matrix
CVImageProcess = ImageProcess
