"""Plan passes merging an inverted-residual block (and blocks in a row) and
relu(conv + skip) into one step: results against torch, what is merged and what is not,
and the fallbacks."""
import mnn.expr as F
import numpy as np
import pytest

from mnn.runtime.plan import Plan

torch = pytest.importorskip("torch")
tf = torch.nn.functional


def _rand(rng, *shape, scale=0.3, dtype=np.float32):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _block_weights(rng, cin, ce, cout, dtype=np.float32):
    return {"w1": _rand(rng, ce, cin, 1, 1, dtype=dtype), "b1": _rand(rng, ce, dtype=dtype),
            "wd": _rand(rng, ce, 1, 3, 3, dtype=dtype), "b2": _rand(rng, ce, dtype=dtype),
            "w3": _rand(rng, cout, ce, 1, 1, dtype=dtype), "b3": _rand(rng, cout, dtype=dtype)}


def _mnn_block(x, p, stride, residual):
    h = F.conv2d(x, F.const(p["w1"]), F.const(p["b1"]), (1, 1), (0, 0), activation="relu6")
    h = F.conv2d(h, F.const(p["wd"]), F.const(p["b2"]), (stride, stride), (1, 1),
                 group=p["wd"].shape[0], activation="relu6")
    y = F.conv2d(h, F.const(p["w3"]), F.const(p["b3"]), (1, 1), (0, 0))
    return x + y if residual else y


def _torch_block(x, p, stride, residual):
    t = {k: torch.from_numpy(v) for k, v in p.items()}
    h = torch.clamp(tf.conv2d(x, t["w1"], t["b1"]), 0, 6)
    h = torch.clamp(tf.conv2d(h, t["wd"], t["b2"], stride=stride, padding=1,
                              groups=p["wd"].shape[0]), 0, 6)
    y = tf.conv2d(h, t["w3"], t["b3"])
    return x + y if residual else y


def _ops(plan):
    return [s.op.name for s in plan.steps]


@pytest.mark.parametrize("threads", [1, 2])
def test_blocks_and_residual_relu_match_torch(threads):
    F.set_thread_number(threads)
    try:
        rng = np.random.default_rng(threads)
        p1, p2 = _block_weights(rng, 8, 48, 8), _block_weights(rng, 8, 48, 16)
        wc, bc = _rand(rng, 16, 16, 3, 3), _rand(rng, 16)
        x = F.placeholder([1, 8, 20, 18])
        h = _mnn_block(x, p1, 1, True)
        h = _mnn_block(h, p2, 2, False)
        y = F.relu(F.conv2d(h, F.const(wc), F.const(bc), (1, 1), (1, 1)) + h)
        plan = Plan([x], [y])
        # the two blocks in a row are one chain step
        assert _ops(plan) == ["inverted_residual_chain", "conv2d_add_relu"]
        for _ in range(2):
            data = rng.standard_normal((1, 8, 20, 18)).astype(np.float32)
            t = _torch_block(torch.from_numpy(data), p1, 1, True)
            t = _torch_block(t, p2, 2, False)
            want = torch.relu(tf.conv2d(t, torch.from_numpy(wc), torch.from_numpy(bc),
                                        padding=1) + t).numpy()
            (got,) = plan.run([data])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    finally:
        F.set_thread_number(1)


def test_intermediate_plan_output_is_not_merged():
    rng = np.random.default_rng(0)
    p = _block_weights(rng, 4, 16, 4)
    x = F.placeholder([1, 4, 9, 9])
    h = F.conv2d(x, F.const(p["w1"]), F.const(p["b1"]), (1, 1), (0, 0), activation="relu6")
    d = F.conv2d(h, F.const(p["wd"]), F.const(p["b2"]), (1, 1), (1, 1), group=16,
                 activation="relu6")
    y = F.conv2d(d, F.const(p["w3"]), F.const(p["b3"]), (1, 1), (0, 0))
    plan = Plan([x], [y, d])  # the depthwise output is wanted too
    assert "inverted_residual_block" not in _ops(plan)
    data = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    got_y, got_d = plan.run([data])
    want = _torch_block(torch.from_numpy(data), p, 1, False).numpy()
    np.testing.assert_allclose(got_y, want, rtol=1e-5, atol=1e-5)
    assert got_d.shape == (1, 16, 9, 9)


