"""Samples of ``tree_ensemble`` (mnn/express/ops/onnx_tree.py; reference: the ONNX
reference evaluator's TreeEnsemble, followed by numpy's logistic/softmax for the post
transforms, which that evaluator leaves out)."""
import numpy as np
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from opdb_core import Sample, values


def _ref(x, featureids, splits, modes, truenodeids, falsenodeids, trueleafs, falseleafs,
         missing_tracks_true, membership, leaf_targetids, leaf_weights, roots, n_targets,
         aggregate, post_transform):
    attrs = dict(
        nodes_featureids=list(featureids),
        nodes_splits=numpy_helper.from_array(np.array(splits, x.dtype)),
        nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8)),
        nodes_truenodeids=list(truenodeids), nodes_falsenodeids=list(falsenodeids),
        nodes_trueleafs=list(trueleafs), nodes_falseleafs=list(falseleafs),
        leaf_targetids=list(leaf_targetids),
        leaf_weights=numpy_helper.from_array(np.array(leaf_weights, x.dtype)),
        tree_roots=list(roots), n_targets=n_targets, aggregate_function=aggregate)
    if missing_tracks_true:
        attrs["nodes_missing_value_tracks_true"] = list(missing_tracks_true)
    if membership:
        attrs["membership_values"] = numpy_helper.from_array(np.array(membership, x.dtype))
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, None)],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("ai.onnx.ml", 5)])
    y = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    if post_transform == 2:
        y = 1 / (1 + np.exp(-y))
    elif post_transform == 1:
        e = np.exp(y - y.max(1, keepdims=True))
        y = e / e.sum(1, keepdims=True)
    return y.astype(x.dtype)


# Two trees over 3 features, 2 targets: tree 0 splits f0 <= 0.5 then f2 < 1; tree 1 is a
# membership test of f1 in {1, 3}.
_TREES = dict(featureids=(0, 2, 1), splits=(0.5, 1.0, 0.0), modes=(0, 1, 6),
              truenodeids=(1, 0, 3), falsenodeids=(2, 1, 4), trueleafs=(0, 1, 1),
              falseleafs=(1, 1, 1), missing_tracks_true=(1, 0, 0),
              membership=(1.0, 3.0, float("nan")),
              leaf_targetids=(0, 1, 1, 0, 1), leaf_weights=(1.5, -2.0, 0.25, 3.0, 4.0),
              roots=(0, 2), n_targets=2)
_X = np.array([[0.1, 1.0, 0.5], [0.9, 2.0, 3.0], [0.4, 3.0, 2.0], [np.nan, 1.0, 0.0],
               [0.5, 0.0, 1.0]], np.float64)

SAMPLES = {
    "tree_ensemble": [
        Sample([_X], dict(_TREES, aggregate=agg, post_transform=0), _ref,
               note=f"aggregate {agg}")
        for agg in (0, 1, 2, 3)
    ] + [
        Sample([_X.astype(np.float32)], dict(_TREES, aggregate=1, post_transform=2), _ref,
               note="logistic"),
        Sample([_X.astype(np.float32)], dict(_TREES, aggregate=1, post_transform=1), _ref,
               note="softmax"),
        Sample([values((4, 3), np.float64, seed=3)], dict(_TREES, aggregate=1,
                                                          post_transform=0), _ref),
    ],
}

REJECTS = {
    "tree_ensemble": [
        Sample([_X], dict(_TREES, aggregate=1, post_transform=0, roots=(0, 7))),
        Sample([_X], dict(_TREES, aggregate=1, post_transform=0, membership=())),
        Sample([_X[:, :2]], dict(_TREES, aggregate=1, post_transform=0)),
        Sample([_X.astype(np.int32)], dict(_TREES, aggregate=1, post_transform=0)),
    ],
}
