"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import (control_flow, loss, math, nn, reduce, rnn, selection, sequence,  # noqa: F401
               spatial, tensor)
