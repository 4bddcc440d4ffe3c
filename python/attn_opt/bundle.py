"""Kernel bundles: compile attention with `attn-bundle`, load and launch it.

A bundle is a directory written by `attn-bundle IN.mlir -o DIR`:

  DIR/manifest.json   {"format": "attn-opt-bundle/1", "kernel", "chip", "ptx",
                       ["cubin"], "args": [{"name", "dtype", "shape", ["map"]}],
                       "grid", "block", "shared_bytes", "attention": {...}}
  DIR/kernel.ptx      PTX text
  DIR/kernel.cubin    (optional) the same kernel assembled for `chip`

Every kernel parameter is one raw device pointer to a contiguous row-major
tensor of exactly the manifest's shape and dtype, in `args` order; `out` is
written. Launching needs the CUDA driver and torch, nothing from MLIR:

    kernel = attn_opt.load_bundle("DIR")      # torch + CUDA imported here
    out = kernel(q, k, v)                     # [mask], [sink] when the manifest has them

Which tensor dimension is which attention dimension ("layout") is read from
`attention.layout[name]`, else from the argument's `map`, else assumed
canonical: q [b..., m, d], k [b..., n, d], v [b..., n, e], out [b..., m, e],
mask [b..., m, n], sink [b..., m]. Dimension names are "b0".."b{r-1}"
(batch-like dims, r = batch_dims), "m", "n", "d", "e"; a layout entry is a
list of such names, a list of iteration-space positions (0..r+3), or an
affine map string "(d0, .., d{r+3}) -> (...)" over (b..., m, n, d, e).

Nothing in this module imports torch or touches CUDA until `load()`.
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from .compiler import CompileError, find_tool

FORMAT = "attn-opt-bundle/1"
ARG_NAMES = ("q", "k", "v", "mask", "sink", "out")
DTYPES = ("float16", "bfloat16", "float32", "bool")
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "bool": 1}


class BundleError(ValueError):
    """A malformed bundle, or arguments that do not match its manifest."""


class CudaError(RuntimeError):
    """A CUDA driver call returned an error."""


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgSpec:
    name: str
    dtype: str
    shape: Tuple[int, ...]
    dims: Tuple[str, ...]  # attention dimension of each axis, e.g. ("b0", "m", "d")

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * ITEMSIZE[self.dtype]


@dataclass(frozen=True)
class AttentionSpec:
    scale: float
    causal: bool
    window: Optional[int]  # None: no sliding window
    mask_value: float      # score of keys masked by causal/window/bool mask; -inf by default
    batch_dims: int
    # Which kernel attn-bundle chose, its launch shape and why not a faster
    # one (informational; "" in bundles that do not say).
    kernel_choice: str = ""


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

    def arg(self, name: str) -> Optional[ArgSpec]:
        for a in self.args:
            if a.name == name:
                return a
        return None

    @property
    def inputs(self) -> Tuple[str, ...]:
        """Names of the arguments the caller passes, in parameter order."""
        return tuple(a.name for a in self.args if a.name != "out")

    @property
    def batch_names(self) -> Tuple[str, ...]:
        return tuple(f"b{i}" for i in range(self.attention.batch_dims))

    def sizes(self) -> Dict[str, int]:
        """Size of every attention dimension (b0.., m, n, d, e)."""
        return _sizes(self.args, self.batch_names, self._where())

    def _where(self) -> str:
        return f"bundle {self.kernel!r}" + (f" ({self.path})" if self.path else "")


def _canonical_dims(name: str, batch: Sequence[str]) -> Tuple[str, ...]:
    tail = {"q": ("m", "d"), "k": ("n", "d"), "v": ("n", "e"),
            "out": ("m", "e"), "mask": ("m", "n"), "sink": ("m",)}[name]
    return tuple(batch) + tail


# Which dimensions each operand may use, and which it must use (batch dims
# aside: q and out need all of them, the others may omit some).
_ALLOWED = {"q": {"m", "d"}, "k": {"n", "d"}, "v": {"n", "e"},
            "out": {"m", "e"}, "mask": {"m", "n"}, "sink": {"m"}}
_REQUIRED = {"q": {"m", "d"}, "k": {"n", "d"}, "v": {"n", "e"},
             "out": {"m", "e"}, "mask": set(), "sink": set()}

_MAP = re.compile(r"^\s*(?:affine_map\s*<)?\s*\(([^)]*)\)\s*->\s*\(([^)]*)\)\s*>?\s*$")


def _dim_names(r: int) -> List[str]:
    return [f"b{i}" for i in range(r)] + ["m", "n", "d", "e"]


def parse_layout(entry: Any, r: int, where: str) -> Tuple[str, ...]:
    """One operand's layout as attention dimension names (see module doc)."""
    names = _dim_names(r)
    if isinstance(entry, str):
        m = _MAP.match(entry)
        if not m:
            raise BundleError(f"{where}: cannot read layout {entry!r} "
                              "(want '(d0, ..) -> (..)' or a list)")
        domain = [x.strip() for x in m.group(1).split(",") if x.strip()]
        results = [x.strip() for x in m.group(2).split(",") if x.strip()]
        if len(domain) != r + 4:
            raise BundleError(f"{where}: map {entry!r} has {len(domain)} "
                              f"dimensions, expected {r + 4} (batch_dims={r})")
        out = []
        for x in results:
            if x not in domain:
                raise BundleError(f"{where}: map {entry!r}: result {x!r} is "
                                  "not a plain dimension")
            out.append(names[domain.index(x)])
        return tuple(out)
    if isinstance(entry, (list, tuple)):
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
                raise BundleError(f"{where}: bad layout entry {x!r} (want one "
                                  f"of {names} or a position)")
        return tuple(out)
    raise BundleError(f"{where}: bad layout {entry!r}")


