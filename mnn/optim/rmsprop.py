"""RMSprop (torch's formula)."""
import numpy as np

from ..express.errors import MnnError
from .optimizer import L2, Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop::

        s = alpha * s + (1 - alpha) * g^2
        u = g / (sqrt(s) + eps)
        b = momentum * b + u      (only when momentum > 0)
        p = p - learning_rate * (b or u)

    ``weight_decay`` enters the gradient by ``regularization_method`` (L2: torch's).

    Parameters
    ----------
    module : Module or list of Var
    learning_rate : float, default 1e-2
    alpha : float, default 0.99
    eps : float, default 1e-8
    weight_decay : float, default 0.0
    momentum : float, default 0.0
    regularization_method : Regularization_Method, default L2
    """

    def __init__(self, module, learning_rate=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                 momentum=0.0, regularization_method=L2):
        super().__init__(module, learning_rate, weight_decay, regularization_method)
        alpha = float(alpha)
        if not 0.0 <= alpha < 1.0:
            raise MnnError(f"mnn: RMSprop alpha must be in [0, 1), got {alpha}")
        self.alpha = alpha
        self.eps = float(eps)
        self.momentum = float(momentum)

    def _update(self, value, grad, state):
        s = state.get("s")
        g2 = grad * grad
        s = (1.0 - self.alpha) * g2 if s is None else self.alpha * s + (1.0 - self.alpha) * g2
        state["s"] = s
        u = grad / (np.sqrt(s) + self.eps)
        if self.momentum > 0.0:
            b = state.get("b")
            u = u if b is None else self.momentum * b + u
            state["b"] = u
        return value - self._lr * u
