"""SGD with momentum, MNN's formulation."""
import numpy as np

from .optimizer import L2, Optimizer

__all__ = ["SGD"]


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
