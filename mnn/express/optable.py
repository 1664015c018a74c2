"""The op table: every op is one :class:`OpDef` record, registered once.

A record holds the op's name, its shape/dtype inference, its compute (the only place that
picks a Cython kernel or numpy) and its gradient rule (written with express ops, so
gradients are graphs too). The engine, autodiff, the file reader/writer and the tests all
read this table. Op modules register their records with :func:`register` right after
defining the functions, one explicit call per op.
"""
from typing import Callable, NamedTuple, Optional

import numpy as np

from .errors import OpError

__all__ = ["TensorMeta", "OpDef", "register", "get_op", "all_ops", "OpError"]


class TensorMeta(NamedTuple):
    """What is known about a tensor before it is computed.

    ``shape`` is a tuple of ints, or ``None`` when it depends on data not yet known;
    ``dtype`` is a numpy dtype (``None`` together with an unknown shape); ``value`` is the
    array itself when it is a constant known at build time (lets shape chains infer).
    """

    shape: Optional[tuple]
    dtype: Optional[np.dtype]
    value: Optional[np.ndarray] = None


class OpDef:
    """One op of the table.

    Parameters
    ----------
    name : str
        Unique op name (snake_case, MNN's function name where one exists).
    infer : callable
        ``infer(metas, **attrs) -> list[(shape, dtype)]``. Receives a :class:`TensorMeta`
        per input (all shapes known). Returns one ``(shape, dtype)`` per output; a shape
        may be ``None`` when it depends on input values. Raises :class:`OpError` with a
        message saying what is wrong; the engine adds the op name, shapes and dtypes.
    compute : callable
        ``compute(arrays, **attrs)`` returns one ndarray (single-output ops) or a sequence
        of them. Must not modify its inputs; may return views of them.
    grad : callable or None
        ``grad(inputs, outputs, grads, **attrs) -> list[Var or None]`` with one entry per
        input (None: no gradient flows there). ``grads`` holds one Var or None per output.
        ``None`` for ops that are not differentiable; autodiff then raises if a gradient
        must pass through.
    n_outputs : int
        Number of outputs, or -1 when ``infer`` decides (split, unstack), or a callable
        ``n_outputs(attrs) -> int`` when the attributes decide (control flow).
    prepare : callable or None
        ``prepare(sig, threads, **attrs) -> fn(arrays)``: ``compute`` made ready for
        inputs of signature ``sig`` (one ``(shape, dtype)`` per input) at ``threads``
        kernel threads. The engine keeps ``fn`` per Expr while both hold, so a model run
        over and over skips the lookups ``compute`` makes per call (a convolution's plan).
        ``fn`` must compute exactly what ``compute`` does.
    """

    __slots__ = ("name", "infer", "compute", "grad", "n_outputs", "doc", "prepare")

    def __init__(self, name: str, infer: Callable, compute: Callable,
                 grad: Optional[Callable] = None, n_outputs: int = 1, doc: str = "",
                 prepare: Optional[Callable] = None):
        self.name = name
        self.infer = infer
        self.compute = compute
        self.grad = grad
        self.n_outputs = n_outputs
        self.doc = doc
        self.prepare = prepare

    def __repr__(self):
        return f"OpDef({self.name!r})"


_TABLE: dict = {}


def register(op: OpDef) -> OpDef:
    """Add ``op`` to the table; a second op with the same name is a programming error."""
    if op.name in _TABLE:
        raise RuntimeError(f"mnn: op {op.name!r} registered twice")
    _TABLE[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    """Return the record of op ``name``; ``KeyError`` naming it if unknown."""
    try:
        return _TABLE[name]
    except KeyError:
        raise KeyError(f"mnn: no op named {name!r} in the op table") from None


def all_ops() -> dict:
    """A copy of the table: name -> OpDef."""
    return dict(_TABLE)
