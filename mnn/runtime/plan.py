"""The compiled plan: an express graph turned into a flat list of steps, run without walks.

A :class:`Plan` is built once from input placeholders and output Vars:

* the ops between them are put in topological order and each op's compute function is
  looked up once;
* every tensor gets an integer slot; a run fills a fresh list of slots, so one plan can be
  run from several threads at once and never changes the graph it came from;
* ops whose inputs are all constants are computed once at build time (constant folding:
  weight transforms, shape chains), so a run starts from prepared weights;
* each intermediate array is dropped as soon as its last consumer ran (liveness), which
  lets the allocator hand the same memory to later ops;
* shapes are checked with the ops' inference functions only when they are new: the steps
  are cut into segments at ops whose output shape depends on data (``nonzero``, a ``while``
  with scan outputs, an ``if`` whose branches differ), and a segment is checked once per
  signature of the shapes and dtypes entering it, then run unchecked. New input shapes are
  thus "re-planned" once and reused. Checking before computing matters: compiled kernels
  trust shapes that inference has accepted.
"""
import inspect
import time

import numpy as np

from ..express.errors import OpError
from ..express.graph import PLACEHOLDER, TRAINABLE, _describe, topological_order
from ..express.optable import TensorMeta
from .plan_fusion import fuse_steps

__all__ = ["Plan", "PlanStep", "RunStopped"]

# Ops that must run every time even when their inputs are constant (their value is not a
# function of the inputs). Matched by prefix: random ops are the only such family.
_NON_DETERMINISTIC_PREFIX = "random"

# Checked segment signatures kept per plan.
_MAX_SIGNATURES = 512


class RunStopped(Exception):
    """A ``before``/``after`` hook of :meth:`Plan.run` returned false at ``step``."""

    def __init__(self, step):
        super().__init__(f"run stopped by a callback at op {step.name or step.op.name}")
        self.step = step


class PlanStep:
    """One op of a plan: what to call, on which slots, and which slots die after it."""

    __slots__ = ("attrs", "compute", "free", "inputs", "name", "op", "outputs")

    def __init__(self, op, attrs, inputs, outputs, name):
        self.op = op
        self.compute = op.compute
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs
        self.free = ()
        self.name = name

    def __repr__(self):
        return f"PlanStep({self.op.name}, {self.name!r}, in={self.inputs}, out={self.outputs})"


def _as_arrays(result, n):
    if isinstance(result, np.ndarray) or np.isscalar(result):
        result = [result]
    result = [r if isinstance(r, np.ndarray) else np.asarray(r) for r in result]
    if len(result) != n:
        raise RuntimeError(f"mnn internal error: op returned {len(result)} outputs, "
                           f"expected {n}")
    return result


