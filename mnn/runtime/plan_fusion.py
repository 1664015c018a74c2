"""Plan passes that merge chains of steps into one step (loaded models, compiled graphs).

The express engine fuses the same chains at evaluation time (mnn/express/ops/
fusion_block.py and fusion_add_relu.py); a :class:`~mnn.runtime.plan.Plan` is built once
and run many times, so here the steps themselves are rewritten once:

* an inverted-residual block (1x1 conv, depthwise 3x3 conv, 1x1 conv, optionally plus
  the block's input) becomes one ``inverted_residual_block`` step, computed band by band
  by :func:`mnn.express.ops.fusion_block.run_chain` (a chain of one);
* blocks in a row, each one's output read only by the next, then become one
  ``inverted_residual_chain`` step (:func:`mnn.express.ops.fusion_block.run_chain`: one
  kernel call for all of them);
* ``relu(conv2d(...) + skip)`` becomes one ``conv2d_add_relu`` step: the convolution,
  then the add and relu in one pass in place in its fresh output;
* ``max_pool(conv2d(...))`` becomes one ``conv2d_max_pool`` step: when the
  convolution runs by the direct kernel, :func:`mnn.express.ops.fusion_conv_pool.run`
  pools band by band the conv rows it computes (ResNet's stem);
* a converted classifier, ``reduce_mean`` over H and W, ``reshape`` to ``(N, C, 1, 1)``, a
  1x1 ``conv2d`` and a last ``reshape``, becomes one ``global_pool_dense`` step: the
  plane means straight into the convolution's input, no dispatch between; with the conv
  below the mean, when only the mean reads it, computed with the means in one kernel
  call where :func:`mnn.express.ops.fusion_dense.conv_means` takes it.

A chain is merged only when its intermediate slots feed nothing else and are not plan
outputs. A merged step checks shapes with the ops' own inference, chained, so a wrong
shape fails with the same message; when its arrays do not suit the fused kernel (not
float32, say) it computes the ops one by one.
"""
import numpy as np

from ..express.ops import fusion_add_relu, fusion_block, fusion_conv_pool, fusion_dense
from ..express.ops.movement import _reshape_target
from ..express.ops.nn_pool import pool_planes
from ..express.optable import OpDef, TensorMeta, get_op

__all__ = ["fuse_steps"]

_CONV = "conv2d"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _walk_chain(parts, values, step):
    """Feed a chain op by op: ``parts`` is ``[(op name, attrs, n extra inputs)]``, the
    first op taking ``values[0]``, each next one the previous result; extra inputs follow
    in ``values``. A trailing ``add`` takes the chain's first input as its other operand.
    ``step(name, inputs, attrs)`` gives an op's result (its inference or its compute)."""
    current, k = values[0], 1
    for name, attrs, extra in parts:
        if name == "add":
            ins = [current, values[0]]
        else:
            ins = [current] + list(values[k:k + extra])
            k += extra
        current = step(name, ins, attrs)
    return current


def _infer_step(name, metas, attrs):
    (shape, dtype), = get_op(name).infer(metas, **attrs)
    return TensorMeta(shape, dtype)


def _compute_step(name, arrays, attrs):
    return get_op(name).compute(arrays, **attrs)


# -- inverted-residual blocks ---------------------------------------------------------


def _parts_infer(metas, parts):
    # a merged step's inference: its ops' own, chained
    out = _walk_chain(parts, metas, _infer_step)
    return [(out.shape, out.dtype)]


def _block_args(arrays, parts):
    """``(w1, b1, clamp1, wd, b2, clamp2, stride, w3, b3, clamp3, residual)`` of a block
    step from its weight arrays (``arrays`` without the block's input)."""
    convs = [p for p in parts if p[0] == _CONV]
    expand = len(convs) == 3
    k = 0
    taken = []
    for _, attrs, extra in convs:
        w = arrays[k]
        b = arrays[k + 1] if extra == 2 else None
        taken.append((w, b, fusion_block.clamp_of(attrs)))
        k += extra
    (w1, b1, c1) = taken[0] if expand else (None, None, (0.0, 0.0))
    (wd, b2, c2), (w3, b3, c3) = taken[-2], taken[-1]
    stride = convs[-2][1]["strides"][0]
    return w1, b1, c1, wd, b2, c2, stride, w3, b3, c3, parts[-1][0] == "add"


