"""The float32 softmax kernel (softmax.pyx, include/softmax_row.h) on row lengths around
its 16-lane and 512-element block edges, on the channel axis, with -inf / inf / NaN
entries and 1 or 2 threads, against torch in float64."""
import mnn.expr as F
import numpy as np
import pytest
import torch

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("n", [1, 7, 16, 17, 511, 512, 513, 1000, 1537])
def test_rows_match_torch(n, log, threads):
    x = (RNG.standard_normal((37, n)) * 8).astype(np.float32)
    F.set_thread_number(threads)
    try:
        y = (F.log_softmax if log else F.softmax)(F.const(x), -1).read()
    finally:
        F.set_thread_number(1)
    t = torch.tensor(x, dtype=torch.float64)
    ref = (torch.log_softmax if log else torch.softmax)(t, -1).numpy()
    # log_softmax's x - max - log(sum) is rounded at the scale of |x| (up to ~30 here):
    # an ulp there is ~2e-6, whatever order the row sum took (the portable build's differs)
    atol = 2 * np.finfo(np.float32).eps * float(np.abs(x).max()) if log else 1e-7
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=atol)


@pytest.mark.parametrize("log", [False, True])
def test_special_values_match_torch(log):
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    x[0, 3] = -np.inf              # a -inf entry: probability 0
    x[1, :] = -np.inf              # a whole -inf row: NaN (as torch)
    x[2, 5] = np.inf               # an inf entry: NaN row
    x[3, 7] = np.nan               # NaN propagates
    x[4, :] = 1e30                 # huge but equal: uniform
    x[5, ::2] = -1e4               # far below the max: underflows to 0
    y = (F.log_softmax if log else F.softmax)(F.const(x), -1).read()
    t = torch.tensor(x, dtype=torch.float64)
    ref = (torch.log_softmax if log else torch.softmax)(t, -1).numpy()
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    np.testing.assert_allclose(y, ref.astype(np.float32), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("log", [False, True])
def test_channel_axis_matches_torch(log):
    x = (RNG.standard_normal((3, 21, 9, 11)) * 5).astype(np.float32)
    y = (F.log_softmax if log else F.softmax)(F.const(x), 1).read()
    t = torch.tensor(x, dtype=torch.float64)
    ref = (torch.log_softmax if log else torch.softmax)(t, 1).numpy()
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-6 if log else 1e-7)
