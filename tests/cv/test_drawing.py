"""Drawing functions against cv2, by pixel agreement on the pixels either one draws."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F

_POLY = np.array([[10, 10], [150, 30], [90, 110], [30, 80]], np.int32)
_TRI = np.array([[10, 10], [150, 30], [90, 110]], np.int32)
_INNER = np.array([[60, 40], [100, 40], [80, 90]], np.int32)
_CONTOUR = _TRI.reshape(-1, 1, 2)

# name, drawing call, minimum agreement. Thin lines, rectangles, filled shapes and thin
# circles use the same rasterisation rules as OpenCV; thick strokes and ellipse arcs are
# rasterised from the same geometry with a slightly different edge rule.
CASES = [
    ("line", lambda m, im: m.line(im, (5, 7), (150, 100), (255, 0, 0), 1), 0.99),
    ("line_4", lambda m, im: m.line(im, (5, 7), (150, 60), (255, 0, 0), 1, m.LINE_4), 0.8),
    ("line_thick5", lambda m, im: m.line(im, (5, 7), (150, 100), (0, 255, 0), 5), 0.9),
    ("line_thick2", lambda m, im: m.line(im, (20, 100), (140, 10), (0, 255, 0), 2), 0.92),
    ("arrowedLine", lambda m, im: m.arrowedLine(im, (10, 10), (140, 90), (0, 0, 255), 2), 0.9),
    ("rectangle", lambda m, im: m.rectangle(im, (10, 20), (100, 90), (9, 99, 199), 3), 0.99),
    ("rectangle_rec", lambda m, im: m.rectangle(im, (10, 20, 60, 50), (1, 2, 3), 2), 0.99),
    ("rectangle_filled", lambda m, im: m.rectangle(im, (10, 20), (100, 90), (9, 99, 199), -1),
     0.99),
    ("circle", lambda m, im: m.circle(im, (80, 60), 40, (255, 255, 0), 1), 0.99),
    ("circle_thick", lambda m, im: m.circle(im, (80, 60), 40, (255, 255, 0), 3), 0.9),
    ("circle_filled", lambda m, im: m.circle(im, (80, 60), 40, (255, 255, 0), -1), 0.99),
    ("ellipse", lambda m, im: m.ellipse(im, (80, 60), (50, 25), 30, 0, 360, (0, 200, 100), 2),
     0.85),
    ("ellipse_arc", lambda m, im: m.ellipse(im, (80, 60), (50, 25), 30, 20, 250, (0, 200, 100),
                                            1), 0.75),
    ("ellipse_filled", lambda m, im: m.ellipse(im, (80, 60), (50, 25), 30, 0, 360,
                                               (0, 200, 100), -1), 0.98),
    ("ellipse_sector", lambda m, im: m.ellipse(im, (80, 60), (50, 25), 10, 0, 120,
                                               (0, 200, 100), -1), 0.98),
    ("fillPoly", lambda m, im: m.fillPoly(im, [_POLY], (50, 60, 70)), 0.98),
    ("fillPoly_two", lambda m, im: m.fillPoly(im, [_TRI, _INNER], (50, 60, 70)), 0.98),
    ("fillConvexPoly", lambda m, im: m.fillConvexPoly(im, _POLY, (5, 6, 7)), 0.98),
    ("polylines", lambda m, im: m.polylines(im, [_POLY], True, (250, 60, 70), 2), 0.93),
    ("drawContours", lambda m, im: m.drawContours(im, [_CONTOUR], -1, (0, 255, 0), 2), 0.93),
    ("drawContours_filled", lambda m, im: m.drawContours(im, [_CONTOUR], -1, (0, 255, 0), -1),
     0.98),
]


@pytest.mark.parametrize("name,draw,minimum", CASES, ids=[c[0] for c in CASES])
def test_drawing_agreement(name, draw, minimum):
    ours = np.zeros((120, 160, 3), np.uint8)
    theirs = np.zeros((120, 160, 3), np.uint8)
    returned = draw(cv, ours)
    draw(cv2, theirs)
    assert returned is ours  # numpy images are drawn on in place, as cv2 does
    drawn = (ours != 0).any(-1) | (theirs != 0).any(-1)
    assert drawn.any()
    agreement = (ours == theirs).all(-1)[drawn].mean()
    assert agreement >= minimum, agreement


def test_ellipse2poly_exact():
    for args in [((80, 60), (50, 25), 30, 0, 360, 5), ((80, 60), (50, 25), 30, 20, 250, 18),
                 ((10, 10), (3, 7), -45, 90, 45, 10)]:
        np.testing.assert_array_equal(cv.ellipse2Poly(*args), cv2.ellipse2Poly(*args))


def test_var_image_gets_a_new_var():
    base = np.zeros((20, 30), np.uint8)
    img = F.const(base)
    out = cv.line(img, (0, 0), (29, 19), 255)
    assert isinstance(out, F.Var)
    assert np.asarray(out).max() == 255 and np.asarray(img).max() == 0


def test_errors():
    with pytest.raises(ValueError, match="thickness"):
        cv.line(np.zeros((5, 5), np.uint8), (0, 0), (4, 4), 255, 0)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros((5, 5), np.uint8)
        ro.setflags(write=False)
        cv.circle(ro, (2, 2), 1, 255)
