"""Values the frontend passes between handlers besides Vars: sequences and empty optionals."""

__all__ = ["EMPTY", "Sequence"]


class Sequence(list):
    """An ONNX sequence whose length is fixed at conversion time: a list of Vars. Handlers
    return one as a single output (a plain list means one value per node output)."""


class _Empty:
    """The value of an empty Optional."""

    def __repr__(self):
        return "<empty optional>"


EMPTY = _Empty()
