"""attn_opt: run the attn-opt compiler from Python.

Nothing here needs a GPU or MLIR Python bindings: the package shells out to
the `attn-opt` binary built by the project (found through $ATTN_OPT, then
../build/bin next to a source checkout, then $PATH).
"""
from .compiler import CompileError, Remark, find_attn_opt, fuse, lower_cpu

__all__ = ["CompileError", "Remark", "find_attn_opt", "fuse", "lower_cpu"]
