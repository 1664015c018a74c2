"""The fused inverted-residual block: its kernel and the evaluation-time fusion, against
torch (expand 1x1 + relu6, depthwise 3x3 + relu6, project 1x1, residual); then blocks in
a row fused into one kernel call (fusion_block.Chain, fused_block.inverted_residual_chain),
against torch block by block."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import fused_block as fb
from mnn._cython import sgemm
from mnn.express import graph
from mnn.express.ops import fusion_block

torch = pytest.importorskip("torch")
tf = torch.nn.functional


def _weights(rng, cin, ce, cout, expand):
    ce = ce if expand else cin
    w1 = (rng.standard_normal((ce, cin, 1, 1)) * 0.3).astype(np.float32) if expand else None
    b1 = rng.standard_normal(ce).astype(np.float32) if expand else None
    wd = (rng.standard_normal((ce, 1, 3, 3)) * 0.3).astype(np.float32)
    b2 = rng.standard_normal(ce).astype(np.float32)
    w3 = (rng.standard_normal((cout, ce, 1, 1)) * 0.3).astype(np.float32)
    b3 = rng.standard_normal(cout).astype(np.float32)
    return w1, b1, wd, b2, w3, b3


def _torch_block(x, w1, b1, wd, b2, w3, b3, stride, residual, clamp3=None):
    """The block in torch: numpy in and out, or a tensor in and out (for autograd)."""
    src = x if isinstance(x, torch.Tensor) else torch.from_numpy(x)
    t = src
    if w1 is not None:
        t = torch.clamp(tf.conv2d(t, torch.from_numpy(w1), torch.from_numpy(b1)), 0, 6)
    t = torch.clamp(tf.conv2d(t, torch.from_numpy(wd), torch.from_numpy(b2), stride=stride,
                              padding=1, groups=wd.shape[0]), 0, 6)
    t = tf.conv2d(t, torch.from_numpy(w3), torch.from_numpy(b3))
    if clamp3 is not None:
        t = torch.clamp(t, *clamp3)
    if residual:
        t = t + src
    return t if isinstance(x, torch.Tensor) else t.numpy()


def _fed_block(seed, shape, stride, residual):
    """A block graph on a written placeholder, read once: ``(data, placeholder, output,
    weights)``."""
    rng = np.random.default_rng(seed)
    weights = _weights(rng, shape[1], 4 * shape[1], shape[1], True)
    data = rng.standard_normal(shape).astype(np.float32)
    xp = F.placeholder(list(shape))
    xp.write(data)
    y = _graph_block(xp, *weights, stride, residual)
    y.read()
    return data, xp, y, weights


CASES = [
    # n, cin, h, w, ce, cout, stride, expand, residual, threads
    (1, 16, 40, 36, 96, 24, 2, True, False, 1),
    (1, 24, 23, 29, 144, 24, 1, True, True, 1),
    (1, 24, 23, 29, 144, 24, 1, True, True, 2),
    (2, 8, 13, 11, 20, 8, 1, True, True, 2),
    (3, 5, 9, 7, 7, 6, 2, True, False, 2),
    (1, 32, 30, 30, 32, 16, 1, False, False, 2),
    (1, 6, 1, 1, 12, 6, 1, True, True, 1),
    (1, 6, 2, 3, 12, 5, 2, True, False, 2),
    (1, 40, 7, 7, 240, 40, 1, True, True, 2),
    (2, 9, 5, 17, 9, 11, 2, False, False, 3),
    (1, 4, 150, 6, 600, 4, 1, True, True, 2),  # tall: many bands, e rows carried over
    (1, 4, 151, 6, 600, 4, 2, True, False, 1),
    (1, 130, 14, 14, 200, 33, 1, True, False, 2),  # deep K both sides (direct's choice)
    (2, 160, 7, 7, 960, 160, 1, True, True, 2),
    # fewer images than threads, small: whole images, threads split channels
    (2, 12, 9, 9, 72, 12, 1, True, True, 3),
    (1, 130, 14, 14, 200, 130, 1, True, True, 2),
    (1, 96, 14, 14, 576, 160, 2, True, False, 2),
    # the direct project split by depth: a thread without channels (one expand slab for
    # two threads), output slabs of 32 and 8, a residual, three threads
    (1, 8, 6, 6, 24, 40, 1, True, False, 2),
    (1, 40, 6, 6, 72, 40, 1, True, True, 3),
    # small planes at stride 1: the depthwise step runs dw3x3's flat stream, in one band
    # (one thread, or an image per thread) and with the threads splitting channels
    (1, 24, 7, 7, 96, 24, 1, True, True, 1),
    (1, 12, 12, 12, 48, 12, 1, True, True, 1),
    (3, 12, 5, 5, 48, 16, 1, True, False, 2),
    (1, 12, 5, 5, 48, 16, 1, False, False, 2),
    # stride 2 in bands with a packed expand: e rows deinterleaved (fused_block.h); odd
    # and even widths, a partial last 16-lane step, many bands carrying rows over, an
    # image split in row ranges between threads, a deep expand (K > 32: packed B)
    (1, 8, 21, 33, 48, 8, 2, True, False, 1),
    (1, 4, 61, 19, 300, 4, 2, True, False, 1),
    (2, 16, 30, 34, 64, 16, 2, True, False, 2),
    (1, 8, 64, 40, 96, 8, 2, True, False, 2),
    (1, 48, 20, 20, 96, 24, 2, True, False, 1),
]


def _pack(w, direct):
    w2 = w.reshape(w.shape[0], -1)
    return sgemm.pack_weight_direct(w2) if direct else sgemm.pack_weight(w2)


@pytest.mark.parametrize("direct", [False, True], ids=["packed", "direct"])
@pytest.mark.parametrize("case", CASES)
def test_kernel_matches_torch(case, direct):
    if direct and not fb.direct_available():
        pytest.skip("the direct kernel needs AVX-512")
    n, cin, h, w, ce, cout, s, expand, residual, threads = case
    rng = np.random.default_rng(sum(case))
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    w1, b1, wd, b2, w3, b3 = _weights(rng, cin, ce, cout, expand)
    ce = wd.shape[0]
    y = np.empty((n, cout, (h - 1) // s + 1, (w - 1) // s + 1), np.float32)
    pa1 = _pack(w1, direct) if expand else None
    fb.inverted_residual(x, pa1, b1, 0.0, 6.0, wd.reshape(ce, 9), b2, 0.0, 6.0, s,
                         _pack(w3, direct), b3, -np.inf, np.inf, x if residual else None, y,
                         threads, direct, direct)
    want = _torch_block(x, w1, b1, wd, b2, w3, b3, s, residual)
    np.testing.assert_allclose(y, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def _kernel_args(rng):
    x = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    w1, b1, wd, b2, w3, b3 = _weights(rng, 8, 16, 8, True)
    return {"x": x, "pa1": sgemm.pack_weight(w1.reshape(16, 8)), "b1": b1, "lo1": 0.0,
            "hi1": 6.0, "wdw": wd.reshape(16, 9), "b2": b2, "lo2": 0.0, "hi2": 6.0,
            "stride": 1, "pa3": sgemm.pack_weight(w3.reshape(8, 16)), "b3": b3,
            "lo3": -np.inf, "hi3": np.inf, "r": None, "y": np.empty((1, 8, 6, 6), np.float32),
            "nthreads": 1}


@pytest.mark.parametrize("field, value, message", [
    ("stride", 3, "stride must be 1 or 2"),
    ("y", np.empty((1, 8, 5, 6), np.float32), "output"),
    ("r", np.empty((1, 8, 6, 5), np.float32), "residual"),
    ("b2", np.zeros(15, np.float32), "depthwise weight"),
    ("pa3", np.zeros(7, np.float32), "packed project weight"),
    ("pa1", np.zeros(7, np.float32), "packed expand weight"),
    ("b1", np.zeros(3, np.float32), "packed expand weight"),
    ("nthreads", 0, "nthreads"),
    # a packed-GEMM weight flagged direct (without AVX-512: no direct kernel at all)
    ("direct3", True, "packed project weight|needs AVX-512"),
])
def test_kernel_rejects_mismatched_arguments(field, value, message):
    args = _kernel_args(np.random.default_rng(0))
    args[field] = value
    with pytest.raises(ValueError, match=message):
        fb.inverted_residual(**args)


def test_kernel_without_expand_needs_matching_channels():
    args = _kernel_args(np.random.default_rng(1))
    args["pa1"] = None
    with pytest.raises(ValueError, match="without expand"):
        fb.inverted_residual(**args)


def _graph_block(x, w1, b1, wd, b2, w3, b3, stride, residual, clamp3=None):
    # weights as arrays (made constants) or as Vars
    def v(a):
        return a if isinstance(a, F.Var) else F.const(a)

    h = x
    if w1 is not None:
        h = F.conv2d(h, v(w1), v(b1), (1, 1), (0, 0), activation="relu6")
    h = F.conv2d(h, v(wd), v(b2), (stride, stride), (1, 1), group=wd.shape[0],
                 activation="relu6")
    y = F.conv2d(h, v(w3), v(b3), (1, 1), (0, 0))
    if clamp3 is not None:
        y = F.clip(y, *clamp3)
    return x + y if residual else y


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stride, residual, expand", [
    (1, True, True), (2, False, True), (1, False, False), (2, False, False)])
def test_graph_is_fused_and_matches_torch(threads, stride, residual, expand):
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(stride * 10 + residual + expand)
        cin = cout = 12
        w1, b1, wd, b2, w3, b3 = _weights(rng, cin, 48, cout, expand)
        xp = F.placeholder([2, cin, 17, 15])
        y = _graph_block(xp, w1, b1, wd, b2, w3, b3, stride, residual)
        for _ in range(2):  # a second write: the fused chain runs again
            data = rng.standard_normal((2, cin, 17, 15)).astype(np.float32)
            xp.write(data)
            got = y.read()
            want = _torch_block(data, w1, b1, wd, b2, w3, b3, stride, residual)
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
        # the expanded and depthwise images were never stored
        project = y.expr.inputs[1].expr if residual else y.expr
        dw = project.inputs[0].expr
        assert dw.values is None
    finally:
        F.set_thread_number(1)


def test_planner_finds_the_chain_and_skips_held_intermediates(monkeypatch):
    rng = np.random.default_rng(3)
    w1, b1, wd, b2, w3, b3 = _weights(rng, 8, 32, 8, True)
    xp = F.placeholder([1, 8, 9, 9])
    xp.write(rng.standard_normal((1, 8, 9, 9)).astype(np.float32))
    calls = []
    original = fusion_block._compute_chain
    # each fused run's blocks, as [expand, depthwise, project, add] Exprs
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides, stem=None: calls.append(chain) or
                        original(chain, strides, stem))
    y = _graph_block(xp, w1, b1, wd, b2, w3, b3, 1, True)
    y.read()
    assert len(calls) == 1 and len(calls[0]) == 1 and calls[0][0][3] is y.expr
    # The same block with its depthwise output held by the user: nothing fused, and the
    # held value is there to read.
    calls.clear()
    e = F.conv2d(xp, F.const(w1), F.const(b1), (1, 1), (0, 0), activation="relu6")
    d = F.conv2d(e, F.const(wd), F.const(b2), (1, 1), (1, 1), group=32, activation="relu6")
    y2 = xp + F.conv2d(d, F.const(w3), F.const(b3), (1, 1), (0, 0))
    np.testing.assert_allclose(y2.read(), y.read(), rtol=1e-6, atol=1e-6)
    assert calls == []
    assert d.expr.values is not None


def test_released_member_is_recomputed_when_read_later():
    data, _, y, (w1, b1, wd, b2, _, _) = _fed_block(4, (1, 6, 8, 8), 2, False)
    dw_var = y.expr.inputs[0]
    want = torch.clamp(tf.conv2d(
        torch.clamp(tf.conv2d(torch.from_numpy(data), torch.from_numpy(w1),
                              torch.from_numpy(b1)), 0, 6),
        torch.from_numpy(wd), torch.from_numpy(b2), stride=2, padding=1, groups=24), 0, 6)
    np.testing.assert_allclose(dw_var.read(), want.numpy(), rtol=2e-5, atol=2e-5)


def test_other_paddings_and_float64_are_not_fused(monkeypatch):
    calls = []
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides, stem=None: calls.append(chain))
    rng = np.random.default_rng(5)
    w1, b1, wd, b2, w3, b3 = _weights(rng, 4, 8, 4, True)
    x = F.const(rng.standard_normal((1, 4, 7, 7)).astype(np.float32))
    h = F.conv2d(x, F.const(w1), F.const(b1), (1, 1), (0, 0), activation="relu6")
    h = F.conv2d(h, F.const(wd), F.const(b2), (1, 1), (0, 0), group=8)  # no pads: VALID
    F.conv2d(h, F.const(w3), F.const(b3), (1, 1), (0, 0)).read()
    x64 = F.const(rng.standard_normal((1, 4, 7, 7)))
    h = F.conv2d(x64, F.const(w1.astype(np.float64)), None, (1, 1), (0, 0))
    h = F.conv2d(h, F.const(wd.astype(np.float64)), None, (1, 1), (1, 1), group=8)
    F.conv2d(h, F.const(w3.astype(np.float64)), None, (1, 1), (0, 0)).read()
    assert calls == []


def test_fused_graph_after_resize_matches_torch():
    # A resize makes a new evaluation plan; the block runs fused at both sizes.
    rng = np.random.default_rng(6)
    w1, b1, wd, b2, w3, b3 = _weights(rng, 8, 24, 8, True)
    xp = F.placeholder([1, 8, 12, 12])
    y = _graph_block(xp, w1, b1, wd, b2, w3, b3, 1, True)
    for shape in ((1, 8, 12, 12), (2, 8, 9, 15), (1, 8, 12, 12)):
        if tuple(xp.shape) != shape:
            xp.resize(list(shape))
        data = rng.standard_normal(shape).astype(np.float32)
        xp.write(data)
        want = _torch_block(data, w1, b1, wd, b2, w3, b3, 1, True)
        np.testing.assert_allclose(y.read(), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
        assert y.expr.inputs[1].expr.inputs[0].expr.values is None  # fused: never stored


def test_gradient_after_a_fused_read_matches_torch():
    # The block ran fused (its intermediates never stored); the gradient graph built after
    # reads them, so they are computed again.
    data, xp, y, weights = _fed_block(7, (1, 6, 10, 10), 1, True)
    (g,) = F.grad(F.reduce_sum(y * y), [xp])
    t = torch.from_numpy(data).requires_grad_(True)
    yt = _torch_block(t, *weights, 1, True)
    (yt * yt).sum().backward()
    np.testing.assert_allclose(g.read(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


# cin, ce, cout, stride, expand, residual: a stage of MobileNetV2 in small (strides,
# residuals, no expand, channels that change)
STAGE = [(8, 8, 6, 1, False, False), (6, 24, 10, 2, True, False), (10, 40, 10, 1, True, True),
         (10, 40, 10, 1, True, True), (10, 30, 14, 2, True, False)]


@pytest.fixture
def chain_lengths(monkeypatch):
    """The number of blocks of each fused chain run (fusion_block._compute_chain)."""
    calls = []
    original = fusion_block._compute_chain
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides, stem=None: calls.append(len(chain)) or
                        original(chain, strides, stem))
    return calls


def _stage_weights(rng, stage):
    return [_weights(rng, cin, ce, cout, expand) for cin, ce, cout, _, expand, _ in stage]


def _torch_stage(x, stage, weights):
    t = torch.from_numpy(x)
    for (_, _, _, stride, _, residual), w in zip(stage, weights):
        t = _torch_block(t, *w, stride, residual)
    return t.numpy()


def _graph_stage(x, stage, weights, keep=None):
    """The stage as conv2d ops; ``keep`` (a list) receives every block's output Var."""
    t = x
    for (_, _, _, stride, _, residual), w in zip(stage, weights):
        t = _graph_block(t, *w, stride, residual)
        if keep is not None:
            keep.append(t)
    return t


