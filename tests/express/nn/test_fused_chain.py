"""Inverted-residual blocks in a row fused into one kernel call (fusion_block.Chain and
fused_block.inverted_residual_chain), against torch block by block."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import fused_block as fb
from mnn._cython import sgemm
from mnn.express.ops import fusion_block

torch = pytest.importorskip("torch")
tf = torch.nn.functional

# cin, ce, cout, stride, expand, residual: a stage of MobileNetV2 in small (strides,
# residuals, no expand, channels that change)
STAGE = [(8, 8, 6, 1, False, False), (6, 24, 10, 2, True, False), (10, 40, 10, 1, True, True),
         (10, 40, 10, 1, True, True), (10, 30, 14, 2, True, False)]


def _stage_weights(rng, stage):
    out = []
    for cin, ce, cout, _, expand, _ in stage:
        w1 = (rng.standard_normal((ce, cin, 1, 1)) * 0.3).astype(np.float32) if expand else None
        b1 = rng.standard_normal(ce).astype(np.float32) if expand else None
        wd = (rng.standard_normal((ce, 1, 3, 3)) * 0.3).astype(np.float32)
        b2 = rng.standard_normal(ce).astype(np.float32)
        w3 = (rng.standard_normal((cout, ce, 1, 1)) * 0.3).astype(np.float32)
        b3 = rng.standard_normal(cout).astype(np.float32)
        out.append((w1, b1, wd, b2, w3, b3))
    return out


def _torch_stage(x, stage, weights):
    t = torch.from_numpy(x)
    for (_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(stage, weights):
        h = t
        if w1 is not None:
            h = torch.clamp(tf.conv2d(h, torch.from_numpy(w1), torch.from_numpy(b1)), 0, 6)
        h = torch.clamp(tf.conv2d(h, torch.from_numpy(wd), torch.from_numpy(b2),
                                  stride=stride, padding=1, groups=wd.shape[0]), 0, 6)
        h = tf.conv2d(h, torch.from_numpy(w3), torch.from_numpy(b3))
        t = t + h if residual else h
    return t.numpy()


def _graph_stage(x, stage, weights, keep=None):
    """The stage as conv2d ops; ``keep`` (a list) receives every block's output Var."""
    t = x
    for (_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(stage, weights):
        h = t
        if w1 is not None:
            h = F.conv2d(h, F.const(w1), F.const(b1), (1, 1), (0, 0), activation="relu6")
        h = F.conv2d(h, F.const(wd), F.const(b2), (stride, stride), (1, 1),
                     group=wd.shape[0], activation="relu6")
        h = F.conv2d(h, F.const(w3), F.const(b3), (1, 1), (0, 0))
        t = t + h if residual else h
        if keep is not None:
            keep.append(t)
    return t


def _tol(want):
    return dict(rtol=3e-5, atol=3e-5 * np.abs(want).max())


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 8, 23, 19), (2, 8, 9, 9), (1, 8, 2, 3)])
def test_kernel_chain_matches_torch(shape, threads):
    rng = np.random.default_rng(sum(shape) + threads)
    weights = _stage_weights(rng, STAGE)
    x = rng.standard_normal(shape).astype(np.float32)
    blocks = []
    for (cin, ce, cout, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(STAGE, weights):
        pa1 = sgemm.pack_weight(w1.reshape(ce, cin)) if w1 is not None else None
        blocks.append((pa1, b1, 0.0, 6.0, wd.reshape(ce, 9), b2, 0.0, 6.0, stride,
                       sgemm.pack_weight(w3.reshape(cout, ce)), b3, -np.inf, np.inf,
                       residual, False, False))
    want = _torch_stage(x, STAGE, weights)
    y = np.full(want.shape, np.nan, np.float32)
    fb.inverted_residual_chain(x, blocks, y, threads)
    np.testing.assert_allclose(y, want, **_tol(want))


def _chain_args(rng):
    weights = _stage_weights(rng, STAGE[:2])
    blocks = []
    for (cin, ce, cout, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(STAGE, weights):
        pa1 = sgemm.pack_weight(w1.reshape(ce, cin)) if w1 is not None else None
        blocks.append([pa1, b1, 0.0, 6.0, wd.reshape(ce, 9), b2, 0.0, 6.0, stride,
                       sgemm.pack_weight(w3.reshape(cout, ce)), b3, -np.inf, np.inf,
                       residual, False, False])
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


@pytest.mark.parametrize("threads", [1, 2])
def test_graph_stage_runs_as_one_chain_and_matches_torch(monkeypatch, threads):
    calls = []
    original = fusion_block._compute_chain
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides: calls.append(len(chain)) or
                        original(chain, strides))
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(11)
        weights = _stage_weights(rng, STAGE)
        xp = F.placeholder([1, 8, 15, 13])
        y = _graph_stage(xp, STAGE, weights)
        for _ in range(2):  # a second write runs the cached plan
            data = rng.standard_normal((1, 8, 15, 13)).astype(np.float32)
            xp.write(data)
            want = _torch_stage(data, STAGE, weights)
            np.testing.assert_allclose(y.read(), want, **_tol(want))
        assert calls == [len(STAGE), len(STAGE)]
    finally:
        F.set_thread_number(1)


def test_held_block_output_splits_the_chain_and_keeps_its_value(monkeypatch):
    calls = []
    original = fusion_block._compute_chain
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides: calls.append(len(chain)) or
                        original(chain, strides))
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
