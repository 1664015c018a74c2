"""The optimizer base: gradients of a loss, regularisation, and the parameter update.

``step(loss)`` differentiates ``loss`` with respect to the module's trainable
parameters, adds the regularisation term to each gradient (MNN: ``L1`` adds
``weight_decay * sign(p)``, ``L2`` adds ``weight_decay * p``, ``L1L2`` both), lets the
subclass turn gradients into new values, and writes them into the parameters. Everything
computed from the parameters is recomputed on its next read.

The gradients come from a compiled plan kept per loss-graph structure
(:mod:`mnn.optim.compiled_step`), so a loop that rebuilds the same graph every step
differentiates it once. State updates a module recorded in its forward (batch norm's
running statistics) are applied by every step on a loss computed from that forward,
also when one graph is stepped on batch after batch. Other parameters that are computed
rather than stored are fixed to their values, as MNN does before updating.
"""
import enum
import weakref

import numpy as np

from .. import express as F
from ..express.errors import MnnError
from ..express.graph import _stale_order, evaluate_many, topological_order
from .compiled_step import StepCache

__all__ = ["Optimizer", "Grad", "Regularization_Method", "L1", "L2", "L1L2"]


class Regularization_Method(enum.IntEnum):  # noqa: N801 - pymnn's name
    """How ``weight_decay`` enters the gradient (MNN's ``RegularizationMethod``)."""

    L1 = 0
    L2 = 1
    L1L2 = 2


L1, L2, L1L2 = Regularization_Method.L1, Regularization_Method.L2, Regularization_Method.L1L2


def _module_parameters(module):
    if module is None:
        return []
    # Looked up on the type first: on the instance, hasattr would compute the property
    # (a walk of every submodule) only to throw the list away.
    has = hasattr(type(module), "parameters") or "parameters" in getattr(module, "__dict__", ())
    if has and not isinstance(module, (list, tuple)):
        return list(module.parameters)
    params = list(module)
    for i, p in enumerate(params):
        if not F.is_var(p):
            raise MnnError(f"mnn: optimizer: parameter {i} is {type(p).__name__}, not a Var")
    return params


