"""ONNX ModelProto -> express graph.

Graph inputs become placeholders (dynamic dims stay ``-1``, i.e. unknown until written),
initializers (external data included) become constants, and each node is handed to its
registered handler (see :mod:`converter.onnx.registry`), which builds express ops. Before
anything is built, every node (subgraphs included) is checked: one unsupported op fails the
conversion with the list of every unsupported op in the model.
"""
import os

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper

import mnn.express as F
from mnn.express.errors import MnnError
from mnn.express.graph import partial_shape

from . import ops as _ops  # noqa: F401 - registers every handler
from .registry import find_handler
from .values import EMPTY, RuntimeOptional, RuntimeSequence, Sequence

__all__ = [
    "ConvertError",
    "NodeContext",
    "OnnxGraph",
    "UnsupportedOpsError",
    "convert_graph",
    "load_onnx",
    "onnx_dtype_to_numpy",
]


class ConvertError(MnnError):
    """A model that cannot be converted (the message names node, op and what is wrong)."""


class StaticInfoNeeded(ConvertError):
    """A handler needs a value or shape that is only known at run time (the loader then
    defers the node: see :class:`DeferredNode`)."""


class UnsupportedOpsError(ConvertError):
    """Some ops of the model have no handler; ``.ops`` lists (name, op_type, domain, opset)."""

    def __init__(self, ops):
        self.ops = list(ops)
        lines = [f"  node {name!r}: {op} (domain {dom or 'ai.onnx'!r}, opset {ver})"
                 for name, op, dom, ver in self.ops]
        super().__init__(f"converter: {len(self.ops)} unsupported op(s) in the model:\n"
                         + "\n".join(lines))


_NP_OF_ONNX = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT32: np.int32, onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.BOOL: np.bool_, onnx.TensorProto.FLOAT16: np.float16,
    onnx.TensorProto.INT16: np.int16, onnx.TensorProto.UINT16: np.uint16,
    onnx.TensorProto.UINT32: np.uint32, onnx.TensorProto.UINT64: np.uint64,
    onnx.TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    onnx.TensorProto.INT4: ml_dtypes.int4, onnx.TensorProto.UINT4: ml_dtypes.uint4,
    onnx.TensorProto.INT2: ml_dtypes.int2, onnx.TensorProto.UINT2: ml_dtypes.uint2,
    onnx.TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    onnx.TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    onnx.TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    onnx.TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    onnx.TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    onnx.TensorProto.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
}

