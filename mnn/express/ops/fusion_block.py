"""Evaluation-time fusion of MobileNetV2's inverted-residual block into one kernel call.

The chain ``conv2d`` 1x1 (expand, optional) -> depthwise ``conv2d`` 3x3 (pads 1, stride 1
or 2) -> ``conv2d`` 1x1 (project), optionally followed by an ``add`` of the block's input,
is computed band by band by the kernel of :mod:`mnn._cython.fused_block`: the expanded
and depthwise images (up to six times the input's channels) stay in cache instead of
going to memory and back, and three or four ops cost one call. Blocks in a row, each
one's output read only by the next, are one call too (:class:`Chain`): no Python runs
between them and their outputs go to two scratch images.

A block without a 1x1 expand whose depthwise conv reads a conv the direct kernel runs
(MobileNetV2's first conv: 3x3, stride 2, 3 -> 32 channels) takes that conv as its
expand, a *stem*: the kernel computes the stem's output rows band by band into cache as
it would a 1x1 expand's, so the largest activation of the network never goes to memory.
A stem block starts its chain (its input is an image, not a block's output).

A chain is fused only when nothing else can read its intermediate values (their Vars
are referenced only by the next op of the chain, as :mod:`.fusion` checks for a product)
and all are float32. The skipped ops keep no values but stay fresh; should anything read
them later they are computed then, like any released value. Results are the ops' own up
to float rounding order inside the GEMMs (the same kernels run, on bands).
"""
import operator
import sys
import weakref

import numpy as np

from ..._cython import fused_block as _kernel
from ..._cython import sgemm as _sgemm
from ..enums import Padding_Mode
from ..errors import OpError
from ..graph import EPOCH_SOURCES, source_epoch
from ..runtime import get_thread_number
from . import nn_common as nc
from .nn_conv import _packed_weight, _use_direct, direct_any_size, direct_geometry

__all__ = ["Block", "Chain", "clamp_of", "depthwise_stride", "plan", "pointwise_attrs",
           "run_chain"]

_F32 = np.dtype(np.float32)
_VALUES = operator.attrgetter("expr.values")
# Last project conv Expr of a block or chain -> its prepared kernel arguments
# (run_chain), dropped with the graph.
_PREPARED = weakref.WeakKeyDictionary()
# References to an intermediate Var held only by the graph: its one consumer's inputs
# list, the caller's loop variable, this function's argument and getrefcount's own.
_GRAPH_ONLY_REFS = 4


def _graph_only(v):
    return sys.getrefcount(v) == _GRAPH_ONLY_REFS


def _conv_parts(expr):
    """``(x_var, w_shape, x_shape)`` of a float32 conv2d Expr with known shapes, else None."""
    if expr.op is None or expr.op.name != "conv2d" or len(expr.inputs) not in (2, 3):
        return None
    x, w = expr.inputs[0], expr.inputs[1]
    xm, wm = x.expr.metas[x.index], w.expr.metas[w.index]
    if xm.shape is None or wm.shape is None or xm.dtype != _F32 or wm.dtype != _F32:
        return None
    if len(xm.shape) != 4 or len(wm.shape) != 4 or expr.metas[0].dtype != _F32:
        return None
    return x, tuple(wm.shape), tuple(xm.shape)


def pointwise_attrs(attrs, w_shape):
    """Whether conv2d ``attrs`` with weight shape ``w_shape`` make a 1x1, stride 1,
    unpadded, ungrouped conv (the block's expand or project)."""
    if tuple(w_shape[2:]) != (1, 1) or attrs["group"] != 1 or attrs["strides"] != (1, 1) \
            or attrs["dilations"] != (1, 1):
        return False
    # SAME pads a 1x1 stride-1 conv by nothing, whatever the size
    return attrs["padding_mode"] == Padding_Mode.SAME or not any(attrs["pads"])


def depthwise_stride(attrs, w_shape):
    """The stride (1 or 2) when conv2d ``attrs`` with weight shape ``w_shape`` make a
    3x3 depthwise conv with pads 1 and channel multiplier 1, else None.

    Explicit pads only: SAME's would depend on the input size, and a plan is kept across
    runs (shapes that only computing tells may change)."""
    c = w_shape[0]
    if tuple(w_shape) != (c, 1, 3, 3) or attrs["group"] != c or c < 1 or \
            attrs["dilations"] != (1, 1):
        return None
    if attrs["strides"] not in ((1, 1), (2, 2)) or attrs["padding_mode"] == Padding_Mode.SAME \
            or tuple(attrs["pads"]) != (1, 1, 1, 1):
        return None
    return attrs["strides"][0]


