"""solve, Rodrigues and solvePnP (cv2's names, arguments and return values)."""
import numpy as np

from . import constants as C
from ._image import as_array

__all__ = ["solve", "Rodrigues", "solvePnP"]


def solve(src1, src2, dst=None, flags=C.DECOMP_LU):
    """Solve ``src1 @ x = src2`` (``cv2.solve``); returns ``(ok, x)``.

    ``DECOMP_LU`` / ``DECOMP_CHOLESKY`` need a square non-singular matrix (``ok`` is False
    and x zero otherwise); ``DECOMP_SVD`` / ``DECOMP_QR`` also solve over-determined
    systems in the least-squares sense; ``DECOMP_NORMAL`` (or-ed in) solves the normal
    equations.
    """
    a = np.asarray(as_array(src1, "solve", "src1"), dtype=np.float64)
    b = np.asarray(as_array(src2, "solve", "src2"), dtype=np.float64)
    out_dtype = np.asarray(src1).dtype if np.asarray(src1).dtype.kind == "f" else np.float64
    if a.ndim != 2 or b.ndim not in (1, 2) or a.shape[0] != b.shape[0]:
        raise ValueError(f"mnn.cv.solve: src1 {a.shape} and src2 {b.shape} do not form a "
                         f"system")
    b2 = b.reshape(b.shape[0], -1)
    flags = int(flags)
    if flags & C.DECOMP_NORMAL:
        a, b2 = a.T @ a, a.T @ b2
        flags &= ~C.DECOMP_NORMAL
    method = flags
    if method in (C.DECOMP_LU, C.DECOMP_CHOLESKY):
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"mnn.cv.solve: DECOMP_LU/CHOLESKY need a square matrix, got "
                             f"{a.shape}")
        if method == C.DECOMP_CHOLESKY:
            try:
                low = np.linalg.cholesky(a)
            except np.linalg.LinAlgError:
                return False, np.zeros((a.shape[1], b2.shape[1]), out_dtype)
            x = np.linalg.solve(low.T, np.linalg.solve(low, b2))
            return True, x.astype(out_dtype)
        if abs(np.linalg.det(a)) < np.finfo(np.float64).tiny or \
                np.linalg.cond(a) > 1 / np.finfo(np.float64).eps:
            return False, np.zeros((a.shape[1], b2.shape[1]), out_dtype)
        return True, np.linalg.solve(a, b2).astype(out_dtype)
    if method in (C.DECOMP_SVD, C.DECOMP_QR, C.DECOMP_EIG):
        if method == C.DECOMP_EIG and a.shape[0] != a.shape[1]:
            raise ValueError("mnn.cv.solve: DECOMP_EIG needs a square symmetric matrix")
        x = np.linalg.lstsq(a, b2, rcond=None)[0]
        return True, x.astype(out_dtype)
    raise ValueError(f"mnn.cv.solve: unknown flags {flags}")


def _skew(k):
    return np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])


def _vec_to_mat(r):
    theta = float(np.linalg.norm(r))
    if theta < np.finfo(np.float64).eps:
        return np.eye(3)
    k = r / theta
    c, s = np.cos(theta), np.sin(theta)
    return c * np.eye(3) + (1 - c) * np.outer(k, k) + s * _skew(k)


def _mat_to_vec(m):
    u, _, vt = np.linalg.svd(m)
    rot = u @ vt  # nearest rotation, as OpenCV does before converting
    r = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    s = np.sqrt((r @ r) * 0.25)
    c = np.clip((np.trace(rot) - 1) * 0.5, -1.0, 1.0)
    theta = np.arccos(c)
    if s < 1e-5:
        if c > 0:
            return np.zeros(3)
        # Rotation by pi: the axis from the diagonal of (R + I) / 2.
        t = (rot + np.eye(3)) * 0.5
        axis = np.sqrt(np.clip(np.diag(t), 0, None))
        if t[0, 1] < 0:
            axis[1] = -axis[1]
        if t[0, 2] < 0:
            axis[2] = -axis[2]
        if abs(axis[0]) < 1e-12 and t[1, 2] < 0:
            axis[2] = -axis[2]
        return axis / max(np.linalg.norm(axis), 1e-300) * theta
    return r * (theta / (2 * s))


