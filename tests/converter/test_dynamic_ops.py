"""Single-op models with dynamic N/H/W (symbolic dims) convert without
--inputConfigFile: the .mnn file is written (a node left to run time has no MNN op and
fails the write), and our loader and the real MNN wheel run it at two input sizes,
matching onnxruntime. Conv/pooling with auto_pad SAME_UPPER use the ops' SAME mode;
ConvTranspose on dynamic dims is the convolution it transposes, ScatterND/ScatterElements
MNN's scatters into data."""
import contextlib
import io
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import run_ort
from converter.cli import main as mnnconvert
from converter.onnx import load_onnx
from converter.onnx.loader import ConvertError
from mnn import nn as mnn_nn
import mnn.expr as F

C = 4
_RNG = np.random.default_rng(3)


def _w(*shape, scale=0.5):
    return (_RNG.normal(size=shape) * scale).astype(np.float32)


# name -> (op, attributes, initializers after x, x dims, the shapes run[, options:
# outputs, out_type (one for all outputs, or a list), opset])
_NCHW = ["N", C, "H", "W"]
_SIZES_4D = [(1, C, 9, 12), (2, C, 16, 7)]
_NCDHW = ["N", C, "D", "H", "W"]
_SIZES_5D = [(1, C, 3, 4, 5), (2, C, 5, 6, 4)]
_WITH_INDICES = dict(outputs=["y", "z"], out_type=[TensorProto.FLOAT, TensorProto.INT64])
CASES = {
    "prelu_channel": ("PRelu", {}, [_w(C, 1, 1)], _NCHW, _SIZES_4D),
    "prelu_broadcast": ("PRelu", {}, [_w(1, 1, 1)], _NCHW, _SIZES_4D),
    "prelu_2d": ("PRelu", {}, [_w(C)], ["N", C], [(1, C), (5, C)]),
    "instance_norm": ("InstanceNormalization", {}, [_w(C), _w(C)], _NCHW, _SIZES_4D),
    "batch_norm": ("BatchNormalization", {},
                   [_w(C), _w(C), _w(C), np.abs(_w(C)) + 0.5], _NCHW, _SIZES_4D),
    "lrn": ("LRN", dict(size=3, alpha=1e-2, beta=0.75, bias=1.5), [], _NCHW, _SIZES_4D),
    "mvn": ("MeanVarianceNormalization", {}, [], _NCHW, _SIZES_4D),
    "conv_transpose": ("ConvTranspose", dict(strides=[2, 3], pads=[1, 0, 0, 2],
                                             output_padding=[1, 0]),
                       [_w(C, 3, 3, 4), _w(3)], _NCHW, _SIZES_4D),
    "conv_transpose_grouped_dilated": ("ConvTranspose", dict(strides=[2, 2], group=2,
                                                             dilations=[2, 1]),
                                       [_w(C, 3, 3, 3)], _NCHW, _SIZES_4D),
    "conv_transpose_1d": ("ConvTranspose", dict(strides=[3], pads=[1, 1]),
                          [_w(C, 2, 4), _w(2)], ["N", C, "L"], [(1, C, 9), (3, C, 14)]),
    "conv_same_upper": ("Conv", dict(auto_pad="SAME_UPPER", strides=[2, 3]),
                        [_w(5, C, 3, 4), _w(5)], _NCHW, _SIZES_4D),
    "conv_same_lower": ("Conv", dict(auto_pad="SAME_LOWER", strides=[2, 3]),
                        [_w(5, C, 3, 4), _w(5)], _NCHW, _SIZES_4D),
    "conv1d_same_lower": ("Conv", dict(auto_pad="SAME_LOWER", strides=[2]),
                          [_w(3, C, 4)], ["N", C, "L"], [(1, C, 9), (3, C, 14)]),
    "max_pool_same_lower": ("MaxPool", dict(auto_pad="SAME_LOWER", kernel_shape=[3, 2],
                                            strides=[2, 2]), [], _NCHW, _SIZES_4D),
    "avg_pool_same_lower": ("AveragePool", dict(auto_pad="SAME_LOWER", kernel_shape=[3, 3],
                                                strides=[2, 2]), [], _NCHW, _SIZES_4D),
    "conv1d_same_upper": ("Conv", dict(auto_pad="SAME_UPPER", strides=[2]),
                          [_w(3, C, 4)], ["N", C, "L"], [(1, C, 9), (3, C, 14)]),
    "max_pool_same_upper": ("MaxPool", dict(auto_pad="SAME_UPPER", kernel_shape=[3, 2],
                                            strides=[2, 2]), [], _NCHW, _SIZES_4D),
    "max_pool1d_same_upper": ("MaxPool", dict(auto_pad="SAME_UPPER", kernel_shape=[3],
                                              strides=[2]), [], ["N", C, "L"],
                              [(1, C, 9), (3, C, 14)]),
    "flatten_axis1": ("Flatten", dict(axis=1), [], _NCHW, _SIZES_4D),
    "flatten_axis3": ("Flatten", dict(axis=3), [], _NCHW, _SIZES_4D),
    "flatten_dynamic_both": ("Flatten", dict(axis=2), [], ["N", C, "H", 5],
                             [(1, C, 3, 5), (2, C, 6, 5)]),
    "split_channels": ("Split", dict(axis=1), [np.array([1, 3], np.int64)], _NCHW,
                       _SIZES_4D, dict(outputs=["y", "z"])),
    "size": ("Size", {}, [], _NCHW, _SIZES_4D, dict(out_type=TensorProto.INT64)),
    "softmax_opset11": ("Softmax", dict(axis=2), [], _NCHW, _SIZES_4D, dict(opset=11)),
    "log_softmax_opset11": ("LogSoftmax", dict(axis=1), [], ["N", C, "L"],
                            [(1, C, 9), (3, C, 14)], dict(opset=11)),
    "group_norm": ("GroupNormalization", dict(num_groups=2, epsilon=1e-5),
                   [_w(C), _w(C)], _NCHW, _SIZES_4D, dict(opset=21)),
    # Opset 18: scale and bias per group (applied before the channels are split out).
    "group_norm_opset18": ("GroupNormalization", dict(num_groups=2, epsilon=1e-5),
                           [_w(2), _w(2)], ["N", "C", "H", "W"],
                           [(1, C, 9, 12), (2, 6, 16, 7)], dict(opset=18)),
    # A dynamic channel count: GroupNormalization's from scale's length (opset 21), LRN's
    # window sums as a convolution over the channel axis (onnxruntime: odd sizes only).
    "group_norm_channels_from_scale": ("GroupNormalization", dict(num_groups=2),
                                       [_w(C), _w(C)], ["N", "C", "H", "W"], _SIZES_4D,
                                       dict(opset=21)),
    "depth_to_space_crd_dynamic_channels": ("DepthToSpace", dict(blocksize=2, mode="CRD"), [],
                                            ["N", "C", "H", "W"],
                                            [(1, 8, 3, 5), (2, 4, 6, 2)]),
    "lrn_size5_dynamic_channels": ("LRN", dict(size=5, alpha=1e-2, beta=0.75, bias=1.5),
                                   [], ["N", "C", "H", "W"], [(1, 6, 9, 4), (3, 2, 5, 14)]),
    "argmax": ("ArgMax", dict(axis=2), [], _NCHW, _SIZES_4D,
               dict(out_type=TensorProto.INT64)),
    "argmax_last_index": ("ArgMax", dict(axis=3, select_last_index=1, keepdims=0), [],
                          _NCHW, _SIZES_4D, dict(out_type=TensorProto.INT64)),
    "hardmax": ("Hardmax", dict(axis=1), [], _NCHW, _SIZES_4D),
    "hardmax_opset11": ("Hardmax", dict(axis=2), [], ["N", C, 3, 5],
                        [(1, C, 3, 5), (4, C, 3, 5)], dict(opset=11)),
    "depth_to_space_dcr": ("DepthToSpace", dict(blocksize=2), [], _NCHW, _SIZES_4D),
    "depth_to_space_crd": ("DepthToSpace", dict(blocksize=2, mode="CRD"), [], _NCHW,
                           _SIZES_4D),
    "space_to_depth": ("SpaceToDepth", dict(blocksize=2), [], _NCHW,
                       [(1, C, 4, 6), (2, C, 8, 2)]),
    "resize_nearest_scales": ("Resize", dict(mode="nearest"),
                              [np.zeros(0, np.float32), np.array([1, 1, 2, 2], np.float32)],
                              _NCHW, _SIZES_4D),
    "resize_linear_scales": ("Resize", dict(mode="linear"),
                             [np.zeros(0, np.float32),
                              np.array([1, 1, 2, 1.5], np.float32)], _NCHW, _SIZES_4D),
    "pad_reflect": ("Pad", dict(mode="reflect"),
                    [np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)], _NCHW, _SIZES_4D),
    "tile": ("Tile", {}, [np.array([1, 2, 1, 3], np.int64)], _NCHW, _SIZES_4D),
    "top_k": ("TopK", dict(axis=1), [np.array([2], np.int64)], _NCHW, _SIZES_4D,
              dict(outputs=["y", "z"], out_type=[TensorProto.FLOAT, TensorProto.INT64])),
    "gather_elements": ("GatherElements", dict(axis=2),
                        [np.array([[[[0], [-1]]]], np.int64)], _NCHW, _SIZES_4D),
    "conv_transpose_same_upper": ("ConvTranspose", dict(strides=[2, 2], auto_pad="SAME_UPPER"),
                                  [_w(C, 3, 3, 3), _w(3)], _NCHW, _SIZES_4D),
    "conv_transpose_same_lower": ("ConvTranspose", dict(strides=[2, 3], auto_pad="SAME_LOWER"),
                                  [_w(C, 3, 4, 3)], _NCHW, _SIZES_4D),
    "conv_transpose_1d_same": ("ConvTranspose", dict(strides=[3], auto_pad="SAME_LOWER",
                                                     dilations=[2]),
                               [_w(C, 2, 4)], ["N", C, "L"], [(1, C, 9), (3, C, 14)]),
    # output_shape: the padding follows from the static H/W (the batch is dynamic);
    # 9 -> 19 and 11 -> 23 are one short of the shape asked (the extra is output padding).
    "conv_transpose_output_shape": ("ConvTranspose", dict(strides=[2, 2], output_shape=[20, 24]),
                                    [_w(C, 3, 3, 3), _w(3)], ["N", C, 9, 11],
                                    [(1, C, 9, 11), (3, C, 9, 11)]),
    "conv_transpose_output_shape_cropped": ("ConvTranspose",
                                            dict(strides=[2, 2], output_shape=[18, 21],
                                                 auto_pad="SAME_UPPER"),
                                            [_w(C, 3, 3, 3)], ["N", C, 10, 10],
                                            [(1, C, 10, 10), (3, C, 10, 10)]),
    "conv_transpose_pads_past_kernel": ("ConvTranspose", dict(strides=[2, 2], pads=[3, 0, 0, 4]),
                                        [_w(C, 3, 3, 3)], _NCHW, _SIZES_4D),
    "conv_transpose_1d_pads_past_kernel": ("ConvTranspose", dict(strides=[2], pads=[4, 1],
                                                                 output_padding=[1]),
                                           [_w(C, 2, 3), _w(2)], ["N", C, "L"],
                                           [(1, C, 9), (3, C, 14)]),
    "scatter_nd_rows": ("ScatterND", {}, [np.array([[0], [2]], np.int64), _w(2, C, 5)],
                        ["N", C, 5], [(3, C, 5), (4, C, 5)]),
    # A KV-cache style update: one position of a dynamic sequence axis per (batch, head);
    # indices with fewer batch axes than index components (MNN's ScatterNd needs them
    # laid out again).
    "scatter_nd_cache": ("ScatterND", {},
                         [np.array([[0, 0, 3], [0, 1, 3], [1, 0, 3], [1, 1, 3]], np.int64),
                          _w(4, 5)], [2, 2, "S", 5], [(2, 2, 4, 5), (2, 2, 9, 5)]),
    "scatter_nd_add": ("ScatterND", dict(reduction="add"),
                       [np.array([[1, 0], [1, 0]], np.int64), _w(2, 5)], ["N", "S", 5],
                       [(2, 3, 5), (3, 4, 5)]),
    "scatter_elements_part": ("ScatterElements", dict(axis=1),
                              [np.array([[1, 0, 2]], np.int64), _w(1, 3)], ["N", 4],
                              [(2, 4), (3, 4)]),
    "scatter_elements_negative": ("ScatterElements", dict(axis=1),
                                  [np.array([[-1, 0], [2, -2]], np.int64), _w(2, 2)],
                                  [2, "L"], [(2, 4), (2, 7)]),
    "scatter_elements_add": ("ScatterElements", dict(axis=0, reduction="add"),
                             [np.array([[1, 0, 1]], np.int64), _w(1, 3)], ["N", 3],
                             [(2, 3), (5, 3)]),
    "lp_pool": ("LpPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 1]), [],
                _NCHW, _SIZES_4D),
    "lp_pool_same_upper": ("LpPool", dict(kernel_shape=[3, 3], strides=[2, 2], p=3,
                                          auto_pad="SAME_UPPER"), [], _NCHW, _SIZES_4D),
    "lp_pool_same_lower": ("LpPool", dict(kernel_shape=[3, 2], strides=[2, 1], p=1,
                                          auto_pad="SAME_LOWER"), [], _NCHW, _SIZES_4D),
    # Ceil mode: windows over end pads grown by stride - 1, cut to ceil mode's count at
    # run time (the second case drops a last window that would start in the end pad).
    "lp_pool_ceil": ("LpPool", dict(pads=[0, 1, 1, 0], kernel_shape=[3, 2], strides=[2, 3],
                                    ceil_mode=1, p=3), [], _NCHW,
                     [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)]),
    "lp_pool_ceil_drop": ("LpPool", dict(pads=[0, 0, 1, 1], kernel_shape=[2, 2], strides=[4, 4],
                                         ceil_mode=1), [], _NCHW, [(1, C, 4, 8), (2, C, 12, 5)]),
    "lp_pool_1d": ("LpPool", dict(kernel_shape=[3], strides=[2], pads=[1, 2]), [],
                   ["N", C, "L"], [(1, C, 9), (3, C, 14)]),
    # Squeeze without axes drops a dynamic axis too when it is 1 at run time (N below).
    "squeeze_no_axes": ("Squeeze", {}, [], ["N", 1, "H", 1], [(1, 1, 3, 1), (5, 1, 7, 1)]),
    "squeeze_no_axes_opset11": ("Squeeze", {}, [], ["N", 1, "H", 1],
                                [(2, 1, 3, 1), (5, 1, 1, 1)], dict(opset=11)),
    "squeeze_no_unit_axes": ("Squeeze", {}, [], ["N", 3, "H"], [(2, 3, 4), (5, 3, 7)]),
    # MaxPool's Indices (and dilated windows) from the windows as strided slices.
    "max_pool_indices": ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2]), [], _NCHW,
                         _SIZES_4D, _WITH_INDICES),
    "max_pool_indices_dilated": ("MaxPool", dict(kernel_shape=[3, 2], strides=[2, 1],
                                                 pads=[1, 0, 1, 1], dilations=[1, 2]), [],
                                 _NCHW, _SIZES_4D, _WITH_INDICES),
    "max_pool_indices_column_major": ("MaxPool", dict(kernel_shape=[2, 3], strides=[2, 2],
                                                      storage_order=1, pads=[0, 1, 1, 0]),
                                      [], _NCHW, _SIZES_4D, _WITH_INDICES),
    "max_pool_indices_1d": ("MaxPool", dict(kernel_shape=[3], strides=[2], pads=[1, 1]), [],
                            ["N", C, "L"], [(1, C, 9), (3, C, 14)], _WITH_INDICES),
    "max_pool_indices_same_upper": ("MaxPool", dict(kernel_shape=[3, 2], strides=[2, 2],
                                                    auto_pad="SAME_UPPER"), [], _NCHW,
                                    _SIZES_4D, _WITH_INDICES),
    "max_pool_indices_same_lower": ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 1],
                                                    auto_pad="SAME_LOWER", storage_order=1),
                                    [], _NCHW, _SIZES_4D, _WITH_INDICES),
    "max_pool_indices_1d_same": ("MaxPool", dict(kernel_shape=[4], strides=[3],
                                                 auto_pad="SAME_UPPER"), [], ["N", C, "L"],
                                 [(1, C, 9), (3, C, 14)], _WITH_INDICES),
    "max_pool_indices_ceil": ("MaxPool", dict(pads=[1, 0, 0, 1], kernel_shape=[3, 3],
                                              strides=[2, 2], ceil_mode=1), [], _NCHW,
                              [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)], _WITH_INDICES),
    "max_pool_indices_ceil_drop": ("MaxPool", dict(pads=[0, 0, 1, 1], kernel_shape=[2, 2],
                                                   strides=[4, 4], ceil_mode=1), [], _NCHW,
                                   [(1, C, 4, 8), (2, C, 12, 5)], _WITH_INDICES),
    "max_pool_dilated_ceil": ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 3],
                                              dilations=[2, 2], ceil_mode=1), [], _NCHW,
                              [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)]),
    "max_pool_dilated": ("MaxPool", dict(kernel_shape=[2, 2], strides=[1, 2],
                                         dilations=[2, 3]), [], _NCHW, _SIZES_4D),
    "split_dynamic_axis": ("Split", dict(axis=2), [], _NCHW, [(1, C, 4, 7), (2, C, 6, 9)],
                           dict(outputs=["y", "z"], opset=11)),
    "split_num_outputs_dynamic_axis": ("Split", dict(axis=3, num_outputs=3), [], _NCHW,
                                       [(1, C, 3, 7), (2, C, 5, 9)],
                                       dict(outputs=["y", "z", "u"])),
    # Constant sizes on a dynamic axis: constant slice bounds (the axis holds their sum
    # at run time; the other dims change).
    "split_sizes_dynamic_axis": ("Split", dict(axis=2), [np.array([2, 1, 2], np.int64)],
                                 _NCHW, [(1, C, 5, 7), (3, C, 5, 2)],
                                 dict(outputs=["y", "z", "u"])),
    "split_sizes_attr_dynamic_axis": ("Split", dict(axis=-1, split=[1, 3]), [],
                                      ["N", "L"], [(2, 4), (5, 4)],
                                      dict(outputs=["y", "z"], opset=11)),
    "hardmax_dynamic_axis": ("Hardmax", dict(axis=2), [], _NCHW, _SIZES_4D),
    "hardmax_opset11_dynamic_axis": ("Hardmax", dict(axis=1), [], ["N", C, "L"],
                                     [(1, C, 9), (3, C, 14)], dict(opset=11)),
    "eye_like": ("EyeLike", dict(k=1), [], ["N", "M"], [(3, 4), (5, 2)]),
    "eye_like_int": ("EyeLike", dict(k=-1, dtype=TensorProto.INT32), [], ["N", "M"],
                     [(3, 4), (5, 2)], dict(out_type=TensorProto.INT32)),
    "compress": ("Compress", dict(axis=1), [np.array([True, False, True, True])], ["N", C],
                 [(2, C), (5, C)]),
    "compress_flat": ("Compress", {}, [np.array([False, True, True, False, True])], ["N", C],
                      [(2, C), (5, C)]),
    "gather_nd_batch_dims": ("GatherND", dict(batch_dims=1),
                             [np.array([[[1, 0], [2, 3]], [[0, 1], [2, 2]]], np.int64)],
                             [2, "H", "W", 5], [(2, 3, 4, 5), (2, 4, 6, 5)]),
    "gather_nd_batch_dims_2": ("GatherND", dict(batch_dims=2),
                               [np.array([[[1], [0], [1]], [[0], [0], [1]]], np.int64)],
                               [2, 3, "L", 4], [(2, 3, 2, 4), (2, 3, 5, 4)]),
    # count_include_pad on dynamic dims: window sums (a depthwise convolution) / kernel.
    "avg_pool_same_upper_count_pad": ("AveragePool", dict(auto_pad="SAME_UPPER",
                                                          kernel_shape=[3, 3], strides=[2, 2],
                                                          count_include_pad=1), [], _NCHW,
                                      _SIZES_4D),
    "avg_pool_same_lower_count_pad": ("AveragePool", dict(auto_pad="SAME_LOWER",
                                                          kernel_shape=[3, 2], strides=[2, 1],
                                                          count_include_pad=1), [], _NCHW,
                                      _SIZES_4D),
    "avg_pool_pads_count_pad": ("AveragePool", dict(pads=[1, 0, 1, 1], kernel_shape=[3, 3],
                                                    strides=[2, 2], count_include_pad=1), [],
                                _NCHW, _SIZES_4D),
    # SAME fixes the output size: ceil_mode does not apply.
    "avg_pool_same_count_pad_ceil": ("AveragePool", dict(auto_pad="SAME_UPPER",
                                                         kernel_shape=[3, 3], strides=[2, 2],
                                                         count_include_pad=1, ceil_mode=1),
                                     [], _NCHW, _SIZES_4D),
    "avg_pool_1d_count_pad": ("AveragePool", dict(kernel_shape=[3], strides=[2], pads=[2, 1],
                                                  count_include_pad=1), [], ["N", C, "L"],
                              [(1, C, 9), (3, C, 14)]),
    # SAME_LOWER with strides over the kernel: the input padded and cut to the SAME
    # windows with run-time bounds (the third size pads nothing on H).
    "conv_same_lower_stride_over_kernel": ("Conv", dict(auto_pad="SAME_LOWER", strides=[2, 5]),
                                           [_w(5, C, 3, 4), _w(5)], _NCHW,
                                           [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)]),
    "conv1d_same_lower_stride_over_kernel": ("Conv", dict(auto_pad="SAME_LOWER", strides=[4]),
                                             [_w(3, C, 2)], ["N", C, "L"],
                                             [(1, C, 9), (3, C, 14), (1, C, 5)]),
    "lp_pool_same_lower_stride_over_kernel": ("LpPool", dict(auto_pad="SAME_LOWER",
                                                             kernel_shape=[2, 3],
                                                             strides=[3, 4]), [], _NCHW,
                                              [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)]),
    # 3-d convolutions: a 2-d convolution per kernel depth tap over the depth slices it
    # meets, moved into the batch (sizes read when the graph runs).
    "conv3d_pads": ("Conv", dict(pads=[1, 0, 1, 1, 0, 0], strides=[2, 1, 2],
                                 dilations=[1, 2, 1]), [_w(5, C, 3, 2, 2), _w(5)], _NCDHW,
                    _SIZES_5D),
    "conv3d_same_upper": ("Conv", dict(auto_pad="SAME_UPPER", strides=[2, 1, 2]),
                          [_w(5, C, 3, 3, 2)], _NCDHW, _SIZES_5D),
    "conv3d_same_lower": ("Conv", dict(auto_pad="SAME_LOWER", strides=[2, 3, 1]),
                          [_w(6, C, 3, 2, 2)], _NCDHW, _SIZES_5D),
    "conv_transpose3d": ("ConvTranspose", dict(strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1]),
                         [_w(C, 3, 3, 2, 3)], _NCDHW, _SIZES_5D),
    "conv_transpose3d_same": ("ConvTranspose", dict(strides=[2, 1, 2], auto_pad="SAME_UPPER"),
                              [_w(C, 3, 3, 2, 3), _w(3)], _NCDHW, _SIZES_5D),
    # 3-d pooling: 2-d max pooling per kernel depth tap (maximum over the taps); sums as
    # a depthwise 3-d convolution of ones (over a mask of ones for the tap counts).
    "max_pool3d_pads": ("MaxPool", dict(pads=[1, 0, 1, 1, 0, 0], kernel_shape=[3, 3, 2],
                                        strides=[2, 1, 2]), [], _NCDHW, _SIZES_5D),
    "max_pool3d_same_upper": ("MaxPool", dict(auto_pad="SAME_UPPER", kernel_shape=[3, 3, 2],
                                              strides=[2, 1, 2]), [], _NCDHW, _SIZES_5D),
    "max_pool3d_dilated": ("MaxPool", dict(pads=[1, 0, 1, 1, 0, 0], kernel_shape=[2, 2, 2],
                                           strides=[1, 1, 2], dilations=[2, 1, 2]), [],
                           _NCDHW, _SIZES_5D),
    "avg_pool3d_pads": ("AveragePool", dict(pads=[1, 1, 0, 1, 1, 0], kernel_shape=[3, 3, 2],
                                            strides=[2, 1, 2]), [], _NCDHW, _SIZES_5D),
    "avg_pool3d_count_pad": ("AveragePool", dict(pads=[1, 1, 0, 1, 1, 0],
                                                 kernel_shape=[3, 3, 2], strides=[2, 1, 2],
                                                 count_include_pad=1), [], _NCDHW, _SIZES_5D),
    "avg_pool3d_same_lower": ("AveragePool", dict(auto_pad="SAME_LOWER", kernel_shape=[3, 3, 2],
                                                  strides=[2, 1, 2]), [], _NCDHW, _SIZES_5D),
    "lp_pool3d": ("LpPool", dict(pads=[1, 1, 0, 1, 1, 0], kernel_shape=[3, 3, 2],
                                 strides=[2, 1, 2]), [], _NCDHW, _SIZES_5D),
    # 3-d ceil mode (explicit pads): end pads grown by stride - 1, the windows cut to
    # ceil mode's count at run time (the third size drops a window starting in the pad).
    "max_pool3d_ceil": ("MaxPool", dict(pads=[1, 0, 0, 0, 1, 1], kernel_shape=[2, 3, 2],
                                        strides=[2, 2, 3], ceil_mode=1), [], _NCDHW,
                        _SIZES_5D + [(1, C, 4, 3, 7)]),
    "avg_pool3d_ceil": ("AveragePool", dict(pads=[0, 1, 1, 1, 0, 1], kernel_shape=[3, 2, 2],
                                            strides=[2, 3, 2], ceil_mode=1), [], _NCDHW,
                        _SIZES_5D + [(1, C, 4, 3, 7)]),
    "avg_pool3d_ceil_count_pad": ("AveragePool", dict(pads=[1, 0, 1, 1, 1, 0],
                                                      kernel_shape=[3, 2, 3], strides=[2, 3, 2],
                                                      ceil_mode=1, count_include_pad=1), [],
                                  _NCDHW, _SIZES_5D + [(1, C, 4, 3, 7)]),
    "lp_pool3d_ceil": ("LpPool", dict(pads=[1, 1, 0, 0, 1, 1], kernel_shape=[2, 2, 3],
                                      strides=[3, 2, 2], ceil_mode=1, p=3), [], _NCDHW,
                       _SIZES_5D + [(1, C, 4, 3, 7)]),
    # 3-d MaxPool's Indices: one strided slice per (depth, row, column) kernel tap.
    "max_pool3d_indices": ("MaxPool", dict(pads=[1, 0, 1, 0, 1, 0], kernel_shape=[2, 3, 2],
                                           strides=[2, 1, 2], dilations=[1, 1, 2]), [],
                           _NCDHW, _SIZES_5D, _WITH_INDICES),
    "max_pool3d_indices_column_major": ("MaxPool", dict(kernel_shape=[2, 2, 3],
                                                        strides=[1, 2, 2], storage_order=1),
                                        [], _NCDHW, _SIZES_5D, _WITH_INDICES),
    "max_pool3d_indices_ceil": ("MaxPool", dict(pads=[1, 0, 0, 0, 1, 1], kernel_shape=[2, 3, 2],
                                                strides=[2, 2, 3], ceil_mode=1), [], _NCDHW,
                                _SIZES_5D + [(1, C, 4, 3, 7)], _WITH_INDICES),
    "max_pool3d_indices_same_lower": ("MaxPool", dict(auto_pad="SAME_LOWER",
                                                      kernel_shape=[3, 2, 2], strides=[2, 3, 1]),
                                      [], _NCDHW, _SIZES_5D, _WITH_INDICES),
    "avg_pool_same_upper": ("AveragePool", dict(auto_pad="SAME_UPPER", kernel_shape=[3, 3],
                                                strides=[2, 2]), [], _NCHW, _SIZES_4D),
}