def _pointwise(expr):
    """The 1x1 conv's input Var (see :func:`pointwise_attrs`), else None."""
    parts = _conv_parts(expr)
    if parts is None or not pointwise_attrs(expr.attrs, parts[1]):
        return None
    return parts[0]


def stem_attrs(attrs, w_shape, dtype):
    """The settings ``(kernel, strides, pads, dilations, padding_mode)`` a fused chain
    keeps for a stem expand (see the module doc) when conv2d ``attrs`` with a weight of
    ``w_shape`` and ``dtype`` make an undilated conv that is not 1x1 stride 1 (those are
    ordinary expands) and that the direct kernel runs whatever the input's size, else
    None. (:func:`_chain_args` still checks the geometry at each run.)"""
    if len(w_shape) != 4 or attrs["dilations"] != (1, 1) or \
            pointwise_attrs(attrs, w_shape) or \
            not direct_any_size(dtype, w_shape, attrs["strides"], attrs["dilations"],
                                attrs["group"]):
        return None
    return (tuple(w_shape[2:]), tuple(attrs["strides"]), tuple(attrs["pads"]),
            (1, 1), attrs["padding_mode"])


def _stem(expr):
    """:func:`stem_attrs` of a conv2d Expr whose direct kernel would run it for its
    input as last inferred, else None."""
    parts = _conv_parts(expr)
    if parts is None:
        return None
    spec = stem_attrs(expr.attrs, parts[1], _F32)
    if spec is None or _stem_geometry(parts[2], parts[1], spec) is None:
        return None
    return spec


def _stem_geometry(x_shape, w_shape, spec):
    """``(kh, kw, sh, sw, pt, pl, oh, ow)`` of a stem (settings ``spec``) over an input of
    ``x_shape``, or None when the direct kernel would not run it."""
    kernel, strides, pads, dilations, mode = spec
    try:
        found = direct_geometry(x_shape, _F32, w_shape, strides, pads, dilations, 1, mode)
    except OpError:
        return None  # no output: the op's own error, computed op by op
    if found is None:
        return None
    (pt, pl, _, _), (oh, ow) = found
    return (kernel[0], kernel[1], strides[0], strides[1], pt, pl, oh, ow)


def _depthwise(expr):
    """``(input Var, stride)`` of a 3x3 depthwise conv (:func:`depthwise_stride`), else
    None."""
    parts = _conv_parts(expr)
    if parts is None or parts[2][1] != parts[1][0]:
        return None
    stride = depthwise_stride(expr.attrs, parts[1])
    return None if stride is None else (parts[0], stride)


class Block:
    """One fusable chain: ``members`` computed by one kernel call that stores ``final``."""

    __slots__ = ("add", "depthwise", "expand", "final", "members", "project", "stem",
                 "stride")

    def __init__(self, expand, depthwise, project, add, stride, stem=None):
        self.expand, self.depthwise, self.project, self.add = expand, depthwise, project, add
        self.stride = stride
        self.stem = stem  # the expand's stem_attrs when it is a stem
        chain = [e for e in (expand, depthwise, project) if e is not None]
        self.final = add if add is not None else project
        self.members = chain if add is not None else chain[:-1]

    def runner(self, position):
        """``run(order) -> bool``: this block's :meth:`compute` for a later evaluation of
        the same order, from positions in it (keeps no Exprs)."""
        return Chain([self]).runner(position)

    def block_input(self):
        first = self.expand if self.expand is not None else self.depthwise
        return first.inputs[0]

    def compute(self):
        """Compute ``final`` in one kernel call (a chain of one); False when the arrays do
        not allow it (then the caller computes the ops one by one)."""
        return Chain([self]).compute()