def _check_dims(name: str, dims: Tuple[str, ...], rank: int,
                batch: Sequence[str], where: str) -> None:
    if len(dims) != rank:
        raise BundleError(f"{where}: '{name}' has rank {rank} but layout "
                          f"{list(dims)}")
    if len(set(dims)) != len(dims):
        raise BundleError(f"{where}: '{name}' layout {list(dims)} repeats a "
                          "dimension")
    allowed = _ALLOWED[name] | set(batch)
    bad = [x for x in dims if x not in allowed]
    if bad:
        raise BundleError(f"{where}: '{name}' layout {list(dims)} uses {bad}, "
                          f"allowed: {sorted(allowed)}")
    need = set(_REQUIRED[name]) | (set(batch) if name in ("q", "out") else set())
    missing = sorted(need - set(dims))
    if missing:
        raise BundleError(f"{where}: '{name}' layout {list(dims)} lacks "
                          f"{missing}")


def _sizes(args: Sequence[ArgSpec], batch: Sequence[str],
           where: str) -> Dict[str, int]:
    sizes: Dict[str, int] = {}
    # q/k/v/out fix the sizes; mask and sink may broadcast (size 1).
    order = sorted(args, key=lambda a: a.name in ("mask", "sink"))
    for a in order:
        for dim, size in zip(a.dims, a.shape):
            if dim not in sizes:
                sizes[dim] = size
            elif sizes[dim] != size and not (a.name in ("mask", "sink")
                                             and size == 1):
                raise BundleError(
                    f"{where}: '{a.name}' has {dim}={size} but other "
                    f"arguments have {dim}={sizes[dim]} (shape "
                    f"{list(a.shape)}, layout {list(a.dims)})")
    for dim in list(batch) + ["m", "n", "d", "e"]:
        sizes.setdefault(dim, 1)
    return sizes


def _float(x: Any, what: str, where: str) -> float:
    if isinstance(x, bool):
        raise BundleError(f"{where}: {what} must be a number, got {x!r}")
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)  # "-inf", "-Infinity", "1e-3"
        except ValueError:
            pass
    raise BundleError(f"{where}: {what} must be a number, got {x!r}")


def _int_list(x: Any, n: Optional[int], what: str, where: str,
              positive: bool) -> Tuple[int, ...]:
    if not isinstance(x, (list, tuple)) or (n is not None and len(x) != n) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in x):
        want = f"{n} integers" if n is not None else "a list of integers"
        raise BundleError(f"{where}: {what} must be {want}, got {x!r}")
    lo = 1 if positive else 0
    if any(v < lo for v in x):
        raise BundleError(f"{where}: {what} must be >= {lo}, got {x!r}")
    return tuple(x)


