"""``onnx_deferred``: an ONNX node whose parameters are only known at run time.

Some ONNX nodes take, as tensors, values that fix their output shapes (Pad's pads,
CumSum's axis, OneHot's depth ...) or need their inputs' shapes (inside a Loop body, or
after an op whose output shape depends on data). When such a value depends on a graph
input, the converter cannot pick the express ops at conversion time. It then builds one
``onnx_deferred`` op: at run time its compute hands the actual input arrays, as
constants, to the very same node handler, which builds the ordinary express ops, and
evaluates them. Errors of the handler surface then, naming the node.

The ``node`` attribute is an object with ``n_outputs`` and ``run(arrays) -> arrays``
(the converter's :class:`converter.onnx.loader.DeferredNode`); it hashes by identity.
Output shapes and dtypes are unknown until the op runs. Not differentiable, and not
writable to a .mnn file (MNN has no such op): convert with static input shapes instead.
"""
from ..graph import apply
from ..optable import OpDef, register

__all__ = ["onnx_deferred"]


def _infer(metas, node):
    return [(None, None)] * node.n_outputs


def _compute(arrays, node):
    return list(node.run(list(arrays)))


def _n_outputs(attrs):
    return attrs["node"].n_outputs


register(OpDef("onnx_deferred", _infer, _compute, None, n_outputs=_n_outputs))


def onnx_deferred(inputs, node):
    """Run ``node`` on ``inputs`` when they are computed; returns its output Vars."""
    return apply("onnx_deferred", list(inputs), node=node)
