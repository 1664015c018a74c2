"""Weight storage of convolutions: float, IDST quantised, fp16, external; decode and encode.

MNN's ``IDSTQuan`` table (``Convolution2D.quanParameter``) stores weights as:

- type 1, an int codebook: a byte buffer holding the blob dims (a count byte, then
  uint16 dims, or uint32 when ``shapeInt32``), the number of codebook values (one byte,
  0 meaning 256), the values (int8, read sorted ascending), then one index per weight
  packed MSB-first in ``ceil(log2(count))`` bits. The converter writes the "linear"
  codebook ``-2^(b-1) .. 2^(b-1)-1`` so an index is ``value + 2^(b-1)``;
- type 2, a sparse codebook (the same plus run-length steps between non-zero weights);
- type 3, raw half floats; type 4, raw int8 values.

Scales (``alpha``, or ``alphaFp16`` when ``scaleStorage`` is FP16) come one per group of
consecutive weights (one group per output channel, or per block of input channels): a
symmetric group is ``w = q * scale``; an asymmetric one (``readType != 0``) stores pairs
``(min, scale)`` with ``w = q * scale + min - aMin * scale`` (``aMin`` the codebook's
lowest value, -128 when 0). ``quantScale`` (when not 1 and ``has_scaleInt`` is false)
multiplies every alpha entry.

The encoder follows MNN's converter: symmetric scale ``absmax / (2^(b-1) - 1)``;
asymmetric ``(max - min) / (2^b - 1)`` with ``aMin = -2^(b-1)``; blocks of
``weight_quant_block`` input channels when that divides the input channels and is a
multiple of 16 (at least 16).
"""

import numpy as np

from .errors import ModelFileError

__all__ = [
    "conv_weights",
    "decode_idst",
    "encode_conv_weights",
    "encode_idst",
    "inner_product_weight",
    "layer_norm_arrays",
    "scale_arrays",
]


class _Cursor:
    def __init__(self, buf, where):
        self.buf = np.frombuffer(bytes(buf), np.uint8)
        self.pos = 0
        self.where = where

    def take(self, n, what):
        if n < 0 or self.pos + n > self.buf.size:
            raise ModelFileError(
                f"mnn: {self.where}: quantised weight buffer is truncated "
                f"(needs {n} bytes for {what} at byte {self.pos}, has "
                f"{self.buf.size})"
            )
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out


def _bits_for(count):
    return max(1, int(np.ceil(np.log2(count)))) if count > 1 else 1


def _unpack(raw, count, bits):
    """``count`` unsigned ``bits``-bit integers packed MSB-first in ``raw``."""
    if bits == 8:
        return raw[:count].astype(np.int64)
    if bits == 4:
        out = np.empty(raw.size * 2, np.int64)
        out[0::2] = raw >> 4
        out[1::2] = raw & 15
        return out[:count]
    bitmat = np.unpackbits(raw)[: count * bits].reshape(count, bits).astype(np.int64)
    return bitmat @ (1 << np.arange(bits - 1, -1, -1, dtype=np.int64))


def _pack(values, bits):
    """Inverse of :func:`_unpack` (values already in ``0 .. 2^bits - 1``)."""
    values = np.asarray(values, np.int64)
    if bits == 8:
        return values.astype(np.uint8)
    shifts = np.arange(bits - 1, -1, -1, dtype=np.int64)
    bitmat = ((values[:, None] >> shifts) & 1).astype(np.uint8)
    return np.packbits(bitmat.reshape(-1))


def _read_dims(cur, shape_int32):
    n = int(cur.take(1, "the dims count")[0])
    if n == 0 or n > 4:
        raise ModelFileError(
            f"mnn: {cur.where}: quantised weight blob has {n} dims (expected 1 to 4)"
        )
    width = 4 if shape_int32 else 2
    raw = cur.take(n * width, "the dims").tobytes()
    dims = np.frombuffer(raw, "<u4" if shape_int32 else "<u2").astype(np.int64)
    count = int(np.prod(dims))
    return count


def _codebook(cur):
    n = int(cur.take(1, "the codebook size")[0]) or 256
    values = np.sort(cur.take(n, "the codebook").view(np.int8).astype(np.int64))
    return values


