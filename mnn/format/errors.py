"""Errors of the .mnn file reader and writer."""

from ..express.errors import MnnError

__all__ = ["ModelFileError"]


class ModelFileError(MnnError, ValueError):
    """A model file (or the bytes given as one) cannot be read or written.

    The message names the file, the place inside it (table path such as
    ``Net.oplists[3].main(Convolution2D).weight``) and what is wrong.
    """
