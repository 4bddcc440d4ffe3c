"""attn_opt: run the attn-opt compiler from Python.

Nothing here needs a GPU or MLIR Python bindings: the package shells out to
the `attn-opt` binary built by the project (found through $ATTN_OPT, then
../build/bin next to a source checkout, then $PATH), and to `attn-bundle`
($ATTN_BUNDLE, likewise) for kernel bundles. Loading and launching a bundle
(`load`, also named `load_bundle`) needs torch and a CUDA GPU, imported only
when called; `compile` (also `compile_bundle`) runs attn-bundle.
`dense_attention` (one dynamic-shape bundle for every length),
`document_attention` (packed documents by segment ids),
`varlen_attention` and `decode_attention` (attn_opt.ops) write, compile,
cache and launch attention on torch tensors (dense; packed sequences; paged
KV decode).
"""
from . import bundle
from .bundle import (BundleError, CudaError, Kernel, Manifest, find_attn_bundle,
                     load_all, read_manifest, read_set)
from .bundle import compile
from .bundle import compile as compile_bundle
from .bundle import load
from .bundle import load as load_bundle
from .compiler import CompileError, Remark, find_attn_opt, fuse, lower_cpu
from . import ops
from .ops import decode_attention, dense_attention, document_attention, varlen_attention

# Kept equal to python/pyproject.toml's version (test_readme.py checks).
__version__ = "0.1.0"

__all__ = ["BundleError", "CompileError", "CudaError", "Kernel", "Manifest",
           "decode_attention", "dense_attention", "document_attention", "ops",
           "varlen_attention",
           "Remark", "__version__", "bundle", "compile", "compile_bundle",
           "find_attn_bundle", "find_attn_opt", "fuse", "load", "load_all",
           "load_bundle", "lower_cpu", "read_manifest", "read_set"]
