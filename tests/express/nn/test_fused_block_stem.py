"""A network's first conv fused into the first inverted-residual block as its "stem"
expand (fused_block.inverted_residual_chain's ``stem``, fusion_block's stem blocks):
against torch, and bit for bit against the ops computed one by one."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import fused_block as fb
from mnn._cython import sgemm
from mnn.express.ops import fusion_block

torch = pytest.importorskip("torch")
tf = torch.nn.functional

pytestmark = pytest.mark.skipif(not fb.direct_available(),
                                reason="a stem runs the direct kernel (AVX-512)")

# The blocks after the stem: cin, ce, cout, stride, expand, residual (the first without
# expand, as MobileNetV2's, then a stride-2 block and a residual one).
BLOCKS = [(16, 16, 8, 1, False, False), (8, 32, 12, 2, True, False),
          (12, 36, 12, 1, True, True)]


def _weights(rng, cin, kernel):
    stem = ((rng.standard_normal((16, cin, *kernel)) * 0.3).astype(np.float32),
            rng.standard_normal(16).astype(np.float32))
    blocks = []
    for c_in, ce, cout, _, expand, _ in BLOCKS:
        ce = ce if expand else c_in
        blocks.append((
            (rng.standard_normal((ce, c_in, 1, 1)) * 0.3).astype(np.float32) if expand else None,
            rng.standard_normal(ce).astype(np.float32) if expand else None,
            (rng.standard_normal((ce, 1, 3, 3)) * 0.3).astype(np.float32),
            rng.standard_normal(ce).astype(np.float32),
            (rng.standard_normal((cout, ce, 1, 1)) * 0.3).astype(np.float32),
            rng.standard_normal(cout).astype(np.float32)))
    return stem, blocks


def _torch_net(x, stem, blocks, strides, pads):
    t = torch.from_numpy(x)
    pt, pl, pb, pr = pads
    t = tf.pad(t, (pl, pr, pt, pb))
    t = torch.clamp(tf.conv2d(t, *map(torch.from_numpy, stem), stride=strides), 0, 6)
    for (_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(BLOCKS, blocks):
        src = t
        if w1 is not None:
            t = torch.clamp(tf.conv2d(t, torch.from_numpy(w1), torch.from_numpy(b1)), 0, 6)
        t = torch.clamp(tf.conv2d(t, torch.from_numpy(wd), torch.from_numpy(b2),
                                  stride=stride, padding=1, groups=wd.shape[0]), 0, 6)
        t = tf.conv2d(t, torch.from_numpy(w3), torch.from_numpy(b3))
        if residual:
            t = t + src
    return t.numpy()


def _graph_net(x, stem, blocks, strides, pads):
    t = F.conv2d(x, F.const(stem[0]), F.const(stem[1]), strides, pads, activation="relu6")
    return _graph_blocks(t, blocks)


def _graph_blocks(t, blocks):
    for (_, _, _, stride, _, residual), (w1, b1, wd, b2, w3, b3) in zip(BLOCKS, blocks):
        src = t
        if w1 is not None:
            t = F.conv2d(t, F.const(w1), F.const(b1), (1, 1), (0, 0), activation="relu6")
        t = F.conv2d(t, F.const(wd), F.const(b2), (stride, stride), (1, 1),
                     group=wd.shape[0], activation="relu6")
        t = F.conv2d(t, F.const(w3), F.const(b3), (1, 1), (0, 0))
        if residual:
            t = src + t
    return t


def _kernel_blocks(stem, blocks):
    out = []
    for i, ((c_in, ce, cout, stride, expand, residual), (w1, b1, wd, b2, w3, b3)) in \
            enumerate(zip(BLOCKS, blocks)):
        ce = ce if expand else c_in
        if i == 0:
            pa1, b1, direct1 = sgemm.pack_weight_direct(stem[0].reshape(16, -1)), stem[1], True
        else:
            pa1 = sgemm.pack_weight(w1.reshape(ce, c_in)) if expand else None
            direct1 = False
        out.append([pa1, b1, 0.0, 6.0, wd.reshape(ce, 9), b2, 0.0, 6.0, stride,
                    sgemm.pack_weight(w3.reshape(cout, ce)), b3, -np.inf, np.inf, residual,
                    direct1, False])
    return out


def _tol(want):
    return dict(rtol=3e-5, atol=3e-5 * np.abs(want).max())


# n, cin, h, w, kernel, strides, pads (top, left, bottom, right), threads
CASES = [
    (1, 3, 46, 38, (3, 3), (2, 2), (1, 1, 1, 1), 2),   # MobileNetV2's stem, small
    (2, 3, 31, 29, (3, 3), (2, 2), (1, 1, 1, 1), 2),   # odd sizes, two images
    (1, 4, 20, 22, (3, 3), (1, 1), (1, 1, 1, 1), 1),
    (1, 3, 35, 27, (5, 5), (2, 2), (2, 2, 2, 2), 2),
    (1, 3, 24, 24, (3, 3), (2, 2), (0, 0, 1, 1), 1),   # the windows stay inside at the top
    (3, 3, 120, 14, (3, 3), (2, 2), (1, 1, 1, 1), 2),  # tall: many bands
    (1, 3, 27, 33, (3, 5), (2, 1), (1, 2, 0, 1), 2),   # unequal kernel, strides, pads
]


@pytest.mark.parametrize("case", CASES)
def test_kernel_chain_with_a_stem_matches_torch(case):
    n, cin, h, w, kernel, strides, pads, threads = case
    rng = np.random.default_rng(sum(h for h in case if isinstance(h, int)))
    stem, blocks = _weights(rng, cin, kernel)
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    want = _torch_net(x, stem, blocks, strides, pads)
    e_hw = [(s + pads[i] + pads[i + 2] - k) // st + 1
            for i, (s, k, st) in enumerate(zip((h, w), kernel, strides))]
    geometry = (*kernel, *strides, pads[0], pads[1], *e_hw)
    y = np.full(want.shape, np.nan, np.float32)
    fb.inverted_residual_chain(x, _kernel_blocks(stem, blocks), y, threads, geometry)
    np.testing.assert_allclose(y, want, **_tol(want))


def test_kernel_rejects_a_stem_that_does_not_fit():
    rng = np.random.default_rng(0)
    stem, blocks = _weights(rng, 3, (3, 3))
    x = rng.standard_normal((1, 3, 20, 20)).astype(np.float32)
    args = _kernel_blocks(stem, blocks)
    y = np.empty((1, 12, 5, 5), np.float32)
    with pytest.raises(ValueError, match="not a conv"):
        fb.inverted_residual_chain(x, args, y, 1, (3, 3, 0, 2, 1, 1, 10, 10))
    # a stem weight packed for another kernel size
    with pytest.raises(ValueError, match=r"\(16, 3, 5, 5\) conv"):
        fb.inverted_residual_chain(x, args, y, 1, (5, 5, 2, 2, 1, 1, 10, 10))
    # the stem needs the direct kernel's weight
    args[0][14] = False
    with pytest.raises(ValueError, match="direct kernel"):
        fb.inverted_residual_chain(x, args, y, 1, (3, 3, 2, 2, 1, 1, 10, 10))
    args = _kernel_blocks(stem, blocks)
    args[0][13] = True
    with pytest.raises(ValueError, match="cannot add its input"):
        fb.inverted_residual_chain(x, args, y, 1, (3, 3, 2, 2, 1, 1, 10, 10))


@pytest.fixture
def stems(monkeypatch):
    """The stem settings of each fused chain run (None: no stem)."""
    calls = []
    original = fusion_block._compute_chain
    monkeypatch.setattr(fusion_block, "_compute_chain",
                        lambda chain, strides, stem=None: calls.append(stem) or
                        original(chain, strides, stem))
    return calls


def _conv_reading(y, x):
    """The Expr above ``y`` that reads ``x``."""
    stack, seen = [y.expr], set()
    while stack:
        expr = stack.pop()
        if any(v.expr is x.expr for v in expr.inputs):
            return expr
        for v in expr.inputs:
            if id(v.expr) not in seen:
                seen.add(id(v.expr))
                stack.append(v.expr)
    raise AssertionError("no reader of x")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, strides, pads", [
    ((1, 3, 64, 56), (2, 2), (1, 1)), ((2, 3, 25, 31), (1, 1), (1, 1))])
def test_graph_fuses_the_stem_bit_for_bit(stems, monkeypatch, threads, shape, strides, pads):
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(shape[2])
        stem, blocks = _weights(rng, shape[1], (3, 3))
        xp = F.placeholder(list(shape))
        y = _graph_net(xp, stem, blocks, strides, pads)
        data = rng.standard_normal(shape).astype(np.float32)
        xp.write(data)
        got = y.read()
        assert len(stems) == 1 and stems[0][:3] == ((3, 3), strides, pads * 2)
        want = _torch_net(data, stem, blocks, strides, pads * 2)
        np.testing.assert_allclose(got, want, **_tol(want))
        assert _conv_reading(y, xp).values is None  # the stem's output was never stored
        # the same graph with no stem fused: the same bits
        monkeypatch.setattr(fusion_block, "_stem", lambda expr: None)
        xq = F.placeholder(list(shape))
        yq = _graph_net(xq, stem, blocks, strides, pads)
        xq.write(data)
        np.testing.assert_array_equal(yq.read(), got)
        assert stems[-1] is None
    finally:
        F.set_thread_number(1)


def test_held_stem_output_is_not_fused_and_keeps_its_value(stems):
    rng = np.random.default_rng(3)
    stem, blocks = _weights(rng, 3, (3, 3))
    xp = F.placeholder([1, 3, 30, 30])
    s = F.conv2d(xp, F.const(stem[0]), F.const(stem[1]), (2, 2), (1, 1), activation="relu6")
    t = _graph_blocks(s, blocks)
    data = rng.standard_normal((1, 3, 30, 30)).astype(np.float32)
    xp.write(data)
    want = _torch_net(data, stem, blocks, (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose(t.read(), want, **_tol(want))
    assert stems == [None]  # the blocks fused, the held stem conv not with them
    ref = torch.clamp(tf.conv2d(torch.from_numpy(data), *map(torch.from_numpy, stem),
                                stride=2, padding=1), 0, 6).numpy()
    np.testing.assert_allclose(s.read(), ref, **_tol(ref))


def test_conv_the_direct_kernel_would_not_run_is_not_a_stem(stems):
    # 2 input channels: K = 18, below the direct kernel's least depth (nn_conv)
    rng = np.random.default_rng(4)
    stem, blocks = _weights(rng, 2, (3, 3))
    xp = F.placeholder([1, 2, 21, 21])
    y = _graph_net(xp, stem, blocks, (2, 2), (1, 1))
    data = rng.standard_normal((1, 2, 21, 21)).astype(np.float32)
    xp.write(data)
    want = _torch_net(data, stem, blocks, (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert stems == [None]


def test_stem_after_a_resize_matches_torch(stems):
    rng = np.random.default_rng(5)
    stem, blocks = _weights(rng, 3, (3, 3))
    xp = F.placeholder([1, 3, 32, 32])
    y = _graph_net(xp, stem, blocks, (2, 2), (1, 1))
    for shape in ((1, 3, 32, 32), (2, 3, 41, 27)):
        if shape != tuple(xp.shape):
            xp.resize(list(shape))
        data = rng.standard_normal(shape).astype(np.float32)
        xp.write(data)
        want = _torch_net(data, stem, blocks, (2, 2), (1, 1, 1, 1))
        np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert len(stems) == 2 and all(s is not None for s in stems)


def test_block_then_a_stem_block_are_two_chains(stems):
    # a block's output read by a 3x3 conv feeding the next block: that conv is a stem
    # (it reads a zero-bordered image), so its block starts a chain of its own
    rng = np.random.default_rng(6)
    stem, blocks = _weights(rng, 16, (3, 3))
    first = [(rng.standard_normal((16, 16, 1, 1)) * 0.3).astype(np.float32)
             for _ in range(2)]
    xp = F.placeholder([1, 16, 24, 24])
    h = F.conv2d(xp, F.const(first[0]), None, (1, 1), (0, 0), activation="relu6")
    h = F.conv2d(h, F.const(np.ones((16, 1, 3, 3), np.float32) * 0.1), None, (1, 1),
                 (1, 1), group=16, activation="relu6")
    h = F.conv2d(h, F.const(first[1]), None, (1, 1), (0, 0))
    y = _graph_net(h, stem, blocks, (2, 2), (1, 1))  # 3x3 s2: never Winograd's
    data = rng.standard_normal((1, 16, 24, 24)).astype(np.float32)
    xp.write(data)
    t = torch.from_numpy(data)
    t = torch.clamp(tf.conv2d(t, torch.from_numpy(first[0])), 0, 6)
    t = torch.clamp(tf.conv2d(t, torch.ones(16, 1, 3, 3) * 0.1, padding=1, groups=16), 0, 6)
    t = tf.conv2d(t, torch.from_numpy(first[1])).numpy()
    want = _torch_net(t, stem, blocks, (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose(y.read(), want, **_tol(want))
    assert len(stems) == 2 and stems[0] is None and stems[1] is not None


@pytest.mark.parametrize("w_shape, strides", [
    ((32, 3, 3, 3), (2, 2)), ((64, 3, 7, 7), (2, 2)), ((16, 16, 3, 3), (1, 1)),
    ((16, 16, 3, 3), (2, 2)), ((8, 2, 3, 3), (2, 2)), ((24, 40, 1, 1), (2, 2)),
    ((24, 8, 1, 1), (1, 1)), ((16, 4, 3, 3), (1, 1))])
def test_direct_any_size_agrees_with_the_kernel_choice(w_shape, strides):
    # a weight said to run by the direct kernel whatever the input runs by it on every
    # input tried; one that is not fails on at least one
    from mnn.express.ops import nn_conv
    said = nn_conv.direct_any_size(np.float32, w_shape, strides, (1, 1), 1)
    kinds = set()
    for n, h, w in ((1, 7, 7), (1, 20, 30), (2, 56, 56), (1, 224, 224)):
        x_shape = (n, w_shape[1], h, w)
        found = nn_conv.direct_geometry(x_shape, np.float32, w_shape, strides,
                                        (1, 1, 1, 1), (1, 1), 1, F.Padding_Mode.CAFFE)
        kinds.add(found is not None)
    assert said == (kinds == {True})
