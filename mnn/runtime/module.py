"""The Module a model file loads into (pymnn's ``nn.load_module_from_file`` result).

A :class:`LoadedModule` holds one compiled :class:`~mnn.runtime.plan.Plan` from its input
tensors to its output tensors. ``forward`` converts the arguments (Vars or numpy arrays) to
arrays of the inputs' dtypes, runs the plan with the module's thread count and returns
constant Vars. The plan is re-entrant, so :meth:`LoadedModule.clone` shares it (and the
weights) and each thread can own a clone.

Input shapes: the plan checks and accepts any shapes its ops accept. A model read from a
file also has shape chains the reader computed for the declared input shapes; inputs of
other shapes get a plan of their own, built from the file again with those shapes (a few
are kept per module), as MNN re-runs its shape computation on resize.
"""
import threading

import numpy as np

from .. import _version
from ..express import runtime as _runtime
from ..express.errors import MnnError
from ..express.formats import NC4HW4, NCHW, NHWC
from ..express.var import Var, _source, placeholder
from ..nn.module import Module
from .plan import Plan

__all__ = ["LoadedModule", "RuntimeConfig"]

# pymnn's enum spellings for the run-time options; only the CPU backend exists here.
_BACKENDS = {"CPU": 0}
_MODES = {"NORMAL": 0, "HIGH": 1, "LOW": 2, "LOWBF": 3}