def _tol(want):
    return dict(rtol=3e-5, atol=3e-5 * np.abs(want).max())


def _two_runs_match_torch(rng, xp, y, stage, weights):
    """Write new data to ``xp`` twice; each time ``y`` matches the stage in torch."""
    for _ in range(2):
        data = rng.standard_normal(tuple(xp.shape)).astype(np.float32)
        xp.write(data)
        want = _torch_stage(data, stage, weights)
        np.testing.assert_allclose(y.read(), want, **_tol(want))


def _kernel_blocks(stage, weights):
    """The blocks of ``stage`` with ``weights`` as inverted_residual_chain takes them
    (1x1 weights packed for the GEMM), one per weight set given."""
    blocks = []
    for (cin, ce, cout, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(stage, weights):
        pa1 = sgemm.pack_weight(w1.reshape(ce, cin)) if w1 is not None else None
        blocks.append((pa1, b1, 0.0, 6.0, wd.reshape(ce, 9), b2, 0.0, 6.0, stride,
                       sgemm.pack_weight(w3.reshape(cout, ce)), b3, -np.inf, np.inf,
                       residual, False, False))
    return blocks


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 8, 23, 19), (2, 8, 9, 9), (1, 8, 2, 3)])
def test_kernel_chain_matches_torch(shape, threads):
    rng = np.random.default_rng(sum(shape) + threads)
    weights = _stage_weights(rng, STAGE)
    x = rng.standard_normal(shape).astype(np.float32)
    blocks = _kernel_blocks(STAGE, weights)
    want = _torch_stage(x, STAGE, weights)
    y = np.full(want.shape, np.nan, np.float32)
    fb.inverted_residual_chain(x, blocks, y, threads)
    np.testing.assert_allclose(y, want, **_tol(want))


