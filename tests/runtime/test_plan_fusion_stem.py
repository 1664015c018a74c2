"""Plans of loaded models: a first conv the direct kernel runs merged into the block it
feeds as its stem (mnn.express.ops.fusion_block's module doc); against torch."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import fused_block
from mnn.runtime.plan import Plan

torch = pytest.importorskip("torch")
tf = torch.nn.functional

pytestmark = pytest.mark.skipif(not fused_block.direct_available(),
                                reason="a stem runs the direct kernel (AVX-512)")


def _rand(rng, *shape):
    return (rng.standard_normal(shape) * 0.3).astype(np.float32)


def _weights(rng, cin, ce, cout, expand=True):
    ce = ce if expand else cin
    return {"w1": _rand(rng, ce, cin, 1, 1) if expand else None, "b1": _rand(rng, ce),
            "wd": _rand(rng, ce, 1, 3, 3), "b2": _rand(rng, ce),
            "w3": _rand(rng, cout, ce, 1, 1), "b3": _rand(rng, cout)}


def _mnn_block(x, p, stride):
    h = x
    if p["w1"] is not None:
        h = F.conv2d(h, F.const(p["w1"]), F.const(p["b1"]), (1, 1), (0, 0),
                     activation="relu6")
    h = F.conv2d(h, F.const(p["wd"]), F.const(p["b2"]), (stride, stride), (1, 1),
                 group=p["wd"].shape[0], activation="relu6")
    return F.conv2d(h, F.const(p["w3"]), F.const(p["b3"]), (1, 1), (0, 0))


def _torch_block(t, p, stride):
    w = {k: torch.from_numpy(v) for k, v in p.items() if v is not None}
    if "w1" in w:
        t = torch.clamp(tf.conv2d(t, w["w1"], w["b1"]), 0, 6)
    t = torch.clamp(tf.conv2d(t, w["wd"], w["b2"], stride=stride, padding=1,
                              groups=p["wd"].shape[0]), 0, 6)
    return tf.conv2d(t, w["w3"], w["b3"])


def _stem(x, w, b):
    return F.conv2d(x, F.const(w), F.const(b), (2, 2), (1, 1), activation="relu6")


def _torch_stem(t, w, b):
    return torch.clamp(tf.conv2d(t, torch.from_numpy(w), torch.from_numpy(b), stride=2,
                                 padding=1), 0, 6)


def _net(rng):
    ws, bs = _rand(rng, 16, 3, 3, 3), _rand(rng, 16)
    return ws, bs, [_weights(rng, 16, 16, 8, expand=False), _weights(rng, 8, 32, 12)]


def _ops(plan):
    return [(s.op.name, s.attrs.get("stem") is not None) for s in plan.steps]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("blocks", [1, 2])
def test_stem_merges_into_the_first_block_and_matches_torch(threads, blocks):
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(threads * 10 + blocks)
        ws, bs, ps = _net(rng)
        x = F.placeholder([2, 3, 45, 38])
        h = _stem(x, ws, bs)
        for p, stride in zip(ps[:blocks], (1, 2)):
            h = _mnn_block(h, p, stride)
        plan = Plan([x], [h])
        step = "inverted_residual_chain" if blocks == 2 else "inverted_residual_block"
        assert _ops(plan) == [(step, True)]
        for _ in range(2):  # the second run takes the kernel arguments the step kept
            data = rng.standard_normal((2, 3, 45, 38)).astype(np.float32)
            t = _torch_stem(torch.from_numpy(data), ws, bs)
            for p, stride in zip(ps[:blocks], (1, 2)):
                t = _torch_block(t, p, stride)
            (got,) = plan.run([data])
            np.testing.assert_allclose(got, t.numpy(), rtol=1e-4, atol=1e-4)
    finally:
        F.set_thread_number(1)


def test_block_with_a_stem_starts_its_own_chain():
    # block -> 3x3 conv -> depthwise -> 1x1 -> block: the 3x3 conv is a stem, which reads
    # a zero-bordered image, so its block cannot take the first block's output inside a
    # chain
    rng = np.random.default_rng(7)
    p0 = _weights(rng, 3, 12, 3)
    ws, bs, ps = _net(rng)
    x = F.placeholder([1, 3, 30, 30])
    h = _mnn_block(x, p0, 1)
    h = _stem(h, ws, bs)
    for p, stride in zip(ps, (1, 2)):
        h = _mnn_block(h, p, stride)
    plan = Plan([x], [h])
    assert _ops(plan) == [("inverted_residual_block", False),
                          ("inverted_residual_chain", True)]
    data = rng.standard_normal((1, 3, 30, 30)).astype(np.float32)
    t = _torch_stem(_torch_block(torch.from_numpy(data), p0, 1), ws, bs)
    for p, stride in zip(ps, (1, 2)):
        t = _torch_block(t, p, stride)
    (got,) = plan.run([data])
    np.testing.assert_allclose(got, t.numpy(), rtol=1e-4, atol=1e-4)


def test_stem_step_wrong_input_channels_names_the_conv():
    rng = np.random.default_rng(8)
    ws, bs, ps = _net(rng)
    x = F.placeholder([1, 3, -1, -1])
    h = _stem(x, ws, bs)
    for p, stride in zip(ps, (1, 2)):
        h = _mnn_block(h, p, stride)
    plan = Plan([x], [h])
    with pytest.raises(Exception, match="channels"):
        plan.run([np.zeros((1, 4, 16, 16), np.float32)])


def test_conv_the_direct_kernel_would_not_run_is_not_a_stem():
    # 2 input channels (K = 18, below the direct kernel's least depth): the conv stays a
    # step of its own, the blocks after it fuse as before
    rng = np.random.default_rng(9)
    ws, bs = _rand(rng, 16, 2, 3, 3), _rand(rng, 16)
    ps = [_weights(rng, 16, 16, 8, expand=False), _weights(rng, 8, 32, 12)]
    x = F.placeholder([1, 2, 30, 30])
    h = _stem(x, ws, bs)
    for p, stride in zip(ps, (1, 2)):
        h = _mnn_block(h, p, stride)
    plan = Plan([x], [h])
    assert _ops(plan) == [("conv2d", False), ("inverted_residual_chain", False)]
    data = rng.standard_normal((1, 2, 30, 30)).astype(np.float32)
    t = _torch_stem(torch.from_numpy(data), ws, bs)
    for p, stride in zip(ps, (1, 2)):
        t = _torch_block(t, p, stride)
    (got,) = plan.run([data])
    np.testing.assert_allclose(got, t.numpy(), rtol=1e-4, atol=1e-4)
