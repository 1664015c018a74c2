"""Runs every sample of the op database and checks that every op has samples."""
import importlib

import numpy as np
import pytest

import mnn.express as F
from mnn.express.graph import apply

from opdb_core import load

# Packages that register ops in the table when imported. Each one that imports is
# covered by the "every op has samples" check.
OP_PACKAGES = ["mnn.express", "mnn.numpy", "mnn.nn", "mnn.cv", "mnn.format", "converter"]

# Ops known to lack samples, each with the reason. Owners: add a samples file and remove
# your ops from here (test_pending_is_not_stale fails once an op here has samples).
PENDING = {
}

SAMPLES = load("SAMPLES")
REJECTS = load("REJECTS")


def _import_op_packages():
    for name in OP_PACKAGES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # A package not written yet is fine; one that fails to import is an error
            # (its ops would silently escape the missing-samples check).
            if exc.name != name:
                raise


def _cases(table):
    out = []
    for op, entries in sorted(table.items()):
        for i, (path, sample) in enumerate(entries):
            out.append(pytest.param(op, sample, id=f"{op}-{i}-{sample.describe()}"))
    return out


def _tolerances(sample, dtype):
    if sample.rtol is not None or sample.atol is not None:
        return sample.rtol or 0.0, sample.atol or 0.0
    if dtype == np.float32:
        return 1e-5, 1e-6
    return 1e-12, 1e-12


@pytest.mark.parametrize("op,sample", _cases(SAMPLES))
def test_sample_matches_numpy(op, sample):
    _import_op_packages()
    inputs = [F.const(a, dtype=a.dtype) for a in sample.inputs]
    outputs = apply(op, inputs, **sample.attrs)
    inferred = [(o.expr.metas[o.index].shape, o.expr.metas[o.index].dtype) for o in outputs]
    expected = sample.ref(*sample.inputs, **sample.attrs)
    if not isinstance(expected, (list, tuple)):
        expected = [expected]
    assert len(outputs) == len(expected), f"{op}: {len(outputs)} outputs, want {len(expected)}"
    for k, (out, want, (ishape, idtype)) in enumerate(zip(outputs, expected, inferred)):
        want = np.asarray(want)
        got = out.read()
        assert got.dtype == want.dtype, f"{op} output {k}: dtype {got.dtype}, want {want.dtype}"
        assert got.shape == want.shape, f"{op} output {k}: shape {got.shape}, want {want.shape}"
        if ishape is not None:
            assert tuple(ishape) == got.shape, f"{op} output {k}: inferred shape {ishape}"
        if idtype is not None:
            assert idtype == got.dtype, f"{op} output {k}: inferred dtype {idtype}"
        if want.dtype.kind in "fc":
            rtol, atol = _tolerances(sample, want.dtype)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{op} output {k}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{op} output {k}")


@pytest.mark.parametrize("op,sample", _cases(REJECTS))
def test_reject_is_clear_error(op, sample):
    _import_op_packages()
    inputs = [F.const(a, dtype=a.dtype) for a in sample.inputs]
    with pytest.raises(ValueError) as info:
        outs = apply(op, inputs, **sample.attrs)
        for o in outs:
            o.read()
    assert op in str(info.value), f"error does not name the op: {info.value}"


def test_every_op_has_samples():
    _import_op_packages()
    ops = set(F.all_ops())
    missing = sorted(ops - set(SAMPLES) - set(PENDING))
    assert not missing, f"ops without samples in tests/opdb/samples_*.py: {missing}"


def test_pending_is_not_stale():
    stale = sorted(op for op in PENDING if op in SAMPLES)
    assert not stale, f"remove from PENDING (now sampled or gone): {stale}"