class Plan:
    """A compiled, re-entrant program computing ``outputs`` from ``inputs``.

    Parameters
    ----------
    inputs : list of Var
        Placeholders fed by :meth:`run`, in order.
    outputs : list of Var
        The Vars to compute. An output may be an input or a constant.
    fold_constants : bool
        Compute ops whose inputs are all constants once, at build time.
    source_inputs : bool
        Let ``inputs`` also be constants or trainables, whose values each run then
        takes like a placeholder's (a compiled training step feeds its batch constants
        and module state this way).

    Raises
    ------
    OpError
        When an output depends on a placeholder that is not among ``inputs``.
    """

    def __init__(self, inputs, outputs, fold_constants=True, source_inputs=False):
        self.input_vars = list(inputs)
        self.output_vars = list(outputs)
        for v in self.input_vars:
            if v.expr.op is None and v.expr.kind != PLACEHOLDER and not source_inputs:
                raise OpError(f"mnn: plan input {v.name} is a {v.expr.kind}, not a "
                              "placeholder or a computed tensor")
        self._build(fold_constants)
        self._checked = {}  # (segment start, signature) -> segment end (exclusive)

    # -- building ------------------------------------------------------------------------
    def _build(self, fold_constants):
        slot_of = {}
        consts = {}        # slot -> array for constants and folded values
        trainables = {}    # slot -> Expr (value read at each run: training may change it)
        input_exprs = {v.expr.id for v in self.input_vars}

        def slot(var_key):
            if var_key not in slot_of:
                slot_of[var_key] = len(slot_of)
            return slot_of[var_key]

        self.input_slots = [slot((v.expr.id, v.index)) for v in self.input_vars]
        if len(set(self.input_slots)) != len(self.input_slots):
            raise OpError("mnn: the same placeholder is given twice as a plan input")
        order = []
        seen = set()
        for out in self.output_vars:
            order.extend(topological_order([out.expr], input_exprs, seen))
        steps = []
        for expr in order:
            if expr.id in input_exprs:
                continue
            if expr.op is None:
                if expr.kind == PLACEHOLDER:
                    raise OpError(f"mnn: the graph depends on placeholder "
                                  f"{expr.name or expr.id}, which is not one of the "
                                  f"inputs ({[v.name for v in self.input_vars]})")
                if expr.values is None:
                    raise OpError(f"mnn: {expr.kind} {expr.name or expr.id} has no value")
                s = slot((expr.id, 0))
                if expr.kind == TRAINABLE:
                    trainables[s] = expr
                else:
                    consts[s] = expr.values[0]
                continue
            ins = tuple(slot((v.expr.id, v.index)) for v in expr.inputs)
            outs = tuple(slot((expr.id, i)) for i in range(len(expr.outputs)))
            step = PlanStep(expr.op, dict(expr.attrs), ins, outs, expr.name)
            if (fold_constants and ins and all(i in consts for i in ins)
                    and not expr.op.name.startswith(_NON_DETERMINISTIC_PREFIX)):
                self._fold(step, consts)
                continue
            steps.append(step)
        self.output_slots = [slot((v.expr.id, v.index)) for v in self.output_vars]
        fed = {(v.expr.id, v.index) for v in self.input_vars}
        for v in self.input_vars:
            # An input may be a computed tensor (running a model from the middle): the walk
            # stopped there, so no other output of that op can be computed.
            for i in range(len(v.expr.outputs)):
                if (v.expr.id, i) in slot_of and (v.expr.id, i) not in fed:
                    raise OpError(f"mnn: output {i} of {v.expr.name or v.expr.op_type} is "
                                  "needed but only another output of that op is an input")
        self.input_dtypes = [v.expr.metas[v.index].dtype for v in self.input_vars]
        self.n_slots = len(slot_of)
        self.slot_of = slot_of  # (Expr id, output index) -> slot, of the source graph
        keep = set(self.output_slots)
        self.steps = fuse_steps(_fuse_activations(_relu_grad_reads_output(steps), keep), keep,
                                consts)
        self.constants = consts
        self.trainables = trainables
        self._template = [None] * self.n_slots
        for s, value in consts.items():
            self._template[s] = value
        self._const_slots = frozenset(consts)
        self._plan_liveness()
        self._live_at = {}

    def _fold(self, step, consts):
        arrays = [consts[i] for i in step.inputs]
        metas = [TensorMeta(a.shape, a.dtype, a) for a in arrays]
        try:
            step.op.infer(metas, **step.attrs)
            result = _as_arrays(step.compute(arrays, **step.attrs), len(step.outputs))
        except OpError as exc:
            raise OpError(_describe(step.op.name, metas, str(exc))) from None
        for s, value in zip(step.outputs, result):
            if value.flags.writeable:
                value.flags.writeable = False
            consts[s] = value

    def _plan_liveness(self):
        keep = set(self.output_slots)
        last_use = {}
        for i, step in enumerate(self.steps):
            for s in step.inputs:
                last_use[s] = i
            for s in step.outputs:
                last_use.setdefault(s, i)  # outputs nobody reads die right away
        dying = {}
        for s, i in last_use.items():
            if s not in keep:
                dying.setdefault(i, []).append(s)
        for i, step in enumerate(self.steps):
            step.free = tuple(dying.get(i, ()))
        self.peak_live = self._count_peak(dying)

    def _count_peak(self, dying):
        live = peak = len(self.input_slots)
        for i, step in enumerate(self.steps):
            live += len(step.outputs)
            peak = max(peak, live)
            live -= len(dying.get(i, ()))
        return peak

    def _live_slots(self, start):
        """Non-constant slots holding values when step ``start`` begins (segment entry)."""
        if start not in self._live_at:
            live = set(self.input_slots) | set(self.trainables)
            for step in self.steps[:start]:
                live.update(step.outputs)
                live.difference_update(step.free)
            self._live_at[start] = tuple(sorted(live))
        return self._live_at[start]

    # -- running -------------------------------------------------------------------------
    def run(self, arrays, before=None, after=None):
        """Compute the outputs from input ``arrays`` (one ndarray per input, in order).

        Parameters
        ----------
        arrays : sequence of ndarray
            Must have the inputs' dtypes; shapes may be new (they are checked once).
        before : callable, optional
            ``before(step, input_arrays) -> bool`` ahead of each op; a false result stops
            the run (:class:`RunStopped`). For per-op hooks and profiling.
        after : callable, optional
            ``after(step, input_arrays, output_arrays, seconds) -> bool`` after each op;
            a false result stops the run.

        Returns
        -------
        list of ndarray
            One per output.
        """
        env = self._input_env(arrays)
        hooked = before is not None or after is not None
        pos, n = 0, len(self.steps)
        while pos < n:
            sig = (pos, tuple([(env[s].shape, env[s].dtype) for s in self._live_slots(pos)]))
            end = self._checked.get(sig)
            if end is None:
                end = self._run_segment(env, pos, n, True, before, after)
                if len(self._checked) >= _MAX_SIGNATURES:
                    # Shapes that never repeat (free-length inputs): keep memory bounded.
                    self._checked.clear()
                self._checked[sig] = end
            elif hooked:
                self._run_segment(env, pos, end, False, before, after)
            else:
                self._run_fast(env, pos, end)
            pos = end
        return [env[s] for s in self.output_slots]

    def _input_env(self, arrays):
        """The slot list of a run: constants, the checked inputs and the trainables."""
        if len(arrays) != len(self.input_slots):
            raise OpError(f"mnn: the plan takes {len(self.input_slots)} inputs, got "
                          f"{len(arrays)}")
        env = list(self._template)
        for s, a, want, v in zip(self.input_slots, arrays, self.input_dtypes,
                                 self.input_vars):
            if a.dtype != want:
                raise OpError(f"mnn: input {v.name} must be {want}, got {a.dtype}")
            env[s] = a
        for s, expr in self.trainables.items():
            env[s] = expr.values[0]
        return env

    def run_seeded(self, arrays, seeds):
        """Like :meth:`run`, with some intermediate values already known.

        Steps whose outputs are all in ``seeds`` are skipped (a training step whose loss
        was read already has its forward pass). Shapes are checked as in :meth:`run` on a
        plan's first run; later runs trust them, so ``seeds`` must hold what the plan
        would compute for these ``arrays`` (same shapes and dtypes).

        Parameters
        ----------
        arrays : sequence of ndarray
            One per input, as for :meth:`run`.
        seeds : dict
            ``slot -> ndarray``.
        """
        if not self._checked:
            return self.run(arrays)
        env = self._input_env(arrays)
        for s, value in seeds.items():
            env[s] = value
        for step in self.steps:
            outs = step.outputs
            known = True
            for s in outs:
                if s not in seeds:
                    known = False
                    break
            if not known:
                result = step.compute([env[s] for s in step.inputs], **step.attrs)
                if len(outs) == 1 and isinstance(result, np.ndarray):
                    env[outs[0]] = result
                else:
                    for s, value in zip(outs, _as_arrays(result, len(outs))):
                        env[s] = value
            for s in step.free:
                env[s] = None
        return [env[s] for s in self.output_slots]

    def _run_fast(self, env, start, end):
        for step in self.steps[start:end]:
            result = step.compute([env[s] for s in step.inputs], **step.attrs)
            outs = step.outputs
            if len(outs) == 1 and isinstance(result, np.ndarray):
                env[outs[0]] = result
            else:
                for s, value in zip(outs, _as_arrays(result, len(outs))):
                    env[s] = value
            for s in step.free:
                env[s] = None

    def _run_segment(self, env, start, end, check, before, after):
        """Run steps ``start:end`` with hooks; with ``check``, run each op's inference
        first and stop after an op whose output shape depends on data. Returns the index
        where the run stopped."""
        const_slots = self._const_slots
        for i in range(start, end):
            step = self.steps[i]
            args = [env[s] for s in step.inputs]
            if check:
                # Only constants' values take part in inference: the result must hold
                # for any input values with these shapes.
                metas = [TensorMeta(a.shape, a.dtype, a if s in const_slots else None)
                         for s, a in zip(step.inputs, args)]
                try:
                    inferred = step.op.infer(metas, **step.attrs)
                except OpError as exc:
                    raise OpError(_describe(step.op.name, metas, str(exc))
                                  + _where(step)) from None
            if before is not None and not before(step, args):
                raise RunStopped(step)
            t0 = time.perf_counter()
            try:
                result = _as_arrays(step.compute(args, **step.attrs), len(step.outputs))
            except OpError as exc:
                metas = [TensorMeta(a.shape, a.dtype) for a in args]
                raise OpError(_describe(step.op.name, metas, str(exc)) + _where(step)) \
                    from None
            seconds = time.perf_counter() - t0
            for s, value in zip(step.outputs, result):
                env[s] = value
            if after is not None and not after(step, args, result, seconds):
                raise RunStopped(step)
            for s in step.free:
                env[s] = None
            if check and _check_outputs(step, inferred, result):
                return i + 1
        return end

    # -- static inference ----------------------------------------------------------------
    def infer(self, metas):
        """Output metas for inputs described by ``metas`` (TensorMeta per input).

        Shapes come out ``None`` where they depend on data or on unknown input shapes.
        Used by control-flow ops to infer through their subgraphs without running them.
        """
        env = self.infer_slots(metas)
        return [env[s] for s in self.output_slots]

    def infer_slots(self, metas):
        """Like :meth:`infer`, but the metas of every slot (for memory and FLOP counts)."""
        env = [None] * self.n_slots
        for s, value in self.constants.items():
            env[s] = TensorMeta(value.shape, value.dtype, value)
        for s, expr in self.trainables.items():
            env[s] = TensorMeta(expr.values[0].shape, expr.values[0].dtype)
        for s, m in zip(self.input_slots, metas):
            env[s] = m
        for step in self.steps:
            ins = [env[s] for s in step.inputs]
            if any(m.shape is None for m in ins):
                # Whether the op keeps dtypes is not known here: report both unknown.
                out = [(None, None)] * len(step.outputs)
            else:
                try:
                    out = step.op.infer(ins, **step.attrs)
                except OpError as exc:
                    raise OpError(_describe(step.op.name, ins, str(exc)) + _where(step)) \
                        from None
            for s, (shape, dtype) in zip(step.outputs, out):
                env[s] = TensorMeta(tuple(int(d) for d in shape) if shape is not None
                                    else None, np.dtype(dtype) if dtype is not None else None)
        return env


