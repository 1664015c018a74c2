"""ONNX-ML (domain ``ai.onnx.ml``) handlers over numeric tensors: Binarizer,
ArrayFeatureExtractor, TreeEnsemble; and TfIdfVectorizer (default domain) over integer
token ids."""
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


@onnx_op("TreeEnsemble", since=5, domain=ML)
def tree_ensemble(ctx, X, aggregate_function=1, leaf_targetids=None, leaf_weights=None,
                  membership_values=None, n_targets=None, nodes_falseleafs=None,
                  nodes_falsenodeids=None, nodes_featureids=None, nodes_hitrates=None,
                  nodes_missing_value_tracks_true=None, nodes_modes=None, nodes_splits=None,
                  nodes_trueleafs=None, nodes_truenodeids=None, post_transform=0,
                  tree_roots=None):
    required = dict(leaf_targetids=leaf_targetids, leaf_weights=leaf_weights,
                    nodes_falseleafs=nodes_falseleafs, nodes_falsenodeids=nodes_falsenodeids,
                    nodes_featureids=nodes_featureids, nodes_modes=nodes_modes,
                    nodes_splits=nodes_splits, nodes_trueleafs=nodes_trueleafs,
                    nodes_truenodeids=nodes_truenodeids, tree_roots=tree_roots)
    for name, value in required.items():
        if value is None:
            raise ctx.error(f"attribute {name!r} is required")
    targets = n_targets if n_targets is not None else max(leaf_targetids) + 1

    def flat(v):
        return None if v is None else np.asarray(v).reshape(-1)

    try:
        return F.tree_ensemble(
            X, featureids=nodes_featureids, splits=flat(nodes_splits),
            modes=flat(nodes_modes), truenodeids=nodes_truenodeids,
            falsenodeids=nodes_falsenodeids, trueleafs=nodes_trueleafs,
            falseleafs=nodes_falseleafs, missing_tracks_true=nodes_missing_value_tracks_true,
            membership=flat(membership_values), leaf_targetids=leaf_targetids,
            leaf_weights=flat(leaf_weights), roots=tree_roots, n_targets=targets,
            aggregate=aggregate_function, post_transform=post_transform)
    except ValueError as exc:
        raise ctx.error(str(exc)) from None
