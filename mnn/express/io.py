"""Saving and loading express graphs as .mnn files (pymnn's ``save``/``load_as_*``).

``save(vars, path)`` writes the graph above ``vars``; ``load_as_list``/``load_as_dict``
read a file back into Vars (one per tensor of the file, placeholders for its inputs), and
``get_inputs_and_outputs`` splits such a dict into inputs and outputs as MNN does.
Weight quantisation and external weights are keyword options of ``save`` (the converter's
``--weightQuantBits``, ``--weightQuantBlock``, ``--weightQuantAsymmetric``, ``--fp16``,
``--saveExternalData``).
"""

__all__ = ["get_inputs_and_outputs", "load_as_dict", "load_as_list", "save"]


def save(
    vars,
    fileName,
    forInference=True,
    *,
    weight_quant_bits=0,
    weight_quant_block=0,
    weight_quant_asymmetric=False,
    fp16=False,
    external_data=False,
    biz_code="MNN",
):
    """Write the graph that computes ``vars`` to the .mnn file ``fileName``.

    Parameters
    ----------
    vars : list of Var, or dict name -> Var
        The outputs to keep (with everything they depend on). A dict names the outputs.
    fileName : str or os.PathLike
    forInference : bool
        pymnn's flag: True writes trainable parameters as constants (an inference model);
        False keeps them as ``TrainableParam`` ops, which load back as trainable Vars.
    weight_quant_bits : int
        2..8 stores convolution weights as an int codebook (0: float).
    weight_quant_block : int
        Block size along input channels for block-wise scales (0: per output channel).
    weight_quant_asymmetric : bool
        Asymmetric (min/max) instead of symmetric (abs-max) quantisation.
    fp16 : bool
        Store float weights as half floats.
    external_data : bool
        Put weights in ``fileName + ".weight"``.
    biz_code : str
        The ``bizCode`` recorded in the file.
    """
    # Imported here: mnn.format builds on mnn.express, which imports this module.
    from ..format.writer import EncodeOptions, write_model

    if not isinstance(vars, dict):
        vars = list(vars) if isinstance(vars, (list, tuple)) else [vars]
    options = EncodeOptions(
        weight_quant_bits,
        weight_quant_block,
        weight_quant_asymmetric,
        fp16,
        external_data,
        keep_trainable=not forInference,
    )
    write_model(vars, fileName, options, biz_code)


def _tensors(fileName):
    from ..format.reader import load_graph

    return load_graph(fileName).tensors


def load_as_list(fileName):
    """Read a .mnn file (path or bytes): a list with a Var for each tensor, in file order.

    Inputs are placeholders (write them, then read outputs); weights are constants.
    """
    seen, out = set(), []
    for var in _tensors(fileName).values():
        key = (id(var.expr), var.index)
        if key not in seen:
            seen.add(key)
            out.append(var)
    return out


def load_as_dict(fileName):
    """Read a .mnn file (path or bytes) into a dict tensor name -> Var."""
    return dict(_tensors(fileName))


def get_inputs_and_outputs(var_map):
    """Split a name -> Var dict into ``(inputs, outputs)`` dicts, as MNN does.

    Inputs are the placeholders; outputs are the Vars that no Var of ``var_map`` consumes.
    """
    in_map = {(id(v.expr), v.index) for v in var_map.values()}
    # A file op may be several express ops: walk up through intermediates not in the map.
    consumed, visited = set(), set()
    stack = [v for var in var_map.values() for v in var.expr.inputs]
    while stack:
        v = stack.pop()
        key = (id(v.expr), v.index)
        if key in in_map:
            consumed.add(key)
            continue
        if id(v.expr) in visited:
            continue
        visited.add(id(v.expr))
        stack.extend(v.expr.inputs)
    inputs, outputs = {}, {}
    for name, var in var_map.items():
        if var.expr.kind == "placeholder":
            inputs[name] = var
        elif (id(var.expr), var.index) not in consumed:
            outputs[name] = var
    return inputs, outputs
