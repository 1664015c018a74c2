# cython: language_level=3
"""Winograd F(m x m, 3x3) convolution (m = 2 or 4), float32 (include/winograd_kernel.h).

A 3x3 stride-1 convolution producing an m x m output tile reads an (m+2) x (m+2) input
tile. The input transform ``B^T d B`` and the output transform ``A^T M A`` (Lavin & Gray)
turn the sum over input channels into, for each of the ``P = (m+2)^2`` positions of the
transformed tile, one product ``V[k] (tiles x C) @ U[k] (C x O)``: 36 multiply-adds per
16 outputs and channel pair for m = 4, 16 per 4 for m = 2, instead of 144 and 36.

The image's tiles are cut into blocks whose transformed input and products fit in L2;
each block is transformed, multiplied by our packed SGEMM micro-kernel and transformed
back before the next. Threads take whole blocks when there are enough of them, otherwise
they split one block's channels (input transform) and then its output channels.

Every shape is checked here before the C code runs: the C code trusts its sizes.
"""
import numpy as np
from cython.parallel cimport prange
cimport openmp
from libc.math cimport INFINITY

cdef extern from "winograd_kernel.h":
    const int MNN_SG_MR
    const int MNN_SG_NR
    const int MNN_WG_OL
    void mnn_wg_input_any(int m, const float* x, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                          Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t tw_count, Py_ssize_t t0,
                          Py_ssize_t nt, Py_ssize_t groups, Py_ssize_t c0, Py_ssize_t c1,
                          float* V, float* pad) nogil
    void mnn_wg_gemm(int P, Py_ssize_t C, Py_ssize_t S, Py_ssize_t groups, const float* V,
                     const float* Ub, float* M, Py_ssize_t j0, Py_ssize_t j1) nogil
    void mnn_wg_output(int m, const float* M, Py_ssize_t ldm,
                       Py_ssize_t t0, Py_ssize_t nt, Py_ssize_t tw_count, float* y,
                       Py_ssize_t O, Py_ssize_t OH, Py_ssize_t OW, const float* bias,
                       float lo, float hi, Py_ssize_t o0, Py_ssize_t o1,
                       const float* skip) nogil
    void mnn_wg_block(int m, const float* x, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                      Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t tw_count, Py_ssize_t t0,
                      Py_ssize_t nt, const float* Ub, Py_ssize_t S, float* V, float* M,
                      float* pad, float* y, Py_ssize_t O, Py_ssize_t OH, Py_ssize_t OW,
                      const float* bias, float lo, float hi, const float* skip) nogil
    Py_ssize_t mnn_wg_pad_size(int m, Py_ssize_t tw_count, Py_ssize_t block) nogil

# Transformed input plus products of one block, in bytes: what should stay in L2 (1 MB
# per core here) with the weight strips streaming past.
_BLOCK_BYTES = 640 << 10


def tiles(Py_ssize_t oh, Py_ssize_t ow, int m):
    """Tile grid ``(TH, TW)`` of ``m x m`` tiles covering an ``oh x ow`` output."""
    if m not in (2, 4):
        raise ValueError(f"winograd: tile size must be 2 or 4, got {m}")
    return (oh + m - 1) // m, (ow + m - 1) // m


def padded_channels(Py_ssize_t o):
    """Output channels rounded up to whole weight strips (and output-transform vectors)."""
    cdef Py_ssize_t step = max(MNN_SG_NR, MNN_WG_OL)
    return (o + step - 1) // step * step


