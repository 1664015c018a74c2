"""LoadedModule and the compiled Plan on express graphs, against numpy."""
import threading
from concurrent.futures import ThreadPoolExecutor

import mnn.expr as F
import numpy as np
import pytest

from mnn.express import runtime as rt
from mnn.express.errors import MnnError, OpError
from mnn.express.ops.control_flow import Subgraph
from mnn.runtime.module import LoadedModule, RuntimeConfig
from mnn.runtime.plan import Plan, RunStopped

f32 = np.float32
RNG = np.random.default_rng(7)
W = RNG.standard_normal((4, 3)).astype(f32)
B = RNG.standard_normal(3).astype(f32)


def _mlp_graph():
    x = F.placeholder([-1, 4])
    x.name = "x"
    x2 = F.placeholder([-1, 3])
    x2.name = "x2"
    # The weight goes through a constant-only chain (transpose twice): folded at build.
    w = F.transpose(F.transpose(F.const(W)))
    y = F.exp(F.maximum(F.matmul(x, w) + F.const(B), F.const(f32(0))))
    z = y * x2
    return [x, x2], [y, z]


def _mlp_numpy(x, x2):
    y = np.exp(np.maximum(x @ W + B, 0))
    return y, y * x2


def _module(**config):
    ins, outs = _mlp_graph()
    return LoadedModule(ins, outs, ["x", "x2"], ["y", "z"], RuntimeConfig(**config))


def test_forward_matches_numpy_for_new_shapes():
    m = _module()
    for batch in (2, 5, 1, 5):
        x = RNG.standard_normal((batch, 4)).astype(f32)
        x2 = RNG.standard_normal((batch, 3)).astype(f32)
        y, z = m.forward([x, F.const(x2)])
        want_y, want_z = _mlp_numpy(x, x2)
        np.testing.assert_allclose(y.read(), want_y, rtol=1e-5)
        np.testing.assert_allclose(z.read(), want_z, rtol=1e-5)
    assert m.plan.constants  # the weight chain was folded
    assert all(step.op.name != "transpose" for step in m.plan.steps)


def test_forward_call_forms_follow_pymnn():
    x = F.placeholder([2, 2])
    m = LoadedModule([x], [x * 2.0, x + 1.0], ["x"], ["a", "b"])
    a = np.ones((2, 2), f32)
    single = m.forward(a)  # one input, not a list: the first output only
    np.testing.assert_allclose(single.read(), a * 2)
    both = m([a])
    assert isinstance(both, list) and len(both) == 2
    np.testing.assert_allclose(m.onForward([a])[1].read(), a + 1)
    # The caller's buffer is not aliased by outputs.
    a[...] = 5
    np.testing.assert_allclose(both[0].read(), np.full((2, 2), 2.0))


def test_outputs_that_view_the_callers_array_are_copied():
    # Inputs are read in place; an output that is a view of one (a reshape, an identity
    # slice) is copied, so writing the caller's array later changes no output, and the
    # caller's array stays writeable.
    x = F.placeholder([2, 3])
    m = LoadedModule([x], [F.reshape(x, [3, 2]), x * 2.0], ["x"], ["r", "d"])
    a = np.arange(6, dtype=f32).reshape(2, 3)
    r, d = m.onForward([a])
    assert a.flags.writeable
    a[...] = -1
    np.testing.assert_array_equal(r.read(), np.arange(6, dtype=f32).reshape(3, 2))
    np.testing.assert_array_equal(d.read(), np.arange(6, dtype=f32).reshape(2, 3) * 2)
    assert not np.may_share_memory(r.read(), a)


def test_inputs_are_cast_and_checked():
    m = _module()
    x64 = RNG.standard_normal((2, 4))
    x2 = np.ones((2, 3), f32)
    y, _ = m.forward([x64, x2])
    np.testing.assert_allclose(y.read(), _mlp_numpy(x64.astype(f32), x2)[0], rtol=1e-5)
    with pytest.raises(MnnError, match="'x' must be float32, got complex128"):
        m.forward([x64 + 1j, x2])
    with pytest.raises(MnnError, match="takes 2 inputs"):
        m.forward([x64])
    with pytest.raises(OpError, match="matmul"):  # checked before any kernel runs
        m.forward([np.ones((2, 5), f32), x2])
    fixed = LoadedModule(*_fixed_graph(), ["x"], ["y"], RuntimeConfig(shape_mutable=False))
    fixed.forward([np.ones((2, 4), f32)])
    with pytest.raises(MnnError, match="declares"):
        fixed.forward([np.ones((3, 4), f32)])


def _fixed_graph():
    x = F.placeholder([2, 4])
    return [x], [F.reduce_sum(x * x, axis=[1])]


def test_nhwc_var_is_laid_out_for_an_nchw_input():
    x = F.placeholder([1, 2, 3, 3], F.NCHW)
    m = LoadedModule([x], [F.reduce_sum(x, axis=[2, 3])], ["x"], ["s"])
    nchw = RNG.standard_normal((1, 2, 3, 3)).astype(f32)
    nhwc = F.const(nchw.transpose(0, 2, 3, 1), data_format=F.NHWC)
    np.testing.assert_allclose(m.forward(nhwc).read(), nchw.sum(axis=(2, 3)), rtol=1e-5)