def parse_manifest(obj: Any, path: Optional[Path] = None) -> Manifest:
    """Validates a decoded manifest.json and returns it typed."""
    where = f"manifest {path}" if path else "manifest"
    if not isinstance(obj, dict):
        raise BundleError(f"{where}: not a JSON object")
    fmt = obj.get("format")
    if fmt != FORMAT:
        raise BundleError(f"{where}: format {fmt!r}, this loader reads {FORMAT!r}")
    for key in ("kernel", "args", "grid", "block", "attention"):
        if key not in obj:
            raise BundleError(f"{where}: missing {key!r}")
    kernel = obj["kernel"]
    if not isinstance(kernel, str) or not kernel:
        raise BundleError(f"{where}: 'kernel' must be a non-empty string")
    where = f"{where} (kernel {kernel!r})"
    ptx, cubin = obj.get("ptx"), obj.get("cubin")
    for key, val in (("ptx", ptx), ("cubin", cubin)):
        if val is not None and (not isinstance(val, str) or not val
                                or os.path.isabs(val) or ".." in Path(val).parts):
            raise BundleError(f"{where}: {key!r} must be a file name inside "
                              f"the bundle, got {val!r}")
    if ptx is None and cubin is None:
        raise BundleError(f"{where}: neither 'ptx' nor 'cubin' is given")
    chip = obj.get("chip", "")
    if not isinstance(chip, str):
        raise BundleError(f"{where}: 'chip' must be a string")
    grid = _int_list(obj["grid"], 3, "'grid'", where, positive=True)
    block = _int_list(obj["block"], 3, "'block'", where, positive=True)
    if math.prod(block) > 1024:
        raise BundleError(f"{where}: block {list(block)} has more than 1024 threads")
    shared = obj.get("shared_bytes", 0)
    if not isinstance(shared, int) or isinstance(shared, bool) or shared < 0:
        raise BundleError(f"{where}: 'shared_bytes' must be an integer >= 0, "
                          f"got {shared!r}")

    att = obj["attention"]
    if not isinstance(att, dict):
        raise BundleError(f"{where}: 'attention' must be an object")
    if "scale" not in att:
        raise BundleError(f"{where}: attention lacks 'scale'")
    scale = _float(att["scale"], "attention.scale", where)
    causal = att.get("causal", False)
    if not isinstance(causal, bool):
        raise BundleError(f"{where}: attention.causal must be true/false")
    window = att.get("window")
    if window is not None:
        if not isinstance(window, int) or isinstance(window, bool) or window < 0:
            raise BundleError(f"{where}: attention.window must be null or a "
                              f"positive integer, got {window!r}")
        if window == 0:  # convert-attn-to-gpu writes 0 for "no window"
            window = None
    mv = att.get("mask_value")
    mask_value = -math.inf if mv is None else _float(mv, "attention.mask_value", where)
    if math.isnan(mask_value):
        raise BundleError(f"{where}: attention.mask_value is NaN")

    raw_args = obj["args"]
    if not isinstance(raw_args, list) or not raw_args:
        raise BundleError(f"{where}: 'args' must be a non-empty list")
    for a in raw_args:
        if not isinstance(a, dict):
            raise BundleError(f"{where}: every entry of 'args' must be an object")
    names = [a.get("name") for a in raw_args]
    for n in names:
        if n not in ARG_NAMES:
            raise BundleError(f"{where}: unknown argument name {n!r} "
                              f"(known: {list(ARG_NAMES)})")
    if len(set(names)) != len(names):
        raise BundleError(f"{where}: argument names repeat: {names}")
    for n in ("q", "k", "v", "out"):
        if n not in names:
            raise BundleError(f"{where}: no {n!r} argument")

    r = att.get("batch_dims")
    q_shape = next(a.get("shape") for a in raw_args if a.get("name") == "q")
    if r is None and isinstance(q_shape, list):
        r = len(q_shape) - 2
    if not isinstance(r, int) or isinstance(r, bool) or r < 0:
        raise BundleError(f"{where}: attention.batch_dims must be an integer "
                          f">= 0, got {r!r}")
    batch = tuple(f"b{i}" for i in range(r))
    layouts = att.get("layout") or {}
    if not isinstance(layouts, dict):
        raise BundleError(f"{where}: attention.layout must be an object")
    for n in layouts:
        if n not in names:
            raise BundleError(f"{where}: attention.layout names {n!r}, which "
                              "is not an argument")

    args: List[ArgSpec] = []
    for a in raw_args:
        name = a["name"]
        dtype = a.get("dtype")
        if dtype not in DTYPES:
            raise BundleError(f"{where}: '{name}' has dtype {dtype!r} "
                              f"(known: {list(DTYPES)})")
        if dtype == "bool" and name != "mask":
            raise BundleError(f"{where}: only 'mask' may be bool, not '{name}'")
        shape = _int_list(a.get("shape"), None, f"'{name}'.shape", where,
                          positive=False)
        if name in layouts:
            dims = parse_layout(layouts[name], r, f"{where}: layout of '{name}'")
        elif "map" in a:
            dims = parse_layout(a["map"], r, f"{where}: map of '{name}'")
        else:
            dims = _canonical_dims(name, batch)
            if len(dims) != len(shape):
                raise BundleError(
                    f"{where}: '{name}' has shape {list(shape)} (rank "
                    f"{len(shape)}) and no layout; the canonical layout "
                    f"{list(dims)} has rank {len(dims)}")
        _check_dims(name, dims, len(shape), batch, where)
        args.append(ArgSpec(name, dtype, shape, dims))
    out_dt = next(a.dtype for a in args if a.name == "out")
    if out_dt == "bool":
        raise BundleError(f"{where}: 'out' cannot be bool")

    m = Manifest(kernel=kernel, chip=chip, ptx=ptx, cubin=cubin,
                 args=tuple(args), grid=grid, block=block, shared_bytes=shared,
                 attention=AttentionSpec(scale, causal, window, mask_value, r,
                                         str(att.get("kernel_choice") or "")),
                 path=path)
    m.sizes()  # raises on inconsistent shapes
    return m