# Types Vars cannot hold, stored in a wider one (values kept exactly). Casts to them go
# through ``narrow_cast`` so they lose what the narrow type cannot hold; graph outputs
# declared in them are returned in them.
_STORAGE = {
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(ml_dtypes.bfloat16): np.dtype(np.float32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(np.uint64): np.dtype(np.int64),
    np.dtype(ml_dtypes.int4): np.dtype(np.int8),
    np.dtype(ml_dtypes.int2): np.dtype(np.int8),
    np.dtype(ml_dtypes.uint4): np.dtype(np.uint8),
    np.dtype(ml_dtypes.uint2): np.dtype(np.uint8),
    np.dtype(ml_dtypes.float8_e4m3fn): np.dtype(np.float32),
    np.dtype(ml_dtypes.float8_e4m3fnuz): np.dtype(np.float32),
    np.dtype(ml_dtypes.float8_e5m2): np.dtype(np.float32),
    np.dtype(ml_dtypes.float8_e5m2fnuz): np.dtype(np.float32),
    np.dtype(ml_dtypes.float4_e2m1fn): np.dtype(np.float32),
    np.dtype(ml_dtypes.float8_e8m0fnu): np.dtype(np.float32),
}


def storage_dtype(dtype):
    """The dtype a Var holds values of numpy ``dtype`` in (TypeError if none)."""
    dtype = np.dtype(dtype)
    return _STORAGE.get(dtype) or F.dtypes.to_numpy_dtype(dtype)


def narrow_name(dtype):
    """``narrow_cast``'s name for a dtype stored wider (None for the dtypes Vars hold)."""
    dtype = np.dtype(dtype)
    return dtype.name if dtype in _STORAGE else None


def onnx_dtype_to_numpy(elem_type, what="tensor"):
    """numpy dtype for an ONNX element type; ConvertError for types Vars cannot hold."""
    try:
        return np.dtype(_NP_OF_ONNX[int(elem_type)])
    except KeyError:
        name = onnx.TensorProto.DataType.Name(int(elem_type)) if int(elem_type) in \
            onnx.TensorProto.DataType.values() else str(elem_type)
        raise ConvertError(f"converter: {what} has element type {name}, which mnn cannot "
                           "hold") from None


def to_supported_array(arr, what="tensor"):
    """Store an initializer in a dtype Vars hold (float16 widens, uint32 to int64 ...)."""
    try:
        return np.asarray(arr, dtype=storage_dtype(arr.dtype))
    except TypeError:
        raise ConvertError(f"converter: {what} has dtype {arr.dtype}, which mnn cannot "
                           "hold") from None


class OnnxGraph:
    """A converted graph.

    Attributes
    ----------
    inputs : dict
        ONNX input name -> placeholder Var (in the model's input order).
    outputs : dict
        ONNX output name -> Var (in the model's output order).
    opset : dict
        domain -> opset version.
    """

    def __init__(self, inputs, outputs, opset, output_dtypes=None):
        self.inputs = inputs
        self.outputs = outputs
        self.opset = opset
        # Output name -> declared dtype where it is one Vars store wider (float16 ...).
        self.output_dtypes = dict(output_dtypes or {})

    def run(self, feeds):
        """Write ``feeds`` (name -> array) into the inputs and return the output arrays."""
        for name, value in feeds.items():
            if name not in self.inputs:
                raise ConvertError(f"converter: the model has no input {name!r}; inputs: "
                                   f"{list(self.inputs)}")
            target = self.inputs[name]
            if isinstance(target, list):
                if not isinstance(value, (list, tuple)) or len(value) != len(target):
                    raise ConvertError(f"converter: input {name!r} is a sequence of "
                                       f"{len(target)} tensors")
                for var, item in zip(target, value):
                    _write(var, item)
            elif isinstance(target, F.Var):
                _write(target, value)
            elif value is not None:
                raise ConvertError(f"converter: input {name!r} was converted as an empty "
                                   "optional")
        return {name: _narrowed(_value_of(v), self.output_dtypes.get(name))
                for name, v in self.outputs.items()}


def _narrowed(value, dtype):
    """An output value in its declared narrow dtype (float16 ... stored wider)."""
    if dtype is None or value is None:
        return value
    if isinstance(value, list):
        return [_narrowed(v, dtype) for v in value]
    if value.dtype == _STORAGE.get(dtype):
        with np.errstate(over="ignore", invalid="ignore"):
            return value.astype(dtype)
    return value


def _write(var, value):
    shape = var.expr.metas[0].shape
    if shape is not None and list(np.shape(value)) != list(shape):
        var.resize(np.shape(value))
    var.write(value)


def _value_of(value):
    """An output's value: an array, or a list of arrays for a sequence."""
    if isinstance(value, list):
        return [np.array(v.read()) for v in value]
    if isinstance(value, F.Var):
        return np.array(value.read())
    if value is EMPTY:
        return None
    if isinstance(value, RuntimeSequence):
        return [np.array(a) for a in F.sequence_unpack(value.data.read(), value.index.read())]
    if isinstance(value, RuntimeOptional):
        if not bool(np.asarray(value.present.read()).reshape(-1)[0]):
            return None
        return _value_of(value.value)
    raise ConvertError(f"converter: an output is {value!r}, not a tensor or a sequence")


def _value_info_shape(vi):
    """Shape from a ValueInfoProto: -1 for symbolic or missing dims; None if no shape."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims = []
    for d in tt.shape.dim:
        dims.append(int(d.dim_value) if d.HasField("dim_value") else -1)
    return dims


class NodeContext:
    """What a handler may ask about its node and the graph being built."""

    def __init__(self, builder, node, opset, scope=None):
        self.builder = builder
        self.scope = scope
        self.node = node
        self.opset = opset
        self.name = node.name or (node.output[0] if node.output else node.op_type)

    def value(self, var):
        """The value of ``var`` as a numpy array when it depends on constants only, else
        None (the op then stays dynamic)."""
        return self.builder.static_value(var)

    def require_value(self, var, what):
        """Like :meth:`value`, but a ConvertError naming ``what`` when not constant."""
        if var is None:
            return None
        v = self.value(var)
        if v is None:
            raise StaticInfoNeeded(f"converter: node {self.name!r} ({self.node.op_type}): "
                                   f"{what} must be a constant (it depends on a graph "
                                   "input)")
        return v

    def static_needed(self, message):
        """The error a handler raises when it needs a shape known only at run time."""
        return StaticInfoNeeded(f"converter: node {self.name!r} ({self.node.op_type}): "
                                f"{message}")

    def known_shape(self, var):
        """The static shape of ``var`` as a list, or None while it depends on data."""
        meta = var.expr.metas[var.index]
        return None if meta.shape is None else list(meta.shape)

    def partial_shape(self, var):
        """What is known of ``var``'s shape: a list with -1 for each dimension only run
        time fixes (dynamic input dims), or None when not even the rank is known."""
        shape = partial_shape(var)
        return None if shape is None else list(shape)

    def declared_dtype(self, name):
        """The numpy dtype the model declares for value ``name`` (float16 ... included),
        or None when unknown."""
        return self.builder.declared.get(name)

    def error(self, message):
        """A ConvertError naming this node."""
        return ConvertError(f"converter: node {self.name!r} ({self.node.op_type}): {message}")

    def subgraph(self, graph, input_vars=None, inline=False):
        """Convert a GraphProto attribute with this node's scope visible (outer names).

        ``input_vars`` gives a Var per formal input (None: a placeholder from its declared
        type). Returns ``(scope, outputs)``; ``scope.captures`` maps each outer name read
        to ``(outer Var, inner placeholder)``.
        """
        return self.builder.convert_subgraph(graph, self.opset, self.scope, input_vars,
                                             inline)


class Scope:
    """Names visible while converting one graph; subgraphs see their parents' names.

    A subgraph (If branch, Loop/Scan body) becomes a self-contained express Subgraph, so a
    non-constant value it reads from an enclosing graph is *captured*: inside it stands a
    placeholder of the same shape and dtype, and the control-flow op feeds the outer Var
    in. Constants are used directly (they may live inside subgraphs).
    """

    def __init__(self, parent=None, inline=False):
        self.parent = parent
        self.inline = inline  # an inlined branch reads outer Vars directly
        self.local = {}
        self.captures = {}  # name -> (outer Var, inner placeholder)

    def __contains__(self, name):
        return name in self.local or (self.parent is not None and name in self.parent)

    def __getitem__(self, name):
        if name in self.local:
            return self.local[name]
        if name in self.captures:
            return self.captures[name][1]
        if self.parent is None:
            raise KeyError(name)
        outer = self.parent[name]
        if self.inline or (isinstance(outer, F.Var) and outer.expr.kind == "const"):
            return outer
        inner = _placeholder_like(outer, name)
        self.captures[name] = (outer, inner)
        return inner

    def __setitem__(self, name, var):
        self.local[name] = var

    def update(self, mapping):
        self.local.update(mapping)


def _placeholder_like(var, name):
    if not isinstance(var, F.Var):
        raise ConvertError(f"converter: subgraph reads {name!r}, a sequence from the "
                           "enclosing graph; only tensors can be captured")
    meta = var.expr.metas[var.index]
    if meta.dtype is None or meta.shape is None:
        raise ConvertError(f"converter: subgraph reads {name!r} from the enclosing graph, "
                           "whose shape is only known at run time")
    ph = F.placeholder(list(meta.shape), F.NCHW, meta.dtype)
    ph.name = name
    return ph


class _Builder:
    def __init__(self, model_dir=None, progress=None):
        self.model_dir = model_dir
        self.progress = progress
        self.done = 0
        self._static = {}
        self.declared = {}  # value name -> declared numpy dtype (a DeclaredTypes)

    # -- constant values -----------------------------------------------------------------
    def static_value(self, var):
        if var is None:
            return None
        expr = var.expr
        if expr.kind == "const":
            return expr.values[var.index]
        if expr.op is None:
            return None
        hit = self._static.get(expr.id)
        if hit is None:
            hit = all(self.static_value(v) is not None for v in expr.inputs)
            self._static[expr.id] = hit
        if not hit:
            return None
        return np.asarray(var)

    # -- graph conversion ----------------------------------------------------------------
    def convert_graph(self, graph, opset, env, input_shapes=None, fixed_inputs=True):
        inits = {}
        for t in graph.initializer:
            arr = numpy_helper.to_array(t, base_dir=self.model_dir or "")
            inits[t.name] = F.const(to_supported_array(arr, f"initializer {t.name!r}"))
            inits[t.name].name = t.name
        for sp in graph.sparse_initializer:
            arr = _sparse_to_dense(sp)
            inits[sp.values.name] = F.const(to_supported_array(arr))
        env.update(inits)
        inputs = {}
        for vi in graph.input:
            if vi.name in inits:
                continue
            inputs[vi.name] = self._placeholder(vi, (input_shapes or {}).get(vi.name))
            env[vi.name] = inputs[vi.name]
        self.convert_nodes(graph.node, opset, env)
        outputs = {}
        for vi in graph.output:
            if vi.name not in env:
                raise ConvertError(f"converter: graph output {vi.name!r} is produced by no "
                                   "node")
            outputs[vi.name] = env[vi.name]
        return inputs, outputs

    def _placeholder(self, vi, shape=None):
        kind = vi.type.WhichOneof("value")
        if kind == "tensor_type":
            return self._tensor_placeholder(vi.name, vi.type.tensor_type, shape,
                                            _value_info_shape(vi))
        if kind == "sequence_type":
            return self._sequence_placeholders(vi.name, vi.type.sequence_type.elem_type,
                                               shape)
        if kind == "optional_type":
            if shape is None:
                return EMPTY
            elem = vi.type.optional_type.elem_type
            if elem.WhichOneof("value") == "sequence_type":
                return self._sequence_placeholders(vi.name, elem.sequence_type.elem_type,
                                                   shape)
            return self._tensor_placeholder(vi.name, elem.tensor_type, shape, None)
        raise ConvertError(f"converter: graph input {vi.name!r} is a {kind}; only tensors, "
                           "sequences and optionals are supported")

    def _sequence_placeholders(self, name, elem, shapes):
        """A sequence input of a length fixed at conversion time: one placeholder per
        element, named ``name[i]``."""
        if shapes is None:
            raise ConvertError(f"converter: sequence input {name!r} needs its element "
                               "shapes (a list of shapes) at conversion time")
        if elem.WhichOneof("value") != "tensor_type":
            raise ConvertError(f"converter: sequence input {name!r} holds non-tensors")
        dtype = storage_dtype(onnx_dtype_to_numpy(elem.tensor_type.elem_type,
                                                  f"input {name!r}"))
        return Sequence((self._tensor_placeholder(f"{name}[{i}]", elem.tensor_type, s, None)
                         for i, s in enumerate(shapes)), elem_dtype=dtype)

    def _tensor_placeholder(self, name, tensor_type, shape, declared):
        dtype = storage_dtype(onnx_dtype_to_numpy(tensor_type.elem_type, f"input {name!r}"))
        if shape is None:
            shape = declared
        if shape is None:
            raise ConvertError(f"converter: graph input {name!r} has no shape; give one "
                               "with --inputConfigFile")
        var = F.placeholder(list(shape), F.NCHW, dtype)
        var.name = name
        return var

    def convert_nodes(self, nodes, opset, env):
        for node in nodes:
            self.convert_node(node, opset, env)
            self.done += 1
            if self.progress is not None:
                self.progress(self.done)

    def convert_node(self, node, opset, env):
        domain = node.domain if node.domain != "ai.onnx" else ""
        version = opset.get(domain, 1)
        fn = find_handler(node.op_type, domain, version)
        if fn is None:
            self._expand_function(node, opset, env)
            return
        ctx = NodeContext(self, node, opset, env)
        args = []
        for name in node.input:
            if name == "":
                args.append(None)
            elif name not in env:
                raise ctx.error(f"input {name!r} is produced by no earlier node")
            else:
                args.append(env[name])
        while args and args[-1] is None:
            args.pop()
        attrs = {a.name: _attribute_value(a, self.model_dir) for a in node.attribute}
        first_id = _peek_next_id()
        try:
            result = fn(ctx, *args, **attrs)
        except StaticInfoNeeded:
            result = self._defer(fn, node, opset, args, attrs)
        except ConvertError:
            raise
        except (MnnError, ValueError, TypeError, IndexError) as exc:
            if not any(_unknown(v) for v in args):
                raise ctx.error(str(exc)) from exc
            # An input whose shape is only known at run time: the handler runs then.
            result = self._defer(fn, node, opset, args, attrs)
        if result is None or not isinstance(result, (list, tuple)) or \
                isinstance(result, Sequence):
            result = [result]
        outs = list(node.output)
        if len(result) < len([o for o in outs if o]):
            produced = [o for o, r in zip(outs, list(result) + [None] * len(outs)) if o and r
                        is None]
            if produced:
                raise ctx.error(f"outputs {produced} are not produced")
        for name, var in zip(outs, result):
            if not name:
                continue
            if var is None:
                raise ctx.error(f"output {name!r} is not produced")
            if not isinstance(var, (F.Var, list, RuntimeSequence, RuntimeOptional)) and \
                    var is not EMPTY:
                raise ctx.error(f"handler returned {type(var).__name__} for {name!r}")
            if isinstance(var, F.Var) and var.expr.id >= first_id and var.expr.name is None:
                var.expr.name = name
            env[name] = var

    def _expand_function(self, node, opset, env):
        """An op with no handler whose ONNX schema defines it as a function: convert the
        function's body in place of the node (its inputs and outputs renamed)."""
        ctx = NodeContext(self, node, opset, env)
        args = [env[name] if name else None for name in node.input]
        body = function_body(node, opset, args)
        if body is None:
            raise ctx.error("no handler and no function body")
        scope = Scope(env, inline=True)
        for formal, actual in zip(body.input, args):
            if actual is not None:
                scope[formal] = actual
        inner = dict(opset)
        for imp in body.opset_import:
            inner[imp.domain if imp.domain != "ai.onnx" else ""] = int(imp.version)
        given = _attribute_defaults(node, opset, body)
        given.update({a.name: a for a in node.attribute})
        for inner_node in body.node:
            self.convert_node(_bind_attributes(inner_node, given), inner, scope)
        for formal, actual in zip(body.output, node.output):
            if actual:
                if formal not in scope:
                    raise ctx.error(f"function output {formal!r} is produced by no node")
                env[actual] = scope[formal]

    def _defer(self, fn, node, opset, args, attrs):
        if any(isinstance(a, (list, RuntimeSequence, RuntimeOptional)) for a in args):
            raise ConvertError(f"converter: node {node.name or node.output[0]!r} "
                               f"({node.op_type}) reads a sequence and needs values known "
                               "only at run time")
        if any(isinstance(a, onnx.GraphProto) for a in attrs.values()):
            raise ConvertError(f"converter: node {node.name or node.output[0]!r} "
                               f"({node.op_type}) needs shapes known at conversion time")
        present = [a is not None for a in args]
        deferred = DeferredNode(fn, node, opset, attrs, present, self.model_dir)
        outs = F.onnx_deferred([a for a in args if a is not None], deferred)
        return outs

    def convert_subgraph(self, graph, opset, parent, input_vars=None, inline=False):
        """Convert a control-flow body with ``parent``'s names visible.

        ``input_vars`` gives a Var per formal input of ``graph`` (None: make a placeholder
        from its declared type). Returns ``(scope, outputs)``: the scope holds the captures.
        """
        scope = Scope(parent, inline)
        for t in graph.initializer:
            arr = numpy_helper.to_array(t, base_dir=self.model_dir or "")
            scope[t.name] = F.const(to_supported_array(arr, f"initializer {t.name!r}"))
        given = list(input_vars or [])
        for i, vi in enumerate(graph.input):
            var = given[i] if i < len(given) else None
            scope[vi.name] = var if var is not None else self._placeholder(vi)
        self.convert_nodes(graph.node, opset, scope)
        outputs = []
        for vi in graph.output:
            if vi.name not in scope:
                raise ConvertError(f"converter: subgraph output {vi.name!r} is produced by "
                                   "no node")
            outputs.append(scope[vi.name])
        return scope, outputs


def _unknown(var):
    if not isinstance(var, F.Var):
        return False
    meta = var.expr.metas[var.index]
    return meta.shape is None or meta.dtype is None


class DeferredNode:
    """An ONNX node converted at run time, once its inputs are arrays (``onnx_deferred``).

    ``run(arrays)`` turns the arrays into constants, calls the node's handler (the same
    one the converter uses) and evaluates what it built.
    """

    def __init__(self, fn, node, opset, attrs, present, model_dir):
        self.fn, self.node, self.opset, self.attrs = fn, node, opset, attrs
        self.present = present
        self.model_dir = model_dir
        self.n_outputs = len(node.output)

    def run(self, arrays):
        it = iter(arrays)
        args = [F.const(next(it)) if p else None for p in self.present]
        builder = _Builder(self.model_dir)
        ctx = NodeContext(builder, self.node, self.opset, None)
        try:
            result = self.fn(ctx, *args, **self.attrs)
        except ConvertError:
            raise
        except (MnnError, ValueError, TypeError, IndexError) as exc:
            raise ctx.error(str(exc)) from exc
        if result is None or not isinstance(result, (list, tuple)) or \
                isinstance(result, Sequence):
            result = [result]
        outs = []
        for i in range(self.n_outputs):
            var = result[i] if i < len(result) else None
            if isinstance(var, list):
                raise ctx.error("a sequence computed at run time is not supported")
            if var is None:
                # An optional output nobody asked for: an empty placeholder value.
                outs.append(np.zeros(0, np.float32))
            else:
                outs.append(np.asarray(var))
        return outs

    def __repr__(self):
        return f"DeferredNode({self.node.op_type}, {self.node.name or self.node.output[0]!r})"


def _type_proto(var):
    """A TypeProto describing ``var`` (for context-dependent function bodies)."""
    tp = onnx.TypeProto()
    if not isinstance(var, F.Var):
        return tp
    meta = var.expr.metas[var.index]
    if meta.dtype is None:
        return tp
    tp.tensor_type.elem_type = onnx.helper.np_dtype_to_tensor_dtype(meta.dtype)
    if meta.shape is not None:
        for d in meta.shape:
            tp.tensor_type.shape.dim.add().dim_value = int(d)
    return tp


def function_body(node, opset, args=None):
    """The FunctionProto ONNX defines for ``node`` at the model's opset, or None."""
    from onnx import defs

    domain = node.domain if node.domain != "ai.onnx" else ""
    version = opset.get(domain, 1)
    try:
        schema = defs.get_schema(node.op_type, version, domain)
    except Exception:  # onnx raises SchemaError for unknown ops
        return None
    if schema.has_function:
        body = schema.get_function_with_opset_version(version) or schema.function_body
        if isinstance(body, bytes):
            parsed = onnx.FunctionProto()
            parsed.ParseFromString(body)
            body = parsed
        return body if body.node else None
    if schema.has_context_dependent_function:
        types = [_type_proto(a).SerializeToString() for a in (args or [])]
        if args is None or any(a is not None and _unknown(a) for a in args):
            return _ContextFunction if args is None else None
        data = schema.get_context_dependent_function_with_opset_version(
            version, node.SerializeToString(), types)
        if not data:
            return None
        body = onnx.FunctionProto()
        body.ParseFromString(data)
        return body
    return None


# Marks "has a context-dependent body" when no input types are at hand (checking support).
_ContextFunction = object()


def _attribute_defaults(node, opset, body):
    """Attribute defaults for a function body's ``ref_attr_name`` references: the
    FunctionProto's own, else the op schema's (HannWindow's ``periodic`` ...)."""
    from onnx import defs

    out = {}
    domain = node.domain if node.domain != "ai.onnx" else ""
    try:
        schema = defs.get_schema(node.op_type, opset.get(domain, 1), domain)
    except Exception:  # noqa: BLE001 - onnx raises SchemaError for unknown ops
        schema = None
    if schema is not None:
        for name, attr in schema.attributes.items():
            if attr.default_value.type != onnx.AttributeProto.UNDEFINED:
                out[name] = attr.default_value
    for attr in getattr(body, "attribute_proto", []):
        out[attr.name] = attr
    return out


def _bind_attributes(node, given):
    """``node`` of a function body with its ``ref_attr_name`` attributes bound to the
    calling node's attributes (dropped when the caller does not set them)."""
    if not any(a.ref_attr_name for a in node.attribute):
        return node
    out = onnx.NodeProto()
    out.CopyFrom(node)
    del out.attribute[:]
    for a in node.attribute:
        if a.ref_attr_name:
            if a.ref_attr_name in given:
                bound = onnx.AttributeProto()
                bound.CopyFrom(given[a.ref_attr_name])
                bound.name = a.name
                out.attribute.append(bound)
        else:
            out.attribute.append(a)
    return out


def _peek_next_id():
    from mnn.express import graph as _graph

    return _graph._counter[0] + 1


def _sparse_to_dense(sp):
    values = numpy_helper.to_array(sp.values)
    indices = numpy_helper.to_array(sp.indices)
    dims = list(sp.dims)
    dense = np.zeros(int(np.prod(dims)), dtype=values.dtype)
    if indices.ndim == 1:
        dense[indices] = values
    else:
        dense[np.ravel_multi_index(indices.T, dims)] = values
    return dense.reshape(dims)


def _attribute_value(attr, model_dir):
    """Python value of an AttributeProto (tensors as ndarrays, graphs as GraphProto)."""
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.FLOAT:
        return float(attr.f)
    if kind == A.INT:
        return int(attr.i)
    if kind == A.STRING:
        return attr.s.decode("utf-8", "replace")
    if kind == A.TENSOR:
        return numpy_helper.to_array(attr.t, base_dir=model_dir or "")
    if kind == A.GRAPH:
        return attr.g
    if kind == A.FLOATS:
        return [float(v) for v in attr.floats]
    if kind == A.INTS:
        return [int(v) for v in attr.ints]
    if kind == A.STRINGS:
        return [s.decode("utf-8", "replace") for s in attr.strings]
    if kind == A.TENSORS:
        return [numpy_helper.to_array(t) for t in attr.tensors]
    if kind == A.GRAPHS:
        return list(attr.graphs)
    if kind == A.SPARSE_TENSOR:
        return _sparse_to_dense(attr.sparse_tensor)
    if kind == A.TYPE_PROTO:
        return attr.tp
    raise ConvertError(f"converter: attribute {attr.name!r} has an unknown type {kind}")


def model_opsets(model):
    """domain -> opset version of a ModelProto ('' is the default ai.onnx domain)."""
    out = {}
    for imp in model.opset_import:
        domain = imp.domain if imp.domain != "ai.onnx" else ""
        out[domain] = int(imp.version)
    out.setdefault("", 1)
    return out


def unsupported_ops(model):
    """Every node (subgraphs included) with no handler: list of (name, op, domain, opset)."""
    opset = model_opsets(model)
    missing = []

    def walk(graph):
        for node in graph.node:
            domain = node.domain if node.domain != "ai.onnx" else ""
            version = opset.get(domain, 1)
            if find_handler(node.op_type, domain, version) is None and \
                    function_body(node, opset) is None:
                missing.append((node.name or (node.output[0] if node.output else ""),
                                node.op_type, domain, version))
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g)

    walk(model.graph)
    return missing


