"""Losses with MNN's formulas (``tools/train/source/optimizer/Loss.cpp``).

MNN's five losses take ``predicts`` and ``targets`` of one 2-D shape ``[batch, classes]``,
sum over the class axis and average over the batch:

- ``cross_entropy``: ``-mean_n sum_c log(p) * t`` (``p`` are probabilities, e.g. softmax)
- ``kl``: ``mean_n sum_c p * (log p - log t)``
- ``mse``: ``mean_n sum_c (p - t)^2``
- ``mae``: ``mean_n sum_c |p - t|``
- ``hinge``: ``mean_n sum_c max(0, 1 - p * t)``

:func:`softmax_cross_entropy` takes logits instead of probabilities and is numerically
stable (``F.log_softmax`` shifts by the row maximum); use it for training classifiers.
"""
import numpy as np

from .. import express as F
from ..express.errors import MnnError
from ..express.var import _source

__all__ = ["cross_entropy", "kl", "mse", "mae", "hinge", "softmax_cross_entropy"]


def _pair(name, predicts, targets):
    predicts, targets = F.to_var(predicts), F.to_var(targets)
    if predicts.ndim != 2 or predicts.shape != targets.shape:
        raise MnnError(f"mnn: loss.{name}: predicts and targets must share one 2-D shape "
                       f"[batch, classes], got {predicts.shape} and {targets.shape}")
    if predicts.dtype.kind != "f":
        raise MnnError(f"mnn: loss.{name}: predicts must be float, got {predicts.dtype}")
    if targets.dtype != predicts.dtype:
        targets = F.cast(targets, predicts.dtype)
    return predicts, targets


def _batch_mean_of_row_sums(x):
    return F.reduce_mean(F.reduce_sum(x, [1]))


def cross_entropy(predicts, targets):
    """``-mean_n sum_c log(predicts) * targets`` (MNN's ``_CrossEntropy``).

    Parameters
    ----------
    predicts : Var
        Probabilities ``[batch, classes]`` (e.g. a softmax output).
    targets : Var
        One-hot (or soft) targets of the same shape.

    Returns
    -------
    Var
        A scalar.
    """
    p, t = _pair("cross_entropy", predicts, targets)
    return F.negative(_batch_mean_of_row_sums(F.log(p) * t))


def kl(predicts, targets):
    """``mean_n sum_c predicts * (log predicts - log targets)`` (MNN's ``_KLDivergence``)."""
    p, t = _pair("kl", predicts, targets)
    return _batch_mean_of_row_sums(p * (F.log(p) - F.log(t)))


def mse(predicts, targets):
    """``mean_n sum_c (predicts - targets)^2`` (MNN's ``_MSE``)."""
    p, t = _pair("mse", predicts, targets)
    return _batch_mean_of_row_sums(F.square(p - t))


def mae(predicts, targets):
    """``mean_n sum_c |predicts - targets|`` (MNN's ``_MAE``)."""
    p, t = _pair("mae", predicts, targets)
    return _batch_mean_of_row_sums(F.abs(p - t))


def hinge(predicts, targets):
    """``mean_n sum_c max(0, 1 - predicts * targets)`` (MNN's ``_Hinge``)."""
    p, t = _pair("hinge", predicts, targets)
    return _batch_mean_of_row_sums(F.maximum(1.0 - p * t, 0.0))


# (classes, dtype, batch) -> read-only ``eye(classes) * (-1 / batch)``: a training loop
# asks for the same table every step; a few are kept (train and last-batch sizes).
_ONE_HOT = {}
_ONE_HOT_MAX = 8


def _scaled_one_hot(classes, dtype, batch):
    key = (classes, dtype, batch)
    table = _ONE_HOT.get(key)
    if table is None:
        table = np.eye(classes, dtype=dtype) * dtype.type(-1 / batch)
        table.flags.writeable = False
        if len(_ONE_HOT) >= _ONE_HOT_MAX:
            _ONE_HOT.pop(next(iter(_ONE_HOT)))
        _ONE_HOT[key] = table
    return table


def softmax_cross_entropy(logits, targets):
    """Cross entropy of ``softmax(logits)`` against ``targets``, computed stably.

    Equals ``cross_entropy(softmax(logits), one_hot)`` without ever taking the log of a
    probability that underflowed to zero.

    Parameters
    ----------
    logits : Var
        ``[batch, classes]`` float scores.
    targets : Var or array_like
        Either one-hot/soft targets of the same shape, or integer class indices of
        shape ``[batch]``.

    Returns
    -------
    Var
        A scalar: the batch mean.
    """
    logits = F.to_var(logits)
    targets = F.to_var(targets)
    if logits.ndim != 2 or logits.dtype.kind != "f":
        raise MnnError(f"mnn: loss.softmax_cross_entropy: logits must be 2-D float "
                       f"[batch, classes], got shape {logits.shape} {logits.dtype}")
    batch, classes = logits.shape
    if targets.dtype.kind in "iu" and targets.shape == [batch]:
        if targets.expr.op is None and targets.expr.values is not None:
            # Known labels (the usual case): check them and build the one-hot now.
            labels = np.asarray(targets)
            if labels.size and (labels.min() < 0 or labels.max() >= classes):
                raise MnnError(f"mnn: loss.softmax_cross_entropy: labels must be in "
                               f"[0, {classes}), got values from {labels.min()} to "
                               f"{labels.max()}")
            # -1/batch folded into the one-hot: the loss is then one product and one sum
            # (fewer ops to build and differentiate every step).
            weights = _scaled_one_hot(classes, logits.dtype, batch)[labels]
            # ``weights`` is a fresh array of our own: a constant without const's copy.
            return F.reduce_sum(F.log_softmax(logits, 1) * _source("const", weights))
        else:
            ids = F.const(np.arange(classes, dtype=targets.dtype))
            targets = F.cast(F.equal(F.unsqueeze(targets, [1]), ids), logits.dtype)
    elif targets.shape != logits.shape:
        raise MnnError(f"mnn: loss.softmax_cross_entropy: targets must be class indices "
                       f"of shape [{batch}] or one-hot of shape {logits.shape}, got "
                       f"{targets.shape} {targets.dtype}")
    elif targets.dtype != logits.dtype:
        targets = F.cast(targets, logits.dtype)
    return F.negative(_batch_mean_of_row_sums(F.log_softmax(logits, 1) * targets))
