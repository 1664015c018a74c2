"""mnn.optim: optimizers and learning-rate schedules (pymnn's ``MNN.optim``).

``SGD`` and ``ADAM`` keep MNN's names, arguments and update rules; ``AdamW`` and
``RMSprop`` follow torch's formulas. ``Grad()`` only computes gradients.
"""
from . import lr_scheduler
from .adam import ADAM, AdamW
from .lr_scheduler import cosine, exp, inv, multi_step
from .optimizer import L1, L1L2, L2, Grad, Optimizer, Regularization_Method
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "ADAM", "AdamW", "RMSprop", "Grad", "Regularization_Method",
           "L1", "L2", "L1L2", "lr_scheduler", "multi_step", "inv", "exp", "cosine"]
