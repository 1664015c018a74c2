# cython: language_level=3
"""2-D texture sampling for the render ops (mnn/express/ops/render.py) and its transpose.

The texture is channels last ``(N, H, W, C)``, ``uv`` is ``(N, OH, OW, 2)`` in [0, 1]
units. For an output texel the taps are

- nearest: texel ``(floor(v * H), floor(u * W))`` with weight 1;
- linear: ``x = u * W - 0.5``, ``y = v * H - 0.5`` (clamped to the edge texels' centres
  when ``clamp``), the four texels around ``(y, x)`` with bilinear weights.

With ``clamp`` every tap's indices are clamped into the texture; otherwise a tap outside
it reads zero. A NaN coordinate reads zero. Every index is range-checked in double before
it becomes an integer, so no uv value makes a kernel read or write outside the arrays.

``texture_2d`` gathers (OpenMP over output rows); ``texture_2d_grad`` scatter-adds the
output gradient with the same weights (one thread: output texels share texels).
"""
from cython.parallel cimport prange
from libc.math cimport floor

ctypedef fused real_t:
    float
    double


cdef inline int _axis_taps(double c, Py_ssize_t size, bint nearest, bint clamp,
                           Py_ssize_t* idx, double* wt) noexcept nogil:
    """Taps along one axis of coordinate ``c`` (in [0, 1] units): up to 2 (index,
    weight) pairs, returning how many; 0 when nothing is read (NaN, off the texture)."""
    cdef double x, x0, f
    cdef int n = 0
    if c != c:
        return 0
    if nearest:
        x = floor(c * size)
        if clamp:
            x = 0.0 if x < 0 else (size - 1.0 if x > size - 1 else x)
        if x >= 0 and x <= size - 1:
            idx[0] = <Py_ssize_t>x
            wt[0] = 1.0
            return 1
        return 0
    x = c * size - 0.5
    if clamp:
        x = 0.0 if x < 0 else (size - 1.0 if x > size - 1 else x)
    if not (x > -1.0 and x < size):  # both neighbours off the texture (or inf)
        return 0
    x0 = floor(x)
    f = x - x0
    if x0 >= 0:
        idx[n] = <Py_ssize_t>x0
        wt[n] = 1.0 - f
        n += 1
    if x0 + 1 <= size - 1:
        idx[n] = <Py_ssize_t>x0 + 1
        wt[n] = f
        n += 1
    return n


cdef void _row(const real_t[:, :, :, ::1] tex, const real_t[:, :, :, ::1] uv,
               real_t[:, :, :, ::1] out, Py_ssize_t n, Py_ssize_t i, bint nearest,
               bint clamp) noexcept nogil:
    # A function of its own so the tap arrays are per thread (prange shares C arrays).
    cdef Py_ssize_t OW = out.shape[2], C = out.shape[3]
    cdef Py_ssize_t H = tex.shape[1], W = tex.shape[2]
    cdef Py_ssize_t j, a, b, c, nx, ny, k, ntap
    cdef Py_ssize_t xs[2]
    cdef Py_ssize_t ys[2]
    cdef double wx[2]
    cdef double wy[2]
    cdef Py_ssize_t off[4]
    cdef double wt[4]
    cdef double acc
    cdef const real_t* src = &tex[n, 0, 0, 0]
    cdef const real_t* coord = &uv[n, i, 0, 0]
    cdef real_t* dst = &out[n, i, 0, 0]
    cdef double x, y, fx, fy
    cdef Py_ssize_t o
    for j in range(OW):
        if nearest:
            x = floor(coord[2 * j] * W)
            y = floor(coord[2 * j + 1] * H)
            if x >= 0 and x <= W - 1 and y >= 0 and y <= H - 1:
                o = (<Py_ssize_t>y * W + <Py_ssize_t>x) * C
                for c in range(C):
                    dst[j * C + c] = src[o + c]
                continue
        else:
            # Inside the texture all four taps exist: weights straight from the fractions.
            x = coord[2 * j] * W - 0.5
            y = coord[2 * j + 1] * H - 0.5
            if x >= 0 and x < W - 1 and y >= 0 and y < H - 1:
                xs[0] = <Py_ssize_t>x
                ys[0] = <Py_ssize_t>y
                fx = x - xs[0]
                fy = y - ys[0]
                o = (ys[0] * W + xs[0]) * C
                for c in range(C):
                    dst[j * C + c] = <real_t>(
                        (1 - fy) * ((1 - fx) * src[o + c] + fx * src[o + C + c])
                        + fy * ((1 - fx) * src[o + W * C + c] + fx * src[o + W * C + C + c]))
                continue
        nx = _axis_taps(coord[2 * j], W, nearest, clamp, xs, wx)
        ny = _axis_taps(coord[2 * j + 1], H, nearest, clamp, ys, wy)
        ntap = 0
        for b in range(ny):
            for a in range(nx):
                off[ntap] = (ys[b] * W + xs[a]) * C
                wt[ntap] = wy[b] * wx[a]
                ntap += 1
        for c in range(C):
            acc = 0.0
            for k in range(ntap):
                acc += wt[k] * src[off[k] + c]
            dst[j * C + c] = <real_t>acc


def texture_2d(const real_t[:, :, :, ::1] tex, const real_t[:, :, :, ::1] uv,
               real_t[:, :, :, ::1] out, bint nearest, bint clamp, int nthreads):
    """out[n, i, j, :] = sum of the taps of uv[n, i, j] in tex[n] (see module doc)."""
    cdef Py_ssize_t N = out.shape[0], OH = out.shape[1]
    cdef Py_ssize_t row
    for row in prange(N * OH, nogil=True, num_threads=nthreads, schedule="static"):
        _row(tex, uv, out, row // OH, row % OH, nearest, clamp)


def texture_2d_grad(const real_t[:, :, :, ::1] g, const real_t[:, :, :, ::1] uv,
                    double[:, :, :, ::1] dtex, bint nearest, bint clamp):
    """dtex[n] += the taps of uv[n, i, j] times g[n, i, j, :] (``dtex`` zeroed by the
    caller; double so the sum does not depend on the order)."""
    cdef Py_ssize_t N = g.shape[0], OH = g.shape[1], OW = g.shape[2], C = g.shape[3]
    cdef Py_ssize_t H = dtex.shape[1], W = dtex.shape[2]
    cdef Py_ssize_t n, i, j, a, b, c, nx, ny
    cdef Py_ssize_t xs[2]
    cdef Py_ssize_t ys[2]
    cdef double wx[2]
    cdef double wy[2]
    cdef double w
    with nogil:
        for n in range(N):
            for i in range(OH):
                for j in range(OW):
                    nx = _axis_taps(uv[n, i, j, 0], W, nearest, clamp, xs, wx)
                    ny = _axis_taps(uv[n, i, j, 1], H, nearest, clamp, ys, wy)
                    for b in range(ny):
                        for a in range(nx):
                            w = wy[b] * wx[a]
                            for c in range(C):
                                dtex[n, ys[b], xs[a], c] += w * g[n, i, j, c]
