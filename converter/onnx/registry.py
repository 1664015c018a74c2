"""The handler table of the ONNX frontend: one explicit decorator per (op type, opset range).

A handler mirrors the ONNX spec of its op: ``handler(ctx, *inputs, **attributes)`` takes the
node's inputs positionally (``None`` for an omitted optional input) and its attributes as
keyword arguments with the spec's defaults, and returns one Var or a sequence of them (one
per node output; ``None`` for an optional output it does not produce). ``ctx`` is the
:class:`~converter.onnx.loader.NodeContext` (opset, node name, constant values, subgraphs).

Handlers are registered by the ``@onnx_op`` decorator in the family modules imported by
``converter.onnx.ops``; nothing scans globals.
"""
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["DEFAULT_DOMAIN", "find_handler", "onnx_op", "supported_ops"]

DEFAULT_DOMAIN = ""
_ALIASES = {"ai.onnx": ""}


class Handler(NamedTuple):
    op_type: str
    domain: str
    since: int
    until: int | None  # first opset this handler no longer covers, None: still current
    fn: Callable


_TABLE: dict = {}


def onnx_op(op_type, since=1, until=None, domain=DEFAULT_DOMAIN):
    """Register the decorated function for ``op_type`` at opsets ``since <= v < until``.

    Two handlers of one op may not overlap; the second registration raises.
    """
    domain = _ALIASES.get(domain, domain)

    def decorate(fn):
        entries = _TABLE.setdefault((domain, op_type), [])
        for other in entries:
            lo = max(since, other.since)
            hi = min(until or 10**9, other.until or 10**9)
            if lo < hi:
                raise RuntimeError(f"converter: two handlers for {op_type} cover opset {lo}")
        entries.append(Handler(op_type, domain, since, until, fn))
        return fn

    return decorate


def find_handler(op_type, domain, opset):
    """The handler for ``op_type`` in ``domain`` at ``opset``, or None."""
    domain = _ALIASES.get(domain, domain)
    for h in _TABLE.get((domain, op_type), ()):
        if h.since <= opset and (h.until is None or opset < h.until):
            return h.fn
    return None


def supported_ops():
    """Sorted list of ``(domain, op_type, since, until)`` for every registered handler."""
    rows = []
    for (domain, op_type), entries in _TABLE.items():
        for h in entries:
            rows.append((domain, op_type, h.since, h.until))
    return sorted(rows)
