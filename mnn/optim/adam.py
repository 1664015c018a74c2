"""ADAM (MNN's formulation) and AdamW (torch's decoupled weight decay)."""
import numpy as np

from ..express.errors import MnnError
from .optimizer import L2, Optimizer

__all__ = ["ADAM", "AdamW"]


def _beta(value, what):
    value = float(value)
    if not 0.0 <= value < 1.0:
        raise MnnError(f"mnn: {what} must be in [0, 1), got {value}")
    return value


class ADAM(Optimizer):
    """Adam (pymnn's ``MNN.optim.ADAM``), with MNN's update at step ``t``::

        m = momentum * m + (1 - momentum) * g
        v = momentum2 * v + (1 - momentum2) * g^2
        p = p - learning_rate * sqrt(1 - momentum2^t) / (1 - momentum^t)
                              * m / (sqrt(v) + eps)

    This is torch's Adam with its ``eps`` scaled by ``sqrt(1 - momentum2^t)`` (a
    difference only for gradients near ``eps``). ``weight_decay`` is added to the
    gradient (coupled, as torch's Adam).

    Parameters
    ----------
    module : Module or list of Var
    learning_rate : float, default 1e-3
    momentum, momentum2 : float, default 0.9, 0.999
        The first and second moment decay rates (torch's betas).
    weight_decay : float, default 0.0
    eps : float, default 1e-8
    regularization_method : Regularization_Method, default L2
    """

    def __init__(self, module, learning_rate=1e-3, momentum=0.9, momentum2=0.999,
                 weight_decay=0.0, eps=1e-8, regularization_method=L2):
        super().__init__(module, learning_rate, weight_decay, regularization_method)
        self.momentum = momentum
        self.momentum2 = momentum2
        self.eps = eps

    @property
    def momentum(self):
        """First-moment decay (beta1)."""
        return self._b1

    @momentum.setter
    def momentum(self, value):
        self._b1 = _beta(value, "momentum")

    @property
    def momentum2(self):
        """Second-moment decay (beta2)."""
        return self._b2

    @momentum2.setter
    def momentum2(self, value):
        self._b2 = _beta(value, "momentum2")

    @property
    def eps(self):
        """Added to the root of the second moment."""
        return self._eps

    @eps.setter
    def eps(self, value):
        value = float(value)
        if value < 0:
            raise MnnError(f"mnn: eps must be >= 0, got {value}")
        self._eps = value

    def _moments(self, grad, state):
        m = state.get("m")
        v = state.get("v")
        m = (1.0 - self._b1) * grad if m is None else self._b1 * m + (1.0 - self._b1) * grad
        g2 = grad * grad
        v = (1.0 - self._b2) * g2 if v is None else self._b2 * v + (1.0 - self._b2) * g2
        state["m"], state["v"] = m, v
        return m, v

    def _update(self, value, grad, state):
        m, v = self._moments(grad, state)
        t = self._step
        correction = np.sqrt(1.0 - self._b2 ** t) / (1.0 - self._b1 ** t)
        return value - (self._lr * correction) * m / (np.sqrt(v) + self._eps)


class AdamW(ADAM):
    """Adam with decoupled weight decay (torch's ``AdamW`` formula)::

        p = p * (1 - learning_rate * weight_decay)
        m, v as in Adam
        p = p - learning_rate / (1 - momentum^t) * m / (sqrt(v) / sqrt(1 - momentum2^t) + eps)

    ``weight_decay`` here never enters the gradient.

    Parameters
    ----------
    module : Module or list of Var
    learning_rate : float, default 1e-3
    momentum, momentum2 : float, default 0.9, 0.999
    weight_decay : float, default 0.01
    eps : float, default 1e-8
    """

    def __init__(self, module, learning_rate=1e-3, momentum=0.9, momentum2=0.999,
                 weight_decay=0.01, eps=1e-8):
        super().__init__(module, learning_rate, momentum, momentum2, weight_decay, eps)

    def _regularize(self, value, grad):
        return grad  # decay is applied to the value in _update

    def _update(self, value, grad, state):
        value = value * (1.0 - self._lr * self._weight_decay)
        m, v = self._moments(grad, state)
        t = self._step
        denom = np.sqrt(v) / np.sqrt(1.0 - self._b2 ** t) + self._eps
        return value - (self._lr / (1.0 - self._b1 ** t)) * m / denom
