"""External weights: the ``<model>.mnn.weight`` file beside a model.

With ``--saveExternalData`` MNN's converter moves large weights out of the FlatBuffer into
``<model>.mnn.weight`` and stores ``external = [offset, size, ...]`` in the op's parameter
table (``Blob``, ``Convolution2D``, ``LayerNorm``, ``Scale``...). Reads are checked against
the weight file's size and never follow a path outside the model's folder.
"""

import os

from .errors import ModelFileError

__all__ = ["ExternalWeights", "ExternalWriter"]


class ExternalWeights:
    """Reader of a model's external weight file (opened on first use)."""

    def __init__(self, path, model_name):
        self.path = path
        self.model_name = model_name
        self.folder = os.path.dirname(os.path.abspath(path))
        self._data = None

    def _load(self, where):
        if self._data is None:
            try:
                with open(self.path, "rb") as fh:
                    self._data = fh.read()
            except OSError as exc:
                raise ModelFileError(
                    f"mnn: {self.model_name}: {where}: weights are stored "
                    f"outside the model but the weight file "
                    f"{os.path.basename(self.path)!r} cannot be read: "
                    f"{exc.strerror}"
                ) from None
        return self._data

    def read(self, offset, size, where):
        """``size`` bytes at ``offset`` of the weight file (checked)."""
        data = self._load(where)
        if offset < 0 or size < 0 or offset + size > len(data):
            raise ModelFileError(
                f"mnn: {self.model_name}: {where}: external data "
                f"[offset {offset}, {size} bytes] lies outside the weight "
                f"file {os.path.basename(self.path)!r} ({len(data)} bytes): "
                "the file is short or the offsets are corrupted"
            )
        return data[offset : offset + size]

    def resolve(self, relative, where):
        """Absolute path of a file the model names (``Op.externalPath``), inside its folder."""
        full = os.path.realpath(os.path.join(self.folder, relative))
        if os.path.commonpath([full, os.path.realpath(self.folder)]) != os.path.realpath(
            self.folder
        ):
            raise ModelFileError(
                f"mnn: {self.model_name}: {where}: external path "
                f"{relative!r} points outside the model's folder"
            )
        return full


class ExternalWriter:
    """Collects weight bytes for ``<model>.mnn.weight`` while a model is written."""

    def __init__(self):
        self.chunks = []
        self.size = 0

    def add(self, raw):
        """Append ``raw`` bytes; returns their offset."""
        offset = self.size
        self.chunks.append(bytes(raw))
        self.size += len(raw)
        return offset

    def write(self, path):
        with open(path, "wb") as fh:
            fh.writelines(self.chunks)
