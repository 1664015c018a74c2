"""solve, Rodrigues and solvePnP against cv2."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv

_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("flags", [cv2.DECOMP_LU, cv2.DECOMP_SVD, cv2.DECOMP_EIG,
                                   cv2.DECOMP_CHOLESKY, cv2.DECOMP_QR])
def test_solve_square(flags):
    a = _RNG.normal(size=(4, 4))
    if flags in (cv2.DECOMP_EIG, cv2.DECOMP_CHOLESKY):
        a = a @ a.T + np.eye(4)
    b = _RNG.normal(size=(4, 2))
    ours, theirs = cv.solve(a, b, flags=flags), cv2.solve(a, b, flags=flags)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("flags", [cv2.DECOMP_SVD, cv2.DECOMP_QR,
                                   cv2.DECOMP_LU | cv2.DECOMP_NORMAL])
def test_solve_least_squares(flags):
    a, b = _RNG.normal(size=(7, 3)), _RNG.normal(size=(7, 1))
    np.testing.assert_allclose(cv.solve(a, b, flags=flags)[1], cv2.solve(a, b, flags=flags)[1],
                               rtol=1e-9, atol=1e-9)


def test_solve_singular():
    ours, theirs = cv.solve(np.ones((3, 3)), np.ones((3, 1))), cv2.solve(np.ones((3, 3)),
                                                                         np.ones((3, 1)))
    assert ours[0] is False and theirs[0] is False
    # cv2 leaves its output uninitialised here; ours is zero.
    assert not ours[1].any()


@pytest.mark.parametrize("rvec", [[0.1, -0.2, 0.3], [0.0, 0.0, 0.0], [0.5, 2.0, -1.0],
                                  [1.0, 0.2, -2.0], [np.pi, 0.0, 0.0]])
def test_rodrigues(rvec):
    r = np.array(rvec)
    ours, theirs = cv.Rodrigues(r), cv2.Rodrigues(r)
    np.testing.assert_allclose(ours[0], theirs[0], atol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], atol=1e-6)
    m = theirs[0]
    ours, theirs = cv.Rodrigues(m), cv2.Rodrigues(m)
    assert ours[0].shape == theirs[0].shape == (3, 1)
    # A rotation by pi has two equivalent axis signs.
    if np.isclose(np.linalg.norm(r), np.pi):
        np.testing.assert_allclose(np.abs(ours[0]), np.abs(theirs[0]), atol=1e-9)
    else:
        np.testing.assert_allclose(ours[0], theirs[0], atol=1e-9)
        np.testing.assert_allclose(ours[1], theirs[1], atol=1e-6)


@pytest.mark.parametrize("planar", [False, True])
@pytest.mark.parametrize("dist", [np.zeros(5), np.array([0.1, -0.05, 0.001, 0.002, 0.01])])
def test_solve_pnp(planar, dist):
    cam = np.array([[800, 0, 320], [0, 780, 240], [0, 0, 1.0]])
    obj = _RNG.uniform(-1, 1, (12, 3))
    if planar:
        obj[:, 2] = 0
    rvec, tvec = np.array([0.2, -0.3, 0.1]), np.array([0.1, 0.2, 5.0])
    img, _ = cv2.projectPoints(obj, rvec, tvec, cam, dist)
    img = img + _RNG.normal(0, 0.3, img.shape)  # pixel noise: the fit is least squares
    ours, theirs = cv.solvePnP(obj, img, cam, dist), cv2.solvePnP(obj, img, cam, dist)
    assert ours[0] and theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], atol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="Rodrigues"):
        cv.Rodrigues(np.zeros(4))
    with pytest.raises(ValueError, match="at least 4"):
        cv.solvePnP(np.zeros((3, 3)), np.zeros((3, 2)), np.eye(3), None)
