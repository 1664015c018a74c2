"""Single NN ops: mnn.express vs torch vs onnxruntime, float32, 1 and 2 threads.

Each op runs as a graph built once on a placeholder (write the input, read the output),
as a model would run it; torch runs the functional op under no_grad; onnxruntime runs a
one-node model. Prints median milliseconds and ratios ours/theirs (< 1: we are faster).

``write`` copies the input into the graph and ``read`` copies the output out (the
caller's array stays the caller's, and the value stays cached for other readers), where
onnxruntime wraps the input array and hands over its output: on a 3 MB activation the
two copies are most of our time. The last column, ``op/ort``, is our op alone against
onnxruntime's run: (write + a no-copy view of the output) minus write, wall time.

Usage: ``python benchmarks/bench_nn_ops.py [--repeat 30] [--threads 1 2]``
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# mnn first: its import sets the process heap's thresholds (mnn/express/heap.py) before
# the other peers allocate, as in a user's script that imports mnn.
import mnn.expr as F  # noqa: I001

import numpy as np
from timing import median_ms
import onnxruntime as ort
import torch
import torch.nn.functional as TF
from onnx import TensorProto, helper

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _onnx(op, x, inits, attrs, extra_inputs=()):
    names = ["x"] + [f"i{k}" for k in range(len(inits))] + list(extra_inputs)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor(f"i{k}", TensorProto.FLOAT, a.shape, a.ravel())
         for k, a in enumerate(inits)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _onnx_clip(model):
    """``model`` followed by a Clip(0, 6) (a relu6), as a converter's fused conv."""
    graph = model.graph
    graph.node[0].output[0] = "conv"
    graph.initializer.extend([helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
                              helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])])
    graph.node.append(helper.make_node("Clip", ["conv", "lo", "hi"], ["y"]))
    return model


def cases():
    """(name, input, ours(Var) -> Var, torch(tensor) -> tensor, onnx model)."""
    out = []
    x = _arr(1, 64, 56, 56)
    w3, b = _arr(64, 64, 3, 3), _arr(64)
    out.append(("conv3x3 64ch 56x56", x,
                lambda v: F.conv2d(v, F.const(w3), F.const(b), padding=(1, 1)),
                lambda t, w=torch.tensor(w3), bb=torch.tensor(b): TF.conv2d(t, w, bb, 1, 1),
                _onnx("Conv", x, [w3, b], dict(pads=[1, 1, 1, 1]))))
    xd, wd = _arr(1, 144, 56, 56), _arr(144, 1, 3, 3)
    out.append(("depthwise3x3 144ch 56x56", xd,
                lambda v: F.conv2d(v, F.const(wd), None, padding=(1, 1), group=144),
                lambda t, w=torch.tensor(wd): TF.conv2d(t, w, None, 1, 1, 1, 144),
                _onnx("Conv", xd, [wd], dict(pads=[1, 1, 1, 1], group=144))))
    xs, ws, bs = _arr(1, 96, 112, 112), _arr(96, 1, 3, 3), _arr(96)
    out.append(("depthwise3x3 s2 96ch 112 relu6", xs,
                lambda v: F.conv2d(v, F.const(ws), F.const(bs), (2, 2), (1, 1), group=96,
                                   activation="relu6"),
                lambda t, w=torch.tensor(ws), bb=torch.tensor(bs):
                    torch.clamp(TF.conv2d(t, w, bb, 2, 1, 1, 96), 0, 6),
                _onnx_clip(_onnx("Conv", xs, [ws, bs], dict(pads=[1, 1, 1, 1], group=96,
                                                            strides=[2, 2])))))
    x1, w1 = _arr(1, 64, 56, 56), _arr(256, 64, 1, 1)
    out.append(("conv1x1 64->256 56x56", x1,
                lambda v: F.conv2d(v, F.const(w1)),
                lambda t, w=torch.tensor(w1): TF.conv2d(t, w),
                _onnx("Conv", x1, [w1], {})))
    xp = _arr(1, 64, 112, 112)
    out.append(("maxpool3x3 s2 64ch 112x112", xp,
                lambda v: F.max_pool(v, (3, 3), (2, 2), pads=(1, 1)),
                lambda t: TF.max_pool2d(t, 3, 2, 1),
                _onnx("MaxPool", xp, [], dict(kernel_shape=[3, 3], strides=[2, 2],
                                               pads=[1, 1, 1, 1]))))
    out.append(("avgpool2x2 s2 64ch 112x112", xp,
                lambda v: F.avg_pool(v, (2, 2), (2, 2)),
                lambda t: TF.avg_pool2d(t, 2, 2),
                _onnx("AveragePool", xp, [], dict(kernel_shape=[2, 2], strides=[2, 2]))))
    a, bm = _arr(256, 512), _arr(512, 512)
    out.append(("matmul 256x512x512", a,
                lambda v: F.matmul(v, F.const(bm)),
                lambda t, m=torch.tensor(bm): t @ m,
                _onnx("MatMul", a, [bm], {})))
    out += _softmax_norm_activation_cases()
    return out


