"""Writing an express graph as a .mnn file.

The Exprs above the requested outputs are visited inputs-first; each one is written by its
encoder in :data:`mnn.format.mapping.ENCODERS` (placeholders become ``Input`` ops, constants
``Const``, trainables ``TrainableParam``). Weight quantisation and external weights are
options of :class:`EncodeOptions`, applied by the encoders of ops that carry weights.
"""

import os
import uuid

import numpy as np

from .. import _version
from ..express import graph as _graph
from ..express.errors import MnnError
from ..express.var import Var
from . import (  # imported for their registrations (DECODERS, ENCODERS)
    map_control,
    map_linalg,
    map_math,
    map_narrow,
    map_nn,
    map_render,
    map_sample,
    map_scatter,
    map_shape,
    map_tensor,
)
from .errors import ModelFileError
from .external import ExternalWriter
from .flat import encode
from .mapping import ENCODERS, array_to_blob, datatype_of, file_dtype
from .schema import OP_TYPES

__all__ = ["EncodeContext", "EncodeOptions", "graph_to_net", "write_model"]

_SOURCE_ONNX = 3


class EncodeOptions:
    """How weights are stored (the converter's ``--fp16``, ``--weightQuantBits`` ...).

    Parameters
    ----------
    weight_quant_bits : int
        0 keeps float weights; 2..8 stores convolution/linear weights as an int codebook.
    weight_quant_block : int
        Block size along the input channels for block-wise scales (0: one per channel).
    weight_quant_asymmetric : bool
        Asymmetric quantisation (MNN's converter, oddly, stores asymmetric weights when the
        flag is absent; we follow the flag's name).
    fp16 : bool
        Store float weights as half floats.
    external_data : bool
        Move weights into ``<model>.mnn.weight``.
    keep_trainable : bool
        Write trainable Vars as ``TrainableParam`` ops (else as constants).
    """

    def __init__(
        self,
        weight_quant_bits=0,
        weight_quant_block=0,
        weight_quant_asymmetric=False,
        fp16=False,
        external_data=False,
        keep_trainable=True,
    ):
        bits = int(weight_quant_bits)
        if bits and not 2 <= bits <= 8:
            raise ModelFileError(f"mnn: weight_quant_bits must be 0 or 2..8, got {bits}")
        if int(weight_quant_block) < 0:
            raise ModelFileError(f"mnn: weight_quant_block must be >= 0, got {weight_quant_block}")
        if bits and fp16:
            raise ModelFileError("mnn: choose either fp16 or weight_quant_bits, not both")
        self.weight_quant_bits = bits
        self.weight_quant_block = int(weight_quant_block)
        self.weight_quant_asymmetric = bool(weight_quant_asymmetric)
        self.fp16 = bool(fp16)
        self.external_data = bool(external_data)
        self.keep_trainable = bool(keep_trainable)


