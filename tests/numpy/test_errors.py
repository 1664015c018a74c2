"""Bad input gets a clear error naming what is wrong, never a crash or a wrong answer."""
import numpy as np
import pytest

import mnn.numpy as mnp

from numpy_helpers import data

X = data((3, 4))


@pytest.mark.parametrize("call,error,words", [
    (lambda: mnp.reshape(X, (5, 3)), ValueError, "reshape"),
    (lambda: mnp.concatenate([X, data((2, 5))]), ValueError, "concat"),
    (lambda: mnp.take(X, [12]).read(), ValueError, "out of bounds"),
    (lambda: mnp.take(X, [0.5]), ValueError, "integers"),
    (lambda: mnp.linalg.inv(np.zeros((2, 2))).read(), ValueError, "linalg_inv"),
    (lambda: mnp.linalg.inv(X), ValueError, "square"),
    (lambda: mnp.linalg.solve(np.eye(3), np.ones(4)), ValueError, "linalg_solve"),
    (lambda: mnp.bincount(np.array([1, -2], np.int32)).read(), ValueError, "negative"),
    (lambda: mnp.quantile(X, 1.5), ValueError, "range [0, 1]"),
    (lambda: mnp.percentile(X, 50, method="magic"), ValueError, "method"),
    (lambda: mnp.split(X, 3, axis=1), ValueError, "equal division"),
    (lambda: mnp.pad(X, 1, mode="bogus"), ValueError, "bogus"),
    (lambda: mnp.pad(X, 1.5), TypeError, "integral"),
    (lambda: mnp.pad(X, 1, mode="edge", constant_values=3), ValueError, "unsupported"),
    (lambda: mnp.sum(X, out=np.zeros(4)), TypeError, "out="),
    (lambda: mnp.array("abc"), TypeError, "strings"),
    (lambda: mnp.gcd(X, X), ValueError, "gcd"),
    (lambda: mnp.einsum("ij,jk->ik", X, X), ValueError, "einsum"),
    (lambda: mnp.arange(0, 5, 0), ValueError, "step"),
    (lambda: mnp.broadcast_to(X, (4, 4)), ValueError, "broadcast"),
    (lambda: mnp.squeeze(X, 0), ValueError, "squeeze"),
    (lambda: mnp.sum(X, axis=2), ValueError, "out of bounds"),
    (lambda: mnp.moveaxis(X, 0, 5), ValueError, "destination"),
    (lambda: mnp.cross(X, X), ValueError, "dimension must be 2 or 3"),
    (lambda: mnp.diff(np.float32(1.0)), ValueError, "at least one dimensional"),
    (lambda: mnp.interp(X, [1.0, 2.0], [1.0]), ValueError, "same length"),
    (lambda: mnp.choose(np.array([0, 5], np.int32), [X[0, :2], X[1, :2]]).read(),
     ValueError, "out of bounds"),
    (lambda: mnp.digitize(X, np.array([2.0, 0.0, 3.0])).read(), ValueError, "monoton"),
    (lambda: mnp.partition(X, 7), ValueError, "kth"),
    (lambda: mnp.linalg.norm(data((2, 2, 2)), 2), ValueError, "dimensions"),
    (lambda: mnp.insert(X, 20, 1.0, axis=1), ValueError, "out of bounds"),
    (lambda: mnp.delete(X, [9], axis=0), ValueError, "out of bounds"),
    (lambda: mnp.unravel_index(np.array([99], np.int32), (3, 4)).__getitem__(0).read(),
     ValueError, "bounds"),
    (lambda: mnp.sort(X, kind="bubble"), ValueError, "kind"),
    (lambda: mnp.random.shuffle(X), TypeError, "Var"),
    (lambda: mnp.histogram(X, bins=0), ValueError, "bins"),
    (lambda: mnp.tile(X, (-1, 2)), ValueError, "negative"),
    (lambda: mnp.repeat(X, [1, 2], axis=0), ValueError, "repeat"),
])
def test_clear_error(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words.lower() in str(info.value).lower(), str(info.value)
