"""mnn.express: the lazy Var graph and MNN.expr's functions (public name ``mnn.expr``).

``import mnn.expr as F`` (or ``F = mnn.expr``) gives pymnn's ``MNN.expr`` surface: build
ops on Vars, read values with ``read()`` or ``np.asarray``.
"""
from . import dtypes as _dtypes_module
from . import formats as _formats_module
from .autodiff import grad
from .dtypes import (bool, double, dtype, float, float32, float64, int, int8, int32,  # noqa: A004
                     int64, uint8)
from .enums import (AVEPOOL, BILINEAR, CAFFE, MAXPOOL, NEAREST, SAME, VALID,  # noqa: F401
                    Interp_Method, Padding_Mode, Pooling_Mode)
from .enums import CONSTANT, REFLECT, SYMMETRIC, PadValue_Mode  # noqa: F401
from .errors import MnnError, OpError
from .formats import NC4HW4, NCHW, NHWC, NHWC4, data_format
from .graph import Expr
from .optable import all_ops, get_op
from .runtime import get_thread_number, lazy_eval, set_thread_number
from .var import Var, const, is_var, placeholder, scalar, to_var
from .io import get_inputs_and_outputs, load_as_dict, load_as_list, save  # .mnn files

# Op families, each registering its ops in the table on import. Every name in a module's
# __all__ is part of the public surface.
from .ops import creation, elementwise, linalg, movement, reduce, selection
from .ops import control_flow  # noqa: E402 - if/while with Subgraph attributes
from .ops import advanced_index, slicing
from .ops import arg_sort, gather_scatter, misc, padding, scan, spatial, utility  # noqa: E402

_OP_MODULES = [control_flow, elementwise, reduce, movement, selection, creation, linalg, slicing,
               advanced_index]
_OP_MODULES += [arg_sort, gather_scatter, misc, padding, scan, spatial, utility]

from .ops import onnx_deferred, onnx_math, onnx_scatter, onnx_shape  # noqa: E402 - converter's
_OP_MODULES += [onnx_math, onnx_shape, onnx_deferred, onnx_scatter]
from .ops import onnx_narrow, onnx_sequence  # noqa: E402 - sequences, narrow dtypes
_OP_MODULES += [onnx_narrow, onnx_sequence]
from .ops import nn_conv_transpose3d  # noqa: E402
_OP_MODULES += [nn_conv_transpose3d]
from .ops import onnx_bitcast, onnx_cache, onnx_col2im, onnx_fourier  # noqa: E402
_OP_MODULES += [onnx_bitcast, onnx_cache, onnx_col2im, onnx_fourier]
from .ops import onnx_deform_conv, onnx_grid_sample, onnx_image, onnx_tfidf  # noqa: E402
_OP_MODULES += [onnx_deform_conv, onnx_grid_sample, onnx_image, onnx_tfidf]
from .ops import onnx_tree  # noqa: E402
_OP_MODULES += [onnx_tree]
from .ops import (nn_activation, nn_conv, nn_detection, nn_layout, nn_norm,  # noqa: E402
                  nn_pool, nn_resize, nn_roi, nn_sample)
_OP_MODULES += [nn_activation, nn_conv, nn_detection, nn_layout, nn_norm, nn_pool, nn_resize,
                nn_roi, nn_sample]
from .ops import render  # noqa: E402 - MNN's nvdiffrast-style render ops
_OP_MODULES += [render]


def _export(modules, namespace):
    for module in modules:
        for name in module.__all__:
            namespace[name] = getattr(module, name)


_export(_OP_MODULES, globals())
del _dtypes_module, _formats_module

# numpy's array methods on Var (x.sum(), x.reshape(2, 3), x.T, ...), attached last.
from ..numpy import var_methods as _var_methods  # noqa: E402,F401
