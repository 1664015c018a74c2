"""mnn: MNN's inference and training engine as a Python package with Cython kernels.

Scripts written for pymnn run with ``import mnn as MNN``: ``MNN.expr`` (the lazy Var
graph), ``MNN.numpy``, ``MNN.nn``, ``MNN.optim``, ``MNN.data``, ``MNN.cv``.
"""
import importlib
import sys

from ._version import __version__
from . import express

# pymnn's public name for the express API is ``MNN.expr``; one module, two names.
expr = express
sys.modules[__name__ + ".expr"] = express

# pymnn's legacy session API: MNN.Interpreter, MNN.Tensor and their constants.
from .runtime.session import Interpreter, OpInfo, Session  # noqa: E402
from .runtime.tensor import (Halide_Type_Double, Halide_Type_Float, Halide_Type_Int,  # noqa: E402
                             Halide_Type_Int64, Halide_Type_String, Halide_Type_Uint8, Tensor,
                             Tensor_DimensionType_Caffe, Tensor_DimensionType_Caffe_C4,
                             Tensor_DimensionType_Tensorflow)

__all__ = ["__version__", "expr", "express", "show_config"]

# Subpackages that exist are importable as attributes (mnn.numpy, mnn.nn, ...) on first use.
_LAZY = ("numpy", "nn", "optim", "data", "cv", "format", "tools", "examples")


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name.startswith("CV"):  # pymnn's legacy image API: MNN.CVImageProcess, MNN.CV_Wrap_*...
        from .cv import imgproc

        if name in imgproc.__all__:
            return getattr(imgproc, name)
    raise AttributeError(f"module 'mnn' has no attribute {name!r}")


def show_config(file=None):
    """Print the build: version, compiled kernels, OpenMP, BLAS and thread count."""
    from ._config import config_lines

    print("\n".join(config_lines()), file=file)
