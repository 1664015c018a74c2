"""Var utilities of MNN.expr: ``eltwise_{sum,sub,prod,max}``, ``clone``, ``convert``,
``gc`` and ``randomuniform``."""
import gc as _pygc

import numpy as np

from ..errors import OpError
from ..formats import NC4HW4, NCHW, NHWC, is_channels_last
from ..formats import data_format as _data_format
from ..graph import Expr, apply
from ..optable import OpDef, register
from ..var import Var, const, to_var

__all__ = [
    "clone",
    "convert",
    "eltwise_max",
    "eltwise_prod",
    "eltwise_sub",
    "eltwise_sum",
    "gc",
    "randomuniform",
]


# -- eltwise_* -----------------------------------------------------------------------------

def _no_coeff(name, coeff):
    if coeff is not None and len(coeff):
        raise OpError(f"{name}: coefficients apply to eltwise_sum only, got {list(coeff)}")


def eltwise_sum(x, y, coeff=[]):  # noqa: B006 - MNN's default, never mutated
    """``x + y``, or ``coeff[0] * x + coeff[1] * y`` when two coefficients are given
    (MNN's Eltwise SUM)."""
    from .elementwise import add, multiply

    if coeff is not None and len(coeff):
        if len(coeff) != 2:
            raise OpError(f"eltwise_sum: needs 2 coefficients (one per input), got "
                          f"{list(coeff)}")
        return add(multiply(x, float(coeff[0])), multiply(y, float(coeff[1])))
    return add(x, y)


def eltwise_sub(x, y, coeff=[]):  # noqa: B006
    """``x - y`` (MNN's Eltwise SUB)."""
    from .elementwise import subtract

    _no_coeff("eltwise_sub", coeff)
    return subtract(x, y)


def eltwise_prod(x, y, coeff=[]):  # noqa: B006
    """``x * y`` (MNN's Eltwise PROD)."""
    from .elementwise import multiply

    _no_coeff("eltwise_prod", coeff)
    return multiply(x, y)


def eltwise_max(x, y, coeff=[]):  # noqa: B006
    """``maximum(x, y)`` (MNN's Eltwise MAX)."""
    from .elementwise import maximum

    _no_coeff("eltwise_max", coeff)
    return maximum(x, y)


# -- clone -----------------------------------------------------------------------------------

def clone(x, deepCopy=False):
    """A new Var for ``x``'s value.

    With ``deepCopy`` the value is computed now and copied into a constant (later writes
    to ``x``'s inputs do not reach it). Without, the clone is a second handle on the
    same computation: it follows writes to the inputs, but ``fix_as_const``/``replace``
    on ``x`` leave it alone.
    """
    x = to_var(x)
    if deepCopy:
        return const(x.read(), data_format=x.data_format, dtype=x.dtype)
    return Var(x.expr, x.index)


# -- convert ---------------------------------------------------------------------------------

def _convert_infer(metas, perm):
    shape = metas[0].shape
    if perm and len(perm) != len(shape):
        raise OpError(f"needs a {len(perm)}-d input to change layout, got {len(shape)}-d")
    return [(tuple(shape[p] for p in perm) if perm else shape, metas[0].dtype)]


def _convert_compute(arrays, perm):
    x = arrays[0]
    return np.ascontiguousarray(np.transpose(x, perm)) if perm else x


def _convert_grad(inputs, outputs, grads, perm):
    back = tuple(int(p) for p in np.argsort(perm)) if perm else ()
    return [apply("convert", [grads[0]], perm=back)[0]]


register(OpDef("convert", _convert_infer, _convert_compute, _convert_grad))


def convert(x, format):
    """Relabel ``x`` with data ``format``, moving the channel axis when it changes side.

    NCHW and NC4HW4 share a logical layout (NC4HW4 is a label here, see DESIGN.md), so
    converting between them only changes the label; to or from NHWC the channel axis
    moves (axis 1 <-> last axis), for inputs of at least 3 dimensions.
    """
    x = to_var(x)
    fmt = _data_format(format)
    if fmt not in (NCHW, NHWC, NC4HW4):
        raise OpError(f"convert: format must be NCHW, NHWC or NC4HW4, got {format!r}")
    src_last = is_channels_last(x.data_format)
    dst_last = is_channels_last(fmt)
    nd = x.ndim
    perm = ()
    if src_last != dst_last and nd >= 3:
        if dst_last:
            perm = (0,) + tuple(range(2, nd)) + (1,)
        else:
            perm = (0, nd - 1) + tuple(range(1, nd - 1))
    out = apply("convert", [x], perm=perm)[0]
    out.expr.data_format = fmt
    return out