def _mat_to_vec_raw(m):
    # The conversion as a function of the entries as given: r = theta / (2 sin theta) *
    # (m21 - m12, m02 - m20, m10 - m01) with theta = acos((trace - 1) / 2). Its derivative
    # is the jacobian OpenCV reports for the matrix -> vector direction.
    v = np.array([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]])
    c = np.clip((np.trace(m) - 1) * 0.5, -1.0, 1.0)
    theta = np.arccos(c)
    if np.sin(theta) < 1e-5:
        return 0.5 * v
    return v * (theta / (2 * np.sin(theta)))


def Rodrigues(src, dst=None, jacobian=None):
    """Rotation vector <-> rotation matrix (``cv2.Rodrigues``).

    Returns ``(dst, jacobian)``: a 3x3 matrix for a 3-vector (jacobian 3x9), or a 3x1
    vector for a 3x3 matrix (jacobian 9x3). The jacobian is computed by central finite
    differences of the same conversion.
    """
    arr = np.asarray(as_array(src, "Rodrigues", "src"), dtype=np.float64)
    out_dtype = np.asarray(src).dtype if np.asarray(src).dtype.kind == "f" else np.float64
    if arr.size == 3:
        r = arr.reshape(3)
        mat = _vec_to_mat(r)
        h = 1e-7
        jac = np.stack([(_vec_to_mat(r + h * e) - _vec_to_mat(r - h * e)).reshape(9) / (2 * h)
                        for e in np.eye(3)])
        return mat.astype(out_dtype), jac.astype(out_dtype)
    if arr.shape == (3, 3):
        vec = _mat_to_vec(arr)
        h = 1e-7
        cols = []
        for i in range(9):
            e = np.zeros(9)
            e[i] = h
            plus = _mat_to_vec_raw(arr + e.reshape(3, 3))
            minus = _mat_to_vec_raw(arr - e.reshape(3, 3))
            cols.append((plus - minus) / (2 * h))
        jac = np.stack(cols)
        return vec.reshape(3, 1).astype(out_dtype), jac.astype(out_dtype)
    raise ValueError(f"mnn.cv.Rodrigues: src must be a 3-vector or a 3x3 matrix, got shape "
                     f"{arr.shape}")


def _distort(xn, dist):
    k = np.zeros(8)
    k[:len(dist)] = dist[:8]
    k1, k2, p1, p2, k3, k4, k5, k6 = k
    x, y = xn[:, 0], xn[:, 1]
    r2 = x * x + y * y
    radial = (1 + r2 * (k1 + r2 * (k2 + r2 * k3))) / (1 + r2 * (k4 + r2 * (k5 + r2 * k6)))
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return np.stack([xd, yd], axis=1)


def _project(obj, rvec, tvec, cam, dist):
    pc = obj @ _vec_to_mat(rvec).T + tvec
    xn = pc[:, :2] / pc[:, 2:3]
    xd = _distort(xn, dist)
    return np.stack([cam[0, 0] * xd[:, 0] + cam[0, 1] * xd[:, 1] + cam[0, 2],
                     cam[1, 1] * xd[:, 1] + cam[1, 2]], axis=1)


def _undistort(img, cam, dist):
    xd = np.stack([(img[:, 0] - cam[0, 2] - cam[0, 1] * (img[:, 1] - cam[1, 2]) / cam[1, 1])
                   / cam[0, 0], (img[:, 1] - cam[1, 2]) / cam[1, 1]], axis=1)
    xn = xd.copy()
    if np.any(dist):
        for _ in range(20):  # fixed-point iteration, as OpenCV's undistortPoints
            xn = xn + (xd - _distort(xn, dist))
    return xn


