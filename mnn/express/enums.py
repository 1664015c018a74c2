"""MNN.expr's enums, with MNN's names and values (``include/MNN/expr/NeuralNetWorkOp.hpp``).

The members are ints, so they can be stored as plain op attributes and written to
``.mnn`` files unchanged.
"""
import enum

__all__ = ["Padding_Mode", "Pooling_Mode", "Interp_Method", "PadValue_Mode", "CAFFE", "VALID",
           "SAME", "MAXPOOL", "AVEPOOL", "BILINEAR", "NEAREST", "CONSTANT", "REFLECT",
           "SYMMETRIC"]


class Padding_Mode(enum.IntEnum):  # noqa: N801 - MNN's name
    """How convolution and pooling pad: explicit pads (CAFFE), none (VALID), or SAME."""

    CAFFE = 0
    VALID = 1
    SAME = 2


class Pooling_Mode(enum.IntEnum):  # noqa: N801
    """Max or average pooling (roi_align's mode)."""

    MAXPOOL = 0
    AVEPOOL = 1


class Interp_Method(enum.IntEnum):  # noqa: N801
    """Interpolation of crop_and_resize."""

    BILINEAR = 0
    NEAREST = 1


class PadValue_Mode(enum.IntEnum):  # noqa: N801
    """What ``pad`` fills the border with: a constant (0), a mirror without the edge
    element (REFLECT, numpy's "reflect") or a mirror with it (SYMMETRIC)."""

    CONSTANT = 0
    REFLECT = 1
    SYMMETRIC = 2


CONSTANT, REFLECT, SYMMETRIC = (PadValue_Mode.CONSTANT, PadValue_Mode.REFLECT,
                                PadValue_Mode.SYMMETRIC)
CAFFE, VALID, SAME = Padding_Mode.CAFFE, Padding_Mode.VALID, Padding_Mode.SAME
MAXPOOL, AVEPOOL = Pooling_Mode.MAXPOOL, Pooling_Mode.AVEPOOL
BILINEAR, NEAREST = Interp_Method.BILINEAR, Interp_Method.NEAREST
