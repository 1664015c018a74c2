"""Ops decoded when they run: for decoders that need a shape only run time knows.

Inside a loop body fed by another loop's scan output (stacked RNN layers, say), the body's
values have no shape when the file is read, and the file's own Input ops there only sketch
one. Most decoders do not mind, but some need the rank (to resolve a negative axis, to
check paddings ...). Others need a parameter the file takes from a tensor only run time
fills (an Interp's scales or a CumSum's axis fed by a graph input; they raise
:class:`~mnn.format.errors.RuntimeValueNeeded`). Such an op becomes one ``onnx_deferred``
op whose node, when it runs, decodes the op again from the actual inputs:

1. with placeholders of the actual shapes and dtypes (constants stay constants); the
   result is compiled into a :class:`~mnn.runtime.plan.Plan` and kept for that signature
   of input shapes, so a loop decodes each op once, not once per iteration;
2. if that decode still fails (the decoder needs an input's value, not only its shape),
   with every input as a constant holding its actual value, for that run only.

A decoder error surfaces then, as a :class:`ModelFileError` naming the op.
"""

from ..express.errors import MnnError, OpError
from ..express.var import const, placeholder
from .errors import ModelFileError
from .map_runtime_params import RUNTIME_PARAM_WRITERS
from .mapping import encoder

__all__ = ["DECODE_ERRORS", "DeferredDecode"]

# What a decoder raises for input it cannot handle.
DECODE_ERRORS = (ModelFileError, OpError, MnnError, ValueError, TypeError, IndexError)

# Compiled decodes kept per op (distinct input shape signatures).
_MAX_PLANS = 64


class DeferredDecode:
    """Node of an ``onnx_deferred`` op: decode ``op`` with ``decode_op`` at run time.

    Parameters
    ----------
    ctx : DecodeContext
    op : dict
        The decoded ``Op`` table.
    decode_op : callable
        Its decoder.
    inputs : list of Var
        The op's input Vars when the file was read (constants among them are reused).
    n_outputs : int
        Number of outputs the file lists.
    where : str
        The op's description, for errors.
    """

    def __init__(self, ctx, op, decode_op, inputs, n_outputs, where):
        self.ctx = ctx
        self.op = op
        self.decode_op = decode_op
        self.consts = [v if v.expr.kind == "const" else None for v in inputs]
        self.n_outputs = n_outputs
        self.where = where
        self.plans = {}  # input signature -> Plan, or None when only values can decode it

    def _decode(self, ins):
        try:
            outs = self.decode_op(self.ctx, self.op, ins)
        except DECODE_ERRORS as exc:
            msg = str(exc)
            raise ModelFileError(msg if msg.startswith("mnn:") else f"mnn: {self.where}: {msg}") \
                from None
        if len(outs) < self.n_outputs:
            raise ModelFileError(f"mnn: {self.where}: the file lists {self.n_outputs} outputs, "
                                 f"the op gives {len(outs)}")
        return list(outs[: self.n_outputs])

    def _compile(self, arrays):
        from ..runtime.plan import Plan

        holders, ins = [], []
        for v, a in zip(self.consts, arrays):
            if v is None:
                v = placeholder(list(a.shape), dtype=a.dtype)
                holders.append(v)
            ins.append(v)
        try:
            return Plan(holders, self._decode(ins))
        except DECODE_ERRORS:
            return None

    def encode_op(self, ctx, expr):
        """Write the op back as the file had it (its type and parameter table)."""
        ctx.emit(expr, self.op["_type_name"], self.op.get("main_type"), self.op.get("main"),
                 expr.inputs)

    def run(self, arrays):
        """The op's outputs for input ``arrays``."""
        sig = tuple((a.shape, a.dtype.str) for a in arrays)
        if sig not in self.plans:
            if len(self.plans) >= _MAX_PLANS:
                self.plans.clear()
            self.plans[sig] = self._compile(arrays)
        plan = self.plans[sig]
        if plan is not None:
            return plan.run([a for v, a in zip(self.consts, arrays) if v is None])
        outs = self._decode([v if v is not None else const(a, dtype=a.dtype)
                             for v, a in zip(self.consts, arrays)])
        return [out.read() for out in outs]


@encoder("onnx_deferred")
def _encode_deferred(ctx, expr):
    """A deferred decode goes back as the file had it; a deferred ONNX node as the MNN op
    taking its run-time parameters as inputs, where there is one."""
    node = expr.attrs["node"]
    if hasattr(node, "encode_op"):
        node.encode_op(ctx, expr)
        return
    onnx_node = getattr(node, "node", None)
    writer = RUNTIME_PARAM_WRITERS.get(getattr(onnx_node, "op_type", None))
    if writer is None:
        what = f"an ONNX {onnx_node.op_type} node" if onnx_node is not None else "an op"
        ctx.fail(expr, f"{what} the converter left to run time (its parameters or shapes "
                       "are only known then) has no MNN op; convert with static input shapes")
    writer(ctx, expr, node)
