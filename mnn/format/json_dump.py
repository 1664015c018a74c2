"""A human-readable JSON dump of any .mnn file (``mnnconvert -f MNN --JsonFile`` style).

Enum fields are written by name (``"type": "Convolution"``, ``"padMode": "CAFFE"``), union
members as ``main_type`` plus ``main``, absent fields are left out, and floats keep full
float32 precision (MNN's own dump prints 6 digits, too coarse to recover quantisation
scales). Run as ``python -m mnn.format.json_dump model.mnn [-o model.json]``.
"""

import argparse
import json
import os
import sys

import numpy as np

from .errors import ModelFileError
from .flat import decode
from .schema import ENUMS, field_specs

__all__ = ["dump_json", "main", "net_to_jsonable", "to_json"]


def _scalar(value, field):
    if field.enum and field.enum in ENUMS:
        return ENUMS[field.enum].get(int(value), int(value))
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, float):
        return float(np.float32(value)) if field.elem == "f32" else value
    return value


def _vector(values, field):
    if field.elem in ("str",):
        return list(values)
    if isinstance(values, np.ndarray):
        if field.enum and field.enum in ENUMS:
            names = ENUMS[field.enum]
            return [names.get(int(v), int(v)) for v in values]
        if values.dtype.kind == "f":
            return [float(v) for v in values.astype(np.float64)]
        return values.tolist()
    return [_table(field.elem, item) for item in values]


def _table(name, obj):
    if obj is None:
        return None
    out = {}
    for field in field_specs(name):
        if field.kind == "union":
            member = obj.get(field.name + "_type")
            value = obj.get(field.name)
            out[field.name + "_type"] = member
            if value is not None:
                out[field.name] = _table(member, value)
            continue
        value = obj.get(field.name)
        if value is None:
            continue
        if field.kind == "scalar":
            out[field.name] = _scalar(value, field)
        elif field.kind == "str":
            out[field.name] = value
        elif field.kind == "table":
            out[field.name] = _table(field.elem, value)
        else:
            out[field.name] = _vector(value, field)
    return out


def net_to_jsonable(net):
    """The decoded ``Net`` dict as plain JSON types, enums by name."""
    return _table("Net", net)


def to_json(source, path=None, indent=2):
    """Dump the model ``source`` (a path or bytes) as JSON text.

    Parameters
    ----------
    source : str, os.PathLike or bytes
    path : str, optional
        Also write the text to this file.
    indent : int

    Returns
    -------
    str
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        net = decode(source)
    else:
        name = os.fspath(source)
        try:
            with open(name, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ModelFileError(f"mnn: cannot read model file {name!r}: {exc.strerror}") from None
        net = decode(data, source=os.path.basename(name))
    text = json.dumps(net_to_jsonable(net), indent=indent)
    if path is not None:
        with open(path, "w") as fh:
            fh.write(text)
    return text


def dump_json(source):
    """JSON text of the model ``source`` (path or bytes): :func:`to_json` with its defaults,
    the name ``mnnconvert --JsonFile`` calls."""
    return to_json(source)


def main(argv=None):
    """Command line: ``python -m mnn.format.json_dump model.mnn [-o out.json]``."""
    parser = argparse.ArgumentParser(
        prog="python -m mnn.format.json_dump", description="Dump a .mnn model as JSON."
    )
    parser.add_argument("model", help="the .mnn file")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    args = parser.parse_args(argv)
    try:
        text = to_json(args.model, args.output)
    except ModelFileError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.output is None:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
