"""nn.Module: registration by attribute, parameter order, modes, load and clone."""
import numpy as np
import pytest

import mnn
import mnn.expr as F
from mnn import nn


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = F.const(np.float32(2.0))
        self.fc1 = nn.linear(3, 4)
        self.drop = nn.dropout(0.5)
        self.fc2 = nn.linear(4, 2, bias=False)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x))) * self.scale


def test_parameters_own_first_then_children_in_order():
    net = Two()
    params = net.parameters
    assert [p.shape for p in params] == [[], [4, 3], [1, 4], [2, 4]]
    assert params[1] is net.fc1.weight and params[3] is net.fc2.weight
    assert net.fc1.name == "fc1" and net.fc1.type == "Linear"


def test_rebinding_a_parameter_replaces_it_in_place():
    net = Two()
    new = F.const(np.float32(3.0))
    net.scale = new
    assert net.parameters[0] is new and len(net.parameters) == 4
    net.scale = 5  # not a Var: no longer a parameter
    assert len(net.parameters) == 3


def test_train_switch_reaches_children_and_dropout():
    net = Two()
    assert net.is_training and net.drop.is_training
    net.train(False)
    assert not net.is_training and not net.drop.is_training
    x = np.ones((5, 3), np.float32)
    w1, b1 = np.asarray(net.fc1.weight), np.asarray(net.fc1.bias)
    expect = (x @ w1.T + b1) @ np.asarray(net.fc2.weight).T * 2.0
    np.testing.assert_allclose(net(F.const(x)).read(), expect, rtol=1e-5)


def test_load_parameters_in_order_and_errors():
    a, b = Two(), Two()
    assert b.load_parameters([p.read() for p in a.parameters]) is True
    for p, q in zip(a.parameters, b.parameters):
        np.testing.assert_array_equal(p.read(), q.read())
    assert b.parameters[1].op_type == "trainable"
    with pytest.raises(mnn.expr.MnnError, match="3 values for 4 parameters"):
        b.load_parameters([p.read() for p in a.parameters][:3])
    bad = [p.read() for p in a.parameters]
    bad[1] = np.zeros((2, 2), np.float32)
    with pytest.raises(mnn.expr.MnnError, match=r"value 1 has shape \[2, 2\]"):
        b.load_parameters(bad)


def test_clone_has_independent_values():
    a = Two()
    c = a.clone()
    assert isinstance(c, Two) and len(c.parameters) == 4
    np.testing.assert_array_equal(c.fc1.weight.read(), a.fc1.weight.read())
    c.fc1.weight.write(np.zeros((4, 3), np.float32))
    assert np.abs(a.fc1.weight.read()).sum() > 0
    assert c.fc1.weight.op_type == "trainable"


def test_forward_must_be_defined_and_init_called():
    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match="forward"):
        NoForward()(F.const([1.0]))

    class NoInit(nn.Module):
        def __init__(self):
            self.w = F.const([1.0])

    with pytest.raises(mnn.expr.MnnError, match="super"):
        NoInit()


def test_forward_with_several_inputs():
    class Add(nn.Module):
        def __init__(self):
            super().__init__()
            self.rate = nn.trainable(np.array([0.5], np.float32))

        def forward(self, a, b):
            return a * self.rate + b

    m = Add()
    np.testing.assert_allclose(m(F.const([2.0]), F.const([1.0])).read(), [2.0])
    assert m.onForward([F.const([2.0]), F.const([1.0])])[0].read()[0] == 2.0
