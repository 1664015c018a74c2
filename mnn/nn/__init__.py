"""mnn.nn: modules, layers and losses for training (pymnn's ``MNN.nn``).

``nn.Module`` is the base class; ``nn.linear``, ``nn.conv``, ``nn.batch_norm``,
``nn.dropout`` (MNN's layers, defaults and initialisers) and ``nn.conv_transpose``,
``nn.embedding``, ``nn.layer_norm``, ``nn.lstm``, ``nn.gru`` return Modules;
``nn.loss`` holds the losses.
"""
from . import init, loss
from .layers import (BatchNorm, Dropout, Embedding, LayerNorm, Linear, batch_norm, dropout,
                     embedding, layer_norm, linear, trainable)
from .module import Module
from .loader import load_module_from_buffer, load_module_from_file  # noqa: F401
from .recurrent import GRU, LSTM, gru, lstm

__all__ = ["Module", "init", "loss", "linear", "dropout", "batch_norm", "layer_norm",
           "embedding", "trainable", "Linear", "Dropout", "BatchNorm", "LayerNorm",
           "Embedding", "lstm", "gru", "LSTM", "GRU"]
