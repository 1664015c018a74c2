"""cvtColor / cvtColorTwoPlane against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import assert_close_u8, photo_like

_RNG = np.random.default_rng(5)
# Random pixels cover the colour cube far better than a photo does.
_RANDOM3 = _RNG.integers(0, 256, size=(40, 64, 3), dtype=np.uint8)
_RANDOM4 = _RNG.integers(0, 256, size=(40, 64, 4), dtype=np.uint8)
_RANDOM1 = _RNG.integers(0, 256, size=(40, 64), dtype=np.uint8)
_RANDOM2 = _RNG.integers(0, 256, size=(40, 64, 2), dtype=np.uint8)

FROM3 = ["BGR2BGRA", "BGR2RGBA", "BGR2RGB", "BGR2GRAY", "RGB2GRAY", "BGR2BGR565", "RGB2BGR565",
         "BGR2BGR555", "RGB2BGR555", "BGR2XYZ", "RGB2XYZ", "BGR2YCrCb", "RGB2YCrCb", "BGR2YUV",
         "RGB2YUV", "BGR2HSV", "RGB2HSV", "BGR2HSV_FULL", "RGB2HSV_FULL", "BGR2HLS", "RGB2HLS",
         "BGR2HLS_FULL", "RGB2HLS_FULL", "BGR2Lab", "RGB2Lab", "LBGR2Lab", "LRGB2Lab", "BGR2Luv",
         "RGB2Luv", "LBGR2Luv", "LRGB2Luv", "BGR2YUV_I420", "RGB2YUV_I420", "BGR2YUV_YV12",
         "RGB2YUV_YV12", "BGR2YUV_UYVY", "RGB2YUV_YUY2", "BGR2YUV_YVYU",
         # inverse conversions read any 3-channel buffer
         "XYZ2BGR", "XYZ2RGB", "YCrCb2BGR", "YCrCb2RGB", "YUV2BGR", "YUV2RGB", "HSV2BGR",
         "HSV2RGB", "HSV2BGR_FULL", "HSV2RGB_FULL", "HLS2BGR", "HLS2RGB", "HLS2BGR_FULL",
         "HLS2RGB_FULL"]
# Lab/Luv from any byte triple are mostly outside the RGB gamut, where OpenCV's 8-bit
# fixed-point path clamps differently; these read in-gamut values made by cv2 itself.
LABLUV_INV = [("BGR2Lab", "Lab2BGR"), ("RGB2Lab", "Lab2RGB"), ("LBGR2Lab", "Lab2LBGR"),
              ("LRGB2Lab", "Lab2LRGB"), ("BGR2Luv", "Luv2BGR"), ("RGB2Luv", "Luv2RGB"),
              ("LBGR2Luv", "Luv2LBGR"), ("LRGB2Luv", "Luv2LRGB")]
FROM4 = ["BGRA2BGR", "RGBA2BGR", "BGRA2RGBA", "BGRA2GRAY", "RGBA2GRAY", "BGRA2BGR565",
         "RGBA2BGR555", "BGRA2BGR555", "BGRA2YUV_I420", "RGBA2YUV_YV12", "RGBA2mRGBA",
         "mRGBA2RGBA", "BGR2HSV", "BGR2Lab", "BGR2YCrCb", "BGRA2YUV_YUY2"]
FROM1 = ["GRAY2BGR", "GRAY2BGRA", "GRAY2BGR565", "GRAY2BGR555"]
FROM2 = ["BGR5652BGR", "BGR5652RGB", "BGR5652BGRA", "BGR5652RGBA", "BGR5652GRAY",
         "BGR5552BGR", "BGR5552RGB", "BGR5552BGRA", "BGR5552RGBA", "BGR5552GRAY",
         "YUV2RGB_UYVY", "YUV2BGR_UYVY", "YUV2RGBA_YUY2", "YUV2BGRA_YUY2", "YUV2RGB_YVYU",
         "YUV2BGR_YVYU", "YUV2GRAY_UYVY", "YUV2GRAY_YUY2"]
YUV420 = ["YUV2RGB_NV12", "YUV2BGR_NV12", "YUV2RGBA_NV12", "YUV2BGRA_NV21", "YUV2RGB_NV21",
          "YUV2BGR_I420", "YUV2RGBA_I420", "YUV2BGR_YV12", "YUV2BGRA_YV12", "YUV2GRAY_420"]


def _tolerance(name):
    # OpenCV's 8-bit Lab/Luv interpolate 12-bit tables for gamma and cube root: near black
    # the forward result is up to 2 off exact arithmetic, and its Luv->RGB up to 4.
    if name.startswith("Luv2"):
        return 4
    if "Lab" in name or "Luv" in name:
        return 2
    return 1


def _check(name, src, tol=None):
    tol = _tolerance(name) if tol is None else tol
    code = getattr(cv2, "COLOR_" + name)
    assert getattr(cv, "COLOR_" + name) == code
    theirs = cv2.cvtColor(src, code)
    ours = cv.cvtColor(src, code)
    assert isinstance(ours, np.ndarray)
    assert_close_u8(ours, theirs, tol)


@pytest.mark.parametrize("name", FROM3)
def test_from_3_channels(name):
    # mRGBA and HSV hue wrap are exact; colour-science conversions in double precision are
    # within 1 of OpenCV's fixed-point tables.
    _check(name, _RANDOM3)
    _check(name, photo_like(32, 48))


@pytest.mark.parametrize("fwd,inv", LABLUV_INV)
def test_lab_luv_inverse(fwd, inv):
    _check(inv, cv2.cvtColor(_RANDOM3, getattr(cv2, "COLOR_" + fwd)))


@pytest.mark.parametrize("name", FROM4)
def test_from_4_channels(name):
    _check(name, _RANDOM4)


@pytest.mark.parametrize("name", FROM1)
def test_from_gray(name):
    _check(name, _RANDOM1)


@pytest.mark.parametrize("name", FROM2)
def test_from_2_channels(name):
    _check(name, _RANDOM2)


@pytest.mark.parametrize("name", YUV420)
def test_yuv420(name):
    _check(name, _RANDOM1[:36])


@pytest.mark.parametrize("name", ["YUV2RGB_NV12", "YUV2BGR_NV21", "YUV2RGBA_NV12",
                                  "YUV2BGRA_NV21"])
def test_two_plane(name):
    y = _RANDOM1[:24]
    uv = _RANDOM2[:12, :32]
    code = getattr(cv2, "COLOR_" + name)
    assert_close_u8(cv.cvtColorTwoPlane(y, uv, code), cv2.cvtColorTwoPlane(y, uv, code), 0)


FLOAT = ["BGR2GRAY", "BGR2RGB", "BGR2BGRA", "BGR2XYZ", "XYZ2BGR", "BGR2YCrCb", "YCrCb2BGR",
         "BGR2YUV", "YUV2BGR", "BGR2HSV", "HSV2BGR", "BGR2HLS", "HLS2BGR", "BGR2Lab", "Lab2BGR",
         "BGR2Luv", "Luv2BGR", "RGB2HSV_FULL", "LRGB2Lab"]


@pytest.mark.parametrize("name", FLOAT)
def test_float32(name):
    src = _RANDOM3.astype(np.float32) / 255.0
    code = getattr(cv2, "COLOR_" + name)
    if name.startswith(("HSV", "HLS")):
        src = cv2.cvtColor(src, getattr(cv2, "COLOR_BGR2" + name[:3]))
    elif name.startswith(("Lab", "Luv")):
        src = cv2.cvtColor(src, getattr(cv2, "COLOR_BGR2" + name[:3]))
    theirs = cv2.cvtColor(src, code)
    ours = cv.cvtColor(src, code)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    scale = max(1.0, float(np.abs(theirs).max()))
    # OpenCV's float Lab/Luv use spline approximations of gamma and cube root (errors of a
    # few tenths on a 0..100 scale); the rest is plain single-precision arithmetic.
    atol = 0.5 if ("Lab" in name or "Luv" in name) else 2e-3 * scale
    np.testing.assert_allclose(ours, theirs, atol=atol, rtol=1e-3)


def test_var_in_var_out(photo):
    out = cv.cvtColor(F.const(photo), cv.COLOR_BGR2GRAY)
    assert isinstance(out, F.Var)
    np.testing.assert_array_equal(np.asarray(out), cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY))


def test_batch_axis_kept(photo):
    out = cv.cvtColor(photo[np.newaxis], cv.COLOR_BGR2RGB)
    assert out.shape == (1,) + photo.shape
    np.testing.assert_array_equal(out[0], photo[..., ::-1])


def test_errors(photo):
    with pytest.raises(ValueError, match="cvtColor.*COLOR_BGR2GRAY.*3"):
        cv.cvtColor(photo[..., :2], cv.COLOR_BGR2GRAY)
    with pytest.raises(ValueError, match="unknown colour conversion code"):
        cv.cvtColor(photo, 9999)
    with pytest.raises(ValueError, match="even"):
        cv.cvtColor(_RANDOM1[:35], cv.COLOR_YUV2BGR_NV12)
    with pytest.raises(TypeError, match="float32"):
        cv.cvtColor(photo.astype(np.int32), cv.COLOR_BGR2HSV)
