"""ONNX-ML (domain ``ai.onnx.ml``) handlers over numeric tensors: Binarizer and
ArrayFeatureExtractor."""
import numpy as np

import mnn.express as F

from .common import same_dtype_const
from .registry import onnx_op

ML = "ai.onnx.ml"


@onnx_op("Binarizer", since=1, domain=ML)
def binarizer(ctx, X, threshold=0.0):
    """1 where ``X > threshold``, else 0, in X's dtype."""
    return F.cast(F.greater(X, same_dtype_const(threshold, X)), X.dtype)


@onnx_op("ArrayFeatureExtractor", since=1, domain=ML)
def array_feature_extractor(ctx, X, Y):
    """The entries of X's last axis that ``Y`` selects (a 1-d X gives one row)."""
    shape = ctx.known_shape(X)
    if shape is None:
        raise ctx.static_needed("the input's rank must be known")
    index = F.reshape(F.cast(Y, np.int64), [-1])
    if len(shape) == 1:
        return F.reshape(F.gather(X, index, 0), [1, -1])
    return F.gather(X, index, len(shape) - 1)
