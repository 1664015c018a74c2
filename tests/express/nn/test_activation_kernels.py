"""The compiled activation kernels (activation.pyx: relu6/clip, hardswish, silu, and the
float32 sigmoid and gelu that elementwise.py routes to them) on arrays large enough to
take the kernel path and split over threads, with special values, against torch in
float64 (rounded to float32)."""
import mnn.expr as F
import numpy as np
import pytest
import scipy.special as sp
import torch
import torch.nn.functional as TF

from mnn.express.ops.elementwise import COMPILED_MIN_SIZE

RNG = np.random.default_rng(41)

CASES = [
    ("relu6", F.relu6, TF.relu6, 0.0),
    ("clip", lambda v: F.relu6(v, -1.5, 2.5), lambda t: torch.clamp(t, -1.5, 2.5), 0.0),
    ("hardswish", F.hardswish, TF.hardswish, 3e-7),
    ("silu", F.silu, TF.silu, 4e-7),
    ("sigmoid", F.sigmoid, torch.sigmoid, 4e-7),
    # gelu's erfc fit: relative error up to 3e-6 in the negative tail, where float32's exp of
    # -x^2/2 loses digits (absolute error < 1e-13 below |gelu| = 1e-8). The reference is
    # x/2 erfc(-x/sqrt 2) (torch's float64 1 + erf cancels below x = -8).
    ("gelu", F.gelu, lambda t: 0.5 * t * torch.tensor(sp.erfc(-t.numpy() / np.sqrt(2))),
     3e-6),
]

SPECIAL = np.float32([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0, 6.0,
                      87.0, -87.0, 88.5, -88.5, 100.0, -100.0, -20.0, 20.0])


def _atol(name):
    # Outputs that float32 can only hold as subnormals may flush to zero.
    return 1e-13 if name == "gelu" else 2e-38


def _input(n):
    x = RNG.standard_normal(n).astype(np.float32) * 4
    x[:SPECIAL.size] = SPECIAL
    return x


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,ours,theirs,rtol", CASES)
def test_kernel_matches_torch_float64(name, ours, theirs, rtol, threads):
    x = _input(7 * (COMPILED_MIN_SIZE // 2 + 77)).reshape(7, -1)
    F.set_thread_number(threads)
    try:
        got = np.asarray(ours(F.const(x)).read())
    finally:
        F.set_thread_number(1)
    ref = theirs(torch.tensor(x, dtype=torch.float64)).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref.astype(np.float32), rtol=max(rtol, 1e-30),
                               atol=_atol(name))


# sigmoid and gelu take the kernel only on contiguous float32 (elementwise.py's rule).
@pytest.mark.parametrize("name,ours,theirs,rtol", CASES[:4])
def test_kernel_on_non_contiguous_and_float64_input(name, ours, theirs, rtol):
    x = _input(2 * COMPILED_MIN_SIZE).reshape(256, -1)
    xt = F.transpose(F.const(x), [1, 0])  # a strided view when computed
    ref = theirs(torch.tensor(x.T.copy(), dtype=torch.float64)).numpy()
    np.testing.assert_allclose(ours(xt).read(), ref.astype(np.float32),
                               rtol=max(rtol, 1e-30), atol=_atol(name))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(ours(F.const(x64)).read(), theirs(torch.tensor(x64)).numpy(),
                               rtol=1e-12, atol=1e-300)
