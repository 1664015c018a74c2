"""Samples of the rest of MNN.expr's ops: gather/scatter, pad/tile, scans, arg/sort,
spatial rearrangements, one_hot, setdiff1d, unravel_index, histogram, shape queries,
matrix_band_part, svd, convert, random_uniform. References are numpy (or written from
the TensorFlow definition where numpy has no such function)."""
import numpy as np
from opdb_core import ALL_DTYPES, FLOAT_DTYPES, Sample, values

_I = np.array
SAMPLES = {}
REJECTS = {}


def _add(name, *samples):
    SAMPLES.setdefault(name, []).extend(samples)


def _reject(name, *samples):
    REJECTS.setdefault(name, []).extend(samples)


# -- gather / scatter ----------------------------------------------------------------------

def _gather_ref(x, idx, axis):
    return np.take(x, idx, axis=axis)


def _gather_grad_ref(g, idx, axis, shape):
    out = np.zeros(shape, g.dtype)
    np.add.at(out, (slice(None),) * (axis % len(shape)) + (idx,), g)
    return out


def _gather_nd_ref(x, idx):
    # out[i] = x[idx[i, 0], ..., idx[i, k-1]], written as a loop over the leading dims.
    lead = idx.shape[:-1]
    flat = idx.reshape(-1, idx.shape[-1])
    rows = [x[tuple(r)] for r in flat]
    return np.array(rows, dtype=x.dtype).reshape(lead + x.shape[idx.shape[-1]:])


def _gather_nd_grad_ref(g, idx, shape):
    out = np.zeros(shape, g.dtype)
    flat = idx.reshape(-1, idx.shape[-1])
    gf = g.reshape((len(flat),) + tuple(shape[idx.shape[-1]:]))
    for r, v in zip(flat, gf):
        out[tuple(r)] += v
    return out


def _scatter_nd_ref(idx, upd, shape):
    out = np.zeros(shape, upd.dtype)
    flat = idx.reshape(-1, idx.shape[-1])
    uf = upd.reshape((len(flat),) + tuple(shape[idx.shape[-1]:]))
    for r, v in zip(flat, uf):
        out[tuple(r)] = v  # in order: the last repeated index wins
    return out


for _dt in ALL_DTYPES:
    _x = values((4, 3, 5), _dt)
    _add("gather",
         Sample([_x, _I([3, 0, 0, -1], np.int32)], {"axis": 0}, _gather_ref),
         Sample([_x, _I([[2], [1]], np.int64)], {"axis": 1}, _gather_ref),
         Sample([_x, _I(4)], {"axis": -1}, _gather_ref, note="scalar-index"),
         Sample([values((1,), _dt), _I([0, 0])], {"axis": 0}, _gather_ref))
    _add("gather_nd",
         Sample([_x, _I([[0, 1], [3, 2], [-1, 0]])], {}, _gather_nd_ref),
         Sample([_x, _I([[[1]], [[2]]], np.int32)], {}, _gather_nd_ref),
         Sample([_x, _I([0, 2, 4])], {}, _gather_nd_ref, note="full-index"))
    _add("scatter_nd",
         Sample([_I([[1], [3], [1]]), values((3, 2), _dt)], {"shape": (5, 2)}, _scatter_nd_ref),
         Sample([_I([[0, 1]]), values((1,), _dt)], {"shape": (2, 3)}, _scatter_nd_ref))
for _dt in (np.float32, np.float64, np.int32, np.int64):
    _add("gather_grad", Sample([values((4, 2, 3, 5), _dt), _I([[1, 1, 0], [2, 2, 2]])],
                               {"axis": 1, "shape": (4, 3, 5)}, _gather_grad_ref))
    _add("gather_nd_grad", Sample([values((3, 5), _dt), _I([[0, 1], [0, 1], [3, 2]])],
                                  {"shape": (4, 3, 5)}, _gather_nd_grad_ref))
