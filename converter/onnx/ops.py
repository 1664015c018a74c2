"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import math, reduce, tensor  # noqa: F401
