"""Every mnn.numpy function against numpy: the same arguments (as Vars on our side, as
arrays on numpy's), compared in structure, shape, dtype kind and values.

``CASES`` holds at least one call per public name; ``test_every_name_has_a_case`` keeps it
that way. Names numpy no longer has (``asfarray``, ``msort``, ``trapz``, ...) use the
numpy expression they stood for as the reference.
"""
import numpy as np
import pytest

import mnn.numpy as mnp

from numpy_helpers import as_vars, assert_matches, data

f32 = data((3, 4))
f64 = data((2, 3, 4), np.float64, seed=1)
i32 = data((3, 4), np.int32, seed=2)
u8 = data((3, 4), np.uint8, low=0, high=255, seed=3)
b = data((3, 4), np.bool_, seed=4)
v5 = data((5,), seed=5)
v5b = data((5,), seed=6)
pos = data((3, 4), low=0.5, high=4.0, seed=7)
unit = data((3, 4), low=-0.9, high=0.9, seed=8)
nan_f = f32.copy()
nan_f[0, 1] = nan_f[2, 3] = np.nan
sq = (data((3, 3), np.float64, seed=9) + 3 * np.eye(3)).astype(np.float64)
ints5 = np.array([3, 1, 4, 1, 5], np.int32)
bits = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1]], np.uint8)
v3a = data((4, 3), seed=10)
v3b = data((4, 3), seed=11)


class Case:
    def __init__(self, name, *args, ref=None, rtol=1e-5, atol=1e-6, exact=False, raw=(),
                 **kwargs):
        self.name, self.args, self.kwargs = name, args, kwargs
        self.ref = ref if ref is not None else getattr(np, name)
        self.rtol, self.atol, self.exact = rtol, atol, exact
        self.raw = raw  # argument positions passed to us as given (not as Vars)

    def __repr__(self):
        return self.name


def _case_id(case):
    return case.name


