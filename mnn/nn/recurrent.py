"""Recurrent layers ``lstm`` and ``gru`` (one layer, one direction), built from express
ops so their gradients come from autodiff.

Layout and formulas are torch's (and ONNX's with torch's gate order): input
``[seq, batch, input_size]``; weights ``weight_ih [G*H, I]``, ``weight_hh [G*H, H]`` and
biases ``bias_ih``, ``bias_hh [G*H]`` with gates ``i, f, g, o`` (LSTM, G=4) or
``r, z, n`` (GRU, G=3); all initialised uniformly on ``[-1/sqrt(H), 1/sqrt(H)]``.
"""
import numpy as np

from .. import express as F
from ..express.errors import MnnError
from . import init
from .layers import trainable
from .module import Module

__all__ = ["lstm", "gru", "LSTM", "GRU"]


class _Recurrent(Module):
    gates = 1

    def __init__(self, input_size, hidden_size, bias, kind):
        super().__init__()
        self._type = kind
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        if self.input_size <= 0 or self.hidden_size <= 0:
            raise MnnError(f"mnn: {kind.lower()}: input_size and hidden_size must be "
                           f"positive, got {input_size} and {hidden_size}")
        k = 1.0 / np.sqrt(self.hidden_size)
        g = self.gates * self.hidden_size
        self.weight_ih = trainable(init.uniform([g, self.input_size], -k, k))
        self.weight_hh = trainable(init.uniform([g, self.hidden_size], -k, k))
        if bias:
            self.bias_ih = trainable(init.uniform([g], -k, k))
            self.bias_hh = trainable(init.uniform([g], -k, k))
        else:
            self.bias_ih = self.bias_hh = None

    def _check(self, x, state_shapes):
        x = F.to_var(x)
        if x.ndim != 3 or x.shape[2] != self.input_size:
            raise MnnError(f"mnn: {self._type.lower()}({self.input_size}, {self.hidden_size})"
                           f": input must be [seq, batch, {self.input_size}], got {x.shape}")
        batch = x.shape[1]
        out = []
        for name, s in state_shapes:
            if s is None:
                out.append(F.const(np.zeros((batch, self.hidden_size), x.dtype)))
                continue
            s = F.to_var(s)
            if s.shape != [batch, self.hidden_size]:
                raise MnnError(f"mnn: {self._type.lower()}: {name} must be "
                               f"[{batch}, {self.hidden_size}], got {s.shape}")
            out.append(s)
        return x, out

    def _input_projection(self, x):
        """``x @ weight_ih.T + bias_ih`` for every time step at once, split by step."""
        xw = F.matmul(x, self.weight_ih, transposeB=True)
        if self.bias_ih is not None:
            xw = xw + self.bias_ih
        return F.unstack(xw, 0)

    def _hidden_projection(self, h):
        hw = F.matmul(h, self.weight_hh, transposeB=True)
        return hw + self.bias_hh if self.bias_hh is not None else hw


class LSTM(_Recurrent):
    """Long short-term memory layer::

        i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')
    """

    gates = 4

    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__(input_size, hidden_size, bias, "LSTM")

    def forward(self, x, state=None):
        """Run over the sequence.

        Parameters
        ----------
        x : Var
            ``[seq, batch, input_size]``.
        state : tuple of (Var, Var), optional
            Initial ``(h, c)``, each ``[batch, hidden_size]``; zeros by default.

        Returns
        -------
        tuple
            ``(output [seq, batch, hidden_size], (h, c))``.
        """
        h0, c0 = (None, None) if state is None else state
        x, (h, c) = self._check(x, [("h", h0), ("c", c0)])
        outputs = []
        for xw in self._input_projection(x):
            i, f, g, o = F.split(xw + self._hidden_projection(h), [4], 1)
            c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
            h = F.sigmoid(o) * F.tanh(c)
            outputs.append(h)
        return F.stack(outputs, 0), (h, c)


class GRU(_Recurrent):
    """Gated recurrent unit layer (torch's formulation)::

        r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
        z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
        h' = (1 - z) * n + z * h
    """

    gates = 3

    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__(input_size, hidden_size, bias, "GRU")

    def forward(self, x, state=None):
        """Run over the sequence.

        Parameters
        ----------
        x : Var
            ``[seq, batch, input_size]``.
        state : Var, optional
            Initial ``h`` ``[batch, hidden_size]``; zeros by default.

        Returns
        -------
        tuple
            ``(output [seq, batch, hidden_size], h)``.
        """
        x, (h,) = self._check(x, [("h", state)])
        outputs = []
        for xw in self._input_projection(x):
            xr, xz, xn = F.split(xw, [3], 1)
            hr, hz, hn = F.split(self._hidden_projection(h), [3], 1)
            r = F.sigmoid(xr + hr)
            z = F.sigmoid(xz + hz)
            n = F.tanh(xn + r * hn)
            h = (1.0 - z) * n + z * h
            outputs.append(h)
        return F.stack(outputs, 0), h


def lstm(input_size, hidden_size, bias=True):
    """An LSTM layer (see :class:`LSTM`); call it as ``out, (h, c) = layer(x)``."""
    return LSTM(input_size, hidden_size, bias)


def gru(input_size, hidden_size, bias=True):
    """A GRU layer (see :class:`GRU`); call it as ``out, h = layer(x)``."""
    return GRU(input_size, hidden_size, bias)