def pack_weight(u):
    """The transformed weight ``u`` (``(P, O, C)`` float32, ``U[k] = (G w G^T)`` at
    position ``k``) in the strip layout the kernel reads: ``(P, S, C, NR)``, output
    channels past ``O`` zero."""
    u = np.asarray(u)
    if u.ndim != 3 or u.dtype != np.float32 or u.shape[0] not in (16, 36):
        raise ValueError(f"winograd: transformed weight must be float32 (16 or 36, O, C), "
                         f"got {u.dtype} {list(u.shape)}")
    p, o, c = u.shape
    packed = np.zeros((p, padded_channels(o) // MNN_SG_NR, c, MNN_SG_NR), np.float32)
    _pack_strips(u, packed, 0)
    return packed


def _pack_strips(u, packed, Py_ssize_t s0):
    """Writes ``u`` (``(P, O', C)``) into ``packed``'s strips from ``s0`` on; channels
    past ``O'`` in the last strip stay as they are (zero)."""
    p, o, c = u.shape
    full = o // MNN_SG_NR
    if full:
        packed[:, s0:s0 + full] = u[:, :full * MNN_SG_NR].reshape(
            p, full, MNN_SG_NR, c).transpose(0, 1, 3, 2)
    rest = o - full * MNN_SG_NR
    if rest:
        packed[:, s0 + full, :, :rest] = u[:, full * MNN_SG_NR:].transpose(0, 2, 1)


# Output channels transformed at a time by transform_weight: its float64 temporaries
# stay near this many bytes instead of several times the whole transformed weight (75 MB
# for 512 channels), which the process heap would keep afterwards.
_TRANSFORM_BYTES = 2 << 20


def transform_weight(w, g):
    """:func:`pack_weight` of ``U[k] = G w G^T`` for a 3x3 kernel ``w`` (``(O, C, 3,
    3)``) and interpolation matrix ``g`` (``(m + 2, 3)``), computed in float64 a few
    output strips at a time."""
    w = np.asarray(w)
    g = np.asarray(g, np.float64)
    if w.ndim != 4 or w.shape[2:] != (3, 3) or g.ndim != 2 or g.shape[1] != 3:
        raise ValueError(f"winograd: weight must be (O, C, 3, 3) and G (m + 2, 3), got "
                         f"{list(w.shape)} and {list(g.shape)}")
    o, c = w.shape[:2]
    a = g.shape[0]
    if a * a not in (16, 36):
        raise ValueError(f"winograd: G must have 4 or 6 rows, got {a}")
    packed = np.zeros((a * a, padded_channels(o) // MNN_SG_NR, c, MNN_SG_NR), np.float32)
    per_strip = MNN_SG_NR * max(c, 1) * a * a * 8
    strips = max(1, _TRANSFORM_BYTES // per_strip)
    cdef Py_ssize_t o0, o1
    for o0 in range(0, o, strips * MNN_SG_NR):
        o1 = min(o, o0 + strips * MNN_SG_NR)
        u = (g @ w[o0:o1].astype(np.float64) @ g.T).reshape(o1 - o0, c, a * a)
        _pack_strips(u.transpose(2, 0, 1).astype(np.float32), packed, o0 // MNN_SG_NR)
    return packed


# plan() per argument tuple: a model asks for the same few shapes on every run.
_PLANS = {}


def plan(Py_ssize_t n, Py_ssize_t c, Py_ssize_t o, Py_ssize_t oh, Py_ssize_t ow, int m,
         int nthreads):
    """``(block_tiles, scratch_floats)``: tiles per block (a multiple of MR) and the
    float32 scratch :func:`conv` needs for these sizes and threads."""
    key = (n, c, o, oh, ow, m, nthreads, _BLOCK_BYTES)
    hit = _PLANS.get(key)
    if hit is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        hit = _PLANS[key] = _plan(n, c, o, oh, ow, m, nthreads)
    return hit


def _plan(Py_ssize_t n, Py_ssize_t c, Py_ssize_t o, Py_ssize_t oh, Py_ssize_t ow, int m,
          int nthreads):
    th, tw = tiles(oh, ow, m)
    cdef Py_ssize_t p = (m + 2) * (m + 2), t = th * tw, op = padded_channels(o)
    cdef Py_ssize_t mr = MNN_SG_MR
    cdef Py_ssize_t per_row = p * (c + op) * 4
    cdef Py_ssize_t rows = max(mr, _BLOCK_BYTES // per_row // mr * mr)
    rows = min(rows, (t + mr - 1) // mr * mr)
    if nthreads > 1 and n * t > 0:
        rows = _balanced_rows(n, t, rows, nthreads)
    return rows, max(nthreads, 1) * (p * rows * (c + op) + mnn_wg_pad_size(m, tw, rows))


def _balanced_rows(Py_ssize_t n, Py_ssize_t t, Py_ssize_t max_rows, int nthreads):
    """Block size (a multiple of MR, at most ``max_rows``) whose blocks, dealt to the
    threads in turn, give the busiest thread the fewest tiles (then: fewest blocks).
    E.g. 49 tiles on 2 threads: blocks of 24 (24 + 1 against 24), not 16 (32 against 17)."""
    cdef Py_ssize_t mr = MNN_SG_MR, rows, best = max_rows, best_load = -1, best_units = 0
    cdef Py_ssize_t blocks, units, u, size, load
    for rows in range(mr, max_rows + 1, mr):
        blocks = (t + rows - 1) // rows
        units = n * blocks
        loads = [0] * nthreads
        for u in range(units):
            size = min(rows, t - (u % blocks) * rows)
            loads[u % nthreads] += size
        load = max(loads)
        if best_load < 0 or load < best_load or (load == best_load and units < best_units):
            best, best_load, best_units = rows, load, units
    return best


def conv(const float[:, :, :, ::1] x, const float[:, :, :, ::1] ub, const float[::1] bias,
         float[:, :, :, ::1] y, int m, Py_ssize_t pt, Py_ssize_t pl, float[::1] work,
         int nthreads=1, double lo=-INFINITY, double hi=INFINITY, skip=None):
    """``y = clip(conv3x3(x, w) + bias, lo, hi)`` (stride 1, top/left pads ``pt``, ``pl``;
    ``y``'s size sets the bottom/right ones) where ``ub = pack_weight(U)`` of ``w``.

    ``work`` is float32 scratch of at least ``plan(...)[1]`` floats. ``skip`` (float32,
    C-contiguous, ``y``'s shape), when given, is added before the clamp:
    ``y = clip(conv + bias + skip, lo, hi)``, a residual connection and its activation
    in the output transform.
    """
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t O = y.shape[1], OH = y.shape[2], OW = y.shape[3]
    if m not in (2, 4):
        raise ValueError(f"winograd: tile size must be 2 or 4, got {m}")
    cdef int P = (m + 2) * (m + 2)
    cdef Py_ssize_t OP = padded_channels(O), S = OP // MNN_SG_NR
    if (ub.shape[0] != P or ub.shape[1] != S or ub.shape[2] != C
            or ub.shape[3] != MNN_SG_NR):
        raise ValueError(f"winograd: packed weight {list(np.shape(ub))} does not match "
                         f"F({m}x{m}, 3x3) with {C} input and {O} output channels")
    if y.shape[0] != N or bias.shape[0] != O:
        raise ValueError(f"winograd: output {list(np.shape(y))} or bias "
                         f"[{bias.shape[0]}] does not match the input {list(np.shape(x))}")
    if nthreads < 1:
        raise ValueError("winograd: nthreads must be >= 1")
    if N == 0 or O == 0 or OH == 0 or OW == 0:
        return
    th, tw = tiles(OH, OW, m)
    rows, need = plan(N, C, O, OH, OW, m, nthreads)
    if work.shape[0] < need:
        raise ValueError(f"winograd: scratch of {work.shape[0]} floats, need {need}")
    if pt < 0 or pl < 0:
        raise ValueError(f"winograd: pads must be >= 0, got top {pt}, left {pl}")
    cdef const float[:, :, :, ::1] sv
    cdef const float* sp = NULL
    if skip is not None:
        sv = skip
        if (sv.shape[0] != N or sv.shape[1] != O or sv.shape[2] != OH
                or sv.shape[3] != OW):
            raise ValueError(f"winograd: skip {np.shape(skip)} must have the output's "
                             f"shape {np.shape(y)}")
        sp = &sv[0, 0, 0, 0]
    cdef Py_ssize_t sn = O * OH * OW
    cdef Py_ssize_t TW = tw, T = th * tw, R = rows
    cdef Py_ssize_t blocks = (T + R - 1) // R, units = N * blocks
    cdef Py_ssize_t vsize = P * R * C, msize = P * R * OP
    cdef Py_ssize_t per_thread = vsize + msize + mnn_wg_pad_size(m, TW, R)
    cdef Py_ssize_t u, n, t0, nt, gb, tid, part, parts, lo_i, hi_i, chunk
    cdef Py_ssize_t step = max(1, MNN_WG_OL // MNN_SG_NR)
    cdef float flo = <float>lo, fhi = <float>hi
    cdef float* V
    cdef float* M
    if C == 0:
        out = np.asarray(bias)[None, :, None, None]
        if skip is not None:
            out = out + np.asarray(skip)
        np.asarray(y)[...] = np.clip(out, lo, hi)
        return
    # Whole blocks per thread when each thread gets at least two, or exactly as many each
    # (taken dynamically: on a busy machine a thread that runs does the work of one that
    # waits for a core); else the threads share each block: its channels (input
    # transform), then its output-channel strips, in small pieces taken dynamically.
    if (nthreads == 1 or units >= 2 * nthreads
            or (units >= nthreads and units % nthreads == 0)):
        with nogil:
            for u in prange(units, num_threads=nthreads, schedule="dynamic"):
                tid = openmp.omp_get_thread_num()
                n = u // blocks
                t0 = (u % blocks) * R
                nt = T - t0 if T - t0 < R else R
                V = &work[tid * per_thread]
                M = V + vsize
                mnn_wg_block(m, &x[n, 0, 0, 0], C, H, W, pt, pl, TW, t0, nt,
                             &ub[0, 0, 0, 0], S, V, M, M + msize, &y[n, 0, 0, 0], O, OH, OW,
                             &bias[0], flo, fhi, sp + n * sn if sp != NULL else NULL)
        return
    V = &work[0]
    M = V + vsize
    for u in range(units):
        n = u // blocks
        t0 = (u % blocks) * R
        nt = T - t0 if T - t0 < R else R
        gb = (nt + MNN_SG_MR - 1) // MNN_SG_MR
        with nogil:
            # Channels in pieces of 8 or more (each thread has its own padded plane).
            parts = min(C, 4 * nthreads)
            chunk = (C + parts - 1) // parts
            for part in prange(parts, num_threads=nthreads, schedule="dynamic"):
                tid = openmp.omp_get_thread_num()
                lo_i = part * chunk
                hi_i = lo_i + chunk if lo_i + chunk < C else C
                if lo_i < hi_i:
                    mnn_wg_input_any(m, &x[n, 0, 0, 0], C, H, W, pt, pl, TW, t0, nt, gb,
                                     lo_i, hi_i, V, &work[tid * per_thread + vsize + msize])
            # Output strips in pieces that start on a vector of the output transform.
            parts = (S + step - 1) // step
            for part in prange(parts, num_threads=nthreads, schedule="dynamic"):
                lo_i = part * step
                hi_i = lo_i + step if lo_i + step < S else S
                mnn_wg_gemm(P, C, S, gb, V, &ub[0, 0, 0, 0], M, lo_i, hi_i)
                mnn_wg_output(m, M, OP, t0, nt, TW, &y[n, 0, 0, 0], O, OH,
                              OW, &bias[0], flo, fhi, lo_i * MNN_SG_NR, hi_i * MNN_SG_NR,
                              sp + n * sn if sp != NULL else NULL)