C = Case
CASES = [
    # -- creation ------------------------------------------------------------------------
    C("array", f64, exact=True), C("array", u8, exact=True),
    C("array", [[1.5, 2.0]], ref=lambda x: np.array(x, np.float32), exact=True, raw=(0,)),
    C("array", f32, ndmin=4, exact=True), C("array", i32, dtype=np.float64, exact=True),
    C("asarray", b, exact=True), C("asarray", f32, copy=True, device="cpu", exact=True),
    C("asanyarray", i32, exact=True),
    C("ascontiguousarray", f32, exact=True), C("asfortranarray", f64, exact=True),
    C("asarray_chkfinite", f32, exact=True),
    C("asfarray", i32, ref=lambda a: a.astype(np.float32), exact=True),
    C("asmatrix", v5, ref=lambda a: a.reshape(1, -1)), C("mat", f32, ref=np.asarray),
    C("matrix", f32, ref=np.asarray),
    C("asscalar", np.array([2.5], np.float32), ref=lambda a: a.item()),
    C("require", i32, dtype=np.float32, exact=True), C("copy", f32, exact=True),
    C("empty", (2, 3), ref=lambda s: np.zeros(s, np.float32), exact=True),
    C("empty_like", i32, ref=np.zeros_like, exact=True),
    C("zeros", (2, 0, 3), ref=lambda s: np.zeros(s, np.float32), exact=True),
    C("zeros", 4, dtype=np.int32, exact=True), C("zeros_like", u8, exact=True),
    C("ones", [3, 2], ref=lambda s: np.ones(s, np.float32), exact=True),
    C("ones_like", f64, dtype=np.int32, exact=True),
    C("full", (2, 3), 7, ref=lambda s, v: np.full(s, v, np.int32), exact=True),
    C("full", (2, 3), v5[:3], exact=True), C("full_like", f32, 0.5, exact=True),
    C("full_like", i32, 2.7, exact=True),
    C("eye", 3, ref=lambda n: np.eye(n, dtype=np.float32), exact=True),
    C("eye", 3, 4, 1, dtype=np.int32, exact=True),
    C("identity", 2, ref=lambda n: np.identity(n, np.float32), exact=True),
    C("arange", 5, ref=lambda n: np.arange(n, dtype=np.int32), exact=True),
    C("arange", 1.0, 2.0, 0.25, ref=lambda *a: np.arange(*a, dtype=np.float32), exact=True),
    C("arange", 2, 11, 3, dtype=np.int64, exact=True),
    C("linspace", 0.0, 1.0, 7, ref=lambda *a: np.linspace(*a).astype(np.float32),
      exact=True),
    C("linspace", 2, 3, 4, endpoint=False, dtype=np.float64, exact=True),
    C("logspace", 0.0, 2.0, 5, ref=lambda *a: np.logspace(*a).astype(np.float32)),
    C("geomspace", 1.0, 1000.0, 4, ref=lambda *a: np.geomspace(*a).astype(np.float32)),
    C("meshgrid", v5, v5b[:3]), C("meshgrid", v5, v5b[:3], indexing="ij", sparse=True),
    C("frombuffer", np.arange(6, dtype=np.float32).tobytes(), raw=(0,),
      ref=lambda buf: np.frombuffer(buf, np.float32), exact=True),
    C("fromstring", "1 2 3.5", raw=(0,), ref=lambda s: np.array([1, 2, 3.5], np.float32),
      exact=True),
    C("fromiter", range(5), np.int32, raw=(0,), exact=True),
    C("fromfunction", lambda i, j: i * 3 + j, (2, 3), raw=(0,),
      ref=lambda fn, s: np.fromfunction(fn, s, dtype=np.float32)),
    C("diag", v5), C("diag", f32, k=1), C("diagflat", f32[:2, :2], k=-1),
    C("tri", 3, 4, 1, ref=lambda *a: np.tri(*a, dtype=np.float32), exact=True),
    C("tril", f64, k=-1, exact=True), C("triu", i32, 1, exact=True),
    C("vander", v5[:3]), C("vander", ints5, 3, increasing=True),
    C("bmat", [[sq, sq], [sq, sq]], raw=(0,), ref=lambda blocks: np.block(blocks)),
    C("bmat", "X, Y; Y, X", {"X": sq, "Y": 2 * sq}, {}, raw=(0, 1, 2),
      ref=lambda spec, ld, gd: np.asarray(np.bmat(spec, ld, gd))),
    C("repmat", f32[:2, :2], 2, 3, ref=lambda a, m, n: np.tile(a, (m, n))),
    C("indices", (2, 3), ref=lambda s: np.indices(s)),
    C("ix_", ints5[:2], np.array([True, False, True])),
    C("copyto", f32, f32, ref=lambda dst, src: None),
    # -- shapes ---------------------------------------------------------------------------
    C("shape", f64), C("ndim", f64), C("size", f64), C("size", f64, 1),
    C("reshape", f64, (4, 6), exact=True),
    C("reshape", np.zeros((2, 0), np.float32), (0, 5), exact=True),
    C("reshape", f64, 24, exact=True), C("ravel", f64, exact=True),
    C("moveaxis", f64, 0, -1), C("moveaxis", f64, [0, 1], [2, 0]),
    C("rollaxis", f64, 2), C("rollaxis", f64, 0, 2), C("swapaxes", f64, 0, 2),
    C("transpose", f64), C("transpose", f64, (1, 0, 2)),
    C("atleast_1d", np.array(2.0, np.float32)), C("atleast_2d", v5),
    C("atleast_3d", f32), C("atleast_3d", v5, f64),
    C("broadcast_to", v5, (3, 5)), C("broadcast_arrays", v5, f32[:, :1]),
    C("broadcast_shapes", (3, 1), (4,)),
    C("expand_dims", f32, 1), C("expand_dims", f32, (0, 3)),
    C("squeeze", f64[:1, :, :1]), C("squeeze", f64[:1, :, :1], axis=2),
    C("concatenate", [f32, i32], exact=False), C("concatenate", [f32, pos], axis=None),
    C("concat", [f32, pos], axis=1), C("stack", [f32, pos], axis=2),
    C("vstack", [v5, v5b]), C("row_stack", [f32, pos], ref=lambda t: np.vstack(t)),
    C("hstack", [v5, v5b]), C("hstack", [f32, pos]), C("dstack", [f32, pos]),
    C("column_stack", [v5, v5b]), C("block", [[f32, pos], [pos, f32]]),
    C("split", f64, 3, axis=1), C("split", f64, [1, 3], axis=2),
    C("split", f64, [3, 1], axis=2), C("array_split", v5, 3),
    C("hsplit", f64, [1]), C("vsplit", f32, 3), C("dsplit", f64, 2),
    C("tile", v5, 2), C("tile", f32, (2, 1, 3)), C("tile", f64, (2,)),
    C("repeat", f32, 2), C("repeat", f32, [1, 0, 2], axis=0),
    C("delete", f32, 1, axis=1), C("delete", v5, [0, -1]),
    C("insert", v5, 2, 9.0), C("insert", f32, [0, 4], 1.5, axis=1),
    C("append", f32, pos, axis=0), C("append", v5, f32),
    C("resize", f32, (5, 5)), C("trim_zeros", np.array([0, 0, 3, 0, 1, 0], np.int32)),
    C("trim_zeros", np.pad(i32, 1), "b", axis=0),
    C("median", np.zeros((2, 0), np.float32), axis=1), C("argsort", np.array(2.5)),
    C("unique", np.array([3, 1, 3, 2, 1], np.int32)),
    C("unique", f32.round(0), return_index=True, return_inverse=True, return_counts=True),
    C("unique", np.array([[1, 2], [1, 2], [0, 1]], np.int32), axis=0, return_counts=True),
    C("flip", f64), C("flip", f64, (0, 2)), C("fliplr", f32), C("flipud", f32),
    C("roll", f32, 2), C("roll", f64, (1, -1), axis=(0, 2)),
    C("rot90", f32), C("rot90", f64, 3, axes=(1, 2)), C("rot90", f32, 2),
    # -- math -----------------------------------------------------------------------------
    C("add", f32, i32), C("add", u8, 3, raw=(1,), exact=True), C("subtract", f32, pos),
    C("multiply", f64, 2.0, raw=(1,), exact=True), C("divide", i32, 2, raw=(1,)),
    C("true_divide", f32, pos), C("floor_divide", i32, np.int32(3)), C("power", pos, 1.5,
                                                                         raw=(1,)),
    C("float_power", i32, 2, raw=(1,), exact=True), C("mod", f32, pos), C("remainder", i32,
                                                                          np.int32(3)),
    C("fmod", f32, pos), C("divmod", f32, pos), C("modf", f32), C("negative", i32),
    C("positive", f32), C("reciprocal", pos), C("sign", f32), C("abs", f32),
    C("absolute", i32), C("fabs", i32), C("sqrt", pos), C("cbrt", f32), C("square", i32),
    C("exp", f32), C("exp2", f32), C("expm1", f32), C("log", pos), C("log2", pos),
    C("log10", pos), C("log1p", pos), C("logaddexp", f32, pos), C("logaddexp2", f32, pos),
    C("sin", f32), C("cos", f32), C("tan", unit), C("arcsin", unit), C("arccos", unit),
    C("arctan", f32), C("arctan2", f32, pos), C("sinh", f32), C("cosh", f32),
    C("tanh", f32), C("arcsinh", f32), C("arccosh", pos + 1), C("arctanh", unit),
    C("hypot", f32, pos), C("degrees", f32), C("radians", f32), C("deg2rad", f32),
    C("rad2deg", f32), C("sinc", f32),
    C("around", f32 * 10, 1), C("round", np.array([0.5, 1.5, 2.5, -0.5], np.float32)),
    C("round_", f32, 2, ref=lambda a, d: np.round(a, d)), C("around", i32 * 37, -1),
    C("rint", f32 * 3), C("fix", f32 * 3), C("floor", f32), C("ceil", f32),
    C("trunc", f32 * 3), C("clip", f32, -1.0, 1.0), C("clip", i32, None, 1),
    C("clip", f32, v5b[:4], 2.0),
    C("maximum", f32, pos), C("minimum", nan_f, pos), C("fmax", nan_f, pos),
    C("fmin", nan_f, pos), C("copysign", f32, unit), C("heaviside", f32, 0.5, raw=(1,)),
    C("signbit", f32), C("ldexp", f32, i32), C("frexp", f32), C("nextafter", f32, pos),
    C("spacing", f32), C("gcd", i32, np.int32(6)), C("lcm", np.abs(i32) + 1, np.int32(4)),
    C("i0", f32), C("nan_to_num", np.array([np.nan, np.inf, -np.inf, 1], np.float32)),
    C("nan_to_num", nan_f, nan=5.0, posinf=9.0), C("real_if_close", f32),
    C("sum", f32), C("sum", f64, axis=(0, 2), keepdims=True), C("sum", b, axis=1),
    C("sum", u8), C("prod", u8, axis=0), C("cumsum", u8), C("median", b),
    C("tril", v5), C("triu", v5, 1), C("around", b),
    C("sum", f32, axis=1, initial=2.0), C("sum", f32, where=b),
    C("prod", pos), C("prod", i32, axis=0), C("nansum", nan_f, axis=0),
    C("nanprod", nan_f),
    C("diff", f64), C("diff", f32, 2, axis=0), C("diff", v5, prepend=0.0, append=[1.0, 2.0]),
    C("ediff1d", f32, to_begin=[9.0], to_end=1.0), C("gradient", f32),
    C("gradient", v5, 2.0), C("gradient", f32, axis=1, edge_order=2),
    C("cross", v3a, v3b), C("cross", v3a[:, :2], v3b[:, :2]), C("cross", v3a, v3b[:, :2]),
    C("cross", v3a.T, v3b.T, axis=0),
    C("trapz", f32, ref=lambda y: np.trapezoid(y)),
    C("trapz", f32, v5b[:4], ref=lambda y, x: np.trapezoid(y, x)),
    C("trapezoid", f32, dx=0.5, axis=0), C("convolve", v5, v5b[:3]),
    C("convolve", v5, v5b[:3], mode="same"), C("correlate", v5, v5b[:3]),
    C("correlate", v5[:2], v5b, mode="full"),
    C("interp", f32, np.sort(v5), v5b), C("unwrap", np.cumsum(f32 * 2, axis=1)),
    # -- logic ----------------------------------------------------------------------------
    C("all", b), C("all", b, axis=0), C("any", b, axis=1, keepdims=True), C("any", f32),
    C("array_equal", f32, f32.copy()), C("array_equal", f32, pos),
    C("array_equal", nan_f, nan_f.copy(), equal_nan=True),
    C("array_equiv", v5, np.broadcast_to(v5, (2, 5)).copy()), C("array_equiv", v5, f32),
    C("allclose", f32, f32 + 1e-7), C("isclose", f32, f32 + 1e-3),
    C("greater", f32, pos), C("greater_equal", i32, 0, raw=(1,)), C("less", f32, pos),
    C("less_equal", f32, pos), C("equal", i32, 1, raw=(1,)), C("not_equal", f32, pos),
    C("logical_and", b, f32), C("logical_or", b, i32), C("logical_xor", b, ~b),
    C("logical_not", i32), C("isnan", nan_f), C("isinf", np.array([np.inf, 1, -np.inf])),
    C("isfinite", nan_f), C("isposinf", np.array([np.inf, 1, -np.inf])),
    C("isneginf", np.array([np.inf, 1, -np.inf])),
    C("bitwise_and", i32, np.int32(6)), C("bitwise_or", u8, np.uint8(17)),
    C("bitwise_xor", b, b[::-1].copy()), C("invert", u8), C("bitwise_not", i32),
    C("left_shift", i32, np.int32(2)), C("right_shift", u8, np.uint8(3)),
    C("packbits", bits), C("packbits", bits, axis=1, bitorder="little"),
    C("unpackbits", u8), C("unpackbits", u8, axis=0, count=10),
    C("binary_repr", 10, raw=(0,)), C("binary_repr", -3, 5, raw=(0,)),
    C("base_repr", 255, 16, raw=(0,)),
    # -- indexing -------------------------------------------------------------------------
    C("where", b, f32, pos), C("where", b), C("where", i32 > 0, f32, 0.0, raw=(2,)),
    C("nonzero", i32), C("nonzero", v5 > 0), C("argwhere", i32), C("flatnonzero", i32),
    C("ravel_multi_index", (np.array([1, 2], np.int32), np.array([3, 0], np.int32)),
      (3, 4)),
    C("unravel_index", np.array([5, 11], np.int32), (3, 4)),
    C("unravel_index", np.array(7, np.int32), (2, 4), order="F"),
    C("diag_indices", 3), C("diag_indices_from", sq), C("tril_indices", 3, -1),
    C("tril_indices_from", f32, 1), C("triu_indices", 3, 1, 4), C("triu_indices_from", f32),
    C("mask_indices", 3, mnp.triu, raw=(1,), ref=lambda n, fn: np.mask_indices(n, np.triu)),
    C("take", f32, np.array([0, 5, 11], np.int32)), C("take", f64, np.array([[1, 0]]),
                                                         axis=2),
    C("take", v5, np.array([7, -8]), mode="wrap"), C("take", v5, np.array([7]), mode="clip"),
    C("take_along_axis", f32, np.argsort(f32, axis=1), axis=1),
    C("choose", np.array([0, 1, 2, 1], np.int32), [f32[0], pos[0], v5[:4]]),
    C("compress", np.array([True, False, True]), f32, axis=0),
    C("compress", np.array([0, 1]), f32, ref=lambda c, a: np.compress(c, a)),
    C("extract", b, f32), C("diagonal", f64, 1, 1, 2), C("diagonal", f32),
    C("select", [f32 > 1, f32 < -1], [f32, pos], default=-5.0),
    # -- statistics -----------------------------------------------------------------------
    C("amax", f32), C("amax", f64, axis=(0, 1)), C("amin", i32, axis=0, keepdims=True),
    C("max", u8, axis=1), C("min", f32, initial=-10.0), C("max", f32, where=b, initial=-9.0),
    C("nanmax", nan_f, axis=1), C("nanmin", nan_f),
    C("nanmax", nan_f, axis=0, initial=1.0, where=b), C("nanmin", i32, initial=-9),
    C("ptp", f32, axis=0), C("ptp", i32),
    C("mean", f32), C("mean", i32, axis=1), C("mean", f64, axis=(0, 2), keepdims=True),
    C("mean", f32, where=b, axis=1), C("nanmean", nan_f, axis=1),
    C("average", f32), C("average", f32, axis=1, weights=v5b[:4] + 4),
    C("average", f32, weights=pos, returned=True), C("var", f32), C("var", f64, 1, ddof=1),
    C("var", i32, axis=0, keepdims=True), C("nanvar", nan_f, axis=0, ddof=1),
    C("std", f32), C("std", f64, axis=(1, 2)), C("nanstd", nan_f),
    C("median", f32), C("median", f64, axis=1), C("median", i32, axis=0, keepdims=True),
    C("nanmedian", nan_f, axis=1), C("percentile", f32, 30), C("percentile", f64, [10, 90],
                                                                axis=2),
    C("nanpercentile", nan_f, 50, axis=0), C("quantile", f32, 0.25, method="lower"),
    C("quantile", i32, [0.5, 0.75], axis=1), C("nanquantile", nan_f, 0.9),
    C("cov", f32, rtol=1e-4), C("cov", f64[0], rowvar=False),
    C("cov", v5, v5b, ddof=0), C("cov", f64[0], fweights=np.array([1, 2, 1, 3]),
                                 aweights=np.array([0.5, 1, 2, 1])),
    C("corrcoef", f32, rtol=1e-4), C("corrcoef", v5, v5b),
    C("histogram", v5), C("histogram", f32, bins=4, range=(-2, 2)),
    C("histogram", f32, bins=np.array([-3.0, 0.0, 1.0, 3.0]), density=True),
    C("histogram", f32, bins="auto"), C("histogram_bin_edges", f32, 6),
    C("histogram2d", v5, v5b, bins=3), C("histogramdd", data((20, 3), seed=3), bins=(2, 3, 4)),
    C("bincount", ints5), C("bincount", ints5, weights=v5, minlength=8),
    C("digitize", f32, np.array([-1.0, 0.0, 2.0])),
    C("digitize", f32, np.array([2.0, 0.0, -1.0]), right=True),
    C("count_nonzero", i32), C("count_nonzero", i32, axis=1, keepdims=True),
    C("searchsorted", np.sort(v5), f32), C("searchsorted", v5, v5b, side="right",
                                            sorter=np.argsort(v5)),
    C("partition", f32, 2, ref=lambda a, k: np.partition(a, k)),
    C("argpartition", v5, 1),
    C("lexsort", (ints5, v5)), C("lexsort", np.stack([i32 % 2, i32]), axis=0),
    # -- sorting (on MNN.expr's sort/argmax/cumsum ops) ----------------------------------
    C("sort", nan_f), C("sort", f64, axis=0), C("sort", i32, axis=None),
    C("argsort", f32, ref=lambda a: np.argsort(a, kind="stable")),
    C("argsort", np.array([2, 1, 2, 1, 0], np.int32), ref=lambda a: np.argsort(a, kind="stable")),
    C("argsort", f64, axis=1, kind="stable"),
    C("msort", f32, ref=lambda a: np.sort(a, axis=0)),
    C("sort_complex", v5, ref=lambda a: np.sort(a)),
    C("argmax", f32), C("argmax", nan_f, axis=1), C("argmax", i32, axis=0, keepdims=True),
    C("argmin", f64, axis=2), C("argmin", u8), C("nanargmax", nan_f, axis=0),
    C("nanargmin", nan_f),
    C("cumsum", f32), C("cumsum", i32, axis=1), C("cumsum", b, axis=0),
    C("cumprod", pos, axis=0), C("cumprod", i32, dtype=np.float64),
    C("nancumsum", nan_f, axis=1), C("nancumprod", nan_f),
    C("isin", i32, ints5), C("isin", f32, nan_f, invert=True),
    C("isin", ints5, np.array([], np.int32)),
    C("intersect1d", i32, ints5), C("intersect1d", i32, ints5, return_indices=True),
    C("union1d", i32, ints5), C("setdiff1d", i32, ints5), C("setxor1d", i32, ints5),
    C("setdiff1d", ints5, np.array([], np.int32)),
    # -- functional and dtype helpers ------------------------------------------------------
    C("apply_along_axis", lambda r: r * 2 + r.sum(), 1, f32, raw=(0,),
      ref=lambda fn, ax, a: np.apply_along_axis(lambda r: r * 2 + r.sum(), ax, a)),
    C("apply_along_axis", lambda r: r.max(), 0, f64, raw=(0,),
      ref=lambda fn, ax, a: np.apply_along_axis(np.max, ax, a)),
    C("apply_along_axis", lambda r: mnp.outer(r, r), 0, f32, raw=(0,),
      ref=lambda fn, ax, a: np.apply_along_axis(lambda r: np.outer(r, r), ax, a)),
    C("apply_over_axes", mnp.sum, f64, [0, 2], raw=(0,),
      ref=lambda fn, a, axes: np.apply_over_axes(np.sum, a, axes)),
    C("piecewise", f32, [f32 < 0, f32 > 1], [lambda v: -v, 2.0, lambda v: v * 10],
      raw=(2,)),
    C("piecewise", v5, v5 > 0, [lambda v: v * v], raw=(2,)),
    C("result_type", f32, 2.0, raw=(1,)),
    C("promote_types", "int8", "uint8", raw=(0, 1)),
    C("can_cast", i32, np.float64, raw=(1,)), C("issubdtype", np.float32, np.floating,
                                              raw=(0, 1)),
    # -- pad and products -----------------------------------------------------------------
    C("pad", f32, 2), C("pad", f32, ((1, 0), (2, 3)), mode="reflect"),
    C("pad", i32, (1, 2), mode="edge"), C("pad", f64, 1, mode="wrap"),
    C("pad", f32, 2, mode="linear_ramp", end_values=(1, 2)),
    C("pad", f32, ((0, 2), (3, 1)), mode="mean", stat_length=2),
    C("pad", u8, 1, mode="constant", constant_values=7), C("pad", f32, 3, mode="symmetric",
                                                           reflect_type="odd"),
    C("pad", f32, 1, mode="maximum"), C("pad", f32, 1, mode="minimum"),
    C("pad", f32, 1, mode="median"),
    C("dot", f32, pos.T), C("dot", v5, v5b), C("dot", f64, f64[0].T), C("dot", f32, 2.0,
                                                                        raw=(1,)),
    C("vdot", f32, pos), C("inner", f32, pos), C("inner", v5, 3.0, raw=(1,)),
    C("outer", v5, f32), C("matmul", f64, f64[0].T), C("matmul", v5[:4], f32.T),
    C("tensordot", f64, f64, axes=([1, 2], [1, 2])), C("tensordot", f32, pos.T, 1),
    C("einsum", "ij,kj->ik", f32, pos, raw=(0,)), C("einsum", "bij->j", f64, raw=(0,)),
    C("einsum", f32, [0, 1], pos, [2, 1], [0, 2], raw=(1, 3, 4),
      ref=lambda a, s1, c, s2, so: np.einsum(a, s1, c, s2, so)),
    C("kron", f32[:2, :2], sq), C("trace", f64, 1),
]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_numpy(case):
    ours = getattr(mnp, case.name)
    args = [a if i in case.raw else as_vars(a) for i, a in enumerate(case.args)]
    kwargs = {k: as_vars(v) for k, v in case.kwargs.items()}
    got = ours(*args, **kwargs)
    want = case.ref(*case.args, **case.kwargs)
    if isinstance(want, np.matrix):
        want = np.asarray(want)
    if case.name == "copyto":
        got = want = None
    assert_matches(got, want, case.rtol, case.atol, case.exact, case.name)