def _chain_args(rng):
    blocks = [list(b) for b in _kernel_blocks(STAGE, _stage_weights(rng, STAGE[:2]))]
    return rng.standard_normal((1, 8, 6, 6)).astype(np.float32), blocks


def test_kernel_chain_rejects_blocks_that_do_not_chain():
    x, blocks = _chain_args(np.random.default_rng(0))
    with pytest.raises(ValueError, match="output"):
        fb.inverted_residual_chain(x, blocks, np.empty((1, 10, 6, 6), np.float32))
    with pytest.raises(ValueError, match="no blocks"):
        fb.inverted_residual_chain(x, [], np.empty((1, 10, 3, 3), np.float32))
    # block 0 made to output 7 channels (a bias of 7 values; its packed weight, padded to
    # whole slabs, has room for them): block 1's expand takes 6
    blocks[0][10] = np.zeros(7, np.float32)
    with pytest.raises(ValueError, match=r"block 1 of the chain: .*\(24, 7\) conv"):
        fb.inverted_residual_chain(x, blocks, np.empty((1, 10, 3, 3), np.float32))
    x, blocks = _chain_args(np.random.default_rng(1))
    blocks[1][13] = True  # a residual across a stride-2 block: shapes differ
    with pytest.raises(ValueError, match="adds its input"):
        fb.inverted_residual_chain(x, blocks, np.empty((1, 10, 3, 3), np.float32))