# Window sums (LpPool, AveragePool counting padding, 3-d AveragePool, SAME_LOWER with
# strides over the kernel) with a channel count only run time knows: the channels moved
# into the batch. The channel count changes between the shapes run.
for _name in ["lp_pool", "lp_pool_1d", "lp_pool_ceil", "lp_pool_same_lower", "lp_pool3d",
              "lp_pool3d_ceil", "avg_pool3d_pads", "avg_pool3d_ceil_count_pad",
              "avg_pool3d_same_lower", "avg_pool_same_upper_count_pad",
              "avg_pool_1d_count_pad", "lp_pool_same_lower_stride_over_kernel", "lrn"]:
    _case = CASES[_name]
    CASES[_name + "_dynamic_channels"] = _case[:3] + (
        ["C" if d == C else d for d in _case[3]],
        [s[:1] + (3 if k % 2 else C,) + s[2:] for k, s in enumerate(_case[4])]) + _case[5:]

# Every case with a static channel count once more with that count declared dynamic (the
# same shapes run): no handler needs it static.
for _name in [n for n, c in CASES.items() if C in c[3] and not n.endswith("_dynamic_channels")]:
    _case = CASES[_name]
    CASES[_name + "_channels_declared_dynamic"] = _case[:3] + (
        ["C" if d == C else d for d in _case[3]],) + _case[4:]


