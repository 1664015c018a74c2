"""The legacy session API with MNN's names: ``Interpreter``, ``Session``, ``OpInfo``.

``Interpreter(path)`` reads the model once; ``createSession(config)`` compiles the plan
from the inputs to the outputs (``saveTensors``, ``inputPaths`` and ``outputPaths`` pick
other tensors) and gives the session its own input and output :class:`Tensor` objects.
``runSession`` reads the input tensors, runs the plan and refreshes the output tensors in
place (the objects users hold see the new data). Unlike the real wheel, models with
``If``/``While`` run here too: the session runs the same plan as ``load_module_from_file``.
"""
import os

import numpy as np

from ..express.errors import MnnError
from .module import RuntimeConfig, declared_shape
from .plan import RunStopped
from .tensor import Tensor, dim_type_of

__all__ = [
    "CALL_BACK_STOP",
    "NO_ERROR",
    "Interpreter",
    "OpInfo",
    "Session",
    "op_mflops",
]

# MNN's ErrorCode values returned by runSession.
NO_ERROR = 0
CALL_BACK_STOP = 11

# MNN's Interpreter::SessionInfoCode.
_MEMORY, _FLOPS, _BACKENDS, _RESIZE_STATUS, _THREAD_NUMBER = range(5)
_MEGA = 1024.0 * 1024.0  # MNN reports memory in MB and FLOPs in M, both of 2**20


def op_mflops(op_name, in_shapes, out_shapes):
    """MNN's FLOP count of one op, in millions of 2**20 (multiply-adds count once).

    Convolutions count output elements times the kernel's input window, matrix products
    output elements times the shared dimension, other ops their output elements.
    """
    out_elems = float(sum(int(np.prod(s, dtype=np.int64)) for s in out_shapes if s is not None))
    if op_name.startswith("conv") and len(in_shapes) > 1 and in_shapes[1]:
        weight = in_shapes[1]
        per_weight_row = int(np.prod(weight, dtype=np.int64)) // max(int(weight[0]), 1)
        if "transpose" in op_name:
            # Each input element is scattered over a weight row: count input elements.
            in_elems = float(np.prod(in_shapes[0], dtype=np.int64))
            return in_elems * per_weight_row / _MEGA
        return out_elems * per_weight_row / _MEGA
    if op_name == "matmul" and in_shapes and in_shapes[0]:
        return out_elems * int(in_shapes[0][-1]) / _MEGA
    return out_elems / _MEGA


class OpInfo:
    """What a ``runSessionWithCallBackInfo`` callback learns about an op."""

    __slots__ = ("_flops", "_name", "_time", "_type")

    def __init__(self, name, op_type, flops, seconds=0.0):
        self._name = name
        self._type = op_type
        self._flops = flops
        self._time = seconds

    def getName(self):
        """The op's (output tensor's) name."""
        return self._name

    def getType(self):
        """The op type (mnn's op name, e.g. ``conv2d``, ``add``)."""
        return self._type

    def getFlops(self):
        """Work of the op in MFLOPs (see :func:`op_mflops`)."""
        return self._flops

    def getTime(self):
        """Seconds the op took (in the end callback; 0 in the begin callback)."""
        return self._time


class Session:
    """One runnable instance of a model (MNN's ``Session``): its own tensors, a plan."""

    def __init__(self, module, thread_num):
        self.module = module
        self.thread_num = thread_num
        self.inputs = {}
        for name, var in zip(module.input_names, module._input_vars):
            shape = declared_shape(var) or []
            # MNN gives unknown dimensions size 1 until resizeTensor.
            shape = [d if d >= 0 else 1 for d in shape]
            dtype = var.expr.metas[var.index].dtype
            tensor = Tensor()
            tensor._set(np.zeros(shape, dtype), dim_type_of(var.data_format))
            tensor._owner = self
            self.inputs[name] = tensor
        self.outputs = {}
        for name, var in zip(module.output_names, module._output_vars):
            tensor = Tensor()
            tensor._set(np.zeros((0,), var.expr.metas[var.index].dtype or np.float32),
                        dim_type_of(var.data_format))
            self.outputs[name] = tensor
        self.resize_status = 0
        self.memory_mb = 0.0
        self.mflops = 0.0
        self.resize()

    def resize(self):
        """Infer every tensor's shape from the input tensors (MNN's resizeSession)."""
        from ..express.optable import TensorMeta

        shapes = [t._layout_array(v.data_format).shape
                  for t, v in zip(self.inputs.values(), self.module._input_vars)]
        plan = self.module.plan_for(shapes)
        metas = [TensorMeta(tuple(shape), t._array.dtype)
                 for shape, t in zip(shapes, self.inputs.values())]
        slots = plan.infer_slots(metas)
        for (name, tensor), s, v in zip(self.outputs.items(), plan.output_slots,
                                        self.module._output_vars):
            meta = slots[s]
            if meta is not None and meta.shape is not None and meta.dtype is not None:
                tensor._set(np.zeros(meta.shape, meta.dtype), dim_type_of(v.data_format))
        self.memory_mb, self.mflops = _plan_cost(plan, slots)
        self.resize_status = 0

    def run(self, before=None, after=None):
        arrays = [t._layout_array(v.data_format)
                  for t, v in zip(self.inputs.values(), self.module._input_vars)]
        arrays = [np.ascontiguousarray(a) for a in arrays]
        try:
            outs = self.module.run_arrays(arrays, before=before, after=after)
        except RunStopped:
            return CALL_BACK_STOP
        for tensor, out, v in zip(self.outputs.values(), outs, self.module._output_vars):
            tensor._set(out, dim_type_of(v.data_format))
        self.resize_status = 0
        return NO_ERROR


