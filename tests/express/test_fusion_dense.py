"""Dense layers (matmul + bias) and classifier heads (global average pool, reshape,
matmul, bias) fused at evaluation: the values of the ops one by one (numpy, torch)."""
import mnn.expr as F
import numpy as np
import pytest

from mnn.express.ops import fusion_dense


@pytest.fixture
def fused_calls(monkeypatch):
    calls = []
    original = fusion_dense.Dense.compute

    def counted(self):
        calls.append((self, original(self)))
        return calls[-1][1]

    monkeypatch.setattr(fusion_dense.Dense, "compute", counted)
    return calls


def _head(x, w, b):
    pooled = F.reshape(F.global_avg_pool(x), [0, -1])  # 0: the batch, whatever it is
    return F.matmul(pooled, F.const(w)) + F.const(b)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_classifier_head_matches_torch(threads, dtype, fused_calls):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(threads)
    w = rng.standard_normal((24, 10)).astype(dtype)
    b = rng.standard_normal(10).astype(dtype)
    x = F.placeholder([3, 24, 7, 5], dtype=dtype)
    y = _head(x, w, b)
    F.set_thread_number(threads)
    try:
        for _ in range(2):
            data = rng.standard_normal((3, 24, 7, 5)).astype(dtype)
            x.write(data)
            t = torch.from_numpy(data)
            want = torch.nn.functional.adaptive_avg_pool2d(t, 1).flatten(1) @ \
                torch.from_numpy(w) + torch.from_numpy(b)
            got = y.read()
            assert got.dtype == dtype and got.shape == (3, 10)
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    finally:
        F.set_thread_number(1)
    assert [ok for _, ok in fused_calls] == [True, True]
    dense = fused_calls[0][0]
    assert [m.op.name for m in dense.members] == ["avg_pool", "reshape", "matmul"]
    # The skipped ops hold no values; read, they are computed again.
    pooled = y.expr.inputs[0].expr.inputs[0]
    assert pooled.expr.values is None
    np.testing.assert_allclose(pooled.read(), data.mean(axis=(2, 3)), rtol=1e-5, atol=1e-6)


def test_fused_head_equals_the_ops_one_by_one_bitwise(fused_calls):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((40, 17)).astype(np.float32)
    b = rng.standard_normal((1, 17)).astype(np.float32)
    data = rng.standard_normal((2, 40, 6, 6)).astype(np.float32)
    x = F.placeholder([2, 40, 6, 6])
    x.write(data)
    fused = _head(x, w, b).read()
    pooled = F.reshape(F.global_avg_pool(x), [2, -1])
    product = F.matmul(pooled, F.const(w))
    np.testing.assert_array_equal(pooled.read(), pooled.read())  # held: not fused
    separate = (product + F.const(b)).read()
    product.read()
    np.testing.assert_array_equal(fused, separate)
    assert [ok for _, ok in fused_calls] == [True]


def test_dense_layer_with_transposed_weight_matches_numpy(fused_calls):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((9, 13))  # (out, in), read transposed
    b = rng.standard_normal(9)
    a = F.placeholder([4, 13], dtype=np.float64)
    y = F.matmul(F.tanh(a), F.const(w), transposeB=True) + F.const(b)
    for _ in range(2):
        data = rng.standard_normal((4, 13))
        a.write(data)
        np.testing.assert_allclose(y.read(), np.tanh(data) @ w.T + b, rtol=1e-12)
    assert [ok for _, ok in fused_calls] == [True, True]
    assert fused_calls[0][0].pool is None


def test_held_product_broadcast_bias_and_ints_are_not_fused(fused_calls):
    rng = np.random.default_rng(7)
    a = F.const(rng.standard_normal((3, 4)).astype(np.float32))
    w = F.const(rng.standard_normal((4, 5)).astype(np.float32))
    product = F.matmul(a, w)
    (product + F.const(np.ones(5, np.float32))).read()  # the product is held
    column = F.const(np.ones((3, 1), np.float32))
    np.testing.assert_allclose((F.matmul(a, w) + column).read(),
                               a.read() @ w.read() + 1, rtol=1e-6)  # not a bias row
    ints = F.matmul(F.const(np.ones((2, 3), np.int32)), F.const(np.ones((3, 2), np.int32)))
    np.testing.assert_array_equal((ints + F.const(np.ones(2, np.int32))).read(),
                                  np.full((2, 2), 4))
    assert fused_calls == []


