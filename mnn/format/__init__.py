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
stays in one place. The families: :mod:`.map_math` (BinaryOp, UnaryOp, Reduction, Cast,
MatMul, Select), :mod:`.map_shape` (Input/Const, reshaping, concat/split, shape queries),
:mod:`.map_nn` (convolutions, pooling, activations, norms, Interp), :mod:`.map_tensor`
(gather/slice/pad/tile/arg/scan and the converter's run-time-shaped ops),
:mod:`.map_control` (If/While with ``Net.subgraphs``); :mod:`.mapping` holds the two
registries and the shared helpers.

MNN computes with float32 and int32: float64 is stored as float32, and booleans and 64-bit
integers that fit as int32 (what MNN's converter does), so a file read back may have
narrower dtypes than the graph that was written.
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