def load_onnx(model, input_shapes=None, progress=None):
    """Convert an ONNX model (path, bytes or ModelProto) into an :class:`OnnxGraph`.

    Parameters
    ----------
    model : str, bytes or onnx.ModelProto
        A path loads external data from the model's folder.
    input_shapes : dict, optional
        Input name -> shape overriding the model's declared shape (``-1`` = dynamic).
    progress : callable, optional
        Called with the number of top-level nodes converted so far.

    Raises
    ------
    UnsupportedOpsError
        Listing every op of the model without a handler.
    ConvertError
        For anything else that cannot be converted, naming the node.
    """
    model_dir = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise ConvertError(f"converter: model file {path!r} does not exist")
        model_dir = os.path.dirname(os.path.abspath(path))
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as exc:  # onnx raises DecodeError and friends
            raise ConvertError(f"converter: {path!r} is not an ONNX model: {exc}") from None
    elif isinstance(model, (bytes, bytearray)):
        try:
            model = onnx.load_from_string(bytes(model))
        except Exception as exc:
            raise ConvertError(f"converter: bytes are not an ONNX model: {exc}") from None
    missing = unsupported_ops(model)
    if missing:
        raise UnsupportedOpsError(missing)
    return convert_graph(model, input_shapes, model_dir, progress)