class Chain:
    """Blocks in a row, each one's output read only by the next: one kernel call
    (:func:`mnn._cython.fused_block.inverted_residual_chain`) computes them all and
    stores the last one's output. Between blocks there is then no Python at all, and the
    outputs between them go to two scratch images instead of fresh arrays."""

    __slots__ = ("blocks", "final", "members")

    def __init__(self, blocks):
        self.blocks = blocks
        self.final = blocks[-1].final
        members = []
        for block in blocks[:-1]:
            members.extend(block.members)
            members.append(block.final)
        members.extend(blocks[-1].members)
        self.members = members

    def runner(self, position):
        """``run(order) -> bool``: :meth:`compute` for a later evaluation of the same
        order, from positions in it (keeps no Exprs)."""
        at = [[None if e is None else position[id(e)]
               for e in (b.expand, b.depthwise, b.project, b.add)] for b in self.blocks]
        strides = [b.stride for b in self.blocks]
        stem = self.blocks[0].stem

        def run(order):
            return _compute_chain([[None if i is None else order[i] for i in block]
                                   for block in at], strides, stem)
        return run

    def compute(self):
        return _compute_chain([[b.expand, b.depthwise, b.project, b.add]
                               for b in self.blocks], [b.stride for b in self.blocks],
                              self.blocks[0].stem)


def _compute_chain(chain, strides, stem=None):
    """:meth:`Chain.compute` (and :meth:`Block.compute`, a chain of one) from each
    block's ``[expand, depthwise, project, add]`` Exprs (the first block's expand a stem
    with settings ``stem`` when given); False when the arrays do not allow the fused
    kernel (then the caller computes the ops one by one). A function:
    a model run calls it for every chain, and building objects per call cost a tenth of
    a small block's time."""
    tail = chain[-1]
    last_project = tail[2]
    prepared = _PREPARED.get(last_project)
    if prepared is None:
        prepared = _PREPARED[last_project] = {}
    # The weight Vars and settings of this chain, found once: a model run over and over
    # then only reads the weights' values. Kept beside the kernel arguments, keyed by
    # the chain's Exprs (not the last block's add: a value holding an Expr below the key
    # would keep the key, and the graph, alive).
    head, last_add = chain[:-1], tail[3] is not None
    known = prepared.get("chain")
    if known is None or known[0] != head or known[1] is not tail[0] or \
            known[2] is not tail[1] or known[3] != last_add or known[4] != strides:
        sources, static = _chain_sources(chain, strides)
        given = [v for v in sources if v is not None]
        known = prepared["chain"] = (head, tail[0], tail[1], last_add, list(strides),
                                     sources, static, _skipped(chain), given,
                                     all(v.expr.kind in EPOCH_SOURCES for v in given))
        prepared.pop("values", None)
    sources, static = known[5], known[6]
    first = chain[0][0] if chain[0][0] is not None else chain[0][1]
    x = _value(first.inputs[0])
    # The weights' arrays of the last run serve again when nothing can have changed
    # them: all are constant or trainable sources and none got a new value, nor was a
    # Var rewired, since (source_epoch). Otherwise their value lists (replaced, never
    # changed in place, when a value changes), read through their Vars (which
    # ``replace`` may point at another Expr), are compared by identity with the last
    # run's. A model run over and over skips even that walk over ~100 Vars (0.025 ms).
    epoch = source_epoch()
    last = prepared.get("values")
    if last is not None and known[9] and last[2] == epoch:
        arrays = last[1]
    else:
        values = list(map(_VALUES, known[8]))
        if last is not None and all(map(operator.is_, values, last[0])):
            arrays = last[1]
        else:
            arrays = []
            for v in sources:
                if v is None:
                    arrays.append(None)  # no expand conv, or no bias
                    continue
                held = v.expr.values
                if held is None:
                    return False  # released upstream: op by op (the ops revive it)
                arrays.append(held[v.index])
        prepared["values"] = (values, arrays, epoch)
    y = run_chain_flat(x, arrays, static, prepared, stem)
    if y is None:
        return False
    if last_add:
        # The last project is this entry's key: kept out of the entry, which would
        # otherwise hold its own key (and the graph) alive.
        tail[3].store_result(y, known[7] + [last_project])
    else:
        last_project.store_result(y, known[7])
    return True


def _skipped(chain):
    """The Exprs a chain's call computes without storing, inputs first: every one but
    the last block's final one (and, when that block adds its input, its project)."""
    members = []
    for expand, depthwise, project, add in chain:
        if expand is not None:
            members.append(expand)
        members.append(depthwise)
        members.append(project)
        if add is not None:
            members.append(add)
    members.pop()  # the last block's final is stored, not skipped
    if chain[-1][3] is not None:
        members.pop()  # its project: the key of the chain's entry (see _compute_chain)
    return members


