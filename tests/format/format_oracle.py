"""Helpers for the .mnn file tests (imported as ``format_oracle``): the real MNN wheel as
the oracle.

The wheel's converter is driven through its compiled module (never its console script,
which posts telemetry), each conversion in its own folder (it writes a scratch file into
the working directory).
"""

import os
import sys

import numpy as np
import pytest

MNN = pytest.importorskip("MNN")


def convert_onnx(model, folder, *flags):
    """Convert an ONNX ModelProto with the real wheel's converter; returns the .mnn path."""
    sys.modules["MNN.tools.utils.log"] = None
    import _tools

    folder = str(folder)
    os.makedirs(folder, exist_ok=True)
    src = os.path.join(folder, "model.onnx")
    dst = os.path.join(folder, "model.mnn")
    with open(src, "wb") as fh:
        fh.write(model.SerializeToString())
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        _tools.mnnconvert(
            [
                "mnnconvert",
                "-f",
                "ONNX",
                "--modelFile",
                src,
                "--MNNModel",
                dst,
                "--bizCode",
                "test",
                *flags,
            ]
        )
    finally:
        os.chdir(cwd)
    assert os.path.exists(dst), "the real converter produced no file"
    return dst


def wheel_run(path, inputs, output_names):
    """Run a .mnn file in the real wheel: ``inputs`` is a dict name -> ndarray."""
    F = MNN.expr
    names = list(inputs)
    module = MNN.nn.load_module_from_file(path, names, list(output_names))
    args = []
    for name in names:
        arr = np.ascontiguousarray(inputs[name])
        dtype = {np.dtype(np.float32): F.float, np.dtype(np.int32): F.int}[arr.dtype]
        args.append(F.const(arr, list(arr.shape), F.NCHW, dtype))
    outs = module.forward(args)
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    result = []
    for var in outs:
        if var.data_format == F.NC4HW4:
            var = F.convert(var, F.NCHW)
        result.append(np.array(var.read(), copy=True))
    return result


def ours_run(path_or_bytes, inputs, output_names):
    """Run a .mnn file (path or bytes) with our reader; same calling convention."""
    from mnn.format.reader import load_graph

    graph = load_graph(path_or_bytes)
    for name, value in inputs.items():
        graph.inputs[name].write(value)
    return [
        graph.outputs[name].read() if name in graph.outputs else graph.tensors[name].read()
        for name in output_names
    ]
