"""Dense layers: ``linear``, ``dropout``, ``batch_norm``, ``layer_norm``, ``embedding``.

Each pymnn factory (``nn.linear(...)``) returns a :class:`~mnn.nn.module.Module`; the
classes are exported too. Defaults and initialisers follow MNN's ``NN.cpp``.
"""
import numpy as np

from .. import express as F
from ..express.errors import MnnError
from . import init
from .module import Module

__all__ = ["linear", "dropout", "batch_norm", "layer_norm", "embedding", "trainable",
           "Linear", "Dropout", "BatchNorm", "LayerNorm", "Embedding"]


def trainable(value, name=None):
    """A trainable parameter Var holding a copy of ``value`` (an ndarray)."""
    var = F.const(np.asarray(value))
    var.fix_as_trainable()
    if name is not None:
        var.name = name
    return var


def _positive(value, what, layer):
    value = int(value)
    if value <= 0:
        raise MnnError(f"mnn: {layer}: {what} must be positive, got {value}")
    return value


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``[out, in]`` (MNN's layout)."""

    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__()
        self._type = "Linear"
        self.in_channels = _positive(in_channels, "in_channels", "linear")
        self.out_channels = _positive(out_channels, "out_channels", "linear")
        self.weight = trainable(init.xavier([self.out_channels, self.in_channels]))
        self.bias = trainable(init.constant([1, self.out_channels])) if bias else None

    def forward(self, x):
        """``[..., in]`` to ``[..., out]``."""
        x = F.to_var(x)
        if not x.shape or x.shape[-1] != self.in_channels:
            raise MnnError(f"mnn: linear({self.in_channels}, {self.out_channels}): input of "
                           f"shape {x.shape} needs last dimension {self.in_channels}")
        y = F.matmul(x, self.weight, transposeB=True)
        return y + self.bias if self.bias is not None else y


def linear(in_channels, out_channels, bias=True):
    """A fully connected layer (pymnn's ``nn.linear``).

    Parameters
    ----------
    in_channels, out_channels : int
    bias : bool
        Add a learned bias (zeros at start).

    Returns
    -------
    Module
        Weight ``[out, in]`` initialised with MNN's xavier filler.
    """
    return Linear(in_channels, out_channels, bias)


class Dropout(Module):
    """Zero each element with probability ``dropout_ratio`` and scale the rest by
    ``1 / (1 - dropout_ratio)``, in training mode only."""

    def __init__(self, dropout_ratio):
        super().__init__()
        self._type = "Dropout"
        ratio = float(dropout_ratio)
        if not 0.0 <= ratio < 1.0:
            raise MnnError(f"mnn: dropout: dropout_ratio must be in [0, 1), got {ratio}")
        self.dropout_ratio = ratio

    def forward(self, x):
        """``x`` with dropped elements zeroed (training) or unchanged (inference)."""
        x = F.to_var(x)
        if not self.is_training or self.dropout_ratio == 0.0:
            return x
        if x.dtype.kind != "f":
            raise MnnError(f"mnn: dropout needs a float input, got {x.dtype}")
        keep = init.generator().random(tuple(x.shape)) >= self.dropout_ratio
        mask = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - self.dropout_ratio))
        return x * F.const(mask)


def dropout(dropout_ratio):
    """A dropout layer (pymnn's ``nn.dropout``); identity after ``train(False)``."""
    return Dropout(dropout_ratio)


class BatchNorm(Module):
    """Batch normalisation over axis 1 with MNN's running-statistics rule.

    Training: normalise with the batch mean and (biased) variance, then update
    ``running = momentum * running + (1 - momentum) * batch`` (MNN's momentum is the
    weight of the old value; torch's is the weight of the new one). Inference: use the
    running statistics. MNN starts both running statistics at zero.
    """

    def __init__(self, channels, dims=4, momentum=0.99, epsilon=1e-5):
        super().__init__()
        self._type = "BatchNorm"
        self.channels = _positive(channels, "channels", "batch_norm")
        if dims not in (2, 3, 4):
            raise MnnError(f"mnn: batch_norm: dims must be 2, 3 or 4, got {dims}")
        self.dims = int(dims)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        shape = [1, self.channels] + [1] * (self.dims - 2)
        self._axes = [0] + list(range(2, self.dims))
        self.scale = trainable(init.constant(shape, 1.0))
        self.bias = trainable(init.constant(shape, 0.0))
        self.running_mean = F.const(init.constant(shape, 0.0))
        self.running_variance = F.const(init.constant(shape, 0.0))

    def forward(self, x):
        """Normalised ``x`` (batch statistics in training, running ones in inference)."""
        x = F.to_var(x)
        shape = x.shape
        if len(shape) != self.dims or shape[1] != self.channels:
            raise MnnError(f"mnn: batch_norm({self.channels}, dims={self.dims}): input of "
                           f"shape {shape} needs {self.dims} dims and {self.channels} "
                           "channels on axis 1")
        if x.data_format == F.NHWC:
            raise MnnError("mnn: batch_norm needs NCHW (or NC4HW4) input, got NHWC; "
                           "convert it first")
        if not self.is_training:
            rstd = F.rsqrt(self.running_variance + self.epsilon)
            return (x - self.running_mean) * (rstd * self.scale) + self.bias
        mean = F.reduce_mean(x, self._axes, keepdims=True)
        centered = x - mean
        var = F.reduce_mean(F.square(centered), self._axes, keepdims=True)
        out = centered * F.rsqrt(var + self.epsilon) * self.scale + self.bias
        # The running statistics become lazy Vars; the optimizer's step (or the next
        # read) computes them from this batch.
        m = self.momentum
        self.running_mean = self.running_mean * m + mean * (1.0 - m)
        self.running_variance = self.running_variance * m + var * (1.0 - m)
        return out


