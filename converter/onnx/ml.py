"""ONNX-ML (domain ``ai.onnx.ml``) handlers over numeric tensors: Binarizer and
ArrayFeatureExtractor; and TfIdfVectorizer (default domain) over integer token ids."""
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


@onnx_op("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx, X, max_gram_length=None, max_skip_count=None,
                     min_gram_length=None, mode=None, ngram_counts=None, ngram_indexes=None,
                     pool_int64s=None, pool_strings=None, weights=None):
    if pool_strings is not None:
        raise ctx.error("attribute 'pool_strings': string tokens are not supported (mnn "
                        "tensors hold numbers); use pool_int64s")
    for name, value in (("max_gram_length", max_gram_length),
                        ("max_skip_count", max_skip_count),
                        ("min_gram_length", min_gram_length), ("mode", mode),
                        ("ngram_counts", ngram_counts), ("ngram_indexes", ngram_indexes),
                        ("pool_int64s", pool_int64s)):
        if value is None:
            raise ctx.error(f"attribute {name!r} is required")
    try:
        return F.tfidf_vectorize(X, min_gram_length, max_gram_length, max_skip_count, mode,
                                 pool_int64s, ngram_counts, ngram_indexes, weights or ())
    except ValueError as exc:
        raise ctx.error(str(exc)) from None