def _activation_clamp(step):
    """``(low, high)`` when ``step`` is an activation a producer can apply as a clamp."""
    name, attrs = step.op.name, step.attrs
    if name == "relu" and attrs.get("slope", 0.0) == 0.0:
        return (0.0, float("inf"))
    if name == "relu6":
        return (float(attrs["min_value"]), float(attrs["max_value"]))
    return None


def _takes_clamp(step):
    """The op computes a fused clamp itself (conv2d's ``clamp`` attribute), not set yet.

    An op's inference takes the same attributes as its compute (the op table's contract),
    and names them even where compute is wrapped to take ``**attrs``.
    """
    if step.attrs.get("clamp") is not None or len(step.outputs) != 1:
        return False
    try:
        return "clamp" in inspect.signature(step.op.infer).parameters
    except (TypeError, ValueError):
        return False


def _relu_grad_reads_output(steps):
    """Let ``relu_grad(x, g)`` read relu's output instead of its input.

    The gradient only asks whether ``x > 0``, and for a slope >= 0 ``relu(x) > 0`` holds
    exactly then (NaN and -0.0 included). Reading the output leaves the relu's input with
    one reader, so a training step's conv can take the relu as its fused clamp (one pass
    and one conv-sized array less) and the input can be released right after the relu.
    """
    produced = {}  # (input slot, slope) -> (step index, output slot)
    for i, step in enumerate(steps):
        slope = step.attrs.get("slope", 0.0)
        if step.op.name == "relu" and len(step.inputs) == 1 and slope >= 0.0:
            produced.setdefault((step.inputs[0], float(slope)), (i, step.outputs[0]))
    if not produced:
        return steps
    for i, step in enumerate(steps):
        if step.op.name != "relu_grad" or len(step.inputs) != 2:
            continue
        found = produced.get((step.inputs[0], float(step.attrs.get("slope", 0.0))))
        if found is not None and found[0] < i:
            step.inputs = (found[1], step.inputs[1])
    return steps


