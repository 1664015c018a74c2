"""Gradients through mnn.numpy: the np_* ops' rules and the composite functions, against
central differences (float64), and the linear-algebra rules against torch."""
import numpy as np
import pytest
import torch

import mnn.expr as F
import mnn.numpy as mnp

from numpy_helpers import data, gradcheck

A = data((3, 4), np.float64)
B = data((3, 4), np.float64, seed=1, low=0.5, high=3.0)
V = data((5,), np.float64, seed=2)
SPD = data((3, 3), np.float64, seed=3) + 4 * np.eye(3)

CASES = [
    ("roll", lambda x: mnp.roll(x, (1, -2), axis=(0, 1)), [A]),
    ("roll_flat", lambda x: mnp.roll(x, 5), [A]),
    ("flip", lambda x: mnp.flip(x, 1), [A]),
    ("rot90", lambda x: mnp.rot90(x), [A]),
    ("diag", lambda v: mnp.diag(v, 1), [V]),
    ("repeat", lambda x: mnp.repeat(x, 3, axis=1), [A]),
    ("repeat_counts", lambda x: mnp.repeat(x, [2, 0, 1], axis=0), [A]),
    ("repeat_flat", lambda x: mnp.repeat(x, 2), [A]),
    ("tile", lambda x: mnp.tile(x, (2, 1, 2)), [A]),
    ("fmod", lambda x, y: mnp.fmod(x, y), [A, B]),
    ("fmax", lambda x, y: mnp.fmax(x, y), [A, B]),
    ("fmin", lambda x, y: mnp.fmin(x, y), [A, B]),
    ("cbrt", lambda x: mnp.cbrt(x), [B]),
    ("exp2_log2_log10", lambda x: mnp.exp2(x) + mnp.log2(x) + mnp.log10(x), [B]),
    ("logaddexp", lambda x, y: mnp.logaddexp(x, y) + mnp.logaddexp2(x, y), [A, B]),
    ("hypot", lambda x, y: mnp.hypot(x, y), [A, B]),
    ("copysign", lambda x, y: mnp.copysign(x, y), [B, A]),
    ("ldexp", lambda x: mnp.ldexp(x, np.array([1, -2, 0, 3], np.int32)), [A]),
    ("unwrap", lambda x: mnp.unwrap(x * 3), [A]),
    ("pad_constant", lambda x: mnp.pad(x, ((1, 2), (0, 3)), constant_values=2.0), [A]),
    ("cross", lambda x, y: mnp.cross(x, y), [A[:, :3], B[:, :3]]),
    ("trapezoid", lambda y: mnp.trapezoid(y, dx=0.5), [A]),
    ("tril_triu", lambda x: mnp.tril(x, 1) * 2 + mnp.triu(x, -1), [A]),
    ("var_std", lambda x: mnp.var(x, axis=0, ddof=1) + mnp.std(x), [A]),
    ("average", lambda x, w: mnp.average(x, axis=1, weights=w), [A, B[0]]),
    ("cov", lambda x: mnp.cov(x), [A]),
    ("norm", lambda x: mnp.linalg.norm(x, axis=1) + mnp.linalg.norm(x, 3, axis=1), [A]),
    ("norm_matrix", lambda x: mnp.linalg.norm(x, 1) + mnp.linalg.norm(x, np.inf), [A]),
    ("tensordot", lambda x, y: mnp.tensordot(x, y, ([1], [1])), [A, B]),
    ("kron", lambda x, y: mnp.kron(x, y), [A[:2, :2], B[:2, :3]]),
    ("einsum", lambda x, y: mnp.einsum("ij,kj->ik", x, y), [A, B]),
    ("einsum_sum", lambda x, y: mnp.einsum("ij,j->", x, y), [A, B[0]]),
    ("einsum_outer", lambda x, y: mnp.einsum("i,j->ij", x, y), [V, B[0]]),
    ("solve", lambda a, b: mnp.linalg.solve(a, b), [SPD, A[:, :2]]),
    ("solve_vec", lambda a, b: mnp.linalg.solve(a, b), [SPD, V[:3]]),
    ("inv", lambda a: mnp.linalg.inv(a), [SPD]),
    ("det", lambda a: mnp.linalg.det(a), [SPD]),
    ("matrix_power", lambda a: mnp.linalg.matrix_power(a, 3), [SPD]),
    ("matrix_power_neg", lambda a: mnp.linalg.matrix_power(a, -2), [SPD]),
    ("multi_dot", lambda a, b: mnp.linalg.multi_dot([a, b.T, a]), [A, B]),
    ("det_batched", lambda a: mnp.linalg.det(a), [np.stack([SPD, SPD.T * 0.5])]),
    ("nan_to_num", lambda x: mnp.nan_to_num(x * 2), [A]),
    ("clip", lambda x: mnp.clip(x, -1, 1.5), [A]),
    ("dot", lambda x, y: mnp.dot(x, y.T), [A, B]),
    ("take", lambda x: mnp.take(x, np.array([[0, 2], [2, 1]]), axis=1), [A]),
    ("take_flat_repeated", lambda x: mnp.take(x, np.array([0, 5, 5, -1])), [A]),
    ("take_wrap", lambda x: mnp.take(x, np.array([7, -9]), axis=1, mode="wrap"), [A]),
    ("take_along_axis", lambda x: mnp.take_along_axis(x, np.array([[0], [3], [3]]), 1), [A]),
    ("permutation", lambda x: (mnp.random.seed(3), mnp.random.permutation(x))[1], [A]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(name, fn, arrays):
    gradcheck(fn, [np.array(a, np.float64) for a in arrays], rtol=1e-5, atol=1e-6)


def test_linalg_gradients_match_torch():
    a = data((2, 3, 3), np.float64) + 4 * np.eye(3)
    b = data((2, 3, 2), np.float64, seed=1)
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    w = data((2, 3, 2), np.float64, seed=4)
    tloss = (torch.linalg.solve(ta, tb) * torch.tensor(w)).sum() + \
        torch.linalg.det(ta).sum() + (torch.linalg.inv(ta) ** 2).sum()
    tloss.backward()
    va, vb = F.const(a), F.const(b)
    loss = F.reduce_sum(mnp.linalg.solve(va, vb) * F.const(w)) + \
        F.reduce_sum(mnp.linalg.det(va)) + F.reduce_sum(mnp.square(mnp.linalg.inv(va)))
    ga, gb = F.grad(loss, [va, vb])
    np.testing.assert_allclose(np.asarray(ga), ta.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(gb), tb.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_ops_without_gradient_rules_say_so():
    x = F.const(A)
    with pytest.raises(ValueError, match="quantile"):
        F.grad(F.reduce_sum(mnp.median(x)), [x])