def test_chain_plan_serves_new_inputs_and_python_threads_at_once():
    import threading

    rng = np.random.default_rng(5)
    weights = _stage_weights(rng, STAGE)
    blocks = _kernel_blocks(STAGE, weights)
    shape = (2, 8, 13, 11)
    plan = fb.chain_plan(shape, blocks, 2)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    wants = [_torch_stage(x, STAGE, weights) for x in xs]
    assert plan.y_shape == wants[0].shape
    errors = []

    def worker(i):
        try:
            for _ in range(20):
                y = np.full(plan.y_shape, np.nan, np.float32)
                plan.run(xs[i], y)
                np.testing.assert_allclose(y, wants[i], **_tol(wants[i]))
        except AssertionError as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    with pytest.raises(ValueError, match=r"input \(1, 8, 13, 11\) is not the plan's"):
        plan.run(xs[0][:1], np.empty(plan.y_shape, np.float32))
    with pytest.raises(ValueError, match="output"):
        plan.run(xs[0], np.empty((2, 1, 1, 1), np.float32))


@pytest.mark.parametrize("threads", [1, 2])
def test_graph_stage_runs_as_one_chain_and_matches_torch(chain_lengths, threads):
    calls = chain_lengths
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(11)
        weights = _stage_weights(rng, STAGE)
        xp = F.placeholder([1, 8, 15, 13])
        y = _graph_stage(xp, STAGE, weights)
        # the second run takes the cached plan
        _two_runs_match_torch(rng, xp, y, STAGE, weights)
        assert calls == [len(STAGE), len(STAGE)]
    finally:
        F.set_thread_number(1)


