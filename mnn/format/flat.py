"""Low-level FlatBuffer tables: a bounds-checked reader and a writer.

Both are driven by the descriptions in :mod:`mnn.format.schema`. A table decodes to a plain
dict: scalars (absent ones get their default), strings, nested dicts for tables, lists for
vectors of strings/tables, and read-only numpy arrays for vectors of scalars. A union field
``main`` decodes to ``main_type`` (the member's name, or ``"NONE"``) and ``main`` (its dict).

The reader checks every offset and length against the buffer before using it, so truncated,
corrupted or hostile bytes raise :class:`~mnn.format.errors.ModelFileError` naming the place
(``Net.oplists[2].main(Convolution2D).weight``) instead of reading out of bounds; memory use
is bounded by the buffer size (every vector must fit inside it). The writer uses the
``flatbuffers`` runtime package's Builder.
"""

import struct

import flatbuffers
import numpy as np

from .errors import ModelFileError
from .schema import SCALAR_FORMATS, UNIONS, field_specs

__all__ = ["MAX_DEPTH", "decode", "encode"]

# Nesting deeper than this is not a model (tables nest a few levels; subgraph ops a few more).
MAX_DEPTH = 48

_NUMPY = {
    "bool": np.bool_,
    "i8": np.int8,
    "u8": np.uint8,
    "i16": "<i2",
    "u16": "<u2",
    "i32": "<i4",
    "u32": "<u4",
    "i64": "<i8",
    "f32": "<f4",
    "f64": "<f8",
}


class _Reader:
    def __init__(self, buf, source):
        self.buf = buf
        self.n = len(buf)
        self.source = source

    def fail(self, where, what):
        raise ModelFileError(f"mnn: {self.source}: {where}: {what}")

    def scalar(self, pos, fmt, size, where):
        if pos < 0 or pos + size > self.n:
            self.fail(
                where,
                f"field at byte {pos} lies outside the {self.n}-byte buffer "
                "(truncated or corrupted file)",
            )
        return struct.unpack_from(fmt, self.buf, pos)[0]

    def follow(self, pos, where):
        """Target of the uoffset stored at ``pos``."""
        target = pos + self.scalar(pos, "<I", 4, where)
        if target >= self.n:
            self.fail(
                where, f"offset points to byte {target}, past the end of the {self.n}-byte buffer"
            )
        return target

    def vector_header(self, pos, elem_size, where):
        length = self.scalar(pos, "<I", 4, where)
        start = pos + 4
        if start + length * elem_size > self.n:
            self.fail(
                where,
                f"vector of {length} elements of {elem_size} bytes extends past "
                f"the end of the {self.n}-byte buffer",
            )
        return start, length

    def string(self, pos, where):
        start, length = self.vector_header(pos, 1, where)
        raw = bytes(self.buf[start : start + length])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(where, "string is not valid UTF-8")

    def table(self, pos, name, where, depth):
        if depth > MAX_DEPTH:
            self.fail(where, f"tables nested more than {MAX_DEPTH} deep")
        vtable = pos - self.scalar(pos, "<i", 4, where)
        vt_size = self.scalar(vtable, "<H", 2, where + " (vtable)")
        table_size = self.scalar(vtable + 2, "<H", 2, where + " (vtable)")
        if vt_size < 4 or vt_size % 2 or vtable + vt_size > self.n:
            self.fail(where, f"invalid vtable (size {vt_size} at byte {vtable})")
        if pos + table_size > self.n:
            self.fail(where, f"table of {table_size} bytes extends past the end of the buffer")
        n_slots = (vt_size - 4) // 2

        def field_pos(slot):
            if slot >= n_slots:
                return 0
            off = struct.unpack_from("<H", self.buf, vtable + 4 + 2 * slot)[0]
            if off and off >= table_size:
                self.fail(
                    where,
                    f"field slot {slot} at offset {off} lies outside its {table_size}-byte table",
                )
            return pos + off if off else 0

        out = {}
        for f in field_specs(name):
            here = f"{where}.{f.name}"
            fpos = field_pos(f.slot)
            if f.kind == "scalar":
                fmt, size = SCALAR_FORMATS[f.elem]
                out[f.name] = self.scalar(fpos, fmt, size, here) if fpos else f.default
            elif f.kind == "union":
                members = UNIONS[f.elem]
                type_no = self.scalar(fpos, "<B", 1, here + "_type") if fpos else 0
                if type_no >= len(members):
                    self.fail(here, f"union type {type_no} is not a member of {f.elem}")
                member = members[type_no]
                out[f.name + "_type"] = member
                vpos = field_pos(f.slot + 1)
                if type_no == 0 or not vpos:
                    out[f.name] = None
                    continue
                sub = f"{here}({member})"
                try:
                    field_specs(member)
                except KeyError:
                    out[f.name] = None  # a member we do not describe: kept undecoded
                    continue
                out[f.name] = self.table(self.follow(vpos, sub), member, sub, depth + 1)
            elif not fpos:
                out[f.name] = None
            elif f.kind == "str":
                out[f.name] = self.string(self.follow(fpos, here), here)
            elif f.kind == "table":
                out[f.name] = self.table(self.follow(fpos, here), f.elem, here, depth + 1)
            else:
                out[f.name] = self.vector(self.follow(fpos, here), f.elem, here, depth)
        return out

    def vector(self, pos, elem, where, depth):
        if elem in SCALAR_FORMATS:
            size = SCALAR_FORMATS[elem][1]
            start, length = self.vector_header(pos, size, where)
            # A read-only view of the file's bytes: no copy (consumers copy what they keep).
            arr = np.frombuffer(self.buf, dtype=_NUMPY[elem], count=length, offset=start)
            if not arr.dtype.isnative:
                arr = arr.astype(arr.dtype.newbyteorder("="))
                arr.flags.writeable = False
            return arr
        start, length = self.vector_header(pos, 4, where)
        items = []
        for i in range(length):
            here = f"{where}[{i}]"
            target = self.follow(start + 4 * i, here)
            if elem == "str":
                items.append(self.string(target, here))
            else:
                items.append(self.table(target, elem, here, depth + 1))
        return items


