"""layer_norm, group_norm and instance_norm graphs written to .mnn (MNN's LayerNorm op,
with ``group`` for group norm) run in the real wheel and in our reader with torch's values."""

import mnn.expr as F
import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from format_oracle import ours_run, wheel_run

from mnn.express import io
from mnn.format.reader import read_net
from mnn.format.schema import OP_TYPES

SHAPE = (2, 6, 5, 4)


def _params(rng, n):
    return (rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


def _op_types(path):
    names = {v: k for k, v in OP_TYPES.items()}
    net, _ = read_net(path)
    return [names[op["type"]] for op in net["oplists"]]


def _check(y, expect, value, tmp_path):
    path = str(tmp_path / "n.mnn")
    io.save({"y": y}, path)
    (theirs,) = wheel_run(path, {"x": value}, ["y"])
    (ours,) = ours_run(path, {"x": value}, ["y"])
    np.testing.assert_allclose(theirs, expect, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours, expect, rtol=1e-5, atol=1e-5)
    return path


@pytest.mark.parametrize("affine", ["both", "gamma", "beta", "none"])
@pytest.mark.parametrize("dims", [1, 2])
def test_layer_norm_file(affine, dims, tmp_path, rng):
    x = F.placeholder(list(SHAPE))
    x.name = "x"
    norm_shape = list(SHAPE[-dims:])
    gamma, beta = _params(rng, int(np.prod(norm_shape)))
    gamma = gamma.reshape(norm_shape) if affine in ("both", "gamma") else None
    beta = beta.reshape(norm_shape) if affine in ("both", "beta") else None
    y = F.layer_norm(x, list(range(-dims, 0)), gamma, beta, 1e-5)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    expect = tF.layer_norm(torch.from_numpy(value), norm_shape,
                           None if gamma is None else torch.from_numpy(gamma),
                           None if beta is None else torch.from_numpy(beta), 1e-5).numpy()
    path = _check(y, expect, value, tmp_path)
    assert "LayerNorm" in _op_types(path)


def test_layer_norm_with_run_time_gamma(tmp_path, rng):
    # A gamma computed from an input cannot live inside MNN's op: separate ops apply it.
    x = F.placeholder(list(SHAPE))
    x.name = "x"
    y = F.layer_norm(x, [-1], F.reduce_mean(F.reshape(x, [-1, 4]), [0]) + 1.0, None, 1e-5)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    gamma = value.reshape(-1, 4).mean(0) + 1.0
    expect = tF.layer_norm(torch.from_numpy(value), [4], torch.from_numpy(gamma)).numpy()
    _check(y, expect, value, tmp_path)


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_file(groups, affine, tmp_path, rng):
    x = F.placeholder(list(SHAPE))
    x.name = "x"
    gamma, beta = _params(rng, SHAPE[1]) if affine else (None, None)
    y = F.group_norm(x, groups, gamma, beta, 1e-5)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    expect = tF.group_norm(torch.from_numpy(value), groups,
                           None if gamma is None else torch.from_numpy(gamma),
                           None if beta is None else torch.from_numpy(beta), 1e-5).numpy()
    path = _check(y, expect, value, tmp_path)
    assert "LayerNorm" in _op_types(path)


def test_instance_norm_file(tmp_path, rng):
    x = F.placeholder(list(SHAPE))
    x.name = "x"
    gamma, beta = _params(rng, SHAPE[1])
    y = F.instance_norm(x, gamma, beta, 1e-5)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    expect = tF.instance_norm(torch.from_numpy(value), weight=torch.from_numpy(gamma),
                              bias=torch.from_numpy(beta), eps=1e-5).numpy()
    _check(y, expect, value, tmp_path)
