"""Imports every handler family so their ``@onnx_op`` registrations run (explicitly)."""
from . import (  # noqa: F401
               control_flow,
               detection,
               loss,
               math,
               nn,
               quant,
               quant_linear,
               reduce,
               rnn,
               selection,
               sequence,
               signal,
               spatial,
               tensor,
               training,
               unpool,
)