class EncodeContext:
    """Collects ops and tensors while encoders write a graph."""

    def __init__(self, options=None, root=None):
        self.options = options or EncodeOptions()
        self.ops = []
        self.names = []
        self.index = {}
        self.taken = set()
        self.preferred = {}
        self.c4 = {}
        # Subgraphs (of if/while ops, at any depth) all go to the root's Net.subgraphs.
        self.root = root or self
        self.subgraph_protos = []
        self.subgraph_done = {}
        if root is not None:
            self.external = root.external
        else:
            self.external = ExternalWriter() if self.options.external_data else None

    def subgraph(self, sub):
        """Name of the ``SubGraphProto`` written for Subgraph ``sub`` (written once)."""
        root = self.root
        key = id(sub)
        if key not in root.subgraph_done:
            child = EncodeContext(self.options, root)
            for var in sub.inputs:
                if (var.expr.id, var.index) not in child.index:
                    ENCODERS["placeholder"](child, var.expr)
            _encode_graph(child, [(None, v) for v in sub.outputs])
            taken = {p["name"] for p in root.subgraph_protos}
            name, k = sub.name, 1
            while name in taken:
                name = f"{sub.name}__{k}"
                k += 1
            ins = [child.tensor(v) for v in sub.inputs]
            outs = [child.tensor(v) for v in sub.outputs]
            root.subgraph_protos.append(
                {
                    "name": name,
                    "inputs": np.asarray(ins, np.int32),
                    "outputs": np.asarray(outs, np.int32),
                    "tensors": child.names,
                    "nodes": child.ops,
                }
            )
            root.subgraph_done[key] = (
                name,
                [child.names[i] for i in ins],
                [child.names[i] for i in outs],
            )
        return root.subgraph_done[key][0]

    def subgraph_names(self, sub, which):
        """Tensor names of ``sub``'s ``"inputs"`` or ``"outputs"`` inside its proto."""
        self.subgraph(sub)
        _, ins, outs = self.root.subgraph_done[id(sub)]
        return ins if which == "inputs" else outs

    def encode_vars(self, variables):
        """Write the ops above ``variables`` (Vars built on already written ones while
        encoding an op), so that :meth:`tensor` finds them."""
        _encode_graph(self, [(None, v) for v in variables])

    def encode_as(self, expr, results):
        """Write ``expr`` as the express ops computing ``results`` (Vars built on its
        inputs, one per output): for ops MNN has no op of their own (einsum ...)."""
        named = []
        for var, result in zip(expr.outputs, results):
            key = (var.expr.id, var.index)
            self.preferred.setdefault((result.expr.id, result.index),
                                      self.preferred.get(key, var.name))
            named.append((None, result))
        _encode_graph(self, named)
        for var, result in zip(expr.outputs, results):
            self.index[(var.expr.id, var.index)] = self.tensor(result)

    def fail(self, expr, message):
        raise ModelFileError(
            f"mnn: cannot write op {expr.op_type} ({expr.name or expr.id}): {message}"
        )

    def new_tensor(self, name):
        """A new tensor index named ``name`` (made unique)."""
        base, k = str(name), 1
        while name in self.taken:
            name = f"{base}__{k}"
            k += 1
        self.taken.add(name)
        self.names.append(name)
        return len(self.names) - 1

    def tensor(self, item):
        """Tensor index of a Var already written (or an index passed through).

        Constants are written on first use: weights that an op keeps inside its own
        parameter table (convolutions) never become Const ops of their own.
        """
        if isinstance(item, (int, np.integer)):
            return int(item)
        key = (item.expr.id, item.index)
        if key not in self.index:
            if item.expr.kind not in ("const", "trainable"):
                raise RuntimeError(f"mnn internal error: {item.name} used before it was written")
            ENCODERS[item.expr.kind](self, item.expr)
        return self.index[key]

    def bind(self, var):
        key = (var.expr.id, var.index)
        idx = self.new_tensor(self.preferred.get(key, var.name))
        self.index[key] = idx
        return idx

    def emit(
        self, expr, type_name, main_type, main, inputs, outputs=None, name=None, data_format=0
    ):
        """Write one op. ``outputs`` defaults to binding all of ``expr``'s outputs."""
        in_idx = [self.tensor(v) for v in inputs]
        if outputs is None:
            out_idx = [self.bind(v) for v in expr.outputs]
        else:
            out_idx = [o if isinstance(o, int) else self.bind(o) for o in outputs]
        op = {
            "type": OP_TYPES[type_name],
            "inputIndexes": np.asarray(in_idx, np.int32),
            "outputIndexes": np.asarray(out_idx, np.int32),
            "name": name or self.names[out_idx[0]],
            "defaultDimentionFormat": data_format,
        }
        if main_type is not None:
            op["main_type"] = main_type
            op["main"] = main
        self.ops.append(op)
        return out_idx

    def const_tensor(self, array, expr, suffix):
        """Write a constant that an op takes as an input tensor; returns its index."""
        idx = self.new_tensor(f"{expr.name or expr.op_type + '_' + str(expr.id)}_{suffix}")
        self.ops.append(
            {
                "type": OP_TYPES["Const"],
                "outputIndexes": np.asarray([idx], np.int32),
                "name": self.names[idx],
                "main_type": "Blob",
                "main": self.blob(np.asarray(array)),
                "defaultDimentionFormat": 0,
            }
        )
        return idx

    def blob(self, array, data_format=0):
        """A Blob dict for ``array`` (its data in the external file when enabled)."""
        blob = array_to_blob(array, data_format)
        if self.external is not None and array.size >= 64:
            for field in ("float32s", "int32s", "int64s", "uint8s", "int8s"):
                if field in blob:
                    raw = (
                        np.ascontiguousarray(blob.pop(field))
                        .astype(
                            np.asarray(blob.get(field, array)).dtype.newbyteorder("<"), copy=False
                        )
                        .tobytes()
                    )
                    blob["external"] = np.asarray([self.external.add(raw), len(raw)], np.int64)
                    break
        return blob

    def dtype_code(self, var):
        """MNN DataType of ``var`` from its static metadata (never computes anything):
        see :func:`mnn.format.mapping.file_dtype`; float when only run time tells."""
        dtype = var.expr.metas[var.index].dtype
        if dtype is None:
            return 1
        return datatype_of(file_dtype(dtype))

    def static(self, var):
        """The value of ``var`` when it is written as a constant, else None (trainables
        are constants in an inference file)."""
        if var.expr.kind == "const" or (
            var.expr.kind == "trainable" and not self.options.keep_trainable
        ):
            return np.asarray(var.expr.values[var.index])
        return None

    def static_above(self, var):
        """Like :meth:`static`, also for a value computed only from such constants (a
        reshaped constant gamma, say): it is computed here; else None."""
        for expr in _graph.topological_order([var.expr]):
            if expr.op is None and self.static(expr.outputs[0]) is None:
                return None
        return np.asarray(var.read())

    def to_nc4hw4(self, var):
        """Index of an NC4HW4 copy of ``var`` (MNN's convolution and pooling need one)."""
        key = (var.expr.id, var.index)
        if key in self.c4:
            return self.c4[key]
        src = self.tensor(var)
        idx = self.new_tensor(self.names[src] + "__to_c4")
        self.ops.append(
            {
                "type": OP_TYPES["ConvertTensor"],
                "name": self.names[idx],
                "inputIndexes": np.asarray([src], np.int32),
                "outputIndexes": np.asarray([idx], np.int32),
                "main_type": "TensorConvertInfo",
                "main": {"source": 0, "dest": 2},
                "defaultDimentionFormat": 0,
            }
        )
        self.c4[key] = idx
        return idx

    def convert_index(self, index, source, dest, name):
        """Write a ConvertTensor of tensor ``index`` between MNN_DATA_FORMAT codes."""
        idx = self.new_tensor(name)
        self.ops.append(
            {
                "type": OP_TYPES["ConvertTensor"],
                "name": self.names[idx],
                "inputIndexes": np.asarray([index], np.int32),
                "outputIndexes": np.asarray([idx], np.int32),
                "main_type": "TensorConvertInfo",
                "main": {"source": source, "dest": dest},
                "defaultDimentionFormat": 0,
            }
        )
        return idx

    def from_nc4hw4(self, expr, c4_index):
        """Bind ``expr``'s output to an NCHW copy of the NC4HW4 tensor ``c4_index``."""
        var = expr.outputs[0]
        idx = self.bind(var)
        self.ops.append(
            {
                "type": OP_TYPES["ConvertTensor"],
                "name": self.names[idx],
                "inputIndexes": np.asarray([c4_index], np.int32),
                "outputIndexes": np.asarray([idx], np.int32),
                "main_type": "TensorConvertInfo",
                "main": {"source": 2, "dest": 0},
                "defaultDimentionFormat": 0,
            }
        )
        self.c4[(var.expr.id, var.index)] = c4_index

    def external_field(self, arrays):
        """Store float32 ``arrays`` in the external file; returns the ``external`` vector
        ``[offset, size0, size1, ...]`` (arrays laid out one after another)."""
        raws = [np.ascontiguousarray(a, dtype="<f4").tobytes() for a in arrays]
        offset = self.external.add(raws[0])
        for raw in raws[1:]:
            self.external.add(raw)
        return np.asarray([offset] + [len(r) for r in raws], np.int64)


