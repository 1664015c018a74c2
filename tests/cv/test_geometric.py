"""resize, flip and rotate against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import assert_close_u8, photo_like

_MODES = [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA,
          cv2.INTER_LANCZOS4, cv2.INTER_LINEAR_EXACT, cv2.INTER_NEAREST_EXACT]
_SIZES = [(224, 224), (50, 40), (262, 194), (65, 48), (300, 30), (131, 20)]


@pytest.mark.parametrize("interp", _MODES)
@pytest.mark.parametrize("dsize", _SIZES)
def test_resize_uint8(photo, interp, dsize):
    assert_close_u8(cv.resize(photo, dsize, interpolation=interp),
                    cv2.resize(photo, dsize, interpolation=interp))


@pytest.mark.parametrize("interp", _MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.float64])
def test_resize_other_dtypes(photo, interp, dtype):
    src = photo.astype(dtype)
    for dsize in [(224, 224), (65, 48)]:
        ours = cv.resize(src, dsize, interpolation=interp)
        theirs = cv2.resize(src, dsize, interpolation=interp)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64),
                                   atol=1e-2 if np.dtype(dtype).kind == "f" else 1)


@pytest.mark.parametrize("interp", [cv2.INTER_LINEAR, cv2.INTER_AREA, cv2.INTER_CUBIC])
def test_resize_factors_gray_and_channels(gray, photo4, interp):
    assert_close_u8(cv.resize(gray, None, fx=0.37, fy=0.5, interpolation=interp),
                    cv2.resize(gray, None, fx=0.37, fy=0.5, interpolation=interp))
    assert_close_u8(cv.resize(photo4, (0, 0), fx=1.7, fy=2.0, interpolation=interp),
                    cv2.resize(photo4, (0, 0), fx=1.7, fy=2.0, interpolation=interp))
    if interp == cv2.INTER_AREA:
        return  # cv2's INTER_AREA refuses more than 4 channels: no oracle
    five = photo_like(30, 40, 5)
    assert_close_u8(cv.resize(five, (17, 23), interpolation=interp),
                    cv2.resize(five, (17, 23), interpolation=interp))


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("dsize", [(224, 224), (61, 37), (300, 90), (500, 150)])
def test_resize_strong_downscale(channels, dsize):
    # Large bilinear downscales of uint8 take the vertical-first path.
    src = photo_like(541, 963, channels, seed=5)
    assert_close_u8(cv.resize(src, dsize), cv2.resize(src, dsize))
    assert_close_u8(cv.resize(src, dsize, interpolation=cv2.INTER_LINEAR_EXACT),
                    cv2.resize(src, dsize, interpolation=cv2.INTER_LINEAR_EXACT))


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,dsize", [
    ((541, 963), (224, 224)), ((541, 963), (500, 150)), ((40, 30), (301, 211)),
    ((9, 2), (5, 31)), ((2, 2), (7, 1)), ((31, 3), (1, 5)), ((300, 600), (599, 17)),
    ((2, 40), (7, 1))])
def test_resize_linear_pixel_vector_paths(shape, dsize, threads, channels):
    # 3- and 4-channel bilinear uint8 and float32 (one pixel per vector, vertical pass
    # first for strong uint8 downscales) on narrow sources, where the pixel pairs reach
    # the last column and row, and with the rows split over threads.
    src = photo_like(*shape, channels, seed=7)
    F.set_thread_number(threads)
    try:
        assert_close_u8(cv.resize(src, dsize), cv2.resize(src, dsize))
        srcf = src.astype(np.float32) / 7
        np.testing.assert_allclose(cv.resize(srcf, dsize), cv2.resize(srcf, dsize),
                                   rtol=1e-5, atol=1e-3)
    finally:
        F.set_thread_number(1)


@pytest.mark.parametrize("interp", [cv2.INTER_LINEAR, cv2.INTER_LINEAR_EXACT, cv2.INTER_AREA])
@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_resize_exact_half(interp, channels, dtype):
    # Halving averages 2x2 blocks; cv2 gives the same for bilinear and area.
    if interp == cv2.INTER_AREA and channels > 4:
        return  # cv2's INTER_AREA refuses more than 4 channels: no oracle
    src = photo_like(62, 98, channels, seed=3).astype(dtype)
    if dtype == np.float32:
        src = src / 3
    for kwargs in [dict(dsize=(49, 31)), dict(dsize=None, fx=0.5, fy=0.5)]:
        ours = cv.resize(src, interpolation=interp, **kwargs)
        theirs = cv2.resize(src, interpolation=interp, **kwargs)
        if dtype == np.uint8:
            # cv2 averages blocks of up to 4 channels exactly; 5 go through its general
            # bilinear path, which rounds within one level of the mean.
            assert_close_u8(ours, theirs, tol=0 if channels <= 4 else 1)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-5)


def test_resize_var_and_batch(photo):
    out = cv.resize(F.const(photo), (64, 48))
    assert isinstance(out, F.Var)
    assert_close_u8(np.asarray(out), cv2.resize(photo, (64, 48)))
    batched = cv.resize(photo[np.newaxis], (64, 48))
    assert batched.shape == (1, 48, 64, 3)


def test_resize_errors(photo):
    with pytest.raises(ValueError, match="resize: give dsize"):
        cv.resize(photo, (0, 0))
    with pytest.raises(ValueError, match="unknown interpolation"):
        cv.resize(photo, (10, 10), interpolation=17)
    with pytest.raises(TypeError, match="dtype int64"):
        cv.resize(photo.astype(np.int64), (10, 10))
    with pytest.raises(ValueError, match="must be HW, HWC or 1HWC"):
        cv.resize(np.zeros((2, 3, 4, 5, 6), np.uint8), (10, 10))
    with pytest.raises(ValueError, match="negative"):
        cv.resize(photo, (-3, 10))


@pytest.mark.parametrize("code", [0, 1, -1])
def test_flip(photo, code):
    np.testing.assert_array_equal(cv.flip(photo, code), cv2.flip(photo, code))


@pytest.mark.parametrize("code", [cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180,
                                  cv2.ROTATE_90_COUNTERCLOCKWISE])
def test_rotate(photo, gray, code):
    np.testing.assert_array_equal(cv.rotate(photo, code), cv2.rotate(photo, code))
    np.testing.assert_array_equal(cv.rotate(gray, code), cv2.rotate(gray, code))
    with pytest.raises(ValueError, match="rotateCode"):
        cv.rotate(photo, 7)
