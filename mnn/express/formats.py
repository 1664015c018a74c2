"""Data formats: MNN's ``data_format`` enum.

``NC4HW4`` is kept as a label with MNN's meaning, but its logical layout is NCHW: ``read()``
always returns logical data and every op accepts NCHW where MNN wants NC4HW4
(see DESIGN.md: NC4HW4 confusion is the most frequent complaint of MNN users).
"""
import enum

__all__ = ["data_format", "NCHW", "NHWC", "NC4HW4", "NHWC4", "UNKNOWN", "is_channels_last"]


class data_format(enum.IntEnum):
    """MNN's data-format enum (``MNN.expr.data_format``)."""

    NCHW = 0
    NHWC = 1
    NC4HW4 = 2
    NHWC4 = 3
    UNKNOWN = 4


NCHW = data_format.NCHW
NHWC = data_format.NHWC
NC4HW4 = data_format.NC4HW4
NHWC4 = data_format.NHWC4
UNKNOWN = data_format.UNKNOWN


def is_channels_last(fmt):
    """True for layouts whose logical channel axis is the last one."""
    return fmt in (data_format.NHWC, data_format.NHWC4)
