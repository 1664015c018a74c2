"""Convolution gradients over several chunks of images (nn_conv.py's weight and input
gradients cut the batch into chunks; mnn/_cython/conv_grad.pyx lays each chunk's dy out
with the images side by side) against torch, at one and two threads, and the layout
kernel against numpy."""
import numpy as np
import pytest
import torch

import mnn.expr as F
from mnn._cython import conv_grad

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("group", [1, 2])
def test_conv_gradients_over_several_chunks_match_torch(threads, dtype, group):
    # 37 images of 20 x 12 x 12 with 5x5 kernels: the weight gradient takes them in
    # chunks of 16, 16 and 5 (the last one short), the input gradient in more.
    x = RNG.standard_normal((37, 20, 12, 12)).astype(dtype)
    w = RNG.standard_normal((50, 20 // group, 5, 5)).astype(dtype)
    seed = RNG.standard_normal((37, 50, 8, 8)).astype(dtype)
    before = F.get_thread_number()
    F.set_thread_number(threads)
    try:
        xv, wv = F.const(x), F.const(w)
        y = F.conv2d(xv, wv, group=group)
        gx, gw = F.grad([F.reduce_sum(y * F.const(seed))], [xv, wv])
        got_x, got_w = gx.read(), gw.read()
    finally:
        F.set_thread_number(before)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    (torch.nn.functional.conv2d(tx, tw, groups=group) * torch.from_numpy(seed)).sum().backward()
    rtol, atol = (1e-4, 1e-3) if dtype == np.float32 else (1e-10, 1e-10)
    np.testing.assert_allclose(got_w, tw.grad.numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(got_x, tx.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("threads", [1, 2])
def test_images_side_by_side_matches_numpy(threads):
    dy = RNG.standard_normal((5, 7, 9)).astype(np.float32)
    out = np.full((7, 45), np.nan, np.float32)
    conv_grad.images_side_by_side(dy, out, threads)
    np.testing.assert_array_equal(out, dy.transpose(1, 0, 2).reshape(7, 45))
    with pytest.raises(ValueError, match="does not fit"):
        conv_grad.images_side_by_side(dy, np.empty((7, 44), np.float32), threads)
    with pytest.raises(ValueError, match="does not fit"):
        conv_grad.images_side_by_side(dy, np.empty((6, 45), np.float32), threads)