def _block_compute(arrays, parts, stem=None):
    y = fusion_block.run_chain(arrays[0], [_block_args(arrays[1:], parts)], stem=stem)
    return y if y is not None else _walk_chain(parts, arrays, _compute_step)


def _weight_count(parts):
    return sum(extra for _, _, extra in parts)


def _block_infer(metas, parts, stem=None):
    return _parts_infer(metas, parts)


BLOCK_OP = OpDef("inverted_residual_block", _block_infer, _block_compute,
                 doc="conv 1x1 -> depthwise 3x3 -> conv 1x1 [+ input], one step of a plan")


# -- blocks in a row -------------------------------------------------------------------


def _split(values, blocks):
    """The chain step's ``values`` (its input, then each block's weights) as one list of
    weights per block."""
    out, k = [], 1
    for parts in blocks:
        n = _weight_count(parts)
        out.append(values[k:k + n])
        k += n
    return out


def _chain_infer(metas, blocks, prepared=None, stem=None):
    current = metas[0]
    for parts, weights in zip(blocks, _split(metas, blocks)):
        current = _walk_chain(parts, [current] + list(weights), _infer_step)
    return [(current.shape, current.dtype)]


def _chain_layout(blocks):
    """``(positions, settings)``: where each block's ``w1, b1, wd, b2, w3, b3`` are in the
    chain step's arrays (None: absent) and the blocks' settings, flattened as
    :func:`mnn.express.ops.fusion_block.run_chain_flat` takes them."""
    positions, settings = [], []
    count = 1 + sum(_weight_count(parts) for parts in blocks)
    # _block_args on the arrays' positions instead of the arrays gives the positions
    for parts, weights in zip(blocks, _split(list(range(count)), blocks)):
        w1, b1, c1, wd, b2, c2, stride, w3, b3, c3, residual = _block_args(weights, parts)
        positions.extend((w1, b1, wd, b2, w3, b3))
        settings.extend((c1, c2, stride, c3, residual))
    return positions, tuple(settings)


def _chain_compute(arrays, blocks, prepared, stem=None):
    # The blocks' settings and where their weights sit among the step's arrays, found
    # once per step: a run only picks its arrays.
    layout = prepared.get("layout")
    if layout is None or layout[0] is not blocks:
        layout = prepared["layout"] = (blocks, *_chain_layout(blocks))
    flat = [None if i is None else arrays[i] for i in layout[1]]
    y = fusion_block.run_chain_flat(arrays[0], flat, layout[2], prepared, stem)
    if y is not None:
        return y
    current = arrays[0]  # the arrays do not suit the fused kernel: block by block
    for i, (parts, weights) in enumerate(zip(blocks, _split(arrays, blocks))):
        current = _block_compute([current] + list(weights), parts, stem if i == 0 else None)
    return current


CHAIN_OP = OpDef("inverted_residual_chain", _chain_infer, _chain_compute,
                 doc="inverted-residual blocks in a row, one step of a plan")


# -- relu(conv + skip) ----------------------------------------------------------------


def _add_relu_infer(metas, conv_attrs, skip_first):
    (shape, dtype), = get_op(_CONV).infer(metas[:-1], **conv_attrs)
    conv = TensorMeta(shape, dtype)
    ins = [metas[-1], conv] if skip_first else [conv, metas[-1]]
    (shape, dtype), = get_op("add").infer(ins)
    return get_op("relu").infer([TensorMeta(shape, dtype)], slope=0.0)


def _add_relu_compute(arrays, conv_attrs, skip_first):
    y = get_op(_CONV).compute(arrays[:-1], **conv_attrs)
    skip = arrays[-1]
    if (fusion_add_relu.owns_its_memory(y) and type(skip) is np.ndarray
            and y.shape == skip.shape and y.dtype == skip.dtype
            and y.dtype in (np.float32, np.float64)):
        return fusion_add_relu.add_relu_into(y, skip, y)
    total = get_op("add").compute([skip, y] if skip_first else [y, skip])
    return get_op("relu").compute([total], slope=0.0)


ADD_RELU_OP = OpDef("conv2d_add_relu", _add_relu_infer, _add_relu_compute,
                    doc="relu(conv2d(...) + skip), one step of a plan")


# -- max_pool(conv2d(...)) ----------------------------------------------------------


