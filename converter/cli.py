"""``mnnconvert``: convert ONNX models (or re-encode .mnn files) with MNN's flags.

Examples::

    mnnconvert -f ONNX --modelFile mobilenet_v2.onnx --MNNModel mobilenet_v2.mnn --bizCode demo
    mnnconvert -f ONNX --modelFile m.onnx --MNNModel m8.mnn --weightQuantBits 8
    mnnconvert -f MNN --modelFile m.mnn --MNNModel m_fp16.mnn --fp16
    mnnconvert -f MNN --modelFile m.mnn --info
    mnnconvert -f MNN --modelFile m.mnn --JsonFile m.json
    mnnconvert -f ONNX --modelFile m.onnx --MNNModel m.mnn --testdir onnx/
    mnnconvert --OP
"""
import argparse
import json
import os
import sys

import numpy as np

from mnn.express import Var as F_Var

__all__ = ["build_parser", "convert", "main"]


class CliError(Exception):
    """A user error: printed without a traceback, exit status 1."""


def build_parser():
    """The argument parser (MNN's flag names; argparse prefix matching allows ``--MNN``)."""
    p = argparse.ArgumentParser(
        prog="mnnconvert",
        description="Convert an ONNX model (or re-encode an .mnn model) to an .mnn file.",
        epilog="Example: mnnconvert -f ONNX --modelFile mobilenet_v2.onnx "
               "--MNNModel mobilenet_v2.mnn --bizCode demo")
    p.add_argument("-f", "--framework", choices=["ONNX", "MNN"], type=str.upper,
                   help="source model framework: ONNX, or MNN to re-optimise, re-quantise, "
                        "inspect (--info) or dump (--JsonFile) an .mnn file")
    p.add_argument("--modelFile", help="the source model file (.onnx or .mnn)")
    p.add_argument("--MNNModel", help="the .mnn file to write")
    p.add_argument("--bizCode", default="MNN", help="business code stored in the file "
                   "(default: MNN)")
    p.add_argument("--fp16", action="store_true",
                   help="store float weights as float16 (half the size; decoded on load)")
    p.add_argument("--weightQuantBits", type=int, default=0, metavar="N",
                   help="quantise conv/matmul float weights to N bits (2..8); decoded to "
                        "float on load; 0 (default) keeps float32")
    p.add_argument("--weightQuantBlock", type=int, default=0, metavar="B",
                   help="block size along input channels for block-wise quantisation "
                        "scales (default 0: one scale per output channel)")
    p.add_argument("--weightQuantAsymmetric", action="store_true",
                   help="asymmetric (min/max) weight quantisation instead of symmetric")
    p.add_argument("--saveExternalData", action="store_true",
                   help="store weights in a separate <MNNModel>.weight file")
    p.add_argument("--keepInputFormat", type=int, default=1, choices=[0, 1],
                   help="1 (default): 4-d inputs keep their NCHW label; 0: they are "
                        "labelled NC4HW4 as MNN's automatic layout does (the data stays "
                        "NCHW: NC4HW4 is only a label in mnn)")
    p.add_argument("--forTraining", action="store_true",
                   help="keep training-related structure: BatchNormalization and "
                        "activations stay separate ops instead of folding into convolutions")
    p.add_argument("--optimizeLevel", type=int, default=1, choices=[0, 1, 2],
                   help="graph optimisation: 0 none, 1 (default) rewrites exact for every "
                        "input, 2 also rewrites exact for common inputs")
    p.add_argument("--optimizePrefer", type=int, default=0, choices=[0, 1, 2],
                   help="0 normal (default), 1 smallest file (constants that a fold would "
                        "enlarge, e.g. broadcasts, stay ops), 2 fastest model (fold all)")
    p.add_argument("--OP", action="store_true",
                   help="list the supported ONNX ops (op type and opset range) and exit")
    p.add_argument("--info", action="store_true",
                   help="print the model's inputs, outputs and op counts and exit")
    p.add_argument("--JsonFile", help="with -f MNN: write the model as JSON to this file")
    p.add_argument("--testdir", help="check the converted model against a folder with "
                   "input.json ({inputs: [{name, shape}], outputs: [names]}) and one "
                   "<name>.txt of values per input and output")
    p.add_argument("--thredhold", "--threshold", dest="threshold", type=float, default=0.01,
                   help="relative error allowed by --testdir (default 0.01)")
    p.add_argument("--inputConfigFile", help="fix input shapes: a text file with lines "
                   "'input_names = a,b' and 'input_dims = 1x3x224x224,1x10'")
    return p