def _initial_pose(obj, xn):
    """Pose from normalised image points: homography for planar targets, DLT otherwise."""
    centred = obj - obj.mean(axis=0)
    _, sv, vt = np.linalg.svd(centred)
    if sv[2] < 1e-6 * max(sv[0], 1e-12):
        # Planar: express points in the plane's frame, fit a homography.
        rot_plane = vt
        if np.linalg.det(rot_plane) < 0:
            rot_plane[2] = -rot_plane[2]
        local = centred @ rot_plane.T
        a = []
        for (x, y, _), (u, v) in zip(local, xn):
            a.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
            a.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
        h = np.linalg.svd(np.array(a))[2][-1].reshape(3, 3)
        h /= np.linalg.norm(h[:, 0])
        if h[2, 2] < 0:
            h = -h
        r1, r2, t = h[:, 0], h[:, 1], h[:, 2]
        r3 = np.cross(r1, r2)
        u, _, vt2 = np.linalg.svd(np.stack([r1, r2, r3], axis=1))
        rot = u @ vt2
        rot = rot @ rot_plane
        # t maps the plane origin (the centroid); shift to the object origin.
        tvec = t - rot @ obj.mean(axis=0)
        return _mat_to_vec(rot), tvec
    a = []
    for (x, y, z), (u, v) in zip(obj, xn):
        a.append([x, y, z, 1, 0, 0, 0, 0, -u * x, -u * y, -u * z, -u])
        a.append([0, 0, 0, 0, x, y, z, 1, -v * x, -v * y, -v * z, -v])
    p = np.linalg.svd(np.array(a))[2][-1].reshape(3, 4)
    u, s, vt2 = np.linalg.svd(p[:, :3])
    scale = s.mean()
    rot = u @ vt2
    p = p / scale
    if np.linalg.det(rot) < 0:
        rot, p = -rot, -p
    return _mat_to_vec(rot), p[:, 3]


def solvePnP(objectPoints, imagePoints, cameraMatrix, distCoeffs, rvec=None, tvec=None,
             useExtrinsicGuess=False, flags=C.SOLVEPNP_ITERATIVE):
    """Object pose from 3-D/2-D correspondences (``cv2.solvePnP``): a linear initial pose
    refined by Levenberg-Marquardt on the reprojection error.

    Returns ``(ok, rvec, tvec)`` with 3x1 float64 vectors.
    """
    from scipy.optimize import least_squares

    obj = np.asarray(as_array(objectPoints, "solvePnP", "objectPoints"),
                     dtype=np.float64).reshape(-1, 3)
    img = np.asarray(as_array(imagePoints, "solvePnP", "imagePoints"),
                     dtype=np.float64).reshape(-1, 2)
    cam = np.asarray(cameraMatrix, dtype=np.float64).reshape(3, 3)
    dist = np.zeros(0) if distCoeffs is None else \
        np.asarray(distCoeffs, dtype=np.float64).reshape(-1)
    if len(obj) != len(img) or len(obj) < 4:
        raise ValueError(f"mnn.cv.solvePnP: needs at least 4 matching points, got "
                         f"{len(obj)} object and {len(img)} image points")
    if int(flags) not in (C.SOLVEPNP_ITERATIVE, C.SOLVEPNP_SQPNP, C.SOLVEPNP_EPNP):
        raise ValueError(f"mnn.cv.solvePnP: flags {flags} is not supported (ITERATIVE, "
                         f"EPNP or SQPNP)")
    if useExtrinsicGuess and rvec is not None and tvec is not None:
        r0 = np.asarray(rvec, dtype=np.float64).reshape(3)
        t0 = np.asarray(tvec, dtype=np.float64).reshape(3)
    else:
        r0, t0 = _initial_pose(obj, _undistort(img, cam, dist))

    def residual(params):
        return (_project(obj, params[:3], params[3:], cam, dist) - img).reshape(-1)

    fit = least_squares(residual, np.concatenate([r0, t0]), method="lm", xtol=1e-15,
                        ftol=1e-15, gtol=1e-15, max_nfev=2000)
    return True, fit.x[:3].reshape(3, 1), fit.x[3:].reshape(3, 1)