def _topological(outputs):
    order, seen = [], set()
    for var in outputs:
        for expr in _graph._ancestors(var.expr):
            if expr.id not in seen:
                seen.add(expr.id)
                order.append(expr)
    return order


def graph_to_net(outputs, options=None, biz_code="MNN"):
    """Encode the graph above ``outputs`` into a ``Net`` dict.

    Parameters
    ----------
    outputs : list of Var or dict
        The outputs, or a dict output name -> Var (the names become tensor names).
    options : EncodeOptions, optional
    biz_code : str

    Returns
    -------
    net : dict
    ctx : EncodeContext
        Holds the external weight bytes when ``options.external_data``.
    """
    if isinstance(outputs, dict):
        named = [(str(k), v) for k, v in outputs.items()]
    else:
        named = [(None, v) for v in outputs]
    for name, var in named:
        if not isinstance(var, Var):
            raise ModelFileError(f"mnn: save: outputs must be Vars, got {type(var).__name__}")
    if not named:
        raise ModelFileError("mnn: save: no output Vars to write")
    ctx = EncodeContext(options)
    _encode_graph(ctx, named)
    out_names = [ctx.names[ctx.tensor(v)] for _, v in named]
    net = {
        "bizCode": str(biz_code),
        "oplists": ctx.ops,
        "outputName": out_names,
        "tensorName": ctx.names,
        "sourceType": _SOURCE_ONNX,
        "usage": 0,
        "extraInfo": {"name": "mnn", "version": _version.__version__},
        "mnn_uuid": str(uuid.uuid4()),
    }
    if ctx.subgraph_protos:
        net["subgraphs"] = ctx.subgraph_protos
    return net, ctx


