"""Fixtures of the runtime tests (the models themselves: runtime_models.py)."""
import os
import sys

import pytest

# The test modules import runtime_models too: make this folder importable under any
# pytest import mode.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runtime_models import (
    add_relu_model,
    conv_model,
    convert_with_wheel,
    elementwise_model,
    if_model,
    loop_model,
    residual_model,
    shape_chain_model,
)


@pytest.fixture(scope="session")
def wheel_models(tmp_path_factory):
    """name -> (onnx path, mnn path), converted lazily by the wheel."""
    root = tmp_path_factory.mktemp("wheel_models")
    makers = {"elementwise": elementwise_model, "add_relu": add_relu_model, "if": if_model,
              "loop": loop_model, "conv": conv_model, "shape_chain": shape_chain_model,
              "residual": residual_model}
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = convert_with_wheel(makers[name](), str(root / name))
        return cache[name]

    return get
