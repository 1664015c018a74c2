# cython: language_level=3
"""Max and average pooling over (N, C, D, H, W) by window tables, and their gradients
(2-D pooling is D = 1): any window layout — 3-D, dilated, global, adaptive.

Each spatial axis has a table ``win[0, o] <= i < win[1, o]`` of the input positions
output ``o`` reads, stepping by the axis's dilation (``win[0, o]`` is the first tap inside
the input, already on the dilation grid; Python builds the tables). Average pooling
divides by ``divd[od] * divh[oy] * divw[ox]`` (the tap counts, with or without padding,
which Python decides). The tables are checked against the input size before any loop
runs. Regular 2-D grids have faster kernels in ``pool.pyx``.

An empty window (only padding) gives -inf for max pooling (index -1) and 0 for average
pooling, and passes no gradient back. Max pooling propagates NaN, as torch and numpy do.
Every kernel parallelizes over the N * C planes (a thread owns whole planes of its output,
so there are no races) and releases the GIL.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.string cimport memset

ctypedef fused real_t:
    float
    double


# ---------------------------------------------------------------------------------------
# checks (Python level, before any nogil loop)


def _check_tables(in_shape, out_shape, tables, steps):
    """Raise unless every table row lies inside its input axis and matches the output."""
    if len(tables) != 3 or len(steps) != 3:
        raise ValueError("pool kernel: need three window tables and three steps")
    for axis in range(3):
        win = tables[axis]
        size, out = in_shape[2 + axis], out_shape[2 + axis]
        if win.ndim != 2 or win.shape[0] != 2 or win.shape[1] != out:
            raise ValueError(f"pool kernel: window table {axis} does not match the output "
                             f"size {out}")
        if steps[axis] < 1:
            raise ValueError(f"pool kernel: step {steps[axis]} must be positive")
        if out and (win[0].min() < 0 or win[1].max() > size or (win[1] < win[0]).any()):
            raise ValueError(f"pool kernel: window table {axis} outside 0..{size}")


def _check_pair(x, y, what):
    if x.ndim != 5 or y.ndim != 5 or x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
        raise ValueError(f"pool kernel: {what} must be 5-D with equal batch and channels")


def _check_divisors(divs, out_shape):
    for axis in range(3):
        if divs[axis].shape[0] != out_shape[2 + axis]:
            raise ValueError("pool kernel: divisor tables do not match the output size")


# ---------------------------------------------------------------------------------------
# table kernels


def max_forward(const real_t[:, :, :, :, ::1] x, real_t[:, :, :, :, ::1] y,
                long[:, :, :, :, ::1] idx, tables, steps, int nthreads=1):
    """``y`` = max of ``x`` over each window (overwritten); ``idx`` (or None) gets the
    flat in-plane position ``(iz * H + iy) * W + ix`` of the first maximum (of the last
    NaN when the window holds one, as torch's indices)."""
    _check_pair(x, y, "input and output")
    _check_tables(x.shape, y.shape, tables, steps)
    if idx is not None and tuple(idx.shape) != tuple(y.shape):
        raise ValueError("pool kernel: index output must have the output's shape")
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = y.shape[2], OH = y.shape[3], OW = y.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef bint want_idx = idx is not None
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, best_at, o
    cdef real_t best, v
    cdef const real_t* xp
    cdef real_t* yp
    cdef long* ibase = NULL
    cdef long* ip
    if N * C == 0 or oplane == 0:
        return
    if want_idx:
        ibase = &idx[0, 0, 0, 0, 0]
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            yp = &y[0, 0, 0, 0, 0] + job * oplane
            ip = ibase + job * oplane if want_idx else NULL
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        best = -INFINITY
                        best_at = -1
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    v = xp[at + ix]
                                    # A NaN always takes over: the last NaN wins, as in torch.
                                    if v > best or v != v or best_at < 0:
                                        best = v
                                        best_at = at + ix
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        yp[o] = best
                        if want_idx:
                            ip[o] = best_at
                        o = o + 1


def max_backward(const real_t[:, :, :, :, ::1] x, const real_t[:, :, :, :, ::1] dy,
                 real_t[:, :, :, :, ::1] dx, tables, steps, int nthreads=1):
    """``dx`` (overwritten): each ``dy`` entry goes to the first maximum of its window
    (the last NaN when there is one, where torch's gradient goes too)."""
    _check_pair(x, dy, "input and gradient")
    _check_tables(x.shape, dy.shape, tables, steps)
    if tuple(dx.shape) != tuple(x.shape):
        raise ValueError("pool kernel: dx must have the input's shape")
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = dy.shape[2], OH = dy.shape[3], OW = dy.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, best_at, o
    cdef real_t best, v
    cdef const real_t* xp
    cdef const real_t* gp
    cdef real_t* dp
    if N * C == 0 or plane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            dp = &dx[0, 0, 0, 0, 0] + job * plane
            gp = &dy[0, 0, 0, 0, 0] + job * oplane if oplane else NULL
            memset(dp, 0, plane * sizeof(real_t))
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        best = -INFINITY
                        best_at = -1
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    v = xp[at + ix]
                                    # A NaN always takes over: the last NaN wins, as in torch.
                                    if v > best or v != v or best_at < 0:
                                        best = v
                                        best_at = at + ix
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        if best_at >= 0:
                            dp[best_at] += gp[o]
                        o = o + 1


def avg_forward(const real_t[:, :, :, :, ::1] x, real_t[:, :, :, :, ::1] y, tables, steps,
                divs, int nthreads=1):
    """``y`` = window sum / (divd[od] * divh[oy] * divw[ox]) (overwritten; 0 where the
    divisor is 0)."""
    _check_pair(x, y, "input and output")
    _check_tables(x.shape, y.shape, tables, steps)
    _check_divisors(divs, y.shape)
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef const real_t[::1] dd = divs[0]
    cdef const real_t[::1] dh = divs[1]
    cdef const real_t[::1] dw = divs[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[3], W = x.shape[4]
    cdef Py_ssize_t OD = y.shape[2], OH = y.shape[3], OW = y.shape[4]
    cdef Py_ssize_t plane = x.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, o
    cdef real_t acc, d
    cdef const real_t* xp
    cdef real_t* yp
    if N * C == 0 or oplane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            xp = &x[0, 0, 0, 0, 0] + job * plane
            yp = &y[0, 0, 0, 0, 0] + job * oplane
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        acc = 0
                        iz = wd[0, od]
                        while iz < wd[1, od]:
                            iy = wh[0, oy]
                            while iy < wh[1, oy]:
                                at = (iz * H + iy) * W
                                ix = ww[0, ox]
                                while ix < ww[1, ox]:
                                    acc = acc + xp[at + ix]
                                    ix = ix + sw
                                iy = iy + sh
                            iz = iz + sd
                        d = dd[od] * dh[oy] * dw[ox]
                        yp[o] = acc / d if d > 0 else 0
                        o = o + 1


def avg_backward(const real_t[:, :, :, :, ::1] dy, real_t[:, :, :, :, ::1] dx, tables,
                 steps, divs, int nthreads=1):
    """``dx`` (overwritten): each ``dy / divisor`` spread over the taps of its window."""
    _check_pair(dx, dy, "gradient and input gradient")
    _check_tables(dx.shape, dy.shape, tables, steps)
    _check_divisors(divs, dy.shape)
    cdef const long[:, ::1] wd = tables[0]
    cdef const long[:, ::1] wh = tables[1]
    cdef const long[:, ::1] ww = tables[2]
    cdef const real_t[::1] dd = divs[0]
    cdef const real_t[::1] dh = divs[1]
    cdef const real_t[::1] dw = divs[2]
    cdef Py_ssize_t sd = steps[0], sh = steps[1], sw = steps[2]
    cdef Py_ssize_t N = dx.shape[0], C = dx.shape[1], H = dx.shape[3], W = dx.shape[4]
    cdef Py_ssize_t OD = dy.shape[2], OH = dy.shape[3], OW = dy.shape[4]
    cdef Py_ssize_t plane = dx.shape[2] * H * W, oplane = OD * OH * OW
    cdef Py_ssize_t job, od, oy, ox, iz, iy, ix, at, o
    cdef real_t g, d
    cdef const real_t* gp
    cdef real_t* dp
    if N * C == 0 or plane == 0:
        return
    with nogil:
        for job in prange(N * C, num_threads=nthreads, schedule="static"):
            dp = &dx[0, 0, 0, 0, 0] + job * plane
            gp = &dy[0, 0, 0, 0, 0] + job * oplane if oplane else NULL
            memset(dp, 0, plane * sizeof(real_t))
            o = 0
            for od in range(OD):
                for oy in range(OH):
                    for ox in range(OW):
                        d = dd[od] * dh[oy] * dw[ox]
                        if d > 0:
                            g = gp[o] / d
                            iz = wd[0, od]
                            while iz < wd[1, od]:
                                iy = wh[0, oy]
                                while iy < wh[1, oy]:
                                    at = (iz * H + iy) * W
                                    ix = ww[0, ox]
                                    while ix < ww[1, ox]:
                                        dp[at + ix] += g
                                        ix = ix + sw
                                    iy = iy + sh
                                iz = iz + sd
                        o = o + 1
