"""``Var.write`` copies large arrays with the kernel threads (elementwise.copy_bytes):
the stored value equals the written one, owns its memory and ignores later changes to
the caller's array, whatever the source's layout or dtype."""
import mnn.expr as F
import numpy as np
import pytest

from mnn._cython import elementwise


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    F.set_thread_number(request.param)
    yield request.param
    F.set_thread_number(1)


@pytest.mark.parametrize("source", ["contiguous", "transposed", "float64", "readonly"])
def test_large_write_is_an_independent_copy(threads, source):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 150, 151))  # 1 MB as float32
    if source == "transposed":  # not C-contiguous (astype keeps the layout)
        data = np.swapaxes(data, 2, 3).copy().swapaxes(2, 3)
    if source != "float64":
        data = data.astype(np.float32)
    if source == "readonly":
        data.flags.writeable = False
    x = F.placeholder([2, 3, 150, 151])
    x.write(data)
    want = np.array(data, np.float32)
    got = x.read()
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, data)
    if data.flags.writeable:
        data[...] = 0  # the written value does not follow the caller's array
        np.testing.assert_array_equal(x.read(), want)
    np.testing.assert_array_equal((x * 2.0).read(), want * 2)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1 << 18, (1 << 18) + 37])
def test_copy_bytes_matches_numpy(n):
    src = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    for threads in (1, 2, 3):
        dst = np.zeros(n, np.uint8)
        elementwise.copy_bytes(src, dst, threads)
        np.testing.assert_array_equal(dst, src)


def test_copy_bytes_rejects_bad_arguments():
    with pytest.raises(ValueError, match="5 bytes into 4"):
        elementwise.copy_bytes(np.zeros(5, np.uint8), np.zeros(4, np.uint8), 2)
    with pytest.raises(ValueError, match="nthreads"):
        elementwise.copy_bytes(np.zeros(5, np.uint8), np.zeros(5, np.uint8), 0)
