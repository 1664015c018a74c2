"""A single-channel HW1 numpy image comes back HW, as cv2 returns one-channel images."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import photo_like

_IMG = photo_like(20, 30, 1)[:, :, np.newaxis]
_ROT = cv2.getRotationMatrix2D((10, 10), 10, 1)
_K3 = np.ones((3, 3), np.uint8)

CASES = [
    ("resize", lambda m, a: m.resize(a, (10, 10))),
    ("resize_half", lambda m, a: m.resize(a, (15, 10))),
    ("GaussianBlur", lambda m, a: m.GaussianBlur(a, (3, 3), 0)),
    ("warpAffine", lambda m, a: m.warpAffine(a, _ROT, (30, 20))),
    ("flip", lambda m, a: m.flip(a, 0)),
    ("rotate", lambda m, a: m.rotate(a, 0)),
    ("threshold", lambda m, a: m.threshold(a, 100, 255, 0)[1]),
    ("erode", lambda m, a: m.erode(a, _K3)),
    ("Sobel", lambda m, a: m.Sobel(a, cv2.CV_16S, 1, 0)),
    ("pyrDown", lambda m, a: m.pyrDown(a)),
    ("bitwise_not", lambda m, a: m.bitwise_not(a)),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_hw1_comes_back_hw_like_cv2(name, call):
    ours = call(cv, _IMG.copy())
    theirs = call(cv2, _IMG.copy())
    assert ours.shape == theirs.shape
    assert np.abs(ours.astype(np.int64) - theirs.astype(np.int64)).max() <= 1


def test_var_keeps_its_layout():
    out = cv.GaussianBlur(F.const(_IMG), (3, 3), 0)
    assert isinstance(out, F.Var)
    assert tuple(out.shape) == _IMG.shape