def _first_non_finite(grads):
    """Index of the first gradient holding a NaN or inf, or None.

    A finite sum of squares (one BLAS dot, no temporary array) means every element is
    finite; a NaN or inf there can also be overflow, so then look at the elements.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        for i, g in enumerate(grads):
            flat = g.reshape(-1)
            if not np.isfinite(np.dot(flat, flat)) and not np.all(np.isfinite(g)):
                return i
    return None


class _NonFiniteGradient(Exception):
    """Raised by ``_update_all`` before any update: gradient ``index`` is not finite."""

    def __init__(self, index):
        super().__init__(index)
        self.index = index


def _trainable(params):
    seen, out = set(), []
    for p in params:
        if p.expr.op is None and p.expr.kind == "trainable" and id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


class Optimizer:
    """Base of every optimizer (pymnn's ``MNN.optim.Optimizer``).

    Parameters
    ----------
    module : Module, list of Var or None
        Whose trainable parameters to update (``None``: only :meth:`grad` is usable).
    learning_rate : float
    weight_decay : float
    regularization_method : Regularization_Method
    """

    def __init__(self, module, learning_rate, weight_decay=0.0,
                 regularization_method=L2):
        self._module = module
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.regularization_method = regularization_method
        self._step = 0
        self._state = {}  # id(parameter Var) -> (Var, dict of numpy buffers)
        # (weak reference to the last loss's Expr, its key, its gradients or None):
        # see _gradients.
        self._grad_cache = None
        self._compiled = StepCache()

    # -- hyper-parameters ------------------------------------------------------------
    @property
    def learning_rate(self):
        """The learning rate the next step uses (settable, e.g. by a schedule)."""
        return self._lr

    @learning_rate.setter
    def learning_rate(self, value):
        value = float(value)
        if not np.isfinite(value) or value < 0:
            raise MnnError(f"mnn: learning_rate must be finite and >= 0, got {value}")
        self._lr = value

    @property
    def weight_decay(self):
        """The regularisation strength."""
        return self._weight_decay

    @weight_decay.setter
    def weight_decay(self, value):
        value = float(value)
        if value < 0:
            raise MnnError(f"mnn: weight_decay must be >= 0, got {value}")
        self._weight_decay = value

    @property
    def regularization_method(self):
        """L1, L2 (default) or L1L2."""
        return self._reg

    @regularization_method.setter
    def regularization_method(self, value):
        try:
            self._reg = Regularization_Method(value)
        except ValueError:
            raise MnnError(f"mnn: regularization_method must be L1, L2 or L1L2, "
                           f"got {value!r}") from None

    @property
    def current_step(self):
        """How many steps have run."""
        return self._step

    # -- gradients -------------------------------------------------------------------
    def trainable(self):
        """The trainable parameter Vars of the module, in ``parameters`` order."""
        return _trainable(_module_parameters(self._module))

    def grad(self, outputs, output_diffs, parameters):
        """Gradients of ``outputs`` (weighted by ``output_diffs``) w.r.t. ``parameters``.

        Returns
        -------
        tuple of (list of Var, list of Var)
            ``(parameters, gradients)``, as pymnn's ``Optimizer.grad``.
        """
        outputs, parameters = list(outputs), list(parameters)
        output_diffs = list(output_diffs)
        if len(output_diffs) != len(outputs):
            raise MnnError(f"mnn: grad: {len(outputs)} outputs but {len(output_diffs)} "
                           "output_diffs")
        return parameters, F.grad(outputs, parameters, output_diffs)

    def _regularize(self, value, grad):
        wd = self._weight_decay
        if wd == 0.0:
            return grad
        if self._reg == L1:
            return grad + wd * np.sign(value)
        if self._reg == L2:
            return grad + wd * value
        return grad + wd * np.sign(value) + wd * value

    # -- the step --------------------------------------------------------------------
    def step(self, loss):
        """Update every trainable parameter from the gradient of ``loss``.

        The graph stays lazy: reading ``loss`` afterwards computes it with the new
        weights, and a loss built once over placeholders can be stepped on batch after
        batch (write the placeholders, call ``step`` again).

        Parameters
        ----------
        loss : Var
            A scalar (one element).

        Returns
        -------
        bool
            True when parameters were updated (False: the module has none).
        """
        if self._module is None:
            raise MnnError("mnn: this optimizer has no module (optim.Grad()); it can only "
                           "compute grad()")
        loss = F.to_var(loss)
        if loss.size != 1:
            raise MnnError(f"mnn: step needs a scalar loss, got shape {loss.shape}")
        if loss.dtype.kind != "f":
            raise MnnError(f"mnn: step needs a float loss, got {loss.dtype}")
        all_params = _module_parameters(self._module)
        params = _trainable(all_params)
        if not params:
            return False
        grads, updates, stats = self._evaluate(loss, params, all_params)
        values = [p.expr.values[0] for p in params]
        states = []
        for p in params:
            entry = self._state.get(id(p))
            if entry is None or entry[0] is not p:
                entry = (p, {})
                self._state[id(p)] = entry
            states.append(entry[1])
        # The new values come first: a non-finite gradient raises before anything (the
        # parameters, their histories, the module state, the step count) has changed.
        self._step += 1
        try:
            new_values = self._update_all(values, grads, states)
        except _NonFiniteGradient as exc:
            self._step -= 1
            raise MnnError(f"mnn: step: the gradient of parameter {params[exc.index].name} "
                           "is not finite (nan or inf); lower the learning rate or check the "
                           "loss") from None
        if updates:
            before = {id(r.expr): r.expr.values[0] for u in updates for r in u.roots}
            for i, update in enumerate(updates):
                update.apply(stats[2 * i:2 * i + 2], before)
            # Applying state updates re-binds batch norm's running statistics: read the
            # parameter list again.
            all_params = _module_parameters(self._module)
        # Other computed parameters are fixed to their values, as MNN does before
        # updating.
        for p in all_params:
            if p.expr.op is not None:
                p.fix_as_const()
        for p, value, new in zip(params, values, new_values):
            if new.dtype != value.dtype:
                new = new.astype(value.dtype)
            p.expr.set_source_value(new)
        return True

    def _update_all(self, values, grads, states):
        """New values of every parameter (each regularised and updated in turn);
        optimizers with a fused kernel override it.

        Raises
        ------
        _NonFiniteGradient
            A gradient holds a NaN or an infinity; then no state has changed.
        """
        bad = _first_non_finite(grads)
        if bad is not None:
            raise _NonFiniteGradient(bad)
        out = []
        for value, g, state in zip(values, grads, states):
            g = self._regularize(value, g.astype(value.dtype, copy=False))
            out.append(self._update(value, g, state))
        return out

    def _evaluate(self, loss, params, all_params):
        """The gradients of ``loss``, the module state updates that belong to it, and
        their new values (all computed at the current weights)."""
        order = topological_order([loss.expr])
        n_loss = len(order)  # the loss's own Exprs lead ``order``
        updates = []
        pending = self._module._state_updates() if hasattr(self._module,
                                                            "_state_updates") else ()
        if pending:  # batch norm's running statistics, say; most modules have none
            ids = {e.id for e in order}
            updates = [u for u in pending if u.anchor_id in ids]
        extra = [v for u in updates for v in u.outputs()]
        if extra:
            order = order + topological_order([v.expr for v in extra], seen=ids)
        # A loss already read (and still fresh) has its forward values: the plan takes
        # them instead of computing the forward pass again.
        fresh = loss.expr.values is not None and not _stale_order([loss.expr])
        identity = {p.expr.id for p in all_params}
        identity.update(r.expr.id for u in updates for r in u.roots)
        values = self._compiled.run(order, loss, params, extra, identity,
                                    computed=n_loss if fresh else 0)
        if values is None:
            # One walk of the graph for every gradient (they share the forward pass).
            values = evaluate_many(self._gradients(loss, params) + extra)
        n = len(params)
        return values[:n], updates, values[n:]

    def _gradients(self, loss, params):
        # The gradient graph is kept for a loss stepped on again (one over placeholders,
        # fed a new batch each time); it is lazy, so it recomputes from the new batch and
        # weights. A loss seen once is only remembered weakly: keeping its gradient graph
        # would keep the previous batch's whole graph alive for nothing.
        key = (loss.index, tuple(id(p) for p in params))
        cache = self._grad_cache
        if cache is not None and cache[0]() is loss.expr and cache[1] == key:
            if cache[2] is None:
                self._grad_cache = (cache[0], key, F.grad([loss], params))
            return self._grad_cache[2]
        grads = F.grad([loss], params)
        self._grad_cache = (weakref.ref(loss.expr), key, None)
        return grads

    def _update(self, value, grad, state):
        """New value of one parameter; ``state`` is its dict of buffers."""
        raise NotImplementedError(f"mnn: {type(self).__name__} does not define _update")


class Grad(Optimizer):
    """An optimizer without parameters, for :meth:`Optimizer.grad` only
    (pymnn's ``MNN.optim.Grad()``)."""

    def __init__(self):
        super().__init__(None, 1e-3)
