"""mnn.nn: modules, layers and losses for training (pymnn's ``MNN.nn``).

``nn.Module`` is the base class; ``nn.linear``, ``nn.conv``, ``nn.batch_norm``,
``nn.dropout`` (MNN's layers, defaults and initialisers) and ``nn.conv_transpose``,
``nn.embedding``, ``nn.layer_norm``, ``nn.lstm``, ``nn.gru`` return Modules;
``nn.loss`` holds the losses.
"""
from . import init, loss
from .conv import Conv, ConvTranspose, conv, conv_transpose
from .layers import (BatchNorm, Dropout, Embedding, LayerNorm, Linear, batch_norm, dropout,
                     embedding, layer_norm, linear, trainable)
from .module import Module
from .loader import load_module, load_module_from_buffer, load_module_from_file
from .recurrent import GRU, LSTM, gru, lstm

__all__ = ["Module", "init", "loss", "linear", "dropout", "batch_norm", "layer_norm",
           "embedding", "trainable", "Linear", "Dropout", "BatchNorm", "LayerNorm",
           "Embedding", "conv", "conv_transpose", "Conv", "ConvTranspose", "lstm", "gru",
           "LSTM", "GRU", "load_module", "load_module_from_file", "load_module_from_buffer"]
