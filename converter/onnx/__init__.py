"""The ONNX frontend: ModelProto -> express graph (see :mod:`converter.onnx.loader`)."""
from .loader import (
                     ConvertError,
                     OnnxGraph,
                     UnsupportedOpsError,
                     convert_graph,
                     load_onnx,
                     unsupported_ops,
)
from .registry import supported_ops

__all__ = [
                     "ConvertError",
                     "OnnxGraph",
                     "UnsupportedOpsError",
                     "convert_graph",
                     "load_onnx",
                     "supported_ops",
                     "unsupported_ops",
]