def _scatter_nd_updates_grad_ref(g, idx):
    # gather_nd of g, zero where a later update writes the same position.
    k = idx.shape[-1]
    flat = idx.reshape(-1, k)
    out = np.zeros((len(flat),) + g.shape[k:], g.dtype)
    for j, r in enumerate(flat):
        if not any(tuple(r2) == tuple(r) for r2 in flat[j + 1:]):
            out[j] = g[tuple(r)]
    return out.reshape(idx.shape[:-1] + g.shape[k:])


for _dt in (np.float32, np.float64, np.int32):
    _add("scatter_nd_updates_grad",
         Sample([values((5, 2), _dt), _I([[1], [3], [1]])], {}, _scatter_nd_updates_grad_ref),
         Sample([values((2, 3), _dt), _I([[0, 1], [1, 2], [0, 1]])], {},
                _scatter_nd_updates_grad_ref))

_reject("gather", Sample([np.zeros((3, 2), np.float32), _I([3])], {"axis": 0}, note="oob"),
        Sample([np.zeros((3, 2), np.float32), _I([-4])], {"axis": 0}, note="oob-neg"),
        Sample([np.zeros((3, 2), np.float32), _I([0.0])], {"axis": 0}, note="float-index"),
        Sample([np.zeros((3, 2), np.float32), _I([0])], {"axis": 2}, note="bad-axis"))
_reject("gather_nd", Sample([np.zeros((3, 2), np.float32), _I([[0, 2]])], note="oob"),
        Sample([np.zeros((3, 2), np.float32), _I([[0, 0, 0]])], note="too-deep"))
_reject("scatter_nd", Sample([_I([[5]]), np.zeros(1, np.float32)], {"shape": (5,)}, note="oob"),
        Sample([_I([[1]]), np.zeros(2, np.float32)], {"shape": (5,)}, note="bad-updates"))

# -- pad / tile -----------------------------------------------------------------------------

_MODES = {0: "constant", 1: "reflect", 2: "symmetric"}


def _pad_ref(x, pads, mode, value):
    if x.ndim == 0:
        return x.copy()
    if mode == 0:
        return np.pad(x, pads, mode="constant", constant_values=value)
    return np.pad(x, pads, mode=_MODES[int(mode)])


def _pad_grad_ref(g, pads, mode, shape):
    # The adjoint of padding: push each padded position's gradient back to its source,
    # found by padding an array of source positions the same way.
    out = np.zeros(int(np.prod(shape)), g.dtype)
    pos = np.arange(out.size).reshape(shape)
    src = _pad_ref(pos, pads, mode, -1) if mode else np.pad(pos, pads, constant_values=-1)
    keep = src >= 0
    np.add.at(out, src[keep], g[keep])
    return out.reshape(shape)


def _tile_ref(x, multiples):
    return np.tile(x, multiples)


for _dt in ALL_DTYPES:
    _add("pad", Sample([values((3, 5), _dt)], {"pads": ((1, 2), (0, 3)), "mode": 0, "value": 0},
                       _pad_ref),
         Sample([values((), _dt)], {"pads": (), "mode": 0, "value": 0}, _pad_ref),
         Sample([values((2, 3, 5), _dt)], {"pads": ((1, 1), (2, 0), (4, 4)), "mode": 1,
                                           "value": 0}, _pad_ref),
         Sample([values((2, 3, 5), _dt)], {"pads": ((2, 2), (3, 0), (5, 1)), "mode": 2,
                                           "value": 0}, _pad_ref),
         Sample([values((1,), _dt)], {"pads": ((0, 1),), "mode": 2, "value": 0}, _pad_ref))
    _add("tile", Sample([values((3, 5), _dt)], {"multiples": (2, 1)}, _tile_ref),
         Sample([values((), _dt)], {"multiples": ()}, _tile_ref),
         Sample([values((1, 2, 3), _dt)], {"multiples": (3, 0, 2)}, _tile_ref))