def _options(name):
    case = CASES[name]
    return dict(dict(outputs=["y"], out_type=TensorProto.FLOAT, opset=18),
                **(case[5] if len(case) > 5 else {}))


def _model(name):
    op, attrs, inits, dims = CASES[name][:4]
    opts = _options(name)
    names = [f"i{k}" for k in range(len(inits))]
    types = opts["out_type"] if isinstance(opts["out_type"], list) else \
        [opts["out_type"]] * len(opts["outputs"])
    node = helper.make_node(op, ["x"] + names, opts["outputs"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info(o, t, None) for o, t in zip(opts["outputs"], types)],
        [numpy_helper.from_array(a, n) for a, n in zip(inits, names)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opts["opset"])])


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamic_dims_op(name, tmp_path):
    MNN = pytest.importorskip("MNN")
    model = _model(name)
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    outputs = _options(name)["outputs"]
    graph = load_onnx(model)
    ours = mnn_nn.load_module_from_file(dst, ["x"], outputs)
    wheel = MNN.nn.load_module_from_file(dst, ["x"], outputs)
    rng = np.random.default_rng(0)
    for shape in CASES[name][4]:
        x = rng.standard_normal(shape).astype(np.float32)
        want = run_ort(model, {"x": x})
        in_memory = graph.run({"x": x})
        from_file = ours.forward([F.const(x)])
        theirs = wheel.forward([MNN.expr.const(x, list(shape), MNN.expr.NCHW)])
        for k, out in enumerate(outputs):
            np.testing.assert_allclose(in_memory[out], want[out], rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(np.asarray(from_file[k].read()), want[out],
                                       rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(np.array(theirs[k].read()), want[out], rtol=1e-4,
                                       atol=1e-5)


def test_output_shape_on_dynamic_spatial_dims_needs_static_shapes(tmp_path):
    """ConvTranspose's output_shape with dynamic H/W (the padding follows from the input
    size): the conversion fails naming --inputConfigFile, and converts and runs with the
    shapes given there."""
    model = _model("conv_transpose_output_shape")
    for k, name in ((2, "H"), (3, "W")):
        model.graph.input[0].type.tensor_type.shape.dim[k].dim_param = name
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                             "--bizCode", "test"])
    assert status != 0 and "inputConfigFile" in err.getvalue()
    config = os.path.join(tmp_path, "input.txt")
    with open(config, "w") as fh:
        fh.write(f"input_names = x\ninput_dims = 2x{C}x10x12\n")
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test", "--inputConfigFile", config]) == 0
    x = np.random.default_rng(0).standard_normal((2, C, 10, 12)).astype(np.float32)
    got = np.asarray(mnn_nn.load_module_from_file(dst, ["x"], ["y"]).forward(F.const(x))
                     .read())
    np.testing.assert_allclose(got, run_ort(model, {"x": x})["y"], rtol=1e-4, atol=1e-5)


