"""ImageProcess / Matrix against the real MNN wheel (and numpy for what the wheel lacks)."""
import contextlib
import io

import cv2
import numpy as np
import pytest

import mnn
import mnn.cv as cv
from cv_helpers import photo_like

with contextlib.redirect_stdout(io.StringIO()):  # `import MNN` prints a banner
    import MNN

_IMG4 = photo_like(97, 131, 4)
_PLAIN = {"RGBA": 0, "RGB": 1, "BGR": 2, "GRAY": 3, "BGRA": 4}
_BPP = {0: 4, 1: 3, 2: 3, 3: 1, 4: 4, 5: 3, 6: 3, 7: 3, 8: 3, 14: 3}
_MEAN = (10.0, 20.0, 30.0, 5.0)
_NORMAL = (0.5, 0.25, 2.0, 1.0)
_MATRICES = [("setScale", 131 / 50, 97 / 40), ("setRotate", 20, 60, 40),
             ("setScale", 0.7, 0.9, 3, 4)]


def _real(cfg, mat, src, shape, dim_type, halide=None, pad=None):
    p = MNN.CVImageProcess(cfg)
    m = MNN.CVMatrix()
    getattr(m, mat[0])(*mat[1:])
    p.setMatrix(m)
    if pad is not None:
        p.setPadding(pad)
    t = MNN.Tensor(shape, halide or MNN.Halide_Type_Float, dim_type)
    p.convert(src, 131, 97, 0, t)
    return np.array(t.getNumpyData()).copy()


def _ours(cfg, mat, src, shape, dim_type, halide=None, pad=None):
    p = cv.ImageProcess(cfg)
    m = cv.Matrix()
    getattr(m, mat[0])(*mat[1:])
    p.setMatrix(m)
    if pad is not None:
        p.setPadding(pad)
    t = mnn.Tensor(shape, halide or mnn.Halide_Type_Float, dim_type)
    p.convert(src, 131, 97, 0, t)
    return t.getNumpyData()


@pytest.mark.parametrize("sname", list(_PLAIN))
@pytest.mark.parametrize("filt", [cv.CV_Filter_NEAREST, cv.CV_Filter_BILINEAL])
@pytest.mark.parametrize("wrap", [cv.CV_Wrap_CLAMP_TO_EDGE, cv.CV_Wrap_ZERO])
def test_sampling_and_normalisation_match_wheel(sname, filt, wrap):
    sf = _PLAIN[sname]
    src = np.ascontiguousarray(_IMG4[..., :_BPP[sf]])
    oc = _BPP[sf]
    cfg = {"sourceFormat": sf, "destFormat": sf, "filterType": filt, "wrap": wrap,
           "mean": _MEAN, "normal": _NORMAL}
    for mat in _MATRICES:
        theirs = _real(cfg, mat, src, (1, 40, 50, oc), MNN.Tensor_DimensionType_Tensorflow,
                       pad=7)
        ours = _ours(cfg, mat, src, (1, 40, 50, oc), mnn.Tensor_DimensionType_Tensorflow,
                     pad=7)
        # Bilinear samples may round one uint8 level apart (the wheel's SIMD samplers).
        tol = 1e-4 if filt == cv.CV_Filter_NEAREST else np.float32(_NORMAL[:oc]) * 1.001
        assert (np.abs(ours - theirs) <= tol).all(), np.abs(ours - theirs).max()


@pytest.mark.parametrize("sname", ["RGB", "BGR", "RGBA"])
def test_fused_bilinear_into_numpy_dst_matches_wheel(sname):
    # Preprocessing into a packed float32 NHWC numpy array (filled in place) with a
    # matrix reaching the image's last row and column, where a 3-byte pixel cannot be
    # read as one 4-byte vector.
    sf = _PLAIN[sname]
    src = np.ascontiguousarray(_IMG4[..., :_BPP[sf]])
    cfg = {"sourceFormat": sf, "destFormat": _PLAIN["RGB"], "filterType": 1,
           "mean": _MEAN, "normal": _NORMAL}
    mat = ("setScale", 131 / 45, 97 / 33)
    theirs = _real(cfg, mat, src, (1, 40, 50, 3), MNN.Tensor_DimensionType_Tensorflow)
    p = cv.ImageProcess(cfg)
    m = cv.Matrix()
    m.setScale(*mat[1:])
    p.setMatrix(m)
    ours = np.full((1, 40, 50, 3), np.nan, np.float32)
    assert p.convert(src, 131, 97, 0, ours) is None
    assert (np.abs(ours - theirs) <= np.float32(_NORMAL[:3]) * 1.001).all()