for _dt in (np.float32, np.float64, np.int32):
    for _mode, _pads in ((0, ((1, 2), (0, 3))), (1, ((2, 1), (4, 3))), (2, ((3, 1), (5, 5)))):
        _g = values((3 + sum(_pads[0]), 5 + sum(_pads[1])), _dt)
        _add("pad_grad", Sample([_g], {"pads": _pads, "mode": _mode, "shape": (3, 5)},
                                _pad_grad_ref))
_reject("pad", Sample([np.zeros((3,), np.float32)], {"pads": ((3, 0),), "mode": 1, "value": 0},
                      note="reflect-too-wide"),
        Sample([np.zeros((3,), np.float32)], {"pads": ((0, 4),), "mode": 2, "value": 0},
               note="symmetric-too-wide"),
        Sample([np.zeros((3,), np.float32)], {"pads": ((-1, 0),), "mode": 0, "value": 0},
               note="negative"),
        Sample([np.zeros((3,), np.float32)], {"pads": ((1, 0), (1, 1)), "mode": 0, "value": 0},
               note="rank"))
_reject("tile", Sample([np.zeros((3,), np.float32)], {"multiples": (2, 2)}))

# -- scans ----------------------------------------------------------------------------------


def _acc_dtype(dt):
    return np.dtype(np.int32) if dt == np.bool_ else dt


def _cumsum_ref(x, axis, exclusive, reverse):
    dt = _acc_dtype(x.dtype)
    y = np.flip(x, axis) if reverse else x
    out = np.cumsum(y, axis=axis, dtype=dt)
    if exclusive:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis=axis)),
                              np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


def _cumprod_ref(x, axis):
    return np.cumprod(x, axis=axis, dtype=_acc_dtype(x.dtype))


for _dt in ALL_DTYPES:
    for _shape, _axis in (((7,), 0), ((3, 5), 1), ((3, 5), -2), ((1,), 0)):
        for _ex, _rev in ((False, False), (True, False), (False, True), (True, True)):
            _add("cumsum", Sample([values(_shape, _dt)], {"axis": _axis, "exclusive": _ex,
                                                          "reverse": _rev}, _cumsum_ref))
        _add("cumprod", Sample([values(_shape, _dt, -2, 2)], {"axis": _axis}, _cumprod_ref))
_reject("cumsum", Sample([np.zeros((3,), np.float32)], {"axis": 1, "exclusive": False,
                                                        "reverse": False}),
        Sample([np.zeros((), np.float32)], {"axis": 0, "exclusive": False, "reverse": False}))

# -- argmax / argmin / sort -----------------------------------------------------------------


def _arg_ref(fn):
    def ref(x, axis, keepdims):
        if x.ndim == 0:
            return np.zeros((), np.int32)
        return fn(x, axis=axis, keepdims=keepdims).astype(np.int32)
    return ref


def _sort_ref(x, axis, arg, descend):
    if x.ndim == 0:
        return np.zeros((), np.int32) if arg else x
    keys = x
    if descend:  # stable descending: sort the reversed axis, then map indices back
        n = x.shape[axis]
        rev = np.flip(x, axis)
        idx = np.argsort(rev, axis=axis, kind="stable")
        idx = np.flip(n - 1 - idx, axis)
        # Within ties numpy's flip reverses order; restore stability by re-sorting ties.
        order = np.take_along_axis(x, idx, axis=axis)
        idx = _stable_ties(order, idx, axis)
    else:
        idx = np.argsort(keys, axis=axis, kind="stable")
    if arg:
        return idx.astype(np.int32)
    return np.take_along_axis(x, idx, axis=axis)


def _stable_ties(sorted_values, idx, axis):
    """Within runs of equal values keep indices ascending (a stable sort)."""
    sv = np.moveaxis(sorted_values, axis, -1).reshape(-1, sorted_values.shape[axis])
    ix = np.moveaxis(idx, axis, -1).reshape(sv.shape).copy()
    for r in range(sv.shape[0]):
        start = 0
        for j in range(1, sv.shape[1] + 1):
            if j == sv.shape[1] or sv[r, j] != sv[r, start]:
                ix[r, start:j] = np.sort(ix[r, start:j])
                start = j
    shape = np.moveaxis(idx, axis, -1).shape
    return np.moveaxis(ix.reshape(shape), -1, axis)


