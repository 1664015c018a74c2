"""The two-matrix path of matmul that dense layers and their gradients take
(mnn/express/ops/linalg.py ``_matmul_2d``) against numpy: transposed flags, operands that
are transposed or strided views (computed values can be), an empty inner dimension, both
float dtypes, one and two threads; and a linear layer's step against torch."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn import nn, optim
from mnn.express.ops.linalg import _matmul_compute

RNG = np.random.default_rng(11)


def _layouts(matrix):
    """The same values as a contiguous array, a transposed view and a strided view."""
    yield matrix
    yield np.ascontiguousarray(matrix.T).T
    wide = np.zeros((matrix.shape[0], 2 * matrix.shape[1]), matrix.dtype)
    wide[:, ::2] = matrix
    yield wide[:, ::2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_two_matrix_products_match_numpy(dtype, ta, tb, threads):
    m, k, n = 67, 130, 301
    a = RNG.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = RNG.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        for a_view in _layouts(a):
            for b_view in _layouts(b):
                got = _matmul_compute([a_view, b_view], ta, tb)
                assert got.dtype == dtype and got.shape == (m, n)
                tol = 1e-4 if dtype == np.float32 else 1e-12
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    finally:
        F.set_thread_number(before)


def test_empty_inner_dimension_gives_zeros_and_mismatch_raises():
    got = _matmul_compute([np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)],
                          False, False)
    np.testing.assert_array_equal(got, np.zeros((3, 4), np.float32))
    with pytest.raises(F.MnnError, match="inner dimensions differ: 5 vs 4"):
        F.matmul(F.const(np.ones((3, 5), np.float32)), F.const(np.ones((4, 2), np.float32)))


def test_linear_step_on_a_transposed_input_matches_torch():
    # The input is a transposed view inside the graph, so the forward and the weight
    # gradient read it with the transposed flag flipped.
    layer = nn.linear(6, 3)
    w0, b0 = (p.read().copy() for p in layer.parameters)
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    opt = optim.SGD(layer, 0.1, 0.9)
    tw = torch.tensor(w0, requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    topt = torch.optim.SGD([tw, tb], lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.step(F.reduce_sum(F.square(layer(F.transpose(F.const(x), [1, 0])))))
        topt.zero_grad()
        ((torch.from_numpy(x).T @ tw.T + tb) ** 2).sum().backward()
        topt.step()
    for p, t in zip(layer.parameters, (tw, tb)):
        np.testing.assert_allclose(p.read(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
