"""Kernel bundles: compile attention with `attn-bundle`, load and launch it.

A bundle is a directory written by `attn-bundle IN.mlir -o DIR`:

  DIR/manifest.json   {"format": "attn-opt-bundle/2", "kernel", "chip", "ptx",
                       ["cubin"], "args": [{"name", "dtype", "shape", ["map"]}],
                       "grid", "block", "shared_bytes", "attention": {...},
                       "sha256": {file name: hex}, "binding_sha256": hex}
  DIR/kernel.ptx      PTX text
  DIR/kernel.cubin    (optional) the same kernel assembled for `chip`
  DIR/<name>.bin      the data of each argument that is a constant of the
                      program (its arg has "constant": "<name>.bin";
                      CONSTANT_ARGS), which the loader passes itself
  DIR/v1, DIR/v2 ..   launch variants, where the manifest lists them in
                      "variants": [{"dir", "when", "binding_sha256",
                      "kernel_choice"}]: whole bundles of the same
                      computation with other launch shapes, each bound to
                      this manifest by its binding_sha256; a launch takes
                      the first whose rule ("when", VARIANT_RULES) holds at
                      its sizes (Kernel.variant_for, variant_at), else this
                      bundle's kernel

Every kernel parameter is one raw device pointer to a contiguous row-major
tensor of exactly the manifest's shape and dtype, in `args` order; `out` is
written. A dynamic-shape bundle has axes of size -1 (batch dims, m, n):
their sizes are the int64 parameters `size_<dim>` (map "size", shape []),
which the loader reads from the tensors at each call (they must agree, and
be below 2^31); grid x / y are -1 and follow from the sizes (launch rule
`grid`), and with attention.splits -1 (decode) grid z is the split count
chosen at launch (`split_count`, the pass's rule with the device's
multiprocessor count) and the workspace is sized for it (`specialize`
gives the manifest at given sizes). Launching needs the CUDA driver and
torch, nothing from MLIR:

    kernel = attn_opt.load("DIR")             # torch + CUDA imported here
    out = kernel(q, k, v)                     # [mask], [sink] when the manifest has them

Which tensor dimension is which attention dimension ("layout") is read from
`attention.layout[name]`, else from the argument's `map`, else assumed
canonical: q [b..., m, d], k [b..., n, d], v [b..., n, e], out [b..., m, e],
mask [b..., m, n], sink [b..., m]. Dimension names are "b0".."b{r-1}"
(batch-like dims, r = batch_dims), "m", "n", "d", "e"; a layout entry is a
list of such names, a list of iteration-space positions (0..r+3), or an
affine map string "(d0, .., d{r+3}) -> (...)" over (b..., m, n, d, e).

The loader treats a bundle as hostile input: every failure is a
BundleError naming the field, never another exception. The manifest is
read with a size cap, must be UTF-8 JSON without NaN/Infinity, duplicate
keys, nesting deeper than MAX_DEPTH or integers outside int64; names are
bounded and plain; the launch must fit CUDA's limits and match the
attention it describes (grid = [ceil(m / tile_q), batch product, 1]);
`sha256` must match every file read (a mixed or modified bundle is
refused) and `binding_sha256` the manifest itself (see `binding_text`).
`attention.mask_value` is a finite number or the string "-inf" / "inf".
`attention.score_mod` (absent: none) is the op's score modification region
as a straight-line program (see SCORE_MOD_OPS, parse_score_mod; the
reference evaluates it):

    {"num_args": 1 + r + 2,       ids 0..: the f32 score, b_0..b_{r-1}, m, n
     "ops": [{"op": "arith.divf", "type": "f32", "operands": [0, 5]}, ...],
     "result": id of the yielded f32}

op i defines id num_args + i; its operands are earlier ids; "type" is one
of f32, i64, i32, index, i1. arith.constant has a "value" (a number, "inf",
"-inf"; i1: 0/1), arith.cmpf/cmpi a "predicate" (MLIR's names), attn.table
(a constant table) a "shape" and the flat row-major "values", read at one
integer operand per dimension. At most MAX_SCORE_MOD_OPS ops and
MAX_TABLE_VALUES values a table; operand and result types are checked.

Nothing in this module imports torch or touches CUDA until `load()`.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import math
import os
import re
import stat
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from .compiler import CompileError, find_tool

FORMAT = "attn-opt-bundle/2"
ARG_NAMES = ("q", "k", "v", "mask", "sink", "out", "lse")
# score_mod operands that are runtime tensors: kernel arguments mod0, mod1, ..
_MOD_ARG = re.compile(r"mod[0-9]{1,2}")
# Runtime per-tensor scales (FP8 dequantization scales passed as tensors):
# scale0, scale1, .. (map "scale", a float dtype, any static shape); the
# kernel reads the elements attention.scale_factors / value_scale_factors
# name.
_SCALE_ARG = re.compile(r"scale[0-9]{1,2}")
SCALE_DTYPES = ("float32", "float16", "bfloat16")
# Arguments the kernel writes (allocated by Kernel when not given).
OUTPUTS = ("out", "lse")
# Arguments that may be constants of the program (a mask or bias buffer, a
# sink vector, a fixed block table, lengths or packing; and score_mod
# tables too large to sit in the kernel, mod<i>): the bundle carries
# their data in "<name>.bin" (the arg's "constant"), row-major,
# little-endian, a bool as one byte; the loader passes it, the caller does
# not.
CONSTANT_ARGS = ("mask", "sink", "block_table", "kv_lens", "cu_seqlens_q",
                 "cu_seqlens_k")
MAX_CONSTANT_BYTES = 1 << 32
# Split-KV's workspace (grid z = attention.splits > 1): per split the
# normalized partial output and its row statistics (max m, sum l), and a
# counter per query tile that the kernel leaves at 0. Allocated by Kernel
# once, never passed by callers; no attention dims (map "workspace").
# Shapes: o_part [splits, batch, m, e], ml_part [splits, batch, m, 2],
# locks [batch, grid x] (batch: the product of the batch dims).
WORKSPACE = {"o_part": "float32", "ml_part": "float32", "locks": "int32",
             "tile_counter": "int32"}
# TMA tensor maps (map "tensormap"): 128 bytes (int64[16]) in device memory
# that the loader encodes (cuTensorMapEncodeTiled) for the operand the entry
# names ("tensor") with its "box" (elements per operand axis; 128 bytes
# along the last, contiguous one; 128-byte swizzle), per bound address;
# never passed by callers.
TENSOR_MAPS = {"tmap_q": "q", "tmap_k": "k", "tmap_v": "v",
               "tmap_mask": "mask"}
# int32 inputs the caller passes, with their rank: the block table of paged
# K/V [b0, pages per sequence], per-sequence key counts [b], and varlen's
# cumulative sequence lengths [seqs + 1] of the packed queries and keys.
INDEX_ARGS = {"block_table": 2, "kv_lens": 1, "cu_seqlens_q": 1,
              "cu_seqlens_k": 1}
# Dynamic shapes: a tensor axis of size -1 in the manifest takes its size
# at each launch; the size is the int64 kernel parameter size_<dim> (map
# "size", shape []) for the batch dims, m and n. Grid x (with m dynamic)
# and y (with a batch dim dynamic) are -1: the launch rule computes them.
_SIZE_ARG = re.compile(r"size_(b[0-9]{1,2}|m|n)")
DTYPES = ("float16", "bfloat16", "float32", "bool", "float8_e4m3fn",
          "float8_e5m2")
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "bool": 1, "int32": 4,
            "int64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1}
TENSOR_CORE_DTYPES = ("float16", "bfloat16")
# FP8 attention: q, k and v of one 8-bit type (torch's names), out 16-bit.
FP8_DTYPES = ("float8_e4m3fn", "float8_e5m2")

# What a bundle may hold at all (it is read as hostile input).
MAX_MANIFEST_BYTES = 1 << 20       # manifest.json
MAX_IMAGE_BYTES = 64 << 20         # kernel.ptx / kernel.cubin
MAX_DEPTH = 32                     # JSON nesting
MAX_NAME = 255                     # kernel, file names
MAX_STRING = 1 << 16               # any other string
MAX_MAP = 1024                     # an argument's map / a layout string
MAX_BATCH_DIMS = 16
INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63
GRID_MAX = (2 ** 31 - 1, 65535, 65535)   # CUDA's grid limits
BLOCK_MAX = (1024, 1024, 64)             # CUDA's block limits
BLOCK_THREADS_MAX = 1024
# Dynamic shared memory per block (the opt-in maximum) by chip; other chips
# (or none given): the largest, sm_90's.
SHARED_MAX = {"sm_80": 166912, "sm_90a": 232448}
SHARED_MAX_DEFAULT = 232448

_KERNEL_NAME = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*")   # a PTX identifier
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")  # no "/", no leading "."
_CHIP = re.compile(r"[A-Za-z0-9_]{0,32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_PRINTABLE = re.compile(r"[ -~]*")                        # printable ASCII


class BundleError(ValueError):
    """A malformed bundle, or arguments that do not match its manifest."""


class CudaError(RuntimeError):
    """A CUDA driver call returned an error."""


def _show(x: Any, limit: int = 80) -> str:
    """repr(x), shortened: hostile values stay out of messages."""
    r = repr(x)
    return r if len(r) <= limit else f"{r[:limit - 20]}... ({len(r)} chars)"


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgSpec:
    name: str
    dtype: str
    shape: Tuple[int, ...]
    dims: Tuple[str, ...]  # attention dimension of each axis, e.g. ("b0", "m", "d")
    box: Tuple[int, ...] = ()  # a tensor map's box (TENSOR_MAPS)
    constant: Optional[str] = None  # CONSTANT_ARGS: the file with its data

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * ITEMSIZE[self.dtype]


@dataclass(frozen=True)
class AttentionSpec:
    scale: float
    causal: bool
    window: Optional[int]  # None: no sliding window
    mask_value: float      # score of keys masked by causal/window/bool mask (-inf, inf or finite)
    batch_dims: int
    # Which kernel attn-bundle chose, its launch shape and why not a faster
    # one (informational; "" in bundles that do not say).
    kernel_choice: str = ""
    tile_q: Optional[int] = None  # query rows per block (None: not given)
    tensor_cores: bool = False
    # Key position of query 0 for causal/window (bottom-right causal: N - M).
    query_offset: int = 0
    # The score modification region (None: none), see ScoreMod.
    score_mod: Optional["ScoreMod"] = None
    # Paged K/V (attention.paged): (page_size, pages); k and v are caches
    # whose b0 axis counts pages and whose n axis has page_size slots, read
    # through the int32 `block_table` [b0, pages per sequence]; None: dense.
    paged: Optional[Tuple[int, int]] = None
    # Per-sequence key counts (attention.kv_lens): the batch dim the int32
    # `kv_lens` [size of that dim] is indexed by; keys n >= kv_lens[b] are
    # masked (-inf). None: no such argument.
    kv_lens_dim: Optional[int] = None
    # Varlen (attention.varlen): (seqs, causal, bottom_right). Sequence s
    # holds queries [cu_seqlens_q[s], cu_seqlens_q[s+1]) and keys
    # [cu_seqlens_k[s], cu_seqlens_k[s+1]) of the packed m and n axes; a
    # query sees only its sequence's keys (causal: top-left or bottom-right
    # aligned within the sequence). None: not varlen.
    varlen: Optional[Tuple[int, bool, bool]] = None
    # Keys per tile of the key loop (attention.tile_kv; None: not given).
    tile_kv: Optional[int] = None
    # Row warps per block and warps sharing each row tile's keys
    # (attention.warps, attention.key_warps; the mma.sync kernel's): a
    # split count chosen at launch for blocks of four row warps with two key
    # warps aims at one wave of blocks (split_count's one_wave).
    warps: Optional[int] = None
    key_warps: int = 1
    # GQA packing (attention.pack_dim): the batch dim whose members share a
    # block's rows; None: none.
    pack_dim: Optional[int] = None
    # f32 on tensor cores (attention.f32_precision): "3xtf32" (each product
    # as three TF32 products of split halves, f32-accurate) or "tf32" (one,
    # 10-bit mantissas); None: not f32 on tensor cores.
    f32_precision: Optional[str] = None
    # Persistent launch (attention.persistent): grid [P, 1, 1] whose blocks
    # loop over the ceil(m / tile_q) x batch query tiles, taking each next
    # one from the int32 workspace `tile_counter` [2] (left at 0); 0: one
    # block per tile.
    persistent: int = 0
    # FP8 (attention.value_scale): the output is multiplied by V's
    # dequantization scale (Q's and K's are part of `scale`); 1: none.
    value_scale: float = 1.0
    # Runtime scales (attention.scale_factors / value_scale_factors): each
    # (argument, index, divide) multiplies `scale` (or `value_scale`) by the
    # element at `index` of that scale<i> argument, or divides by it.
    scale_factors: Tuple[Tuple[str, Tuple[int, ...], bool], ...] = ()
    value_scale_factors: Tuple[Tuple[str, Tuple[int, ...], bool], ...] = ()
    # attention.index_limit: a dynamic m and n must be below it (the
    # score_mod's index arithmetic is exact there); None: no limit.
    index_limit: Optional[int] = None
    # attention.key_span: the most keys a query tile's segment ranges leave
    # (chunked decode): the split rule's span at launch; None: n.
    key_span: Optional[int] = None


# attention.score_mod: the op's score modification region as a straight-line
# program. Ids 0..num_args-1 are the block arguments (the f32 score, one
# index per batch dim, m, n); op i defines id num_args + i.
SCORE_MOD_TYPES = ("f32", "i64", "i32", "index", "i1")
MAX_SCORE_MOD_OPS = 4096
MAX_TABLE_VALUES = 65536
CMPF_PREDICATES = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                   "uge", "ult", "ule", "une", "uno", "true", "false")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
# Each op's signature class (checked by _score_mod_types).
SCORE_MOD_OPS = {
    "arith.constant": "const", "attn.table": "table", "attn.arg": "arg",
    **{f"arith.{x}": "fbin" for x in ("addf", "subf", "mulf", "divf", "maximumf",
                                      "minimumf", "maxnumf", "minnumf")},
    "math.powf": "fbin",
    **{x: "funary" for x in ("arith.negf", "arith.extf", "arith.truncf", "math.tanh",
                             "math.exp", "math.exp2", "math.log", "math.log2",
                             "math.sqrt", "math.rsqrt", "math.absf")},
    **{f"arith.{x}": "ibin" for x in ("addi", "subi", "muli", "andi", "ori", "xori",
                                      "divsi", "remsi", "floordivsi", "ceildivsi",
                                      "shrsi", "shli", "maxsi", "minsi")},
    "math.absi": "iunary",
    "arith.cmpf": "cmpf", "arith.cmpi": "cmpi", "arith.select": "select",
    "arith.sitofp": "itofp", "arith.uitofp": "itofp",
    "arith.index_cast": "index_cast", "arith.index_castui": "index_cast",
    "arith.extsi": "ext", "arith.extui": "ext", "arith.trunci": "trunc",
}
INT_WIDTH = {"i1": 1, "i32": 32, "i64": 64, "index": 64}
# |x| from which an f64 rounds to infinity in f32 (FLT_MAX + half an ulp).
_F32_OVERFLOW = (2 - 2 ** -24) * 2.0 ** 127


@dataclass(frozen=True)
class ScoreModOp:
    op: str                      # a key of SCORE_MOD_OPS
    type: str                    # result type, one of SCORE_MOD_TYPES
    operands: Tuple[int, ...] = ()
    value: Union[float, int, bool, None] = None  # arith.constant (i1: bool)
    predicate: str = ""          # arith.cmpf / arith.cmpi
    shape: Tuple[int, ...] = ()  # attn.table
    values: Tuple[Union[float, int], ...] = ()   # attn.table, flat row-major
    name: str = ""               # attn.arg: the kernel argument it reads


@dataclass(frozen=True)
class ScoreMod:
    num_args: int                # 1 + batch_dims + 2
    ops: Tuple[ScoreModOp, ...]
    result: int                  # id of the yielded f32

    @property
    def types(self) -> Tuple[str, ...]:
        """The type of every value id."""
        return (("f32",) + ("index",) * (self.num_args - 1)
                + tuple(o.type for o in self.ops))


@dataclass(frozen=True)
class Manifest:
    kernel: str
    chip: str
    ptx: Optional[str]
    cubin: Optional[str]
    args: Tuple[ArgSpec, ...]
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared_bytes: int
    attention: AttentionSpec
    path: Optional[Path] = None  # the manifest.json it was read from
    sha256: Tuple[Tuple[str, str], ...] = ()  # (file name, hex) of every file named
    binding_sha256: str = ""
    # Launch variants: (dir, rule, binding_sha256, kernel_choice), each a
    # whole bundle in DIR/<dir> that a launch takes where its rule holds.
    variants: Tuple[Tuple[str, str, str, str], ...] = ()

    def arg(self, name: str) -> Optional[ArgSpec]:
        for a in self.args:
            if a.name == name:
                return a
        return None

    def file_sha256(self, name: str) -> Optional[str]:
        """The sha256 (hex) the manifest records for file `name`."""
        return dict(self.sha256).get(name)

    @functools.cached_property  # the dataclass is frozen: computed once
    def inputs(self) -> Tuple[str, ...]:
        """Names of the arguments the caller passes: in parameter order, the
        runtime scales (scale0, scale1, ..) last."""
        names = [a.name for a in self.args
                 if a.name not in OUTPUTS and a.name not in WORKSPACE
                 and a.constant is None
                 and a.name not in TENSOR_MAPS
                 and not _SIZE_ARG.fullmatch(a.name)]
        scales = sorted((n for n in names if _SCALE_ARG.fullmatch(n)),
                        key=lambda n: int(n[len("scale"):]))
        return tuple([n for n in names if not _SCALE_ARG.fullmatch(n)] + scales)

    @functools.cached_property  # the dataclass is frozen: computed once
    def dynamic_dims(self) -> Tuple[str, ...]:
        """The attention dims whose sizes are given at launch (b0.., m, n),
        in parameter order; empty for a static bundle."""
        return tuple(a.name[len("size_"):] for a in self.args
                     if _SIZE_ARG.fullmatch(a.name))

    @property
    def splits(self) -> int:
        """Split-KV key ranges per query tile (grid z); 1: none; -1: chosen
        at launch (split_count)."""
        return self.grid[2]

    @property
    def batch_names(self) -> Tuple[str, ...]:
        return tuple(f"b{i}" for i in range(self.attention.batch_dims))

    def sizes(self) -> Dict[str, int]:
        """Size of every attention dimension (b0.., m, n, d, e)."""
        return _sizes(self.args, self.batch_names, self._where(),
                      self.attention.paged)

    def _where(self) -> str:
        return self._where_text

    @functools.cached_property
    def _where_text(self) -> str:
        return f"bundle {self.kernel!r}" + (f" ({self.path})" if self.path else "")


def _kind(name: str) -> str:
    """The argument kind: its name, or "mod" for a score_mod tensor."""
    return "mod" if _MOD_ARG.fullmatch(name) else name


def _canonical_dims(name: str, batch: Sequence[str]) -> Tuple[str, ...]:
    tail = {"q": ("m", "d"), "k": ("n", "d"), "v": ("n", "e"),
            "out": ("m", "e"), "mask": ("m", "n"), "sink": ("m",),
            "lse": ("m",), "mod": ("m", "n")}[_kind(name)]
    return tuple(batch) + tail


# Which dimensions each operand may use, and which it must use (batch dims
# aside: q and out need all of them, the others may omit some).
_ALLOWED = {"q": {"m", "d"}, "k": {"n", "d"}, "v": {"n", "e"},
            "out": {"m", "e"}, "mask": {"m", "n"}, "sink": {"m"}, "lse": {"m"},
            "mod": {"m", "n"}}
_REQUIRED = {"q": {"m", "d"}, "k": {"n", "d"}, "v": {"n", "e"},
             "out": {"m", "e"}, "mask": set(), "sink": set(), "lse": {"m"},
             "mod": set()}

_MAP = re.compile(r"^\s*(?:affine_map\s*<)?\s*\(([^)]*)\)\s*->\s*\(([^)]*)\)\s*>?\s*$")


def _dim_names(r: int) -> List[str]:
    return [f"b{i}" for i in range(r)] + ["m", "n", "d", "e"]


def parse_layout(entry: Any, r: int, where: str) -> Tuple[str, ...]:
    """One operand's layout as attention dimension names (see module doc)."""
    names = _dim_names(r)
    if isinstance(entry, str):
        if len(entry) > MAX_MAP:
            raise BundleError(f"{where}: layout {_show(entry)} is longer than "
                              f"{MAX_MAP} characters")
        m = _MAP.match(entry)
        if not m:
            raise BundleError(f"{where}: cannot read layout {_show(entry)} "
                              "(want '(d0, ..) -> (..)' or a list)")
        domain = [x.strip() for x in m.group(1).split(",") if x.strip()]
        results = [x.strip() for x in m.group(2).split(",") if x.strip()]
        if len(domain) != r + 4:
            raise BundleError(f"{where}: map {_show(entry)} has {len(domain)} "
                              f"dimensions, expected {r + 4} (batch_dims={r})")
        out = []
        for x in results:
            if x not in domain:
                raise BundleError(f"{where}: map {_show(entry)}: result "
                                  f"{_show(x)} is not a plain dimension")
            out.append(names[domain.index(x)])
        return tuple(out)
    if isinstance(entry, (list, tuple)):
        if len(entry) > r + 4:
            raise BundleError(f"{where}: layout {_show(entry)} has more than "
                              f"{r + 4} entries")
        out = []
        for x in entry:
            if isinstance(x, bool):
                raise BundleError(f"{where}: bad layout entry {x!r}")
            if isinstance(x, int):
                if not 0 <= x < r + 4:
                    raise BundleError(f"{where}: layout position {x} out of "
                                      f"range 0..{r + 3}")
                out.append(names[x])
            elif isinstance(x, str) and x in names:
                out.append(x)
            elif isinstance(x, str) and x == "b" and r == 1:
                out.append("b0")
            else:
                raise BundleError(f"{where}: bad layout entry {_show(x)} (want "
                                  f"one of {names} or a position)")
        return tuple(out)
    raise BundleError(f"{where}: bad layout {_show(entry)}")


