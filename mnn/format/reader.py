"""Reading a .mnn file into an express graph.

The file's ``Net`` is decoded with :mod:`mnn.format.flat`, then walked op by op (the op list
is in topological order): ``Input`` ops become placeholders, ``Const`` ops constants, and
every other op goes through its decoder in :data:`mnn.format.mapping.DECODERS`, which builds
it with the express ops. An op whose inputs are all constants is computed at load time and
becomes a constant (shape chains such as Shape -> Slice -> Concat -> Reshape fold this way,
for the input shapes the file declares).
"""

import os

import numpy as np

from ..express import graph as _graph
from ..express.errors import MnnError, OpError
from . import (  # imported for their registrations (DECODERS, ENCODERS)
    map_control,
    map_linalg,
    map_math,
    map_nn,
    map_render,
    map_rnn,
    map_sample,
    map_scatter,
    map_shape,
    map_tensor,
)
from .deferred import DECODE_ERRORS, DeferredDecode
from .errors import ModelFileError, RuntimeValueNeeded
from .external import ExternalWeights
from .flat import decode
from .mapping import DECODERS, DecodeContext
from .schema import OP_TYPE_NAMES

__all__ = ["LoadedGraph", "build_graph", "load_graph", "read_net"]

# Ops whose value must not be computed at load time even when their inputs are constants.
_NO_FOLD = {"RandomUniform", "RandomNormal", "Input", "Const", "TrainableParam"}

# A file cannot name more tensors than this; a larger index is corruption, not a model.
MAX_TENSORS = 1 << 24

# Constant ops with more output elements than this are left to run time.
MAX_FOLD = 1 << 24


class LoadedGraph:
    """The express graph of a model file.

    Attributes
    ----------
    inputs : dict
        Input name -> placeholder Var, in the file's order.
    outputs : dict
        Output name -> Var, in the file's order (``Net.outputName``; when the file has none,
        every tensor no op consumes).
    tensors : dict
        Tensor name -> Var for every tensor built.
    net : dict
        The decoded ``Net`` table.
    """

    def __init__(self, inputs, outputs, tensors, net):
        self.inputs = inputs
        self.outputs = outputs
        self.tensors = tensors
        self.net = net