def _chain_sources(chain, strides):
    """``(weight and bias Vars, settings)`` of a chain in :func:`run_chain`'s order: per
    block ``w1, b1, wd, b2, w3, b3`` (None for an absent expand conv or bias), then
    ``clamp1, clamp2, stride, clamp3, residual``."""
    sources, static = [], []
    for (expand, depthwise, project, add), stride in zip(chain, strides):
        for conv in (expand, depthwise, project):
            inputs = conv.inputs if conv is not None else ()
            sources.append(inputs[1] if len(inputs) > 1 else None)
            sources.append(inputs[2] if len(inputs) > 2 else None)
        static.extend((_clamp(expand), _clamp(depthwise), stride, _clamp(project),
                       add is not None))
    return sources, tuple(static)


# Positions of the arrays and of the other arguments in a block of run_chain.
_ARRAYS = (0, 1, 3, 4, 7, 8)
_STATIC = (2, 5, 6, 9, 10)


def run_chain(x, blocks, prepared=None, stem=None):
    """The last block's output of one block or several in a row (each one's output the
    next one's input) in one kernel call, or None when the arrays do not allow the fused
    kernel (released upstream, not float32, not 4-D, channels that do not chain).

    ``blocks``: ``(w1, b1, clamp1, wd, b2, clamp2, stride, w3, b3, clamp3, residual)``
    each: ``w1``/``b1`` None without an expand conv, a bias None for zeros, a clamp
    ``(lo, hi)``, ``residual`` whether the block adds its input.

    ``prepared`` (a dict the caller keeps between runs) holds the kernel arguments for the
    last input shape, weight arrays and block settings seen: the same arrays again (a
    model run over and over) skip the checks, the packed-weight lookups and the
    conversions.

    ``stem``: the first block's ``w1`` is a stem conv with these :func:`stem_attrs`
    (see the module doc); None when the first expand is 1x1 or absent."""
    arrays = [b[i] for b in blocks for i in _ARRAYS]
    static = tuple([b[i] for b in blocks for i in _STATIC])
    return run_chain_flat(x, arrays, static, prepared, stem)


def run_chain_flat(x, arrays, static, prepared, stem=None):
    """:func:`run_chain` from its blocks' arrays and settings flattened: per block
    ``w1, b1, wd, b2, w3, b3`` in ``arrays`` and ``clamp1, clamp2, stride, clamp3,
    residual`` in the tuple ``static`` (callers that keep the settings between runs pass
    only the arrays anew)."""
    if type(x) is not np.ndarray or x.dtype != _F32 or x.ndim != 4:
        return None
    made = None
    if prepared is not None:
        hit = prepared.get("key")
        if hit is not None and hit[0] == x.shape and hit[1] == static and \
                hit[3] == stem and \
                (hit[2] is arrays or len(hit[2]) == len(arrays) and
                 all(map(operator.is_, hit[2], arrays))):
            made = prepared["args"]
    if made is None:
        a, st = len(_ARRAYS), len(_STATIC)
        blocks = [(w1, b1, c1, wd, b2, c2, stride, w3, b3, c3, residual)
                  for (w1, b1, wd, b2, w3, b3), (c1, c2, stride, c3, residual) in
                  zip(zip(*[iter(arrays)] * a), zip(*[iter(static)] * st))]
        made = _chain_args(x.shape, blocks, stem)
        if made is None:
            return None
        if prepared is not None:
            prepared["key"], prepared["args"] = (x.shape, static, arrays, stem), made
    args, out_shape, geometry = made
    # The kernel's setup of the blocks (checked geometry and work split), made once per
    # argument list and thread count.
    threads = get_thread_number()
    plan = prepared.get("plan") if prepared is not None else None
    if plan is None or plan[0] is not made or plan[1].nthreads != threads:
        plan = (made, _kernel.chain_plan(x.shape, args, threads, geometry))
        if prepared is not None:
            prepared["plan"] = plan
    y = np.empty(out_shape, np.float32)
    x = nc.c_array(x)
    pad = None
    if geometry is not None:
        # The stem's zero-bordered input, in the scratch the conv op's direct kernel uses.
        kh, kw, sh, sw, pt, pl, oh, ow = geometry
        pad = nc.scratch("conv_direct_pad", (_sgemm.direct_pad_elements(
            x.shape, kh, kw, oh, ow, sh, sw, pt, pl, 1, 1),), np.float32)
    plan[1].run(x, y, pad)
    return y


