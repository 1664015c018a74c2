"""Samples of ``deform_conv2d`` (mnn/express/ops/onnx_deform_conv.py; reference: the ONNX
reference evaluator's DeformConv, run on a one-node model)."""
import numpy as np
from onnx import helper
from onnx.reference import ReferenceEvaluator
from opdb_core import Sample, values


def _ref(x, w, offset, *rest, strides, pads, dilations, group, offset_group, has_bias):
    names = ["x", "w", "offset"] + (["b"] if has_bias else [""]) + \
        (["mask"] if len(rest) > has_bias else [])
    feeds = {"x": x, "w": w, "offset": offset}
    if has_bias:
        feeds["b"] = rest[0]
    if len(rest) > has_bias:
        feeds["mask"] = rest[-1]
    node = helper.make_node("DeformConv", names, ["y"], strides=list(strides),
                            pads=list(pads), dilations=list(dilations), group=group,
                            offset_group=offset_group)
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(k, elem, None) for k in feeds],
        [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    return ReferenceEvaluator(model).run(None, feeds)[0].astype(x.dtype)


def _attrs(strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1, offset_group=1,
           has_bias=False):
    return dict(strides=strides, pads=pads, dilations=dilations, group=group,
                offset_group=offset_group, has_bias=has_bias)


_X = values((1, 2, 5, 5), np.float32, seed=1)
_W = values((3, 2, 2, 2), np.float32, seed=2)

SAMPLES = {
    "deform_conv2d": [
        Sample([_X, _W, values((1, 8, 4, 4), np.float32, low=-1.5, high=1.5, seed=3)],
               _attrs(), _ref, rtol=1e-4, atol=1e-5),
        Sample([_X, _W, values((1, 8, 3, 3), np.float32, low=-2, high=2, seed=4),
                values((3,), np.float32, seed=5),
                values((1, 4, 3, 3), np.float32, low=0, high=1, seed=6)],
               _attrs(strides=(2, 2), pads=(1, 1, 0, 0), has_bias=True), _ref,
               rtol=1e-4, atol=1e-5, note="bias mask strided"),
        Sample([values((2, 4, 6, 5), np.float64, seed=7), values((4, 2, 3, 2), np.float64,
                                                                  seed=8),
                values((2, 24, 2, 4), np.float64, low=-1, high=1, seed=9)],
               # The reference samples in float32 even for float64 inputs.
               _attrs(dilations=(2, 1), group=2, offset_group=2), _ref, rtol=1e-5,
               atol=1e-6, note="groups dilated"),
    ],
}

REJECTS = {
    "deform_conv2d": [
        Sample([_X, _W, values((1, 8, 3, 3), np.float32)], _attrs()),
        Sample([_X, values((3, 3, 2, 2), np.float32), values((1, 8, 4, 4), np.float32)],
               _attrs()),
        Sample([_X, _W, values((1, 8, 4, 4), np.float32)], _attrs(group=2)),
    ],
}