for _dt in ALL_DTYPES:
    for _shape, _axis in (((7,), 0), ((3, 5), 1), ((3, 5), -2), ((1,), 0), ((), 0)):
        _x = values(_shape, _dt, -2, 2)  # narrow range: many ties
        for _keep in (False, True) if _shape else (False,):
            _add("argmax", Sample([_x], {"axis": _axis, "keepdims": _keep}, _arg_ref(np.argmax)))
            _add("argmin", Sample([_x], {"axis": _axis, "keepdims": _keep}, _arg_ref(np.argmin)))
        for _arg in (False, True):
            for _desc in (False, True):
                _add("sort", Sample([_x], {"axis": _axis, "arg": _arg, "descend": _desc},
                                    _sort_ref))
_reject("argmax", Sample([np.zeros((0, 3), np.float32)], {"axis": 0, "keepdims": False},
                         note="empty"),
        Sample([np.zeros((2, 3), np.float32)], {"axis": 2, "keepdims": False}, note="axis"))


def _gather_along_ref(x, idx, axis):
    return np.take_along_axis(x, idx, axis=axis)


def _scatter_add_along_ref(g, idx, axis, shape):
    out = np.zeros(shape, g.dtype)
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[axis] = idx[pos]
        out[tuple(target)] += g[pos]
    return out


for _dt in ALL_DTYPES:
    _add("gather_along_axis",
         Sample([values((3, 5), _dt), _I([[4, 0], [1, 1], [-1, 2]])], {"axis": 1},
                _gather_along_ref),
         Sample([values((3, 5), _dt), _I([[2, 0, 1, 1, 0]], np.int32)], {"axis": 0},
                _gather_along_ref))
for _dt in (np.float32, np.float64, np.int32):
    _add("scatter_add_along_axis",
         Sample([values((3, 2), _dt), _I([[4, 4], [1, 0], [2, 2]])], {"axis": 1, "shape": (3, 5)},
                _scatter_add_along_ref))
_reject("gather_along_axis", Sample([np.zeros((3, 5), np.float32), _I([[5]])], {"axis": 1}))

# -- spatial --------------------------------------------------------------------------------


def _d2s_ref(x, block, channels_last):
    # From the definition: out[n, c, h*b+i, w*b+j] = x[n, (i*b+j)*C' + c, h, w] (DCR).
    if channels_last:
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    cc = c // (block * block)
    out = np.zeros((n, cc, h * block, w * block), x.dtype)
    for i in range(block):
        for j in range(block):
            out[:, :, i::block, j::block] = x[:, (i * block + j) * cc:(i * block + j + 1) * cc]
    return out.transpose(0, 2, 3, 1) if channels_last else out


def _s2d_ref(x, block, channels_last):
    if channels_last:
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    out = np.zeros((n, c * block * block, h // block, w // block), x.dtype)
    for i in range(block):
        for j in range(block):
            out[:, (i * block + j) * c:(i * block + j + 1) * c] = x[:, :, i::block, j::block]
    return out.transpose(0, 2, 3, 1) if channels_last else out


def _s2b_ref(x, block, pads, channels_last):
    # out[(i*b2+j)*N + n, ..., h, w] = padded[n, ..., h*b1+i, w*b2+j] (TensorFlow).
    if not channels_last:
        x = np.moveaxis(x, 1, -1)
    m = len(block)
    x = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)] * (x.ndim - 1 - m))
    n = x.shape[0]
    outs = []
    for offs in np.ndindex(*block):
        key = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(offs, block))
        outs.append(x[key])
    out = np.concatenate(outs, axis=0)
    assert out.shape[0] == n * int(np.prod(block))
    return out if channels_last else np.moveaxis(out, -1, 1)


