"""Gradients of the numpy-surface ops (``mnn.numpy``) against finite differences and torch."""
import numpy as np
import pytest
import torch

import mnn.numpy as mnp
from test_grad_checker import check

RNG = np.random.default_rng(17)
X = RNG.standard_normal((3, 4))
POS = RNG.uniform(0.5, 2.0, (3, 4))

UNARY = {
    "cbrt": (POS, lambda t: torch.pow(t, 1 / 3)),
    "exp2": (X, torch.exp2),
    "log2": (POS, torch.log2),
    "log10": (POS, torch.log10),
    "cumprod_1": (POS, lambda t: torch.cumprod(t, 1)),
    "flip_0": (X, lambda t: torch.flip(t, [0])),
    "roll": (X, lambda t: torch.roll(t, 2, 1)),
    "repeat": (X, lambda t: torch.repeat_interleave(t, 2, 0)),
    "diag": (X[:3, :3], torch.diag),
    "transpose_einsum": (X, lambda t: torch.einsum("ij->ji", t)),
    "inv": (X[:3, :3] + 3 * np.eye(3), torch.linalg.inv),
    "det": (X[:3, :3] + 3 * np.eye(3), torch.linalg.det),
    "sort": (RNG.permutation(12).reshape(3, 4) * 0.3, lambda t: torch.sort(t, 1).values),
}

OURS = {
    "cbrt": mnp.cbrt, "exp2": mnp.exp2, "log2": mnp.log2, "log10": mnp.log10,
    "cumprod_1": lambda a: mnp.cumprod(a, 1), "flip_0": lambda a: mnp.flip(a, 0),
    "roll": lambda a: mnp.roll(a, 2, 1), "repeat": lambda a: mnp.repeat(a, 2, 0),
    "diag": mnp.diag, "transpose_einsum": lambda a: mnp.einsum("ij->ji", a),
    "inv": mnp.linalg.inv, "det": mnp.linalg.det, "sort": lambda a: mnp.sort(a, 1),
}


# Functions whose gradient is known wrong, with the reason. Empty: all agree with torch.
KNOWN_BUGS = {}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=KNOWN_BUGS[n]))
    if n in KNOWN_BUGS else n for n in sorted(UNARY)])
def test_unary(name):
    x, theirs = UNARY[name]
    check(OURS[name], [x], theirs)


BINARY = {
    "hypot": (mnp.hypot, torch.hypot),
    "logaddexp": (mnp.logaddexp, torch.logaddexp),
    "fmax": (mnp.fmax, torch.fmax),
    "copysign": (mnp.copysign, torch.copysign),
    "matmul_einsum": (lambda a, b: mnp.einsum("ij,kj->ik", a, b),
                      lambda a, b: torch.einsum("ij,kj->ik", a, b)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    ours, theirs = BINARY[name]
    check(ours, [X, RNG.standard_normal((3, 4)) + 0.1], theirs)


def test_solve():
    a = X[:3, :3] + 3 * np.eye(3)
    check(mnp.linalg.solve, [a, RNG.standard_normal((3, 2))], torch.linalg.solve)


def test_take_and_take_along_axis():
    idx = np.array([[0, 3], [2, 2], [1, 0]])
    check(lambda a: mnp.take_along_axis(a, mnp.array(idx), 1), [X],
          lambda t: torch.take_along_dim(t, torch.from_numpy(idx), 1))
    flat = np.array([0, 11, 5, 5])
    check(lambda a: mnp.take(a, mnp.array(flat)), [X],
          lambda t: torch.take(t, torch.from_numpy(flat)))
