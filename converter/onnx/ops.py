"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import control_flow, math, nn, reduce, rnn, selection, spatial, tensor  # noqa: F401