def _b2s_ref(x, block, crops, channels_last):
    if not channels_last:
        x = np.moveaxis(x, 1, -1)
    m = len(block)
    total = int(np.prod(block))
    n = x.shape[0] // total
    spatial = x.shape[1:1 + m]
    full = np.zeros((n,) + tuple(s * b for s, b in zip(spatial, block)) + x.shape[1 + m:],
                    x.dtype)
    for k, offs in enumerate(np.ndindex(*block)):
        key = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(offs, block))
        full[key] = x[k * n:(k + 1) * n]
    key = (slice(None),) + tuple(slice(lo, full.shape[1 + i] - hi)
                                 for i, (lo, hi) in enumerate(crops))
    out = full[key]
    return out if channels_last else np.moveaxis(out, -1, 1)


for _dt in ALL_DTYPES:
    _add("depth_to_space",
         Sample([values((2, 8, 3, 1), _dt)], {"block": 2, "channels_last": False}, _d2s_ref),
         Sample([values((1, 3, 2, 9), _dt)], {"block": 3, "channels_last": True}, _d2s_ref),
         Sample([values((1, 1, 1, 1), _dt)], {"block": 1, "channels_last": False}, _d2s_ref))
    _add("space_to_depth",
         Sample([values((2, 3, 4, 6), _dt)], {"block": 2, "channels_last": False}, _s2d_ref),
         Sample([values((1, 3, 6, 5), _dt)], {"block": 3, "channels_last": True}, _s2d_ref))
    _add("space_to_batch_nd",
         Sample([values((2, 3, 4, 5), _dt)], {"block": (2, 3), "pads": ((0, 0), (1, 0)),
                                             "channels_last": False}, _s2b_ref),
         Sample([values((1, 3, 5, 2), _dt)], {"block": (2, 2), "pads": ((1, 0), (0, 1)),
                                             "channels_last": True}, _s2b_ref),
         Sample([values((3, 7, 2), _dt)], {"block": (3,), "pads": ((1, 1),),
                                          "channels_last": True}, _s2b_ref))
    _add("batch_to_space_nd",
         Sample([values((12, 3, 2, 2), _dt)], {"block": (2, 3), "crops": ((0, 1), (1, 1)),
                                              "channels_last": False}, _b2s_ref),
         Sample([values((4, 3, 3, 2), _dt)], {"block": (2, 2), "crops": ((1, 0), (0, 1)),
                                             "channels_last": True}, _b2s_ref))
_reject("depth_to_space", Sample([np.zeros((1, 3, 2, 2), np.float32)],
                                 {"block": 2, "channels_last": False}),
        Sample([np.zeros((3, 2, 2), np.float32)], {"block": 1, "channels_last": False}))
_reject("space_to_batch_nd", Sample([np.zeros((1, 1, 3, 3), np.float32)],
                                    {"block": (2, 2), "pads": ((0, 0), (0, 0)),
                                     "channels_last": False}))
_reject("batch_to_space_nd", Sample([np.zeros((3, 1, 2, 2), np.float32)],
                                    {"block": (2, 2), "crops": ((0, 0), (0, 0)),
                                     "channels_last": False}))


def _reverse_ref(x, axes):
    return np.flip(x, axes)


def _rs_ref(x, lens, batch_dim, seq_dim):
    out = x.copy()
    for b in range(x.shape[batch_dim]):
        for t in range(int(lens[b])):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            src[batch_dim] = dst[batch_dim] = b
            src[seq_dim], dst[seq_dim] = int(lens[b]) - 1 - t, t
            out[tuple(dst)] = x[tuple(src)]
    return out