def test_thread_num_is_honoured_and_restored():
    seen = []
    m = _module(thread_num=1)
    before = rt.get_thread_number()
    x, x2 = np.ones((2, 4), f32), np.ones((2, 3), f32)
    m.run_arrays([x, x2], before=lambda step, args: seen.append(rt.get_thread_number()) or 1)
    assert set(seen) == {1}
    assert rt.get_thread_number() == before
    with pytest.raises(MnnError, match="thread_num"):
        RuntimeConfig(thread_num=0)
    with pytest.raises(MnnError, match="only the CPU backend"):
        RuntimeConfig(backend="OPENCL")


def test_clones_share_the_plan_and_run_in_threads():
    m = _module(thread_num=2)
    clones = [m.clone() for _ in range(2)]
    assert all(c.plan is m.plan for c in clones)
    data = [(RNG.standard_normal((n, 4)).astype(f32), RNG.standard_normal((n, 3)).astype(f32))
            for n in range(1, 13)]
    local = threading.local()

    def run(pair):
        if not hasattr(local, "m"):
            local.m = m.clone()
        return [v.read() for v in local.m.forward(list(pair))]

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, data))
    for (x, x2), (y, z) in zip(data, results):
        np.testing.assert_allclose(z, _mlp_numpy(x, x2)[1], rtol=1e-5)


def test_liveness_releases_intermediates():
    x = F.placeholder([8])
    y = x
    for _ in range(30):
        y = F.tanh(y) + 1.0
    plan = Plan([x], [y])
    assert len(plan.steps) == 60
    assert plan.peak_live <= 3
    got = plan.run([np.linspace(-1, 1, 8).astype(f32)])[0]
    want = np.linspace(-1, 1, 8).astype(f32)
    for _ in range(30):
        want = np.tanh(want) + f32(1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_plan_cuts_at_data_dependent_shapes():
    # A loop whose output length depends on a value, then ops after it.
    cond = Subgraph.trace(lambda v, n: F.reduce_sum(F.ones_like(v)) < F.cast(n, F.float),
                          [((-1,), f32), ((), np.int32)])
    body = Subgraph.trace(lambda v, n: [F.concat([v, F.reshape(F.reduce_max(v) * F.const(f32(2)), [1])],
                                                 0), n],
                          [((-1,), f32), ((), np.int32)])
    n = F.placeholder([], dtype=F.int32)
    v0 = F.placeholder([1])
    grown, _ = F.while_(cond, body, [v0, n])
    out = F.reduce_sum(grown * grown)
    plan = Plan([v0, n], [grown, out])
    for count in (3, 1, 5, 3):
        g, s = plan.run([np.array([1.0], f32), np.array(count, np.int32)])
        want = 2.0 ** np.arange(count)
        np.testing.assert_allclose(g, want)
        assert s == pytest.approx((want ** 2).sum())
    starts = {key[0] for key in plan._checked}
    assert len(starts) == 2  # one cut after the while


def test_hooks_see_every_op_and_can_stop():
    ins, outs = _mlp_graph()
    plan = Plan(ins, outs)
    names = []
    plan.run([np.ones((1, 4), f32), np.ones((1, 3), f32)],
             after=lambda step, a, o, t: names.append(step.op.name) or True)
    assert names == [s.op.name for s in plan.steps]
    with pytest.raises(RunStopped):
        plan.run([np.ones((1, 4), f32), np.ones((1, 3), f32)], before=lambda s, a: False)


def test_plan_rejects_foreign_placeholders():
    x, other = F.placeholder([2]), F.placeholder([2])
    with pytest.raises(OpError, match="not one of the inputs"):
        Plan([x], [x + other])


def test_conv_activations_are_fused_and_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    w1 = rng.standard_normal((6, 3, 3, 3)).astype(f32)
    w2 = rng.standard_normal((4, 6, 1, 1)).astype(f32)
    x = F.placeholder([1, 3, 9, 9])
    c1 = F.conv2d(x, F.const(w1), padding=(1, 1))
    a1 = F.relu(c1)
    c2 = F.conv2d(a1, F.const(w2))
    a2 = F.relu6(c2)
    side = F.relu(c2)  # c2 has two readers: it must stay unfused
    plan = Plan([x], [a2, side])
    names = [s.op.name for s in plan.steps]
    assert names.count("relu") == 1 and "relu6" in names and names.count("conv2d") == 2
    xs = rng.standard_normal((1, 3, 9, 9)).astype(f32)
    got_a2, got_side = plan.run([xs])
    t1 = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(xs), torch.from_numpy(w1),
                                               padding=1))
    t2 = torch.nn.functional.conv2d(t1, torch.from_numpy(w2))
    np.testing.assert_allclose(got_a2, torch.clamp(t2, 0, 6).numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_side, torch.relu(t2).numpy(), rtol=1e-4, atol=1e-5)
    chain = Plan([x], [F.relu6(F.conv2d(x, F.const(w1), padding=(1, 1)))])
    assert [s.op.name for s in chain.steps] == ["conv2d"]
    assert chain.steps[0].attrs["clamp"] == (0.0, 6.0)
