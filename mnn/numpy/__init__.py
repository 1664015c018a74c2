"""mnn.numpy: numpy's functions over Vars (MNN.numpy's surface, every name working).

``import mnn.numpy as np`` and write numpy code: functions take Vars, numpy arrays of
any common dtype (uint8 included), lists and scalars, and return Vars (lazy values of
the express graph; ``np.asarray(var)`` or ``var.read()`` gives the numbers). Vars also
get numpy's methods (``x.sum()``, ``x.reshape(2, 3)``, ``x.T``, ...).

Where this differs from numpy, and why
--------------------------------------
- Default dtypes are MNN.numpy's: Python floats give float32 and Python ints int32;
  ``eye``/``arange`` of floats/``linspace`` give float32 (numpy: float64/int64).
  ``zeros``/``ones``/``empty`` give float32, MNN.numpy's documented default (the wheel
  actually returns int32 there, from filling with the Python int 0). numpy arrays keep
  their dtype; ``dtype=float`` means float64.
- Means of integers are float64 as in numpy (MNN.numpy casts to float32 first).
- Index and count results (``argsort``, ``nonzero``, ``unique``'s extras,
  ``searchsorted``, ``bincount``, ``count_nonzero``) are int32, MNN's integer type.
- Sums and products (also cumulative) of bools and integers are int64, as numpy's
  (numpy gives uint64 for unsigned inputs; Vars hold no uint64). Means, variances and
  quantiles of integers are float64 as in numpy.
- Small integer inputs to float functions (``exp(uint8)``) compute in float32: numpy
  uses float16, which Vars do not hold. ``reciprocal`` of integers is the true value
  (the express core's rule), where numpy truncates to 0.
- Reductions over all axes return 0-d Vars, not Python or numpy scalars (they stay in
  the graph, so they can be differentiated); ``float(v)``/``v.item()`` gives the number.
  ``array_equal``/``array_equiv``/``allclose`` return Python bools, as numpy does.
- ``empty``/``empty_like``/``pad(mode='empty')`` give zeros (numpy: arbitrary values).
- In-place functions (``put``, ``putmask``, ``place``, ``fill_diagonal``,
  ``put_along_axis``, ``copyto``, ``random.shuffle``, ``Var.fill``) need a Var and
  rebind it to the edited values (``Var.replace``), as MNN's ``Var.fill`` does: Vars
  built from it earlier see the new values too.
- ``out=`` arguments are refused with a TypeError: Vars are values.
- ``Var.sort``/``Var.partition``/``Var.put`` edit in place like numpy's methods (the
  Var is rebound) and also return the Var, so MNN's ``b = a.sort()`` works too.
- There is no complex dtype: ``sort_complex`` sorts real values, ``real_if_close``
  returns its input, and ``linalg`` has no ``eig``/``eigvals`` (use ``eigh``).
- Not supported, with a clear error: callable ``pad`` modes, weighted quantiles.
- ``random`` draws from numpy's ``RandomState`` (so ``seed(s)`` reproduces
  ``numpy.random.RandomState(s)``) and ``randn`` is a true normal (MNN's is uniform).
"""
import math as _math

from . import creation, functional, indexing, logic, manipulation, math, padding, products
from . import linalg, random  # noqa: F401 - subpackages, public as mnn.numpy.linalg/random
from . import sorting, statistics
from ..express import dtypes as _dt

# numpy's type names; MNN.numpy exposes these as MNN dtype members.
uint8 = _dt.uint8
int8 = _dt.int8
int32 = _dt.int32
int64 = _dt.int64
float32 = _dt.float32
float64 = _dt.float64
bool_ = _dt.bool

pi = _math.pi
e = _math.e
inf = float("inf")
nan = float("nan")
newaxis = None

_FAMILIES = [creation, manipulation, math, logic, indexing, sorting, statistics, padding,
             products, functional]


def _export(modules, namespace):
    for module in modules:
        for name in module.__all__:
            namespace[name] = getattr(module, name)


_export(_FAMILIES, globals())

# numpy's array methods on Var; ``fill`` is also a function in MNN.numpy.
from .var_methods import fill  # noqa: E402, F401

# Computed from the families' lists so it cannot drift from them. ``math`` (our family
# module; the wheel's is Python's math) stays out so ``import *`` does not shadow it.
__all__ = sorted({name for module in _FAMILIES for name in module.__all__}  # noqa: PLE0605
                 | {"uint8", "int8", "int32", "int64", "float32", "float64", "bool_", "pi",
                    "e", "inf", "nan", "newaxis", "linalg", "random", "fill"})