# The wheel's uint8 path converts these pairs correctly; its float path leaves the
# destination uninitialised for every pair that changes the channel layout, and 3 -> 4
# channel conversions copy raw bytes: those are checked against cv2 below instead.
_WHEEL_PAIRS = [("RGBA", "RGB"), ("RGBA", "BGR"), ("RGBA", "GRAY"), ("RGBA", "BGRA"),
                ("BGRA", "RGBA"), ("BGRA", "BGR"), ("BGRA", "RGB"), ("BGRA", "GRAY"),
                ("RGB", "BGR"), ("RGB", "GRAY"), ("BGR", "RGB"), ("BGR", "GRAY"),
                ("RGB", "YCrCb"), ("RGB", "YUV"), ("RGB", "HSV"), ("RGB", "XYZ"),
                ("RGB", "HSV_FULL"), ("BGR", "YCrCb"), ("BGR", "YUV"), ("BGR", "HSV"),
                ("BGR", "XYZ"), ("BGR", "HSV_FULL"), ("GRAY", "RGB"), ("GRAY", "BGR")]


def _fmt(name):
    return _PLAIN.get(name, getattr(cv, "CV_ImageFormat_" + name, None))


@pytest.mark.parametrize("sname,dname", _WHEEL_PAIRS)
def test_format_conversion_matches_wheel_uint8(sname, dname):
    sf, df = _fmt(sname), _fmt(dname)
    src = np.ascontiguousarray(_IMG4[..., :_BPP[sf]])
    oc = _BPP[df]
    cfg = {"sourceFormat": sf, "destFormat": df, "filterType": cv.CV_Filter_BILINEAL}
    mat = ("setRotate", 20, 60, 40)
    theirs = _real(cfg, mat, src, (1, 40, 50, oc), MNN.Tensor_DimensionType_Tensorflow,
                   MNN.Halide_Type_Uint8)
    ours = _ours(cfg, mat, src, (1, 40, 50, oc), mnn.Tensor_DimensionType_Tensorflow,
                 mnn.Halide_Type_Uint8)
    # OpenCV-formula colour spaces may differ from MNN's integer versions by one level.
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1


@pytest.mark.parametrize("sname,dname,code", [("RGB", "RGBA", cv2.COLOR_RGB2RGBA),
                                             ("BGR", "RGBA", cv2.COLOR_BGR2RGBA),
                                             ("BGR", "BGRA", cv2.COLOR_BGR2BGRA),
                                             ("GRAY", "RGBA", cv2.COLOR_GRAY2RGBA)])
def test_three_to_four_channels_against_cv2(sname, dname, code):
    sf, df = _fmt(sname), _fmt(dname)
    src = np.ascontiguousarray(_IMG4[..., :_BPP[sf]])
    same = {"sourceFormat": sf, "destFormat": sf, "filterType": cv.CV_Filter_BILINEAL}
    conv = dict(same, destFormat=df, mean=_MEAN, normal=_NORMAL)
    mat = ("setScale", 0.7, 0.9, 3, 4)
    sampled = _real(same, mat, src, (1, 40, 50, _BPP[sf]), MNN.Tensor_DimensionType_Tensorflow,
                    MNN.Halide_Type_Uint8)[0]
    expect = (cv2.cvtColor(sampled, code).astype(np.float32) - np.float32(_MEAN)) * \
        np.float32(_NORMAL)
    ours = _ours(conv, mat, src, (1, 40, 50, 4), mnn.Tensor_DimensionType_Tensorflow)
    # Bilinear samples may round one uint8 level apart (the wheel's SIMD samplers).
    assert (np.abs(ours[0] - expect) <= np.float32(_NORMAL) * 1.001).all()


def test_float_output_is_normalised_uint8_output():
    cfg = {"sourceFormat": cv.CV_ImageFormat_BGR, "destFormat": cv.CV_ImageFormat_HSV,
           "filterType": cv.CV_Filter_BILINEAL, "mean": _MEAN, "normal": _NORMAL}
    src = np.ascontiguousarray(_IMG4[..., :3])
    mat = ("setRotate", 20, 60, 40)
    theirs = _real(cfg, mat, src, (1, 40, 50, 3), MNN.Tensor_DimensionType_Tensorflow,
                   MNN.Halide_Type_Uint8)
    ours = _ours(cfg, mat, src, (1, 40, 50, 3), mnn.Tensor_DimensionType_Tensorflow)
    expect = (theirs.astype(np.float32) - np.float32(_MEAN[:3])) * np.float32(_NORMAL[:3])
    assert (np.abs(ours - expect) <= np.float32(_NORMAL[:3]) * 1.001).all()


