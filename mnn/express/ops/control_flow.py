"""Control flow: the ``if`` and ``while`` ops, whose attributes hold subgraphs.

The Subgraph
------------
A :class:`Subgraph` is a self-contained express graph: a list of input placeholder Vars,
a list of output Vars computed from them (constants and trainables may appear inside), and
a unique ``name``. It is frozen when made: it is compiled into a
:class:`mnn.runtime.plan.Plan` once, and every run of the op goes through that plan (the
same engine as loaded models), so the graph's placeholders are never written and one
subgraph can run in several threads at once. A subgraph may not read a placeholder that
is not one of its inputs: values from the enclosing graph are passed in as op inputs
(ONNX's "outer scope" captures become explicit inputs). Attributes must be hashable; a
Subgraph hashes and compares by identity.

The ops
-------
``if`` — inputs ``[cond, x_1 … x_n]``, attributes ``then_graph``, ``else_graph``. Both
subgraphs take the ``n`` values ``x_i`` as their inputs, in order, and have the same number
of outputs; the op's outputs are the chosen branch's outputs. ``cond`` must have one
element; the then-branch runs when it is ``> 0`` (``True`` for bool), as in MNN.
Output shapes are known statically when both branches agree (or ``cond`` is a constant).

``while`` — two forms, as in MNN's ``While`` op (ONNX ``Loop`` maps to the second):

* TensorFlow style (``cond_graph`` is a Subgraph): inputs are the loop variables
  ``[v_1 … v_n]``. ``cond_graph`` maps them to one single-element output; while it is
  ``> 0``, ``body_graph`` maps them to their next values (same count and dtypes). The op's
  outputs are the final values.
* ONNX-Loop style (``cond_graph`` is ``None``): inputs ``[max_trip_count, cond, v_1 … v_n]``
  (two single-element tensors, then the loop-carried values). ``body_graph`` takes
  ``[iteration, cond, v_1 … v_n]`` (iteration counter from 0, in the dtype of the body's
  first input) and returns ``[cond', v'_1 … v'_n, s_1 … s_k]``. The loop runs while
  ``iteration < max_trip_count`` and ``cond``; the op's outputs are ``[v_1 … v_n]`` after the
  last iteration followed by each scan output ``s_j`` stacked over iterations (shape
  ``[iterations, *s_j.shape]``). Zero iterations are allowed (trip count 0 or a false
  initial ``cond``): the loop values pass through and the scans are empty, shaped from the
  body's inferred per-iteration shape. Optional ONNX inputs are made explicit by whoever
  builds the op (a missing trip count is a large int constant, a missing cond ``True``).

Loop-carried values may change shape between iterations; their static shape is then
unknown (``None``) until the op runs. Gradients through control flow are not provided.

For the .mnn file (MNN's ``Net.subgraphs``, ``IfParam``, ``WhileParam``), the format code
maps each Subgraph to a ``SubGraphProto`` named ``Subgraph.name`` and the positional
convention above to MNN's name aliases.
"""
import itertools

import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, TensorMeta, register
from ..var import Var, placeholder, to_var

__all__ = ["Subgraph", "if_", "loop", "while_"]

_names = itertools.count()