def _conv_pool_infer(metas, conv_attrs, pool_attrs, prepared=None):
    (shape, dtype), = get_op(_CONV).infer(metas, **conv_attrs)
    return get_op("max_pool").infer([TensorMeta(shape, dtype)], **pool_attrs)


def _conv_pool_compute(arrays, conv_attrs, pool_attrs, prepared=None):
    y = fusion_conv_pool.run(arrays, conv_attrs, pool_attrs, prepared)
    if y is not None:
        return y
    conv = get_op(_CONV).compute(arrays, **conv_attrs)
    return get_op("max_pool").compute([conv], **pool_attrs)


CONV_POOL_OP = OpDef("conv2d_max_pool", _conv_pool_infer, _conv_pool_compute,
                     doc="max_pool(conv2d(...)), one step of a plan")


# -- classifier head: [conv,] mean over H and W, reshape to (N, C, 1, 1), 1x1 conv
#    [, reshape] --


def _head_compute(arrays, parts, prepared=None):
    if parts[0][0] == _CONV:
        # the conv whose output only the mean reads: computed here, pooled, never kept
        extra = parts[0][2]
        conv_arrays, rest = arrays[:1 + extra], list(arrays[1 + extra:])
        # the conv and the plane means in one kernel call when it takes them (the same
        # values: fusion_dense.conv_means)
        means = fusion_dense.conv_means(conv_arrays, parts[0][1], prepared) \
            if prepared is not None else None
        if means is not None and _flattens(means.shape, parts[2][1]):
            return _dense_tail(means.reshape(means.shape + (1, 1)), rest, parts[1:])
        conv = get_op(_CONV).compute(conv_arrays, **parts[0][1])
        arrays, parts = [conv] + rest, parts[1:]
    x = arrays[0]
    if type(x) is np.ndarray and x.ndim == 4 and x.dtype in _FLOATS and \
            x.shape[2] * x.shape[3] > 0 and _flattens(x.shape[:2], parts[1][1]):
        # The mean as reduce_mean computes it (the pooling kernel's plane means),
        # straight into the conv's (N, C, 1, 1) input.
        return _dense_tail(pool_planes(np.ascontiguousarray(x), False), arrays[1:], parts)
    return _walk_chain(parts, arrays, _compute_step)


def _flattens(nc_shape, reshape):
    """Whether the head's reshape takes the means ``(N, C)`` to ``(N, C, 1, 1)``."""
    return _reshape_target(tuple(nc_shape), reshape["shape"], reshape["zero_copies"]) == \
        tuple(nc_shape) + (1, 1)


def _dense_tail(pooled, weights, parts):
    """The head's 1x1 conv (``parts[2]``) of the ``(N, C, 1, 1)`` means and its last
    reshape, if any (``parts[3]``)."""
    y = get_op(_CONV).compute([pooled] + list(weights), **parts[2][1])
    if len(parts) == 4:
        y = get_op("reshape").compute([y], **parts[3][1])
    return y


def _head_infer(metas, parts, prepared=None):
    return _parts_infer(metas, parts)


HEAD_OP = OpDef("global_pool_dense", _head_infer, _head_compute,
                doc="[conv,] mean over H and W, reshape, 1x1 conv [, reshape]: a "
                    "converted classifier, one step of a plan")


# -- the pass --------------------------------------------------------------------------


def fuse_steps(steps, keep, constants):
    """``steps`` with the chains above merged (``keep``: slots that must stay, the plan's
    outputs; ``constants``: slot -> array of the constant slots, whose shapes tell the
    weights apart)."""
    readers = {}
    for step in steps:
        for s in step.inputs:
            readers[s] = readers.get(s, 0) + 1
    producer = {s: step for step in steps for s in step.outputs}

    def only_reader(slot):
        return slot not in keep and readers.get(slot) == 1

    merged = {}  # id(step) -> the step replacing it (at the final step's place)
    absorbed = set()
    # From the end: a chain is found from its last step, so the longest one (a block
    # with its residual add) is taken before a shorter one inside it.
    for step in reversed(steps):
        if id(step) in absorbed:
            continue
        found = _block_at(step, producer, only_reader, constants, absorbed)
        if found is None:
            found = _add_relu_at(step, producer, only_reader, absorbed)
        if found is None:
            found = _head_at(step, producer, only_reader, constants, absorbed)
        if found is None:
            found = _conv_pool_at(step, producer, only_reader, absorbed)
        if found is None:
            continue
        members, fused = found
        absorbed.update(id(m) for m in members if m is not step)
        merged[id(step)] = fused
    if not merged:
        return steps
    return _chain_blocks([merged.get(id(step), step) for step in steps
                          if id(step) not in absorbed], keep)