def _fuse_activations(steps, keep):
    """Fold a relu/relu6 into the op before it when that op can clamp its own output
    (one pass over memory less, one intermediate less). Only when the producer's output
    feeds nothing else and is not a plan output."""
    readers = {}
    for step in steps:
        for s in step.inputs:
            readers[s] = readers.get(s, 0) + 1
    producer = {s: step for step in steps for s in step.outputs}
    fused = set()
    for step in steps:
        clamp = _activation_clamp(step)
        if clamp is None or len(step.inputs) != 1:
            continue
        src = step.inputs[0]
        prev = producer.get(src)
        if (prev is None or id(prev) in fused or src in keep or readers.get(src) != 1
                or not _takes_clamp(prev)):
            continue
        prev.attrs = dict(prev.attrs, clamp=clamp)
        prev.outputs = step.outputs
        prev.name = step.name or prev.name
        fused.add(id(step))
        for s in step.outputs:
            producer[s] = prev
    return [step for step in steps if id(step) not in fused]


def _check_outputs(step, inferred, result):
    """Compare computed outputs with inference; True if a shape depended on data."""
    data_dependent = False
    for (shape, dtype), value in zip(inferred, result):
        if shape is None:
            data_dependent = True
            if dtype is not None and np.dtype(dtype) != value.dtype:
                raise RuntimeError(f"mnn internal error: op {step.op.name} computed "
                                   f"{value.dtype} but inferred {np.dtype(dtype)}")
        elif tuple(shape) != value.shape or np.dtype(dtype) != value.dtype:
            raise RuntimeError(f"mnn internal error: op {step.op.name} computed "
                               f"{value.shape} {value.dtype} but inferred {tuple(shape)} "
                               f"{np.dtype(dtype)}")
    return data_dependent


def _where(step):
    return f" [op {step.name}]" if step.name else ""


