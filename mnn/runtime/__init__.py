"""mnn.runtime: running loaded models — the compiled plan, the loaded Module, and the
legacy Interpreter/Session/Tensor API.

The express graph is the IR: the .mnn reader turns a file into Vars, and this package
compiles the Vars between inputs and outputs into a :class:`~mnn.runtime.plan.Plan`.
"""
from .plan import Plan

__all__ = ["Plan"]
