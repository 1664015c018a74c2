"""Small helpers shared by the handler families."""
import numpy as np

import mnn.express as F


def onnx_type(ctx, elem_type):
    """numpy dtype a Var holds for an ONNX element type number (error naming the node)."""
    from .loader import ConvertError, onnx_dtype_to_numpy, storage_dtype

    try:
        return storage_dtype(onnx_dtype_to_numpy(elem_type))
    except (ConvertError, TypeError) as exc:
        raise ctx.error(str(exc)) from None


def same_dtype_const(value, like):
    """A constant holding ``value`` in the dtype of Var ``like``."""
    return F.const(np.asarray(value, dtype=like.dtype))


def ints(value):
    """A constant int array (from a ctx value) as a list of Python ints."""
    return [int(v) for v in np.asarray(value).reshape(-1)]
