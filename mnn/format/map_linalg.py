"""Linear-algebra ops in the .mnn file: ``einsum`` (MNN has no op of its own: written as
transposes, reshapes, reductions and batched matmuls, as MNN's converter lowers it) and the
determinant (MNN's ``Det``)."""

import numpy as np

from ..express import graph as _graph
from ..express.ops import elementwise as ew
from ..express.ops import linalg, movement
from ..express.ops import reduce as red
from ..express.var import const
from .mapping import decoder, encoder

__all__ = []


class _Term:
    """One operand while lowering: its Var, letters and static shape."""

    def __init__(self, var, letters, shape):
        self.var, self.letters, self.shape = var, letters, list(shape)

    def size(self, letter):
        return self.shape[self.letters.index(letter)]

    def sum_out(self, letters, keepdims=False):
        """Sum over ``letters`` (those of this term)."""
        axes = [i for i, c in enumerate(self.letters) if c in letters]
        if not axes:
            return self
        var = red.reduce_sum(self.var, axes, keepdims)
        if keepdims:
            shape = [1 if i in axes else d for i, d in enumerate(self.shape)]
            return _Term(var, self.letters, shape)
        kept = [i for i in range(len(self.letters)) if i not in axes]
        return _Term(var, "".join(self.letters[i] for i in kept), [self.shape[i] for i in kept])

    def arranged(self, order):
        """This term transposed to the letter ``order``."""
        if order == self.letters:
            return self
        perm = [self.letters.index(c) for c in order]
        var = movement.transpose(self.var, perm)
        return _Term(var, order, [self.shape[p] for p in perm])


def _diagonals(term, dtype):
    """Take the diagonal for each letter a term repeats (``ii->i``): multiply by an
    identity mask over the two axes and sum one of them."""
    while True:
        repeated = [c for c in term.letters if term.letters.count(c) > 1]
        if not repeated:
            return term
        c = repeated[0]
        p = term.letters.index(c)
        q = term.letters.index(c, p + 1)
        n = term.shape[p]
        if term.shape[q] != n:
            raise ValueError(f"index {c!r} has sizes {n} and {term.shape[q]} in one operand")
        mask_shape = [1] * len(term.letters)
        mask_shape[p] = mask_shape[q] = n
        mask = const(np.eye(n, dtype=dtype).reshape(mask_shape))
        var = red.reduce_sum(ew.multiply(term.var, mask), [q], False)
        letters = term.letters[:q] + term.letters[q + 1:]
        term = _Term(var, letters, term.shape[:q] + term.shape[q + 1:])


def _prod(sizes):
    return int(np.prod(sizes, dtype=np.int64))


def _contract(a, b, keep):
    """The product of terms ``a`` and ``b`` summed over the letters outside ``keep``, as
    one batched matmul: (batch, left, contracted) x (batch, contracted, right)."""
    a = a.sum_out({c for c in a.letters if c not in b.letters and c not in keep})
    b = b.sum_out({c for c in b.letters if c not in a.letters and c not in keep})
    contracted = [c for c in a.letters if c in b.letters and c not in keep]
    # A contracted index of size 1 on one side broadcasts: sum the other side first.
    for c in contracted:
        if a.size(c) != b.size(c):
            if a.size(c) == 1:
                b = b.sum_out({c}, keepdims=True)
            elif b.size(c) == 1:
                a = a.sum_out({c}, keepdims=True)
            else:
                raise ValueError(f"index {c!r} has sizes {a.size(c)} and {b.size(c)}")
    batch = "".join(c for c in a.letters if c in b.letters and c in keep)
    left = "".join(c for c in a.letters if c not in b.letters)
    right = "".join(c for c in b.letters if c not in a.letters)
    con = "".join(contracted)
    a = a.arranged(batch + left + con)
    b = b.arranged(batch + con + right)
    nb = len(batch)
    a_mat = movement.reshape(a.var, a.shape[:nb] + [_prod(a.shape[nb:nb + len(left)]),
                                                    _prod(a.shape[nb + len(left):])])
    b_mat = movement.reshape(b.var, b.shape[:nb] + [_prod(b.shape[nb:nb + len(con)]),
                                                    _prod(b.shape[nb + len(con):])])
    out = linalg.matmul(a_mat, b_mat)
    batch_shape = [max(x, y) for x, y in zip(a.shape[:nb], b.shape[:nb])]
    shape = batch_shape + a.shape[nb:nb + len(left)] + b.shape[nb + len(con):]
    return _Term(movement.reshape(out, shape), batch + left + right, shape)


def lower_einsum(subscripts, operands, shapes, dtype):
    """``einsum(subscripts, operands)`` built from transposes, reshapes, sums and matmuls.

    Parameters
    ----------
    subscripts : str
        Explicit form ``"ab,bc->ac"`` (the op's attribute: ellipses already expanded).
    operands : list of Var
    shapes : list of tuple of int
        Their static shapes.
    dtype : numpy.dtype
        The result's dtype (operands are cast to it).
    """
    lhs, rhs = subscripts.split("->")
    terms = []
    for var, letters, shape in zip(operands, lhs.split(","), shapes):
        if var.dtype != dtype:
            var = ew.cast(var, dtype)
        terms.append(_diagonals(_Term(var, letters, shape), dtype))
    current = terms[0]
    for k in range(1, len(terms)):
        keep = set(rhs).union(*[t.letters for t in terms[k + 1:]])
        current = _contract(current, terms[k], keep)
    current = current.sum_out({c for c in current.letters if c not in rhs})
    current = current.arranged(rhs)
    if current.var.expr.kind != "op" or current.var is operands[0]:
        # The identity einsum ("ij->ij"): still one op of its own.
        return movement.reshape(current.var, current.shape)
    return current.var


@encoder("einsum")
def _encode_einsum(ctx, expr):
    shapes = [v.expr.metas[v.index].shape for v in expr.inputs]
    if any(s is None for s in shapes):
        ctx.fail(expr, "einsum is written as matmuls and reshapes, which need the operand "
                 "shapes known when writing")
    try:
        result = lower_einsum(expr.attrs["subscripts"], list(expr.inputs), shapes,
                              expr.metas[0].dtype)
    except ValueError as exc:
        ctx.fail(expr, str(exc))
    ctx.encode_as(expr, [result])


@encoder("linalg_det")
def _encode_det(ctx, expr):
    ctx.emit(expr, "Det", None, None, expr.inputs)


@decoder("Det")
def _decode_det(ctx, op, inputs):
    ctx.n_inputs(op, inputs, 1)
    return _graph.apply("linalg_det", [inputs[0]])
