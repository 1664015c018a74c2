"""Property tests (hypothesis): reductions, reshapes, joins and splits of random shapes,
axes and dtypes agree with numpy."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mnn.numpy as mnp

from numpy_helpers import assert_matches

_DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.uint8])


@st.composite
def arrays(draw, min_dims=1, max_dims=4):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims)))
    dtype = draw(_DTYPES)
    seed = draw(st.integers(0, 2**16))
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return r.uniform(-5, 5, shape).astype(dtype)
    return r.integers(0, 9, shape).astype(dtype)


@st.composite
def array_and_axis(draw):
    a = draw(arrays())
    axes = draw(st.lists(st.integers(-a.ndim, a.ndim - 1), unique_by=lambda i: i % a.ndim,
                         max_size=a.ndim))
    return a, (tuple(axes) if axes else None), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(array_and_axis(), st.sampled_from(["mean", "amax", "amin", "var", "std", "ptp",
                                          "median", "any", "all", "count_nonzero"]))
def test_reductions(case, name):
    a, axis, keepdims = case
    if name in ("ptp",) and axis is not None and len(axis) > 1:
        axis = axis[0]
    kwargs = {"axis": axis, "keepdims": keepdims}
    want = getattr(np, name)(a, **kwargs)
    assert_matches(getattr(mnp, name)(a, **kwargs), want, rtol=1e-4, atol=1e-5, where=name)


@settings(max_examples=40, deadline=None)
@given(array_and_axis())
def test_sum_and_prod_values(case):
    a, axis, keepdims = case
    for name in ("sum", "prod"):
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        got = np.asarray(getattr(mnp, name)(a, axis=axis, keepdims=keepdims))
        # Integer sums keep the input's integer type (MNN); compare in that type.
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-4, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(arrays(), st.data())
def test_reshape_transpose_flip_roll(a, data):
    perm = data.draw(st.permutations(range(a.ndim)))
    assert_matches(mnp.transpose(a, perm), np.transpose(a, perm), exact_dtype=True)
    assert_matches(mnp.reshape(a, (-1, a.shape[-1])), a.reshape(-1, a.shape[-1]))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    shift = data.draw(st.integers(-7, 7))
    assert_matches(mnp.flip(a, axis), np.flip(a, axis), exact_dtype=True)
    assert_matches(mnp.roll(a, shift, axis), np.roll(a, shift, axis), exact_dtype=True)
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4)))
    assert_matches(mnp.tile(a, reps), np.tile(a, reps), exact_dtype=True)


@settings(max_examples=40, deadline=None)
@given(arrays(), st.data())
def test_join_and_split_round_trip(a, data):
    axis = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    parts = mnp.split(a, cuts, axis=axis)
    want = np.split(a, cuts, axis=axis)
    assert_matches(parts, want, exact_dtype=True)
    assert_matches(mnp.concatenate(parts, axis=axis), a, exact_dtype=True)
    sections = data.draw(st.integers(1, 5))
    assert_matches(mnp.array_split(a, sections, axis=axis),
                   np.array_split(a, sections, axis=axis), exact_dtype=True)


@settings(max_examples=30, deadline=None)
@given(arrays(max_dims=2), st.sampled_from(["constant", "edge", "reflect", "symmetric",
                                            "wrap", "mean", "linear_ramp"]), st.data())
def test_pad_modes(a, mode, data):
    widths = [tuple(data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2)))
              for _ in range(a.ndim)]
    if a.dtype == np.uint8 and mode == "linear_ramp":
        mode = "edge"
    assert_matches(mnp.pad(a, widths, mode=mode), np.pad(a, widths, mode=mode),
                   exact_dtype=True)
