"""A trainable Module cut out of an express graph (pymnn's ``nn.load_module(..., True)``).

``ExtractedModule(inputs, outputs)`` records the ops between ``inputs`` and ``outputs``;
each ``forward`` builds them again on the given Vars with the same op records and
attributes, so the result is an ordinary lazy graph that autodiff differentiates. As in
MNN's extract for training, the weights and biases of convolutions and matrix products
become trainable parameters (copies: the source graph keeps its constants); other
trainable Vars of the graph are parameters as they are.
"""
import numpy as np

from ..express.errors import MnnError
from ..express.graph import PLACEHOLDER, TRAINABLE, apply, topological_order
from ..express.var import const, to_var
from ..nn.module import Module

__all__ = ["ExtractedModule"]

# Ops whose constant inputs after the first are weights to train (MNN turns convolutions
# into trainable Conv modules; a matrix product is a fully connected layer).
_WEIGHTED_OPS = ("conv2d", "conv2d_transpose", "conv1d", "matmul")


def _op_order(inputs, outputs):
    """Op Exprs between ``inputs`` and ``outputs``, producers first."""
    return topological_order([v.expr for v in outputs], stop_ids={v.expr.id for v in inputs})


class ExtractedModule(Module):
    """The ops between ``inputs`` and ``outputs`` as a trainable Module.

    Parameters
    ----------
    inputs : list of Var
        Where ``forward``'s arguments enter (placeholders or inner tensors).
    outputs : list of Var
        What ``forward`` returns.
    """

    def __init__(self, inputs, outputs):
        super().__init__()
        inputs, outputs = list(inputs), list(outputs)
        order = _op_order(inputs, outputs)
        stop = {(v.expr.id, v.index) for v in inputs}
        weights = {}  # (expr id, index) of a constant -> its trainable copy
        for expr in order:
            if expr.op is None or expr.op.name not in _WEIGHTED_OPS:
                continue
            for v in expr.inputs[1:]:
                key = (v.expr.id, v.index)
                if (v.expr.kind == "const" and key not in stop and key not in weights
                        and v.dtype.kind == "f"):
                    weights[key] = _trainable_copy(v)
        for expr in order:
            if expr.kind == PLACEHOLDER and (expr.id, 0) not in stop:
                raise MnnError(f"mnn: load_module: the outputs depend on placeholder "
                               f"{expr.name or expr.id}, which is not an input")
        params = list(weights.values())
        params += [e.outputs[0] for e in order if e.kind == TRAINABLE]
        for p in params:
            self._add_parameter(p)
        object.__setattr__(self, "_inputs", inputs)
        object.__setattr__(self, "_outputs", outputs)
        object.__setattr__(self, "_order", [e for e in order if e.op is not None
                                            and not any((e.id, i) in stop
                                                        for i in range(len(e.outputs)))])
        object.__setattr__(self, "_weights", weights)
        self._type = "PipelineModule"

    def forward(self, *inputs):
        """Build the graph on ``inputs`` (Vars or arrays); one input and one output give a
        Var, otherwise a list (pass a list to always get a list)."""
        as_list = len(inputs) == 1 and isinstance(inputs[0], (list, tuple))
        args = list(inputs[0]) if as_list else list(inputs)
        if len(args) != len(self._inputs):
            raise MnnError(f"mnn: the module takes {len(self._inputs)} inputs, got "
                           f"{len(args)}")
        env = {(v.expr.id, v.index): to_var(a) for v, a in zip(self._inputs, args)}
        env.update(self._weights)
        for expr in self._order:
            ins = [env.get((v.expr.id, v.index), v) for v in expr.inputs]
            outs = apply(expr.op.name, ins, **expr.attrs)
            for i, out in enumerate(outs):
                env[(expr.id, i)] = out
        results = [env.get((v.expr.id, v.index), v) for v in self._outputs]
        if not as_list and len(results) == 1:
            return results[0]
        return results

    def onForward(self, inputs):
        """``forward`` on a list of inputs, returning a list."""
        return self.forward(list(inputs))


def _trainable_copy(var):
    copy = const(np.array(var.read()), data_format=var.data_format)
    copy.fix_as_trainable()
    copy.name = var.name
    return copy

