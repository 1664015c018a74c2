"""warpAffine, warpPerspective, remap, convertMaps and transform helpers against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import assert_close_u8

_ROT = cv2.getRotationMatrix2D((60, 50), 15, 0.9)
_HOMOG = np.array([[1.1, 0.1, -5], [0.05, 0.9, 3], [1e-3, 5e-4, 1]])
_FLAGS = [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_LANCZOS4,
          cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP]
_BORDERS = [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_WRAP,
            cv2.BORDER_REFLECT_101, cv2.BORDER_TRANSPARENT]


def _compare(ours, theirs, dtype):
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(ours, theirs, atol=1e-2)
    else:
        assert_close_u8(ours, theirs, 1)


@pytest.mark.parametrize("func,mat", [("warpAffine", _ROT), ("warpPerspective", _HOMOG)])
@pytest.mark.parametrize("flags", _FLAGS)
@pytest.mark.parametrize("border", _BORDERS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.uint16])
def test_warps_match_cv2(photo, func, mat, flags, border, dtype):
    src = photo.astype(dtype)
    init = np.full((110, 120, 3), 7, dtype)  # read only by BORDER_TRANSPARENT
    kwargs = dict(flags=flags, borderMode=border, borderValue=(10, 20, 30))
    theirs = getattr(cv2, func)(src, mat, (120, 110), dst=init.copy(), **kwargs)
    ours = getattr(cv, func)(src, mat, (120, 110), dst=init, **kwargs)
    _compare(ours, theirs, dtype)


@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE,
                                    cv2.BORDER_TRANSPARENT])
@pytest.mark.parametrize("shift", [0.0, 0.3, 0.999])
def test_warp_affine_cells_at_image_end(photo, border, shift):
    # A shift of under one pixel puts 2x2 cells on the last row and column, and the output
    # row ends there: the 3-channel bilinear path must keep its reads and writes inside.
    src = np.ascontiguousarray(photo[:40, :50])
    mat = np.float64([[1, 0, shift], [0, 1, shift]])
    init = np.full((40, 50, 3), 7, np.uint8)
    kwargs = dict(flags=cv2.INTER_LINEAR, borderMode=border, borderValue=(10, 20, 30))
    assert_close_u8(cv.warpAffine(src, mat, (50, 40), dst=init.copy(), **kwargs),
                    cv2.warpAffine(src, mat, (50, 40), dst=init.copy(), **kwargs))


def test_warp_gray_and_var(gray):
    ours = cv.warpAffine(F.const(gray), _ROT, (90, 80))
    assert isinstance(ours, F.Var)
    assert_close_u8(np.asarray(ours), cv2.warpAffine(gray, _ROT, (90, 80)))


@pytest.mark.parametrize("interp", [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC,
                                    cv2.INTER_LANCZOS4])
@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REFLECT_101,
                                    cv2.BORDER_WRAP])
def test_remap_float_maps(photo, interp, border):
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:70, 0:90].astype(np.float32)
    mapx = (xx * 1.3 - 10 + rng.normal(0, 2, xx.shape)).astype(np.float32)
    mapy = (yy * 1.2 + 5 * np.sin(xx / 9)).astype(np.float32)
    theirs = cv2.remap(photo, mapx, mapy, interp, borderMode=border, borderValue=(1, 2, 3))
    ours = cv.remap(photo, mapx, mapy, interp, borderMode=border, borderValue=(1, 2, 3))
    assert_close_u8(ours, theirs)
    both = np.stack([mapx, mapy], axis=2)
    assert_close_u8(cv.remap(photo, both, None, interp, borderMode=border,
                             borderValue=(1, 2, 3)), theirs)


def test_convert_maps_and_fixed_remap(photo):
    yy, xx = np.mgrid[0:60, 0:80].astype(np.float32)
    mapx = (xx * 1.37 + 3.3).astype(np.float32)
    mapy = (yy * 1.11 - 2.7).astype(np.float32)
    m1, m2 = cv.convertMaps(mapx, mapy, cv.CV_16SC2)
    r1, r2 = cv2.convertMaps(mapx, mapy, cv2.CV_16SC2)
    np.testing.assert_array_equal(m1, r1)
    np.testing.assert_array_equal(m2, r2)
    for interp in (cv2.INTER_LINEAR, cv2.INTER_CUBIC):
        assert_close_u8(cv.remap(photo, m1, m2, interp), cv2.remap(photo, r1, r2, interp))
    # Nearest on fixed maps: OpenCV 5.0 swaps the x/y fraction bits there, so compare with
    # its float-map nearest at the positions the fixed maps encode.
    fx = (r1[..., 0] + (r2 & 31) / 32).astype(np.float32)
    fy = (r1[..., 1] + (r2 >> 5) / 32).astype(np.float32)
    assert_close_u8(cv.remap(photo, m1, m2, cv.INTER_NEAREST),
                    cv2.remap(photo, fx, fy, cv2.INTER_NEAREST))
    f1, f2 = cv.convertMaps(m1, m2, cv.CV_32FC1)
    g1, g2 = cv2.convertMaps(r1, r2, cv2.CV_32FC1)
    np.testing.assert_allclose(f1, g1)
    np.testing.assert_allclose(f2, g2)
    n1, _ = cv.convertMaps(mapx, mapy, cv.CV_16SC2, nninterpolation=True)
    q1, _ = cv2.convertMaps(mapx, mapy, cv2.CV_16SC2, nninterpolation=True)
    np.testing.assert_array_equal(n1, q1)


def test_transform_helpers():
    src = np.float32([[0, 0], [100, 10], [20, 80]])
    dst = np.float32([[5, 7], [90, 30], [10, 95]])
    np.testing.assert_allclose(cv.getAffineTransform(src, dst),
                               cv2.getAffineTransform(src, dst), atol=1e-9)
    src4 = np.float32([[0, 0], [100, 10], [90, 80], [5, 70]])
    dst4 = np.float32([[5, 7], [90, 30], [95, 99], [10, 95]])
    np.testing.assert_allclose(cv.getPerspectiveTransform(src4, dst4),
                               cv2.getPerspectiveTransform(src4, dst4), atol=1e-9)
    np.testing.assert_allclose(cv.getRotationMatrix2D((30.5, 20), 33, 1.7),
                               cv2.getRotationMatrix2D((30.5, 20), 33, 1.7), atol=1e-12)
    np.testing.assert_allclose(cv.invertAffineTransform(_ROT),
                               cv2.invertAffineTransform(_ROT), atol=1e-12)


@pytest.mark.parametrize("center", [(40.3, 30.7), (0.2, 1.5), (130.9, 96.6)])
def test_get_rect_sub_pix(photo, center):
    assert_close_u8(cv.getRectSubPix(photo, (21, 14), center),
                    cv2.getRectSubPix(photo, (21, 14), center))
    f = photo.astype(np.float32)
    np.testing.assert_allclose(cv.getRectSubPix(f, (9, 8), center),
                               cv2.getRectSubPix(f, (9, 8), center), atol=1e-3)


def test_far_and_nan_positions_are_border(photo):
    mapx = np.full((4, 5), np.nan, np.float32)
    mapy = np.full((4, 5), 1e30, np.float32)
    out = cv.remap(photo, mapx, mapy, cv.INTER_LINEAR, borderValue=(9, 9, 9))
    assert (out == 9).all()


def test_errors(photo):
    with pytest.raises(ValueError, match="warpAffine: M must be 2x3"):
        cv.warpAffine(photo, np.eye(3), (10, 10))
    with pytest.raises(ValueError, match="borderMode"):
        cv.warpAffine(photo, _ROT, (10, 10), borderMode=99)
    with pytest.raises(ValueError, match="interpolation"):
        cv.warpPerspective(photo, _HOMOG, (10, 10), flags=cv.INTER_NEAREST_EXACT)
    with pytest.raises(TypeError, match="remap: map1"):
        cv.remap(photo, np.zeros((4, 4), np.int32), None, cv.INTER_LINEAR)
    with pytest.raises(ValueError, match="collinear"):
        cv.getAffineTransform([[0, 0], [1, 1], [2, 2]], [[0, 0], [1, 0], [0, 1]])