def test_type_information_accepts_mnn_dtype_names():
    assert mnp.finfo(mnp.float32).eps == np.finfo(np.float32).eps
    assert mnp.finfo(as_vars(f64)).max == np.finfo(np.float64).max
    assert mnp.iinfo(mnp.uint8).max == 255 and mnp.iinfo(mnp.int32).min == -2**31
    assert mnp.result_type(mnp.int32, mnp.float32) == np.float64
    assert mnp.issubdtype(as_vars(i32).dtype, np.integer)


def test_partition_puts_kth_in_place():
    x = data((4, 9), seed=3)
    got = np.asarray(mnp.partition(x, [2, 6], axis=1))
    s = np.sort(x, axis=1)
    np.testing.assert_array_equal(got[:, [2, 6]], s[:, [2, 6]])
    assert np.all(got[:, :2] <= got[:, 2:3]) and np.all(got[:, 7:] >= got[:, 6:7])
    idx = np.asarray(mnp.argpartition(x, 4, axis=None))
    np.testing.assert_array_equal(x.ravel()[idx[4]], np.sort(x.ravel())[4])


def test_svd_reconstructs_and_matches_singular_values():
    a = data((5, 3), np.float64)
    u, s, vh = mnp.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    u, s, vh = mnp.linalg.svd(data((2, 3, 4)))
    assert u.shape == [2, 3, 3] and s.shape == [2, 3] and vh.shape == [2, 4, 4]
    np.testing.assert_allclose(np.asarray(mnp.linalg.svd(a, compute_uv=False)),
                               np.linalg.svd(a, compute_uv=False), rtol=1e-12)