def test_float64_chain_computes_op_by_op():
    rng = np.random.default_rng(1)
    p = _block_weights(rng, 4, 12, 4, dtype=np.float64)
    x = F.placeholder([2, 4, 7, 7], dtype=np.float64)
    plan = Plan([x], [_mnn_block(x, p, 1, True)])
    assert _ops(plan) == ["inverted_residual_block"]
    data = rng.standard_normal((2, 4, 7, 7))
    (got,) = plan.run([data])
    want = _torch_block(torch.from_numpy(data), p, 1, True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_wrong_input_shape_names_the_conv():
    rng = np.random.default_rng(2)
    p = _block_weights(rng, 4, 12, 4)
    x = F.placeholder([1, 4, -1, -1])
    plan = Plan([x], [_mnn_block(x, p, 1, True)])
    assert _ops(plan) == ["inverted_residual_block"]
    with pytest.raises(Exception, match="channels"):
        plan.run([np.zeros((1, 5, 6, 6), np.float32)])
    (got,) = plan.run([np.ones((1, 4, 6, 6), np.float32)])
    want = _torch_block(torch.ones((1, 4, 6, 6)), p, 1, True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _three_blocks(x, ps):
    h = _mnn_block(x, ps[0], 1, True)
    mid = _mnn_block(h, ps[1], 2, False)
    return mid, _mnn_block(mid, ps[2], 1, True)


def _torch_three(data, ps):
    t = _torch_block(torch.from_numpy(data), ps[0], 1, True)
    mid = _torch_block(t, ps[1], 2, False)
    return mid.numpy(), _torch_block(mid, ps[2], 1, True).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chain_step_matches_torch(dtype):
    # float64: the fused kernel does not take it, the step runs block by block
    rng = np.random.default_rng(3)
    ps = [_block_weights(rng, 6, 24, 6, dtype), _block_weights(rng, 6, 24, 10, dtype),
          _block_weights(rng, 10, 30, 10, dtype)]
    x = F.placeholder([2, 6, 11, 13], dtype=dtype)
    plan = Plan([x], [_three_blocks(x, ps)[1]])
    assert _ops(plan) == ["inverted_residual_chain"]
    for _ in range(2):  # the second run takes the kernel arguments kept by the step
        data = rng.standard_normal((2, 6, 11, 13)).astype(dtype)
        (got,) = plan.run([data])
        want = _torch_three(data, ps)[1]
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_chain_stops_at_a_block_output_the_plan_returns():
    rng = np.random.default_rng(4)
    ps = [_block_weights(rng, 6, 24, 6), _block_weights(rng, 6, 24, 10),
          _block_weights(rng, 10, 30, 10)]
    x = F.placeholder([1, 6, 12, 12])
    mid, y = _three_blocks(x, ps)
    plan = Plan([x], [y, mid])
    assert _ops(plan) == ["inverted_residual_chain", "inverted_residual_block"]
    data = rng.standard_normal((1, 6, 12, 12)).astype(np.float32)
    got_y, got_mid = plan.run([data])
    want_mid, want_y = _torch_three(data, ps)
    np.testing.assert_allclose(got_mid, want_mid, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-4, atol=1e-4)


def test_chain_step_wrong_input_shape_names_the_conv():
    rng = np.random.default_rng(5)
    ps = [_block_weights(rng, 6, 24, 6), _block_weights(rng, 6, 24, 10),
          _block_weights(rng, 10, 30, 10)]
    x = F.placeholder([1, 6, -1, -1])
    plan = Plan([x], [_three_blocks(x, ps)[1]])
    assert _ops(plan) == ["inverted_residual_chain"]
    with pytest.raises(Exception, match="channels"):
        plan.run([np.zeros((1, 7, 8, 8), np.float32)])
    data = rng.standard_normal((1, 6, 8, 9)).astype(np.float32)
    (got,) = plan.run([data])
    np.testing.assert_allclose(got, _torch_three(data, ps)[1], rtol=1e-4, atol=1e-4)


def _head(x, w, b, final_reshape=True):
    # a converted classifier: mean over H and W, reshape, 1x1 conv, reshape
    pooled = F.reshape(F.reduce_mean(x, [2, 3]), [-1, w.shape[1], 1, 1])
    y = F.conv2d(pooled, F.const(w), F.const(b), (1, 1), (0, 0))
    return F.reshape(y, [0, -1]) if final_reshape else y


def _torch_head(data, w, b):
    t = torch.from_numpy(data).mean(dim=(2, 3), keepdim=True)
    return tf.conv2d(t, torch.from_numpy(w), torch.from_numpy(b)).flatten(1).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("final_reshape", [True, False])
def test_classifier_head_is_one_step_and_matches_torch(dtype, final_reshape):
    rng = np.random.default_rng(21)
    w = _rand(rng, 10, 24, 1, 1, dtype=dtype)
    b = _rand(rng, 10, dtype=dtype)
    x = F.placeholder([-1, 24, 5, 6], dtype=dtype)
    plan = Plan([x], [_head(x, w, b, final_reshape)])
    assert _ops(plan) == ["global_pool_dense"]
    for batch in (1, 3):  # the batch changes: the same step, shapes checked again
        data = rng.standard_normal((batch, 24, 5, 6)).astype(dtype)
        (got,) = plan.run([data])
        want = _torch_head(data, w, b)
        want = want if final_reshape else want.reshape(batch, 10, 1, 1)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_head_whose_mean_is_a_plan_output_is_not_merged():
    rng = np.random.default_rng(22)
    w, b = _rand(rng, 4, 6, 1, 1), _rand(rng, 4)
    x = F.placeholder([2, 6, 3, 3])
    mean = F.reduce_mean(x, [2, 3])
    y = F.reshape(F.conv2d(F.reshape(mean, [-1, 6, 1, 1]), F.const(w), F.const(b),
                           (1, 1), (0, 0)), [0, -1])
    plan = Plan([x], [mean, y])
    assert "global_pool_dense" not in _ops(plan)
    data = rng.standard_normal((2, 6, 3, 3)).astype(np.float32)
    got_mean, got = plan.run([data])
    np.testing.assert_allclose(got_mean, data.mean(axis=(2, 3)), rtol=1e-6)
    np.testing.assert_allclose(got, _torch_head(data, w, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("returned", [False, True])
def test_head_takes_the_conv_only_its_mean_reads(threads, returned):
    rng = np.random.default_rng(30 + threads)
    wc, bc = _rand(rng, 24, 40, 1, 1), _rand(rng, 24)
    w, b = _rand(rng, 10, 24, 1, 1), _rand(rng, 10)
    x = F.placeholder([-1, 40, 7, 7])
    conv = F.conv2d(x, F.const(wc), F.const(bc), (1, 1), (0, 0), activation="relu6")
    plan = Plan([x], [_head(conv, w, b)] + ([conv] if returned else []))
    # a conv the plan returns stays a step of its own
    assert _ops(plan) == (["conv2d", "global_pool_dense"] if returned
                          else ["global_pool_dense"])
    assert [p[0] for p in plan.steps[-1].attrs["parts"]][0] == \
        ("reduce_mean" if returned else "conv2d")
    F.set_thread_number(threads)
    try:
        for batch in (1, 2):
            data = rng.standard_normal((batch, 40, 7, 7)).astype(np.float32)
            got = plan.run([data])
            c = torch.clamp(tf.conv2d(torch.from_numpy(data), torch.from_numpy(wc),
                                      torch.from_numpy(bc)), 0, 6).numpy()
            np.testing.assert_allclose(got[0], _torch_head(c, w, b), rtol=1e-5, atol=1e-5)
            if returned:
                np.testing.assert_allclose(got[1], c, rtol=1e-5, atol=1e-5)
    finally:
        F.set_thread_number(1)


@pytest.mark.parametrize("threads", [1, 2])
def test_head_conv_and_mean_run_as_one_kernel_bitwise_the_steps(threads, returns_of):
    # a conv the direct kernel runs (K >= 64 on 7x7): the conv + mean kernel
    # (fusion_dense.conv_means), the same values as the conv step and the mean apart
    from mnn._cython import conv_pool
    from mnn.express.ops import fusion_dense

    kernel_runs = returns_of(fusion_dense, "conv_means")
    rng = np.random.default_rng(40 + threads)
    wc, bc = _rand(rng, 48, 160, 1, 1), _rand(rng, 48)
    w, b = _rand(rng, 10, 48, 1, 1), _rand(rng, 10)
    x = F.placeholder([-1, 160, 7, 7])
    conv = F.conv2d(x, F.const(wc), F.const(bc), (1, 1), (0, 0), activation="relu6")
    fused = Plan([x], [_head(conv, w, b)])
    apart = Plan([x], [_head(conv, w, b), conv])  # the conv a step of its own
    assert _ops(fused) == ["global_pool_dense"]
    F.set_thread_number(threads)
    try:
        for batch in (1, 2, 2):
            data = rng.standard_normal((batch, 160, 7, 7)).astype(np.float32)
            (got,) = fused.run([data])
            want, c = apart.run([data])
            np.testing.assert_array_equal(got, want)
            np.testing.assert_allclose(got, _torch_head(c, w, b), rtol=1e-5, atol=1e-5)
    finally:
        F.set_thread_number(1)
    assert kernel_runs == [conv_pool.available()] * 3


def test_head_with_a_wrong_channel_count_names_the_conv():
    rng = np.random.default_rng(23)
    w, b = _rand(rng, 4, 6, 1, 1), _rand(rng, 4)
    x = F.placeholder([1, -1, 3, 3])
    plan = Plan([x], [_head(x, w, b)])
    assert _ops(plan) == ["global_pool_dense"]
    with pytest.raises(Exception, match="reshape|conv2d"):
        plan.run([np.zeros((1, 5, 3, 3), np.float32)])


def _stem(x, w, b):
    # ResNet's stem: conv 7x7 stride 2 (relu fused), max pool 3x3 stride 2
    y = F.conv2d(x, F.const(w), F.const(b), (2, 2), (3, 3), activation="relu")
    return F.max_pool(y, (3, 3), (2, 2), pads=(1, 1))


def _torch_stem(data, w, b):
    t = torch.relu(tf.conv2d(torch.from_numpy(data), torch.from_numpy(w),
                             torch.from_numpy(b), stride=2, padding=3))
    return tf.max_pool2d(t, 3, 2, 1).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_and_max_pool_are_one_step_and_match_torch(dtype, threads, returns_of):
    from mnn.express.ops import fusion_conv_pool

    kernel_runs = returns_of(fusion_conv_pool, "run")
    rng = np.random.default_rng(24)
    w, b = _rand(rng, 24, 3, 7, 7, dtype=dtype), _rand(rng, 24, dtype=dtype)
    x = F.placeholder([-1, 3, 30, 26], dtype=dtype)
    plan = Plan([x], [_stem(x, w, b)])
    assert _ops(plan) == ["conv2d_max_pool"]
    F.set_thread_number(threads)
    try:
        for batch in (1, 3):  # float64 (op by op) or float32 (one kernel call)
            data = rng.standard_normal((batch, 3, 30, 26)).astype(dtype)
            (got,) = plan.run([data])
            assert got.dtype == dtype
            np.testing.assert_allclose(got, _torch_stem(data, w, b), rtol=1e-4, atol=1e-4)
    finally:
        F.set_thread_number(1)
    # the kernel ran (float32 on AVX-512), or the ops one by one
    fused = dtype == np.float32 and fusion_conv_pool._kernel.available()
    assert kernel_runs == [fused, fused]


def test_conv_whose_output_the_plan_returns_is_not_merged_with_its_pool():
    rng = np.random.default_rng(25)
    w, b = _rand(rng, 8, 3, 7, 7), _rand(rng, 8)
    x = F.placeholder([1, 3, 20, 20])
    conv = F.conv2d(x, F.const(w), F.const(b), (2, 2), (3, 3), activation="relu")
    plan = Plan([x], [conv, F.max_pool(conv, (3, 3), (2, 2), pads=(1, 1))])
    assert "conv2d_max_pool" not in _ops(plan)
    data = rng.standard_normal((1, 3, 20, 20)).astype(np.float32)
    _, got = plan.run([data])
    np.testing.assert_allclose(got, _torch_stem(data, w, b), rtol=1e-4, atol=1e-4)


def test_conv_pool_step_with_a_wrong_input_names_the_conv():
    rng = np.random.default_rng(26)
    w, b = _rand(rng, 8, 3, 7, 7), _rand(rng, 8)
    x = F.placeholder([1, -1, 20, 20])
    plan = Plan([x], [_stem(x, w, b)])
    assert _ops(plan) == ["conv2d_max_pool"]
    with pytest.raises(Exception, match="conv2d"):
        plan.run([np.zeros((1, 5, 20, 20), np.float32)])