# -- gc --------------------------------------------------------------------------------------

def gc(full=True):
    """Free memory held by graphs.

    A graph nobody references is freed as soon as its last Var goes (Exprs hold their
    output Vars weakly); graphs caught in other reference cycles (a Var stored in an
    object that refers back to it, say) wait for Python's cycle collector, which ``gc``
    runs. With ``full`` (MNN's ``FULL``; ``full=False`` is ``PART``) it also drops the
    cached values of every op still alive: they are recomputed on their next read.
    Values of constants, placeholders and trainables are kept.

    Returns
    -------
    int
        The number of op results whose cached values were dropped.
    """
    _pygc.collect()
    if not full:
        return 0
    dropped = 0
    for obj in _pygc.get_objects():
        if type(obj) is Expr and obj.op is not None and obj.values is not None:
            obj.values = None
            obj.input_versions = None
            dropped += 1
    return dropped


# -- randomuniform ---------------------------------------------------------------------------

def _random_infer(metas, shape, dtype, low, high, seed):
    if np.dtype(dtype).kind != "f":
        raise OpError(f"randomuniform makes floats, not {np.dtype(dtype)}")
    return [(shape, dtype)]


def _random_compute(arrays, shape, dtype, low, high, seed):
    # MT19937 32-bit draws as std::mt19937 produces them; float32 uses one draw per value
    # (std::generate_canonical<float>), float64 two (low word first).
    state = np.random.RandomState(seed if isinstance(seed, int) else list(seed))
    count = int(np.prod(shape, dtype=np.int64))
    per = 1 if np.dtype(dtype) == np.float32 else 2
    raw = np.frombuffer(state.bytes(4 * per * count), "<u4").astype(np.float64)
    if per == 1:
        unit = (raw.astype(np.float32) / np.float32(2.0 ** 32))
        unit = np.minimum(unit, np.nextafter(np.float32(1), np.float32(0)))
    else:
        unit = (raw[0::2] + raw[1::2] * 2.0 ** 32) / 2.0 ** 64
        unit = np.minimum(unit, np.nextafter(1.0, 0.0))
    unit = unit.astype(dtype)
    return (unit * (np.asarray(high, dtype) - np.asarray(low, dtype))
            + np.asarray(low, dtype)).astype(dtype).reshape(shape)


register(OpDef("random_uniform", _random_infer, _random_compute))


def randomuniform(shape, dtype=np.float32, low=0.0, high=1.0, seed0=0, seed1=1):
    """Uniform random values in ``[low, high)`` of ``shape`` (MNN's ``randomuniform``).

    The generator is MT19937. With ``seed0 == 0`` it is seeded with ``seed1``, so MNN's
    defaults (0, 1) give MNN's numbers; otherwise with both seeds (MNN 3.6 seeds with
    ``seed0 || seed1``, i.e. always 1: we do not copy that). Both seeds 0 draws a fresh
    seed from the OS. The values are drawn once per Var and kept.

    Parameters
    ----------
    shape : sequence of int or const Var
    dtype : dtype
        float32 (default) or float64.
    low, high : float
    seed0, seed1 : int
    """
    from ..dtypes import to_numpy_dtype

    if hasattr(shape, "read"):
        shape = shape.read()
    shape = tuple(int(d) for d in np.atleast_1d(np.asarray(shape)).ravel())
    if any(d < 0 for d in shape):
        raise OpError(f"randomuniform: shape {list(shape)} has a negative dimension")
    seed0, seed1 = int(seed0), int(seed1)
    if seed0 == 0 and seed1 == 0:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    elif seed0 == 0:
        seed = seed1 & 0xFFFFFFFF
    else:
        seed = (seed0 & 0xFFFFFFFF, seed1 & 0xFFFFFFFF)
    return apply("random_uniform", [], shape=shape, dtype=to_numpy_dtype(dtype),
                 low=float(low), high=float(high), seed=seed)[0]
