"""max_pool(conv2d(...)) fused at evaluation (ResNet's stem): values as torch's, and the
ops' own bit for bit."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import conv_pool, sgemm
from mnn.express.ops import fusion_conv_pool

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not conv_pool.available(),
                                reason="the direct kernel needs AVX-512")


@pytest.fixture
def fused_calls(monkeypatch):
    calls = []
    original = fusion_conv_pool.ConvPool.compute

    def counted(self, prepared=None):
        done = original(self, prepared)
        calls.append(done)
        return done

    monkeypatch.setattr(fusion_conv_pool.ConvPool, "compute", counted)
    return calls


# (input shape, out channels, conv (kernel, stride, pads, dilation), activation,
#  pool (kernel, stride, pads, dilation, ceil_mode))
CASES = [
    ((1, 3, 64, 64), 64, ((7, 7), (2, 2), (3, 3), (1, 1)), "relu",
     ((3, 3), (2, 2), (1, 1), (1, 1), False)),
    ((3, 3, 37, 29), 40, ((7, 7), (2, 2), (3, 3), (1, 1)), None,
     ((3, 3), (2, 2), (1, 1), (1, 1), False)),
    ((2, 5, 23, 31), 33, ((3, 3), (1, 2), (1, 2), (1, 1)), "relu6",
     ((2, 2), (2, 2), (0, 0), (1, 1), True)),
    ((1, 4, 26, 19), 70, ((5, 3), (2, 1), (2, 0), (2, 1)), None,
     ((3, 2), (1, 2), (1, 0), (2, 1), False)),
    ((2, 8, 15, 15), 16, ((3, 3), (2, 2), (1, 1), (1, 1)), "relu",
     ((3, 3), (2, 2), (1, 1), (1, 1), True)),
    # pooled rows of 22: a whole vector of the 3-wide stride-2 path, then a partial one
    ((1, 3, 90, 86), 32, ((7, 7), (2, 2), (3, 3), (1, 1)), None,
     ((3, 3), (2, 2), (1, 1), (1, 1), False)),
]


def _torch(x, w, b, conv, act, pool):
    k, s, p, d = conv
    t = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                   None if b is None else torch.from_numpy(b), s, p, d)
    if act == "relu":
        t = torch.relu(t)
    elif act == "relu6":
        t = torch.clamp(t, 0, 6)
    pk, ps, pp, pd, ceil = pool
    return torch.nn.functional.max_pool2d(t, pk, ps, pp, pd, ceil_mode=ceil).numpy()


def _xy(pair):
    """A torch ``(h, w)`` pair in MNN's order, width first."""
    return pair[1], pair[0]


def _graph(x, w, b, conv, act, pool, keep=None):
    k, s, p, d = conv
    c = F.conv2d(x, F.const(w), None if b is None else F.const(b), _xy(s), _xy(p), _xy(d),
                 activation=act)
    if keep is not None:
        keep.append(c)
    pk, ps, pp, pd, ceil = pool
    return F.max_pool(c, _xy(pk), _xy(ps), pads=_xy(pp), ceil_mode=ceil, dilation=_xy(pd))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_fused_matches_torch_and_the_ops_bitwise(case, threads, fused_calls):
    shape, o, conv, act, pool = CASES[case]
    rng = np.random.default_rng(case)
    w = rng.standard_normal((o, shape[1]) + conv[0]).astype(np.float32) * 0.3
    b = None if case == 1 else rng.standard_normal(o).astype(np.float32)
    F.set_thread_number(threads)
    try:
        x = F.placeholder(list(shape))
        y = _graph(x, w, b, conv, act, pool)
        xs = F.placeholder(list(shape))
        held = []
        y_ops = _graph(xs, w, b, conv, act, pool, keep=held)  # conv held: op by op
        for _ in range(2):
            data = rng.standard_normal(shape).astype(np.float32)
            if act is None:  # (a fused activation clamps NaN, as MNN's does)
                data[0, 0, 1, :3] = np.nan  # NaN reaches pooled values through the conv
                data[0, 0, -2, -3:] = np.nan  # and at the right end of the rows
            x.write(data)
            xs.write(data)
            got = y.read()
            want = _torch(data, w, b, conv, act, pool)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
            np.testing.assert_array_equal(got, y_ops.read())
        assert fused_calls == [True, True]
        assert y.expr.inputs[0].expr.values is None  # the conv's value was never stored
    finally:
        F.set_thread_number(1)


