"""Loading model files as Modules: ``load_module_from_file`` (pymnn's names and defaults).

The file is read by :mod:`mnn.format` into an express graph (placeholders for inputs,
ops, constants for weights); the Vars between the chosen inputs and outputs are compiled
into one plan (:class:`mnn.runtime.module.LoadedModule`).
"""
import os

from ..express.errors import MnnError

# mnn.runtime.module imports mnn.nn.module: import it inside the functions, so that either
# package can be imported first.

__all__ = ["load_graph_module", "load_module_from_buffer", "load_module_from_file"]


def load_module_from_file(file_name, input_names, output_names, dynamic=False,
                          shape_mutable=True, rearrange=False, backend=0, memory_mode=0,
                          power_mode=0, precision_mode=0, thread_num=1, runtime_manager=None):
    """Load a ``.mnn`` model as a Module.

    Parameters
    ----------
    file_name : str, os.PathLike, bytes or bytearray
        Path of the model file, or the file's bytes (weights kept in an external
        ``.mnn.weight`` file need the path).
    input_names, output_names : list of str
        Tensors to feed and to return, in ``forward``'s order. Empty lists take the file's
        inputs and outputs. An input may name an inner tensor: the model then runs from
        there.
    dynamic : bool
        Recorded (a module is always re-planned for new input shapes).
    shape_mutable : bool
        True (default): inputs may take new shapes on each call. False: inputs must have
        the shapes the file declares.
    rearrange : bool
        Recorded (weights are always prepared once at load).
    backend : int or str
        Only the CPU backend (0, "CPU") exists; others raise.
    memory_mode, power_mode, precision_mode : int or str
        Normal (0), High (1), Low (2); recorded.
    thread_num : int
        Threads the compiled kernels use while this module runs (honoured).
    runtime_manager : None
        Accepted for pymnn compatibility; must be None.

    Returns
    -------
    LoadedModule
    """
    if runtime_manager is not None:
        raise MnnError("mnn: runtime_manager is not supported; pass thread_num and the "
                       "mode arguments instead")
    from ..format.reader import build_graph, read_net
    from ..runtime.module import RuntimeConfig

    config = RuntimeConfig(dynamic, shape_mutable, rearrange, backend, memory_mode,
                           power_mode, precision_mode, thread_num)
    if isinstance(file_name, (bytes, bytearray, memoryview)):
        net, external = read_net(bytes(file_name))
    else:
        net, external = read_net(os.fspath(file_name))
    source = "<bytes>" if external is None else external.model_name
    graph = build_graph(net, source, external)
    module = load_graph_module(graph, input_names, output_names, config)
    if set(module.input_names) <= set(graph.inputs):
        module.set_rebuild(ShapeRebuild(net, source, external, module.input_names,
                                        module.output_names))
    return module


class ShapeRebuild:
    """Builds a model's graph again for other input shapes.

    The reader computes shape chains (``Shape -> Gather -> Concat -> Reshape``) for the input
    dimensions the file declares; an input of another shape needs them computed anew, as
    MNN's resize does. The decoded file is kept, and its ``Input`` ops get the new
    dimensions before the graph is rebuilt.
    """

    def __init__(self, net, source, external, input_names, output_names):
        self.net = net
        self.source = source
        self.external = external
        self.input_names = list(input_names)
        self.output_names = list(output_names)

    def build(self, shapes):
        """(input Vars, output Vars) of the graph for ``shapes`` (input name -> shape)."""
        import numpy as np

        from ..format.reader import build_graph

        names = list(self.net.get("tensorName") or [])
        oplists = list(self.net.get("oplists") or [])
        for k, op in enumerate(oplists):
            outs = op.get("outputIndexes")
            if op.get("main_type") != "Input" or outs is None or len(outs) != 1:
                continue
            name = names[int(outs[0])] if int(outs[0]) < len(names) else None
            if name in shapes:
                main = dict(op.get("main") or {})
                main["dims"] = np.asarray(shapes[name], np.int32)
                oplists[k] = dict(op, main=main)
        graph = build_graph(dict(self.net, oplists=oplists), self.source, self.external)
        inputs, _ = _pick(graph.inputs, graph.tensors, self.input_names, "input")
        outputs, _ = _pick(graph.outputs, graph.tensors, self.output_names, "output")
        return inputs, outputs


def load_module(inputs, outputs, for_training):
    """A Module over the graph between ``inputs`` and ``outputs`` (pymnn's ``load_module``).

    Parameters
    ----------
    inputs, outputs : list of Var
        E.g. from ``F.load_as_dict``: the tensors to feed and to return.
    for_training : bool
        False: a compiled inference module (:class:`mnn.runtime.module.LoadedModule`).
        True: a module that builds the graph anew on each ``forward``, with the weights of
        convolutions and matrix products as trainable parameters, for fine-tuning
        (:class:`mnn.runtime.extract.ExtractedModule`).
    """
    inputs, outputs = list(inputs), list(outputs)
    if for_training:
        from ..runtime.extract import ExtractedModule

        return ExtractedModule(inputs, outputs)
    from ..runtime.module import LoadedModule

    return LoadedModule(inputs, outputs, [v.name for v in inputs], [v.name for v in outputs])


def load_module_from_buffer(buffer, input_names, output_names, **kwargs):
    """:func:`load_module_from_file` on the model file's bytes."""
    if not isinstance(buffer, (bytes, bytearray, memoryview)):
        raise TypeError(f"mnn: load_module_from_buffer needs bytes, got "
                        f"{type(buffer).__name__}")
    return load_module_from_file(bytes(buffer), input_names, output_names, **kwargs)


def load_graph_module(graph, input_names, output_names, config=None):
    """A :class:`LoadedModule` over a read model (:class:`mnn.format.reader.LoadedGraph`).

    Picks the inputs and outputs by name (empty lists: the file's own).
    """
    from ..runtime.module import LoadedModule

    inputs, in_names = _pick(graph.inputs, graph.tensors, input_names, "input")
    outputs, out_names = _pick(graph.outputs, graph.tensors, output_names, "output")
    net = getattr(graph, "net", None) or {}
    extra = net.get("extraInfo") or {}
    version = extra.get("version") if isinstance(extra, dict) else None
    return LoadedModule(inputs, outputs, in_names, out_names, config,
                        biz_code=net.get("bizCode") or "", version=version)


def _pick(default, tensors, names, what):
    if names is None or len(names) == 0:
        if not default:
            raise MnnError(f"mnn: the model has no {what}s to pick; name them")
        return list(default.values()), list(default.keys())
    picked = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"mnn: {what} names must be strings, got {type(name).__name__}")
        var = default.get(name, tensors.get(name))
        if var is None:
            known = list(default.keys())
            raise MnnError(f"mnn: the model has no tensor named {name!r} (its {what}s: "
                           f"{known})")
        picked.append(var)
    return picked, [str(n) for n in names]
