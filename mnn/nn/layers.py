"""Dense layers: ``linear``, ``dropout``, ``batch_norm``, ``layer_norm``, ``embedding``.

Each pymnn factory (``nn.linear(...)``) returns a :class:`~mnn.nn.module.Module`; the
classes are exported too. Defaults and initialisers follow MNN's ``NN.cpp``.
"""
import weakref

import numpy as np

from .. import express as F
from ..express.errors import MnnError
from ..express.var import Var
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
        shape = x.shape
        if not shape or shape[-1] != self.in_channels:
            raise MnnError(f"mnn: linear({self.in_channels}, {self.out_channels}): input of "
                           f"shape {shape} needs last dimension {self.in_channels}")
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
        self._stat_records = []

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
        self._record_update(out, mean, var)
        return out

    def _record_update(self, out, mean, var):
        # The running statistics become lazy Vars (reading them now gives the updated
        # values, as in MNN and torch; a second forward before a step chains onto the
        # first). The update is also recorded against this forward's output, computed
        # from the stored statistics: every optimizer step on a loss built from ``out``
        # applies it with that step's batch, so a graph built once and fed batch after
        # batch keeps updating, and graphs built ahead and stepped in turn each update.
        m = self.momentum
        exposed = (self.running_mean, self.running_variance)
        roots = self._stored_stats(exposed)
        recorded = (roots[0] * m + mean * (1.0 - m), roots[1] * m + var * (1.0 - m))
        if exposed[0] is roots[0] and exposed[1] is roots[1]:
            new = recorded
        else:
            new = (exposed[0] * m + mean * (1.0 - m), exposed[1] * m + var * (1.0 - m))
        records = [r for r in self._stat_records if r.alive()]
        records.append(_StatUpdate(self, out.expr, roots, recorded, new))
        # A few graphs may be stepped in turn (train / last short batch); older ones go.
        self._stat_records = records[-_MAX_STAT_RECORDS:]
        self.running_mean, self.running_variance = new

    def _stored_stats(self, exposed):
        """The source Vars holding the running statistics below ``exposed``."""
        for record in reversed(self._stat_records):
            if record.still_exposes(exposed):
                return record.roots
        for v in exposed:
            if v.expr.op is not None:
                v.fix_as_const()  # computed elsewhere: start from its value
        return exposed

    def _own_state_updates(self):
        return [r for r in self._stat_records if r.alive()]

    def __getstate__(self):
        # clone() deep-copies the module: recorded updates belong to this one's graphs.
        state = dict(self.__dict__)
        state["_stat_records"] = []
        return state


# Recorded running-statistics updates kept per batch norm layer.
_MAX_STAT_RECORDS = 4


class _StatUpdate:
    """A batch norm forward's running-statistics update, applied by optimizer steps.

    Attributes
    ----------
    anchor_id : int
        Id of the forward's output Expr: the update belongs to losses computed from it.
    roots : tuple of Var
        The stored (source) running mean and variance.
    exprs : tuple of Expr
        The Exprs computing the updated mean and variance from ``roots`` and the batch.
    exposed : tuple of Var
        The lazy Vars the layer exposed as its running statistics after the forward.
    """

    __slots__ = ("anchor", "anchor_id", "exposed", "exposed_exprs", "exprs", "module",
                 "momentum", "roots")

    def __init__(self, module, anchor, roots, recorded, exposed):
        self.module = module
        self.anchor = weakref.ref(anchor)  # the record dies with the graph using it
        self.anchor_id = anchor.id
        self.roots = roots
        self.exprs = tuple(v.expr for v in recorded)
        self.exposed = exposed
        self.exposed_exprs = tuple(v.expr for v in exposed)
        self.momentum = module.momentum

    def still_exposes(self, current):
        """True while ``current`` are this forward's lazy statistics, unchanged (not
        fixed, written or stepped since)."""
        return all(c is v and v.expr is e
                   for c, v, e in zip(current, self.exposed, self.exposed_exprs))

    def alive(self):
        """False once no graph uses the forward's output."""
        return self.anchor() is not None

    def outputs(self):
        """Vars computing the updated mean and variance (fresh Vars of the recorded
        Exprs: the exposed ones may have been turned into constants by an earlier
        step)."""
        return [Var(e, 0) for e in self.exprs]

    def apply(self, values, before):
        """Store the statistics computed from ``outputs()``.

        Parameters
        ----------
        values : list of ndarray
            The values of ``outputs()``, computed from the roots' values ``before``.
        before : dict
            ``id(root Expr) -> value`` when ``values`` were computed. Several forwards
            in one loss update in turn: with ``r`` the stored value meanwhile,
            ``r_new = value + momentum * (r - before)``.
        """
        for root, shown, shown_expr, value in zip(self.roots, self.exposed,
                                                  self.exposed_exprs, values):
            current = root.expr.values[0]
            old = before[id(root.expr)]
            if current is not old:
                value = value + self.momentum * (current - old)
            root.expr.set_source_value(np.array(value, dtype=root.dtype, copy=True))
            if shown.expr is shown_expr:
                # Whoever holds the lazy Var now holds the stored value.
                shown.replace(root)
        self.module.running_mean, self.module.running_variance = self.roots


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