for _dt in ALL_DTYPES:
    _add("reverse", Sample([values((3, 5), _dt)], {"axes": (1,)}, _reverse_ref),
         Sample([values((2, 3, 5), _dt)], {"axes": (0, -1)}, _reverse_ref),
         Sample([values((1,), _dt)], {"axes": (0,)}, _reverse_ref))
    _add("reverse_sequence",
         Sample([values((3, 4), _dt), _I([1, 2, 4], np.int32)], {"batch_dim": 0, "seq_dim": 1},
                _rs_ref),
         Sample([values((5, 2, 3), _dt), _I([0, 5])], {"batch_dim": 1, "seq_dim": 0}, _rs_ref))
_reject("reverse_sequence", Sample([np.zeros((2, 3), np.float32), _I([4, 1])],
                                   {"batch_dim": 0, "seq_dim": 1}, note="too-long"),
        Sample([np.zeros((2, 3), np.float32), _I([1, 1, 1])], {"batch_dim": 0, "seq_dim": 1},
               note="lengths-shape"))
_reject("reverse", Sample([np.zeros((2, 3), np.float32)], {"axes": (2,)}))

# -- misc -------------------------------------------------------------------------------------


def _one_hot_ref(idx, depth, on_value, off_value, axis, dtype):
    out = np.full(idx.shape + (depth,), off_value, dtype)
    for pos in np.ndindex(*idx.shape):
        if 0 <= idx[pos] < depth:
            out[pos + (int(idx[pos]),)] = on_value
    return np.moveaxis(out, -1, axis % out.ndim)


_F32 = np.dtype(np.float32)
for _it in (np.int32, np.int64, np.uint8, np.int8):
    _add("one_hot",
         Sample([_I([0, 2, 1, 5], _it)], {"depth": 3, "on_value": 1.0, "off_value": 0.0,
                                          "axis": -1, "dtype": _F32}, _one_hot_ref),
         Sample([_I([[1, 0, 2]], _it)], {"depth": 4, "on_value": 5.0, "off_value": -1.0,
                                         "axis": 0, "dtype": _F32}, _one_hot_ref),
         Sample([_I(1, _it)], {"depth": 2, "on_value": 1.0, "off_value": 0.0, "axis": -1,
                               "dtype": _F32}, _one_hot_ref))
_reject("one_hot", Sample([_I([0.5])], {"depth": 3, "on_value": 1.0, "off_value": 0.0,
                                        "axis": -1, "dtype": _F32}))


def _setdiff_ref(x, y):
    return np.array([v for v in x if v not in set(y.tolist())], dtype=x.dtype)


for _dt in ALL_DTYPES[:6]:
    _add("setdiff1d", Sample([values((9,), _dt, 0, 5), values((3,), _dt, 0, 5, seed=4)],
                             ref=_setdiff_ref),
         Sample([values((1,), _dt), values((0,), _dt)], ref=_setdiff_ref))
_reject("setdiff1d", Sample([np.zeros((2, 2), np.int32), np.zeros(2, np.int32)]))


def _unravel_ref(idx, dims):
    return np.stack(np.unravel_index(idx, dims)).astype(np.int32).reshape(
        (len(dims),) + idx.shape)


for _it in (np.int32, np.int64):
    _add("unravel_index", Sample([_I([22, 41, 37], _it)], {"dims": (7, 6)}, _unravel_ref),
         Sample([_I(5, _it)], {"dims": (2, 3)}, _unravel_ref),
         Sample([_I([[0, 59]], _it)], {"dims": (3, 4, 5)}, _unravel_ref))
_reject("unravel_index", Sample([_I([42])], {"dims": (7, 6)}), Sample([_I([-1])], {"dims": (7,)}))