def _chain_blocks(steps, keep):
    """Block steps in a row (each one's output read only by the next block) merged into
    one ``inverted_residual_chain`` step."""
    readers = {}
    for step in steps:
        for s in step.inputs:
            readers[s] = readers.get(s, 0) + 1
    out, row = [], []

    def flush():
        if len(row) == 1:
            out.append(row[0])
        elif row:
            inputs = (row[0].inputs[0],) + tuple(s for b in row for s in b.inputs[1:])
            # ``prepared``: the kernel arguments run_chain keeps between runs of the step
            attrs = {"blocks": tuple(b.attrs["parts"] for b in row), "prepared": {},
                     "stem": row[0].attrs["stem"]}
            out.append(_new_step(row[-1], CHAIN_OP, attrs, inputs))
        row.clear()

    for step in steps:
        if step.op is BLOCK_OP:
            # a stem block reads an image: it starts a row
            if row and not (step.attrs["stem"] is None and
                            step.inputs[0] == row[-1].outputs[0] and
                            step.inputs[0] not in keep and readers[step.inputs[0]] == 1):
                flush()
            row.append(step)
            continue
        flush()
        out.append(step)
    flush()
    return out


def _weight_shape(step, constants, i=1):
    w = constants.get(step.inputs[i]) if len(step.inputs) > i else None
    return None if w is None or w.ndim != 4 else w.shape


def _is_conv(step):
    return step.op.name == _CONV and len(step.outputs) == 1 and len(step.inputs) in (2, 3)


def _block_at(step, producer, only_reader, constants, absorbed):
    """``(members, fused step)`` when ``step`` ends an inverted-residual block."""
    add = None
    project = step
    if step.op.name == "add" and len(step.inputs) == 2:
        for i in range(2):
            p = producer.get(step.inputs[i])
            if p is not None and _is_conv(p) and only_reader(step.inputs[i]):
                add, project, block_in_slot = step, p, step.inputs[1 - i]
                break
        if add is None:
            return None
    if not _is_conv(project) or id(project) in absorbed:
        return None
    w3 = _weight_shape(project, constants)
    if w3 is None or not fusion_block.pointwise_attrs(project.attrs, w3):
        return None
    dw = producer.get(project.inputs[0])
    if dw is None or not _is_conv(dw) or not only_reader(project.inputs[0]) or \
            id(dw) in absorbed:
        return None
    wd = _weight_shape(dw, constants)
    if wd is None or fusion_block.depthwise_stride(dw.attrs, wd) is None:
        return None
    expand, stem = producer.get(dw.inputs[0]), None
    if expand is not None and _is_conv(expand) and only_reader(dw.inputs[0]) and \
            id(expand) not in absorbed:
        w1 = _weight_shape(expand, constants)
        if w1 is None:
            expand = None
        elif not fusion_block.pointwise_attrs(expand.attrs, w1):
            # not a 1x1 expand: a stem (fusion_block's module doc) when the block adds
            # nothing
            stem = None if add is not None else fusion_block.stem_attrs(
                expand.attrs, w1, constants[expand.inputs[1]].dtype)
            if stem is None:
                expand = None
    else:
        expand = None
    convs = [c for c in (expand, dw, project) if c is not None]
    x_slot = convs[0].inputs[0]
    if add is not None and (block_in_slot != x_slot or
                            fusion_block.depthwise_stride(dw.attrs, wd) != 1):
        return None
    parts = [(_CONV, c.attrs, len(c.inputs) - 1) for c in convs]
    inputs = [x_slot] + [s for c in convs for s in c.inputs[1:]]
    last = project
    if add is not None:
        parts.append(("add", {}, 0))
        last = add
    members = convs + ([add] if add is not None else [])
    fused = _new_step(last, BLOCK_OP, {"parts": tuple(parts), "stem": stem}, tuple(inputs))
    return members, fused


