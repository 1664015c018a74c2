"""Errors of the .mnn file reader and writer."""

from ..express.errors import MnnError

__all__ = ["ModelFileError", "RuntimeValueNeeded"]


class ModelFileError(MnnError, ValueError):
    """A model file (or the bytes given as one) cannot be read or written.

    The message names the file, the place inside it (table path such as
    ``Net.oplists[3].main(Convolution2D).weight``) and what is wrong.
    """


class RuntimeValueNeeded(ModelFileError):
    """A decoder needs the value of an input that only run time fills (a parameter the
    file takes from a graph input: Resize's scales, CumSum's axis ...). The reader then
    decodes that op when it runs, from the actual values (see mnn.format.deferred)."""
