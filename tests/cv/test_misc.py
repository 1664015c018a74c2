"""threshold, adaptiveThreshold, arithmetic, normalize, channels, masks against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import photo_like

_OTHER = photo_like(97, 131, 3, seed=7)


@pytest.mark.parametrize("kind", [cv2.THRESH_BINARY, cv2.THRESH_BINARY_INV, cv2.THRESH_TRUNC,
                                  cv2.THRESH_TOZERO, cv2.THRESH_TOZERO_INV])
@pytest.mark.parametrize("thresh", [100, 100.7, -3, 300])
def test_threshold(photo, gray, kind, thresh):
    for src in (photo, gray, photo.astype(np.float32), gray.astype(np.int16)):
        ours = cv.threshold(src, thresh, 200.6, kind)
        theirs = cv2.threshold(src, thresh, 200.6, kind)
        assert ours[0] == theirs[0]
        assert ours[1].dtype == theirs[1].dtype
        np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("kind", [cv2.THRESH_BINARY | cv2.THRESH_OTSU,
                                  cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU,
                                  cv2.THRESH_BINARY | cv2.THRESH_TRIANGLE,
                                  cv2.THRESH_TOZERO | cv2.THRESH_TRIANGLE])
def test_threshold_auto(gray, kind):
    for src in (gray, (gray // 2 + 60).astype(np.uint8),
                np.clip(gray.astype(int) * 3 - 200, 0, 255).astype(np.uint8)):
        ours, theirs = cv.threshold(src, 0, 255, kind), cv2.threshold(src, 0, 255, kind)
        assert ours[0] == theirs[0]
        np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("method", [cv2.ADAPTIVE_THRESH_MEAN_C, cv2.ADAPTIVE_THRESH_GAUSSIAN_C])
@pytest.mark.parametrize("kind", [cv2.THRESH_BINARY, cv2.THRESH_BINARY_INV])
def test_adaptive_threshold(gray, method, kind):
    for block, c in [(3, 2), (11, -3.5), (25, 5.2)]:
        ours = cv.adaptiveThreshold(gray, 255, method, kind, block, c)
        theirs = cv2.adaptiveThreshold(gray, 255, method, kind, block, c)
        # The local mean is rounded to uint8 first; a one-level rounding difference there
        # flips a pixel only when it sits exactly at the threshold.
        assert np.mean(ours != theirs) < 0.002


def test_add_weighted_blend(photo):
    ours = cv.addWeighted(photo, 0.3, _OTHER, 0.7, 5.5)
    assert np.abs(ours.astype(int) - cv2.addWeighted(photo, 0.3, _OTHER, 0.7, 5.5)).max() <= 1
    w1 = np.random.default_rng(0).random(photo.shape[:2]).astype(np.float32)
    ours = cv.blendLinear(photo, _OTHER, w1, 1 - w1)
    theirs = cv2.blendLinear(photo, _OTHER, w1, 1 - w1)
    assert np.abs(ours.astype(int) - theirs).max() <= 1


@pytest.mark.parametrize("norm", [cv2.NORM_INF, cv2.NORM_L1, cv2.NORM_L2, cv2.NORM_MINMAX])
def test_normalize(photo, gray, norm):
    f = photo.astype(np.float32)
    np.testing.assert_allclose(cv.normalize(f, None, 1.0, 0, norm),
                               cv2.normalize(f, None, 1.0, 0, norm), rtol=1e-5, atol=1e-6)
    mask = (gray > 128).astype(np.uint8)
    ours = cv.normalize(gray, None, 10, 200, norm, mask=mask)
    theirs = cv2.normalize(gray, None, 10, 200, norm, mask=mask)
    assert np.abs(ours.astype(int) - theirs).max() <= 1


def test_channels_and_tiling(photo):
    parts = cv.split(photo)
    assert isinstance(parts, tuple) and len(parts) == 3
    for a, b in zip(parts, cv2.split(photo)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(cv.merge(parts), cv2.merge(cv2.split(photo)))
    np.testing.assert_array_equal(cv.hconcat([photo, _OTHER]), cv2.hconcat([photo, _OTHER]))
    np.testing.assert_array_equal(cv.vconcat([photo, _OTHER]), cv2.vconcat([photo, _OTHER]))
    merged = cv.merge([F.const(p) for p in parts])
    assert isinstance(merged, F.Var)
    with pytest.raises(ValueError, match="hconcat"):
        cv.hconcat([photo, photo[:10]])


def test_masks_and_bitwise(photo, gray):
    mask = (gray > 128).astype(np.uint8)
    np.testing.assert_array_equal(cv.copyTo(photo, mask), cv2.copyTo(photo, mask))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        np.testing.assert_array_equal(getattr(cv, name)(photo, _OTHER, mask=mask),
                                      getattr(cv2, name)(photo, _OTHER, mask=mask))
        np.testing.assert_array_equal(getattr(cv, name)(photo, _OTHER),
                                      getattr(cv2, name)(photo, _OTHER))
    np.testing.assert_array_equal(cv.bitwise_not(photo, mask=mask),
                                  cv2.bitwise_not(photo, mask=mask))
    np.testing.assert_allclose(cv.mean(photo, mask=mask), cv2.mean(photo, mask=mask))
    np.testing.assert_allclose(cv.mean(gray), cv2.mean(gray))
    with pytest.raises(ValueError, match="mask must have shape"):
        cv.copyTo(photo, mask[:5])