def _check_dims(name: str, dims: Tuple[str, ...], rank: int,
                batch: Sequence[str], where: str) -> None:
    if len(dims) != rank:
        raise BundleError(f"{where}: '{name}' has rank {rank} but layout "
                          f"{list(dims)}")
    if len(set(dims)) != len(dims):
        raise BundleError(f"{where}: '{name}' layout {list(dims)} repeats a "
                          "dimension")
    allowed = _ALLOWED[_kind(name)] | set(batch)
    bad = [x for x in dims if x not in allowed]
    if bad:
        raise BundleError(f"{where}: '{name}' layout {list(dims)} uses {bad}, "
                          f"allowed: {sorted(allowed)}")
    need = set(_REQUIRED[_kind(name)]) | (set(batch) if name in ("q", "out", "lse")
                                   else set())
    missing = sorted(need - set(dims))
    if missing:
        raise BundleError(f"{where}: '{name}' layout {list(dims)} lacks "
                          f"{missing}")


def _sizes(args: Sequence[ArgSpec], batch: Sequence[str],
           where: str, paged: Optional[Tuple[int, int]] = None) -> Dict[str, int]:
    sizes: Dict[str, int] = {}
    if paged:  # a cache's page and slot axes are not b0 and n
        args = [ArgSpec(a.name, a.dtype, *zip(*[(n, d) for n, d in zip(a.shape, a.dims)
                                                if d not in ("b0", "n")]))
                if a.name in ("k", "v") else a for a in args]
    # q/k/v/out fix the sizes; mask and sink may broadcast (size 1).
    broadcast = lambda a: a.name in ("mask", "sink") or _kind(a.name) == "mod"  # noqa: E731
    order = sorted((a for a in args if a.name not in WORKSPACE), key=broadcast)
    for a in order:
        for dim, size in zip(a.dims, a.shape):
            if dim not in sizes:
                sizes[dim] = size
            elif sizes[dim] != size and not (broadcast(a) and size == 1):
                raise BundleError(
                    f"{where}: '{a.name}' has {dim}={size} but other "
                    f"arguments have {dim}={sizes[dim]} (shape "
                    f"{list(a.shape)}, layout {list(a.dims)})")
    if paged:
        table = next((a for a in args if a.name == "block_table"), None)
        if table is not None:
            sizes["n"] = table.shape[1] * paged[0]
    for dim in list(batch) + ["m", "n", "d", "e"]:
        sizes.setdefault(dim, 1)
    return sizes


# --- JSON as hostile input ----------------------------------------------------

class _NotJson:
    """A value json.loads met that this format does not allow (NaN, 1e400,
    a 5000-digit integer); reported with its path by _check_tree."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<{self.why}>"


def _parse_int(s: str) -> Any:
    if len(s.lstrip("-")) > 40:  # int() of 5000 digits raises ValueError
        return _NotJson(f"an integer of {len(s.lstrip('-'))} digits is "
                        "outside the 64-bit range")
    return int(s)


def _parse_float(s: str) -> Any:
    if len(s) > 100:
        return _NotJson(f"a number written with {len(s)} characters")
    x = float(s)
    if not math.isfinite(x):
        return _NotJson(f"{s} is outside the double range")
    return x


def _parse_constant(s: str) -> Any:
    return _NotJson(f"{s} is not JSON")


def _object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj: Dict[str, Any] = {}
    for k, v in pairs:
        if k in obj:
            raise BundleError(f"duplicate key {_show(k)}")
        obj[k] = v
    return obj


# A string, or an unterminated one up to the end: always matches from a
# quote, without backtracking (linear on hostile text like '"\\"\\"\\"...').
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def _bracket_depth(text: str) -> int:
    """How deeply `text`'s arrays and objects nest (strings skipped), without
    the recursion json.loads would need for it."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_JSON_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _path_text(trail: Any) -> str:
    parts: List[str] = []
    while trail is not None:
        trail, key = trail
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif re.fullmatch(r"[A-Za-z0-9_]{1,40}", key):
            parts.append(f".{key}")
        else:
            parts.append(f"[{_show(key, 40)}]")
    return "".join(reversed(parts)).lstrip(".") or "the manifest"


def _check_tree(obj: Any, where: str) -> None:
    """Every value in `obj` is plain JSON this loader accepts: nesting at
    most MAX_DEPTH, integers in int64, finite numbers, bounded strings,
    string keys. Iterative (no recursion on hostile depth)."""
    stack: List[Tuple[Any, int, Any]] = [(obj, 0, None)]
    while stack:
        x, depth, trail = stack.pop()
        if depth > MAX_DEPTH:
            raise BundleError(f"{where}: {_path_text(trail)} is nested deeper "
                              f"than {MAX_DEPTH} levels")
        if x is None or isinstance(x, bool):
            continue
        if isinstance(x, _NotJson):
            raise BundleError(f"{where}: {_path_text(trail)}: {x.why}")
        if isinstance(x, int):
            if not INT64_MIN <= x <= INT64_MAX:
                raise BundleError(f"{where}: {_path_text(trail)}: {_show(x, 40)} "
                                  "is outside the 64-bit integer range")
        elif isinstance(x, float):
            if not math.isfinite(x):
                raise BundleError(f"{where}: {_path_text(trail)}: {x!r} is not "
                                  "a finite number")
        elif isinstance(x, str):
            if len(x) > MAX_STRING:
                raise BundleError(f"{where}: {_path_text(trail)}: a string of "
                                  f"{len(x)} characters (at most {MAX_STRING})")
        elif isinstance(x, dict):
            for k, v in x.items():
                if not isinstance(k, str):
                    raise BundleError(f"{where}: {_path_text(trail)}: key "
                                      f"{_show(k, 40)} is not a string")
                stack.append((v, depth + 1, (trail, k)))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                stack.append((v, depth + 1, (trail, i)))
        else:
            raise BundleError(f"{where}: {_path_text(trail)}: "
                              f"{type(x).__name__} is not a JSON value")