def test_head_after_a_batch_resize(fused_calls):
    # The first read after a resize plans from metas not yet inferred again (no fusion
    # then); the next read fuses with the new shapes.
    rng = np.random.default_rng(8)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = F.placeholder([1, 6, 4, 4])
    y = _head(x, w, b)
    for batch in (1, 5):
        if x.shape[0] != batch:
            x.resize([batch, 6, 4, 4])
        for _ in range(2):
            data = rng.standard_normal((batch, 6, 4, 4)).astype(np.float32)
            x.write(data)
            np.testing.assert_allclose(y.read(), data.mean(axis=(2, 3)) @ w + b,
                                       rtol=1e-5, atol=1e-6)
    assert all(ok for _, ok in fused_calls) and len(fused_calls) >= 3


def _conv_head(x, wc, bc, w, b):
    c = F.conv2d(x, F.const(wc), F.const(bc), (1, 1), (0, 0), activation="relu6")
    return _head(c, w, b)


def _torch_conv_head(data, wc, bc, w, b):
    torch = pytest.importorskip("torch")
    t = torch.clamp(torch.nn.functional.conv2d(torch.from_numpy(data), torch.from_numpy(wc),
                                               torch.from_numpy(bc)), 0, 6)
    return (t.mean((2, 3)) @ torch.from_numpy(w) + torch.from_numpy(b)).numpy()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cin", [8, 160])  # the packed GEMM's 1x1 conv, the direct one's
def test_head_with_its_conv_is_one_step_bitwise_the_ops(threads, cin, fused_calls):
    rng = np.random.default_rng(cin + threads)
    wc, bc, w, b = _conv_head_weights(rng, 48, cin, 1, 10, 0.2)
    data = rng.standard_normal((2, cin, 7, 7)).astype(np.float32)
    F.set_thread_number(threads)
    try:
        x = F.placeholder([2, cin, 7, 7])
        y = _conv_head(x, wc, bc, w, b)
        x.write(data)
        got = y.read()
        dense = fused_calls[0][0]
        assert [m.op.name for m in dense.members] == ["conv2d", "avg_pool", "reshape",
                                                      "matmul"]
        assert fused_calls[0][1] and dense.conv.values is None  # pooled, never stored
        np.testing.assert_allclose(got, _torch_conv_head(data, wc, bc, w, b), rtol=1e-4,
                                   atol=1e-4)
        # the conv held by the user: computed alone, then the head fused without it
        x2 = F.placeholder([2, cin, 7, 7])
        c2 = F.conv2d(x2, F.const(wc), F.const(bc), (1, 1), (0, 0), activation="relu6")
        y2 = _head(c2, w, b)
        x2.write(data)
        np.testing.assert_array_equal(y2.read(), got)
        assert fused_calls[-1][0].conv is None
        np.testing.assert_allclose(c2.read().mean((2, 3)) @ w + b, got, rtol=1e-5,
                                   atol=1e-5)
    finally:
        F.set_thread_number(1)


def test_head_with_its_conv_after_a_resize_and_a_wrong_shape(fused_calls):
    rng = np.random.default_rng(9)
    wc, bc, w, b = _conv_head_weights(rng, 16, 4, 1, 3, 0.2)
    x = F.placeholder([1, 4, 5, 5])
    y = _conv_head(x, wc, bc, w, b)
    for shape in ((1, 4, 5, 5), (3, 4, 6, 2), (3, 4, 6, 2)):
        if tuple(x.shape) != shape:
            x.resize(list(shape))
        data = rng.standard_normal(shape).astype(np.float32)
        x.write(data)
        np.testing.assert_allclose(y.read(), _torch_conv_head(data, wc, bc, w, b),
                                   rtol=1e-5, atol=1e-5)
    # new input shapes: that run goes op by op (the conv's inference checks them), the
    # next one is fused again
    assert [ok for _, ok in fused_calls] == [True, False, True]
    x.resize([1, 5, 5, 5])  # channels the conv's weight does not take: its own error
    x.write(np.zeros((1, 5, 5, 5), np.float32))
    with pytest.raises(Exception, match="channels"):
        y.read()