def _add_relu_at(step, producer, only_reader, absorbed):
    """``(members, fused step)`` when ``step`` is ``relu(conv + skip)``."""
    if step.op.name != "relu" or step.attrs.get("slope", 0.0) != 0.0 or \
            len(step.inputs) != 1:
        return None
    add = producer.get(step.inputs[0])
    if add is None or add.op.name != "add" or len(add.inputs) != 2 or \
            not only_reader(step.inputs[0]) or id(add) in absorbed:
        return None
    for i in range(2):
        conv = producer.get(add.inputs[i])
        if conv is not None and _is_conv(conv) and only_reader(add.inputs[i]) and \
                add.inputs[1 - i] != add.inputs[i] and id(conv) not in absorbed:
            attrs = {"conv_attrs": conv.attrs, "skip_first": i == 1}
            fused = _new_step(step, ADD_RELU_OP, attrs,
                              tuple(conv.inputs) + (add.inputs[1 - i],))
            return [conv, add], fused
    return None


def _conv_pool_at(step, producer, only_reader, absorbed):
    """``(members, fused step)`` when ``step`` is a max pool of a convolution's output
    that nothing else reads."""
    if step.op.name != "max_pool" or len(step.inputs) != 1:
        return None
    conv = producer.get(step.inputs[0])
    if conv is None or not _is_conv(conv) or not only_reader(step.inputs[0]) or \
            id(conv) in absorbed:
        return None
    # ``prepared``: the kernel geometry fusion_conv_pool.run keeps between runs
    attrs = {"conv_attrs": conv.attrs, "pool_attrs": step.attrs, "prepared": {}}
    return [conv], _new_step(step, CONV_POOL_OP, attrs, tuple(conv.inputs))


def _head_at(step, producer, only_reader, constants, absorbed):
    """``(members, fused step)`` when ``step`` ends a classifier head: ``reduce_mean``
    over axes 2 and 3, ``reshape``, a 1x1 ``conv2d`` (stride 1, no pads, one group),
    optionally a last ``reshape``; with the ``conv2d`` whose output only the mean reads
    (MobileNetV2's last conv), when there is one."""
    conv = step
    if step.op.name == "reshape" and len(step.inputs) == 1:
        conv = producer.get(step.inputs[0])
        if conv is None or not only_reader(step.inputs[0]):
            return None
    if not _is_conv(conv) or id(conv) in absorbed:
        return None
    w = _weight_shape(conv, constants)
    attrs = conv.attrs
    if w is None or w[2:] != (1, 1) or attrs["group"] != 1 or \
            tuple(attrs["strides"]) != (1, 1) or any(attrs["pads"]) or \
            tuple(attrs["dilations"]) != (1, 1):
        return None
    reshape = producer.get(conv.inputs[0])
    if reshape is None or reshape.op.name != "reshape" or len(reshape.inputs) != 1 or \
            not only_reader(conv.inputs[0]) or id(reshape) in absorbed:
        return None
    mean = producer.get(reshape.inputs[0])
    if mean is None or mean.op.name != "reduce_mean" or len(mean.inputs) != 1 or \
            not only_reader(reshape.inputs[0]) or id(mean) in absorbed or \
            tuple(mean.attrs["axes"]) != (2, 3) or mean.attrs["keepdims"]:
        return None
    members = [mean, reshape, conv] + ([step] if step is not conv else [])
    parts = [("reduce_mean", mean.attrs, 0), ("reshape", reshape.attrs, 0),
             (_CONV, attrs, len(conv.inputs) - 1)]
    if step is not conv:
        parts.append(("reshape", step.attrs, 0))
    inputs = (mean.inputs[0],) + tuple(conv.inputs[1:])
    below = producer.get(mean.inputs[0])
    if below is not None and _is_conv(below) and only_reader(mean.inputs[0]) and \
            id(below) not in absorbed:
        members.insert(0, below)
        parts.insert(0, (_CONV, below.attrs, len(below.inputs) - 1))
        inputs = tuple(below.inputs) + tuple(conv.inputs[1:])
    # ``prepared``: the conv + mean kernel's setups, kept between runs (conv_means)
    fused = _new_step(step, HEAD_OP, {"parts": tuple(parts), "prepared": {}}, inputs)
    return members, fused


def _new_step(last, op, attrs, inputs):
    # The plan's own step class, named after the chain's last op (hooks see that name).
    return type(last)(op, attrs, inputs, last.outputs, last.name)