def _onnx_nodes(nodes, x, inits, opset):
    """A model of several nodes (input ``x``, output ``y``, named initializers)."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor(k, TensorProto.FLOAT, a.shape, a.ravel()) for k, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _softmax_norm_activation_cases():
    """Softmax/log-softmax (rows, attention scores, channel axis), layer/group/instance
    norm and the activations models use, in the cases() format."""
    out = []
    for shape, axis in (((1, 1000), -1), ((64, 1000), -1), ((8, 12, 128, 128), -1),
                        ((8, 21, 64, 64), 1)):
        s = _arr(*shape)
        out.append((f"softmax {'x'.join(map(str, shape))} axis {axis}", s,
                    lambda v, a=axis: F.softmax(v, a), lambda t, a=axis: torch.softmax(t, a),
                    _onnx("Softmax", s, [], dict(axis=axis))))
    s = _arr(64, 1000)
    out.append(("log_softmax 64x1000", s, lambda v: F.log_softmax(v, -1),
                lambda t: torch.log_softmax(t, -1), _onnx("LogSoftmax", s, [], dict(axis=-1))))
    g, be = _arr(768), _arr(768)
    for shape in ((128, 768), (1, 128, 768)):
        ln = _arr(*shape)
        out.append((f"layer_norm {'x'.join(map(str, shape))}", ln,
                    lambda v: F.layer_norm(v, -1, F.const(g), F.const(be), 1e-5),
                    lambda t, gg=torch.tensor(g), bb=torch.tensor(be):
                        TF.layer_norm(t, (768,), gg, bb, 1e-5),
                    _onnx("LayerNormalization", ln, [g, be], dict(axis=-1, epsilon=1e-5))))
    xn, gn, bn = _arr(1, 64, 56, 56), _arr(64), _arr(64)
    out.append(("group_norm 32g 64ch 56x56", xn,
                lambda v: F.group_norm(v, 32, F.const(gn), F.const(bn)),
                lambda t, a=torch.tensor(gn), b=torch.tensor(bn): TF.group_norm(t, 32, a, b),
                _onnx_nodes([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                              num_groups=32)], xn, {"s": gn, "b": bn}, 21)))
    out.append(("instance_norm 64ch 56x56", xn,
                lambda v: F.instance_norm(v, F.const(gn), F.const(bn)),
                lambda t, a=torch.tensor(gn), b=torch.tensor(bn):
                    TF.instance_norm(t, weight=a, bias=b),
                _onnx("InstanceNormalization", xn, [gn, bn], {})))
    xa = _arr(1, 64, 112, 112)
    bounds = {"lo": np.zeros((), np.float32), "hi": np.full((), 6, np.float32)}
    for name, ours, theirs, nodes, inits in (
            ("relu6", F.relu6, TF.relu6, [("Clip", ["x", "lo", "hi"], "y")], bounds),
            ("hardswish", F.hardswish, TF.hardswish, [("HardSwish", ["x"], "y")], {}),
            ("gelu", F.gelu, TF.gelu, [("Gelu", ["x"], "y")], {}),
            ("silu", F.silu, TF.silu, [("Sigmoid", ["x"], "s"), ("Mul", ["x", "s"], "y")], {}),
            ("sigmoid", F.sigmoid, torch.sigmoid, [("Sigmoid", ["x"], "y")], {}),
            ("tanh", F.tanh, torch.tanh, [("Tanh", ["x"], "y")], {})):
        model = _onnx_nodes([helper.make_node(op, ins, [o]) for op, ins, o in nodes], xa,
                            inits, 20)
        out.append((f"{name} 64ch 112x112", xa, ours, theirs, model))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}  "
          f"load average {os.getloadavg()[0]:.1f}")
    print("wall / cpu: median milliseconds of wall and process CPU time")
    print(f"{'op':28s} {'thr':>3s} {'mnn wall/cpu':>14s} {'torch wall/cpu':>15s} "
          f"{'ort wall/cpu':>14s} {'mnn/torch':>10s} {'mnn/ort':>10s} {'op/ort':>7s}")
    for name, x, ours, theirs, model in cases():
        if args.only not in name:
            continue
        xv = F.placeholder(list(x.shape))
        yv = ours(xv)
        tx = torch.tensor(x)
        for n in args.threads:
            F.set_thread_number(n)
            torch.set_num_threads(n)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = n
            sess = ort.InferenceSession(model.SerializeToString(), opts,
                                        providers=["CPUExecutionProvider"])

            def run_ours():
                xv.write(x)
                return yv.read()

            def write_only():
                xv.write(x)

            def run_op():
                xv.write(x)
                return np.asarray(yv)  # the cached value, read-only: no copy

            def run_torch():
                with torch.no_grad():
                    return theirs(tx)

            def run_ort():
                return sess.run(None, {"x": x})[0]

            ref = run_torch().numpy()
            for got in (np.asarray(run_ours()), run_ort()):
                np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-3)
            runs = {f: [] for f in (run_ours, run_torch, run_ort, write_only, run_op)}
            for _ in range(2):  # interleaved rounds; keep each peer's best round
                for f in runs:
                    runs[f].append(median_ms(f, args.repeat))
            (aw, ac), (bw, bc), (cw, cc), (ww, _), (ow, _) = (
                (min(r[0] for r in v), min(r[1] for r in v)) for v in runs.values())
            print(f"{name:28s} {n:3d} {aw:6.2f}/{ac:6.2f} {bw:7.2f}/{bc:6.2f} "
                  f"{cw:6.2f}/{cc:6.2f} {aw / bw:4.2f}/{ac / bc:4.2f} "
                  f"{aw / cw:4.2f}/{ac / cc:4.2f} {(ow - ww) / cw:7.2f}", flush=True)


if __name__ == "__main__":
    main()