def decode(buf, root="Net", source="<bytes>"):
    """Decode FlatBuffer bytes whose root table is ``root`` into a dict.

    Parameters
    ----------
    buf : bytes-like
        The whole file.
    root : str
        Root table name (a key of :data:`mnn.format.schema.TABLES`).
    source : str
        File name used in error messages.

    Raises
    ------
    ModelFileError
        When any offset, length or value does not fit the buffer or the schema.
    """
    buf = bytes(buf)
    reader = _Reader(buf, source)
    if len(buf) < 8:
        reader.fail(root, f"only {len(buf)} bytes: too short to be a model file")
    return reader.table(reader.follow(0, root), root, root, 0)


# -- writing ---------------------------------------------------------------------------------
_PREPEND_SLOT = {
    "bool": "PrependBoolSlot",
    "i8": "PrependInt8Slot",
    "u8": "PrependUint8Slot",
    "i16": "PrependInt16Slot",
    "u16": "PrependUint16Slot",
    "i32": "PrependInt32Slot",
    "u32": "PrependUint32Slot",
    "i64": "PrependInt64Slot",
    "f32": "PrependFloat32Slot",
    "f64": "PrependFloat64Slot",
}


def _write_vector(builder, elem, values, where):
    if elem in SCALAR_FORMATS:
        arr = np.ascontiguousarray(np.asarray(values).astype(_NUMPY[elem], copy=False))
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        return builder.CreateNumpyVector(arr)
    if elem == "str":
        offsets = [builder.CreateString(str(s)) for s in values]
    else:
        offsets = [
            _write_table(builder, elem, item, f"{where}[{i}]") for i, item in enumerate(values)
        ]
    builder.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return builder.EndVector()


def _write_table(builder, name, obj, where):
    if not isinstance(obj, dict):
        raise ModelFileError(
            f"mnn: writing {where}: expected a dict for table {name}, got {type(obj).__name__}"
        )
    fields = field_specs(name)
    known = {f.name for f in fields} | {f.name + "_type" for f in fields if f.kind == "union"}
    unknown = set(obj) - known
    if unknown:
        raise ModelFileError(
            f"mnn: writing {where}: table {name} has no field(s) {sorted(unknown)}"
        )
    # Children first: FlatBuffers builds back to front and forbids nesting.
    offsets = {}
    for f in fields:
        value = obj.get(f.name)
        if value is None or f.kind == "scalar":
            continue
        here = f"{where}.{f.name}"
        if f.kind == "str":
            offsets[f.name] = builder.CreateString(str(value))
        elif f.kind == "table":
            offsets[f.name] = _write_table(builder, f.elem, value, here)
        elif f.kind == "vector":
            offsets[f.name] = _write_vector(builder, f.elem, value, here)
        else:  # union
            member = obj.get(f.name + "_type")
            if member not in UNIONS[f.elem][1:]:
                raise ModelFileError(f"mnn: writing {here}: {member!r} is not a member of {f.elem}")
            offsets[f.name] = _write_table(builder, member, value, f"{here}({member})")
    n_slots = fields[-1].slot + (2 if fields and fields[-1].kind == "union" else 1) if fields else 0
    builder.StartObject(n_slots)
    for f in fields:
        if f.kind == "scalar":
            value = obj.get(f.name, f.default)
            if value is None:
                continue
            value = (
                bool(value)
                if f.elem == "bool"
                else (float(value) if f.elem.startswith("f") else int(value))
            )
            getattr(builder, _PREPEND_SLOT[f.elem])(f.slot, value, f.default)
        elif f.kind == "union":
            if f.name in offsets:
                type_no = UNIONS[f.elem].index(obj[f.name + "_type"])
                builder.PrependUint8Slot(f.slot, type_no, 0)
                builder.PrependUOffsetTRelativeSlot(f.slot + 1, offsets[f.name], 0)
        elif f.name in offsets:
            builder.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
    return builder.EndObject()


def _estimate(obj):
    """Bytes a dict shaped like :func:`decode`'s result needs (so the Builder, which grows
    by copying, is allocated once)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes + 8
    if isinstance(obj, dict):
        return 64 + sum(_estimate(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return 8 + sum(_estimate(v) for v in obj)
    if isinstance(obj, str):
        return len(obj) * 4 + 8
    return 8


def encode(obj, root="Net"):
    """Encode a dict shaped like :func:`decode`'s result into FlatBuffer bytes."""
    builder = flatbuffers.Builder(_estimate(obj) + 1024)
    builder.Finish(_write_table(builder, root, obj, root))
    return bytes(builder.Output())
