"""The compiled activation kernels (activation.pyx: relu (leaky too), relu6/clip,
hardswish, silu, and the float32 sigmoid, gelu and tanh that elementwise.py routes to
them) on arrays large enough to take the kernel path and split over threads, with
special values, against torch in float64 (rounded to float32)."""
import mnn.expr as F
import numpy as np
import pytest
import scipy.special as sp
import torch
import torch.nn.functional as TF

from mnn.express.ops.elementwise import COMPILED_MIN_SIZE

RNG = np.random.default_rng(41)

CASES = [
    ("relu", F.relu, torch.relu, 0.0),
    ("leaky relu", lambda v: F.relu(v, 0.1), lambda t: TF.leaky_relu(t, 0.1), 1.2e-7),
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
    # tanh: within 2 ulp, a relative error of at most 2**-22 (from expm1; numpy's and
    # torch's float32 tanh: within 1.4 and 1 ulp)
    ("tanh", F.tanh, torch.tanh, 2.0 ** -22),
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


# sigmoid, gelu and tanh take the kernel only on contiguous float32 (elementwise.py's
# rule); the nn_activation ops make any float32 or float64 input contiguous for theirs.
@pytest.mark.parametrize("name,ours,theirs,rtol", CASES[:6])
def test_kernel_on_non_contiguous_and_float64_input(name, ours, theirs, rtol):
    x = _input(2 * COMPILED_MIN_SIZE).reshape(256, -1)
    xt = F.transpose(F.const(x), [1, 0])  # a strided view when computed
    ref = theirs(torch.tensor(x.T.copy(), dtype=torch.float64)).numpy()
    np.testing.assert_allclose(ours(xt).read(), ref.astype(np.float32),
                               rtol=max(rtol, 1e-30), atol=_atol(name))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(ours(F.const(x64)).read(), theirs(torch.tensor(x64)).numpy(),
                               rtol=1e-12, atol=1e-300)


def test_tanh_kernel_keeps_the_sign_of_zero_and_rounds_near_one():
    # numpy's tanh as the oracle for signed zeros; near 0, around where expm1's range
    # reduction changes k, and where tanh rounds to 1 in float32 (|x| >= 9.01), within
    # 2 ulp of float64.
    x = np.full(COMPILED_MIN_SIZE, -0.0, np.float32)
    x[1::2] = np.linspace(-10, 10, COMPILED_MIN_SIZE // 2, dtype=np.float32)
    x[1:9] = [1e-30, -1e-7, 0.1732868, -0.1732868, 9.0, 9.1, -9.1, 44.0]
    got = F.tanh(F.const(x)).read()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.tanh(x)))
    exact = np.tanh(x.astype(np.float64))
    assert np.all(np.abs(got - exact) <= 2 * np.spacing(np.abs(exact).astype(np.float32)))