def read_manifest(bundle_dir: Union[str, Path]) -> Manifest:
    path = Path(bundle_dir) / "manifest.json"
    try:
        text = path.read_text()
    except OSError as e:
        raise BundleError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise BundleError(f"{path}: not valid JSON: {e}") from None
    return parse_manifest(obj, path)


# ---------------------------------------------------------------------------
# Bundle files (PTX parameter check) -- still no CUDA
# ---------------------------------------------------------------------------

def ptx_entry_params(ptx: str, kernel: str) -> Optional[List[str]]:
    """The parameter types ('.u64', '.f32', ...) of `.entry kernel(...)`, or
    None when the PTX has no such entry."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(([^)]*)\)", ptx)
    if not m:
        return None
    params = []
    for p in m.group(1).split(","):
        p = p.strip()
        if not p:
            continue
        t = re.search(r"\.param\s+((?:\.\w+\s+)*?)?(\.[us]\d+|\.b\d+|\.f\d+)", p)
        params.append(t.group(2) if t else p)
    return params


@dataclass(frozen=True)
class Bundle:
    """A bundle's manifest and kernel images, read from disk."""

    dir: Path
    manifest: Manifest
    ptx: Optional[bytes]
    cubin: Optional[bytes]


def open_bundle(bundle_dir: Union[str, Path], check_params: bool = True) -> Bundle:
    """Reads and checks a bundle directory (no CUDA). With `check_params`,
    the PTX entry must take exactly one 64-bit pointer per manifest arg."""
    d = Path(bundle_dir)
    man = read_manifest(d)
    where = man._where()
    ptx = cubin = None
    if man.ptx is not None:
        p = d / man.ptx
        if p.is_file():
            ptx = p.read_bytes()
        elif man.cubin is None:
            raise BundleError(f"{where}: {p} is missing")
    if man.cubin is not None and (d / man.cubin).is_file():
        cubin = (d / man.cubin).read_bytes()
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
                f"{params}, but the manifest promises one 64-bit pointer per "
                f"argument {names} ({len(names)}); launching would pass the "
                "wrong parameters (load with check_params=False to force)")
    return Bundle(d, man, ptx, cubin)


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
    """Maps `kernel(q, k, v, [mask], [sink], out=None)` call arguments to
    manifest names; `out` is None when not given."""
    where = man._where()
    inputs = man.inputs
    if len(args) > len(inputs):
        raise TypeError(f"{where} takes {len(inputs)} inputs {list(inputs)}, "
                        f"got {len(args)} positional arguments")
    bound: Dict[str, Any] = dict(zip(inputs, args))
    for k, v in kwargs.items():
        if k not in inputs and k != "out":
            raise TypeError(f"{where}: unexpected argument {k!r} (this kernel "
                            f"takes {list(inputs)} and out)")
        if k in bound:
            raise TypeError(f"{where}: {k!r} given twice")
        bound[k] = v
    missing = [n for n in inputs if bound.get(n) is None]
    if missing:
        raise TypeError(f"{where}: missing {missing} (this kernel takes "
                        f"{list(inputs)})")
    bound.setdefault("out", None)
    return bound


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
        if x is not None:
            check_arg(man, spec, x)


