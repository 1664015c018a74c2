"""numpy's array methods on Var, attached explicitly one by one.

``mnn.express`` imports this module last, so every Var has them. Methods that edit an
array in place in numpy (``fill``, ``sort``, ``partition``, ``put``) rebind the Var to
the edited values (``Var.replace``) and also return it, so both numpy style
(``a.sort()``) and MNN style (``b = a.sort()``) work. Core attributes of Var (``item``,
``resize``, ``size``, ``shape``, ...) keep their express meaning.
"""
import numpy as np

from ..express.var import Var
from . import indexing as _idx
from . import logic as _logic
from . import manipulation as _man
from . import math as _math
from . import products as _prod
from . import sorting as _sort
from . import statistics as _stats
from ._util import npdtype

__all__ = ["fill"]


def fill(self, fill_value):
    """Set every element of the Var ``self`` to ``fill_value`` (``self`` is rebound)."""
    from .creation import full_like

    self.replace(full_like(Var(self.expr, self.index), fill_value))
    return self


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """A copy cast to ``dtype`` (numpy's conversion rules)."""
    from ..express.ops.elementwise import cast

    return cast(self, npdtype(dtype))


def _reshape(self, *shape, order="C"):
    """numpy's ``reshape`` (``a.reshape(2, 3)`` or ``a.reshape((2, 3))``; 0 is a real
    zero size)."""
    return _man.reshape(self, *shape, order=order)


def _transpose(self, *axes):
    """Axes permuted (reversed without arguments)."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
        axes = axes[0]
    return _man.transpose(self, axes if axes else None)


def _T(self):  # noqa: N802 - numpy's name
    """The transposed Var (axes reversed)."""
    return _man.transpose(self)


def _mT(self):  # noqa: N802
    """The last two axes swapped."""
    return _man.swapaxes(self, -1, -2)


def _flatten(self, order="C"):
    """A 1-d copy."""
    return _man.ravel(self, order)


def _copy(self, order="C"):
    """A copy as a new Var."""
    from .creation import copy

    return copy(self, order)


def _tolist(self):
    """The values as nested Python lists."""
    return np.asarray(self).tolist()


def _tobytes(self, order="C"):
    """The raw bytes of the values."""
    return np.asarray(self).tobytes(order)


def _nbytes(self):
    """Bytes the values occupy."""
    return self.size * self.dtype.itemsize


def _itemsize(self):
    """Bytes per element."""
    return self.dtype.itemsize


def _flat(self):
    """An iterator over the computed elements in flat order."""
    return np.asarray(self).flat


def _sort_inplace(self, axis=-1, kind=None, order=None):
    """Sort along ``axis`` (``self`` is rebound to the sorted values; returned too)."""
    self.replace(_sort.sort(Var(self.expr, self.index), axis, kind, order))
    return self


def _partition_inplace(self, kth, axis=-1, kind="introselect", order=None):
    """Partition around ``kth`` (``self`` is rebound; returned too)."""
    self.replace(_sort.partition(Var(self.expr, self.index), kth, axis, kind, order))
    return self


def _put(self, indices, values, mode="raise"):
    """Write ``values`` at flat ``indices`` (``self`` is rebound; returned too)."""
    _idx.put(self, indices, values, mode)
    return self


def _compress(self, condition, axis=None):
    """Slices along ``axis`` where ``condition`` is true."""
    return _idx.compress(condition, self, axis)


def _choose(self, choices, mode="raise"):
    """Per element, the value of ``choices[self]``."""
    return _idx.choose(self, choices, mode=mode)


Var.fill = fill
Var.astype = _astype
Var.reshape = _reshape
Var.transpose = _transpose
Var.T = property(_T)
Var.mT = property(_mT)
Var.flatten = _flatten
Var.ravel = _man.ravel
Var.squeeze = _man.squeeze
Var.swapaxes = _man.swapaxes
Var.repeat = _man.repeat
Var.copy = _copy
Var.tolist = _tolist
Var.tobytes = _tobytes
Var.nbytes = property(_nbytes)
Var.itemsize = property(_itemsize)
Var.flat = property(_flat)
Var.sum = _math.sum
Var.prod = _math.prod
Var.cumsum = _math.cumsum
Var.cumprod = _math.cumprod
Var.clip = _math.clip
Var.round = _math.around
Var.mean = _stats.mean
Var.std = _stats.std
Var.var = _stats.var
Var.max = _stats.amax
Var.min = _stats.amin
Var.ptp = _stats.ptp
Var.any = _logic.any
Var.all = _logic.all
Var.argmax = _sort.argmax
Var.argmin = _sort.argmin
Var.argsort = _sort.argsort
Var.argpartition = _sort.argpartition
Var.sort = _sort_inplace
Var.partition = _partition_inplace
Var.searchsorted = _sort.searchsorted
Var.nonzero = _idx.nonzero
Var.take = _idx.take
Var.put = _put
Var.compress = _compress
Var.choose = _choose
Var.diagonal = _idx.diagonal
Var.trace = _prod.trace
Var.dot = _prod.dot
