"""The heap settings of mnn/express/heap.py, judged by the kernel's page-fault counter: a
training step that allocates the same batch-sized arrays every step reuses freed memory
with them (almost no faults per step) and faults it in again without them (glibc's
defaults, kept with MNN_KEEP_MALLOC_DEFAULTS=1)."""
import os
import subprocess
import sys
import textwrap

import pytest

_STEPS = textwrap.dedent("""
    import resource
    import numpy as np
    import mnn.expr as F
    from mnn import nn, optim
    from mnn.express import runtime

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.conv(1, 20, [5, 5])
            self.conv2 = nn.conv(20, 50, [5, 5])
            self.fc = nn.linear(800, 10)

        def forward(self, x):
            x = F.max_pool(F.relu(self.conv1(x)), [2, 2], [2, 2])
            x = F.max_pool(F.relu(self.conv2(x)), [2, 2], [2, 2])
            return self.fc(F.reshape(x, [0, -1]))

    F.set_thread_number(1)
    rng = np.random.default_rng(0)
    x = rng.random((64, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, 64).astype(np.int32)
    net = Net()
    opt = optim.SGD(net, 0.01, 0.9)

    def step():
        opt.step(nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y)))

    for _ in range(4):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(8):
        step()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 8
    print(runtime.HEAP_KEPT, faults)
""")


def _run(extra_env):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                        "MNN_KEEP_MALLOC_DEFAULTS")}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", _STEPS], env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout.split()
    return out[-2] == "True", float(out[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc settings")
def test_freed_arrays_are_reused_between_training_steps():
    kept, faults_kept = _run({})
    assert kept
    default, faults_default = _run({"MNN_KEEP_MALLOC_DEFAULTS": "1"})
    assert not default
    # Batch-sized arrays are megabytes: faulting them in again is hundreds of faults.
    assert faults_kept < 50, faults_kept
    assert faults_default > 10 * max(faults_kept, 1.0), (faults_default, faults_kept)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc settings")
def test_users_own_malloc_settings_win():
    kept, _ = _run({"MALLOC_TRIM_THRESHOLD_": str(1 << 20)})
    assert not kept
