"""Shape analysis and histograms against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
from cv_helpers import photo_like

_RNG = np.random.default_rng(1)
_POINT_SETS = [_RNG.integers(0, 100, (int(_RNG.integers(3, 40)), 2)).astype(np.int32)
               for _ in range(100)]


def test_convex_hull():
    for pts in _POINT_SETS:
        for clockwise in (False, True):
            np.testing.assert_array_equal(cv.convexHull(pts, clockwise=clockwise),
                                          cv2.convexHull(pts, clockwise=clockwise))
            ours = cv.convexHull(pts, clockwise=clockwise, returnPoints=False)
            theirs = cv2.convexHull(pts, clockwise=clockwise, returnPoints=False)
            # Of duplicated input points either index is a valid answer: compare points.
            np.testing.assert_array_equal(pts[ours.ravel()], pts[theirs.ravel()])
        f = pts.astype(np.float32) * 1.3
        np.testing.assert_array_equal(cv.convexHull(f), cv2.convexHull(f))


def test_area_bounding_rect_min_area_rect_box_points():
    for pts in _POINT_SETS[:40]:
        assert cv.contourArea(pts) == cv2.contourArea(pts)
        assert cv.contourArea(pts, True) == cv2.contourArea(pts, True)
        assert cv.boundingRect(pts) == cv2.boundingRect(pts)
        f = pts.astype(np.float32) * 1.3 + 0.25
        assert cv.boundingRect(f) == cv2.boundingRect(f)
        ours, theirs = cv.minAreaRect(f), cv2.minAreaRect(f)
        np.testing.assert_allclose(ours[0], theirs[0], atol=1e-3)
        np.testing.assert_allclose(ours[1], theirs[1], atol=1e-3)
        assert abs(ours[2] - theirs[2]) < 1e-3
        np.testing.assert_allclose(cv.boxPoints(theirs), cv2.boxPoints(theirs), atol=1e-4)


def test_bounding_rect_of_mask(gray):
    mask = np.zeros_like(gray)
    mask[20:40, 33:90] = gray[20:40, 33:90] > 100
    assert cv.boundingRect(mask) == cv2.boundingRect(mask)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [100, 150, 200])
def test_connected_components(seed, level):
    gray = photo_like(97, 131, 1, seed=seed)
    mask = (gray > level).astype(np.uint8)
    for connectivity in (4, 8):
        ours = cv.connectedComponentsWithStats(mask, connectivity=connectivity)
        theirs = cv2.connectedComponentsWithStats(mask, connectivity=connectivity)
        assert ours[0] == theirs[0]
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_array_equal(ours[2], theirs[2])
        np.testing.assert_allclose(ours[3], theirs[3])


def test_calc_hist(photo, gray):
    mask = (gray > 150).astype(np.uint8)
    np.testing.assert_array_equal(cv.calcHist([gray], [0], None, [32], [0, 256]),
                                  cv2.calcHist([gray], [0], None, [32], [0, 256]))
    np.testing.assert_array_equal(cv.calcHist([photo], [0, 2], mask, [8, 10], [0, 256, 10, 200]),
                                  cv2.calcHist([photo], [0, 2], mask, [8, 10],
                                               [0, 256, 10, 200]))
    f = photo.astype(np.float32) / 255
    np.testing.assert_array_equal(cv.calcHist([f], [1], None, [7], [0, 1]),
                                  cv2.calcHist([f], [1], None, [7], [0, 1]))
    with pytest.raises(ValueError, match="calcHist"):
        cv.calcHist([gray], [3], None, [8], [0, 256])