def _chain_args(x_shape, blocks, stem=None):
    """``(per-block kernel arguments, output shape, stem geometry or None)`` for
    :func:`mnn._cython.fused_block.inverted_residual_chain`, or None when the weights do
    not make blocks that chain (as :func:`_weight_args`) or the stem would not run by the
    direct kernel."""
    n, c, h, w = x_shape
    geometry = None
    if stem is not None:
        w1 = blocks[0][0]
        if type(w1) is not np.ndarray or w1.ndim != 4 or w1.shape[2:] != stem[0]:
            return None
        geometry = _stem_geometry(x_shape, w1.shape, stem)
        if geometry is None or blocks[0][10]:  # (a stem block cannot add its input)
            return None
        h, w = geometry[6:]  # the first block's (expanded) image
    args = []
    for w1, b1, clamp1, wd, b2, clamp2, stride, w3, b3, clamp3, residual in blocks:
        if stride not in (1, 2):
            return None
        oh, ow = (h - 1) // stride + 1, (w - 1) // stride + 1
        weights = _weight_args(w1, b1, wd, b2, w3, b3, h * w, oh * ow,
                               stem=geometry is not None and not args)
        if weights is None or weights[-1] != c:
            return None
        pa1, b1, wd9, b2, pa3, b3, direct1, direct3, _ = weights
        if residual and (b3.shape[0], oh, ow) != (c, h, w):
            return None  # the residual is the block's input: shapes must match
        c = b3.shape[0]
        args.append((pa1, b1, *clamp1, wd9, b2, *clamp2, stride, pa3, b3, *clamp3,
                     bool(residual), direct1, direct3))
        h, w = oh, ow
    return args, (n, c, h, w), geometry


def _weight_args(w1, b1, wd, b2, w3, b3, pixels_in, pixels_out, stem=False):
    """``(pa1, b1, wd as (Ce, 9), b2, pa3, b3, direct1, direct3, input channels)`` of one
    block for :func:`mnn._cython.fused_block.inverted_residual_chain`, or None when the weights do not
    make a block (not float32 arrays, not 4-D, channels that do not chain). Each 1x1 conv
    runs the kernel conv2d would pick for it (``nn_conv._use_direct``: the direct one for
    deep K, or moderate K on small images; a ``stem`` expand always by the direct
    kernel, which the chain checked the conv op picks)."""
    for a in (w1, wd, w3, b1, b2, b3):
        if a is not None and (type(a) is not np.ndarray or a.dtype != _F32):
            return None
    if wd is None or w3 is None or wd.ndim != 4 or w3.ndim != 4:
        return None
    ce = wd.shape[0]
    if (w1 is not None and (w1.ndim != 4 or w1.shape[0] != ce)) or w3.shape[1] != ce:
        return None
    if stem and w1 is None:
        return None
    cin = w1.shape[1] if w1 is not None else ce
    direct1 = stem or _use_direct(_F32, cin, True, pixels_in)
    direct3 = _use_direct(_F32, ce, True, pixels_out, m=w3.shape[0])
    pa1 = _packed_weight(w1, 1, direct=direct1)[0] if w1 is not None else None
    if w1 is not None:
        b1 = np.zeros(ce, np.float32) if b1 is None else nc.c_array(b1)
    b2 = np.zeros(ce, np.float32) if b2 is None else nc.c_array(b2)
    b3 = np.zeros(w3.shape[0], np.float32) if b3 is None else nc.c_array(b3)
    return (pa1, b1, nc.c_array(wd).reshape(ce, 9), b2,
            _packed_weight(w3, 1, direct=direct3)[0], b3, direct1, direct3, cin)


def _value(v):
    values = v.expr.values
    return None if values is None else values[v.index]


def _conv_arrays(expr):
    """``(weight, bias)`` values of a conv Expr (bias None when it has none), or None when
    one of them holds no value (released upstream)."""
    inputs = expr.inputs
    w = _value(inputs[1])
    if w is None:
        return None
    if len(inputs) == 2:
        return w, None
    b = _value(inputs[2])
    return None if b is None else (w, b)


def clamp_of(attrs):
    """``(lo, hi)`` of a conv2d's fused clamp (unbounded without one)."""
    clamp = attrs.get("clamp")
    return (-np.inf, np.inf) if clamp is None else (float(clamp[0]), float(clamp[1]))


def _clamp(expr):
    return (0.0, 0.0) if expr is None else clamp_of(expr.attrs)