def test_held_block_output_splits_the_chain_and_keeps_its_value(chain_lengths):
    calls = chain_lengths
    rng = np.random.default_rng(12)
    weights = _stage_weights(rng, STAGE)
    data = rng.standard_normal((1, 8, 11, 11)).astype(np.float32)
    xp = F.placeholder([1, 8, 11, 11])
    xp.write(data)
    outs = []
    y = _graph_stage(xp, STAGE, weights, keep=outs)
    held = outs[2]  # the user keeps block 2's output: chains end and start there
    del outs
    want = _torch_stage(data, STAGE, weights)
    np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert calls == [3, 2]
    assert held.expr.values is not None
    want_held = _torch_stage(data, STAGE[:3], weights[:3])
    np.testing.assert_allclose(held.read(), want_held, **_tol(want_held))


def test_block_output_inside_a_chain_is_recomputed_when_read_later():
    rng = np.random.default_rng(13)
    weights = _stage_weights(rng, STAGE)
    data = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
    xp = F.placeholder([1, 8, 10, 12])
    xp.write(data)
    y = _graph_stage(xp, STAGE, weights)
    y.read()
    # block 3's output (the input of block 4) was never stored; reading it now revives it
    inner = y.expr.inputs[0].expr.inputs[0].expr.inputs[0]  # project <- dw <- expand <-
    assert inner.expr.op.name == "add" and inner.expr.values is None
    want = _torch_stage(data, STAGE[:4], weights[:4])
    np.testing.assert_allclose(inner.read(), want, **_tol(want))
    np.testing.assert_allclose(y.read(), _torch_stage(data, STAGE, weights),
                               **_tol(want))