@pytest.mark.parametrize("filt", [cv.CV_Filter_NEAREST, cv.CV_Filter_BILINEAL])
def test_matches_real_wheel_nchw_uint8_and_rgb_to_rgba(filt):
    cfg = {"sourceFormat": cv.CV_ImageFormat_BGR, "destFormat": cv.CV_ImageFormat_RGB,
           "filterType": filt, "mean": (127.5, 127.5, 127.5, 0),
           "normal": (1 / 127.5, 1 / 127.5, 1 / 127.5, 1)}
    src = np.ascontiguousarray(_IMG4[..., :3])
    mat = ("setScale", 131 / 64, 97 / 48)
    level = 1.001 / 127.5 if filt == cv.CV_Filter_BILINEAL else 1e-5  # one uint8 level
    theirs = _real(cfg, mat, src, (1, 3, 48, 64), MNN.Tensor_DimensionType_Caffe)
    ours = _ours(cfg, mat, src, (1, 3, 48, 64), mnn.Tensor_DimensionType_Caffe)
    np.testing.assert_allclose(ours, theirs, atol=level)
    # RGB into a 4-channel float tensor: the 4th channel is zero.
    theirs = _real(cfg, mat, src, (1, 48, 64, 4), MNN.Tensor_DimensionType_Tensorflow)
    ours = _ours(cfg, mat, src, (1, 48, 64, 4), mnn.Tensor_DimensionType_Tensorflow)
    np.testing.assert_allclose(ours, theirs, atol=level)
    theirs = _real(cfg, mat, src, (1, 48, 64, 3), MNN.Tensor_DimensionType_Tensorflow,
                   MNN.Halide_Type_Uint8)
    ours = _ours(cfg, mat, src, (1, 48, 64, 3), mnn.Tensor_DimensionType_Tensorflow,
                 mnn.Halide_Type_Uint8)
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1


def _cubic_reference(img, m, oh, ow):
    """MNN's bicubic formula (a = -0.5, clamped positions and taps) written in numpy."""
    def w(t):
        t = np.abs(t)
        return np.where(t <= 1, (1.5 * t - 2.5) * t * t + 1,
                        np.where(t < 2, ((-0.5 * t + 2.5) * t - 4) * t + 2, 0.0))
    h, wd = img.shape[:2]
    ys, xs = np.mgrid[0:oh, 0:ow].astype(np.float64)
    px = np.clip(m[0, 0] * xs + m[0, 1] * ys + m[0, 2], 0, wd - 1)
    py = np.clip(m[1, 0] * xs + m[1, 1] * ys + m[1, 2], 0, h - 1)
    x0, y0 = np.floor(px).astype(int), np.floor(py).astype(int)
    out = np.zeros((oh, ow, img.shape[2]))
    for i in range(4):
        for j in range(4):
            sy = np.clip(y0 + i - 1, 0, h - 1)
            sx = np.clip(x0 + j - 1, 0, wd - 1)
            out += (w(i - 1 - (py - y0)) * w(j - 1 - (px - x0)))[..., None] * img[sy, sx]
    return np.clip(np.floor(out + 0.5), 0, 255)


def test_bicubic_against_numpy_reference():
    # The x86 wheel samples nearest for BICUBIC; the formula is MNN's own (a = -0.5).
    src = np.ascontiguousarray(_IMG4[..., :3])
    p = cv.ImageProcess(sourceFormat=cv.CV_ImageFormat_RGB, destFormat=cv.CV_ImageFormat_RGB,
                        filterType=cv.CV_Filter_BICUBIC)
    m = cv.Matrix()
    m.setScale(131 / 50, 97 / 40)
    p.setMatrix(m)
    out = np.zeros((1, 40, 50, 3), np.float32)
    p.convert(src, 131, 97, 0, out)
    ref = _cubic_reference(src.astype(np.float64), m.array(), 40, 50)
    assert np.abs(out[0] - ref).max() <= 1


def test_repeat_wraps_around():
    src = np.ascontiguousarray(_IMG4[..., :3])
    p = cv.ImageProcess(sourceFormat=cv.CV_ImageFormat_RGB, destFormat=cv.CV_ImageFormat_RGB,
                        wrap=cv.CV_Wrap_REPEAT)
    m = cv.Matrix()
    m.setTranslate(100, 80)
    p.setMatrix(m)
    out = np.zeros((1, 30, 40, 3), np.float32)
    p.convert(src, 131, 97, 0, out)
    ys, xs = np.mgrid[0:30, 0:40]
    np.testing.assert_array_equal(out[0], src[(ys + 80) % 97, (xs + 100) % 131])


