"""Gradients of gather/scatter, slicing, indexing, pad, tile, cumsum and friends against
finite differences and torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mnn.expr as F
from test_grad_checker import check

RNG = np.random.default_rng(13)
X = RNG.standard_normal((4, 3, 5))


def test_gather_with_repeated_indices_accumulates():
    idx = np.array([2, 0, 2, 3], np.int32)
    check(lambda a: F.gather(a, F.const(idx), 0), [X],
          lambda a: a[torch.from_numpy(idx).long()])
    check(lambda a: F.gather(a, F.const(np.array([[4, 1], [1, 1]], np.int32)), 2), [X],
          lambda a: a[:, :, torch.tensor([[4, 1], [1, 1]])])


def test_gather_nd():
    idx = np.array([[0, 1], [3, 2], [0, 1]], np.int32)
    check(lambda a: F.gather_nd(a, F.const(idx)), [X],
          lambda a: a[torch.tensor([0, 3, 0]), torch.tensor([1, 2, 1])])


def test_scatter_nd_gradient_reads_updates_back():
    idx = np.array([[1], [3], [0]], np.int32)
    upd = RNG.standard_normal((3, 5))

    def theirs(u):
        out = torch.zeros(4, 5, dtype=u.dtype)
        return out.index_put((torch.tensor([1, 3, 0]),), u)

    check(lambda u: F.scatter_nd(F.const(idx), u, [4, 5]), [upd], theirs)


def test_getitem_slices_and_steps():
    check(lambda a: a[1:3, ::-1, ::2], [X], lambda a: a[1:3].flip(1)[:, :, ::2])
    check(lambda a: a[..., 2] * a[0, :, 1], [X], lambda a: a[..., 2] * a[0, :, 1])


def test_strided_slice():
    check(lambda a: F.strided_slice(a, [0, 1, 0], [4, 3, 5], [2, 1, 2]), [X],
          lambda a: a[0:4:2, 1:3, 0:5:2])


def test_setitem_gradient_flows_to_both_sides():
    def ours(a, b):
        out = a * 1.0
        out[1:3, 0] = b
        return out

    def theirs(a, b):
        out = a * 1.0
        out[1:3, 0] = b
        return out

    check(ours, [X, RNG.standard_normal((2, 5))], theirs)


def test_pad_constant():
    pads = [[1, 0], [0, 2], [2, 1]]
    check(lambda a: F.pad(a, F.const(np.array(pads, np.int32))), [X],
          lambda a: TF.pad(a, (2, 1, 0, 2, 1, 0)))


def test_tile_and_cumsum():
    check(lambda a: F.tile(a, F.const(np.array([2, 1, 3], np.int32))), [X],
          lambda a: a.repeat(2, 1, 3))
    check(lambda a: F.cumsum(a, 1), [X], lambda a: torch.cumsum(a, 1))
    check(lambda a: F.cumsum(a, 2, reverse=True), [X],
          lambda a: torch.cumsum(a.flip(2), 2).flip(2))


def test_convert_is_transparent_to_gradients():
    x = RNG.standard_normal((1, 2, 3, 4))
    check(lambda a: F.convert(F.convert(a, F.NHWC), F.NCHW) * a, [x], lambda a: a * a)


@pytest.mark.parametrize("axis", [0, 2])
def test_sort_values(axis):
    x = RNG.permutation(60).reshape(4, 3, 5) * 0.1
    check(lambda a: F.sort(a, axis), [x], lambda a: torch.sort(a, axis).values)
