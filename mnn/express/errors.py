"""Exceptions raised by the expression engine."""

__all__ = ["MnnError", "OpError"]


class MnnError(Exception):
    """Base class of mnn's own errors."""


class OpError(MnnError, ValueError):
    """An op was given inputs or attributes it cannot take.

    Subclasses ``ValueError`` so code written against numpy's errors keeps working. The
    message names the op, the input shapes and dtypes, and what is wrong.
    """