@pytest.mark.parametrize("ord_,axis", [(None, None), ("fro", None), ("nuc", None),
                                       (1, None), (-1, None), (2, None), (-2, None),
                                       (np.inf, None), (-np.inf, None), (None, 1),
                                       (0, 0), (1, 1), (3, 1), (np.inf, 0), (-np.inf, 1),
                                       ("fro", (1, 0)), (2, (0, 1))])
def test_linalg_norm(ord_, axis):
    a = data((4, 3), np.float64, seed=2)
    got = mnp.linalg.norm(a, ord_, axis)
    assert_matches(got, np.linalg.norm(a, ord_, axis), rtol=1e-12, atol=1e-12)
    got = mnp.linalg.norm(a, ord_, axis, keepdims=True)
    assert_matches(got, np.linalg.norm(a, ord_, axis, keepdims=True), rtol=1e-12,
                   atol=1e-12)


def test_linalg_norm_of_higher_rank_and_vectors():
    x = data((2, 3, 4))
    assert_matches(mnp.linalg.norm(x), np.linalg.norm(x))
    assert_matches(mnp.linalg.norm(x, axis=(1, 2)), np.linalg.norm(x, axis=(1, 2)), 1e-5)
    assert_matches(mnp.linalg.norm(v5, 3), np.linalg.norm(v5, 3), 1e-5)
    with pytest.raises(ValueError):
        mnp.linalg.norm(x, 2)