def _print_ops(out):
    from .onnx import supported_ops

    rows = supported_ops()
    names = sorted({op for _, op, _, _ in rows})
    print(f"{len(names)} ONNX op types supported:", file=out)
    for domain, op, since, until in rows:
        rng = f"opset {since}+" if until is None else f"opset {since}-{until - 1}"
        print(f"  {op:28s} {domain or 'ai.onnx':10s} {rng}", file=out)


def read_input_config(path):
    """Input name -> shape from MNN's input config file."""
    if not os.path.isfile(path):
        raise CliError(f"mnnconvert: input config file {path!r} does not exist")
    fields = {}
    with open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise CliError(f"mnnconvert: {path}:{lineno}: expected 'key = value'")
            key, value = (s.strip() for s in line.split("=", 1))
            fields[key] = value
    if "input_names" not in fields or "input_dims" not in fields:
        raise CliError(f"mnnconvert: {path} needs input_names and input_dims lines")
    names = [n.strip() for n in fields["input_names"].split(",")]
    dims = [d.strip() for d in fields["input_dims"].split(",")]
    if len(names) != len(dims):
        raise CliError(f"mnnconvert: {path}: {len(names)} input names but {len(dims)} "
                       "input dims")
    shapes = {}
    for name, d in zip(names, dims):
        try:
            shapes[name] = [int(v) for v in d.lower().split("x")] if d else []
        except ValueError:
            raise CliError(f"mnnconvert: {path}: bad dims {d!r} for input {name!r} "
                           "(expected e.g. 1x3x224x224)") from None
    return shapes


