"""Dense-layer fusion in a compiled training step's plan.

A dense layer's forward is ``relu(matmul(x, w) + bias)``: three plan steps, each with its
own call, checks and fresh output array, where the two elementwise ones cost more than
their arithmetic on a small layer. When the product and the sum feed nothing else, the
three become one step (:data:`mnn.express.ops.linalg.MATMUL_BIAS`): the product is
computed into a fresh array, then the bias is added and the relu applied in place.
Each element sees the same float operations in the same order as before (one rounded
product sum, one rounded add, one max with 0), so results are bit-identical; only the
intermediate arrays and two steps' overhead go.

A gradient plan also multiplies by constants of ones (the loss's seed gradient broadcast
to a tensor's shape and folded): ``x * 1`` is ``x`` exactly, so such a step is dropped
and its readers read ``x`` (:func:`drop_unit_products`).

The rewrites work on the plan's steps only: the user's graph keeps its ops.
"""
import numpy as np

from ..express.ops.linalg import MATMUL_BIAS

__all__ = ["drop_unit_products", "fuse_dense_layers"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def fuse_dense_layers(plan, slot_metas):
    """Fuse ``matmul -> add(bias) [-> relu]`` runs of ``plan``'s steps, in place.

    Parameters
    ----------
    plan : Plan
        A freshly built plan (its liveness is recomputed when anything was fused).
    slot_metas : dict
        ``slot -> TensorMeta`` for the slots whose shapes are known statically; steps
        touching other slots are left alone.

    Returns
    -------
    int
        How many matmul steps took an add.
    """
    steps = plan.steps
    keep = set(plan.output_slots)
    readers = {}
    for step in steps:
        for s in step.inputs:
            readers[s] = readers.get(s, 0) + 1
    reader_of = {}
    for step in steps:
        for s in step.inputs:
            reader_of[s] = step
    dropped = set()
    fused = 0
    for step in steps:
        if step.op.name != "matmul" or id(step) in dropped or len(step.outputs) != 1:
            continue
        product = step.outputs[0]
        add = _sole_reader(product, readers, reader_of, keep)
        if add is None or add.op.name != "add" or len(add.inputs) != 2:
            continue
        bias_first = add.inputs[0] != product
        bias = add.inputs[0] if bias_first else add.inputs[1]
        if bias == product or not _bias_fits(slot_metas, product, bias, add.outputs[0]):
            continue
        relu = _sole_reader(add.outputs[0], readers, reader_of, keep)
        clamp = (relu is not None and relu.op.name == "relu" and len(relu.inputs) == 1
                 and float(relu.attrs.get("slope", 0.0)) == 0.0)
        last = relu if clamp else add
        step.op = MATMUL_BIAS
        step.compute = MATMUL_BIAS.compute
        step.attrs = {"transpose_a": step.attrs["transpose_a"],
                      "transpose_b": step.attrs["transpose_b"],
                      "bias_first": bias_first, "relu": clamp}
        step.inputs = tuple(step.inputs) + (bias,)
        step.outputs = last.outputs
        step.name = last.name or add.name or step.name
        dropped.add(id(add))
        if clamp:
            dropped.add(id(relu))
        fused += 1
    if fused:
        plan.steps = [s for s in steps if id(s) not in dropped]
        plan._plan_liveness()
        plan._checked.clear()
    return fused


def _sole_reader(slot, readers, reader_of, keep):
    """The one step reading ``slot`` when nothing else (no other step, no plan output)
    does; else None."""
    if slot in keep or readers.get(slot) != 1:
        return None
    return reader_of[slot]


def _bias_fits(slot_metas, product, bias, out):
    """The add leaves the product's shape and float dtype unchanged (so it can run in
    place on the product) and the bias does not promote it."""
    mp, mb, mo = slot_metas.get(product), slot_metas.get(bias), slot_metas.get(out)
    if mp is None or mb is None or mo is None:
        return False
    if mp.shape is None or mb.shape is None or mo.shape is None:
        return False
    if mp.dtype not in _FLOATS or mb.dtype != mp.dtype or mo.dtype != mp.dtype:
        return False
    if tuple(mo.shape) != tuple(mp.shape) or len(mb.shape) > len(mp.shape):
        return False
    try:
        return np.broadcast_shapes(tuple(mp.shape), tuple(mb.shape)) == tuple(mp.shape)
    except ValueError:
        return False


def drop_unit_products(plan, slot_metas):
    """Drop ``multiply`` steps by a constant whose elements are all one, when the
    constant neither widens the other operand's shape nor changes its dtype: the product
    is that operand, bit for bit. In place.

    Parameters
    ----------
    plan : Plan
    slot_metas : dict
        ``slot -> TensorMeta`` of slots with static shapes (see :func:`fuse_dense_layers`).

    Returns
    -------
    int
        How many steps were dropped.
    """
    keep = set(plan.output_slots)
    rename = {}
    kept = []
    for step in plan.steps:
        if rename:
            step.inputs = tuple([rename.get(s, s) for s in step.inputs])
        other = _unit_product_operand(step, plan.constants, slot_metas, keep)
        if other is None:
            kept.append(step)
        else:
            rename[step.outputs[0]] = other
    if rename:
        plan.steps = kept
        plan._plan_liveness()
        plan._checked.clear()
    return len(rename)


def _unit_product_operand(step, constants, slot_metas, keep):
    """The slot ``step`` multiplies by ones (see drop_unit_products), or None."""
    if (step.op.name != "multiply" or len(step.inputs) != 2 or len(step.outputs) != 1
            or step.outputs[0] in keep):
        return None
    for ones, other in (step.inputs, step.inputs[::-1]):
        value = constants.get(ones)
        meta = slot_metas.get(other)
        if value is None or meta is None or meta.shape is None or other in constants:
            continue
        if value.dtype != meta.dtype or value.dtype not in _FLOATS:
            continue
        if value.ndim > len(meta.shape):
            continue
        try:
            if np.broadcast_shapes(value.shape, tuple(meta.shape)) != tuple(meta.shape):
                continue
        except ValueError:
            continue
        if np.all(value == 1):
            return other
    return None