def _plan_cost(plan, slots):
    """Memory (MB: weights plus the peak of live tensors) and MFLOPs from inferred shapes."""
    def nbytes(meta):
        if meta is None or meta.shape is None or meta.dtype is None:
            return 0
        return int(np.prod(meta.shape, dtype=np.int64)) * meta.dtype.itemsize

    weights = sum(v.nbytes for v in plan.constants.values())
    live = sum(nbytes(slots[s]) for s in plan.input_slots)
    peak = live
    mflops = 0.0
    for step in plan.steps:
        live += sum(nbytes(slots[s]) for s in step.outputs)
        peak = max(peak, live)
        live -= sum(nbytes(slots[s]) for s in step.free)
        ins = [slots[s].shape if slots[s] is not None else None for s in step.inputs]
        outs = [slots[s].shape if slots[s] is not None else None for s in step.outputs]
        if all(sh is not None for sh in ins):
            mflops += op_mflops(step.op.name, ins, outs)
    return (weights + peak) / _MEGA, mflops


class Interpreter:
    """A loaded model file (MNN's ``Interpreter``); sessions run it.

    Parameters
    ----------
    model_path : str, os.PathLike or bytes
        The ``.mnn`` file, or its bytes.
    """

    def __init__(self, model_path):
        from ..format.reader import build_graph, read_net

        if isinstance(model_path, (bytes, bytearray, memoryview)):
            net, external = read_net(bytes(model_path))
        else:
            net, external = read_net(os.fspath(model_path))
        self._source = "<bytes>" if external is None else external.model_name
        self._net, self._external = net, external
        self._graph = build_graph(net, self._source, external)
        self._sessions = []
        self._mode = {}
        self._hints = {}

    # -- sessions --------------------------------------------------------------------
    def createSession(self, config=None, runtime=None):
        """Make a :class:`Session`.

        ``config`` keys (MNN's): ``backend`` ("CPU"/0 only), ``precision``
        ("normal"/"high"/"low"), ``numThread``, ``saveTensors`` (extra output tensor
        names), ``inputPaths`` and ``outputPaths`` (run only between these tensors).
        """
        from ..nn.loader import ShapeRebuild, load_graph_module

        config = dict(config or {})
        known = {"backend", "precision", "numThread", "saveTensors", "inputPaths",
                 "outputPaths", "memory", "power"}
        unknown = set(config) - known
        if unknown:
            raise MnnError(f"mnn: createSession: unknown config keys {sorted(unknown)} "
                           f"(known: {sorted(known)})")
        if runtime is not None:
            raise MnnError("mnn: createSession: runtime objects are not supported; pass "
                           "the config")
        threads = int(config.get("numThread", 4))
        rc = RuntimeConfig(backend=config.get("backend", 0),
                           precision_mode=config.get("precision", "normal"),
                           memory_mode=config.get("memory", "normal"),
                           power_mode=config.get("power", "normal"),
                           thread_num=max(threads, 1))
        inputs = list(config.get("inputPaths") or [])
        outputs = list(config.get("outputPaths") or [])
        if not outputs:
            outputs = list(self._graph.outputs)
            outputs += [n for n in (config.get("saveTensors") or []) if n not in outputs]
        module = load_graph_module(self._graph, inputs, outputs, rc)
        if set(module.input_names) <= set(self._graph.inputs):
            module.set_rebuild(ShapeRebuild(self._net, self._source, self._external,
                                            module.input_names, module.output_names))
        session = Session(module, rc.thread_num)
        self._sessions.append(session)
        return session

    def _session(self, session):
        if not isinstance(session, Session):
            raise MnnError(f"mnn: expected a Session, got {type(session).__name__}")
        return session

    def getSessionInput(self, session, tensorName=None):
        """The input Tensor named ``tensorName`` (the first input when None)."""
        return _pick(self._session(session).inputs, tensorName, "input")

    def getSessionOutput(self, session, tensorName=None):
        """The output Tensor named ``tensorName`` (the first output when None)."""
        return _pick(self._session(session).outputs, tensorName, "output")

    def getSessionInputAll(self, session):
        """All input Tensors by name."""
        return dict(self._session(session).inputs)

    def getSessionOutputAll(self, session):
        """All output Tensors by name."""
        return dict(self._session(session).outputs)

    def resizeTensor(self, tensor, shape):
        """Give a session input tensor a new shape (zero-filled until written)."""
        if not isinstance(tensor, Tensor):
            raise MnnError(f"mnn: resizeTensor needs a Tensor, got {type(tensor).__name__}")
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise MnnError(f"mnn: resizeTensor: shape {list(shape)} has a negative "
                           "dimension")
        tensor._set(np.zeros(shape, tensor._array.dtype), tensor._dim_type)
        if tensor._owner is not None:
            tensor._owner.resize_status = 2

    def resizeSession(self, session):
        """Re-infer the session's tensor shapes after ``resizeTensor``; returns True."""
        self._session(session).resize()
        return True

    def runSession(self, session):
        """Run the model on the session's input tensors; returns 0 (NO_ERROR)."""
        return self._session(session).run()

    def runSessionWithCallBack(self, session, begin_callback, end_callback):
        """Run with ``begin(tensors, name)`` before and ``end(tensors, name)`` after each op
        (input tensors, then output tensors); a false result stops the run (returns 11)."""
        def before(step, args):
            return begin_callback([_view(a) for a in args], _step_name(step))

        def after(step, args, outs, seconds):
            return end_callback([_view(o) for o in outs], _step_name(step))

        return self._session(session).run(before, after)

    def runSessionWithCallBackInfo(self, session, begin_callback, end_callback):
        """As :meth:`runSessionWithCallBack`, the callbacks get an :class:`OpInfo`
        (name, type, MFLOPs, and the op's time in the end callback)."""
        def info(step, args, outs, seconds):
            flops = op_mflops(step.op.name, [a.shape for a in args],
                              [o.shape for o in outs] if outs is not None else [])
            return OpInfo(_step_name(step), step.op.name, flops, seconds)

        def before(step, args):
            return begin_callback([_view(a) for a in args], info(step, args, None, 0.0))

        def after(step, args, outs, seconds):
            return end_callback([_view(o) for o in outs], info(step, args, outs, seconds))

        return self._session(session).run(before, after)

    def getSessionInfo(self, session, code):
        """MNN's session info: 0 memory (MB), 1 FLOPs (M), 2 backend type (0: CPU),
        3 resize status (0 ready, 2 needs resizeSession), 4 thread count."""
        session = self._session(session)
        code = int(code)
        if code == _MEMORY:
            return session.memory_mb
        if code == _FLOPS:
            return session.mflops
        if code == _BACKENDS:
            return 0
        if code == _RESIZE_STATUS:
            return session.resize_status
        if code == _THREAD_NUMBER:
            return session.thread_num
        raise MnnError(f"mnn: getSessionInfo: unknown code {code} (0 memory, 1 flops, "
                       "2 backends, 3 resize status, 4 thread number)")

    def getModelVersion(self):
        """The version string stored in the file (mnn's version when it has none)."""
        from .. import _version

        extra = (self._graph.net or {}).get("extraInfo") or {}
        version = extra.get("version") if isinstance(extra, dict) else None
        return version or _version.__version__

    def setSessionMode(self, mode):
        """Recorded for compatibility (mnn's sessions always allow callbacks)."""
        self._mode[int(mode)] = True

    def setSessionHint(self, mode, value):
        """Recorded for compatibility (the hints tune GPU backends)."""
        self._hints[int(mode)] = int(value)


def _pick(tensors, name, what):
    if name is None:
        if not tensors:
            raise MnnError(f"mnn: the session has no {what}s")
        return next(iter(tensors.values()))
    if name not in tensors:
        raise MnnError(f"mnn: the session has no {what} named {name!r} (its {what}s: "
                       f"{list(tensors)})")
    return tensors[name]


def _step_name(step):
    return step.name or step.op.name


def _view(array):
    # Arrays of a run are never written in place, so the Tensor can hold them as they are.
    tensor = Tensor()
    tensor._set(array, 1)
    return tensor
