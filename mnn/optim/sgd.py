"""SGD with momentum, MNN's formulation."""
import numpy as np

from .._cython import optim_update as _kernels
from ..express.runtime import get_thread_number
from .optimizer import L2, Optimizer, _NonFiniteGradient

__all__ = ["SGD"]

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements one thread: waking another costs more than it saves.
_PARALLEL_MIN = 1 << 16


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (pymnn's ``MNN.optim.SGD``).

    Per step, with ``g`` the regularised gradient::

        v = learning_rate * g + momentum * v      (v starts at 0)
        p = p - v

    With a constant learning rate this is torch's SGD (``buf = momentum * buf + g``,
    ``p -= lr * buf``); MNN keeps the learning rate inside the history, so changing the
    rate affects only new gradients.

    Parameters
    ----------
    module : Module or list of Var
    learning_rate : float, default 1e-3
    momentum : float, default 0.9
    weight_decay : float, default 0.0
    regularization_method : Regularization_Method, default L2
    """

    def __init__(self, module, learning_rate=1e-3, momentum=0.9, weight_decay=0.0,
                 regularization_method=L2):
        super().__init__(module, learning_rate, weight_decay, regularization_method)
        self.momentum = momentum

    @property
    def momentum(self):
        """Weight of the previous update."""
        return self._momentum

    @momentum.setter
    def momentum(self, value):
        self._momentum = float(value)

    def _update_all(self, values, grads, states):
        if self._weight_decay != 0.0 and self._reg != L2:
            return super()._update_all(values, grads, states)  # L1 needs sign(p)
        dtype = values[0].dtype
        if dtype not in _KERNEL_DTYPES or any(v.dtype != dtype for v in values):
            return super()._update_all(values, grads, states)
        # Every parameter in one kernel call, which also checks the gradients finite
        # before writing anything.
        flats, gs, vs, outs, out_flats, history = [], [], [], [], [], []
        total = 0
        keep = self._momentum != 0.0
        for value, g, state in zip(values, grads, states):
            # ravel: a view of a C-contiguous array, else a contiguous copy (one check
            # less per array than reshape and a flags test).
            flat = value.ravel()
            n = flat.size
            if g.dtype != dtype:
                g = g.astype(dtype)
            g = g.ravel()
            if g.size != n:
                raise RuntimeError(f"mnn internal error: gradient of {g.size} elements "
                                   f"for a parameter of {n}")
            v = state.get("v")
            if v is None or v.dtype != dtype or v.size != n:
                v = np.empty(n, dtype)
                history.append(False)
            else:
                history.append(keep)
            out = np.empty(n, dtype)
            flats.append(flat)
            gs.append(g)
            vs.append(v.ravel())
            out_flats.append(out)
            outs.append(out.reshape(value.shape))
            total += n
        threads = 1 if total < _PARALLEL_MIN else get_thread_number()
        bad = _kernels.sgd_momentum_many(flats, gs, vs, out_flats, history, self._lr,
                                         self._momentum, self._weight_decay, threads)
        if bad >= 0:
            raise _NonFiniteGradient(bad)
        for value, v, state in zip(values, vs, states):
            state["v"] = v.reshape(value.shape)
        return outs

    def _update(self, value, grad, state):
        # In place where the arrays are ours (the history; the new value is a fresh
        # array, since the old one is read-only and readers may hold it): four passes
        # over memory and no temporaries.
        v = state.get("v")
        new = np.empty_like(value)
        if v is None or self._momentum == 0.0:
            v = np.multiply(grad, self._lr, dtype=value.dtype)
        else:
            np.multiply(grad, self._lr, out=new)
            v *= self._momentum
            v += new
        state["v"] = v
        np.subtract(value, v, out=new)
        return new