class Subgraph:
    """A self-contained graph used as an attribute of ``if``/``while`` ops.

    Parameters
    ----------
    inputs : sequence of Var
        Placeholders, in the order the op feeds them.
    outputs : sequence of Var
        Vars computed from ``inputs`` (and constants/trainables).
    name : str, optional
        Unique name (the .mnn file refers to subgraphs by name); generated if omitted.

    Raises
    ------
    OpError
        If an input is not a placeholder, or an output depends on a placeholder that is not
        among ``inputs``.
    """

    __slots__ = ("__weakref__", "inputs", "name", "outputs", "plan")

    def __init__(self, inputs, outputs, name=None):
        from ...runtime.plan import Plan

        self.inputs = [_need_var(v, "input") for v in inputs]
        self.outputs = [to_var(v) for v in outputs]
        if not self.outputs:
            raise OpError("mnn: a Subgraph needs at least one output")
        self.name = str(name) if name is not None else f"subgraph_{next(_names)}"
        self.plan = Plan(self.inputs, self.outputs)

    @classmethod
    def trace(cls, fn, input_specs, name=None):
        """Build a Subgraph by calling ``fn`` on new placeholders.

        Parameters
        ----------
        fn : callable
            ``fn(*vars)`` returning a Var or a sequence of Vars.
        input_specs : sequence of (shape, dtype)
            One placeholder per entry (``-1`` marks a dimension of any size).
        name : str, optional
        """
        inputs = [placeholder(shape, dtype=dtype) for shape, dtype in input_specs]
        outs = fn(*inputs)
        if isinstance(outs, Var):
            outs = [outs]
        return cls(inputs, list(outs), name=name)

    @property
    def input_dtypes(self):
        """numpy dtype of each input placeholder."""
        return [v.expr.metas[0].dtype for v in self.inputs]

    def infer(self, metas):
        """Output :class:`TensorMeta` for inputs described by ``metas`` (shapes may be None)."""
        return self.plan.infer(metas)

    def run(self, arrays):
        """Compute the outputs from one ndarray per input (dtypes must match)."""
        return self.plan.run(arrays)

    def __repr__(self):
        return (f"Subgraph({self.name!r}, {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs)")


def _need_var(v, what):
    if not isinstance(v, Var):
        raise OpError(f"mnn: Subgraph {what}s must be placeholder Vars, got "
                      f"{type(v).__name__}")
    return v


def _check_feed(graph, metas, what):
    """The values fed to ``graph`` match its inputs in count and dtype."""
    if len(metas) != len(graph.inputs):
        raise OpError(f"{what} {graph.name} takes {len(graph.inputs)} inputs, given "
                      f"{len(metas)}")
    for i, (m, want) in enumerate(zip(metas, graph.input_dtypes)):
        if m.dtype is not None and m.dtype != want:
            raise OpError(f"{what} {graph.name} input {i} must be {want}, given {m.dtype}")


def _check_single(meta, what):
    if meta.shape is not None and int(np.prod(meta.shape, dtype=np.int64)) != 1:
        raise OpError(f"{what} must have one element, has shape {list(meta.shape)}")


def _truth(array, what):
    """MNN's rule: a condition holds when its single element is > 0."""
    if array.size != 1:
        raise OpError(f"{what} must have one element, has shape {list(array.shape)}")
    return bool(array.reshape(-1)[0] > 0)


def _merge(a, b, what):
    """One static meta for two possible values (branches, or loop iterations)."""
    if a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
        raise OpError(f"{what}: dtypes differ ({a.dtype} and {b.dtype})")
    dtype = a.dtype if a.dtype is not None else b.dtype
    shape = a.shape if (a.shape is not None and a.shape == b.shape) else None
    return shape, dtype


# -- if ---------------------------------------------------------------------------------

def _if_infer(metas, then_graph, else_graph):
    cond, xs = metas[0], metas[1:]
    _check_single(cond, "if: the condition")
    _check_feed(then_graph, xs, "if: then-branch")
    _check_feed(else_graph, xs, "if: else-branch")
    if len(then_graph.outputs) != len(else_graph.outputs):
        raise OpError(f"if: then-branch has {len(then_graph.outputs)} outputs, else-branch "
                      f"{len(else_graph.outputs)}")
    if cond.value is not None:
        taken = then_graph if _truth(cond.value, "if: the condition") else else_graph
        return [(m.shape, m.dtype) for m in taken.infer(xs)]
    then_metas, else_metas = then_graph.infer(xs), else_graph.infer(xs)
    return [_merge(t, e, f"if: output {i} of the two branches")
            for i, (t, e) in enumerate(zip(then_metas, else_metas))]


def _if_compute(arrays, then_graph, else_graph):
    taken = then_graph if _truth(arrays[0], "if: the condition") else else_graph
    return taken.run(arrays[1:])


def _if_outputs(attrs):
    return len(attrs["then_graph"].outputs)


register(OpDef("if", _if_infer, _if_compute, None, n_outputs=_if_outputs))


