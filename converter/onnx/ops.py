"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import (control_flow, loss, math, nn, quant, reduce, rnn, selection,  # noqa: F401
               sequence, spatial, tensor)
