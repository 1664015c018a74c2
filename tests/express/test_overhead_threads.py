"""A loaded module's run switches only the kernels' thread count (cheap), and restores
the caller's afterwards; results are checked against numpy."""
import numpy as np
import pytest

import mnn.expr as F
from mnn.express import runtime
from mnn.runtime.module import LoadedModule, RuntimeConfig


def test_module_run_uses_its_thread_count_and_restores_the_callers():
    before = F.get_thread_number()
    x = F.placeholder([3, 4])
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = F.relu(F.matmul(x, F.const(w)) - 5.0)
    module = LoadedModule([x], [y], ["x"], ["y"], config=RuntimeConfig(thread_num=1))
    seen = []
    F.set_thread_number(2)
    try:
        data = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        (out,) = module.run_arrays([data], before=lambda step, args: seen.append(
            F.get_thread_number()) is None)
        assert seen and set(seen) == {1}
        assert F.get_thread_number() == 2
        np.testing.assert_allclose(out, np.maximum(data @ w - 5.0, 0), rtol=1e-6)
    finally:
        F.set_thread_number(before)


def test_use_kernel_threads_rejects_zero():
    with pytest.raises(ValueError, match=">= 1"):
        runtime.use_kernel_threads(0)
