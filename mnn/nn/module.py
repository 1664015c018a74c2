"""``Module``: the base of every layer and model (pymnn's ``MNN.nn.Module``).

A Module owns parameters (Vars) and submodules. As in pymnn, assigning a Var or a Module
to an attribute registers it: ``self.w = var`` adds a parameter named ``w``;
``self.fc = nn.linear(4, 2)`` adds a submodule named ``fc``. ``parameters`` lists this
module's Vars first, then each submodule's, in the order they were assigned (the order
``F.save(net.parameters, ...)`` writes and ``load_parameters`` expects).
"""
import copy

import numpy as np

from ..express.errors import MnnError
from ..express.var import Var

__all__ = ["Module"]


class Module:
    """Base class of layers and models.

    Subclasses call ``super().__init__()`` first, assign parameters and submodules as
    attributes, and implement :meth:`forward`. Calling the module calls ``forward``.
    """

    def __init__(self):
        # Set through object.__setattr__: our __setattr__ needs these to exist.
        object.__setattr__(self, "_params", {})      # attribute name -> Var
        object.__setattr__(self, "_children", {})    # attribute name -> Module
        object.__setattr__(self, "_extra_params", [])  # added with _add_parameter
        object.__setattr__(self, "_training", True)
        object.__setattr__(self, "_name", "")
        object.__setattr__(self, "_type", type(self).__name__)

    # -- registration ----------------------------------------------------------------
    def _check_initialized(self):
        if "_params" not in self.__dict__:
            raise MnnError(f"mnn: {type(self).__name__}.__init__ must call "
                           "super().__init__() before assigning attributes")

    def __setattr__(self, name, value):
        if isinstance(value, (Var, Module)):
            self._check_initialized()
        params = self.__dict__.get("_params")
        children = self.__dict__.get("_children")
        if params is not None:
            # Rebinding a name to something else drops the old registration.
            if not isinstance(value, Var):
                params.pop(name, None)
            if not isinstance(value, Module):
                children.pop(name, None)
        if isinstance(value, Module):
            if not value._name:
                value._name = name
            children[name] = value
        elif isinstance(value, Var):
            # A new Var under a known name takes the old one's place in the parameter
            # order (pymnn replaces it); its name becomes the attribute's.
            if value.expr.name is None:
                value.name = name
            params[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self.__dict__["_params"].pop(name, None)
        self.__dict__["_children"].pop(name, None)
        object.__delattr__(self, name)

    def _add_parameter(self, var):
        """Add ``var`` as a parameter not bound to an attribute; returns its index in
        :attr:`parameters`."""
        if not isinstance(var, Var):
            raise TypeError(f"mnn: _add_parameter needs a Var, got {type(var).__name__}")
        self._extra_params.append(var)
        return len(self._params) + len(self._extra_params) - 1

    def _register_submodules(self, modules):
        """Register ``modules`` (a list of Module) as children without attributes."""
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"mnn: _register_submodules needs Modules, item {i} is "
                                f"{type(m).__name__}")
            self._children[f"_child{len(self._children)}"] = m

    # -- public API ------------------------------------------------------------------
    @property
    def parameters(self):
        """All Vars of this module and its submodules (own first, then children's)."""
        out = list(self._params.values()) + list(self._extra_params)
        for child in self._children.values():
            out.extend(child.parameters)
        return out

    @property
    def is_training(self):
        """True in training mode (the default), False after ``train(False)``."""
        return self._training

    @property
    def name(self):
        """The module's name (the attribute it was assigned to, or ``set_name``'s)."""
        return self._name

    def set_name(self, name):
        """Set the module's name."""
        self._name = str(name)

    @property
    def type(self):
        """The layer kind (``Linear``, ``Conv``, ``BatchNorm``, or the class name)."""
        return self._type

    def train(self, is_training=True):
        """Switch this module and all submodules to training (True) or inference mode.

        Dropout drops only in training; batch norm uses batch statistics in training and
        its running statistics in inference.
        """
        self._training = bool(is_training)
        for child in self._children.values():
            child.train(is_training)

    def forward(self, *inputs):
        """Compute the module's outputs; subclasses implement it."""
        raise NotImplementedError(f"mnn: {type(self).__name__} does not define forward()")

    def __call__(self, *inputs, **kwargs):
        return self.forward(*inputs, **kwargs)

    def onForward(self, inputs):  # noqa: N802 - pymnn's name
        """``forward`` on a list of inputs, returning a list (pymnn's ``onForward``)."""
        out = self.forward(*inputs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def load_parameters(self, parameters):
        """Copy values into :attr:`parameters`, in order (pymnn's ``load_parameters``).

        Parameters
        ----------
        parameters : list of Var or array_like
            As many entries as :attr:`parameters`, each with the same number of elements
            (e.g. from ``F.load_as_list``).

        Returns
        -------
        bool
            True (a mismatch raises, naming the parameter).
        """
        own = self.parameters
        parameters = list(parameters)
        if len(parameters) != len(own):
            raise MnnError(f"mnn: load_parameters: got {len(parameters)} values for "
                           f"{len(own)} parameters of {self._describe()}")
        values = []
        for i, (p, v) in enumerate(zip(own, parameters)):
            arr = np.asarray(v)
            if arr.size != p.size:
                raise MnnError(f"mnn: load_parameters: value {i} has shape "
                               f"{list(arr.shape)}, parameter {p.name} has shape {p.shape}")
            values.append(arr)
        for p, arr in zip(own, values):
            _set_value(p, arr.reshape(p.shape).astype(p.dtype, copy=False))
        return True

    def _state_updates(self):
        """Pending updates of non-trained state (batch norm's running statistics) of
        this module and its submodules, for the optimizer's step."""
        out = list(self._own_state_updates())
        for child in self._children.values():
            out.extend(child._state_updates())
        return out

    def _own_state_updates(self):
        """This module's own pending state updates (layers with running state
        override it)."""
        return []

    def clone(self):
        """A deep copy with its own parameter values (pymnn's ``clone``)."""
        memo = {}
        for p in self.parameters:
            if id(p) not in memo:
                memo[id(p)] = _copy_var(p)
        return copy.deepcopy(self, memo)

    def clear_cache(self):
        """Accepted for pymnn compatibility: mnn keeps no per-module cache."""

    def get_info(self):
        """A dict describing the module (name, type, parameter count)."""
        return {"name": self._name, "type": self._type,
                "parameters": len(self.parameters)}

    def _describe(self):
        return f"{self._type} {self._name!r}" if self._name else self._type

    def __repr__(self):
        lines = [f"{self._type}("]
        for name, child in self._children.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        lines.append(")")
        return "\n".join(lines) if self._children else f"{self._type}()"


def _copy_var(var):
    """A new source Var of the same kind holding a copy of ``var``'s value."""
    from ..express import const

    kind = var.expr.kind if var.expr.op is None else "const"
    new = const(np.array(var.read()), data_format=var.data_format)
    if kind == "trainable":
        new.fix_as_trainable()
    elif kind == "placeholder":
        new.fix_as_placeholder()
    new.name = var.name
    return new


def _set_value(var, array):
    """Write ``array`` into a parameter; a computed parameter (a batch norm's running
    statistics after a training step) becomes a constant first."""
    if var.expr.op is not None:
        var.fix_as_const()
    var.write(array)
