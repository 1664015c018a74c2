"""Linear filters, kernels, pyramids and morphology against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F
from cv_helpers import photo_like

_BORDERS = [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT,
            cv2.BORDER_REFLECT_101]


def _close(ours, theirs, tol):
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, \
        (ours.shape, theirs.shape, ours.dtype, theirs.dtype)
    assert np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max() <= tol


@pytest.mark.parametrize("border", _BORDERS)
def test_gaussian_and_box(photo, border):
    for ksize, sx, sy in [((5, 5), 0, 0), ((0, 0), 2.0, 0), ((7, 3), 1.3, 0.7), ((9, 9), -1, 0)]:
        _close(cv.GaussianBlur(photo, ksize, sx, sigmaY=sy, borderType=border),
               cv2.GaussianBlur(photo, ksize, sx, sigmaY=sy, borderType=border), 1)
    f = photo.astype(np.float32) / 255
    _close(cv.GaussianBlur(f, (5, 5), 1.1, borderType=border),
           cv2.GaussianBlur(f, (5, 5), 1.1, borderType=border), 1e-5)
    _close(cv.blur(photo, (4, 5), borderType=border), cv2.blur(photo, (4, 5), borderType=border),
           1)
    _close(cv.boxFilter(photo, cv2.CV_32F, (3, 3), normalize=False, borderType=border),
           cv2.boxFilter(photo, cv2.CV_32F, (3, 3), normalize=False, borderType=border), 1e-3)
    _close(cv.sqrBoxFilter(photo, -1, (3, 3), borderType=border),
           cv2.sqrBoxFilter(photo, -1, (3, 3), borderType=border), 1e-1)


@pytest.mark.parametrize("border", _BORDERS)
def test_derivatives(photo, border):
    for dx, dy, k in [(1, 0, 3), (0, 1, 3), (1, 1, 3), (2, 0, 5), (1, 0, 1), (0, 1, -1),
                      (1, 2, 7)]:
        _close(cv.Sobel(photo, cv2.CV_16S, dx, dy, ksize=k, borderType=border),
               cv2.Sobel(photo, cv2.CV_16S, dx, dy, ksize=k, borderType=border), 1)
        _close(cv.Sobel(photo, cv2.CV_32F, dx, dy, ksize=k, scale=0.5, delta=3,
                        borderType=border),
               cv2.Sobel(photo, cv2.CV_32F, dx, dy, ksize=k, scale=0.5, delta=3,
                         borderType=border), 1e-2)
    _close(cv.Scharr(photo, cv2.CV_64F, 0, 1, borderType=border),
           cv2.Scharr(photo, cv2.CV_64F, 0, 1, borderType=border), 1e-3)
    for k in (1, 3, 5):
        _close(cv.Laplacian(photo, cv2.CV_16S, ksize=k, borderType=border),
               cv2.Laplacian(photo, cv2.CV_16S, ksize=k, borderType=border), 1)


@pytest.mark.parametrize("border", _BORDERS)
def test_filter2d_and_sep(photo, border):
    k = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    _close(cv.filter2D(photo, cv2.CV_32F, k, borderType=border),
           cv2.filter2D(photo, cv2.CV_32F, k, borderType=border), 1e-2)
    _close(cv.filter2D(photo, -1, k / 4, anchor=(1, 2), delta=5, borderType=border),
           cv2.filter2D(photo, -1, k / 4, anchor=(1, 2), delta=5, borderType=border), 1)
    kx, ky = np.array([1.0, 2, -1]), np.array([0.5, 0.25, 0.1, 0.1, 3])
    _close(cv.sepFilter2D(photo, cv2.CV_32F, kx, ky, borderType=border),
           cv2.sepFilter2D(photo, cv2.CV_32F, kx, ky, borderType=border), 1e-2)


@pytest.mark.parametrize("d,sc,ss", [(5, 20, 5), (9, 75, 75), (0, 30, 3)])
def test_bilateral(photo, gray, d, sc, ss):
    _close(cv.bilateralFilter(photo, d, sc, ss), cv2.bilateralFilter(photo, d, sc, ss), 1)
    _close(cv.bilateralFilter(gray, d, sc, ss), cv2.bilateralFilter(gray, d, sc, ss), 1)
    f = photo.astype(np.float32) / 255
    _close(cv.bilateralFilter(f, d, sc / 255, ss), cv2.bilateralFilter(f, d, sc / 255, ss),
           2e-3)


def test_pyramids(photo, gray):
    _close(cv.pyrDown(photo), cv2.pyrDown(photo), 1)
    _close(cv.pyrDown(gray[:96, :130]), cv2.pyrDown(gray[:96, :130]), 1)
    _close(cv.pyrUp(photo), cv2.pyrUp(photo), 1)
    _close(cv.pyrUp(gray), cv2.pyrUp(gray), 1)
    f = photo.astype(np.float32)
    _close(cv.pyrUp(f), cv2.pyrUp(f), 1e-3)
    _close(cv.pyrDown(f), cv2.pyrDown(f), 1e-3)


def test_spatial_gradient(gray):
    ours, theirs = cv.spatialGradient(gray), cv2.spatialGradient(gray)
    for a, b in zip(ours, theirs):
        _close(a, b, 0)


def test_kernels():
    for args in [(5, 0), (7, 1.5), (1, 0), (9, -1), (11, 2.0)]:
        _close(cv.getGaussianKernel(*args), cv2.getGaussianKernel(*args), 1e-12)
    for args in [(1, 0, 3), (0, 2, 5), (1, 1, 1), (1, 0, -1), (2, 1, 7)]:
        for normalize in (False, True):
            for a, b in zip(cv.getDerivKernels(*args, normalize=normalize),
                            cv2.getDerivKernels(*args, normalize=normalize)):
                _close(a, b, 1e-6)
    for args in [((21, 21), 4.0, 0.5, 10.0, 0.5, 0), ((0, 0), 3.0, 1.2, 8.0, 0.8)]:
        _close(cv.getGaborKernel(*args), cv2.getGaborKernel(*args), 1e-9)


@pytest.mark.parametrize("shape", [cv2.MORPH_RECT, cv2.MORPH_CROSS, cv2.MORPH_ELLIPSE])
@pytest.mark.parametrize("ksize", [(3, 3), (5, 3), (7, 7), (1, 5), (4, 6)])
def test_morphology(photo, shape, ksize):
    elem = cv2.getStructuringElement(shape, ksize)
    np.testing.assert_array_equal(cv.getStructuringElement(shape, ksize), elem)
    for iterations in (1, 2):
        for border in (cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT_101):
            for name in ("erode", "dilate"):
                np.testing.assert_array_equal(
                    getattr(cv, name)(photo, elem, iterations=iterations, borderType=border),
                    getattr(cv2, name)(photo, elem, iterations=iterations, borderType=border))


def test_morphology_defaults_and_values(photo):
    np.testing.assert_array_equal(cv.erode(photo, None, borderValue=50),
                                  cv2.erode(photo, None, borderValue=50))
    f = photo.astype(np.float32)
    np.testing.assert_array_equal(cv.dilate(f, None, anchor=(0, 0), iterations=2),
                                  cv2.dilate(f, None, anchor=(0, 0), iterations=2))
    out = cv.dilate(F.const(photo), np.ones((3, 3), np.uint8), anchor=(0, 0))
    assert isinstance(out, F.Var)
    np.testing.assert_array_equal(np.asarray(out),
                                  cv2.dilate(photo, np.ones((3, 3), np.uint8), anchor=(0, 0)))


def test_errors(photo):
    with pytest.raises(ValueError, match="GaussianBlur: ksize must be positive and odd"):
        cv.GaussianBlur(photo, (4, 4), 0)
    with pytest.raises(ValueError, match="borderType"):
        cv.blur(photo, (3, 3), borderType=cv.BORDER_TRANSPARENT)
    with pytest.raises(ValueError, match="ddepth"):
        cv.Sobel(photo, 99, 1, 0)
    with pytest.raises(ValueError, match="anchor"):
        cv.filter2D(photo, -1, np.ones((3, 3)), anchor=(5, 0))
    with pytest.raises(ValueError, match="getStructuringElement"):
        cv.getStructuringElement(9, (3, 3))
    with pytest.raises(ValueError, match="iterations"):
        cv.erode(photo, None, iterations=-1)


@pytest.mark.parametrize("ksize", [(3, 3), (5, 5), (7, 7), (9, 9), (5, 3), (1, 7)])
@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE,
                                    cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101])
def test_gaussian_blur_uint8_bit_exact(photo, gray, ksize, border):
    # sigma 0 with ksize <= 9 uses OpenCV's fixed tables, exact in 1/256 units: uint8
    # images then follow its bit-exact fixed-point rule, so results are identical.
    for src in (photo, gray, photo[:4, :3].copy(), photo[:7, :6].copy(), gray[:40, :5].copy()):
        np.testing.assert_array_equal(cv.GaussianBlur(src, ksize, 0, borderType=border),
                                      cv2.GaussianBlur(src, ksize, 0, borderType=border))


@pytest.mark.parametrize("ksize", [(3, 3), (5, 5)])
def test_gaussian_blur_uint8_two_threads_large(ksize):
    # Several row strips shared between two threads, with the fused 3- and 5-tap passes.
    src = photo_like(301, 257, 3, seed=4)
    F.set_thread_number(2)
    try:
        np.testing.assert_array_equal(cv.GaussianBlur(src, ksize, 0),
                                      cv2.GaussianBlur(src, ksize, 0))
    finally:
        F.set_thread_number(1)
