"""``narrow_cast`` in the .mnn file: a cast to a narrow integer type (int16, uint16 and the
4- and 2-bit types, which tensors store in a wider integer) wraps values into the narrow
type's range; MNN has no such types, so the wrap is written as integer arithmetic: the
low ``bits`` bits (a bitwise and with ``2**bits - 1``, which is ``floormod`` by ``2**bits``
in two's complement; the real MNN's integer FLOORMOD is wrong for negative values),
shifted by half the range for signed types."""

import numpy as np

from ..express.ops import elementwise as ew
from ..express.ops.elementwise import bitwise_and
from ..express.var import const
from .mapping import encoder

__all__ = []

# narrow integer type -> (bits, signed)
_INT_TYPES = {"int16": (16, True), "uint16": (16, False), "int4": (4, True),
              "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}


@encoder("narrow_cast")
def _encode_narrow_cast(ctx, expr):
    x = expr.inputs[0]
    name = expr.attrs["dtype"]
    if name not in _INT_TYPES:
        ctx.fail(expr, f"a cast to {name} has no MNN form (MNN computes in float32 and "
                 "int32; int16, uint16 and the 4- and 2-bit integers have one)")
    bits, signed = _INT_TYPES[name]
    dtype = x.dtype
    work = x if dtype in (np.int32, np.int64) else ew.cast(x, np.int32)
    wdt = work.dtype
    low = const(np.asarray((1 << bits) - 1, wdt))
    if signed:
        half = const(np.asarray(1 << (bits - 1), wdt))
        y = ew.subtract(bitwise_and(ew.add(work, half), low), half)
    else:
        y = bitwise_and(work, low)
    if y.dtype != dtype:
        y = ew.cast(y, dtype)
    ctx.encode_as(expr, [y])
