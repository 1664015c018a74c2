"""Ops MNN writes with other ops or that map to less common MNN ops: einsum (lowered to
transposes, reshapes, sums and matmuls), put_along_axis and scatter_add_along_axis
(ScatterElements), the determinant (Det) and grid_sample (GridSample). Each file is run by
our reader and by the real MNN wheel, against numpy / torch."""

import os

import format_oracle
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mnn.expr as F

from mnn.express.graph import apply
from mnn.express.ops.np_edit import put_along_axis
from mnn.express.ops.np_linalg import einsum, linalg_det
from mnn.format.writer import write_model


def _write(tmp_path, build, feeds):
    """Write ``build(placeholders)`` as output ``y`` of a file; returns its path."""
    phs = {}
    for name, value in feeds.items():
        phs[name] = F.placeholder(list(value.shape), F.NCHW, value.dtype)
        phs[name].expr.name = name
    path = os.path.join(tmp_path, "m.mnn")
    write_model({"y": build(phs)}, path)
    return path


def _check(tmp_path, build, feeds, want, wheel=True, rtol=1e-5, atol=1e-5):
    path = _write(tmp_path, build, feeds)
    got = np.asarray(format_oracle.ours_run(path, feeds, ["y"])[0])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    if wheel:
        int32_feeds = {k: (v.astype(np.int32) if v.dtype.kind == "i" else v)
                       for k, v in feeds.items()}
        theirs = format_oracle.wheel_run(path, int32_feeds, ["y"])[0]
        np.testing.assert_allclose(theirs, want, rtol=rtol, atol=atol)


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ii->i", [(4, 4)]),
    ("bii->bi", [(2, 3, 3)]),
    ("i,i->", [(5,), (5,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd->abd", [(2, 1, 3), (3, 4)]),
    ("ij,ij->i", [(3, 4), (1, 4)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUMS)
def test_einsum_file(subscripts, shapes, tmp_path):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    feeds = {f"in{i}": a for i, a in enumerate(arrays)}
    _check(tmp_path, lambda p: einsum(subscripts, [p[k] for k in feeds]), feeds,
           np.einsum(subscripts, *arrays).astype(np.float32), atol=1e-4)


def test_einsum_repeated_index_with_mismatched_sizes_is_refused():
    from mnn.format.map_linalg import lower_einsum

    x = F.placeholder([3, 4], F.NCHW, np.float32)
    with pytest.raises(ValueError, match="sizes 3 and 4"):
        lower_einsum("ii->i", [x], [(3, 4)], np.dtype(np.float32))


@pytest.mark.parametrize("axis", [0, 1, None])
def test_put_along_axis_file(axis, tmp_path):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    if axis is None:
        idx = np.array([0, -1, 5, 7], np.int64)
        values = np.float32(2.5)
    elif axis == 0:
        idx = np.array([[2, -1, 0, 1]], np.int64)
        values = rng.standard_normal((1, 4)).astype(np.float32)
    else:
        idx = np.array([[0, -1], [2, 1], [3, 0]], np.int64)
        values = rng.standard_normal((3, 2)).astype(np.float32)
    want = a.copy()
    np.put_along_axis(want, idx, values, axis)
    feeds = {"a": a, "i": idx}
    _check(tmp_path, lambda p: put_along_axis(p["a"], p["i"], F.const(values), axis),
           feeds, want)


def test_scatter_add_along_axis_file(tmp_path):
    rng = np.random.default_rng(2)
    g = rng.standard_normal((3, 2)).astype(np.float32)
    idx = np.array([[0, 3], [1, 1], [2, 0]], np.int64)
    want = np.zeros((3, 4), np.float32)
    np.add.at(want, (np.arange(3)[:, None], idx), g)
    _check(tmp_path, lambda p: apply("scatter_add_along_axis", [p["g"], p["i"]], axis=1,
                                     shape=(3, 4))[0], {"g": g, "i": idx}, want)


def test_det_file(tmp_path):
    m = np.random.default_rng(3).standard_normal((2, 4, 4)).astype(np.float32)
    _check(tmp_path, lambda p: linalg_det(p["m"]), {"m": m}, np.linalg.det(m), rtol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_file(mode, padding, align, tmp_path):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (2, 4, 3, 2)).astype(np.float32)
    want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid),
                                           mode=mode, padding_mode=padding,
                                           align_corners=align).numpy()
    # The wheel's bilinear reflection with align_corners differs from torch (and from
    # ONNX): only our reader is checked there.
    wheel = not (mode == "bilinear" and padding == "reflection" and align)
    _check(tmp_path, lambda p: F.grid_sample(p["x"], p["g"], mode, padding, align),
           {"x": x, "g": grid}, want, wheel=wheel)


@pytest.mark.parametrize("dtype", ["int16", "uint16", "int4", "uint4", "int2", "uint2"])
def test_narrow_integer_cast_file(dtype, tmp_path):
    """Wrap-around into a narrow integer type, written as integer arithmetic (oracle: numpy's
    C-style casts; the 4- and 2-bit types by their two's-complement definition)."""
    from mnn.express.ops.onnx_narrow import narrow_cast

    x = np.array([[-70000, -32769, -9, -8, -3, -1], [0, 1, 7, 8, 32768, 70001]], np.int32)
    if dtype in ("int16", "uint16"):
        want = x.astype(dtype).astype(np.int32)
    else:
        bits = int(dtype[-1])
        wrapped = np.mod(x, 1 << bits)
        want = (np.where(wrapped >= 1 << (bits - 1), wrapped - (1 << bits), wrapped)
                if not dtype.startswith("u") else wrapped).astype(np.int32)
    _check(tmp_path, lambda p: narrow_cast(p["x"], dtype), {"x": x}, want)


def test_float16_cast_is_refused_with_its_reason(tmp_path):
    from mnn.express.ops.onnx_narrow import narrow_cast
    from mnn.format.errors import ModelFileError

    x = F.placeholder([3], F.NCHW, np.float32)
    with pytest.raises(ModelFileError, match="float16 has no MNN form"):
        write_model({"y": narrow_cast(x, "float16")})


@pytest.mark.parametrize("mode", ["sum", "mean", "max", "l1", "log_sum_exp"])
def test_reduce_over_every_axis_file(mode, tmp_path):
    """ONNX's empty axes (every axis) are written as the full axis list: MNN reduces
    none for an empty one."""
    x = np.random.default_rng(6).random((3, 2, 2)).astype(np.float32)
    numpy_fn = {"sum": np.sum, "mean": np.mean, "max": np.max,
                "l1": lambda a, **k: np.sum(np.abs(a), **k),
                "log_sum_exp": lambda a, **k: np.log(np.sum(np.exp(a), **k))}[mode]
    want = numpy_fn(x, axis=None, keepdims=True).astype(np.float32)
    _check(tmp_path, lambda p: F.onnx_reduce(p["x"], F.const(np.zeros(0, np.int64)), mode, 1),
           {"x": x}, want)
    # The same with the (empty) axes as a graph input, as ONNX models give them.
    _check(tmp_path, lambda p: F.onnx_reduce(p["x"], p["axes"], mode, 1),
           {"x": x, "axes": np.zeros(0, np.int32)}, want)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("kind", ["floor", "c"])
def test_remainders_file(kind, dtype, tmp_path):
    """Floored (numpy ``mod``) and C (``fmod``) remainders of mixed signs: MNN's CPU
    computes MOD and FLOORMOD differently on integers and floats; both readers agree."""
    x = np.array([-7, -5, 5, 7, -37232, 9], dtype)
    y = np.array([3, -3, -3, 3, 65536, -4], dtype)
    if kind == "floor":
        want, build = np.mod(x, y), (lambda p: F.floormod(p["a"], p["b"]))
    else:
        want, build = np.fmod(x, y), (lambda p: F.onnx_fmod(p["a"], p["b"]))
    _check(tmp_path, build, {"a": x, "b": y}, want)
