"""Vector and matrix products under numpy's names, built on ``matmul`` (differentiable)
and ``einsum``."""
import numpy as np

from ..express.ops import movement as _mv
from ..express.ops import np_linalg as _nla
from ..express.ops.linalg import matmul as _matmul
from ._util import asvar, axis_index, no_out

__all__ = ["dot", "vdot", "inner", "outer", "matmul", "tensordot", "einsum", "kron",
           "trace"]


def _prod(dims):
    return int(np.prod(dims, dtype=np.int64))


def tensordot(a, b, axes=2):
    """Sum of products over ``axes`` (an int: last n of ``a`` with first n of ``b``; or
    two sequences of axes)."""
    x, y = asvar(a), asvar(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError("mnn.numpy.tensordot: axes must be non-negative")
        ax_a = list(range(x.ndim - n, x.ndim))
        ax_b = list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("shape-mismatch for sum")
    ax_a = [axis_index(i, x.ndim) for i in ax_a]
    ax_b = [axis_index(i, y.ndim) for i in ax_b]
    for i, j in zip(ax_a, ax_b):
        if x.shape[i] != y.shape[j]:
            raise ValueError(f"shape-mismatch for sum: {x.shape[i]} vs {y.shape[j]}")
    free_a = [i for i in range(x.ndim) if i not in ax_a]
    free_b = [i for i in range(y.ndim) if i not in ax_b]
    summed = _prod([x.shape[i] for i in ax_a])
    xa = _mv.reshape(_mv.transpose(x, free_a + ax_a),
                     [_prod([x.shape[i] for i in free_a]), summed], zero_copies=False)
    yb = _mv.reshape(_mv.transpose(y, ax_b + free_b),
                     [summed, _prod([y.shape[i] for i in free_b])], zero_copies=False)
    out = _matmul(xa, yb)
    return _mv.reshape(out, [x.shape[i] for i in free_a] + [y.shape[i] for i in free_b],
                       zero_copies=False)


def dot(a, b, out=None):
    """numpy's ``dot``: products of scalars, inner product of vectors, matrix product,
    and the sum over the last axis of ``a`` and second-to-last of ``b`` in general."""
    no_out(out)
    x, y = asvar(a), asvar(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if y.ndim <= 2 or x.ndim == 1:
        if x.shape[-1] != y.shape[0 if y.ndim == 1 else -2]:
            raise ValueError(f"shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned")
        return _matmul(x, y)
    return tensordot(x, y, ([-1], [-2]))


def vdot(a, b):
    """Dot product of the flattened inputs."""
    x, y = _mv.reshape(asvar(a), [-1]), _mv.reshape(asvar(b), [-1])
    if x.shape != y.shape:
        raise ValueError("cannot reshape array: vdot needs inputs of one size")
    return _matmul(x, y)


def inner(a, b):
    """Sum of products over the last axes of ``a`` and ``b``."""
    x, y = asvar(a), asvar(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return tensordot(x, y, ([-1], [-1]))


def outer(a, b, out=None):
    """``a.ravel()[:, None] * b.ravel()[None, :]``."""
    no_out(out)
    return _mv.reshape(asvar(a), [-1, 1]) * _mv.reshape(asvar(b), [1, -1])


def matmul(x1, x2, out=None):
    """Matrix product with numpy's ``matmul`` rules (batched, broadcasting)."""
    no_out(out)
    x, y = asvar(x1), asvar(x2)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    return _matmul(x, y)


def kron(a, b):
    """Kronecker product: blocks of ``b`` scaled by the elements of ``a``."""
    x, y = asvar(a), asvar(b)
    n = max(x.ndim, y.ndim)
    xs = [1] * (n - x.ndim) + x.shape
    ys = [1] * (n - y.ndim) + y.shape
    inter_x, inter_y = [], []
    for dx, dy in zip(xs, ys):
        inter_x += [dx, 1]
        inter_y += [1, dy]
    prod = _mv.reshape(x, inter_x, zero_copies=False) * \
        _mv.reshape(y, inter_y, zero_copies=False)
    return _mv.reshape(prod, [dx * dy for dx, dy in zip(xs, ys)], zero_copies=False)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal."""
    no_out(out)
    from ..express.ops.np_shape import diagonal
    from .math import sum as _sum

    return _sum(diagonal(asvar(a), offset, axis1, axis2), axis=-1, dtype=dtype)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_form(args):
    """Convert numpy's interleaved ``einsum(op0, sub0, op1, sub1, ..., [out])`` form."""
    args = list(args)
    output = args.pop() if len(args) % 2 == 1 else None

    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)
    operands = args[0::2]
    spec = ",".join(letters(s) for s in args[1::2])
    if output is not None:
        spec += "->" + letters(output)
    return spec, operands


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation (numpy's ``einsum``: subscripts string or interleaved
    sublists); differentiable where no index repeats within an operand."""
    no_out(out)
    if not operands:
        raise ValueError("No input operands")
    if isinstance(operands[0], str):
        spec, ops = operands[0], list(operands[1:])
    else:
        spec, ops = _sublist_form(operands)
    result = _nla.einsum(spec, [asvar(o) for o in ops])
    if dtype is not None:
        from ..express.ops.elementwise import cast
        from ._util import npdtype

        result = cast(result, npdtype(dtype))
    return result
