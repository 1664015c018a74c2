"""numpy's ``pad`` in all its modes."""
import numpy as np

from ..express.ops import np_signal as _nsig
from ._util import asvar

__all__ = ["pad"]

_OPTIONS = {
    "constant": ("constant_values",),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _hashable(value):
    if isinstance(value, str):
        return value
    arr = np.asarray(value)
    if arr.ndim == 0:
        return arr.item()
    return tuple(_hashable(v) for v in arr)


def pad(array, pad_width, mode="constant", **kwargs):  # noqa: A002 - numpy's name
    """``array`` padded by ``pad_width`` in numpy's ``mode``.

    Parameters
    ----------
    array : Var or array_like
    pad_width : int or sequence
        ``n``, ``(before, after)`` or one ``(before, after)`` pair per axis.
    mode : str
        ``constant``, ``edge``, ``linear_ramp``, ``maximum``, ``mean``, ``median``,
        ``minimum``, ``reflect``, ``symmetric``, ``wrap`` or ``empty`` (zeros here).
        Callable modes are not supported.
    **kwargs
        The mode's options: ``constant_values``, ``end_values``, ``stat_length``,
        ``reflect_type``.

    Returns
    -------
    Var
    """
    if callable(mode):
        raise TypeError("mnn.numpy.pad: callable modes are not supported")
    x = asvar(array)
    allowed = _OPTIONS.get(mode, ())
    for key in kwargs:
        if key not in allowed:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': {{'{key}'}}")
    widths = np.asarray(pad_width.read() if hasattr(pad_width, "read") else pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    try:
        widths = np.broadcast_to(widths, (x.ndim, 2))
    except ValueError:
        raise ValueError(f"mnn.numpy.pad: pad_width {pad_width!r} does not fit a "
                         f"{x.ndim}-d array") from None
    widths = tuple((int(b), int(a)) for b, a in widths)
    if mode == "empty":
        # numpy leaves the border uninitialized; zeros make it deterministic.
        mode, kwargs = "constant", {}
    options = tuple(sorted((k, _hashable(v)) for k, v in kwargs.items()))
    return _nsig.np_pad(x, widths, mode, options)