def convert_graph(model, input_shapes=None, model_dir=None, progress=None):
    """Convert a loaded ModelProto (see :func:`load_onnx`)."""
    opset = model_opsets(model)
    builder = _Builder(model_dir, progress)
    env = Scope()
    builder.declared = declared_types(model)
    inputs, outputs = builder.convert_graph(model.graph, opset, env, input_shapes)
    narrow = {}
    for vi in model.graph.output:
        dtype = builder.declared.get(vi.name)
        if dtype is not None and narrow_name(dtype) is not None:
            narrow[vi.name] = dtype
    return OnnxGraph(inputs, outputs, opset, narrow)


def _elem_type(type_proto):
    """The tensor element type inside a TypeProto (through sequences/optionals), or 0."""
    t = type_proto
    while t.WhichOneof("value") in ("sequence_type", "optional_type"):
        t = t.sequence_type.elem_type if t.HasField("sequence_type") else \
            t.optional_type.elem_type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else 0


class DeclaredTypes:
    """Value name -> numpy dtype the model declares (graph inputs, outputs, initializers,
    value_info, subgraphs included); a name not declared is looked up in onnx's type
    inference, run once on first need, on a copy whose large initializers are reduced to
    their type and shape (inference needs no weights, and copying them dominates)."""

    def __init__(self, model):
        self.model = model
        self.known = _types_in(model.graph)
        self.inferred = None

    def get(self, name, default=None):
        if name in self.known:
            return self.known[name]
        if self.inferred is None:
            self.inferred = _inferred_types(self.model)
        return self.inferred.get(name, default)


def declared_types(model):
    """A :class:`DeclaredTypes` for ``model`` (see there)."""
    return DeclaredTypes(model)


def _inferred_types(model):
    light = onnx.ModelProto()
    light.CopyFrom(model)
    for t in light.graph.initializer:
        if int(np.prod(list(t.dims), dtype=np.int64)) > 64:
            # Keep type and shape, drop the values (an input of the same type and shape).
            vi = onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            light.graph.input.append(vi)
            t.Clear()
    kept = [t for t in light.graph.initializer if t.name]
    del light.graph.initializer[:]
    light.graph.initializer.extend(kept)
    try:
        light = onnx.shape_inference.infer_shapes(light)
    except Exception:  # noqa: BLE001 - inference is a help, the declared types remain
        return {}
    return _types_in(light.graph)


def _types_in(graph):
    out = {}

    def note(name, elem):
        try:
            out[name] = onnx_dtype_to_numpy(elem)
        except ConvertError:
            pass

    def walk(graph):
        for t in graph.initializer:
            note(t.name, t.data_type)
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            elem = _elem_type(vi.type)
            if elem:
                note(vi.name, elem)
        for node in graph.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g)

    walk(graph)
    return out