def _decode_dense(cur, shape_int32, limit):
    count = _read_dims(cur, shape_int32)
    if count > limit:
        raise ModelFileError(
            f"mnn: {cur.where}: quantised blob claims {count} weights, more "
            f"than the {limit} the op can hold"
        )
    book = _codebook(cur)
    bits = _bits_for(book.size)
    idx = _unpack(cur.take((count * bits + 7) // 8, "the weight indexes"), count, bits)
    if idx.size and idx.max() >= book.size:
        raise ModelFileError(
            f"mnn: {cur.where}: weight index {int(idx.max())} outside the "
            f"{book.size}-value codebook"
        )
    return book[idx]


def _decode_sparse(cur, shape_int32, limit, alpha, asymmetric):
    count = _read_dims(cur, shape_int32)
    if count > limit:
        raise ModelFileError(
            f"mnn: {cur.where}: quantised blob claims {count} weights, more "
            f"than the {limit} the op can hold"
        )
    nnz = int(cur.take(4, "the non-zero count").view("<u4")[0])
    step_bits = int(cur.take(1, "the step width")[0])
    if not 1 <= step_bits <= 8 or nnz > count:
        raise ModelFileError(
            f"mnn: {cur.where}: sparse blob with {nnz} non-zeros of {count} "
            f"and {step_bits}-bit steps is corrupted"
        )
    steps = _unpack(cur.take((nnz * step_bits + 7) // 8, "the steps"), nnz, step_bits)
    raw_book = cur.take(int(cur.take(1, "the codebook size")[0]) or 256, "the codebook")
    book = np.unique(raw_book.view(np.int8).astype(np.int64))
    bits = _bits_for(raw_book.size)
    idx = _unpack(cur.take((nnz * bits + 7) // 8, "the weight indexes"), nnz, bits)
    if idx.size and idx.max() >= book.size:
        raise ModelFileError(
            f"mnn: {cur.where}: weight index {int(idx.max())} outside the "
            f"{book.size}-value codebook"
        )
    pos = np.cumsum(steps)
    if pos.size and pos[-1] >= count:
        raise ModelFileError(f"mnn: {cur.where}: sparse positions run past {count} weights")
    out = np.zeros(count, np.int64)
    if asymmetric:
        groups = alpha.size // 2
        min_value = -(1 << (bits - 1))
        mins, scales = alpha[0::2], alpha[1::2]
        zero = np.where(
            scales > 1e-6,
            np.round(-mins / np.where(scales > 1e-6, scales, 1)) + min_value,
            min_value,
        ).astype(np.int64)
        out[:] = np.repeat(zero, count // groups) if groups and count % groups == 0 else 0
    out[pos] = book[idx]
    return out


def decode_idst(quan, where, limit, buffer=None, alpha=None):
    """The float32 weights held by a decoded ``IDSTQuan`` dict (flat).

    ``buffer``/``alpha`` override the table's own vectors (external data). ``limit`` caps
    the number of weights (the op's size), so corrupted dims cannot exhaust memory.
    """
    qtype = int(quan["type"])
    buf = quan["buffer"] if buffer is None else buffer
    if alpha is None:
        if quan.get("scaleStorage") == 1 and quan.get("alphaFp16") is not None:
            alpha = np.asarray(quan["alphaFp16"], np.uint16).view(np.float16)
        else:
            alpha = quan["alpha"]
    alpha = None if alpha is None else np.asarray(alpha, np.float32).copy()
    if quan.get("index") is not None:
        size = int(quan["weightSize"])
        index = np.asarray(quan["index"], np.int64)
        if (
            size > limit
            or alpha is None
            or alpha.size != index.size
            or (index.size and index.max() >= size)
        ):
            raise ModelFileError(f"mnn: {where}: sparse float weights are inconsistent")
        out = np.zeros(size, np.float32)
        out[index] = alpha
        return out
    if buf is None:
        raise ModelFileError(f"mnn: {where}: quantised weights have no data buffer")
    buf = (
        np.asarray(buf).view(np.uint8)
        if isinstance(buf, np.ndarray)
        else np.frombuffer(bytes(buf), np.uint8)
    )
    if qtype == 3:
        if buf.size % 2 or buf.size // 2 > limit:
            raise ModelFileError(
                f"mnn: {where}: fp16 weight buffer of {buf.size} bytes is corrupted"
            )
        return buf.view("<f2").astype(np.float32)
    asymmetric = int(quan["readType"]) != 0
    cur = _Cursor(buf, where)
    if qtype == 1:
        q = _decode_dense(cur, bool(quan["shapeInt32"]), limit)
    elif qtype == 2:
        q = _decode_sparse(
            cur,
            bool(quan["shapeInt32"]),
            limit,
            alpha if alpha is not None else np.zeros(0, np.float32),
            asymmetric,
        )
    elif qtype == 4:
        if buf.size > limit:
            raise ModelFileError(f"mnn: {where}: int8 buffer larger than the op")
        q = buf.view(np.int8).astype(np.int64)
        if int(quan["aMin"]) == 0 and abs(float(quan["quantScale"])) < 1e-6:
            asymmetric = True  # old type-4 files
    else:
        raise ModelFileError(
            f"mnn: {where}: weight quantisation type {qtype} is not supported (1, 2, 3, 4 are)"
        )
    return _dequantize(q, alpha, asymmetric, quan, where)


def _dequantize(q, alpha, asymmetric, quan, where):
    if alpha is None or alpha.size == 0:
        raise ModelFileError(f"mnn: {where}: quantised weights have no scales")
    groups = alpha.size // 2 if asymmetric else alpha.size
    if groups == 0 or q.size % groups:
        raise ModelFileError(
            f"mnn: {where}: {q.size} weights cannot be split into {groups} scale groups"
        )
    alpha = alpha.astype(np.float32)
    old_type4 = (
        int(quan["type"]) == 4 and int(quan["aMin"]) == 0 and abs(float(quan["quantScale"])) < 1e-6
    )
    if asymmetric:
        clamp_min = int(quan["aMin"]) or -128
        if clamp_min < 0:
            alpha[0::2] = alpha[0::2] - np.float32(clamp_min) * alpha[1::2]
    if not quan["has_scaleInt"] and not old_type4:
        factor = np.float32(quan["quantScale"])
        if factor != 1.0:
            alpha = alpha * factor
    q = q.reshape(groups, -1).astype(np.float32)
    if asymmetric:
        out = q * alpha[1::2, None] + alpha[0::2, None]
    else:
        out = q * alpha[:, None]
    return out.reshape(-1).astype(np.float32)


def encode_idst(weight, bits, asymmetric, block_channels=0, in_channels=None):
    """An ``IDSTQuan`` dict storing ``weight`` (shape ``(O, ...)``) as a ``bits`` codebook.

    ``block_channels`` > 0 gives one scale per block of that many input channels
    (``in_channels`` of them per output) when MNN's converter would block the layer.
    """
    w = np.asarray(weight, np.float32)
    out_c = w.shape[0]
    per_out = w.size // out_c
    blocks = 1
    if (
        block_channels
        and in_channels
        and in_channels % block_channels == 0
        and block_channels >= 16
        and block_channels % 16 == 0
    ):
        blocks = in_channels // block_channels
    groups = w.reshape(out_c * blocks, per_out // blocks)
    threshold = float((1 << (bits - 1)) - 1)
    min_value, max_value = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if asymmetric:
        lo, hi = groups.min(1), groups.max(1)
        scale = ((hi - lo) / np.float32(2 * threshold + 1)).astype(np.float32)
        safe = np.where(scale > 1e-6, scale, 1)
        q = np.where(
            scale[:, None] > 1e-6,
            np.round((groups - lo[:, None]) / safe[:, None]) + min_value,
            min_value,
        )
        alpha = np.stack([lo, scale], 1).reshape(-1).astype(np.float32)
    else:
        scale = (np.abs(groups).max(1) / np.float32(threshold)).astype(np.float32)
        safe = np.where(scale > 1e-6, scale, 1)
        q = np.where(scale[:, None] > 1e-6, np.round(groups / safe[:, None]), 0)
        alpha = scale
    q = np.clip(q, min_value, max_value).astype(np.int64).reshape(-1)
    n_groups, size = groups.shape
    shape_int32 = n_groups > 0xFFFF or size > 0xFFFF
    dims = np.asarray([n_groups, size], "<u4" if shape_int32 else "<u2").view(np.uint8)
    count = 1 << bits
    book = np.arange(min_value, max_value + 1, dtype=np.int64).astype(np.int8).view(np.uint8)
    header = np.concatenate([np.uint8([2]), dims, np.uint8([count & 0xFF]), book])
    body = _pack(q - min_value, bits)
    quan = {
        "buffer": np.concatenate([header, body]).view(np.int8),
        "alpha": alpha,
        "type": 1,
        "quantScale": 1.0,
        "aMaxOrBits": int(bits),
        "shapeInt32": bool(shape_int32),
    }
    if asymmetric:
        quan["readType"] = int(n_groups)
        quan["aMin"] = int(min_value)
    return quan


def _f32(raw):
    return np.frombuffer(bytes(raw), "<f4").astype(np.float32)


def conv_weights(ctx, op, p, out_c, limit):
    """Float weights (flat) and bias of a decoded ``Convolution2D`` dict.

    ``limit`` is the most weights the op can have (from its input's channels), so corrupted
    sizes are refused before anything large is allocated.
    """
    where = f"{ctx.source}: op {op.get('name')!r}"
    quan, ext = p.get("quanParameter"), p.get("external")
    bias = p.get("bias")
    if ext is not None and (quan is None or quan.get("buffer") is None) and len(ext) >= 2:
        weights = ctx.weights(op)
        offset = int(ext[0])
        sizes = [int(s) for s in ext[1:]]
        chunks, pos = [], offset
        for size in sizes:
            chunks.append(weights.read(pos, size, where) if size else b"")
            pos += size
        if quan is None:
            weight = _f32(chunks[0])
            if len(chunks) > 1 and chunks[1]:
                bias = _f32(chunks[1])
            return weight, _bias(bias, out_c, ctx, op)
        alpha_raw = chunks[1] if len(chunks) > 1 else b""
        alpha = np.frombuffer(alpha_raw, "<f2" if quan.get("scaleStorage") == 1 else "<f4")
        if len(chunks) > 2 and chunks[2]:
            bias = _f32(chunks[2])
        weight = decode_idst(
            quan, where, limit, buffer=np.frombuffer(chunks[0], np.uint8), alpha=alpha
        )
        return weight, _bias(bias, out_c, ctx, op)
    if quan is not None:
        return decode_idst(quan, where, limit), _bias(bias, out_c, ctx, op)
    if p.get("weight") is None:
        ctx.fail(op, "has no weights (neither float, quantised nor external)")
    return np.asarray(p["weight"], np.float32), _bias(bias, out_c, ctx, op)


def _bias(bias, out_c, ctx, op):
    if bias is None or len(bias) == 0:
        return None
    bias = np.asarray(bias, np.float32)
    if bias.size != out_c:
        ctx.fail(op, f"bias has {bias.size} values for {out_c} outputs")
    return bias


def encode_conv_weights(ctx, weight, bias):
    """The weight fields of a ``Convolution2D`` dict, following ``ctx.options``."""
    opts = ctx.options
    weight = np.asarray(weight, np.float32)
    bias = np.asarray(bias, np.float32).reshape(-1)
    fields = {}
    quan = None
    if opts.weight_quant_bits:
        quan = encode_idst(
            weight,
            opts.weight_quant_bits,
            opts.weight_quant_asymmetric,
            opts.weight_quant_block,
            weight.shape[1],
        )
    elif opts.fp16:
        quan = {"buffer": weight.reshape(-1).astype("<f2").view(np.int8), "type": 3}
    if ctx.external is not None:
        if quan is None:
            fields["external"] = ctx.external_field([weight.reshape(-1), bias])
        else:
            raw = [np.asarray(quan.pop("buffer")).view(np.uint8).tobytes()]
            alpha = quan.pop("alpha", None)
            raw.append(b"" if alpha is None else np.asarray(alpha, "<f4").tobytes())
            raw.append(bias.astype("<f4").tobytes())
            offset = ctx.external.add(raw[0])
            for chunk in raw[1:]:
                ctx.external.add(chunk)
            fields["external"] = np.asarray([offset] + [len(r) for r in raw] + [0], np.int64)
            fields["quanParameter"] = quan
        return fields
    if quan is None:
        fields["weight"] = weight.reshape(-1)
    else:
        fields["quanParameter"] = quan
    fields["bias"] = bias
    return fields


def scale_arrays(ctx, op, p):
    """Scale and bias of a ``Scale`` op (external data included)."""
    where = f"{ctx.source}: op {op.get('name')!r}"
    scale, bias = p.get("scaleData"), p.get("biasData")
    ext = p.get("external")
    if ext is not None and scale is None and len(ext) >= 2:
        weights = ctx.weights(op)
        scale = _f32(weights.read(int(ext[0]), int(ext[1]), where))
        if len(ext) >= 3 and int(ext[2]):
            bias = _f32(weights.read(int(ext[0]) + int(ext[1]), int(ext[2]), where))
    if scale is None:
        ctx.fail(op, "has no scale values")
    scale = np.asarray(scale, np.float32)
    if bias is not None and len(bias):
        bias = np.asarray(bias, np.float32)
        if bias.size != scale.size:
            ctx.fail(op, f"{bias.size} biases for {scale.size} scales")
    else:
        bias = None
    return scale, bias


def inner_product_weight(ctx, op, p):
    """Float weights of an ``InnerProduct`` op (quantised ones decoded)."""
    if p.get("quanParameter") is not None:
        return decode_idst(p["quanParameter"], f"{ctx.source}: op {op.get('name')!r}", 1 << 31)
    if p.get("weight") is None:
        ctx.fail(op, "has no weights")
    return np.asarray(p["weight"], np.float32)


def layer_norm_arrays(ctx, op, p):
    """Gamma and beta of a ``LayerNorm`` op (None when absent; external data included)."""
    where = f"{ctx.source}: op {op.get('name')!r}"
    gamma, beta = p.get("gamma"), p.get("beta")
    ext = p.get("external")
    if ext is not None and gamma is None and len(ext) >= 2:
        weights = ctx.weights(op)
        gamma = _f32(weights.read(int(ext[0]), int(ext[1]), where)) if int(ext[1]) else None
        if len(ext) >= 3 and int(ext[2]):
            beta = _f32(weights.read(int(ext[0]) + int(ext[1]), int(ext[2]), where))
    gamma = None if gamma is None or len(gamma) == 0 else np.asarray(gamma, np.float32)
    beta = None if beta is None or len(beta) == 0 else np.asarray(beta, np.float32)
    return gamma, beta