def test_released_conv_is_computed_when_read_later(fused_calls):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((32, 3, 7, 7)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    x = F.placeholder([1, 3, 40, 40])
    data = rng.standard_normal((1, 3, 40, 40)).astype(np.float32)
    x.write(data)
    y = _graph(x, w, b, ((7, 7), (2, 2), (3, 3), (1, 1)), "relu",
               ((3, 3), (2, 2), (1, 1), (1, 1), False))
    y.read()
    assert fused_calls == [True]
    conv = y.expr.inputs[0]
    want = torch.relu(torch.nn.functional.conv2d(
        torch.from_numpy(data), torch.from_numpy(w), torch.from_numpy(b), 2, 3)).numpy()
    np.testing.assert_allclose(conv.read(), want, rtol=1e-4, atol=1e-4)


def test_after_resize_the_fused_pair_matches_torch(fused_calls):
    rng = np.random.default_rng(8)
    w = rng.standard_normal((24, 3, 7, 7)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    conv, pool = ((7, 7), (2, 2), (3, 3), (1, 1)), ((3, 3), (2, 2), (1, 1), (1, 1), False)
    x = F.placeholder([1, 3, 32, 32])
    y = _graph(x, w, b, conv, "relu", pool)
    # the kernel setup kept per input shapes and thread count (run's ``prepared``)
    try:
        for shape, threads in (((1, 3, 32, 32), 1), ((2, 3, 45, 27), 1), ((1, 3, 32, 32), 1),
                               ((1, 3, 32, 32), 2)):
            F.set_thread_number(threads)
            if tuple(x.shape) != shape:
                x.resize(list(shape))
            data = rng.standard_normal(shape).astype(np.float32)
            x.write(data)
            np.testing.assert_allclose(y.read(), _torch(data, w, b, conv, "relu", pool),
                                       rtol=1e-4, atol=1e-4)
    finally:
        F.set_thread_number(1)
    assert len(fused_calls) == 4 and all(fused_calls)


@pytest.mark.parametrize("kind", ["held", "float64", "winograd", "depthwise", "avg_pool"])
def test_pairs_the_kernel_does_not_cover_run_op_by_op(kind, fused_calls):
    rng = np.random.default_rng(9)
    dtype = np.float64 if kind == "float64" else np.float32
    c = 16 if kind in ("winograd", "depthwise") else 3
    shape = (1, c, 20, 20)
    x = F.placeholder(list(shape), dtype=dtype)
    if kind == "depthwise":
        w = rng.standard_normal((c, 1, 3, 3)).astype(dtype)
        conv = F.conv2d(x, F.const(w), None, (2, 2), (1, 1), group=c)
    else:
        k = (3, 3) if kind == "winograd" else (7, 7)
        s = (1, 1) if kind == "winograd" else (2, 2)
        w = rng.standard_normal((16, c) + k).astype(dtype)
        conv = F.conv2d(x, F.const(w), None, s, (k[0] // 2, k[1] // 2))
    pool = F.avg_pool if kind == "avg_pool" else F.max_pool
    y = pool(conv, (3, 3), (2, 2), pads=(1, 1))
    if kind != "held":
        del conv
    data = rng.standard_normal(shape).astype(dtype)
    x.write(data)
    t = torch.from_numpy(data)
    tw = torch.from_numpy(w)
    if kind == "depthwise":
        tc = torch.nn.functional.conv2d(t, tw, None, 2, 1, groups=c)
    elif kind == "winograd":
        tc = torch.nn.functional.conv2d(t, tw, None, 1, 1)
    else:
        tc = torch.nn.functional.conv2d(t, tw, None, 2, 3)
    tp = torch.nn.functional.avg_pool2d if kind == "avg_pool" else \
        torch.nn.functional.max_pool2d
    want = tp(tc, 3, 2, 1).numpy()
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(y.read(), want, rtol=tol, atol=tol)
    assert fused_calls == []


def _kernel_args(rng, n=1, c=3, h=20, w=20, m=8):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((m, c * 9)).astype(np.float32)
    return (sgemm.pack_weight_direct(wt), m, x, np.empty((n, m, 5, 5), np.float32),
            np.zeros(m, np.float32), (3, 3, 2, 2, 1, 1, 1, 1), 10, 10,
            (3, 3, 2, 2, 1, 1, 1, 1))


@pytest.mark.parametrize("change, message", [
    (lambda a: a.__setitem__(0, a[0][:-1]), "packed weight"),
    (lambda a: a.__setitem__(4, np.zeros(7, np.float32)), "bias"),
    (lambda a: a.__setitem__(3, np.empty((1, 8, 5, 5 + 2), np.float32)), "no tap"),
    (lambda a: a.__setitem__(3, np.empty((2, 8, 5, 5), np.float32)), "output"),
    (lambda a: a.__setitem__(5, (3, 3, 0, 2, 1, 1, 1, 1)), "stride"),
    (lambda a: a.__setitem__(8, (3, 3, 2, 2, -1, 1, 1, 1)), "negative pad"),
    (lambda a: a.__setitem__(8, (1, 1, 1, 1, 3, 0, 1, 1)), "no tap"),
])
def test_kernel_rejects_bad_arguments(change, message):
    args = list(_kernel_args(np.random.default_rng(10)))
    conv_pool.conv_max_pool(*args)  # as given they are fine
    change(args)
    with pytest.raises(ValueError, match=message):
        conv_pool.conv_max_pool(*args)


def test_kernel_short_pad_scratch_is_rejected():
    args = _kernel_args(np.random.default_rng(11))
    with pytest.raises(ValueError, match="pad scratch"):
        conv_pool.conv_max_pool(*args, pad_scratch=np.empty(10, np.float32))