def _same_lower_pads(size, kernel, stride):
    """ONNX's SAME_LOWER pads (begin, end) of one axis."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total - total // 2, total // 2


def _same_lower_case(name, shape, tmp_path):
    """The case ``name`` with a 2x3 kernel and 3x4 strides, converted to a file:
    ``(model, .mnn path, input of shape)``."""
    model = _model(name)
    attrs = {a.name: a for a in model.graph.node[0].attribute}
    attrs["kernel_shape"].ints[:] = [2, 3]
    attrs["strides"].ints[:] = [3, 4]
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return model, dst, x


def _check_three_ways(model, dst, x, want, MNN, rtol, atol=0.0):
    """In memory, through our file loader and through the real wheel, against ``want``."""
    np.testing.assert_allclose(load_onnx(model).run({"x": x})["y"], want, rtol=rtol,
                               atol=atol)
    got = mnn_nn.load_module_from_file(dst, ["x"], ["y"]).forward(F.const(x))
    np.testing.assert_allclose(np.asarray(got.read()), want, rtol=rtol, atol=atol)
    wheel = MNN.nn.load_module_from_file(dst, ["x"], ["y"])
    theirs = wheel.forward(MNN.expr.const(x, list(x.shape), MNN.expr.NCHW))
    np.testing.assert_allclose(np.array(theirs.read()), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape", [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)])
def test_max_pool_same_lower_stride_over_kernel(shape, tmp_path):
    """MaxPool SAME_LOWER with strides over the kernel on dynamic dims (the input padded
    with -inf and cut with run-time bounds), against torch's max_pool2d of the input
    padded by ONNX's SAME_LOWER rule (onnxruntime refuses these pads)."""
    torch = pytest.importorskip("torch")
    MNN = pytest.importorskip("MNN")
    model, dst, x = _same_lower_case("max_pool_same_lower", shape, tmp_path)
    (top, bottom), (left, right) = (_same_lower_pads(shape[2], 2, 3),
                                    _same_lower_pads(shape[3], 3, 4))
    padded = torch.nn.functional.pad(torch.tensor(x), (left, right, top, bottom),
                                     value=float("-inf"))
    want = torch.nn.functional.max_pool2d(padded, (2, 3), (3, 4)).numpy()
    _check_three_ways(model, dst, x, want, MNN, rtol=1e-6)


