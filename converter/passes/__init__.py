"""Graph passes over the express graph (the IR) before it is written.

:func:`optimize` runs them by ``--optimizeLevel``:

- 0: nothing.
- 1: constant folding (shape chains included: ``Shape``/``Gather``/``Concat`` over static
  shapes are already constants when built), BatchNormalization folded into the preceding
  convolution, relu/relu6 (and Clip(0, 6)) fused into the convolution before them,
  duplicate ops and duplicate constants merged.
- 2: the same (every rewrite here is exact for any input).

Identity and inference-mode Dropout never reach the graph (the frontend returns their
input), Clip(0, 6) becomes ``relu6`` and Relu ``relu`` when converted, and dead code does
not exist in an express graph: only what the outputs reach is ever written.
"""
from .rewrite import (
    fold_constants,
    fold_conv_batchnorm,
    fuse_activations,
    matmul_to_conv,
    merge_duplicates,
)

__all__ = [
    "fold_constants",
    "fold_conv_batchnorm",
    "fuse_activations",
    "matmul_to_conv",
    "merge_duplicates",
    "optimize",
]


def optimize(outputs, level=1, keep_training=False, quantizing=False, prefer=0):
    """Rewrite the graph above ``outputs`` (a list of Vars) in place.

    Parameters
    ----------
    outputs : list of Var
    level : int
        ``--optimizeLevel`` (0, 1 or 2).
    keep_training : bool
        ``--forTraining``: keep BatchNormalization apart from the convolution.
    quantizing : bool
        Weights will be quantised: fully connected layers (matmul by a constant) become
        1x1 convolutions, whose weights the writer quantises (MNN does the same).
    prefer : int
        ``--optimizePrefer``: 1 (smallest file) keeps constant ops whose folded value
        would be bigger than their inputs; 0 and 2 fold everything (fastest to run).

    Returns
    -------
    dict
        Pass name -> number of rewrites.
    """
    stats = {}
    if level <= 0:
        return stats
    stats["constants folded"] = fold_constants(outputs, keep_growing=prefer == 1)
    if not keep_training:
        stats["batchnorms folded into conv"] = fold_conv_batchnorm(outputs)
        stats["activations fused into conv"] = fuse_activations(outputs)
    if quantizing:
        stats["matmuls as 1x1 conv"] = matmul_to_conv(outputs)
    stats["duplicates merged"] = merge_duplicates(outputs)
    return stats
