"""Samples of ``tfidf_vectorize`` (mnn/express/ops/onnx_tfidf.py; reference: the ONNX
reference evaluator's TfIdfVectorizer on a one-node model)."""
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opdb_core import Sample


def _ref(x, min_n, max_n, max_skip, mode, pool, counts, indexes, weights):
    attrs = dict(min_gram_length=min_n, max_gram_length=max_n, max_skip_count=max_skip,
                 mode=mode, pool_int64s=list(pool), ngram_counts=list(counts),
                 ngram_indexes=list(indexes))
    if weights:
        attrs["weights"] = list(weights)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(
            "x", helper.np_dtype_to_tensor_dtype(x.dtype), None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float32)


_POOL = dict(pool=(2, 3, 5, 4, 5, 6, 7, 8, 6, 7), counts=(0, 4),
             indexes=(0, 1, 2, 3, 4, 5, 6))
_X = np.array([[1, 1, 3, 3, 3, 7, 2, 5], [8, 6, 7, 5, 6, 8, 7, 8]], np.int64)

SAMPLES = {
    "tfidf_vectorize": [
        Sample([_X], dict(min_n=1, max_n=2, max_skip=0, mode="TF", weights=(), **_POOL),
               _ref),
        Sample([_X.astype(np.int32)], dict(min_n=2, max_n=2, max_skip=3, mode="TF",
                                           weights=(), **_POOL), _ref, note="skips"),
        Sample([_X[1]], dict(min_n=1, max_n=2, max_skip=5, mode="TFIDF",
                             weights=(0.5, 1, 2, 1, 3, 1, 0.25), **_POOL), _ref,
               note="1-d tfidf"),
        Sample([_X], dict(min_n=1, max_n=1, max_skip=0, mode="IDF",
                          weights=(0.5, 1, 2, 1, 3, 1, 0.25), **_POOL), _ref, note="idf"),
    ],
}

REJECTS = {
    "tfidf_vectorize": [
        Sample([_X], dict(min_n=1, max_n=2, max_skip=0, mode="BM25", weights=(), **_POOL)),
        Sample([_X.astype(np.float32)], dict(min_n=1, max_n=2, max_skip=0, mode="TF",
                                             weights=(), **_POOL)),
        Sample([_X], dict(min_n=1, max_n=2, max_skip=0, mode="TF", weights=(),
                          pool=(2, 3, 5), counts=(0, 2), indexes=(0, 1, 2))),
    ],
}