def _load_json(data: bytes, where: str) -> Any:
    """Decodes manifest bytes; every failure is a BundleError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BundleError(f"{where}: not UTF-8 text (byte {e.start}: "
                          f"{e.reason})") from None
    if _bracket_depth(text) > MAX_DEPTH + 1:
        raise BundleError(f"{where}: not valid JSON: nested deeper than "
                          f"{MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_parse_constant,
                          object_pairs_hook=_object)
    except RecursionError:
        raise BundleError(f"{where}: not valid JSON: nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, duplicate keys
        raise BundleError(f"{where}: not valid JSON: {e}") from None


# --- fields -------------------------------------------------------------------

def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(x: Any, what: str, where: str) -> float:
    """A finite JSON number (not a string, not a bool, not null)."""
    if _is_int(x) or isinstance(x, float):
        v = float(x)
        if math.isfinite(v):
            return v
    raise BundleError(f"{where}: {what} must be a finite number, got {_show(x)}")


def _mask_value(x: Any, where: str) -> float:
    if isinstance(x, str) and x in ("-inf", "inf"):
        return float(x)
    if (_is_int(x) or isinstance(x, float)) and math.isfinite(float(x)):
        return float(x)
    raise BundleError(f'{where}: attention.mask_value must be a finite number, '
                      f'"-inf" or "inf", got {_show(x)}')


def _int_list(x: Any, n: Optional[int], what: str, where: str,
              positive: bool) -> Tuple[int, ...]:
    if not isinstance(x, (list, tuple)) or (n is not None and len(x) != n) or \
            not all(_is_int(v) for v in x):
        want = f"{n} integers" if n is not None else "a list of integers"
        raise BundleError(f"{where}: {what} must be {want}, got {_show(x)}")
    lo = 1 if positive else 0
    if any(v < lo for v in x):
        raise BundleError(f"{where}: {what} must be >= {lo}, got {_show(list(x))}")
    return tuple(x)


def _within(values: Sequence[int], limits: Sequence[int], what: str,
            where: str) -> None:
    for i, (v, hi) in enumerate(zip(values, limits)):
        if v > hi:
            raise BundleError(f"{where}: {what} {list(values)}: {'xyz'[i]} = "
                              f"{v} is above CUDA's limit {hi}")


def _file_name(val: Any, key: str, where: str) -> Optional[str]:
    if val is None:
        return None
    if (not isinstance(val, str) or not val or len(val) > MAX_NAME
            or not _FILE_NAME.fullmatch(val) or val in (".", "..")
            or val == "manifest.json"):
        raise BundleError(f"{where}: {key!r} must be a file name inside the "
                          f"bundle (at most {MAX_NAME} characters of A-Z a-z "
                          f"0-9 _ . + -, no '/'), got {_show(val)}")
    return val


# --- attention.score_mod ----------------------------------------------------------

def _int_in(x: Any, t: str) -> Optional[int]:
    """x as a value of integer type t (i32 written signed or unsigned, i1 as
    0/1/-1 or true/false), else None."""
    if t == "i1":
        if isinstance(x, bool):
            return int(x)
        return (x != 0) if _is_int(x) and x in (0, 1, -1) else None
    if not _is_int(x):
        return None
    if t == "i32":
        if not -2 ** 31 <= x < 2 ** 32:
            return None
        return x - 2 ** 32 if x >= 2 ** 31 else x
    return x  # i64 / index: _check_tree keeps integers in int64


def _sm_scalar(x: Any, t: str, what: str, where: str) -> Union[float, int, bool]:
    """A constant (or table entry) of type t."""
    if t == "f32":
        if isinstance(x, str) and x in ("inf", "-inf"):
            return float(x)
        if (_is_int(x) or isinstance(x, float)) and abs(float(x)) < _F32_OVERFLOW:
            return float(x)
        raise BundleError(f'{where}: {what} must be an f32 number, "inf" or "-inf", '
                          f"got {_show(x)}")
    v = _int_in(x, t)
    if v is None:
        raise BundleError(f"{where}: {what} must be an integer of type {t}, got "
                          f"{_show(x)}")
    return bool(v) if t == "i1" else v


# Operands each signature class takes (attn.table: one per dimension).
_SCORE_MOD_ARITY = {"const": 0, "fbin": 2, "funary": 1, "ibin": 2, "iunary": 1, "cmpf": 2,
                    "cmpi": 2, "select": 3, "itofp": 1, "index_cast": 1, "ext": 1,
                    "trunc": 1}


def _score_mod_types(kind: str, ts: List[str], t: str) -> Optional[str]:
    """Why operand types `ts` and result type `t` do not fit an op of
    signature class `kind`, or None when they do."""
    ints = ("i1", "i32", "i64")
    if kind in ("fbin", "funary"):
        ok = all(x == "f32" for x in ts) and t == "f32"
    elif kind == "ibin":
        ok = t in INT_WIDTH and ts == [t, t]
    elif kind == "iunary":
        ok = t in INT_WIDTH and ts == [t]
    elif kind in ("cmpf", "cmpi"):
        ok = t == "i1" and ts[0] == ts[1] and (ts[0] == "f32") == (kind == "cmpf")
    elif kind == "select":
        ok = ts[0] == "i1" and ts[1] == ts[2] == t
    elif kind == "itofp":
        ok = ts[0] in ints and t == "f32"
    elif kind == "index_cast":
        ok = {ts[0], t} in ({"index", "i1"}, {"index", "i32"}, {"index", "i64"})
    elif kind in ("ext", "trunc"):
        ok = ts[0] in ints and t in ints and (
            INT_WIDTH[ts[0]] < INT_WIDTH[t] if kind == "ext" else
            INT_WIDTH[ts[0]] > INT_WIDTH[t])
    elif kind in ("table", "arg"):
        ok = t != "i1" and all(x in ("i32", "i64", "index") for x in ts)
    else:  # const
        ok = True
    return None if ok else f"does not take ({', '.join(ts)}) -> {t}"


def parse_score_mod(x: Any, batch_dims: int, where: str = "manifest") -> ScoreMod:
    """Validates attention.score_mod (a decoded JSON object) as hostile
    input: every failure is a BundleError naming the field."""
    f = "attention.score_mod"
    if not isinstance(x, dict):
        raise BundleError(f"{where}: {f} must be an object, got {_show(x)}")
    nargs = x.get("num_args")
    if not _is_int(nargs) or nargs != batch_dims + 3:
        raise BundleError(f"{where}: {f}.num_args must be {batch_dims + 3} (the "
                          f"score, {batch_dims} batch indices, m, n), got "
                          f"{_show(nargs)}")
    raw = x.get("ops")
    if not isinstance(raw, list) or len(raw) > MAX_SCORE_MOD_OPS:
        got = f"{len(raw)} ops" if isinstance(raw, list) else _show(raw)
        raise BundleError(f"{where}: {f}.ops must be a list of at most "
                          f"{MAX_SCORE_MOD_OPS} ops, got {got}")
    types = ["f32"] + ["index"] * (nargs - 1)
    ops: List[ScoreModOp] = []
    for i, o in enumerate(raw):
        at = f"{f}.ops[{i}]"
        if not isinstance(o, dict):
            raise BundleError(f"{where}: {at} must be an object, got {_show(o)}")
        name, t = o.get("op"), o.get("type")
        if not isinstance(name, str) or name not in SCORE_MOD_OPS:
            raise BundleError(f"{where}: {at}.op: {_show(name)} is not an op a "
                              "score_mod may hold")
        if not isinstance(t, str) or t not in SCORE_MOD_TYPES:
            raise BundleError(f"{where}: {at}.type must be one of "
                              f"{list(SCORE_MOD_TYPES)}, got {_show(t)}")
        operands = o.get("operands", [])
        if not isinstance(operands, list) or len(operands) > MAX_BATCH_DIMS + 2 or \
                not all(_is_int(v) for v in operands):
            raise BundleError(f"{where}: {at}.operands must be a list of value ids, "
                              f"got {_show(operands)}")
        for j, v in enumerate(operands):
            if not 0 <= v < len(types):
                raise BundleError(f"{where}: {at}.operands[{j}]: {v} is not an "
                                  f"earlier value (ids 0..{len(types) - 1} are "
                                  f"defined before {name})")
        kind = SCORE_MOD_OPS[name]
        want = _SCORE_MOD_ARITY.get(kind)
        if want is not None and len(operands) != want:
            raise BundleError(f"{where}: {at}.operands: {name} takes {want} "
                              f"operand(s), got {len(operands)}")
        fields: Dict[str, Any] = {}
        if kind == "const":
            if "value" not in o:
                raise BundleError(f"{where}: {at} lacks 'value'")
            fields["value"] = _sm_scalar(o["value"], t, f"{at}.value", where)
        elif kind in ("cmpf", "cmpi"):
            preds = CMPF_PREDICATES if kind == "cmpf" else CMPI_PREDICATES
            p = o.get("predicate")
            if not isinstance(p, str) or p not in preds:
                raise BundleError(f"{where}: {at}.predicate must be one of "
                                  f"{list(preds)}, got {_show(p)}")
            fields["predicate"] = p
        elif kind == "table":
            shape = o.get("shape")
            if not isinstance(shape, list) or not 1 <= len(shape) <= MAX_BATCH_DIMS + 2 \
                    or not all(_is_int(d) and 1 <= d <= MAX_TABLE_VALUES for d in shape):
                raise BundleError(f"{where}: {at}.shape must be a list of 1 to "
                                  f"{MAX_BATCH_DIMS + 2} positive sizes, got "
                                  f"{_show(shape)}")
            size = 1
            for d in shape:
                size *= d
                if size > MAX_TABLE_VALUES:
                    raise BundleError(f"{where}: {at}.shape {_show(shape)} holds "
                                      f"more than {MAX_TABLE_VALUES} values")
            vals = o.get("values")
            if not isinstance(vals, list) or len(vals) != size:
                got = len(vals) if isinstance(vals, list) else _show(vals)
                raise BundleError(f"{where}: {at}.values must be a list of {size} "
                                  f"numbers (shape {shape}), got {got}")
            if len(operands) != len(shape):
                raise BundleError(f"{where}: {at}.operands must hold one index per "
                                  f"table dimension ({len(shape)}), got "
                                  f"{len(operands)}")
            fields["shape"] = tuple(shape)
            fields["values"] = tuple(_sm_scalar(v, t, f"{at}.values[{k}]", where)
                                     for k, v in enumerate(vals))
        elif kind == "arg":
            # A runtime tensor: the kernel argument `name`, read at the
            # operands' indices (one per dim of the argument, checked against
            # its shape by parse_manifest).
            an = o.get("name")
            if not isinstance(an, str) or not _MOD_ARG.fullmatch(an):
                raise BundleError(f"{where}: {at}.name must be 'mod<digits>', "
                                  f"got {_show(an)}")
            if not operands:
                raise BundleError(f"{where}: {at}.operands: attn.arg takes one "
                                  "index per dimension of its argument")
            fields["name"] = an
        why = _score_mod_types(kind, [types[v] for v in operands], t)
        if why:
            raise BundleError(f"{where}: {at}.type: {name} {why}")
        ops.append(ScoreModOp(name, t, tuple(operands), **fields))
        types.append(t)
    res = x.get("result")
    if not _is_int(res) or not 0 <= res < len(types) or types[res] != "f32":
        raise BundleError(f"{where}: {f}.result must be the id of an f32 value "
                          f"(0..{len(types) - 1}), got {_show(res)}"
                          + (f" of type {types[res]}" if _is_int(res)
                             and 0 <= res < len(types) else ""))
    return ScoreMod(nargs, tuple(ops), res)


def binding_text(manifest_obj: Mapping[str, Any], ptx_sha: Optional[str],
                 cubin_sha: Optional[str]) -> str:
    """The canonical text whose sha256 (hex) is the manifest's
    "binding_sha256".

    This is the contract with tools/attn-bundle/attn-bundle.cpp (its
    `bindingText` writes the same bytes; change both together). UTF-8, every
    line ending in "\\n":

        format <format>
        kernel <kernel>
        ptx <sha256 hex of the ptx file, or - when there is none>
        cubin <sha256 hex of the cubin file, or - when there is no cubin>
        grid <x> <y> <z>
        block <x> <y> <z>
        shared_bytes <n>
        arg <name> <dtype> [<d0>,<d1>,...] <map>[ constant <file> <sha256>]
        variant <dir> <when> <binding_sha256>

    one `arg` line per entry of "args", in manifest order, then one
    `variant` line per entry of "variants" (none when absent); the shape has no
    spaces ("[2,2,128,64]", "[]" for rank 0); <map> is the argument's "map"
    string verbatim, or "-" when it has none; a constant argument adds its
    file and that file's "sha256" entry ("-" when there is none). Integers
    in decimal;
    shared_bytes is 0 when absent. `manifest_obj` is the decoded
    manifest.json; a field of the wrong type raises BundleError.

    It binds the manifest to its kernel: a manifest edited after it was
    written (arguments swapped, dtypes or shapes changed, another grid) or
    one paired with another bundle's files no longer hashes to its
    binding_sha256.
    """
    def fail(what: str) -> BundleError:
        return BundleError(f"binding_text: {what}")

    def text(key: str, obj: Mapping[str, Any] = manifest_obj) -> str:
        v = obj.get(key)
        if not isinstance(v, str):
            raise fail(f"{key!r} must be a string, got {_show(v)}")
        return v

    def ints(key: str, sep: str, obj: Mapping[str, Any] = manifest_obj) -> str:
        v = obj.get(key)
        if not isinstance(v, (list, tuple)) or not all(_is_int(x) for x in v):
            raise fail(f"{key!r} must be a list of integers, got {_show(v)}")
        return sep.join(str(x) for x in v)

    if not isinstance(manifest_obj, Mapping):
        raise fail("the manifest is not an object")
    shared = manifest_obj.get("shared_bytes", 0)
    if not _is_int(shared):
        raise fail(f"'shared_bytes' must be an integer, got {_show(shared)}")
    lines = [f"format {text('format')}", f"kernel {text('kernel')}",
             f"ptx {ptx_sha or '-'}", f"cubin {cubin_sha or '-'}",
             f"grid {ints('grid', ' ')}", f"block {ints('block', ' ')}",
             f"shared_bytes {shared}"]
    args = manifest_obj.get("args")
    if not isinstance(args, (list, tuple)):
        raise fail(f"'args' must be a list, got {_show(args)}")
    for a in args:
        if not isinstance(a, Mapping):
            raise fail(f"an entry of 'args' is not an object: {_show(a)}")
        mp = a.get("map", "-")
        if not isinstance(mp, str):
            raise fail(f"'map' must be a string, got {_show(mp)}")
        line = (f"arg {text('name', a)} {text('dtype', a)} "
                f"[{ints('shape', ',', a)}] {mp}")
        if "constant" in a:
            shas = manifest_obj.get("sha256")
            sha = shas.get(text("constant", a)) if isinstance(shas, Mapping) else None
            line += f" constant {text('constant', a)} {sha if isinstance(sha, str) else '-'}"
        lines.append(line)
    variants = manifest_obj.get("variants", [])
    if not isinstance(variants, (list, tuple)):
        raise fail(f"'variants' must be a list, got {_show(variants)}")
    for x in variants:
        if not isinstance(x, Mapping):
            raise fail(f"an entry of 'variants' is not an object: {_show(x)}")
        lines.append(f"variant {text('dir', x)} {text('when', x)} "
                     f"{text('binding_sha256', x)}")
    return "".join(line + "\n" for line in lines)


def binding_sha256(manifest_obj: Mapping[str, Any], ptx_sha: Optional[str],
                   cubin_sha: Optional[str]) -> str:
    """sha256 (hex) of `binding_text`."""
    text = binding_text(manifest_obj, ptx_sha, cubin_sha)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape
        raise BundleError("binding_text: the manifest holds text that is not "
                          "UTF-8") from None
    return hashlib.sha256(data).hexdigest()


def seal(manifest_obj: Dict[str, Any], ptx: Optional[bytes],
         cubin: Optional[bytes] = None) -> Dict[str, Any]:
    """Sets `manifest_obj`'s "sha256" (of the given file contents, under the
    names in "ptx" / "cubin") and "binding_sha256", as attn-bundle writes
    them; returns it. For tests and manifests built in Python (an integrity
    check, not a signature)."""
    hashes: Dict[str, str] = {}
    shas: Dict[str, Optional[str]] = {"ptx": None, "cubin": None}
    for key, data in (("ptx", ptx), ("cubin", cubin)):
        name = manifest_obj.get(key)
        if name is not None and data is not None:
            shas[key] = hashlib.sha256(data).hexdigest()
            hashes[name] = shas[key]
    manifest_obj["sha256"] = hashes
    manifest_obj["binding_sha256"] = binding_sha256(manifest_obj, shas["ptx"],
                                                    shas["cubin"])
    return manifest_obj


def _grid_xy(sizes: Mapping[str, int], batch: Sequence[str], tq: int, group: int,
             varlen: Optional[Tuple[int, bool, bool]]) -> Tuple[int, int]:
    """launch_rules.grid x and y: one block per tile_q rows (m x the GQA
    group), or with varlen floor(T / tile_q) + S tile slots (sequence s's
    tiles start at block cu_q[s] // tile_q + s); one per batch entry over
    the group. -1 where a size is dynamic (-1): computed at launch."""
    m = sizes["m"]
    x = (-1 if m == -1 else m * group // tq + varlen[0] if varlen is not None
         else -(-m * group // tq))
    y = (-1 if any(sizes[b] == -1 for b in batch)
         else math.prod(sizes[b] for b in batch) // group)
    return x, y


def _constant_of(a: Mapping[str, Any], name: str, shape: Sequence[int],
                 where: str) -> Optional[str]:
    """The file of argument entry `a` if it is a constant of the program
    (CONSTANT_ARGS, "<name>.bin", a static shape), else None."""
    constant = a.get("constant")
    if constant is None:
        return None
    if ((name not in CONSTANT_ARGS and not _MOD_ARG.fullmatch(name))
            or constant != f"{name}.bin"):
        raise BundleError(f"{where}: only {list(CONSTANT_ARGS)} and score_mod "
                          "tables (mod<i>) may be constants of the program, "
                          f"each in '<name>.bin'; '{name}' names {_show(constant)}")
    if any(x == -1 for x in shape):
        raise BundleError(f"{where}: the constant '{name}' has a dynamic shape "
                          f"{_show(list(shape))}")
    return constant


# Launch variants' rules (attn-bundle's kVariantRules), evaluated at launch
# by _variant_applies.
VARIANT_RULES = ("full_grid_one_range", "one_range", "decode_stages")
MAX_VARIANTS = 8
_VARIANT_RE = re.compile(r"v[0-9]{1,3}")


def _parse_variants(x: Any, where: str) -> Tuple[Tuple[str, str, str, str], ...]:
    """The manifest's "variants" (absent: none): at most MAX_VARIANTS
    objects, each a v<digits> directory (once), a rule of VARIANT_RULES, the
    variant's binding_sha256 and its kernel_choice."""
    if x is None:
        return ()
    if not isinstance(x, list) or not 1 <= len(x) <= MAX_VARIANTS:
        raise BundleError(f"{where}: 'variants' must be a list of 1 to "
                          f"{MAX_VARIANTS} entries, got {_show(x)}")
    out, seen = [], set()
    for i, v in enumerate(x):
        at = f"{where}: variants[{i}]"
        if not isinstance(v, dict):
            raise BundleError(f"{at} must be an object")
        d, when, sha, choice = (v.get(k) for k in ("dir", "when", "binding_sha256",
                                                   "kernel_choice"))
        if not isinstance(d, str) or not _VARIANT_RE.fullmatch(d) or d in seen:
            raise BundleError(f"{at}.dir must be 'v<digits>' (each once), got {_show(d)}")
        seen.add(d)
        if when not in VARIANT_RULES:
            raise BundleError(f"{at}.when must be one of {list(VARIANT_RULES)}, "
                              f"got {_show(when)}")
        if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
            raise BundleError(f"{at}.binding_sha256 must be 64 lowercase hex "
                              f"digits, got {_show(sha)}")
        if not isinstance(choice, str) or len(choice) > 4096:
            raise BundleError(f"{at}.kernel_choice must be a string of at most "
                              f"4096 characters")
        out.append((d, when, sha, choice))
    return tuple(out)


def parse_manifest(obj: Any, path: Optional[Path] = None) -> Manifest:
    """Validates a decoded manifest.json and returns it typed. Checks
    everything that needs no file: the schema, the limits, the launch
    against the attention, and binding_sha256 against the manifest's own
    sha256 entries (open_bundle checks those against the files)."""
    where = f"manifest {path}" if path else "manifest"
    if not isinstance(obj, dict):
        raise BundleError(f"{where}: not a JSON object")
    _check_tree(obj, where)
    fmt = obj.get("format")
    if fmt != FORMAT:
        raise BundleError(f"{where}: format {_show(fmt)}, this loader reads "
                          f"{FORMAT!r}")
    for key in ("kernel", "args", "grid", "block", "attention", "sha256",
                "binding_sha256"):
        if key not in obj:
            raise BundleError(f"{where}: missing {key!r}")
    kernel = obj["kernel"]
    if (not isinstance(kernel, str) or len(kernel) > MAX_NAME
            or not _KERNEL_NAME.fullmatch(kernel)):
        raise BundleError(f"{where}: 'kernel' must be a PTX identifier of at "
                          f"most {MAX_NAME} characters, got {_show(kernel)}")
    where = f"{where} (kernel {kernel!r})"
    ptx = _file_name(obj.get("ptx"), "ptx", where)
    cubin = _file_name(obj.get("cubin"), "cubin", where)
    if ptx is None and cubin is None:
        raise BundleError(f"{where}: neither 'ptx' nor 'cubin' is given")
    if ptx is not None and ptx == cubin:
        raise BundleError(f"{where}: 'ptx' and 'cubin' name the same file {ptx!r}")
    chip = obj.get("chip", "")
    if not isinstance(chip, str) or not _CHIP.fullmatch(chip):
        raise BundleError(f"{where}: 'chip' must be a chip name like 'sm_90a', "
                          f"got {_show(chip)}")

    raw_args0 = obj["args"] if isinstance(obj["args"], list) else []
    dynamic = any(isinstance(a, dict) and a.get("map") == "size" for a in raw_args0)
    grid = _int_list([1 if dynamic and v == -1 else v for v in obj["grid"]]
                     if isinstance(obj["grid"], list) else obj["grid"],
                     3, "'grid'", where, positive=True)
    _within(grid, GRID_MAX, "'grid'", where)
    # -1: computed at launch (dynamic shapes; checked against the dims and
    # attention.splits below).
    grid = tuple(-1 if dynamic and obj["grid"][i] == -1 else v
                 for i, v in enumerate(grid))
    block = _int_list(obj["block"], 3, "'block'", where, positive=True)
    if math.prod(block) > BLOCK_THREADS_MAX:
        raise BundleError(f"{where}: block {list(block)} has more than "
                          f"{BLOCK_THREADS_MAX} threads")
    _within(block, BLOCK_MAX, "'block'", where)
    shared = obj.get("shared_bytes", 0)
    shared_max = SHARED_MAX.get(chip, SHARED_MAX_DEFAULT)
    if not _is_int(shared) or not 0 <= shared <= shared_max:
        raise BundleError(f"{where}: 'shared_bytes' must be an integer in "
                          f"[0, {shared_max}] (chip {chip or 'not given'}), "
                          f"got {_show(shared)}")

    att = obj["attention"]
    if not isinstance(att, dict):
        raise BundleError(f"{where}: 'attention' must be an object")
    if "scale" not in att:
        raise BundleError(f"{where}: attention lacks 'scale'")
    scale = _number(att["scale"], "attention.scale", where)
    value_scale = _number(att.get("value_scale", 1.0), "attention.value_scale",
                          where)
    factor_lists = {}
    for key in ("scale_factors", "value_scale_factors"):
        raw_f = att.get(key, [])
        if not isinstance(raw_f, list) or not all(
                isinstance(f, dict) and isinstance(f.get("arg"), str)
                and _SCALE_ARG.fullmatch(f["arg"])
                and isinstance(f.get("divide"), bool)
                and isinstance(f.get("index"), list)
                and all(_is_int(i) and i >= 0 for i in f["index"])
                for f in raw_f):
            raise BundleError(f"{where}: attention.{key} must be a list of "
                              "{arg: 'scale<i>', index: [ints >= 0], divide: "
                              f"bool}}, got {_show(raw_f)}")
        factor_lists[key] = tuple((f["arg"], tuple(f["index"]), f["divide"])
                                  for f in raw_f)
    causal = att.get("causal", False)
    if not isinstance(causal, bool):
        raise BundleError(f"{where}: attention.causal must be true/false, "
                          f"got {_show(causal)}")
    window = att.get("window")
    if window is not None:
        if not _is_int(window) or window < 0:
            raise BundleError(f"{where}: attention.window must be null or a "
                              f"positive integer, got {_show(window)}")
        if window == 0:  # convert-attn-to-gpu writes 0 for "no window"
            window = None
    query_offset = att.get("query_offset", 0)
    if not _is_int(query_offset) or not 0 <= query_offset <= 2**62:
        raise BundleError(f"{where}: attention.query_offset must be an integer "
                          f"in [0, 2^62], got {_show(query_offset)}")
    if "mask_value" not in att:
        raise BundleError(f'{where}: attention lacks \'mask_value\' (a finite '
                          f'number, "-inf" or "inf")')
    mask_value = _mask_value(att["mask_value"], where)
    tensor_cores = att.get("tensor_cores", False)
    if not isinstance(tensor_cores, bool):
        raise BundleError(f"{where}: attention.tensor_cores must be true/false, "
                          f"got {_show(tensor_cores)}")
    tile_q = att.get("tile_q")
    if tile_q is not None and (not _is_int(tile_q) or tile_q < 1):
        raise BundleError(f"{where}: attention.tile_q must be a positive "
                          f"integer, got {_show(tile_q)}")
    paged = None
    if att.get("paged") is not None:
        pg = att["paged"]
        if (not isinstance(pg, dict) or set(pg) != {"page_size", "pages"}
                or not all(_is_int(pg[x]) and 1 <= pg[x] <= 2**31 for x in pg)):
            raise BundleError(f"{where}: attention.paged must be "
                              f"{{\"page_size\": P, \"pages\": N}} with positive "
                              f"integers, got {_show(pg)}")
        paged = (pg["page_size"], pg["pages"])
    kv_lens_dim = None
    if att.get("kv_lens") is not None:
        kl = att["kv_lens"]
        if (not isinstance(kl, dict) or set(kl) != {"batch_dim"}
                or not _is_int(kl["batch_dim"])):
            raise BundleError(f"{where}: attention.kv_lens must be "
                              f"{{\"batch_dim\": i}}, got {_show(kl)}")
        kv_lens_dim = kl["batch_dim"]
    varlen = None
    if att.get("varlen") is not None:
        vl = att["varlen"]
        if (not isinstance(vl, dict) or set(vl) != {"seqs", "causal", "bottom_right"}
                or not _is_int(vl["seqs"]) or not 1 <= vl["seqs"] < 2**31
                or not isinstance(vl["causal"], bool)
                or not isinstance(vl["bottom_right"], bool)
                or (vl["bottom_right"] and not vl["causal"])):
            raise BundleError(f"{where}: attention.varlen must be {{\"seqs\": S, "
                              f"\"causal\": bool, \"bottom_right\": bool}} with "
                              f"S >= 1 and bottom_right only with causal, got "
                              f"{_show(vl)}")
        varlen = (vl["seqs"], vl["causal"], vl["bottom_right"])
    splits = att.get("splits", 1)
    # -1 (dynamic shapes): the split count is chosen at launch
    # (split_count), grid z -1.
    if not _is_int(splits) or not (1 <= splits <= GRID_MAX[2]
                                   or (dynamic and splits == -1)):
        raise BundleError(f"{where}: attention.splits must be an integer in "
                          f"[1, {GRID_MAX[2]}] (or -1 with dynamic sizes), got "
                          f"{_show(splits)}")
    tile_kv = att.get("tile_kv")
    if tile_kv is not None and (not _is_int(tile_kv) or not 1 <= tile_kv <= 1024):
        raise BundleError(f"{where}: attention.tile_kv must be an integer in "
                          f"[1, 1024], got {_show(tile_kv)}")
    if splits == -1 and tile_kv is None:
        raise BundleError(f"{where}: a split count chosen at launch needs "
                          "attention.tile_kv")
    warps = att.get("warps")
    if warps is not None and (not _is_int(warps) or not 1 <= warps <= 32):
        raise BundleError(f"{where}: attention.warps must be an integer in "
                          f"[1, 32], got {_show(warps)}")
    key_warps = att.get("key_warps", 1)
    if not _is_int(key_warps) or not 1 <= key_warps <= 4:
        raise BundleError(f"{where}: attention.key_warps must be an integer in "
                          f"[1, 4], got {_show(key_warps)}")
    f32_precision = att.get("f32_precision")
    if f32_precision not in (None, "3xtf32", "tf32"):
        raise BundleError(f"{where}: attention.f32_precision must be \"3xtf32\" "
                          f"or \"tf32\", got {_show(f32_precision)}")
    index_limit = att.get("index_limit")
    if index_limit is not None and (not _is_int(index_limit)
                                    or not 1 <= index_limit <= 2 ** 31):
        raise BundleError(f"{where}: attention.index_limit must be an integer in "
                          f"[1, 2^31], got {_show(index_limit)}")
    key_span = att.get("key_span")
    if key_span is not None and (not _is_int(key_span) or not 1 <= key_span < 2 ** 31):
        raise BundleError(f"{where}: attention.key_span must be an integer in "
                          f"[1, 2^31), got {_show(key_span)}")
    persistent = att.get("persistent", 0)
    if not _is_int(persistent) or not 0 <= persistent <= GRID_MAX[0]:
        raise BundleError(f"{where}: attention.persistent must be an integer in "
                          f"[0, {GRID_MAX[0]}], got {_show(persistent)}")
    kernel_choice = att.get("kernel_choice", "")
    if not isinstance(kernel_choice, str):
        raise BundleError(f"{where}: attention.kernel_choice must be a string, "
                          f"got {_show(kernel_choice)}")

    raw_args = obj["args"]
    if not isinstance(raw_args, list) or not raw_args:
        raise BundleError(f"{where}: 'args' must be a non-empty list")
    names: List[str] = []
    for a in raw_args:
        if not isinstance(a, dict):
            raise BundleError(f"{where}: every entry of 'args' must be an object")
        n = a.get("name")
        if not isinstance(n, str) or not (n in ARG_NAMES or n in WORKSPACE
                                          or n in INDEX_ARGS or n in TENSOR_MAPS
                                          or _MOD_ARG.fullmatch(n)
                                          or _SCALE_ARG.fullmatch(n)
                                          or _SIZE_ARG.fullmatch(n)):
            raise BundleError(f"{where}: unknown argument name {_show(n)} "
                              f"(known: {list(ARG_NAMES)}, mod<digits>, "
                              "scale<digits> and "
                              f"the workspace {list(WORKSPACE)})")
        if n in names:
            raise BundleError(f"{where}: argument names repeat: "
                              f"{names + [n]}")
        names.append(n)
    for n in ("q", "k", "v", "out"):
        if n not in names:
            raise BundleError(f"{where}: no {n!r} argument")

    r = att.get("batch_dims")
    q_shape = next(a.get("shape") for a in raw_args if a.get("name") == "q")
    if r is None and isinstance(q_shape, list):
        r = len(q_shape) - 2
    if not _is_int(r) or not 0 <= r <= MAX_BATCH_DIMS:
        raise BundleError(f"{where}: attention.batch_dims must be an integer "
                          f"in [0, {MAX_BATCH_DIMS}], got {_show(r)}")
    batch = tuple(f"b{i}" for i in range(r))
    score_mod = None
    if att.get("score_mod") is not None:  # absent or null: no region
        score_mod = parse_score_mod(att["score_mod"], r, where)
    layouts = att.get("layout")
    if layouts is None:
        layouts = {}
    if not isinstance(layouts, dict):
        raise BundleError(f"{where}: attention.layout must be an object, got "
                          f"{_show(layouts)}")
    for n in layouts:
        if n not in names:
            raise BundleError(f"{where}: attention.layout names {_show(n)}, "
                              "which is not an argument")

    args: List[ArgSpec] = []
    for a in raw_args:
        name = a["name"]
        dtype = a.get("dtype")
        if _SIZE_ARG.fullmatch(name):  # a runtime size: int64 scalar
            if (dtype != "int64" or a.get("map") != "size" or a.get("shape") != []
                    or name in layouts):
                raise BundleError(f"{where}: '{name}' must be an int64 scalar "
                                  f"(shape [], map \"size\"), got {_show(a)}")
            if name[len("size_"):] not in _dim_names(r)[:r + 2]:
                raise BundleError(f"{where}: '{name}' names no batch dim, m or n "
                                  f"of this attention ({r} batch dims)")
            args.append(ArgSpec(name, dtype, (), ()))
            continue
        if name in INDEX_ARGS:  # int32 arguments with no attention layout
            if dtype != "int32" or a.get("map") != name or name in layouts:
                raise BundleError(f"{where}: '{name}' must be int32 with map "
                                  f"\"{name}\", got {_show(dtype)}")
            raw = a.get("shape")
            # -1 rows: the block table and kv_lens follow a dynamic batch dim.
            dyn_rows = (name in ("block_table", "kv_lens") and isinstance(raw, list)
                        and raw[:1] == [-1])
            shape = _int_list([1] + raw[1:] if dyn_rows else raw, INDEX_ARGS[name],
                              f"'{name}'.shape", where, positive=True)
            if dyn_rows:
                shape = (-1,) + shape[1:]
            args.append(ArgSpec(name, dtype, shape, (),
                                constant=_constant_of(a, name, shape, where)))
            continue
        if _SCALE_ARG.fullmatch(name):  # a runtime scale's tensor
            if (dtype not in SCALE_DTYPES or a.get("map") != "scale"
                    or name in layouts):
                raise BundleError(f"{where}: '{name}' must be a "
                                  f"{'/'.join(SCALE_DTYPES)} tensor with map "
                                  f"\"scale\", got {_show(a)}")
            shape = _int_list(a.get("shape"), None, f"'{name}'.shape", where,
                              positive=True)
            args.append(ArgSpec(name, dtype, shape, ()))
            continue
        if name in TENSOR_MAPS:
            box = a.get("box")
            if (dtype != "int64" or a.get("map") != "tensormap"
                    or a.get("shape") != [16] or name in layouts
                    or a.get("tensor") != TENSOR_MAPS[name]):
                raise BundleError(f"{where}: '{name}' must be an int64[16] "
                                  f"tensor map of '{TENSOR_MAPS[name]}' (map "
                                  f"\"tensormap\"), got {_show(a)}")
            args.append(ArgSpec(name, dtype, (16,), (),
                                _int_list(box, None, f"'{name}'.box", where,
                                          positive=True)))
            continue
        if name in WORKSPACE:
            if dtype != WORKSPACE[name]:
                raise BundleError(f"{where}: workspace '{name}' must be "
                                  f"{WORKSPACE[name]}, got {_show(dtype)}")
            if a.get("map", "workspace") != "workspace" or name in layouts:
                raise BundleError(f"{where}: workspace '{name}' has no "
                                  "attention layout (map \"workspace\")")
            raw_ws = a.get("shape")
            shape = _int_list([1 if dynamic and v == -1 else v for v in raw_ws]
                              if isinstance(raw_ws, list) else raw_ws, None,
                              f"'{name}'.shape", where, positive=True)
            if dynamic:  # -1: grid z / y, sized at launch
                shape = tuple(-1 if v == -1 else x for v, x in zip(raw_ws, shape))
            if math.prod(abs(x) for x in shape) * 4 > INT64_MAX:
                raise BundleError(f"{where}: '{name}' is too large")
            args.append(ArgSpec(name, dtype, shape, ()))
            continue
        if not isinstance(dtype, str) or (
                dtype not in DTYPES and
                not (_kind(name) == "mod" and dtype in ("int32", "int64"))):
            raise BundleError(f"{where}: '{name}' has dtype {_show(dtype)} "
                              f"(known: {list(DTYPES)})")
        if dtype == "bool" and name != "mask":
            raise BundleError(f"{where}: only 'mask' may be bool, not '{name}'")
        raw_shape = a.get("shape")
        shape = _int_list([1 if dynamic and v == -1 else v for v in raw_shape]
                          if isinstance(raw_shape, list) else raw_shape,
                          None, f"'{name}'.shape", where, positive=True)
        if dynamic:  # -1 axes: sizes given at launch
            shape = tuple(-1 if v == -1 else s for v, s in zip(raw_shape, shape))
        if math.prod(abs(x) for x in shape) * ITEMSIZE[dtype] > INT64_MAX:
            raise BundleError(f"{where}: '{name}' has shape {_show(list(shape))}: "
                              "its size in bytes does not fit in 64 bits")
        if "map" in a:
            mp = a["map"]
            if (not isinstance(mp, str) or len(mp) > MAX_MAP
                    or not _PRINTABLE.fullmatch(mp)):
                raise BundleError(f"{where}: the map of '{name}' must be a "
                                  f"string of at most {MAX_MAP} printable "
                                  f"ASCII characters, got {_show(mp)}")
        if name in layouts:
            dims = parse_layout(layouts[name], r, f"{where}: layout of '{name}'")
        elif "map" in a:
            dims = parse_layout(a["map"], r, f"{where}: map of '{name}'")
        else:
            dims = _canonical_dims(name, batch)
            if len(dims) != len(shape):
                raise BundleError(
                    f"{where}: '{name}' has shape {_show(list(shape))} (rank "
                    f"{len(shape)}) and no layout; the canonical layout "
                    f"{list(dims)} has rank {len(dims)}")
        _check_dims(name, dims, len(shape), batch, where)
        args.append(ArgSpec(name, dtype, shape, dims,
                            constant=_constant_of(a, name, shape, where)))
    spec = {a.name: a for a in args}
    for n, t in TENSOR_MAPS.items():
        if n not in spec:
            continue
        op, box = spec.get(t), spec[n].box
        if op is None:
            raise BundleError(f"{where}: tensor map '{n}' describes '{t}', "
                              "which is not an argument")
        # float32: a mask, or Q, K and V of the TF32 wgmma kernel.
        if op.dtype not in ("float16", "bfloat16", "float32") + FP8_DTYPES:
            raise BundleError(f"{where}: tensor map '{n}' needs a 16-bit, "
                              f"8-bit or 32-bit float '{t}'")
        if (len(box) != len(op.shape) or len(box) > 5 or max(box) > 256
                or box[-1] * ITEMSIZE[op.dtype] != 128):
            raise BundleError(f"{where}: tensor map '{n}' has box "
                              f"{list(box)} for '{t}' of shape "
                              f"{list(op.shape)}: one entry per axis "
                              "(at most 5, each <= 256), 128 bytes along "
                              "the last")
    if spec["out"].dtype == "bool":
        raise BundleError(f"{where}: 'out' cannot be bool")
    if "lse" in spec and spec["lse"].dtype != "float32":
        raise BundleError(f"{where}: 'lse' must be float32, got "
                          f"{_show(spec['lse'].dtype)}")
    # score_mod tensors: each read by the region, at one index per dim.
    read = {o.name: o for o in (score_mod.ops if score_mod else ()) if o.op == "attn.arg"}
    for n, a in spec.items():
        if _kind(n) != "mod":
            continue
        if n not in read:
            raise BundleError(f"{where}: argument {n!r} is not read by "
                              "attention.score_mod")
        if a.dtype not in ("float32", "float16", "bfloat16", "int32", "int64"):
            raise BundleError(f"{where}: '{n}' has dtype {a.dtype!r} (score_mod "
                              "tensors are float32/16, bfloat16, int32/64)")
        if len(read[n].operands) != len(a.shape):
            raise BundleError(f"{where}: attention.score_mod reads {n!r} with "
                              f"{len(read[n].operands)} indices, it has rank "
                              f"{len(a.shape)}")
        want = "f32" if a.dtype.startswith(("float", "bfloat")) else "i" + a.dtype[3:]
        if read[n].type != want:
            raise BundleError(f"{where}: attention.score_mod reads {n!r} as "
                              f"{read[n].type}, it holds {a.dtype}")
    for n in read:
        if n not in spec:
            raise BundleError(f"{where}: attention.score_mod reads {n!r}, which "
                              "is not an argument")
    if tensor_cores:
        dts = {n: spec[n].dtype for n in ("q", "k", "v", "out")}
        ok = dts["q"] in TENSOR_CORE_DTYPES or (dts["q"] == "float32"
                                                 and f32_precision is not None)
        fp8 = (dts["q"] in FP8_DTYPES and dts["k"] == dts["v"] == dts["q"]
               and dts["out"] in TENSOR_CORE_DTYPES)
        if not fp8 and (len(set(dts.values())) != 1 or not ok):
            raise BundleError(f"{where}: a tensor-core kernel takes q, k, v and "
                              f"out of one dtype in {list(TENSOR_CORE_DTYPES)} "
                              f"(or float32 with attention.f32_precision), "
                              f"the manifest says {dts}")

    sha = obj["sha256"]
    if not isinstance(sha, dict):
        raise BundleError(f"{where}: 'sha256' must be an object, got {_show(sha)}")
    named = [f for f in (ptx, cubin) if f is not None]
    named += [a.constant for a in args if a.constant is not None]
    for f in named:
        if f not in sha:
            raise BundleError(f"{where}: 'sha256' has no entry for {f!r}")
    for f, h in sha.items():
        if f not in named:
            raise BundleError(f"{where}: 'sha256' names {_show(f)}, which the "
                              "manifest does not")
        if not isinstance(h, str) or not _HEX64.fullmatch(h):
            raise BundleError(f"{where}: sha256[{f!r}] must be 64 lowercase hex "
                              f"digits, got {_show(h)}")
    binding = obj["binding_sha256"]
    if not isinstance(binding, str) or not _HEX64.fullmatch(binding):
        raise BundleError(f"{where}: 'binding_sha256' must be 64 lowercase hex "
                          f"digits, got {_show(binding)}")
    variants = _parse_variants(obj.get("variants"), where)

    m = Manifest(kernel=kernel, chip=chip, ptx=ptx, cubin=cubin,
                 args=tuple(args), grid=grid, block=block, shared_bytes=shared,
                 attention=AttentionSpec(scale, causal, window, mask_value, r,
                                         kernel_choice, tile_q, tensor_cores,
                                         query_offset, score_mod, paged,
                                         kv_lens_dim, varlen, tile_kv,
                                         warps=warps, key_warps=key_warps,
                                         f32_precision=f32_precision,
                                         persistent=persistent,
                                         value_scale=value_scale,
                                         scale_factors=factor_lists["scale_factors"],
                                         value_scale_factors=factor_lists[
                                             "value_scale_factors"],
                                         index_limit=index_limit,
                                         key_span=key_span),
                 path=path, sha256=tuple(sorted(sha.items())),
                 binding_sha256=binding, variants=variants)
    if variants and m.splits != -1:
        raise BundleError(f"{where}: 'variants' (rule "
                          f"{variants[0][1]!r}) need a split count chosen at launch "
                          "(attention.splits -1)")
    used_scales = set()
    for arg_name, index, _ in (m.attention.scale_factors
                               + m.attention.value_scale_factors):
        spec = m.arg(arg_name)
        if spec is None:
            raise BundleError(f"{where}: a scale factor reads '{arg_name}', "
                              "which is not an argument")
        if len(index) != len(spec.shape) or any(
                i >= n for i, n in zip(index, spec.shape)):
            raise BundleError(f"{where}: a scale factor reads '{arg_name}' at "
                              f"{list(index)}, outside its shape "
                              f"{list(spec.shape)}")
        used_scales.add(arg_name)
    for a in m.args:
        if _SCALE_ARG.fullmatch(a.name) and a.name not in used_scales:
            raise BundleError(f"{where}: no scale factor reads '{a.name}'")
    if (paged is None) != (m.arg("block_table") is None):
        raise BundleError(f"{where}: 'block_table' and attention.paged come "
                          "together")
    if paged is not None:
        for n in ("k", "v"):
            a = m.arg(n)
            if "b0" not in a.dims or "n" not in a.dims:
                raise BundleError(f"{where}: paged '{n}' must index b0 (pages) "
                                  "and n (slots)")
            got = (a.shape[a.dims.index("n")], a.shape[a.dims.index("b0")])
            if got != paged:
                raise BundleError(f"{where}: paged '{n}' has {got[1]} pages of "
                                  f"{got[0]} slots; attention.paged says "
                                  f"{paged[1]} of {paged[0]}")
    if (kv_lens_dim is None) != (m.arg("kv_lens") is None):
        raise BundleError(f"{where}: 'kv_lens' and attention.kv_lens come together")
    if kv_lens_dim is not None and not 0 <= kv_lens_dim < r:
        raise BundleError(f"{where}: attention.kv_lens.batch_dim must be in "
                          f"[0, {r}), got {kv_lens_dim}")
    if varlen is None:
        if m.arg("cu_seqlens_q") is not None or m.arg("cu_seqlens_k") is not None:
            raise BundleError(f"{where}: 'cu_seqlens_q'/'cu_seqlens_k' come with "
                              "attention.varlen")
    else:
        for n in ("cu_seqlens_q", "cu_seqlens_k"):
            a = m.arg(n)
            if a is None or a.shape != (varlen[0] + 1,):
                raise BundleError(f"{where}: varlen with {varlen[0]} sequences "
                                  f"needs '{n}' of shape [{varlen[0] + 1}], got "
                                  f"{_show(None if a is None else list(a.shape))}")
        if (causal or window is not None or query_offset or paged is not None
                or kv_lens_dim is not None or m.arg("mask") is not None):
            raise BundleError(f"{where}: attention.varlen takes its causal rule "
                              "from the varlen tables; it cannot come with "
                              "causal, window, query_offset, a mask, kv_lens "
                              "or paged K/V")
    if dynamic:
        marked = {d for a in args for d, x in zip(a.dims, a.shape) if x == -1}
        given = set(m.dynamic_dims)
        if marked - given:
            raise BundleError(f"{where}: axes of size -1 along "
                              f"{sorted(marked - given)} have no size_ argument "
                              "(only batch dims, m and n may be dynamic)")
        if given - marked:
            raise BundleError(f"{where}: size arguments for "
                              f"{sorted(given - marked)}, which no tensor has "
                              "as a dynamic axis")
        if splits > 1:
            raise BundleError(f"{where}: dynamic sizes cannot come with a "
                              "fixed split-KV count")
    for n in ("block_table", "kv_lens"):
        a = m.arg(n)
        if a is not None and a.shape[0] == -1 and not dynamic:
            raise BundleError(f"{where}: '{n}' has -1 rows in a bundle with "
                              "no dynamic sizes")
    sizes = m.sizes()  # raises on inconsistent shapes
    if kv_lens_dim is not None and \
            m.arg("kv_lens").shape[0] != sizes[f"b{kv_lens_dim}"]:
        raise BundleError(f"{where}: 'kv_lens' has {m.arg('kv_lens').shape[0]} "
                          f"lengths for b{kv_lens_dim} = {sizes[f'b{kv_lens_dim}']}")
    if paged is not None and m.arg("block_table").shape[0] != sizes["b0"]:
        raise BundleError(f"{where}: 'block_table' has "
                          f"{m.arg('block_table').shape[0]} rows for b0 = "
                          f"{sizes['b0']} sequences")
    # The launch covers exactly the attention: one block per tile_q query
    # rows (the SIMT kernel: one thread per row, tile_q = block x), batch
    # entry and split-KV key range.
    tq = tile_q if tile_q is not None else block[0]
    # GQA packing: batch dim pack_dim (the query-head group, which k and v
    # do not index) joins the rows of a block.
    pack = att.get("pack_dim")
    group = 1
    if pack is not None:
        if not _is_int(pack) or not 0 <= pack < r:
            raise BundleError(f"{where}: attention.pack_dim must be a batch dim "
                              f"index in [0, {r}), got {_show(pack)}")
        if any(f"b{pack}" in m.arg(n).dims for n in ("k", "v")):
            raise BundleError(f"{where}: attention.pack_dim b{pack} is indexed "
                              "by k or v: not a query-head group")
        group = sizes[f"b{pack}"]
        if group == -1:
            raise BundleError(f"{where}: attention.pack_dim b{pack} is dynamic")
        m = replace(m, attention=replace(m.attention, pack_dim=pack))
    rows = sizes["m"] * group
    if varlen is not None and (group > 1 or splits > 1):
        raise BundleError(f"{where}: attention.varlen cannot come with GQA "
                          "packing or split-KV")
    want = (*_grid_xy(sizes, batch, tq, group, varlen), splits)
    # Persistent: P blocks over the want[0] x want[1] tiles (P <= tiles;
    # with a dynamic m or batch grid x -1: min(tiles, P) at launch; varlen:
    # the tile slots), no split-KV or packing.
    counter = m.arg("tile_counter")
    if persistent:
        dyn_tiles = -1 in want[:2]
        if (splits != 1 or group > 1
                or (not dyn_tiles and persistent > want[0] * want[1])):
            raise BundleError(f"{where}: attention.persistent {persistent} needs "
                              "no split-KV or GQA packing, and at most the "
                              "query tiles (varlen: tile slots) as blocks")
        if counter is None or counter.shape != (2,):
            raise BundleError(f"{where}: attention.persistent needs the "
                              "workspace 'tile_counter' of shape [2]")
        want = (-1 if dyn_tiles else persistent, 1, 1)
    elif counter is not None:
        raise BundleError(f"{where}: workspace 'tile_counter' comes with "
                          "attention.persistent")
    if grid != want:
        raise BundleError(
            f"{where}: grid {list(grid)} does not match the attention: m = "
            f"{sizes['m']}{f' x group {group}' if group > 1 else ''}, tile_q = {tq}"
            f"{'' if tile_q is not None else ' (block x)'}"
            f"{f', varlen seqs {varlen[0]}' if varlen is not None else ''}, batch "
            f"{[sizes[b] for b in batch]}"
            f"{f', splits {splits}' if splits > 1 else ''} need grid "
            f"{list(want)}")
    ws_want = {"o_part": (splits, want[1], rows, sizes["e"]),
               "ml_part": (splits, want[1], rows, 2),
               "locks": (want[1], want[0])}
    if splits == -1 and (grid[2] != -1 or sizes["m"] == -1):
        raise BundleError(f"{where}: a split count chosen at launch needs grid "
                          "z -1 and a static m (decode)")
    if grid[2] == -1 and splits != -1:
        raise BundleError(f"{where}: grid z -1 comes with attention.splits -1")
    for n, shape in ws_want.items():
        a = m.arg(n)
        if splits == -1:  # sized at launch: [-1 (splits), grid y, ...]
            if a is None or a.shape != shape:
                raise BundleError(f"{where}: workspace {n!r} has shape "
                                  f"{None if a is None else list(a.shape)}; a "
                                  f"split count chosen at launch needs {list(shape)}")
            continue
        if splits > 1 and a is None:
            raise BundleError(f"{where}: split-KV (splits {splits}) needs the "
                              f"workspace argument {n!r}")
        if a is not None and (splits == 1 or a.shape != shape):
            raise BundleError(f"{where}: workspace {n!r} has shape "
                              f"{list(a.shape)}; splits {splits} need "
                              + (f"{list(shape)}" if splits > 1 else "none"))
    if binding_sha256(obj, sha.get(ptx) if ptx else None,
                      sha.get(cubin) if cubin else None) != binding:
        raise BundleError(f"{where}: manifest does not describe this kernel "
                          "(binding_sha256 mismatch): it was edited after "
                          "attn-bundle wrote it, or comes from another bundle")
    return m


# --- files --------------------------------------------------------------------

def _read_inside(d: Path, name: str, cap: int, where: str,
                 missing_ok: bool = False) -> Optional[bytes]:
    """The bytes of regular file `name` of bundle directory `d`: its real
    path (symlinks followed) must stay inside `d`'s; at most `cap` bytes.
    None when it does not exist and `missing_ok`."""
    path = d / name
    try:
        real_dir = os.path.realpath(d)
        real = os.path.realpath(path)
        inside = (real != real_dir and
                  os.path.commonpath([real, real_dir]) == real_dir)
    except (OSError, ValueError) as e:
        raise BundleError(f"{where}: cannot read {_show(str(path), 200)}: "
                          f"{getattr(e, 'strerror', None) or e}") from None
    if not inside:
        raise BundleError(f"{where}: {name} resolves to {_show(real, 200)}, "
                          f"outside the bundle directory {_show(real_dir, 200)}")
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise BundleError(f"cannot read {_show(str(path), 200)}: No such file "
                          "or directory") from None
    except (OSError, ValueError) as e:
        raise BundleError(f"cannot read {_show(str(path), 200)}: "
                          f"{getattr(e, 'strerror', None) or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{where}: {name} is not a regular file")
        if st.st_size > cap:
            raise BundleError(f"{where}: {name} has {st.st_size} bytes, more "
                              f"than the {cap} a bundle may hold")
        chunks: List[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise BundleError(f"{where}: {name} has more than the {cap} "
                                  "bytes a bundle may hold")
        return b"".join(chunks)
    except OSError as e:
        raise BundleError(f"cannot read {_show(str(path), 200)}: "
                          f"{e.strerror or e}") from None
    finally:
        os.close(fd)


def read_manifest(bundle_dir: Union[str, Path]) -> Manifest:
    """Reads and checks DIR/manifest.json (see parse_manifest); the kernel
    files are not read (open_bundle checks them against it)."""
    d = Path(bundle_dir)
    if is_bundle_set(d) and not os.path.lexists(d / "manifest.json"):
        raise BundleError(f"{_show(str(d), 200)} is a bundle set (index.json: "
                          "one bundle per attention); read_set() reads it, "
                          "load_all() loads it")
    path = d / "manifest.json"
    data = _read_inside(d, "manifest.json", MAX_MANIFEST_BYTES,
                        f"bundle {_show(str(d), 200)}")
    assert data is not None
    obj = _load_json(data, f"{path}")
    return parse_manifest(obj, path)


# ---------------------------------------------------------------------------
# Bundle sets: a module with several attentions (one per layer)
# ---------------------------------------------------------------------------

SET_FORMAT = "attn-opt-bundle-set/1"
MAX_SET_MEMBERS = 4096
_MEMBER_RE = re.compile(r"attn[0-9]{1,6}")


@dataclass(frozen=True)
class SetMember:
    """One attention of a bundle set: its bundle directory (a format/2
    bundle), where it came from, and its checked manifest."""
    dir: Path
    function: str
    location: str
    kernel_choice: str
    manifest: Manifest


def is_bundle_set(path: Union[str, Path]) -> bool:
    """True if DIR holds a set index (index.json) rather than one bundle."""
    try:
        return (Path(path) / "index.json").exists()
    except (OSError, ValueError):
        return False


def _dir_inside(d: Path, sub: Path) -> bool:
    """Whether `sub` resolves (symlinks followed) to a directory strictly
    inside `d`: a set's member, a bundle's launch variant. OSError or
    ValueError where it cannot be resolved."""
    real_dir, real = os.path.realpath(d), os.path.realpath(sub)
    return (real != real_dir and os.path.commonpath([real, real_dir]) == real_dir
            and os.path.isdir(real))


def read_set(set_dir: Union[str, Path]) -> List[SetMember]:
    """Reads and checks DIR/index.json (written by attn-bundle for a module
    with several attentions) and every member's manifest, in module order.
    The index is hostile input like a manifest: bounded JSON, the format
    string, at most MAX_SET_MEMBERS members named attn<digits>, each once,
    each a directory inside DIR; every failure is a BundleError."""
    d = Path(set_dir)
    where = f"bundle set {_show(str(d), 200)}"
    data = _read_inside(d, "index.json", MAX_MANIFEST_BYTES, where)
    assert data is not None
    obj = _load_json(data, f"{d / 'index.json'}")
    if not isinstance(obj, dict):
        raise BundleError(f"{where}: index.json must be an object")
    if obj.get("format") != SET_FORMAT:
        raise BundleError(f"{where}: index.json 'format' must be {SET_FORMAT!r}, "
                          f"got {_show(obj.get('format'))}")
    members = obj.get("bundles")
    if not isinstance(members, list) or not members:
        raise BundleError(f"{where}: index.json 'bundles' must be a non-empty list")
    if len(members) > MAX_SET_MEMBERS:
        raise BundleError(f"{where}: index.json lists {len(members)} bundles, "
                          f"more than {MAX_SET_MEMBERS}")
    out: List[SetMember] = []
    seen = set()
    for i, m in enumerate(members):
        at = f"{where}: bundles[{i}]"
        if not isinstance(m, dict):
            raise BundleError(f"{at} must be an object")
        name = m.get("dir")
        if not isinstance(name, str) or not _MEMBER_RE.fullmatch(name):
            raise BundleError(f"{at}.dir must be 'attn<digits>', got {_show(name)}")
        if name in seen:
            raise BundleError(f"{at}.dir {name!r} appears twice")
        seen.add(name)
        texts = {}
        for key in ("function", "location", "kernel_choice"):
            val = m.get(key, "")
            if not isinstance(val, str) or len(val) > 4096:
                raise BundleError(f"{at}.{key} must be a string of at most 4096 "
                                  f"characters, got {_show(val)}")
            texts[key] = val
        sub = d / name
        try:
            inside = _dir_inside(d, sub)
        except (OSError, ValueError) as e:
            raise BundleError(f"{at}: cannot resolve {name}: {e}") from None
        if not inside:
            raise BundleError(f"{at}: {name} is not a directory inside the set")
        out.append(SetMember(sub, texts["function"], texts["location"],
                             texts["kernel_choice"], read_manifest(sub)))
    return out


# ---------------------------------------------------------------------------
# Bundle files (hashes, PTX parameter check) -- still no CUDA
# ---------------------------------------------------------------------------

def ptx_entry_params(ptx: str, kernel: str) -> Optional[List[str]]:
    """The parameter types ('.u64', '.f32', ...) of `.entry kernel(...)`, or
    None when the PTX has no such entry."""
    # The first `.entry kernel(`, then its `)`: linear on any text.
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(", ptx)
    if not m:
        return None
    end = ptx.find(")", m.end())
    if end < 0:
        return None
    body = ptx[m.end():end]
    if len(body) > 1 << 16:  # a few parameters take a few hundred bytes
        return [f"<a parameter list of {len(body)} characters>"]
    params = []
    for p in body.split(","):
        p = p.strip()
        if not p:
            continue
        # `.param [.qualifier ...] .type name`: the first type among the
        # dotted words after .param (token by token: no regex backtracking).
        words = p.split()
        found = None
        if ".param" in words:
            for w in words[words.index(".param") + 1:]:
                if _PTX_TYPE.fullmatch(w):
                    found = w
                    break
                if not w.startswith("."):
                    break
        params.append(found or p)
    return params


_PTX_TYPE = re.compile(r"\.(?:[us]\d+|b\d+|f\d+)")


@dataclass(frozen=True)
class Bundle:
    """A bundle's manifest and kernel images, read from disk."""

    dir: Path
    manifest: Manifest
    ptx: Optional[bytes]
    cubin: Optional[bytes]
    constants: Tuple[Tuple[str, bytes], ...] = ()  # (arg name, data)
    # The manifest's launch variants, opened: (rule, bundle).
    variants: Tuple[Tuple[str, "Bundle"], ...] = ()


def _open_variant(d: Path, man: Manifest, entry: Tuple[str, str, str, str],
                  check_params: bool) -> "Bundle":
    """A launch variant of the bundle in `d`: a directory inside it holding
    a whole bundle whose binding the manifest lists, with no variants of its
    own, taking the same inputs (names, dtypes, dims) and dynamic dims."""
    name, when, sha, _ = entry
    where = f"{man._where()}: variant {name}"
    sub = d / name
    try:
        inside = _dir_inside(d, sub)
    except (OSError, ValueError) as e:
        raise BundleError(f"{where}: cannot resolve it: {e}") from None
    if not inside:
        raise BundleError(f"{where}: not a directory inside the bundle")
    b = open_bundle(sub, check_params, variants=False)
    vm = b.manifest
    if vm.binding_sha256 != sha:
        raise BundleError(f"{where}: its manifest's binding_sha256 is not the "
                          "one the bundle lists (edited, or another bundle's)")
    if vm.variants:
        raise BundleError(f"{where}: a variant has no variants of its own")
    if vm.attention.kernel_choice != entry[3]:
        raise BundleError(f"{where}: its kernel_choice is not the one the "
                          "bundle lists")
    # The same computation on the same arguments: every argument but the
    # workspace (name, dtype, shape, dims, constant), in order, and the
    # attention but for its launch shape.
    def sig(m: Manifest) -> Any:
        return [a for a in m.args if a.name not in WORKSPACE], m.dynamic_dims, m.chip
    if sig(vm) != sig(man):
        raise BundleError(f"{where}: takes other arguments than the bundle "
                          f"({_show(sig(vm), 300)} against {_show(sig(man), 300)})")
    for a in man.args:  # the constants' data too
        if a.constant is not None and (vm.file_sha256(a.constant)
                                       != man.file_sha256(a.constant)):
            raise BundleError(f"{where}: its constant {a.name!r} is not the bundle's")
    # Launch-shape fields, and key_span (an input of the split rule of a
    # count chosen at launch, which a variant compiled with one range has not).
    shape = dict(kernel_choice="", tile_q=None, tile_kv=None, warps=None, key_warps=1,
                 persistent=0, tensor_cores=False, key_span=None)
    if replace(vm.attention, **shape) != replace(man.attention, **shape):
        raise BundleError(f"{where}: computes another attention than the bundle's")
    return b


def open_bundle(bundle_dir: Union[str, Path], check_params: bool = True,
                variants: bool = True) -> Bundle:
    """Reads and checks a bundle directory (no CUDA): the manifest
    (read_manifest), and every kernel file it names that is there against
    the manifest's sha256 (a named file may be missing when another image
    is there). With `check_params`, the PTX entry must take exactly one
    64-bit pointer per manifest arg."""
    d = Path(bundle_dir)
    man = read_manifest(d)
    where = man._where()
    images: Dict[str, bytes] = {}
    for key, name in (("ptx", man.ptx), ("cubin", man.cubin)):
        if name is None:
            continue
        data = _read_inside(d, name, MAX_IMAGE_BYTES, where, missing_ok=True)
        if data is None:
            continue
        _check_sha256(man, name, data)
        images[key] = data
    ptx, cubin = images.get("ptx"), images.get("cubin")
    constants = tuple((a.name, read_constant_bytes(man, a, d))
                      for a in man.args if a.constant is not None)
    if man.ptx is not None and ptx is None and man.cubin is None:
        raise BundleError(f"{where}: {d / man.ptx} is missing")
    if ptx is None and cubin is None:
        raise BundleError(f"{where}: no kernel image on disk "
                          f"(ptx={man.ptx!r}, cubin={man.cubin!r})")
    if ptx is not None and check_params:
        text = ptx.decode("utf-8", "replace")
        params = ptx_entry_params(text, man.kernel)
        if params is None:
            raise BundleError(f"{where}: {man.ptx} has no '.entry {man.kernel}'")
        names = [a.name for a in man.args]
        if len(params) != len(names) or any(t not in (".u64", ".b64", ".s64")
                                            for t in params):
            raise BundleError(
                f"{where}: the PTX entry takes {len(params)} parameters "
                f"{_show(params, 200)}, but the manifest promises one 64-bit "
                f"pointer per argument {names} ({len(names)}); launching would "
                "pass the wrong parameters (load with check_params=False to "
                "force)")
    opened = tuple((e[1], _open_variant(d, man, e, check_params))
                   for e in man.variants) if variants else ()
    return Bundle(d, man, ptx, cubin, constants, opened)


def read_constant_bytes(man: Manifest, spec: ArgSpec,
                        bundle_dir: Optional[Path] = None) -> bytes:
    """The data of constant argument `spec` from its file in the bundle,
    checked against its size and the manifest's sha256."""
    d = bundle_dir if bundle_dir is not None else (
        man.path.parent if man.path is not None else None)
    where = man._where()
    if d is None or spec.constant is None:
        raise BundleError(f"{where}: '{spec.name}' is not a constant of a "
                          "bundle on disk")
    data = _read_inside(d, spec.constant, MAX_CONSTANT_BYTES, where)
    assert data is not None
    if len(data) != spec.nbytes:
        raise BundleError(f"{where}: {spec.constant} holds {len(data)} bytes; "
                          f"'{spec.name}' {spec.dtype} {list(spec.shape)} needs "
                          f"{spec.nbytes}")
    _check_sha256(man, spec.constant, data)
    return data


def _check_sha256(man: Manifest, name: str, data: bytes) -> None:
    """File `name`'s bytes against the manifest's sha256 entry."""
    got, want = hashlib.sha256(data).hexdigest(), man.file_sha256(name)
    if got != want:
        raise BundleError(
            f"{man._where()}: {name} does not match the manifest's sha256: the "
            f"bundle is mixed or modified ({name} has {got[:16]}..., the "
            f"manifest says {str(want)[:16]}...)")


def constant_array(man: Manifest, name: str) -> Any:
    """Constant argument `name` as a numpy array of its shape (bool, or
    float32 for the float types numpy lacks)."""
    import numpy as np
    spec = man.arg(name)
    assert spec is not None and spec.constant is not None
    data = read_constant_bytes(man, spec)
    if spec.dtype == "bool":
        return np.frombuffer(data, dtype=np.uint8).astype(bool).reshape(spec.shape)
    if spec.dtype == "bfloat16":
        bits = np.frombuffer(data, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(spec.shape)
    return np.frombuffer(data, dtype=getattr(np, spec.dtype)).reshape(spec.shape)


# ---------------------------------------------------------------------------
# Argument binding and validation (duck-typed: torch tensors or numpy arrays)
# ---------------------------------------------------------------------------

def dtype_name(x: Any) -> str:
    """'float16' for torch.float16 / numpy float16, etc."""
    s = str(getattr(x, "dtype", type(x).__name__))
    return s[len("torch."):] if s.startswith("torch.") else s


def _is_contiguous(x: Any) -> bool:
    f = getattr(x, "is_contiguous", None)
    if callable(f):
        return bool(f())
    flags = getattr(x, "flags", None)
    if flags is not None:
        return bool(flags["C_CONTIGUOUS"])
    return True


def _address(x: Any) -> Optional[int]:
    f = getattr(x, "data_ptr", None)
    if callable(f):
        return int(f())
    c = getattr(x, "ctypes", None)
    if c is not None:
        return int(c.data)
    return None


def bind_args(man: Manifest, args: Sequence[Any],
              kwargs: Mapping[str, Any]) -> Dict[str, Any]:
    """Maps `kernel(q, k, v, [mask], [sink], out=None, lse=None)` call
    arguments to manifest names; outputs not given are None."""
    where = man._where()
    inputs = man.inputs
    if len(args) > len(inputs):
        raise TypeError(f"{where} takes {len(inputs)} inputs {list(inputs)}, "
                        f"got {len(args)} positional arguments")
    bound: Dict[str, Any] = dict(zip(inputs, args))
    for k, v in kwargs.items():
        outputs = [a.name for a in man.args if a.name in OUTPUTS]
        if k not in inputs and k not in outputs:
            raise TypeError(f"{where}: unexpected argument {k!r} (this kernel "
                            f"takes {list(inputs)} and {' and '.join(outputs)})")
        if k in bound:
            raise TypeError(f"{where}: {k!r} given twice")
        bound[k] = v
    missing = [n for n in inputs if bound.get(n) is None]
    if missing:
        raise TypeError(f"{where}: missing {missing} (this kernel takes "
                        f"{list(inputs)})")
    for a in man.args:
        if a.name in OUTPUTS:
            bound.setdefault(a.name, None)
    return bound


def dynamic_sizes(man: Manifest, bound: Mapping[str, Any]) -> Dict[str, int]:
    """The dynamic dims' sizes read from the given tensors (the axes the
    manifest has as -1); a dim two tensors disagree on is an error."""
    where = man._where()
    out: Dict[str, int] = {}
    for spec in man.args:
        x = bound.get(spec.name)
        shape = tuple(int(v) for v in getattr(x, "shape", ())) if x is not None else None
        if shape is None or len(shape) != len(spec.shape):
            continue  # check_arg names the rank
        for dim, want, got in zip(spec.dims, spec.shape, shape):
            if want != -1:
                continue
            if out.setdefault(dim, got) != got:
                raise BundleError(f"{where}: '{spec.name}' has {dim} = {got}, "
                                  f"other arguments {dim} = {out[dim]}")
    return out


# Multiprocessors by chip, for the split-count rule when the caller does not
# give the device's own count.
MULTIPROCESSORS = {"sm_90a": 132, "sm_80": 108}
# convert-attn-to-gpu's decode split-KV rule (AttnToGPU.cpp decodeSplits,
# MmaConfig::setSplits): ranges of at least MIN_SPLIT_KEYS keys, at most
# MAX_SPLITS, aiming at 1.5 blocks per multiprocessor.
MIN_SPLIT_KEYS = 256
MAX_SPLITS = 256


def split_count(span: int, blocks: int, tile_kv: int, multiprocessors: int,
                one_wave: bool = False) -> int:
    """Split-KV ranges for `blocks` query tiles over `span` keys: the
    compiler's decode rule, evaluated at launch. `one_wave` (blocks of four
    row warps with two key warps, one per multiprocessor, compiled for a
    split count chosen at launch): where the rule splits, as many ranges as
    fill the multiprocessors once (a static bundle with ranges past 16384
    keys takes one key warp and the first count instead; a dynamic one keeps
    its key warps, and a second wave of blocks would run half empty)."""
    def clamp(want: int) -> int:
        return max(1, min(min(want, span // MIN_SPLIT_KEYS), MAX_SPLITS))
    want = clamp(-(-(3 * multiprocessors // 2) // max(1, blocks)))
    if want > 1 and one_wave:
        want = clamp(multiprocessors // max(1, blocks))
    if want <= 1:
        return 1
    chunk = -(-(-(-span // want)) // tile_kv) * tile_kv
    return max(1, -(-span // chunk))


def _tile_q(man: Manifest) -> int:
    """Query rows per block: attention.tile_q, else block x."""
    return man.attention.tile_q if man.attention.tile_q is not None else man.block[0]


def _split_span(man: Manifest, n: int, tq: int) -> int:
    """The keys a query tile's key ranges divide: N, or with a window its
    width plus the tile's rows, or the keys a chunked region leaves."""
    span = n
    if man.attention.window is not None:
        span = min(span, man.attention.window + tq)
    if man.attention.key_span is not None:
        span = min(span, man.attention.key_span)
    return span


def _resident_blocks(m: Manifest) -> int:
    """Blocks of `m`'s kernel per multiprocessor by shared memory and warps
    (the pass's residentBlocks for decode blocks)."""
    warps = max(1, math.prod(m.block) // 32)
    return max(1, min(228 * 1024 // (m.shared_bytes + 1024), 64 // warps, 32))


def _variant_applies(when: str, man: Manifest, at: Manifest,
                     multiprocessors: int, vm: Optional[Manifest] = None) -> bool:
    """Whether a launch variant's rule holds for the launch of `man` that
    `at` (its specialization) describes. "full_grid_one_range": at least a
    query tile per multiprocessor and one key range by the decode rule's
    first count (split_count without one_wave): what a static bundle of
    those sizes compiles without split-KV. "one_range": the launch's split
    count (chosen at launch) is 1. "decode_stages": that, and the pass's
    decodeStages rule prefers the variant (`vm`, more stages, fewer resident
    blocks) for this launch's blocks: where only the bundle's kernel runs
    them in one wave, not; in one wave either way, not with GQA packing; else
    where the variant's last wave is fuller."""
    if when == "one_range":
        return at.grid[2] == 1
    if when == "decode_stages":
        if vm is None:
            raise BundleError(f"{man._where()}: rule 'decode_stages' needs the "
                              "variant's manifest")
        if at.grid[2] != 1:
            return False
        blocks = at.grid[0] * at.grid[1]
        s_main = multiprocessors * _resident_blocks(man)
        s_var = multiprocessors * _resident_blocks(vm)
        if blocks <= s_var:
            return man.attention.pack_dim is None
        if blocks <= s_main:
            return False
        def fill(s: int) -> float:
            return blocks / (-(-blocks // s) * s)
        return fill(s_var) > fill(s_main)
    if when == "full_grid_one_range":
        blocks = at.grid[0] * at.grid[1]
        span = _split_span(man, at.sizes()["n"], _tile_q(man))
        return (blocks >= multiprocessors and
                split_count(span, blocks, man.attention.tile_kv or 64,
                            multiprocessors) == 1)
    raise BundleError(f"{man._where()}: unknown variant rule {when!r}")


def variant_at(b: "Bundle", dims: Mapping[str, int],
               multiprocessors: Optional[int] = None) -> Optional[str]:
    """The launch variant (its directory, "v1", ...) that a launch of the
    opened bundle `b` at the dynamic sizes `dims` takes, or None for the
    bundle's own kernel: the first whose rule holds (what Kernel does at
    each call)."""
    if not b.variants:
        return None
    sms = multiprocessors or MULTIPROCESSORS.get(b.manifest.chip, 132)
    at = specialize(b.manifest, dims, sms)
    i = _first_variant([(when, vb.manifest) for when, vb in b.variants],
                       b.manifest, at, sms)
    return None if i is None else b.variants[i][1].dir.name


def _first_variant(variants: Sequence[Tuple[str, Manifest]], man: Manifest,
                   at: Manifest, multiprocessors: int) -> Optional[int]:
    """The index of the first (rule, variant manifest) whose rule holds for
    the launch `at` of `man`, or None."""
    return next((i for i, (when, vm) in enumerate(variants)
                 if _variant_applies(when, man, at, multiprocessors, vm)), None)


def specialize(man: Manifest, dims: Mapping[str, int],
               multiprocessors: Optional[int] = None) -> Manifest:
    """A dynamic bundle's manifest at the sizes `dims` ({"m": 1000, "n": 77,
    ...}, every dynamic dim): concrete shapes and grid, checked against
    CUDA's limits. A static manifest is returned as it is (`dims` must be
    empty)."""
    where = man._where()
    dyn = man.dynamic_dims
    extra = sorted(set(dims) - set(dyn))
    if extra:
        raise BundleError(f"{where}: {extra} are not dynamic dims of this "
                          f"bundle (dynamic: {list(dyn)})")
    if not dyn:
        return man
    missing = [d for d in dyn if d not in dims]
    if missing:
        raise BundleError(f"{where}: no size for the dynamic dims {missing}")
    for d in dyn:
        v = dims[d]
        # The kernel narrows its sizes to 32 bits (convert-attn-to-gpu).
        if not _is_int(v) or not 1 <= v < 2 ** 31:
            raise BundleError(f"{where}: dynamic dim {d} must be a positive "
                              f"integer below 2^31, got {_show(v)}")
        lim = man.attention.index_limit
        if lim is not None and d in ("m", "n") and v >= lim:
            raise BundleError(f"{where}: dynamic dim {d} = {v} is not below this "
                              f"bundle's attention.index_limit {lim} (its score_mod "
                              f"reads the indices; compile it for static sizes)")
    args = []
    rows = {"block_table": "b0", "kv_lens": f"b{man.attention.kv_lens_dim}"}
    for a in man.args:
        if a.name in rows and a.shape[0] == -1:  # one row per sequence
            args.append(ArgSpec(a.name, a.dtype, (dims[rows[a.name]],) + a.shape[1:],
                                a.dims))
            continue
        if a.name in WORKSPACE or not a.dims:
            args.append(a)  # workspace: sized below; int32 tables, sizes: as is
            continue
        shape = tuple(dims[d] if x == -1 else x for d, x in zip(a.dims, a.shape))
        if math.prod(shape) * ITEMSIZE[a.dtype] > INT64_MAX:
            raise BundleError(f"{where}: '{a.name}' of shape {list(shape)} does "
                              "not fit in 64-bit byte offsets")
        args.append(replace(a, shape=shape))
    sizes = _sizes(args, man.batch_names, where, man.attention.paged)
    tq = _tile_q(man)
    pack = man.attention.pack_dim
    group = sizes[f"b{pack}"] if pack is not None else 1
    gx, gy = _grid_xy(sizes, man.batch_names, tq, group, man.attention.varlen)
    gz = man.grid[2]
    if gz == -1:
        span = _split_span(man, sizes["n"], tq)
        sms = multiprocessors or MULTIPROCESSORS.get(man.chip, 132)
        att = man.attention
        gz = split_count(span, gx * gy, att.tile_kv or 64, sms,
                         one_wave=att.key_warps == 2 and (att.warps or 0) >= 4)
    grid = (gx, gy, gz)
    if man.attention.persistent:
        # The kernel numbers tiles in 32 bits.
        if gx * gy > 2**31 - 1:
            raise BundleError(f"{where} at {dict(dims)}: {gx * gy} query tiles; "
                              "a persistent kernel takes at most 2^31 - 1")
        grid = (min(gx * gy, man.attention.persistent), 1, 1)
    _within(grid, GRID_MAX, "grid", f"{where} at {dict(dims)}")
    ws = {"o_part": (gz, gy), "ml_part": (gz, gy), "locks": (gy, gx)}
    args = [ArgSpec(a.name, a.dtype, tuple(ws[a.name][i] if x == -1 else x
                                           for i, x in enumerate(a.shape)), a.dims)
            if a.name in WORKSPACE else a for a in args]
    return replace(man, args=tuple(args), grid=grid)


def check_arg(man: Manifest, spec: ArgSpec, x: Any) -> None:
    where = man._where()
    got_dt = dtype_name(x)
    if got_dt != spec.dtype:
        raise BundleError(f"{where}: '{spec.name}' must be {spec.dtype}, got "
                          f"{got_dt}")
    got_shape = tuple(int(s) for s in getattr(x, "shape", ()))
    if got_shape != spec.shape:
        raise BundleError(f"{where}: '{spec.name}' must have shape "
                          f"{list(spec.shape)} (layout {list(spec.dims)}), got "
                          f"{list(got_shape)}")
    if not _is_contiguous(x):
        raise BundleError(f"{where}: '{spec.name}' must be contiguous "
                          "(row-major); call .contiguous()")
    addr = _address(x)
    if _SCALE_ARG.fullmatch(spec.name):  # read as one element
        if addr is not None and addr % ITEMSIZE[spec.dtype]:
            raise BundleError(f"{where}: '{spec.name}' is not aligned to its "
                              "element size")
        return
    if addr is not None and addr % 16:
        # The tensor-core kernel moves 16-byte chunks (cp.async, stores).
        raise BundleError(f"{where}: '{spec.name}' must start at a 16-byte "
                          f"aligned address, got {addr:#x} (a view with a "
                          "storage offset?); call .clone()")


def check_args(man: Manifest, bound: Mapping[str, Any]) -> None:
    """Dtype, shape, contiguity and 16-byte alignment of every given argument
    (out may be None)."""
    for spec in man.args:
        x = bound.get(spec.name)
        if x is not None and not _SIZE_ARG.fullmatch(spec.name):
            check_arg(man, spec, x)


# ---------------------------------------------------------------------------
# compile(): attn-bundle
# ---------------------------------------------------------------------------

def find_attn_bundle() -> str:
    """$ATTN_BUNDLE, else build/bin/attn-bundle above this file, else PATH."""
    return find_tool("attn-bundle", "ATTN_BUNDLE")


LAUNCH_OPTIONS = ("tile_q", "tile_kv", "warps", "key_warps", "stages", "q_shared",
                  "rescale_threshold", "pipeline", "wgmma", "min_blocks",
                  "warp_specialize", "pingpong", "tma", "persistent", "shift_v",
                  "key_bias_mma", "q_regs",
                  "splits",
                  "f32_precision")
F32_PRECISIONS = ("3xtf32", "tf32", "ieee")


def compile(source: Union[str, Path], out_dir: Union[str, Path],
            chip: str = "sm_90a", attn_bundle: Optional[str] = None,
            launch: Optional[Mapping[str, Union[int, str]]] = None) -> Path:
    """Runs `attn-bundle INPUT -o OUT_DIR --chip=CHIP` and returns OUT_DIR
    (its manifest checked; a module with several attentions gives a bundle
    set, see read_set and load_all). `source` is a Path to an .mlir file, or a str:
    a file name when it names an existing file (and has no newline), else
    MLIR text. `launch` sets the tensor-core kernel's launch shape
    (LAUNCH_OPTIONS, e.g. {"tile_q": 128, "tile_kv": 32}; unset: the
    defaults for the head dims; {"wgmma": 0} keeps sm_90a on the mma.sync
    kernel; {"f32_precision": "tf32"} runs f32 as one TF32 product instead
    of 3xTF32, "ieee" on the SIMT kernel)."""
    flags = []
    for key, value in (launch or {}).items():
        if key not in LAUNCH_OPTIONS:
            raise ValueError(f"unknown launch option {key!r} (one of "
                             f"{', '.join(LAUNCH_OPTIONS)})")
        if key == "f32_precision":
            if value not in F32_PRECISIONS:
                raise ValueError(f"f32_precision must be one of "
                                 f"{', '.join(F32_PRECISIONS)}, got {value!r}")
            flags.append(f"--f32-precision={value}")
            continue
        flags.append(f"--{key.replace('_', '-')}={int(value)}")
    exe = attn_bundle or find_attn_bundle()
    if attn_bundle and not os.path.isfile(attn_bundle):
        raise FileNotFoundError(f"attn-bundle {attn_bundle} does not exist")
    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="attn-bundle-") as tmp:
        if isinstance(source, Path) or ("\n" not in source
                                        and os.path.isfile(source)):
            src = str(source)
        else:
            src = os.path.join(tmp, "input.mlir")
            Path(src).write_text(source)
        cmd = [exe, src, "-o", str(out), f"--chip={chip}", *flags]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"attn-bundle failed (exit {proc.returncode}): "
                           f"{' '.join(cmd)}", proc.stderr)
    if is_bundle_set(out):  # several attentions: one bundle each
        read_set(out)
        return out
    if not (out / "manifest.json").is_file():
        raise CompileError(f"attn-bundle exited 0 but wrote no {out}/manifest.json",
                           proc.stderr)
    read_manifest(out)
    return out


# ---------------------------------------------------------------------------
# load(): the CUDA driver through ctypes
# ---------------------------------------------------------------------------

_CU_JIT_INFO_LOG_BUFFER = 3
_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
_CU_JIT_ERROR_LOG_BUFFER = 5
_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


# cuda.h: CUtensorMapDataType, CU_TENSOR_MAP_SWIZZLE_128B,
# CU_TENSOR_MAP_L2_PROMOTION_L2_256B.
# CU_TENSOR_MAP_DATA_TYPE_*: 8-bit floats as UINT8 (TMA moves bytes).
_TENSOR_MAP_DTYPE = {"float16": 6, "bfloat16": 9, "float32": 7, "float8_e4m3fn": 0,
                     "float8_e5m2": 0}
_TENSOR_MAP_CACHE = 64
_CU_TENSOR_MAP_SWIZZLE_128B = 3
_CU_TENSOR_MAP_L2_PROMOTION_256B = 3


def tensor_map_layout(dtype: str, shape: Sequence[int], box: Sequence[int]
                      ) -> Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]:
    """cuTensorMapEncodeTiled's dims, byte strides (of every axis but the
    innermost) and box for a row-major tensor of `shape`, innermost first:
    the order of the kernel's TMA coordinates."""
    item = ITEMSIZE[dtype]
    strides, acc = [], item
    for n in reversed(shape[1:]):
        acc *= n
        strides.append(acc)
    return tuple(reversed(shape)), tuple(strides), tuple(reversed(box))


class _Driver:
    """The few libcuda entry points a launch needs, every result checked."""

    _instance: Optional["_Driver"] = None

    def __init__(self) -> None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaError(f"cannot load the CUDA driver libcuda.so.1: {e}") from None
        P, I, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        sig = {
            "cuInit": [U],
            "cuGetErrorString": [I, ctypes.POINTER(ctypes.c_char_p)],
            "cuGetErrorName": [I, ctypes.POINTER(ctypes.c_char_p)],
            "cuDeviceGet": [ctypes.POINTER(I), I],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(P), I],
            "cuCtxGetCurrent": [ctypes.POINTER(P)],
            "cuCtxSetCurrent": [P],
            "cuModuleLoadDataEx": [ctypes.POINTER(P), P, U, ctypes.POINTER(I),
                                   ctypes.POINTER(P)],
            "cuModuleGetFunction": [ctypes.POINTER(P), P, ctypes.c_char_p],
            "cuModuleUnload": [P],
            "cuFuncSetAttribute": [P, I, I],
            "cuLaunchKernel": [P, U, U, U, U, U, U, U, P, ctypes.POINTER(P),
                               ctypes.POINTER(P)],
            "cuTensorMapEncodeTiled": [P, I, U, P, ctypes.POINTER(ctypes.c_uint64),
                                       ctypes.POINTER(ctypes.c_uint64),
                                       ctypes.POINTER(ctypes.c_uint32),
                                       ctypes.POINTER(ctypes.c_uint32), I, I, I, I],
        }
        for name, argtypes in sig.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = I
        self.lib = lib
        self.check(lib.cuInit(0), "cuInit")

    @classmethod
    def get(cls) -> "_Driver":
        if cls._instance is None:
            cls._instance = _Driver()
        return cls._instance

    def error(self, res: int) -> str:
        name, msg = ctypes.c_char_p(), ctypes.c_char_p()
        self.lib.cuGetErrorName(res, ctypes.byref(name))
        self.lib.cuGetErrorString(res, ctypes.byref(msg))
        n = name.value.decode() if name.value else f"CUresult {res}"
        s = msg.value.decode() if msg.value else "unknown error"
        return f"{n} ({res}): {s}"

    def check(self, res: int, what: str) -> None:
        if res != 0:
            raise CudaError(f"{what} failed: {self.error(res)}")

    def encode_tensor_map(self, address: int, dtype: str, shape: Sequence[int],
                          box: Sequence[int]) -> bytes:
        """The 128-byte CUtensorMap of a row-major tensor at `address`
        (tensor_map_layout), 128-byte swizzle, rows past the tensor read as
        zeros."""
        dims, strides, boxes = tensor_map_layout(dtype, shape, box)
        out = (ctypes.c_uint64 * 16)()
        u64, u32 = ctypes.c_uint64, ctypes.c_uint32
        self.check(self.lib.cuTensorMapEncodeTiled(
            ctypes.addressof(out), _TENSOR_MAP_DTYPE[dtype], len(dims),
            ctypes.c_void_p(address), (u64 * len(dims))(*dims),
            (u64 * max(1, len(strides)))(*strides), (u32 * len(boxes))(*boxes),
            (u32 * len(dims))(*([1] * len(dims))), 0,
            _CU_TENSOR_MAP_SWIZZLE_128B, _CU_TENSOR_MAP_L2_PROMOTION_256B, 0),
            f"cuTensorMapEncodeTiled (shape {list(shape)}, box {list(box)})")
        return bytes(out)

    def primary_context(self, ordinal: int) -> int:
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal),
                   f"cuDeviceGet({ordinal})")
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                   "cuDevicePrimaryCtxRetain")
        return int(ctx.value or 0)

    def make_current(self, ctx: int) -> None:
        cur = ctypes.c_void_p()
        self.check(self.lib.cuCtxGetCurrent(ctypes.byref(cur)), "cuCtxGetCurrent")
        if (cur.value or 0) != ctx:
            self.check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def load_module(self, image: bytes, what: str) -> int:
        """cuModuleLoadData with the JIT's logs kept for the error message."""
        size = 1 << 14
        err_log = ctypes.create_string_buffer(size)
        info_log = ctypes.create_string_buffer(size)
        opts = (ctypes.c_int * 4)(_CU_JIT_ERROR_LOG_BUFFER,
                                  _CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                  _CU_JIT_INFO_LOG_BUFFER,
                                  _CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
        vals = (ctypes.c_void_p * 4)(ctypes.cast(err_log, ctypes.c_void_p),
                                     ctypes.c_void_p(size),
                                     ctypes.cast(info_log, ctypes.c_void_p),
                                     ctypes.c_void_p(size))
        buf = ctypes.create_string_buffer(image)  # NUL-terminated for PTX
        mod = ctypes.c_void_p()
        res = self.lib.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.cast(buf, ctypes.c_void_p),
                                          4, opts, vals)
        if res != 0:
            log = err_log.value.decode("utf-8", "replace").strip()
            raise CudaError(f"cuModuleLoadData({what}) failed: {self.error(res)}"
                            + (f"\n{log}" if log else ""))
        return int(mod.value or 0)


def _stream_handle(stream: Any) -> int:
    """A launch stream's CUDA handle (a torch stream or an int handle)."""
    return stream if isinstance(stream, int) else stream.cuda_stream


def _torch_stream(stream: Any, device: int) -> Any:
    """A torch stream for `stream` (a torch stream or an int handle)."""
    import torch
    return (stream if isinstance(stream, torch.cuda.Stream)
            else torch.cuda.ExternalStream(stream, device=device))


# Manifests specialized per kernel (Kernel._specialize).
_SPECIALIZED = 256


class Kernel:
    """A loaded bundle: `kernel(q, k, v, [mask], [sink], out=None) -> out`."""

    # Launch variants (rule, kernel): none unless __init__ loads some.
    _variants: Sequence[Tuple[str, "Kernel"]] = ()

    def __init__(self, bundle: Bundle, device: int) -> None:
        self.bundle = bundle
        self.manifest = bundle.manifest
        self.device = device
        self.load_notes: List[str] = []
        self._workspace: Optional[Dict[str, Any]] = None
        # (stream handle, name) -> flat buffer: launches on one stream run in
        # order, so they can share one; launches on two streams may overlap.
        self._workspaces: Dict[Tuple[int, str], Any] = {}
        # TMA tensor maps in device memory, by (argument, address, shape):
        # the latest _TENSOR_MAP_CACHE, so that calls on the same tensors (a
        # model's layer loop, the caching allocator's reused blocks) copy
        # nothing.
        self._tensor_maps: Dict[Tuple[str, int, Tuple[int, ...]], Any] = {}
        self._multiprocessors: Optional[int] = None
        self._constants: Optional[Dict[str, Any]] = None
        # specialize()'s manifests by sizes: a model's calls repeat a few.
        self._specialized: Dict[Tuple[Tuple[str, int], ...], Manifest] = {}
        drv = _Driver.get()
        self._drv = drv
        self._ctx = drv.primary_context(device)
        drv.make_current(self._ctx)
        where = self.manifest._where()
        module = None
        self.image = ""
        if bundle.cubin is not None:
            try:
                module = drv.load_module(bundle.cubin, "cubin")
                self.image = "cubin"
            except CudaError as e:
                if bundle.ptx is None:
                    raise CudaError(f"{where}: {e}") from None
                self.load_notes.append(f"cubin not loadable, JIT from PTX: {e}")
        if module is None:
            assert bundle.ptx is not None
            try:
                module = drv.load_module(bundle.ptx, "ptx")
            except CudaError as e:
                raise CudaError(f"{where}: {e}") from None
            self.image = "ptx"
        self._module = module
        fn = ctypes.c_void_p()
        drv.check(drv.lib.cuModuleGetFunction(ctypes.byref(fn), module,
                                              self.manifest.kernel.encode()),
                  f"{where}: cuModuleGetFunction({self.manifest.kernel!r})")
        self._function = int(fn.value or 0)
        if self.manifest.shared_bytes > 48 * 1024:
            drv.check(drv.lib.cuFuncSetAttribute(
                self._function, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.manifest.shared_bytes), f"{where}: cuFuncSetAttribute")
        # Launch variants (rule, kernel), and the one each size took.
        variants: List[Tuple[str, Kernel]] = []
        try:
            for when, vb in bundle.variants:
                variants.append((when, Kernel(vb, device)))
        except BaseException:
            # What was loaded is unloaded; errors doing so must not hide why.
            for k in [k for _, k in variants] + [self]:
                k._variants = ()
                try:
                    k.close()
                except Exception:  # noqa: BLE001
                    pass
            raise
        self._variants = tuple(variants)
        for when, k in self._variants:
            self.load_notes += [f"{k.bundle.dir.name}: {n}" for n in k.load_notes]
        self._chosen: Dict[Tuple[Tuple[str, int], ...], Optional["Kernel"]] = {}

    def __repr__(self) -> str:
        return (f"Kernel({self.manifest.kernel!r}, {self.bundle.dir}, "
                f"image={self.image}, inputs={list(self.manifest.inputs)})")

    def workspace(self, stream: Any = None) -> Dict[str, Any]:
        """The workspace of launches on `stream` (default: torch's current
        stream): split-KV's partials and counters, a persistent kernel's
        tile counter; allocated on first use and kept: the kernel leaves the
        counters at 0 for the next launch. Launches on one stream share it
        (they run in order); each stream has its own, so launches on two
        streams may overlap. A launch that did not complete leaves the
        counters undefined (reset_workspace)."""
        return self._workspace_for(self.manifest, stream)

    def _workspace_for(self, man: Manifest, stream: Any = None) -> Dict[str, Any]:
        """The workspace at `man`'s shapes (a split count chosen at launch
        sizes it per call) for launches on `stream`: views of one zeroed
        buffer per tensor, grown to the largest size asked for (not one
        buffer per shape: a serving loop sees many), zeroed on that stream.
        The kernel leaves the counters it used at 0, so any prefix of the
        buffer starts zeroed."""
        import torch
        if stream is None:
            stream = torch.cuda.current_stream(self.device)
        handle = _stream_handle(stream)
        out: Dict[str, Any] = {}
        for spec in man.args:
            if spec.name not in WORKSPACE:
                continue
            n = math.prod(spec.shape)
            buf = self._workspaces.get((handle, spec.name))
            if buf is None or buf.numel() < n:
                s = _torch_stream(stream, self.device)
                with torch.cuda.stream(s):
                    buf = torch.zeros(n, dtype=getattr(torch, spec.dtype),
                                      device=f"cuda:{self.device}")
                self._workspaces[(handle, spec.name)] = buf
            out[spec.name] = buf[:n].view(spec.shape)
        self._workspace = out
        return out

    def reset_workspace(self) -> None:
        """Zeroes the counters of every stream's workspace (split-KV's locks,
        the tile counter) after a launch that did not finish; waits for the
        device first, so that no launch still runs on them."""
        import torch
        for _, k in self._variants:
            k.reset_workspace()
        bufs = [buf for (_, name), buf in self._workspaces.items()
                if name in ("locks", "tile_counter")]
        if not bufs:
            return
        torch.cuda.synchronize(self.device)
        for buf in bufs:
            buf.zero_()
        torch.cuda.synchronize(self.device)

    def free_workspace(self, stream: Any = None) -> None:
        """Drops the workspace of `stream` (default: every stream's), e.g.
        when a caller that made a stream per request is done with it; the
        next launch on that stream allocates a new one."""
        for _, k in self._variants:
            k.free_workspace(stream)
        if stream is None:
            self._workspaces.clear()
            return
        handle = _stream_handle(stream)
        for key in [k for k in self._workspaces if k[0] == handle]:
            del self._workspaces[key]

    def empty_out(self, name: str = "out",
                  manifest: Optional[Manifest] = None) -> Any:
        import torch
        spec = (manifest or self.manifest).arg(name)
        assert spec is not None
        return torch.empty(spec.shape, dtype=getattr(torch, spec.dtype),
                           device=f"cuda:{self.device}")

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        """Checks the arguments, allocates `out` (and `lse`) if not given,
        launches on `stream` (default: torch's current stream) and returns
        `out`, or `(out, lse)` for a kernel that writes the lse."""
        launch, out = self._bind(args, kwargs, stream)
        launch()
        return out

    def prepare(self, *args: Any, stream: Any = None, **kwargs: Any
                ) -> Callable[[], None]:
        """Checks once and returns a launcher with no per-call Python work
        beyond cuLaunchKernel (for timing); the tensors must stay alive."""
        return self._bind(args, kwargs, stream)[0]

    def _bind(self, args: Sequence[Any], kwargs: Mapping[str, Any],
              stream: Any) -> Tuple[Callable[[], None], Any]:
        import torch
        man = self.manifest
        bound = bind_args(man, args, kwargs)
        bound.update(self._constant_tensors())
        # Dynamic sizes from the inputs: the manifest at those sizes.
        dims = dynamic_sizes(man, bound) if man.dynamic_dims else {}
        if man.splits == -1:
            self._sms()
        at = self._specialize(dims)
        if self._variants:
            other = self.variant_for(dims)
            if other is not None:
                return other._bind(args, kwargs, stream)
        for name in OUTPUTS:
            if name in bound and bound[name] is None:
                bound[name] = self.empty_out(name, at)
        if stream is None:
            stream = torch.cuda.current_stream(self.device)
        bound.update(self._workspace_for(at, stream))
        check_args(at, bound)
        for spec in man.args:
            if _SIZE_ARG.fullmatch(spec.name) or spec.name in TENSOR_MAPS:
                continue
            x = bound[spec.name]
            if x.device.type != "cuda" or x.device.index != self.device:
                raise BundleError(f"{man._where()}: '{spec.name}' is on "
                                  f"{x.device}, the kernel is loaded on "
                                  f"cuda:{self.device}")
        handle = _stream_handle(stream)
        for spec in man.args:
            if spec.name in TENSOR_MAPS:
                x = bound[TENSOR_MAPS[spec.name]]
                bound[spec.name] = self._tensor_map(
                    spec, at.arg(TENSOR_MAPS[spec.name]), x, stream)
        ptrs = [ctypes.c_int64(dims[a.name[len("size_"):]])
                if _SIZE_ARG.fullmatch(a.name)
                else ctypes.c_uint64(bound[a.name].data_ptr()) for a in man.args]
        params = (ctypes.c_void_p * len(ptrs))(*[ctypes.addressof(p) for p in ptrs])
        drv, fn, ctx = self._drv, self._function, self._ctx
        g, b, shared = at.grid, man.block, man.shared_bytes
        where = f"{man._where()}: cuLaunchKernel"
        keep = (ptrs, bound)

        def launch() -> None:
            assert keep
            res = drv.lib.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2],
                                         shared, handle, params, None)
            if res != 0:
                if res == 201:  # CUDA_ERROR_INVALID_CONTEXT: another thread
                    drv.make_current(ctx)
                    res = drv.lib.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1],
                                                 b[2], shared, handle, params, None)
                drv.check(res, where)
        drv.make_current(ctx)
        if "lse" in bound:
            return launch, (bound["out"], bound["lse"])
        return launch, bound["out"]

    def variant_for(self, dims: Dict[str, int]) -> Optional["Kernel"]:
        """The launch variant that a launch at the dynamic sizes `dims`
        takes (the first whose rule holds), or None for this kernel."""
        key = tuple(sorted(dims.items()))
        if key not in self._chosen:
            sms = self._sms()
            i = _first_variant([(when, k.manifest) for when, k in self._variants],
                               self.manifest, self._specialize(dims), sms)
            self._chosen[key] = None if i is None else self._variants[i][1]
            if len(self._chosen) > _SPECIALIZED:
                self._chosen.pop(next(iter(self._chosen)))
        return self._chosen[key]

    def _sms(self) -> int:
        """This device's multiprocessor count (asked once)."""
        if self._multiprocessors is None:
            import torch
            self._multiprocessors = torch.cuda.get_device_properties(
                self.device).multi_processor_count
        return self._multiprocessors

    def _specialize(self, dims: Dict[str, int]) -> Manifest:
        """specialize() at `dims`, remembered for up to _SPECIALIZED sizes,
        the oldest dropped first (its checks are of the sizes alone; the
        tensors are checked per call)."""
        key = tuple(sorted(dims.items()))
        at = self._specialized.get(key)
        if at is None:
            at = specialize(self.manifest, dims, self._multiprocessors)
            if len(self._specialized) >= _SPECIALIZED:
                self._specialized.pop(next(iter(self._specialized)))
            self._specialized[key] = at
        return at

    def _constant_tensors(self) -> Dict[str, Any]:
        """The bundle's constant arguments on this kernel's device (copied
        once)."""
        if self._constants is None:
            import torch
            self._constants = {}
            for name, data in self.bundle.constants:
                spec = self.manifest.arg(name)
                assert spec is not None
                raw = torch.frombuffer(bytearray(data), dtype=torch.uint8)
                self._constants[name] = raw.view(getattr(torch, spec.dtype)).reshape(
                    spec.shape).to(f"cuda:{self.device}")
        return self._constants

    def _tensor_map(self, spec: ArgSpec, op: ArgSpec, x: Any, stream: Any) -> Any:
        """The device copy of `op`'s tensor map for tensor `x` (checked by
        check_args), encoded and copied on `stream` when new."""
        import torch
        key = (spec.name, int(x.data_ptr()), tuple(op.shape))
        buf = self._tensor_maps.get(key)
        if buf is not None:
            return buf
        raw = self._drv.encode_tensor_map(key[1], op.dtype, op.shape, spec.box)
        host = torch.frombuffer(bytearray(raw), dtype=torch.int64).pin_memory()
        s = _torch_stream(stream, self.device)
        with torch.cuda.stream(s):
            buf = torch.empty(16, dtype=torch.int64, device=f"cuda:{self.device}")
            buf.copy_(host, non_blocking=True)
        # The cache serves every stream: the 128 bytes must have landed
        # before a launch on another stream reads them (once per new map).
        s.synchronize()
        if len(self._tensor_maps) >= _TENSOR_MAP_CACHE:
            self._tensor_maps.pop(next(iter(self._tensor_maps)))
        self._tensor_maps[key] = buf
        return buf

    def close(self) -> None:
        for _, k in self._variants:
            k.close()
        if self._module:
            self._drv.make_current(self._ctx)
            self._drv.check(self._drv.lib.cuModuleUnload(self._module),
                            "cuModuleUnload")
            self._module = 0


def load_all(set_dir: Union[str, Path], device: Optional[int] = None,
             check_params: bool = True) -> List[Kernel]:
    """Loads every bundle of a set (or the one bundle of DIR), in module
    order: one kernel per attention."""
    if not is_bundle_set(set_dir):
        return [load(set_dir, device, check_params)]
    return [load(m.dir, device, check_params) for m in read_set(set_dir)]


def load(bundle_dir: Union[str, Path], device: Optional[int] = None,
         check_params: bool = True) -> Kernel:
    """Loads a bundle into torch's CUDA context (default: the current device)."""
    bundle = open_bundle(bundle_dir, check_params=check_params)
    import torch
    if not torch.cuda.is_available():
        raise CudaError("torch sees no CUDA device")
    if device is None:
        device = torch.cuda.current_device()
    torch.cuda.init()
    return Kernel(bundle, int(device))
