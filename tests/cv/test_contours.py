"""findContours against cv2: same points, same order, same hierarchy."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
from cv_helpers import photo_like


def _synthetic():
    img = np.zeros((60, 80), np.uint8)
    cv2.rectangle(img, (5, 5), (70, 50), 255, -1)
    cv2.rectangle(img, (15, 15), (40, 40), 0, -1)
    cv2.circle(img, (27, 27), 6, 255, -1)
    cv2.circle(img, (60, 20), 4, 0, -1)
    img[55, 3] = 255  # an isolated pixel
    img[0, :10] = 255  # touching the image border
    return img


_IMAGES = [("synthetic", _synthetic())] + [
    (f"photo{seed}", (photo_like(97, 131, 1, seed=seed) > 150).astype(np.uint8))
    for seed in range(3)]


@pytest.mark.parametrize("name,img", _IMAGES, ids=[n for n, _ in _IMAGES])
@pytest.mark.parametrize("mode", [cv2.RETR_EXTERNAL, cv2.RETR_LIST, cv2.RETR_CCOMP,
                                  cv2.RETR_TREE])
@pytest.mark.parametrize("method", [cv2.CHAIN_APPROX_NONE, cv2.CHAIN_APPROX_SIMPLE])
def test_find_contours(name, img, mode, method):
    ours, ours_h = cv.findContours(img, mode, method)
    theirs, theirs_h = cv2.findContours(img, mode, method)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours_h, theirs_h)


def test_offset_and_empty():
    img = _synthetic()
    ours, _ = cv.findContours(img, cv.RETR_LIST, cv.CHAIN_APPROX_SIMPLE, offset=(3, -2))
    theirs, _ = cv2.findContours(img, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE, offset=(3, -2))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    empty = cv.findContours(np.zeros((5, 5), np.uint8), cv.RETR_TREE, cv.CHAIN_APPROX_NONE)
    assert empty == cv2.findContours(np.zeros((5, 5), np.uint8), cv2.RETR_TREE,
                                     cv2.CHAIN_APPROX_NONE)
    with pytest.raises(ValueError, match="mode"):
        cv.findContours(img, 99, cv.CHAIN_APPROX_NONE)
