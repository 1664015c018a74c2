"""Bad input to the core ops through the public API: a clear error naming the op and
what is wrong, raised on the caller's line (shape/dtype problems at build time)."""
import mnn.expr as F
import numpy as np
import pytest

M = np.zeros((2, 3), np.float32)

CASES = {
    "add shapes": (lambda: F.add(M, np.zeros(4, np.float32)), r"add: shapes \[2, 3\] and \[4\]"),
    "bitwise on floats": (lambda: F.bitwise_and(M, M), "bitwise_and.*integer"),
    "reshape size": (lambda: F.reshape(M, [4, 2]), r"reshape.*6 elements.*\[4, 2\]"),
    "reshape two -1": (lambda: F.reshape(M, [-1, -1]), "reshape.*more than one -1"),
    "transpose perm": (lambda: F.transpose(M, [0, 0]), "transpose.*permutation"),
    "transpose length": (lambda: F.transpose(M, [0, 1, 2]), "transpose.*permutation"),
    "concat mismatch": (lambda: F.concat([M, np.zeros((3, 3), np.float32)], 1),
                        "concat.*match except on axis 1"),
    "concat axis": (lambda: F.concat([M, M], 2), "concat.*axis 2 is out of range"),
    "split uneven": (lambda: F.split(M, [2], 1), "split.*3 into 2 equal"),
    "split sizes": (lambda: F.split(M, [1, 1], 1), r"split.*\[1, 1\] do not add up to 3"),
    "stack shapes": (lambda: F.stack([M, np.zeros((3, 2), np.float32)]), "stack.*one shape"),
    "squeeze non-1": (lambda: F.squeeze(M, [0]), "squeeze.*axis 0 of size 2"),
    "reduce axis": (lambda: F.reduce_sum(M, [2]), "reduce_sum.*axis 2 is out of range"),
    "reduce repeated": (lambda: F.reduce_mean(M, [1, -1]), "reduce_mean.*repeated"),
    "reduce_max empty": (lambda: F.reduce_max(np.zeros((0, 2), np.float32), [0]),
                         "reduce_max.*zero-size"),
    "matmul inner": (lambda: F.matmul(M, M), "matmul.*inner dimensions differ: 3 vs 2"),
    "matmul bool": (lambda: F.matmul(M.astype(bool), M.T.astype(bool)), "matmul.*bool"),
    "broadcast_to": (lambda: F.broadcast_to(M, [4, 3]), r"broadcast_to.*\[2, 3\] to \[4, 3\]"),
    "select shapes": (lambda: F.select(np.ones(2, bool), M, np.zeros(4, np.float32)),
                      "select.*broadcast"),
    "fill non-scalar": (lambda: F.fill([2], np.ones(2, np.float32)), "fill.*one element"),
    "range zero delta": (lambda: F.range(0, 5, 0), "range.*delta"),
    "int floordiv zero": (lambda: F.floordiv(np.array([1], np.int32),
                                             np.array([0], np.int32)), "floordiv.*by zero"),
    "int negative power": (lambda: F.pow(np.array([2], np.int32), np.array([-1], np.int32)),
                           "pow.*negative"),
    "cast bad dtype": (lambda: F.cast(M, np.complex64), "complex64.*not supported"),
    "const strings": (lambda: F.const(["a"]), "cannot make a Var"),
    "const shape": (lambda: F.const([1.0, 2.0, 3.0], [2, 2]), "const.*3 elements.*shape"),
    "placeholder shape": (lambda: F.placeholder([-2]), "placeholder.*below -1"),
    "index float": (lambda: F.const(M)[0.5], "cannot index"),
    "index out of range": (lambda: F.const(M)[:, 3], "index 3 is out of range for axis 1"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_raises_clear_error(name):
    build, match = CASES[name]
    with pytest.raises((ValueError, TypeError), match=match):
        out = build()
        for v in out if isinstance(out, list) else [out]:
            v.read()


def test_shape_errors_raise_at_build_not_read():
    x = F.placeholder([2, 3])  # never written: the error cannot come from computing
    with pytest.raises(ValueError, match=r"add: .*\[2, 3\], \[4\]; dtypes: float32, float32"):
        F.add(x, F.placeholder([4]))