def if_(cond, then_graph, else_graph, inputs=()):
    """Run ``then_graph`` or ``else_graph`` on ``inputs`` depending on ``cond``.

    Parameters
    ----------
    cond : Var or scalar
        One element; the then-branch runs when it is > 0 (True).
    then_graph, else_graph : Subgraph
        Both take ``inputs`` (same count and dtypes) and have the same number of outputs.
    inputs : sequence of Var or array_like

    Returns
    -------
    list of Var
        The chosen branch's outputs.
    """
    for g in (then_graph, else_graph):
        if not isinstance(g, Subgraph):
            raise OpError(f"if: branches must be Subgraphs, got {type(g).__name__}")
    args = [to_var(cond)] + [to_var(x) for x in inputs]
    return apply("if", args, then_graph=then_graph, else_graph=else_graph)


# -- while ------------------------------------------------------------------------------

def _carried(xs, ys, what):
    """Static metas of loop-carried values: kept where an iteration keeps them."""
    out = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        shape, dtype = _merge(x, y, f"{what}: loop value {i} before and after an iteration")
        out.append((shape, dtype))
    return out


def _onnx_body_feed(body_graph, vs):
    dts = body_graph.input_dtypes
    return [TensorMeta((), dts[0]), TensorMeta((), dts[1])] + list(vs)


def _while_infer(metas, cond_graph, body_graph):
    if cond_graph is not None:
        _check_feed(cond_graph, metas, "while: cond graph")
        _check_feed(body_graph, metas, "while: body graph")
        if len(cond_graph.outputs) != 1:
            raise OpError(f"while: cond graph {cond_graph.name} must have one output, has "
                          f"{len(cond_graph.outputs)}")
        if len(body_graph.outputs) != len(metas):
            raise OpError(f"while: body graph {body_graph.name} must return the "
                          f"{len(metas)} loop values, returns {len(body_graph.outputs)}")
        _check_single(cond_graph.infer(metas)[0], "while: the cond graph's output")
        return _carried(metas, body_graph.infer(metas), "while")
    if len(metas) < 2:
        raise OpError("while (loop form) needs inputs [max_trip_count, cond, values...]")
    trip, cond, vs = metas[0], metas[1], metas[2:]
    _check_single(trip, "loop: the trip count")
    _check_single(cond, "loop: the condition")
    if trip.dtype is not None and trip.dtype.kind not in "iu":
        raise OpError(f"loop: the trip count must be an integer, got {trip.dtype}")
    n = len(vs)
    if len(body_graph.inputs) != n + 2:
        raise OpError(f"loop: body graph {body_graph.name} must take [iteration, cond] and "
                      f"the {n} loop values ({n + 2} inputs), takes {len(body_graph.inputs)}")
    k = len(body_graph.outputs) - 1 - n
    if k < 0:
        raise OpError(f"loop: body graph {body_graph.name} must return [cond] and the {n} "
                      f"loop values, returns {len(body_graph.outputs)} outputs")
    feed = _onnx_body_feed(body_graph, vs)
    _check_feed(body_graph, feed, "loop: body graph")
    outs = body_graph.infer(feed)
    _check_single(outs[0], "loop: the body's cond output")
    carried = _carried(vs, outs[1:1 + n], "loop")
    scans = [(None, m.dtype) for m in outs[1 + n:]]
    return carried + scans


def _run_tf_while(vs, cond_graph, body_graph):
    while _truth(cond_graph.run(vs)[0], f"while: cond graph {cond_graph.name}'s output"):
        vs = _checked_update(vs, body_graph.run(vs), "while")
    return vs


def _checked_update(old, new, what):
    for i, (a, b) in enumerate(zip(old, new)):
        if a.dtype != b.dtype:
            raise OpError(f"{what}: the body turned loop value {i} from {a.dtype} into "
                          f"{b.dtype}")
    return list(new)