def batch_norm(channels, dims=4, momentum=0.99, epsilon=1e-5):
    """A batch normalisation layer (pymnn's ``nn.batch_norm``).

    Parameters
    ----------
    channels : int
        Size of axis 1.
    dims : int
        Rank of the input: 2 (``[N, C]``), 3 (``[N, C, L]``) or 4 (``[N, C, H, W]``).
    momentum : float
        Weight of the old running statistics (MNN's convention), default 0.99.
    epsilon : float
    """
    return BatchNorm(channels, dims, momentum, epsilon)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` axes (torch's ``LayerNorm``)."""

    def __init__(self, normalized_shape, epsilon=1e-5, elementwise_affine=True):
        super().__init__()
        self._type = "LayerNorm"
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = [normalized_shape]
        self.normalized_shape = [_positive(d, "normalized_shape", "layer_norm")
                                 for d in normalized_shape]
        self.epsilon = float(epsilon)
        if elementwise_affine:
            self.weight = trainable(init.constant(self.normalized_shape, 1.0))
            self.bias = trainable(init.constant(self.normalized_shape, 0.0))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        """``x`` normalised over its trailing ``normalized_shape`` axes."""
        x = F.to_var(x)
        n = len(self.normalized_shape)
        if x.shape[-n:] != self.normalized_shape:
            raise MnnError(f"mnn: layer_norm({self.normalized_shape}): input of shape "
                           f"{x.shape} does not end with {self.normalized_shape}")
        axes = list(range(x.ndim - n, x.ndim))
        return F.layer_norm(x, axes, self.weight, self.bias, self.epsilon)


def layer_norm(normalized_shape, epsilon=1e-5, elementwise_affine=True):
    """A layer normalisation layer over the trailing ``normalized_shape`` axes.

    Parameters
    ----------
    normalized_shape : int or sequence of int
    epsilon : float
    elementwise_affine : bool
        Learn a scale (ones) and shift (zeros) of ``normalized_shape``.
    """
    return LayerNorm(normalized_shape, epsilon, elementwise_affine)


class Embedding(Module):
    """Look up rows of a ``[num_embeddings, embedding_dim]`` table (initialised N(0, 1),
    as torch) by integer index."""

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self._type = "Embedding"
        self.num_embeddings = _positive(num_embeddings, "num_embeddings", "embedding")
        self.embedding_dim = _positive(embedding_dim, "embedding_dim", "embedding")
        self.weight = trainable(init.gaussian([self.num_embeddings, self.embedding_dim]))

    def forward(self, indices):
        """The rows of ``weight`` at ``indices``: shape ``indices.shape + [dim]``."""
        indices = F.to_var(indices)
        if indices.dtype.kind not in "iu":
            raise MnnError(f"mnn: embedding needs integer indices, got {indices.dtype}")
        if indices.expr.op is None and indices.expr.values is not None:
            # Known indices are checked now; computed ones that fall outside the table
            # select no row (the one-hot row is all zeros), never memory outside it.
            values = np.asarray(indices)
            if values.size and (values.min() < 0 or values.max() >= self.num_embeddings):
                raise MnnError(f"mnn: embedding({self.num_embeddings}, "
                               f"{self.embedding_dim}): index out of range "
                               f"[0, {self.num_embeddings}) in {indices.name}")
        # A one-hot product keeps the lookup differentiable with ops every backend has.
        flat = F.reshape(indices, [-1])
        table_ids = F.const(np.arange(self.num_embeddings, dtype=indices.dtype))
        onehot = F.cast(F.equal(F.unsqueeze(flat, [1]), table_ids), self.weight.dtype)
        rows = F.matmul(onehot, self.weight)
        return F.reshape(rows, list(indices.shape) + [self.embedding_dim])


def embedding(num_embeddings, embedding_dim):
    """An embedding table layer.

    Parameters
    ----------
    num_embeddings : int
        Number of rows (valid indices are ``0 .. num_embeddings - 1``).
    embedding_dim : int
        Length of each row.
    """
    return Embedding(num_embeddings, embedding_dim)
