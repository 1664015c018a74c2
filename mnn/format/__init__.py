"""mnn.format: the .mnn model file (MNN 3.x), read and written byte-compatibly.

A ``.mnn`` file is one FlatBuffer whose root table is ``Net``. This package is our own code
on the ``flatbuffers`` runtime package, written from the format's facts:

- :mod:`.schema`: the tables and enums we use, in a compact notation of our own;
- :mod:`.flat`: a bounds-checked table reader and a Builder-based writer driven by it;
- :mod:`.errors`: :class:`ModelFileError`;
- :mod:`.reader` / :mod:`.writer`: a file <-> an express graph (the graph is the IR shared
  with the runtime and the converter), op by op through the ``map_*`` modules;
- :mod:`.quantize`: IDST weight quantisation decode/encode, fp16, external weights
  (:mod:`.external`);
- :mod:`.json_dump`: :func:`to_json`, a human-readable dump (also a command line).

Where an op lives in the file (OpType, parameter table) is kept here, beside the format
code, in one mapping module per op family, keyed by our express op name, rather than in the
op records themselves: the op modules stay free of FlatBuffer details, and the file format
stays in one place.
"""

from .errors import ModelFileError
from .json_dump import to_json
from .reader import LoadedGraph, load_graph, read_net
from .writer import EncodeOptions, write_model

__all__ = [
    "EncodeOptions",
    "LoadedGraph",
    "ModelFileError",
    "load_graph",
    "read_net",
    "to_json",
    "write_model",
]