class _Progress:
    """A one-line progress bar on stderr for large models (more than 200 nodes)."""

    def __init__(self, total, out=None):
        self.total, self.out, self.last = total, out or sys.stderr, -1
        self.enabled = total > 200

    def __call__(self, done):
        if not self.enabled:
            return
        pct = int(100 * done / self.total)
        tty = hasattr(self.out, "isatty") and self.out.isatty()
        # A terminal gets a redrawn bar; a log gets a line every 25%.
        step = 1 if tty else 25
        if pct // step != self.last // step or self.last < 0:
            self.last = pct
            bar = "#" * (pct // 4)
            line = f"converting [{bar:25s}] {pct:3d}% ({done}/{self.total} nodes)"
            self.out.write(("\r" + line) if tty else (line + "\n"))
            if tty and done == self.total:
                self.out.write("\n")
            self.out.flush()

    def finish(self):
        """End the line (a constant If converts one branch: fewer nodes than counted)."""
        if self.enabled and self.last < 100:
            tty = hasattr(self.out, "isatty") and self.out.isatty()
            self.last = 100
            self.out.write("\n" if tty else "converting: done\n")
            self.out.flush()


def convert(args, out=None):
    """Run one conversion described by parsed ``args``; returns the output dict."""
    out = sys.stdout if out is None else out
    from mnn.express.errors import MnnError

    from .onnx import ConvertError, load_onnx
    from .passes import optimize

    shapes = read_input_config(args.inputConfigFile) if args.inputConfigFile else None
    if not args.modelFile:
        raise CliError("mnnconvert: --modelFile is required")
    if not os.path.isfile(args.modelFile):
        raise CliError(f"mnnconvert: model file {args.modelFile!r} does not exist")
    framework = args.framework or ("MNN" if args.modelFile.endswith(".mnn") else "ONNX")
    if framework == "ONNX":
        import onnx

        try:
            model = onnx.load(args.modelFile, load_external_data=False)
        except Exception as exc:  # onnx raises protobuf DecodeError and friends
            raise CliError(f"mnnconvert: {args.modelFile!r} is not an ONNX model: {exc}") \
                from None
        progress = _Progress(_count_nodes(model.graph))
        try:
            graph = load_onnx(args.modelFile, shapes, progress=progress)
        except ConvertError as exc:
            raise CliError(str(exc)) from None
        finally:
            progress.finish()
        inputs, outputs = graph.inputs, graph.outputs
    else:
        inputs, outputs = _load_mnn(args.modelFile)
    if args.info:
        _print_info(inputs, outputs, out)
        return outputs
    if args.JsonFile:
        _write_json(args.modelFile, args.JsonFile, out)
        return outputs
    if not args.MNNModel:
        raise CliError("mnnconvert: --MNNModel is required to write a model")
    if not (args.weightQuantBits == 0 or 2 <= args.weightQuantBits <= 8):
        raise CliError(f"mnnconvert: --weightQuantBits must be 0 or 2..8, got "
                       f"{args.weightQuantBits}")
    if not args.keepInputFormat:
        from mnn.express.formats import NC4HW4

        for var in inputs.values():
            if isinstance(var, F_Var) and len(_declared(var)) == 4:
                var.expr.data_format = NC4HW4
    stats = optimize(list(outputs.values()), level=args.optimizeLevel,
                     keep_training=args.forTraining, quantizing=args.weightQuantBits > 0,
                     prefer=args.optimizePrefer)
    if args.testdir:
        _check_testdir(args.testdir, inputs, outputs, args.threshold, out)
    try:
        from mnn.express.io import save
    except ImportError as exc:
        raise CliError(f"mnnconvert: the .mnn writer is not available: {exc}") from None
    try:
        save(_distinct_outputs(inputs, outputs), args.MNNModel, weight_quant_bits=args.weightQuantBits,
             weight_quant_block=args.weightQuantBlock,
             weight_quant_asymmetric=args.weightQuantAsymmetric, fp16=args.fp16,
             external_data=args.saveExternalData, biz_code=args.bizCode)
    except MnnError as exc:
        hint = ""
        if "onnx_deferred" in str(exc):
            hint = ("\n  some nodes need shapes known only at run time (dynamic input "
                    "dims); give fixed input shapes with --inputConfigFile")
        raise CliError(f"mnnconvert: cannot write {args.MNNModel!r}: {exc}{hint}") from None
    size = os.path.getsize(args.MNNModel)
    print(f"Converted {args.modelFile} -> {args.MNNModel} ({size / 1e6:.2f} MB); "
          f"inputs: {', '.join(inputs)}; outputs: {', '.join(outputs)}", file=out)
    if any(stats.values()):
        print("optimizations: " + ", ".join(f"{k} {v}" for k, v in stats.items() if v),
              file=out)
    return outputs


def _declared(var):
    shape = var.expr.attrs.get("declared_shape", var.expr.metas[0].shape)
    return list(shape) if shape is not None else []


def _distinct_outputs(inputs, outputs):
    """Outputs where each one is its own tensor: an output that is an input (ONNX Identity
    or Dropout of an input) or repeats another output gets a copy op (a same-type cast),
    so the file keeps every input and output name."""
    import mnn.express as F

    taken = {(v.expr.id, v.index) for v in inputs.values()}
    result = {}
    for name, var in outputs.items():
        key = (var.expr.id, var.index)
        if key in taken:
            var = F.cast(var, var.dtype)
            var.expr.name = name
        taken.add((var.expr.id, var.index))
        result[name] = var
    return result


def _count_nodes(graph):
    import onnx

    total = 0
    for node in graph.node:
        total += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                total += _count_nodes(a.g)
    return total


def _load_mnn(path):
    """The file's inputs (its Input ops) and outputs (its output list, or the tensors no
    op reads when it has none), as the reader builds them."""
    from mnn.format.reader import load_graph

    try:
        graph = load_graph(path)
    except Exception as exc:  # the reader raises ModelFileError with the reason
        raise CliError(f"mnnconvert: cannot read {path!r}: {exc}") from None
    return dict(graph.inputs), dict(graph.outputs)


def _print_info(inputs, outputs, out):
    from mnn.express.graph import _ancestors, partial_shape

    print("inputs:", file=out)
    for name, var in inputs.items():
        meta = var.expr.metas[0]
        shape = var.expr.attrs.get("declared_shape", meta.shape)
        print(f"  {name}: shape {list(shape) if shape is not None else '?'}, "
              f"dtype {meta.dtype}", file=out)
    print("outputs:", file=out)
    counts = {}
    seen = set()
    for name, var in outputs.items():
        meta = var.expr.metas[var.index]
        known = partial_shape(var)  # -1 for dims only run time fixes
        shape = list(known) if known is not None else "?"
        print(f"  {name}: shape {shape}, dtype {meta.dtype}", file=out)
        for expr in _ancestors(var.expr):
            if expr.id not in seen and expr.op is not None:
                seen.add(expr.id)
                counts[expr.op_type] = counts.get(expr.op_type, 0) + 1
    print(f"ops: {sum(counts.values())}", file=out)
    for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {op}: {n}", file=out)


def _write_json(model_file, json_file, out):
    try:
        from mnn.format.json_dump import dump_json
    except ImportError:
        raise CliError("mnnconvert: --JsonFile needs mnn.format.json_dump, which this "
                       "installation lacks") from None
    with open(model_file, "rb") as fh:
        data = fh.read()
    text = dump_json(data)
    with open(json_file, "w") as fh:
        fh.write(text if isinstance(text, str) else json.dumps(text, indent=1))
    print(f"wrote {json_file}", file=out)


def _check_testdir(folder, inputs, outputs, threshold, out):
    """Run the converted graph on the folder's inputs and compare with its outputs."""
    spec_path = os.path.join(folder, "input.json")
    if not os.path.isfile(spec_path):
        raise CliError(f"mnnconvert: --testdir {folder!r} has no input.json")
    with open(spec_path) as fh:
        spec = json.load(fh)
    for item in spec.get("inputs", []):
        name = item["name"]
        if name not in inputs:
            raise CliError(f"mnnconvert: --testdir input {name!r} is not a model input "
                           f"({', '.join(inputs)})")
        var = inputs[name]
        values = np.loadtxt(os.path.join(folder, f"{name}.txt"), ndmin=1)
        shape = [int(d) for d in item.get("shape", [])]
        if int(np.prod(shape)) != values.size:
            raise CliError(f"mnnconvert: --testdir {name}.txt has {values.size} values, "
                           f"shape {shape} needs {int(np.prod(shape))}")
        declared = var.expr.attrs.get("declared_shape", var.expr.metas[0].shape)
        if declared is not None and list(declared) != shape:
            var.resize(shape)
        var.write(values.reshape(shape).astype(var.dtype))
    ok = True
    for name in spec.get("outputs", list(outputs)):
        if name not in outputs:
            raise CliError(f"mnnconvert: --testdir output {name!r} is not a model output")
        want = np.loadtxt(os.path.join(folder, f"{name}.txt"), ndmin=1)
        got = np.asarray(outputs[name].read(), dtype=np.float64).reshape(-1)
        if got.size != want.size:
            print(f"TEST_FAIL {name}: {got.size} values, expected {want.size}", file=out)
            ok = False
            continue
        err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-12))
        status = "ok" if err <= threshold else "TEST_FAIL"
        ok = ok and err <= threshold
        print(f"{status} {name}: max relative error {err:.3g} (threshold {threshold})",
              file=out)
    if not ok:
        raise CliError("mnnconvert: --testdir: outputs differ from the expected values")
    print("TEST_SUCCESS", file=out)


def main(argv=None):
    """Entry point of the ``mnnconvert`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.OP:
        _print_ops(sys.stdout)
        return 0
    try:
        convert(args)
    except CliError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