def _torch_expand(x, w1, b1):
    return torch.clamp(torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w1),
                                                  torch.from_numpy(b1)), 0, 6).numpy()


@pytest.mark.parametrize("trainable", [False, True])
def test_member_read_between_runs_then_new_input_is_fresh(chain_lengths, trainable):
    # After a run the chain's members hold no values and count as fresh. Members read on
    # their own compute values; the next run (new input) must leave none of them looking
    # fresh with its old value, and reading the output again must not run the chain.
    # (With a trainable weight the graph releases no values after a run: a member read
    # on its own keeps its value until the next run drops it.)
    rng = np.random.default_rng(21)
    weights = _stage_weights(rng, STAGE)
    xp = F.placeholder([1, 8, 10, 12])
    y = _graph_stage(xp, STAGE, weights)
    inner = y.expr.inputs[0].expr.inputs[0].expr.inputs[0]  # block 3's output
    expand = inner.expr.inputs[1].expr.inputs[0].expr.inputs[0]  # block 3's expand
    assert expand.expr.op.name == "conv2d" and inner.expr.op.name == "add"
    if trainable:
        expand.expr.inputs[1].fix_as_trainable()
    del inner, expand  # the planner fuses only what nothing else holds
    xp.write(rng.standard_normal((1, 8, 10, 12)).astype(np.float32))
    y.read()
    inner = y.expr.inputs[0].expr.inputs[0].expr.inputs[0]
    expand = inner.expr.inputs[1].expr.inputs[0].expr.inputs[0]
    for _ in range(3):
        data = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
        xp.write(data)
        want = _torch_stage(data, STAGE, weights)
        np.testing.assert_allclose(y.read(), want, **_tol(want))
        runs = len(chain_lengths)
        np.testing.assert_allclose(y.read(), want, **_tol(want))
        assert len(chain_lengths) == runs  # fresh: not run again
        before = _torch_stage(data, STAGE[:3], weights[:3])
        want_expand = _torch_expand(before, *weights[3][:2])
        np.testing.assert_allclose(expand.read(), want_expand, **_tol(want_expand))
        want_inner = _torch_stage(data, STAGE[:4], weights[:4])
        np.testing.assert_allclose(inner.read(), want_inner, **_tol(want_inner))
    assert chain_lengths == [len(STAGE)] * 4