def plan(order):
    """``{id(final Expr): Block or Chain}`` for the fusable blocks of ``order``."""
    consumers = _consumers(order)
    # Two functions: the block search's locals hold Vars, which would count as
    # references when the chaining checks that a block's output is graph-only.
    return _chains(_blocks(order, consumers), consumers)


def _blocks(order, consumers):
    """``{id(final Expr): Block}`` for the fusable blocks of ``order``."""
    position = {id(e): i for i, e in enumerate(order)}
    claimed = set()
    blocks = {}
    for project in order:
        d_var = _pointwise(project)
        if d_var is None:
            continue
        depthwise = d_var.expr
        if id(depthwise) not in position or len(consumers[id(depthwise)]) != 1 or \
                not _graph_only(d_var):
            continue
        if _depthwise(depthwise) is None:
            continue
        e_var = depthwise.inputs[0]
        stride = depthwise.attrs["strides"][0]
        expand = e_var.expr
        stem = None
        if id(expand) in position and len(consumers[id(expand)]) == 1 and \
                _graph_only(e_var) and (_pointwise(expand) is not None or
                                        (stem := _stem(expand)) is not None):
            block_in = expand.inputs[0]
        else:
            expand, block_in = None, e_var
        # a stem block reads an image: no residual (shapes differ) to fuse
        add = _residual_add(project, block_in, consumers) if stem is None else None
        block = Block(expand, depthwise, project, add, stride, stem)
        ids = [id(m) for m in block.members] + [id(block.final)]
        if any(i in claimed for i in ids):
            continue
        claimed.update(ids)
        blocks[id(block.final)] = block
    return blocks


def _chains(blocks, consumers):
    """Blocks in a row joined into :class:`Chain` units: a block whose input is the
    previous block's output, read by nothing else (see :func:`_follows`)."""
    after = {}  # id(previous block's final) -> the block reading it
    for block in blocks.values():
        prev = block.block_input().expr
        if id(prev) in blocks and _follows(block, consumers):
            after[id(prev)] = block
    chained = {id(b) for b in after.values()}
    units = {}
    for block in blocks.values():
        if id(block) in chained:
            continue  # inside the chain of the block before it
        row = [block]
        while id(row[-1].final) in after:
            row.append(after[id(row[-1].final)])
        unit = row[0] if len(row) == 1 else Chain(row)
        units[id(unit.final)] = unit
    return units


def _follows(block, consumers):
    """Whether ``block`` may take its input from the previous block inside a chain: the
    previous output is read only by ``block``'s first conv (and its residual ``add``),
    and nothing outside the graph holds it. A stem block starts its chain."""
    if block.stem is not None:
        return False
    first = block.expand if block.expand is not None else block.depthwise
    v = first.inputs[0]
    if v.index != 0 or len(v.expr._outs) != 1:
        return False
    readers = {id(c) for c, _ in consumers.get(id(v.expr), ())}
    mine = {id(first)} | ({id(block.add)} if block.add is not None else set())
    if readers != mine or len(consumers[id(v.expr)]) != len(mine):
        return False
    return _graph_only_by(v, len(mine))


def _graph_only_by(v, readers):
    """Whether Var ``v`` is referenced only by ``readers`` consumer input lists (besides
    the caller's local name, this argument and getrefcount's own)."""
    return sys.getrefcount(v) == readers + 3


def _consumers(order):
    """Expr id -> ``[(consumer, input position)]`` within ``order`` (Exprs do not list
    their consumers). Positions, not Vars, and a function of its own: a Var held here or
    by a loop variable would count as a reference and hide a graph-only one."""
    consumers = {}
    for e in order:
        for i, v in enumerate(e.inputs):
            consumers.setdefault(id(v.expr), []).append((e, i))
    return consumers


def _residual_add(project, block_in, consumers):
    """The ``add`` of ``project``'s output and the block's input that can be fused, else
    None."""
    readers = consumers.get(id(project), ())
    if len(readers) != 1:
        return None
    add, i = readers[0]
    if add.op.name != "add" or len(add.inputs) != 2:
        return None
    other = add.inputs[1 - i]
    if other.expr is not block_in.expr or other.index != block_in.index:
        return None
    if add.metas[0].shape != project.metas[0].shape or add.metas[0].dtype != _F32:
        return None
    p_var = add.inputs[i]
    if not _graph_only(p_var):
        return None
    return add
