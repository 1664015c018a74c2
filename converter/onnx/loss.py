"""ONNX losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (composites)."""
import numpy as np

import mnn.express as F

from .registry import onnx_op


def _nll(ctx, log_prob, target, weight, reduction, ignore_index):
    """``-log_prob[n, target[n, ...], ...] * weight[target]`` and its reduction."""
    if reduction not in ("none", "sum", "mean"):
        raise ctx.error(f"reduction must be none, sum or mean, got {reduction!r}")
    target = F.cast(target, np.int64)
    if ignore_index is not None:
        keep = F.not_equal(target, F.const(np.array(ignore_index, np.int64)))
        # Ignored positions read class 0 and get weight 0.
        safe = F.select(keep, target, F.zeros_like(target))
    else:
        keep, safe = None, target
    picked = F.gather_elements(log_prob, F.unsqueeze(safe, [1]), 1)
    picked = F.squeeze(picked, [1])
    if weight is not None:
        w = F.gather(weight, safe, 0)
    else:
        w = F.ones_like(picked)
    if keep is not None:
        w = F.multiply(w, F.cast(keep, w.dtype))
    loss = F.negative(F.multiply(picked, w))
    if reduction == "none":
        return loss
    total = F.reduce_sum(loss, [], False)
    if reduction == "sum":
        return total
    return F.divide(total, F.reduce_sum(w, [], False))


@onnx_op("NegativeLogLikelihoodLoss", since=12)
def nll_loss(ctx, input, target, weight=None, ignore_index=None,
             reduction="mean"):
    return _nll(ctx, input, target, weight, reduction, ignore_index)


@onnx_op("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy(ctx, scores, labels, weights=None, ignore_index=None,
                          reduction="mean"):
    log_prob = F.log_softmax(scores, 1)
    loss = _nll(ctx, log_prob, labels, weights, reduction, ignore_index)
    return loss, log_prob