def test_weight_written_between_runs_leaves_the_output_fresh(chain_lengths):
    rng = np.random.default_rng(22)
    weights = _stage_weights(rng, STAGE)
    xp = F.placeholder([1, 8, 10, 12])
    t, projects = xp, []
    for (_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(STAGE, weights):
        projects.append(F.const(w3))
        t = _graph_block(t, w1, b1, wd, b2, projects[-1], b3, stride, residual)
    y = t
    xp.write(rng.standard_normal((1, 8, 10, 12)).astype(np.float32))
    y.read()
    for scale in (0.5, 2.0):
        # a new input and a new weight inside the chain, then a new input only
        new_w3 = weights[2][4] * np.float32(scale)
        projects[2].write(new_w3)
        weights[2] = weights[2][:4] + (new_w3,) + weights[2][5:]
        for _ in range(2):
            data = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
            xp.write(data)
            runs = len(chain_lengths)
            want = _torch_stage(data, STAGE, weights)
            np.testing.assert_allclose(y.read(), want, **_tol(want))
            assert len(chain_lengths) == runs + 1  # through the chain
            computed, original = [], graph.Expr._compute
            graph.Expr._compute = lambda e: computed.append(e) or original(e)
            try:
                np.testing.assert_allclose(y.read(), want, **_tol(want))
            finally:
                graph.Expr._compute = original
            assert len(chain_lengths) == runs + 1 and not computed  # its output fresh


def test_project_ending_a_lone_block_then_a_chain():
    # The first plan (block 0's output held, the shape then changed) runs block 1 alone;
    # the next one (nothing held, after another resize) chains both: the prepared
    # arguments of one must not be taken for the other's.
    rng = np.random.default_rng(14)
    stage = STAGE[1:3]
    weights = _stage_weights(rng, stage)
    xp = F.placeholder([1, 6, 9, 9])
    outs = []
    y = _graph_stage(xp, stage, weights, keep=outs)
    held = outs[0]
    del outs
    for shape, hold in (((1, 6, 9, 9), True), ((1, 6, 11, 7), True), ((1, 6, 8, 8), False)):
        if tuple(xp.shape) != shape:
            xp.resize(list(shape))
        if not hold:
            held = None
        data = rng.standard_normal(shape).astype(np.float32)
        xp.write(data)
        want = _torch_stage(data, stage, weights)
        np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert held is None


def test_block_whose_expand_weight_is_computed_in_the_graph():
    # The weight is an op's value (released after each run, like any graph-only value):
    # the next run computes it again before the fused block reads it.
    rng = np.random.default_rng(15)
    w1, b1, wd, b2, w3, b3 = _weights(rng, 8, 8, 8, True)
    wp = F.placeholder([8, 8, 1, 1])
    wp.write(w1 / 2)
    xp = F.placeholder([1, 8, 9, 9])
    h = F.conv2d(xp, wp * 2.0, F.const(b1), (1, 1), (0, 0), activation="relu6")
    h = F.conv2d(h, F.const(wd), F.const(b2), (1, 1), (1, 1), group=8, activation="relu6")
    y = xp + F.conv2d(h, F.const(w3), F.const(b3), (1, 1), (0, 0))
    for _ in range(3):
        data = rng.standard_normal((1, 8, 9, 9)).astype(np.float32)
        xp.write(data)
        want = _torch_block(data, w1, b1, wd, b2, w3, b3, 1, True)
        np.testing.assert_allclose(y.read(), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def _fed_stage(rng):
    """The STAGE graph on a written placeholder, read once: ``(placeholder, output,
    weights)``."""
    weights = _stage_weights(rng, STAGE)
    xp = F.placeholder([1, 8, 15, 13])
    y = _graph_stage(xp, STAGE, weights)
    xp.write(rng.standard_normal((1, 8, 15, 13)).astype(np.float32))
    y.read()
    return xp, y, weights


def test_chain_reads_weights_written_between_runs(chain_lengths):
    # A chain keeps its weight Vars and settings between runs, not their values: weights
    # written after a run are the ones the next run uses.
    calls = chain_lengths
    rng = np.random.default_rng(16)
    xp, y, weights = _fed_stage(rng)
    # the last block (no residual): y = project(depthwise(expand(.)))
    w3_var, b3_var = y.expr.inputs[1], y.expr.inputs[2]
    b2_var = y.expr.inputs[0].expr.inputs[2]
    last = list(weights[-1])
    last[5] = rng.standard_normal(last[5].shape).astype(np.float32)  # b3
    last[4] = (last[4] * 0.5).astype(np.float32)  # w3
    last[3] = rng.standard_normal(last[3].shape).astype(np.float32)  # b2
    w3_var.write(last[4])
    b3_var.write(last[5])
    b2_var.write(last[3])
    weights[-1] = tuple(last)
    # the whole stage runs again: one chain call with the new weights
    _two_runs_match_torch(rng, xp, y, STAGE, weights)
    assert calls == [len(STAGE)] * 3


def test_chain_reads_a_placeholder_weight_written_between_runs(chain_lengths):
    # A weight given as a placeholder: writing it moves no epoch (inputs are written
    # every run), so the chain compares the weights' values at every run.
    rng = np.random.default_rng(17)
    weights = _stage_weights(rng, STAGE)
    xp = F.placeholder([1, 8, 9, 11])
    w3p = F.placeholder(list(weights[1][4].shape))
    t = xp
    for i, ((_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3)) in enumerate(
            zip(STAGE, weights)):
        t = _graph_block(t, w1, b1, wd, b2, w3p if i == 1 else w3, b3, stride, residual)
    y = t
    for scale in (1.0, 0.5, 2.0):
        w3 = (weights[1][4] * scale).astype(np.float32)
        w3p.write(w3)
        weights[1] = weights[1][:4] + (w3,) + weights[1][5:]
        data = rng.standard_normal((1, 8, 9, 11)).astype(np.float32)
        xp.write(data)
        want = _torch_stage(data, STAGE, weights)
        np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert chain_lengths == [len(STAGE)] * 3


@pytest.mark.parametrize("stage", [STAGE[:4], STAGE], ids=["ends-with-add", "ends-with-project"])
def test_dropped_graph_is_freed_with_its_chain_entry(chain_lengths, stage):
    # The chain's prepared entry is keyed weakly by the last project conv; whatever it
    # holds must not keep that key (so the graph) alive once nobody holds the graph.
    import gc
    import weakref

    rng = np.random.default_rng(17)
    weights = _stage_weights(rng, stage)
    xp = F.placeholder([1, 8, 9, 11])
    y = _graph_stage(xp, stage, weights)
    _two_runs_match_torch(rng, xp, y, stage, weights)
    assert chain_lengths == [len(stage)] * 2
    root = weakref.ref(y.expr)
    key = y.expr if y.expr.op.name == "conv2d" else y.expr.inputs[1].expr
    assert key.op.name == "conv2d" and key in fusion_block._PREPARED
    key = weakref.ref(key)
    del xp, y
    gc.collect()
    assert root() is None and key() is None


def test_chain_follows_a_weight_var_replaced_between_runs(chain_lengths):
    # A weight Var rewired to another Expr (Var.replace) between runs: the chain must read
    # the new Expr's value, not the one it found the first time.
    calls = chain_lengths
    rng = np.random.default_rng(18)
    xp, y, weights = _fed_stage(rng)
    last = list(weights[-1])
    last[4] = (last[4] * 0.5).astype(np.float32)  # w3 of the last block
    y.expr.inputs[1].replace(F.const(last[4]))
    weights[-1] = tuple(last)
    _two_runs_match_torch(rng, xp, y, STAGE, weights)
    assert calls == [len(STAGE)] * 3