def _encode_graph(ctx, named):
    """Write every Expr above the ``(name or None, Var)`` pairs ``named`` into ``ctx``."""
    for name, var in named:
        if name is not None:
            ctx.preferred[(var.expr.id, var.index)] = name
    for expr in _topological([v for _, v in named]):
        if any((expr.id, i) in ctx.index for i in range(len(expr.outputs))):
            continue  # written already (a subgraph's inputs come first)
        if expr.kind in ("const", "trainable"):
            continue  # written on first use (see EncodeContext.tensor)
        if expr.kind == "op":
            # Shapes may have changed since the graph was built (resize): refresh them.
            expr.refresh_metas()
        encode_expr = ENCODERS.get(expr.op_type)
        if encode_expr is None:
            raise ModelFileError(
                f"mnn: cannot write op {expr.op_type!r} to a .mnn file: no MNN op maps to it"
            )
        try:
            encode_expr(ctx, expr)
        except MnnError as exc:
            if isinstance(exc, ModelFileError):
                raise
            # e.g. a shape the encoder needs is only known once the graph runs
            raise ModelFileError(
                f"mnn: cannot write op {expr.op_type} ({expr.name or expr.id}): {exc}"
            ) from None


def write_model(outputs, path=None, options=None, biz_code="MNN"):
    """Write the graph above ``outputs`` as a .mnn file at ``path`` (or return its bytes).

    With ``options.external_data`` the weights go to ``<path>.weight`` (a path is needed).
    """
    options = options or EncodeOptions()
    if options.external_data and path is None:
        raise ModelFileError("mnn: external_data needs a file path to put the .weight file beside")
    net, ctx = graph_to_net(outputs, options, biz_code)
    data = encode(net)
    if path is None:
        return data
    path = os.fspath(path)
    try:
        with open(path, "wb") as fh:
            fh.write(data)
        if ctx.external is not None:
            ctx.external.write(path + ".weight")
    except OSError as exc:
        raise ModelFileError(f"mnn: cannot write model file {path!r}: {exc.strerror}") from None
    return None