def _hist_ref(x, bins, low, high):
    # Count by the definition: bin = floor((v - low) / width), high in the last bin.
    width = (high - low) / bins
    out = np.zeros(bins, np.float32)
    for v in np.asarray(x, np.float64).ravel():
        if low <= v <= high:
            out[min(int((v - low) // width), bins - 1)] += 1
    return out


for _dt in ALL_DTYPES[:6]:
    _add("histogram", Sample([values((4, 9), _dt, -1, 6)], {"bins": 5, "low": 0.0, "high": 5.0},
                             _hist_ref),
         Sample([values((), _dt, 0, 3)], {"bins": 1, "low": 0.0, "high": 3.0}, _hist_ref))
_reject("histogram", Sample([np.zeros(3, np.float32)], {"bins": 0, "low": 0.0, "high": 1.0}),
        Sample([np.zeros(3, np.float32)], {"bins": 2, "low": 1.0, "high": 1.0}))

for _dt in ALL_DTYPES:
    for _shape in ((), (1,), (3, 5), (2, 0, 7)):
        _x = values(_shape, _dt)
        _add("shape", Sample([_x], ref=lambda x: np.array(x.shape, np.int32)))
        _add("rank", Sample([_x], ref=lambda x: np.array(x.ndim, np.int32)))
        _add("size", Sample([_x], ref=lambda x: np.array(x.size, np.int32)))


def _band_ref(x, lower, upper):
    out = x.copy()
    rows, cols = x.shape[-2:]
    for i in range(rows):
        for j in range(cols):
            inside = (lower < 0 or i - j <= lower) and (upper < 0 or j - i <= upper)
            if not inside:
                out[..., i, j] = 0
    return out


for _dt in ALL_DTYPES:
    for _lo, _up in ((1, 0), (-1, 0), (0, -1), (2, 1), (-1, -1)):
        _add("matrix_band_part", Sample([values((2, 3, 5), _dt)], {"lower": _lo, "upper": _up},
                                        _band_ref))
_reject("matrix_band_part", Sample([np.zeros(3, np.float32)], {"lower": 0, "upper": 0}))


def _svd_ref(x):
    # Singular vectors are unique only up to sign; numpy's LAPACK picks the same signs.
    # tests/express/test_surface.py checks u @ diag(w) @ vt == x and orthogonality.
    u, w, vt = np.linalg.svd(x, full_matrices=False)
    return [w, u, vt]


for _dt in FLOAT_DTYPES:
    for _shape in ((3, 2), (2, 4), (1, 1), (5, 5)):
        _add("svd", Sample([values(_shape, _dt)], ref=_svd_ref, rtol=1e-4, atol=1e-5))
_reject("svd", Sample([np.zeros((2, 2, 2), np.float32)]), Sample([np.zeros((2, 2), np.int32)]),
        Sample([np.array([[np.inf, 0], [0, 1]], np.float32)]))


def _convert_ref(x, perm):
    return np.transpose(x, perm) if perm else x


for _dt in ALL_DTYPES:
    _add("convert", Sample([values((2, 3, 4, 5), _dt)], {"perm": (0, 2, 3, 1)}, _convert_ref),
         Sample([values((2, 4, 5, 3), _dt)], {"perm": (0, 3, 1, 2)}, _convert_ref),
         Sample([values((2, 3, 5), _dt)], {"perm": ()}, _convert_ref))


def _random_ref(shape, dtype, low, high, seed):
    # std::mt19937 draws via numpy's MT19937; float32 takes one 32-bit draw per value.
    rs = np.random.RandomState(seed)
    count = int(np.prod(shape))
    draws = np.frombuffer(rs.bytes(4 * count), "<u4")
    unit = draws.astype(np.float32) / np.float32(2 ** 32)
    return (unit * np.float32(high - low) + np.float32(low)).reshape(shape)


_add("random_uniform",
     Sample([], {"shape": (3, 5), "dtype": _F32, "low": 0.0, "high": 1.0, "seed": 1},
            lambda **a: _random_ref(**a)),
     Sample([], {"shape": (7,), "dtype": _F32, "low": -2.0, "high": 3.0, "seed": 42},
            lambda **a: _random_ref(**a)))
_reject("random_uniform", Sample([], {"shape": (3,), "dtype": np.dtype(np.int32), "low": 0.0,
                                      "high": 1.0, "seed": 1}))