class _ThreadCount:
    """The process-wide kernel thread count while modules run.

    The first module to start sets its ``thread_num`` and the last one to finish restores
    the caller's setting, so clones of one module run in parallel threads without
    serialising. Modules with different counts that overlap in time share the count of
    the one that started first.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.active = 0
        self.saved = None

    def enter(self, want):
        with self.lock:
            if self.active == 0:
                self.saved = _runtime.get_thread_number()
                if self.saved != want:
                    _runtime.use_kernel_threads(want)
            self.active += 1

    def leave(self):
        with self.lock:
            self.active -= 1
            if self.active == 0 and _runtime.get_thread_number() != self.saved:
                _runtime.use_kernel_threads(self.saved)


_threads = _ThreadCount()

# Plans kept per module for input shapes other than the declared ones.
_MAX_SHAPE_PLANS = 4


def _option_value(value, table, what):
    """An enum-like option as an int: ints, names ("CPU", "Normal") or enum members."""
    if isinstance(value, str):
        key = value.upper()
    elif hasattr(value, "name") and isinstance(value.name, str):
        key = value.name.upper()
    else:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise MnnError(f"mnn: {what} must be one of {sorted(table)}, got {value!r}") \
                from None
        if number not in table.values():
            raise MnnError(f"mnn: {what} {number} is not supported (known: {table})")
        return number
    if key not in table:
        raise MnnError(f"mnn: {what} {value!r} is not supported (known: {sorted(table)})")
    return table[key]


class RuntimeConfig:
    """The load options of a module, checked once (pymnn's names and defaults)."""

    __slots__ = (
        "backend",
        "dynamic",
        "memory_mode",
        "power_mode",
        "precision_mode",
        "rearrange",
        "shape_mutable",
        "thread_num",
    )

    def __init__(self, dynamic=False, shape_mutable=True, rearrange=False, backend=0,
                 memory_mode=0, power_mode=0, precision_mode=0, thread_num=1):
        self.dynamic = bool(dynamic)
        self.shape_mutable = bool(shape_mutable)
        self.rearrange = bool(rearrange)
        self.backend = _option_value(backend, _BACKENDS, "backend (only the CPU backend "
                                                         "exists in mnn)")
        self.memory_mode = _option_value(memory_mode, _MODES, "memory_mode")
        self.power_mode = _option_value(power_mode, _MODES, "power_mode")
        self.precision_mode = _option_value(precision_mode, _MODES, "precision_mode")
        thread_num = int(thread_num)
        if thread_num < 1:
            raise MnnError(f"mnn: thread_num must be >= 1, got {thread_num}")
        self.thread_num = thread_num


def declared_shape(var):
    """The shape an input placeholder declares (``-1`` for dimensions of any size)."""
    expr = var.expr
    if "declared_shape" in expr.attrs:
        return list(expr.attrs["declared_shape"])
    shape = expr.metas[var.index].shape
    return None if shape is None else list(shape)


class LoadedModule(Module):
    """A model ready to run: inputs and outputs by name, one compiled plan.

    Build it with :func:`mnn.nn.load_module_from_file`; ``forward``/``onForward``/``__call__``
    run it.
    """

    def __init__(self, inputs, outputs, input_names, output_names, config=None,
                 biz_code="", version=None, plan=None):
        super().__init__()
        config = config or RuntimeConfig()
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_input_vars", list(inputs))
        object.__setattr__(self, "_output_vars", list(outputs))
        object.__setattr__(self, "_input_names", list(input_names))
        object.__setattr__(self, "_output_names", list(output_names))
        object.__setattr__(self, "_biz_code", biz_code or "")
        object.__setattr__(self, "_version", version or _version.__version__)
        object.__setattr__(self, "_plan", plan if plan is not None else Plan(inputs, outputs))
        self._training = False
        self._type = "StaticModule" if not config.dynamic else "PipelineModule"
        self._check_declared_shapes = not config.shape_mutable
        object.__setattr__(self, "_rebuild", None)
        object.__setattr__(self, "_shape_plans", {})  # input shapes -> Plan (shared by clones)
        object.__setattr__(self, "_plans_lock", threading.Lock())

    def set_rebuild(self, rebuild):
        """Give the module a way to rebuild its graph for other input shapes.

        ``rebuild.build(shapes)`` returns (input Vars, output Vars) for ``shapes`` (input
        name -> shape). Used when a run's input shapes differ from the declared ones:
        shape chains folded for the declared shapes would be wrong for others.
        """
        object.__setattr__(self, "_rebuild", rebuild)

    def plan_for(self, shapes):
        """The plan for input ``shapes`` (declared shapes: the module's own plan)."""
        if self._rebuild is None or self._fits_declared(shapes):
            return self._plan
        key = tuple(tuple(int(d) for d in s) for s in shapes)
        plan = self._shape_plans.get(key)
        if plan is None:
            inputs, outputs = self._rebuild.build(dict(zip(self._input_names, key)))
            plan = Plan(inputs, outputs)
            with self._plans_lock:  # clones share the cache
                if len(self._shape_plans) >= _MAX_SHAPE_PLANS:
                    # Each plan holds its own weights: keep few (oldest out first).
                    self._shape_plans.pop(next(iter(self._shape_plans)))
                self._shape_plans[key] = plan
        return plan

    def _fits_declared(self, shapes):
        for v, shape in zip(self._input_vars, shapes):
            declared = declared_shape(v)
            if declared is None:
                continue
            if len(declared) != len(shape) or any(d >= 0 and d != a
                                                   for d, a in zip(declared, shape)):
                return False
        return True

    # -- information -----------------------------------------------------------------
    @property
    def plan(self):
        """The compiled :class:`~mnn.runtime.plan.Plan` (shared by clones)."""
        return self._plan

    @property
    def input_names(self):
        """Names of the inputs, in ``forward``'s order."""
        return list(self._input_names)

    @property
    def output_names(self):
        """Names of the outputs, in the order ``forward`` returns them."""
        return list(self._output_names)

    @property
    def thread_num(self):
        """Threads the compiled kernels use while this module runs."""
        return self._config.thread_num

    def get_info(self):
        """pymnn's module info: ``version``, ``bizCode``, ``inputNames``, ``outputNames``
        and ``inputs`` (a placeholder per input with its declared shape, format, dtype)."""
        inputs = []
        for v in self._input_vars:
            shape = declared_shape(v)
            inputs.append(placeholder(shape if shape is not None else [],
                                      v.data_format, v.expr.metas[v.index].dtype))
        return {"version": self._version, "bizCode": self._biz_code,
                "inputNames": list(self._input_names),
                "outputNames": list(self._output_names), "inputs": inputs}

    # -- running ---------------------------------------------------------------------
    def forward(self, *inputs):
        """Run the model.

        ``forward([a, b])`` (a list, as pymnn's ``onForward``) returns a list of Vars;
        ``forward(x)`` with a single Var or array returns the first output (pymnn's rule);
        ``forward(a, b)`` returns a list.
        """
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            return self.onForward(inputs[0])
        if len(inputs) == 1:
            return self.onForward([inputs[0]])[0]
        return self.onForward(list(inputs))

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def onForward(self, inputs):
        """Run the model on a list of inputs (Vars or arrays); returns a list of Vars."""
        arrays, borrowed = self._arrays(inputs)
        outs = self.run_arrays(arrays)
        if borrowed:
            # The caller's arrays are read in place (copying a 1x3x224x224 input took
            # about 0.04 ms of a 2 ms MobileNetV2 run); an output that views one of them
            # (a model that only reshapes, say) is copied, so no output aliases a buffer
            # the caller may write.
            outs = [np.array(out) if any(np.may_share_memory(out, a) for a in borrowed)
                    else out for out in outs]
        return [_source("const", out, v.data_format)
                for out, v in zip(outs, self._output_vars)]

    def run_arrays(self, arrays, before=None, after=None):
        """Run on ndarrays already of the inputs' dtypes; returns ndarrays (read-only)."""
        plan = self.plan_for([a.shape for a in arrays])
        _threads.enter(self._config.thread_num)
        try:
            return plan.run(arrays, before=before, after=after)
        finally:
            _threads.leave()

    def _arrays(self, inputs):
        """``(arrays, borrowed)``: the inputs as arrays of the model's dtypes, and those of
        them that are the caller's own arrays (not copied: ops never write their
        inputs)."""
        inputs = list(inputs)
        if len(inputs) != len(self._input_vars):
            raise MnnError(f"mnn: the model takes {len(self._input_vars)} inputs "
                           f"{self._input_names}, got {len(inputs)}")
        arrays, borrowed = [], []
        for name, v, x in zip(self._input_names, self._input_vars, inputs):
            want = v.expr.metas[v.index].dtype
            if isinstance(x, Var):
                arr = _to_format(np.asarray(x), x.data_format, v.data_format)
            else:
                arr = np.asarray(x)
            if arr.dtype != want:
                if not np.can_cast(arr.dtype, want, "same_kind"):
                    raise MnnError(f"mnn: input {name!r} must be {want}, got {arr.dtype}")
                arr = arr.astype(want)
            elif not isinstance(x, Var):
                borrowed.append(arr)
            if self._check_declared_shapes:
                shape = declared_shape(v)
                if shape is not None and (len(shape) != arr.ndim or any(
                        d >= 0 and d != a for d, a in zip(shape, arr.shape))):
                    raise MnnError(f"mnn: input {name!r} has shape {list(arr.shape)}, the "
                                   f"model declares {shape} (loaded with "
                                   "shape_mutable=False)")
            arrays.append(arr)
        return arrays, borrowed

    def clone(self):
        """A module sharing this one's compiled plans and weights, for another thread."""
        twin = LoadedModule(self._input_vars, self._output_vars, self._input_names,
                            self._output_names, self._config, self._biz_code, self._version,
                            plan=self._plan)
        object.__setattr__(twin, "_rebuild", self._rebuild)
        object.__setattr__(twin, "_shape_plans", self._shape_plans)
        object.__setattr__(twin, "_plans_lock", self._plans_lock)
        return twin

    def train(self, is_training=True):
        """Loaded modules are for inference; ``train(True)`` raises."""
        if is_training:
            raise MnnError("mnn: a module loaded from a model file runs inference only; "
                           "build the model with mnn.nn layers to train it")
        self._training = False


def _to_format(array, have, want):
    """Lay a 4-d array out as the input expects (NHWC <-> NCHW; NC4HW4 is NCHW)."""
    if array.ndim != 4:
        return array
    nchw_like = (NCHW, NC4HW4)
    if have == NHWC and want in nchw_like:
        return np.ascontiguousarray(array.transpose(0, 3, 1, 2))
    if have in nchw_like and want == NHWC:
        return np.ascontiguousarray(array.transpose(0, 2, 3, 1))
    return array