def read_net(source):
    """Decode a model into its ``Net`` dict.

    Parameters
    ----------
    source : str, os.PathLike, bytes or bytearray
        A file path, or the file's bytes.

    Returns
    -------
    net : dict
    external : ExternalWeights or None
        Reader of ``<path>.weight`` for files that keep weights outside (None for bytes).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return decode(source, source="<bytes>"), None
    path = os.fspath(source)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ModelFileError(f"mnn: cannot read model file {path!r}: {exc.strerror}") from None
    name = os.path.basename(path)
    return decode(data, source=name), ExternalWeights(path + ".weight", name)


def load_graph(source):
    """Read a model file (path or bytes) into a :class:`LoadedGraph`."""
    net, external = read_net(source)
    name = "<bytes>" if external is None else external.model_name
    return build_graph(net, name, external)


def build_graph(net, source="<model>", external=None):
    """Build the express graph of decoded ``net`` (see :class:`LoadedGraph`)."""
    subgraphs = {}
    for i, sub in enumerate(net.get("subgraphs") or []):
        if not sub.get("name"):
            raise ModelFileError(f"mnn: {source}: subgraph {i} has no name")
        subgraphs[sub["name"]] = sub
    ctx = DecodeContext(source, external, subgraphs)
    names = list(net.get("tensorName") or [])
    vars_, inputs = _run_ops(ctx, net.get("oplists") or [], names, source)
    tensors = {n: v for n, v in zip(names, vars_) if v is not None}
    outputs = _outputs(net, names, vars_, source)
    return LoadedGraph(inputs, outputs, tensors, net)


def build_subgraph(ctx, sub, overrides=None):
    """Build a ``SubGraphProto`` dict: returns (input placeholders, output Vars) as lists.

    ``overrides`` maps tensor indexes of the subgraph's inputs to the placeholders to use
    for them (the file's own Input ops there only sketch shapes).
    """
    where = f"{ctx.source}: subgraph {sub.get('name')!r}"
    names = list(sub.get("tensors") or [])
    vars_, _ = _run_ops(ctx, sub.get("nodes") or [], names, where, overrides or {})
    ins, outs = [], []
    for kind, idx_list, acc in (
        ("input", sub.get("inputs"), ins),
        ("output", sub.get("outputs"), outs),
    ):
        for i in [] if idx_list is None else idx_list:
            i = int(i)
            if not 0 <= i < len(vars_) or vars_[i] is None:
                raise ModelFileError(
                    f"mnn: {where}: {kind} tensor index {i} is out of range or never produced"
                )
            acc.append(vars_[i])
    return ins, outs


def _check_index(i, n, where, what):
    i = int(i)
    if not 0 <= i < n:
        raise ModelFileError(
            f"mnn: {where}: {what} tensor index {i} is out of range (the file has {n} tensors)"
        )
    return i


def _run_ops(ctx, oplist, names, where, overrides=None):
    n = len(names)
    if n == 0:
        n = max(
            [
                int(i) + 1
                for op in oplist
                for key in ("inputIndexes", "outputIndexes")
                for i in (op.get(key) if op.get(key) is not None else [])
            ],
            default=0,
        )
        if n > MAX_TENSORS:
            raise ModelFileError(f"mnn: {where}: tensor index {n - 1} is implausibly large")
        names = [str(i) for i in range(n)]
    vars_ = [None] * n
    inputs = {}
    for k, op in enumerate(oplist):
        type_no = op.get("type")
        type_name = OP_TYPE_NAMES.get(type_no)
        op["_type_name"] = type_name or f"type {type_no}"
        here = f"{where}: op {k} {op.get('name')!r} ({op['_type_name']})"
        in_idx = [
            _check_index(i, n, here, "input")
            for i in (op.get("inputIndexes") if op.get("inputIndexes") is not None else [])
        ]
        out_idx = [
            _check_index(i, n, here, "output")
            for i in (op.get("outputIndexes") if op.get("outputIndexes") is not None else [])
        ]
        if type_name is None:
            raise ModelFileError(f"mnn: {here}: unknown op type number {type_no}")
        ins = []
        for i in in_idx:
            if vars_[i] is None:
                raise ModelFileError(
                    f"mnn: {here}: reads tensor {i} ({names[i]!r}) before any op produced it"
                )
            ins.append(vars_[i])
        decode_op = DECODERS.get(type_name)
        if type_name == "Input" and overrides and len(out_idx) == 1 and out_idx[0] in overrides:
            var = overrides[out_idx[0]]
            var.expr.name = names[out_idx[0]]
            vars_[out_idx[0]] = var
            continue
        if decode_op is None:
            raise ModelFileError(f"mnn: {here}: op type {type_name} is not supported by mnn")
        try:
            outs = decode_op(ctx, op, ins)
        except DECODE_ERRORS as exc:
            if not isinstance(exc, RuntimeValueNeeded) and \
                    not any(v.expr.metas[v.index].shape is None for v in ins):
                if isinstance(exc, ModelFileError):
                    raise
                raise ModelFileError(f"mnn: {here}: {exc}") from None
            # It needs a shape that only run time knows (inside a loop body): decode it
            # when it runs, from the actual inputs.
            node = DeferredDecode(ctx, op, decode_op, ins, len(out_idx), here)
            outs = _graph.apply("onnx_deferred", ins, node=node) if out_idx else []
        if len(outs) < len(out_idx):
            raise ModelFileError(
                f"mnn: {here}: the file lists {len(out_idx)} outputs, the op gives {len(outs)}"
            )
        if (
            type_name not in _NO_FOLD
            and ins
            and all(v.expr.kind == "const" for v in ins)
            and all(_small(v) for v in outs)
        ):
            outs = [_fold(v, here) for v in outs]
        for j, i in enumerate(out_idx):
            var = outs[j]
            if var.expr.name is None and var.expr.kind != "placeholder":
                var.expr.name = names[i] if len(outs) == 1 else names[out_idx[0]]
            vars_[i] = var
        if type_name == "Input":
            inputs[names[out_idx[0]] if out_idx else op.get("name")] = outs[0]
    return vars_, inputs


def _small(var):
    """Whether computing ``var`` at load time is cheap (a corrupted shape must not make
    loading allocate gigabytes)."""
    meta = var.expr.metas[var.index]
    return meta.shape is not None and int(np.prod(meta.shape, dtype=np.float64)) <= MAX_FOLD


def _fold(var, where):
    """Compute a Var built only from constants and return it as a constant."""
    if var.expr.kind != "op":
        return var
    for expr in _graph._ancestors(var.expr):
        if expr.kind in ("placeholder", "trainable"):
            return var
    from ..express.var import const

    try:
        value = var._value()
    except (OpError, MnnError, ValueError, ArithmeticError, IndexError) as exc:
        raise ModelFileError(
            f"mnn: {where}: computing it from its constant inputs failed: {exc}"
        ) from None
    folded = const(np.asarray(value), dtype=value.dtype)
    folded.expr.data_format = var.expr.data_format
    return folded


def _outputs(net, names, vars_, source):
    listed = net.get("outputName")
    outputs = {}
    if listed:
        index = {name: i for i, name in enumerate(names)}
        for name in listed:
            i = index.get(name)
            if i is None or vars_[i] is None:
                raise ModelFileError(
                    f"mnn: {source}: output {name!r} is not a tensor any op produces"
                )
            outputs[name] = vars_[i]
        return outputs
    consumed = set()
    for op in net.get("oplists") or []:
        consumed.update(
            int(i) for i in (op.get("inputIndexes") if op.get("inputIndexes") is not None else [])
        )
    for i, var in enumerate(vars_):
        if var is not None and i not in consumed and var.expr.kind != "placeholder":
            outputs[names[i]] = var
    return outputs