def _run_onnx_loop(arrays, body_graph):
    trip = arrays[0]
    if trip.size != 1:
        raise OpError(f"loop: the trip count must have one element, has shape "
                      f"{list(trip.shape)}")
    limit = int(trip.reshape(-1)[0])
    cond = _truth(arrays[1], "loop: the condition")
    vs = list(arrays[2:])
    n = len(vs)
    it_dtype, cond_dtype = body_graph.input_dtypes[:2]
    scans = None
    step = 0
    while step < limit and cond:
        outs = body_graph.run([np.array(step, dtype=it_dtype),
                               np.array(cond, dtype=cond_dtype)] + vs)
        cond = _truth(outs[0], f"loop: body graph {body_graph.name}'s cond output")
        vs = _checked_update(vs, outs[1:1 + n], "loop")
        if scans is None:
            scans = [[] for _ in outs[1 + n:]]
        for j, s in enumerate(outs[1 + n:]):
            if scans[j] and s.shape != scans[j][0].shape:
                raise OpError(f"loop: scan output {j} changes shape between iterations "
                              f"({list(scans[j][0].shape)} then {list(s.shape)})")
            scans[j].append(s)
        step += 1
    if scans is None:
        return vs + _empty_scans(arrays, body_graph, n)
    return vs + [np.stack(s) for s in scans]


def _empty_scans(arrays, body_graph, n):
    """Scan outputs of a loop that ran zero times: shape [0, *per-iteration shape]."""
    feed = _onnx_body_feed(body_graph, [TensorMeta(a.shape, a.dtype) for a in arrays[2:]])
    outs = body_graph.infer(feed)[1 + n:]
    empty = []
    for j, m in enumerate(outs):
        if m.shape is None or m.dtype is None:
            raise OpError(f"loop: ran zero times and the shape of scan output {j} cannot be "
                          f"inferred from body graph {body_graph.name}")
        empty.append(np.zeros((0,) + tuple(m.shape), dtype=m.dtype))
    return empty


def _while_compute(arrays, cond_graph, body_graph):
    if cond_graph is not None:
        return _run_tf_while(list(arrays), cond_graph, body_graph)
    return _run_onnx_loop(arrays, body_graph)


def _while_outputs(attrs):
    body = attrs["body_graph"]
    if attrs["cond_graph"] is not None:
        return len(body.outputs)
    # ONNX-Loop form: body returns [cond, values..., scans...]; the op drops cond.
    return len(body.outputs) - 1


register(OpDef("while", _while_infer, _while_compute, None, n_outputs=_while_outputs))


def while_(cond_graph, body_graph, inputs):
    """TensorFlow-style loop: ``while cond_graph(v): v = body_graph(v)``.

    Parameters
    ----------
    cond_graph : Subgraph
        Takes the loop values, returns one single-element Var (> 0 continues).
    body_graph : Subgraph
        Takes the loop values, returns their next values (same count and dtypes).
    inputs : sequence of Var or array_like
        Initial loop values.

    Returns
    -------
    list of Var
        The loop values after the last iteration.
    """
    for g in (cond_graph, body_graph):
        if not isinstance(g, Subgraph):
            raise OpError(f"while: graphs must be Subgraphs, got {type(g).__name__}")
    args = [to_var(x) for x in inputs]
    return apply("while", args, cond_graph=cond_graph, body_graph=body_graph)


def loop(max_trip_count, cond, body_graph, inputs=()):
    """ONNX-``Loop``-style loop with scan outputs (MNN's ``While`` without a cond graph).

    Parameters
    ----------
    max_trip_count : Var or int
        Integer, one element: at most this many iterations (0 runs none).
    cond : Var or bool
        One element: the loop starts only if it is true.
    body_graph : Subgraph
        Takes ``[iteration, cond, v_1 … v_n]`` and returns ``[cond', v'_1 … v'_n,
        s_1 … s_k]``.
    inputs : sequence of Var or array_like
        Initial loop-carried values ``v_1 … v_n``.

    Returns
    -------
    list of Var
        Final ``v_1 … v_n``, then each scan output stacked over the iterations.
    """
    if not isinstance(body_graph, Subgraph):
        raise OpError(f"loop: body_graph must be a Subgraph, got {type(body_graph).__name__}")
    trip = (max_trip_count if isinstance(max_trip_count, Var)
            else to_var(np.asarray(max_trip_count, dtype=np.int64)))
    c = cond if isinstance(cond, Var) else to_var(np.asarray(bool(cond)))
    args = [trip, c] + [to_var(x) for x in inputs]
    return apply("while", args, cond_graph=None, body_graph=body_graph)