# ---------------------------------------------------------------------------
# compile(): attn-bundle
# ---------------------------------------------------------------------------

def find_attn_bundle() -> str:
    """$ATTN_BUNDLE, else build/bin/attn-bundle above this file, else PATH."""
    return find_tool("attn-bundle", "ATTN_BUNDLE")


LAUNCH_OPTIONS = ("tile_q", "tile_kv", "warps", "stages", "q_shared",
                  "rescale_threshold", "pipeline", "wgmma", "min_blocks",
                  "warp_specialize", "pingpong")


def compile(source: Union[str, Path], out_dir: Union[str, Path],
            chip: str = "sm_90a", attn_bundle: Optional[str] = None,
            launch: Optional[Mapping[str, int]] = None) -> Path:
    """Runs `attn-bundle INPUT -o OUT_DIR --chip=CHIP` and returns OUT_DIR
    (its manifest checked). `source` is a Path to an .mlir file, or a str:
    a file name when it names an existing file (and has no newline), else
    MLIR text. `launch` sets the tensor-core kernel's launch shape
    (LAUNCH_OPTIONS, e.g. {"tile_q": 128, "tile_kv": 32}; unset: the
    defaults for the head dims; {"wgmma": 0} keeps sm_90a on the mma.sync
    kernel)."""
    flags = []
    for key, value in (launch or {}).items():
        if key not in LAUNCH_OPTIONS:
            raise ValueError(f"unknown launch option {key!r} (one of "
                             f"{', '.join(LAUNCH_OPTIONS)})")
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


class Kernel:
    """A loaded bundle: `kernel(q, k, v, [mask], [sink], out=None) -> out`."""

    def __init__(self, bundle: Bundle, device: int) -> None:
        self.bundle = bundle
        self.manifest = bundle.manifest
        self.device = device
        self.load_notes: List[str] = []
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

    def __repr__(self) -> str:
        return (f"Kernel({self.manifest.kernel!r}, {self.bundle.dir}, "
                f"image={self.image}, inputs={list(self.manifest.inputs)})")

    def empty_out(self) -> Any:
        import torch
        spec = self.manifest.arg("out")
        assert spec is not None
        return torch.empty(spec.shape, dtype=getattr(torch, spec.dtype),
                           device=f"cuda:{self.device}")

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        """Checks the arguments, allocates `out` if not given, launches on
        `stream` (default: torch's current stream) and returns `out`."""
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
        if bound["out"] is None:
            bound["out"] = self.empty_out()
        check_args(man, bound)
        for spec in man.args:
            x = bound[spec.name]
            if x.device.type != "cuda" or x.device.index != self.device:
                raise BundleError(f"{man._where()}: '{spec.name}' is on "
                                  f"{x.device}, the kernel is loaded on "
                                  f"cuda:{self.device}")
        if stream is None:
            stream = torch.cuda.current_stream(self.device)
        handle = stream if isinstance(stream, int) else stream.cuda_stream
        ptrs = [ctypes.c_uint64(bound[a.name].data_ptr()) for a in man.args]
        params = (ctypes.c_void_p * len(ptrs))(*[ctypes.addressof(p) for p in ptrs])
        drv, fn, ctx = self._drv, self._function, self._ctx
        g, b, shared = man.grid, man.block, man.shared_bytes
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
        return launch, bound["out"]

    def close(self) -> None:
        if self._module:
            self._drv.make_current(self._ctx)
            self._drv.check(self._drv.lib.cuModuleUnload(self._module),
                            "cuModuleUnload")
            self._module = 0


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