def test_linalg_factorizations_and_derived():
    r = np.random.default_rng(0)
    a = r.standard_normal((4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    tall = r.standard_normal((6, 3))
    y = r.standard_normal(6)
    la = mnp.linalg
    assert_matches(la.cholesky(spd), np.linalg.cholesky(spd), 1e-10, 1e-12)
    assert_matches(la.qr(tall), tuple(np.linalg.qr(tall)), 1e-10, 1e-12)
    assert_matches(la.qr(tall, "r"), np.linalg.qr(tall, "r"), 1e-10, 1e-12)
    assert_matches(la.eigvalsh(spd), np.linalg.eigvalsh(spd), 1e-10, 1e-12)
    w, v = la.eigh(spd)
    np.testing.assert_allclose(np.asarray(v) * np.asarray(w) @ np.asarray(v).T, spd,
                               atol=1e-10)
    assert_matches(la.pinv(tall), np.linalg.pinv(tall), 1e-10, 1e-12)
    assert_matches(la.lstsq(tall, y), tuple(np.linalg.lstsq(tall, y)), 1e-10, 1e-12)
    for n in (-3, 0, 1, 5):
        assert_matches(la.matrix_power(a, n), np.linalg.matrix_power(a, n), 1e-9, 1e-10)
    assert_matches(la.multi_dot([y[:4], a, a.T, a]), np.linalg.multi_dot([y[:4], a, a.T, a]),
                   1e-10, 1e-10)
    assert_matches(la.matrix_rank(tall @ tall.T), np.linalg.matrix_rank(tall @ tall.T))
    for p in (None, 2, -2, 1, -1, "fro", np.inf):
        assert_matches(la.cond(a, p), np.linalg.cond(a, p), 1e-9, 1e-10)


@pytest.mark.parametrize("fn", ["solve", "inv", "det", "slogdet"])
def test_linalg_solvers(fn):
    a = data((2, 3, 3), np.float64) + 4 * np.eye(3)
    bvec = data((2, 3, 2), np.float64, seed=5)
    args = (a, bvec) if fn == "solve" else (a,)
    assert_matches(getattr(mnp.linalg, fn)(*args), getattr(np.linalg, fn)(*args),
                   rtol=1e-10, atol=1e-12)
