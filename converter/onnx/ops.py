"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import (control_flow, detection, loss, math, nn, quant, reduce, rnn,  # noqa: F401
               selection, sequence, spatial, tensor)
