"""``narrow_cast``: values as a cast to a narrow dtype leaves them, in a wider storage dtype.

Vars hold float32/float64/int32/int64/uint8/int8/bool. ONNX models also use float16,
bfloat16, int16, uint16, uint32 and uint64; the converter stores those in float32, int32
or int64 (as MNN stores float16 weights as float32). Arithmetic then runs in the wider
type, but a *cast* to a narrow type must still lose what the narrow type cannot hold:
``narrow_cast(x; dtype)`` rounds floats to float16 or bfloat16 precision (round to nearest,
ties to even; NaN stays NaN, overflow goes to infinity) and wraps integers modulo
``2**bits`` into the narrow type's range, keeping ``x``'s dtype.

- float16: numpy's own float16 conversion.
- bfloat16 (no numpy type): the upper 16 bits of the float32 pattern, rounded to nearest
  even on the lower 16 (so ``narrow_cast`` needs no extra package).
- int16 / uint16 / uint32 / uint64 and the sub-byte int4 / uint4 / int2 / uint2:
  wrap-around modulo ``2**bits``, as C casts between integer widths do (and as ONNX
  casts to the 4- and 2-bit types do).

Not differentiable (rounding is flat almost everywhere; these ops exist to run converted
inference graphs).
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["e8m0_cast", "minifloat_cast", "narrow_cast"]

#: narrow dtype name -> storage dtypes it may be applied to.
NARROW_TYPES = {
    "float16": ("f",),
    "bfloat16": ("f",),
    "int16": ("i",),
    "uint16": ("i",),
    "uint32": ("i",),
    "uint64": ("i",),
    "int4": ("i", "u"),
    "uint4": ("i", "u"),
    "int2": ("i", "u"),
    "uint2": ("i", "u"),
}

# Sub-byte types numpy has no dtype for: (bits, signed).
_SUBBYTE = {"int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}


def _infer(metas, dtype):
    x = metas[0]
    if dtype not in NARROW_TYPES:
        raise OpError(f"narrow_cast: dtype must be one of {sorted(NARROW_TYPES)}, got "
                      f"{dtype!r}")
    if x.dtype is not None and x.dtype.kind not in NARROW_TYPES[dtype]:
        kinds = {"f": "float", "i": "signed int", "u": "unsigned int"}
        raise OpError(f"narrow_cast: {dtype} values are stored in a "
                      f"{' or '.join(kinds[k] for k in NARROW_TYPES[dtype])} tensor, got "
                      f"{x.dtype}")
    return [(x.shape, x.dtype)]


def _bfloat16_round(x):
    f32 = np.asarray(x, np.float32)
    bits = f32.view(np.uint32).astype(np.uint64)
    # Round to nearest even on the 16 dropped bits.
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32)
    out = np.where(np.isnan(f32), f32, out)
    return out.astype(x.dtype)


def _compute(arrays, dtype):
    x = arrays[0]
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "float16":
            return x.astype(np.float16).astype(x.dtype)
        if dtype == "bfloat16":
            return _bfloat16_round(x)
        if dtype in _SUBBYTE:
            bits, signed = _SUBBYTE[dtype]
            span = 1 << bits
            wide = x.astype(np.int64)
            low = -(span // 2) if signed else 0
            return ((wide - low) % span + low).astype(x.dtype)
        return x.astype(np.dtype(dtype)).astype(x.dtype)


register(OpDef("narrow_cast", _infer, _compute))


def narrow_cast(x, dtype):
    """``x`` as a cast to the narrow ``dtype`` would leave it, in ``x``'s own dtype.

    Parameters
    ----------
    x : Var or array_like
        float32/float64 for ``float16``/``bfloat16``; int32/int64 for the integer types.
    dtype : str
        One of ``float16``, ``bfloat16``, ``int16``, ``uint16``, ``uint32``, ``uint64``,
        ``int4``, ``uint4``, ``int2``, ``uint2``.

    Returns
    -------
    Var
        Same shape and dtype as ``x``.
    """
    return apply("narrow_cast", [to_var(x)], dtype=str(dtype))[0]


# -- minifloat_cast ------------------------------------------------------------------------

# The 8- and 4-bit float formats of ONNX: mantissa bits, exponent of the smallest normal,
# largest finite value, whether the format has infinities, NaN, and a negative zero.
MINIFLOATS = {
    "float8_e4m3fn": (3, -6, 448.0, False, True, True),
    "float8_e4m3fnuz": (3, -7, 240.0, False, True, False),
    "float8_e5m2": (2, -14, 57344.0, True, True, True),
    "float8_e5m2fnuz": (2, -15, 57344.0, False, True, False),
    "float4_e2m1fn": (1, 0, 6.0, False, False, True),
}


def _minifloat_infer(metas, format, saturate):
    x = metas[0]
    if format not in MINIFLOATS:
        raise OpError(f"minifloat_cast: format must be one of {sorted(MINIFLOATS)}, got "
                      f"{format!r}")
    if x.dtype is not None and x.dtype.kind != "f":
        raise OpError(f"minifloat_cast: the values must be float, got {x.dtype}")
    return [(x.shape, x.dtype)]


def _minifloat_compute(arrays, format, saturate):
    x = arrays[0]
    mant, emin, top, has_inf, has_nan, neg_zero = MINIFLOATS[format]
    v = x.astype(np.float64)
    a = np.abs(v)
    finite = np.isfinite(a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exp = np.floor(np.log2(np.where(finite & (a > 0), a, 1.0)))
        quantum = np.exp2(np.maximum(exp, emin) - mant)
        r = np.round(a / quantum) * quantum  # round half to even on the format's grid
    over = ~(r <= top)  # overflow, infinities and NaN
    if saturate:
        big = top
    elif has_inf:
        big = np.inf
    else:
        big = np.nan if has_nan else top
    r = np.where(over & ~np.isnan(a), big, r)
    r = np.where(np.isnan(a), np.nan if has_nan else top, r)
    out = np.copysign(r, v)
    if not neg_zero:
        out = np.where(out == 0, 0.0, out)
    return out.astype(x.dtype)


register(OpDef("minifloat_cast", _minifloat_infer, _minifloat_compute))


def minifloat_cast(x, format, saturate=True):
    """``x`` rounded to an 8- or 4-bit float ``format``, kept in ``x``'s float dtype.

    Round to nearest, ties to even, subnormals included. Out-of-range values (and
    infinities) become the largest finite value when ``saturate``, else infinity where the
    format has one and NaN otherwise; a format without NaN (``float4_e2m1fn``) saturates
    always. Formats without a negative zero (``…fnuz``) give +0.

    Parameters
    ----------
    x : Var or array_like
        float32 or float64.
    format : str
        ``float8_e4m3fn``, ``float8_e4m3fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz`` or
        ``float4_e2m1fn`` (ml_dtypes' names).
    saturate : bool

    Returns
    -------
    Var
        Same shape and dtype as ``x``.
    """
    return apply("minifloat_cast", [to_var(x)], format=str(format),
                 saturate=bool(saturate))[0]


# -- e8m0_cast ----------------------------------------------------------------------------

def _e8m0_infer(metas, round_mode, saturate):
    x = metas[0]
    if round_mode not in ("up", "down", "nearest"):
        raise OpError(f"e8m0_cast: round_mode must be up, down or nearest, got {round_mode!r}")
    if x.dtype is not None and x.dtype != np.float32:
        raise OpError(f"e8m0_cast: the values must be float32, got {x.dtype}")
    return [(x.shape, x.dtype)]


def _e8m0_compute(arrays, round_mode, saturate):
    bits = np.ascontiguousarray(arrays[0], np.float32).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.int64)
    special = exponent == 0xFF
    fraction = bits & 0x7FFFFF
    if round_mode == "up":
        bump = fraction > 0
    elif round_mode == "nearest":
        # The mantissa's top bit set means at least half-way to the next power of two:
        # round up, except an exact half on the zero exponent (2**-127 stays).
        half = (bits & 0x400000) > 0
        rest = (bits & 0x3FFFFF) > 0
        bump = half & (rest | (exponent > 0))
    else:
        bump = np.zeros(bits.shape, bool)
    if saturate:
        bump &= exponent < 0xFE
    exponent = np.where(special, 0xFF, exponent + bump)
    out = np.ldexp(np.float32(1), (exponent - 127).astype(np.int32)).astype(np.float32)
    return np.where(exponent >= 0xFF, np.float32(np.nan), out)


register(OpDef("e8m0_cast", _e8m0_infer, _e8m0_compute))


def e8m0_cast(x, round_mode="up", saturate=True):
    """float32 ``x`` as the exponent-only FLOAT8E8M0 type keeps it: ``2 ** (e - 127)``
    from the float's biased exponent ``e`` (the sign is dropped; zero and subnormals give
    ``2 ** -127``), rounded ``up`` (any mantissa bit raises the exponent), ``down``, or to
    ``nearest``; NaN and infinity, and with ``saturate`` off a rounding past the largest
    exponent, give NaN.

    Returns
    -------
    Var
        float32, same shape.
    """
    return apply("e8m0_cast", [to_var(x)], round_mode=str(round_mode),
                 saturate=bool(saturate))[0]