def test_scatter_elements_indices_smaller_than_data_static():
    """ScatterElements writes only where indices has entries, also with static shapes
    (numpy's put_along_axis would broadcast the indices over the other axes)."""
    model = _model("scatter_elements_part")
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    got = load_onnx(model).run({"x": x})["y"]
    np.testing.assert_allclose(got, run_ort(model, {"x": x})["y"], rtol=1e-6)


# Two-input models: data and indices/updates both with dynamic dims.
_TWO_INPUTS = {
    # A dynamic batch in data and indices.
    "gather_nd_dynamic_batch": ("GatherND", dict(batch_dims=1), ["N", 3, 4], ["N", 2, 2],
                                TensorProto.INT64,
                                [((2, 3, 4), (2, 2, 2)), ((5, 3, 4), (5, 2, 2))]),
    # Updates whose trailing (slice) dims are dynamic, with more batch axes than index
    # components (laid out again from the run-time shape).
    "scatter_nd_dynamic_updates": ("ScatterND", {}, [5, "S", "D"], [2, 2, "S", "D"],
                                   TensorProto.FLOAT, [((5, 3, 4), (2, 2, 3, 4)),
                                                       ((5, 5, 2), (2, 2, 5, 2))]),
}


def _two_input_model(name):
    op, attrs, data_dims, second_dims, second_type, _ = _TWO_INPUTS[name]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, data_dims),
              helper.make_tensor_value_info("u", second_type, second_dims)]
    if op == "ScatterND":
        init = [numpy_helper.from_array(np.array([[[0], [1]], [[4], [2]]], np.int64), "i")]
        node = helper.make_node(op, ["x", "i", "u"], ["y"], **attrs)
    else:
        init = []
        node = helper.make_node(op, ["x", "u"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("name", sorted(_TWO_INPUTS))
def test_dynamic_dims_two_inputs(name, tmp_path):
    MNN = pytest.importorskip("MNN")
    model = _two_input_model(name)
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    graph = load_onnx(model)
    ours = mnn_nn.load_module_from_file(dst, ["x", "u"], ["y"])
    wheel = MNN.nn.load_module_from_file(dst, ["x", "u"], ["y"])
    rng = np.random.default_rng(0)
    for x_shape, u_shape in _TWO_INPUTS[name][5]:
        x = rng.standard_normal(x_shape).astype(np.float32)
        if _TWO_INPUTS[name][4] == TensorProto.INT64:
            u = rng.integers(0, min(x_shape[1:3]), u_shape).astype(np.int64)
            u_wheel = MNN.expr.const(u.astype(np.int32), list(u_shape), MNN.expr.NCHW,
                                     MNN.expr.int)
        else:
            u = rng.standard_normal(u_shape).astype(np.float32)
            u_wheel = MNN.expr.const(u, list(u_shape), MNN.expr.NCHW)
        want = run_ort(model, {"x": x, "u": u})["y"]
        np.testing.assert_allclose(graph.run({"x": x, "u": u})["y"], want, rtol=1e-6)
        got = ours.forward([F.const(x), F.const(u)])[0]
        np.testing.assert_allclose(np.asarray(got.read()), want, rtol=1e-6)
        theirs = wheel.forward([MNN.expr.const(x, list(x_shape), MNN.expr.NCHW), u_wheel])[0]
        np.testing.assert_allclose(np.array(theirs.read()), want, rtol=1e-6)


@pytest.mark.parametrize("name, change, message", [
    ("compress", lambda m: m.graph.initializer[0].dims.insert(0, 1), "condition must be 1-d"),
    ("lp_pool", lambda m: m.graph.node[0].attribute.append(helper.make_attribute("p", 0)),
     "p must be positive"),
])
def test_bad_dynamic_nodes_name_what_is_wrong(name, change, message):
    model = _model(name)
    change(model)
    with pytest.raises(ConvertError, match=message):
        load_onnx(model)


@pytest.mark.parametrize("shape", [(1, C, 9, 12), (2, C, 16, 7), (1, C, 8, 13)])
def test_average_pool_same_lower_stride_over_kernel(shape, tmp_path):
    """AveragePool SAME_LOWER (padding not counted) with strides over the kernel on
    dynamic dims: window sums over the padded input divided by those over a mask of
    ones; against torch's window sums (avg_pool2d counting padding, times the kernel
    size) of the input and of ones, padded by ONNX's SAME_LOWER rule (onnxruntime
    refuses these pads)."""
    torch = pytest.importorskip("torch")
    MNN = pytest.importorskip("MNN")
    model, dst, x = _same_lower_case("avg_pool_same_lower", shape, tmp_path)
    (top, bottom), (left, right) = (_same_lower_pads(shape[2], 2, 3),
                                    _same_lower_pads(shape[3], 3, 4))

    def sums(a):
        padded = torch.nn.functional.pad(torch.tensor(a), (left, right, top, bottom))
        return torch.nn.functional.avg_pool2d(padded, (2, 3), (3, 4)).numpy() * 6

    want = sums(x) / sums(np.ones_like(x))
    _check_three_ways(model, dst, x, want, MNN, rtol=1e-5, atol=1e-6)


def test_split_sizes_on_dynamic_axis_refuse_another_size(tmp_path):
    """Split's constant sizes on a dynamic axis: an axis that does not hold their sum at
    run time fails (onnxruntime refuses it too) instead of giving parts of the wrong
    size, in memory, through our file and in the real wheel."""
    from mnn.express.errors import OpError

    MNN = pytest.importorskip("MNN")
    model = _model("split_sizes_dynamic_axis")
    x = np.zeros((1, C, 6, 3), np.float32)
    with pytest.raises(Exception):
        run_ort(model, {"x": x})
    with pytest.raises(OpError, match=r"cannot reshape 72 elements into \[1, 4, 5, 3\]"):
        load_onnx(model).run({"x": x})
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    outputs = ["y", "z", "u"]
    with pytest.raises(OpError, match="cannot reshape 72 elements"):
        mnn_nn.load_module_from_file(dst, ["x"], outputs).forward([F.const(x)])
    wheel = MNN.nn.load_module_from_file(dst, ["x"], outputs)
    # The wheel reports the failed Reshape and returns no outputs.
    assert wheel.forward([MNN.expr.const(x, list(x.shape), MNN.expr.NCHW)]) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_partial_shapes_agree_with_onnxruntime(name):
    """What the converter knows of each output's shape before run time (the rank, the
    static dims: later handlers build on it) agrees with onnxruntime's outputs at every
    shape run: a static dim is the same in all of them. Pooling, convolution, Split, Pad
    and LRN results know their rank (ceil mode, 3-d and dynamic channels included).
    (GroupNormalization at opset 18 and DepthToSpace DCR with a dynamic channel count do
    not: the inference's probe size does not divide into groups or blocks.)"""
    from mnn.express.graph import partial_shape

    if name.startswith("squeeze_no_axes"):
        pytest.skip("Squeeze without axes: the rank assumes dynamic dims over 1 (README), "
                    "and these cases run a dynamic dim of 1 on purpose")
    model = _model(name)
    graph = load_onnx(model)
    outputs = _options(name)["outputs"]
    known = [partial_shape(graph.outputs[o]) for o in outputs]
    if CASES[name][0] in ("Conv", "MaxPool", "AveragePool", "LpPool", "Split", "Pad",
                          "LRN") or name == "group_norm_channels_from_scale":
        assert all(k is not None for k in known), known
    rng = np.random.default_rng(0)
    for shape in CASES[name][4]:
        want = run_ort(model, {"x": rng.standard_normal(shape).astype(np.float32)})
        for out, k in zip(outputs, known):
            if k is None:
                continue
            assert len(k) == want[out].ndim, (out, k, want[out].shape)
            for d, real in zip(k, want[out].shape):
                assert d < 0 or d == real, (out, k, want[out].shape)



def test_if_on_a_static_dim_of_a_dynamic_shape_folds(tmp_path):
    """``Shape -> Gather`` of a static dim is a constant even when other dims are dynamic
    (torch's ``x.size(1)``), so an ``If`` on it keeps only its branch (torch exports
    LocalResponseNorm's ``squeeze(1)`` as such an ``If``); a branch reading x could not
    capture it (its shape is only known at run time)."""
    MNN = pytest.importorskip("MNN")
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["c"], axis=0),
             helper.make_node("Equal", ["c", "one"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_branch,
                              else_branch=else_branch)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", C, "H"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1], np.int64), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    src, dst = os.path.join(tmp_path, "m.onnx"), os.path.join(tmp_path, "m.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    assert mnnconvert(["-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                       "--bizCode", "test"]) == 0
    ours = mnn_nn.load_module_from_file(dst, ["x"], ["y"])
    wheel = MNN.nn.load_module_from_file(dst, ["x"], ["y"])
    for shape in [(1, C, 5), (3, C, 2)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        want = run_ort(model, {"x": x})["y"]
        np.testing.assert_allclose(load_onnx(model).run({"x": x})["y"], want)
        np.testing.assert_allclose(np.asarray(ours.forward(F.const(x)).read()), want)
        theirs = wheel.forward(MNN.expr.const(x, list(shape), MNN.expr.NCHW))
        np.testing.assert_allclose(np.array(theirs.read()), want)