def test_nv21_source_against_cv2():
    # The wheel's Python convert rejects YUV buffers ("data length does not match tensor
    # size"), so the oracle is cv2's NV21 decoding followed by a nearest 2x downscale.
    rng = np.random.default_rng(0)
    yuv = rng.integers(0, 256, size=(96 * 3 // 2, 130), dtype=np.uint8)
    p = cv.ImageProcess(sourceFormat=cv.CV_ImageFormat_YUV_NV21,
                        destFormat=cv.CV_ImageFormat_BGR)
    m = cv.Matrix()
    m.setScale(2, 2)
    p.setMatrix(m)
    out = np.zeros((1, 48, 65, 3), np.uint8)
    p.convert(yuv, 130, 96, 130, out)
    expect = cv2.cvtColor(yuv, cv2.COLOR_YUV2BGR_NV21)[::2, ::2]
    np.testing.assert_array_equal(out[0], expect)


@pytest.mark.parametrize("ops", [
    [("setScale", 2, 3), ("postRotate", 30), ("preTranslate", 1, 2)],
    [("setRotate", 30, 5, 7), ("preScale", 0.5, 2, 3, 4), ("postTranslate", -3, 9)],
    [("setTranslate", 3, 4), ("postScale", 2, 2, 1, 1), ("preRotate", -45, 2, 2), ("invert",)],
    [("setPolyToPoly", [0, 0, 10, 0, 0, 10], [1, 2, 21, 2, 1, 32])],
    [("setPolyToPoly", [0, 0, 10, 0, 10, 10, 0, 10], [1, 2, 21, 3, 23, 30, 0, 31])],
])
def test_matrix_matches_wheel(ops):
    ours, theirs = cv.Matrix(), MNN.CVMatrix()
    for name, *args in ops:
        getattr(ours, name)(*args)
        getattr(theirs, name)(*[[float(v) for v in a] if isinstance(a, list) else a
                               for a in args])
    np.testing.assert_allclose(ours.read(), theirs.read(), rtol=1e-5, atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="unknown config keys"):
        cv.ImageProcess({"sourceFmt": 1})
    p = cv.ImageProcess(sourceFormat=cv.CV_ImageFormat_RGB, destFormat=cv.CV_ImageFormat_RGB)
    with pytest.raises(ValueError, match="needs 300 bytes"):
        p.convert(np.zeros(10, np.uint8), 10, 10, 0, np.zeros((1, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="dst has 1 channels"):
        p.convert(np.zeros((10, 10, 3), np.uint8), 10, 10, 0, np.zeros((1, 5, 5, 1), np.float32))
    with pytest.raises(ValueError, match="singular"):
        m = cv.Matrix()
        m.setScale(0, 1)
        m.invert()
    assert cv.CVImageProcess is cv.ImageProcess and cv.CVMatrix is cv.Matrix


def test_legacy_top_level_names():
    assert mnn.CVImageProcess is cv.ImageProcess and mnn.CVMatrix is cv.Matrix
    assert mnn.CV_ImageFormat_BGR == MNN.CV_ImageFormat_BGR
    assert mnn.CV_Filter_BILINEAL == MNN.CV_Filter_BILINEAL
    assert (mnn.CV_Wrap_ZERO, mnn.CV_Wrap_CLAMP_TO_EDGE, mnn.CV_Wrap_REPEAT) == \
        (MNN.CV_Wrap_ZERO, MNN.CV_Wrap_CLAMP_TO_EDGE, MNN.CV_Wrap_REPEAT)
    with pytest.raises(AttributeError):
        mnn.CV_NoSuchName  # noqa: B018


def test_hostile_positions_stay_in_bounds():
    # Huge translations with REPEAT and every filter: positions wrap into the image.
    src = np.ascontiguousarray(_IMG4[..., :3])
    for filt in (cv.CV_Filter_NEAREST, cv.CV_Filter_BILINEAL, cv.CV_Filter_BICUBIC):
        for wrap in (cv.CV_Wrap_REPEAT, cv.CV_Wrap_ZERO, cv.CV_Wrap_CLAMP_TO_EDGE):
            p = cv.ImageProcess(sourceFormat=1, destFormat=1, filterType=filt, wrap=wrap)
            m = cv.Matrix()
            m.setScale(3e20, -7e19)
            m.postTranslate(1e30, -1e30)
            p.setMatrix(m)
            out = np.zeros((1, 8, 9, 3), np.float32)
            p.convert(src, 131, 97, 0, out)
            assert np.isfinite(out).all()
    with pytest.raises(ValueError, match="finite"):
        cv.Matrix().write([1, 0, float("nan"), 0, 1, 0, 0, 0, 1])