@pytest.fixture
def mean_kernel_calls(returns_of):
    """Whether each fused head's conv and pool ran as the conv + mean kernel."""
    return returns_of(fusion_dense, "conv_means")


def _conv_head_weights(rng, o, c, k, classes, scale):
    """A head's conv weight ``(o, c, k, k)`` (times ``scale``) and bias, dense weight
    ``(o, classes)`` and bias, float32."""
    return ((rng.standard_normal((o, c, k, k)) * scale).astype(np.float32),
            rng.standard_normal(o).astype(np.float32),
            rng.standard_normal((o, classes)).astype(np.float32),
            rng.standard_normal(classes).astype(np.float32))


@pytest.mark.parametrize("threads", [1, 2])
def test_head_conv_and_pool_run_as_one_kernel_bitwise_the_ops(threads, fused_calls,
                                                              mean_kernel_calls):
    from mnn._cython import conv_pool

    wc, bc, w, b = _conv_head_weights(np.random.default_rng(20 + threads), 40, 12, 3, 10,
                                      0.2)
    rng = np.random.default_rng(threads)
    F.set_thread_number(threads)
    try:
        x = F.placeholder([2, 12, 6, 6])
        y = _head(F.conv2d(x, F.const(wc), F.const(bc), (1, 1), (1, 1), activation="relu6"),
                  w, b)
        x2 = F.placeholder([2, 12, 6, 6])
        c2 = F.conv2d(x2, F.const(wc), F.const(bc), (1, 1), (1, 1), activation="relu6")
        y2 = _head(c2, w, b)
        for _ in range(2):
            data = rng.standard_normal((2, 12, 6, 6)).astype(np.float32)
            x.write(data)
            got = y.read()
            x2.write(data)
            c2.read()  # held by the user: the conv and the pool run as two ops
            np.testing.assert_array_equal(y2.read(), got)
            torch = pytest.importorskip("torch")
            t = torch.clamp(torch.nn.functional.conv2d(
                torch.from_numpy(data).double(), torch.from_numpy(wc).double(),
                torch.from_numpy(bc).double(), padding=1), 0, 6)
            want = t.mean((2, 3)).numpy() @ w + b
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    finally:
        F.set_thread_number(1)
    assert mean_kernel_calls == [conv_pool.available()] * 2
    assert fused_calls[0][0].conv is not None and fused_calls[-1][0].conv is None


def test_head_conv_weight_written_between_runs_is_packed_again(mean_kernel_calls):
    # a placeholder weight: each write is a new array, whose packed form is made anew
    # (the kernel keeps the last one while its array lives)
    from mnn._cython import conv_pool

    rng = np.random.default_rng(30)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x = F.placeholder([1, 64, 5, 5])
    wv = F.placeholder([16, 64, 1, 1])
    y = _head(F.conv2d(x, wv, None, (1, 1), (0, 0), activation="relu"), w, b)
    data = rng.standard_normal((1, 64, 5, 5)).astype(np.float32)
    x.write(data)
    for scale in (1.0, -2.0, -2.0, None):
        if scale is not None:  # (None: the same weight again)
            wc = (rng.standard_normal((16, 64, 1, 1)) * scale).astype(np.float32)
            wv.write(wc)
        conv = np.maximum(np.einsum("oc,nchw->nohw", wc[:, :, 0, 0], data), 0)
        np.testing.assert_allclose(y.read(), conv.mean((2, 3)) @ w + b, rtol=1e-5,
                                   atol=1e-5)
        x.write(data)  # (a new input: the head runs again)
    assert mean_kernel_calls == [conv_pool.available()] * 4


def test_head_conv_on_small_planes_keeps_the_ops_kernels(fused_calls, mean_kernel_calls):
    # planes under 16 pixels: the pool's in-order mean, not the kernel's vector one
    rng = np.random.default_rng(31)
    wc, bc, w, b = _conv_head_weights(rng, 40, 160, 1, 3, 0.1)
    x = F.placeholder([2, 160, 3, 3])
    data = rng.standard_normal((2, 160, 3, 3)).astype(np.float32)
    x.write(data)
    np.testing.assert_allclose(_conv_head(x, wc, bc, w, b).read(),
                               _torch_conv_head(data, wc, bc, w, b), rtol=1e-4, atol=1e-4)
    assert mean_kernel_calls == [False] and fused_calls[0][1]
