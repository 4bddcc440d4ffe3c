#!/usr/bin/env python3
"""Writes small attention programs that cover what a bundle can express and
compiles each with attn-bundle (here, where MLIR is) into
test/Integration/GPU/bundles/NAME, for run_gpu_checks.py on the GPU machine.

    python3 test/Integration/GPU/make_check_bundles.py [--out DIR] [--chip sm_90a] [--only SUBSTR[,SUBSTR...]]

Cases: f32/f16/bf16; [B,H,S,D] and [B,S,H,D] layouts; no batch dims; E != D;
ragged M, N (not multiples of the block); M != N with causal (top-left);
bool and float masks (the float one broadcast over heads); a per-head sink;
sliding windows with and without causal; a finite mask_value (fully masked
rows average V); grouped-query attention (K/V without the group dim);
score_mod regions: Gemma-2's soft-capping (f16/bf16, D = 64/128, ragged,
with and without causal), ALiBi with slopes computed from the head index,
ALiBi then soft-capping under a float mask, soft-capping with a sink (f32,
the SIMT kernel), and ALiBi + soft-capping on every tensor-core variant.
The MLIR sources go to a temporary directory (lit would take .mlir files
under test/ for tests). A case attn-bundle rejects is reported and skipped;
the exit status is 1 if any was.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MLIR_DT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "bool": "i1", "int32": "i32", "int64": "i64",
           "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2"}


@dataclass
class Case:
    dtype: str
    dims: Dict[str, int]                   # iteration dims in order: batch..., m, n, d, e
    q: Sequence[str]
    k: Sequence[str]
    v: Sequence[str]
    out: Sequence[str]
    mask: Optional[Sequence[str]] = None
    mask_dtype: str = "bool"
    sink: Optional[Sequence[str]] = None
    causal: bool = False
    window: Optional[int] = None
    mask_value: Optional[float] = None
    scale: Optional[float] = None
    query_offset: int = 0                            # bottom-right causal: N - M
    extra: List[str] = field(default_factory=list)
    flags: List[str] = field(default_factory=list)   # attn-bundle launch-shape options
    out_dtype: Optional[str] = None                  # default: dtype
    lse: bool = False                                # also write the lse result
    # score_mod operands that are runtime tensors: (dims, dtype) each; the
    # region (score_mod) takes their elements after n.
    mods: List[Tuple[Sequence[str], str]] = field(default_factory=list)
    score_mod: Optional[str] = None                  # "score_mod { ... }" (score_mod_region)
    # Paged K/V: (page size, pages): k and v become caches (b -> pages, n ->
    # slots) read through a block table [b, n / page size] (attn.page_gather).
    pages: Optional[Tuple[int, int]] = None
    # ... gathered as a program writes it (linalg.generic over whole pages
    # through the table, then a collapse of page and slot), which
    # attn-fold-page-gather turns into attn.page_gather ("b" first in k/v).
    gather_program: bool = False
    # Per-sequence key counts: the mask is attn.length_mask of an int32
    # lengths argument [b] (mask dims must be ["b", "n"]).
    kv_lens: bool = False
    # ... the mask written as the program would (arange(N) < lens[:, None]
    # as a linalg.generic), folded by attn-fold-length-mask.
    lens_program: bool = False
    # Varlen: (seqs, causal, bottom_right): the mask (dims ["m", "n"]) is
    # attn.varlen_mask of int32 tables cu_seqlens_q/_k [seqs + 1] (one
    # table for both when M == N and not bottom-right).
    varlen: Optional[Tuple[int, bool, bool]] = None
    # The harness's input pattern for the mask (reference.make_inputs'
    # mask_pattern, written to the bundle's check.json): "tiles", or
    # "equal_seqs" (varlen tables of equal lengths).
    mask_pattern: str = ""
    # FP8: V's dequantization scale (the op's value_scale); None: none.
    value_scale: Optional[float] = None
    # Runtime per-tensor scales (FP8 dequantization scales as tensors): the
    # scale is the constant times a 0-d f32 tensor divided by a tensor<1xf16>
    # element, V's scale (value_scale, default 1) times a 0-d bf16 tensor
    # (kernel arguments scale0..2, random in [0.25, 2] in the harness).
    runtime_scales: bool = False
    # Operands that are constants of the program ("mask", "sink"): random
    # data in the program text (a bool mask keeps ~80% with row 1 fully
    # masked; a float one N(0, 1) with ~10% -inf and row 1 all -inf), which
    # the bundle carries.
    constants: Tuple[str, ...] = ()


def const_text(shape: Sequence[int], dt: str, seed: int) -> str:
    """A dense literal of `shape` in MLIR element type `dt` (see
    Case.constants): nested true/false for i1, little-endian hex else."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if dt == "i1":
        keep = rng.random(shape) < 0.8
        if len(shape) >= 2:
            keep[..., 1, :] = False
        return f"dense<{nested(keep, lambda v: 'true' if v else 'false')}>"
    vals = rng.standard_normal(shape).astype(np.float32)
    if len(shape) >= 2:
        vals[rng.random(shape) < 0.1] = -np.inf
        vals[..., 1, :] = -np.inf
    if dt == "f16":
        raw = vals.astype(np.float16).tobytes()
    elif dt == "bf16":
        raw = (vals.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    else:
        raw = vals.tobytes()
    return f'dense<"0x{raw.hex().upper()}">'


def nested(a: Any, fmt: Callable[[Any], str]) -> str:
    """A numpy array as an MLIR nested-list literal body, `fmt` per element."""
    if a.ndim == 1:
        return "[" + ", ".join(fmt(v) for v in a) + "]"
    return "[" + ", ".join(nested(x, fmt) for x in a) + "]"


def const_ints(values: Any) -> str:
    """A dense i32 literal of a nested list or numpy array."""
    import numpy as np
    return f"dense<{nested(np.asarray(values), lambda v: str(int(v)))}>"


def const_cu(seqs: int, total: int, seed: int) -> Any:
    """Cumulative lengths of `seqs` random sequences (one empty) summing to
    `total`."""
    import numpy as np
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, total + 1, seqs - 1))
    if seqs > 2:
        cuts[1] = cuts[0]  # an empty sequence
    return np.concatenate([[0], cuts, [total]])


def tensor(shape_dims: Sequence[str], dims: Dict[str, int], dt: str) -> str:
    # A size of -1: a dynamic dim ("?"), given at launch.
    return ("tensor<" + "".join(("?" if dims[x] < 0 else str(dims[x])) + "x"
                                for x in shape_dims) + MLIR_DT[dt] + ">")


def gather_text(x: str, dims: List[str], sizes: Dict[str, int], psize: int,
                npages: int, dt: str, tt: str, tc: str, tl: str) -> str:
    """%x gathered from cache %{x}c by table %t as a linalg program: output
    [b, .., t, page, ..] (t before the slot dim), collapsed into keys."""
    k = dims.index("n")
    rank = len(dims) + 1
    shape = [sizes["b"]] + [sizes[d] for d in dims[1:k]] + \
        [sizes["n"] // psize, psize] + [sizes[d] for d in dims[k + 1:]]
    tg = "tensor<" + "".join(f"{n}x" for n in shape) + MLIR_DT[dt] + ">"
    loops = ", ".join(f"i{j}" for j in range(rank))
    idx = "".join(f"    %{x}i{j} = linalg.index {j if j < k else j + 1} : index\n"
                  for j in range(1, rank - 1))
    at = ", ".join([f"%{x}p"] + [f"%{x}i{j}" for j in range(1, rank - 1)])
    reassoc = ", ".join(f"[{d}, {d + 1}]" if d == k else f"[{d}]"
                        for d in range(rank) if d != k + 1)
    el = MLIR_DT[dt]
    par = ", ".join(['"parallel"'] * rank)
    return (f"  %{x}e = tensor.empty() : {tg}\n"
            f"  %{x}g = linalg.generic {{indexing_maps = [affine_map<({loops}) -> (i0, i{k})>, "
            f"affine_map<({loops}) -> ({loops})>], iterator_types = "
            f"[{par}]}}\n"
            f"      ins(%t : {tt}) outs(%{x}e : {tg}) {{\n"
            f"  ^bb0(%{x}entry: i32, %{x}out: {el}):\n"
            f"    %{x}p = arith.index_cast %{x}entry : i32 to index\n{idx}"
            f"    %{x}val = tensor.extract %{x}c[{at}] : {tc}\n"
            f"    linalg.yield %{x}val : {el}\n  }} -> {tg}\n"
            f"  %{x} = tensor.collapse_shape %{x}g [{reassoc}] : {tg} into {tl}\n")


def program(c: Case) -> str:
    it = list(c.dims)
    amap = lambda ds: f"affine_map<({', '.join(it)}) -> ({', '.join(ds)})>"  # noqa: E731
    tq, tk, tv = (tensor(x, c.dims, c.dtype) for x in (c.q, c.k, c.v))
    to = tensor(c.out, c.dims, c.out_dtype or c.dtype)
    params = [f"%q: {tq}", f"%k: {tk}", f"%v: {tv}"]
    gathers = ""
    if c.pages:
        psize, npages = c.pages
        cdims = dict(c.dims, b=npages, n=psize)
        rows = "?" if c.dims["b"] < 0 else c.dims["b"]  # a dynamic batch
        tt = f"tensor<{rows}x{c.dims['n'] // psize}xi32>"
        params = [f"%q: {tq}"]
        if "block_table" in c.constants:
            import numpy as np
            perm = np.random.default_rng(9).permutation(npages)
            count = c.dims["b"] * (c.dims["n"] // psize)
            table = np.resize(perm, count).reshape(c.dims["b"], -1)
            gathers += f"  %t = arith.constant {const_ints(table)} : {tt}\n"
        else:
            params.append(f"%t: {tt}")
        for x, dims, tl in (("k", c.k, tk), ("v", c.v, tv)):
            tc = tensor(dims, cdims, c.dtype)
            params.append(f"%{x}c: {tc}")
            if not c.gather_program:
                gathers += (f"  %{x} = attn.page_gather %{x}c[%t] seq_dim = "
                            f"{list(dims).index('b')} token_dim = "
                            f"{list(dims).index('n')} : {tc}, {tt} -> {tl}\n")
                continue
            gathers += gather_text(x, list(dims), c.dims, psize, npages, c.dtype, tt, tc, tl)
    maps = [amap(c.q), amap(c.k), amap(c.v), amap(c.out)]
    clauses = ""
    lens_op = ""
    if c.mask is not None:
        tm = tensor(c.mask, c.dims, c.mask_dtype)
        if c.varlen:
            seqs, vcausal, br = c.varlen
            tc = f"tensor<{seqs + 1}xi32>"
            shared = c.dims["m"] == c.dims["n"] and not br
            if "cu_seqlens" in c.constants:
                lens_op += (f"  %cuq = arith.constant "
                            f"{const_ints(const_cu(seqs, c.dims['m'], 11))} : {tc}\n")
                if not shared:
                    lens_op += (f"  %cuk = arith.constant "
                                f"{const_ints(const_cu(seqs, c.dims['n'], 12))} : {tc}\n")
            else:
                params.append(f"%cuq: {tc}")
                if not shared:
                    params.append(f"%cuk: {tc}")
            flags = (" causal" if vcausal else "") + (" bottom_right" if br else "")
            # Dynamic token counts: the mask's sizes from q's and k's dims.
            sizes = ""
            if c.dims["m"] < 0 or c.dims["n"] < 0:
                dyn = [f"%tok_{x}" for x in ("m", "n") if c.dims[x] < 0]
                lens_op = "  %c0 = arith.constant 0 : index\n" + "".join(
                    f"  %tok_{x} = tensor.dim %{t}, %c0 : {tt}\n"
                    for x, t, tt in (("m", "q", tq), ("n", "k", tk)) if c.dims[x] < 0)
                sizes = f" sizes({', '.join(dyn)})"
            lens_op += (f"  %mask = attn.varlen_mask %cuq, {'%cuq' if shared else '%cuk'}"
                        f"{flags}{sizes} : {tc}, {tc} -> {tm}\n")
        elif c.kv_lens:
            tl = f"tensor<{'?' if c.dims['b'] < 0 else c.dims['b']}xi32>"
            if "kv_lens" in c.constants:
                import numpy as np
                lens = np.random.default_rng(13).integers(0, c.dims["n"] + 1, c.dims["b"])
                lens[0], lens[-1] = 0, c.dims["n"]
                lens_op = f"  %lens = arith.constant {const_ints(lens)} : {tl}\n"
            else:
                params.append(f"%lens: {tl}")
                lens_op = ""
            lens_op += f"  %mask = attn.length_mask %lens : {tl} -> {tm}\n"
            if c.lens_program:
                lens_op = (
                    f"  %me = tensor.empty() : {tm}\n"
                    f"  %mask = linalg.generic {{indexing_maps = [affine_map<(b, n) -> (b)>, "
                    f"affine_map<(b, n) -> (b, n)>], iterator_types = [\"parallel\", "
                    f"\"parallel\"]}} ins(%lens : {tl}) outs(%me : {tm}) {{\n"
                    f"  ^bb0(%len: i32, %mo: i1):\n"
                    f"    %ni = linalg.index 1 : index\n"
                    f"    %n32 = arith.index_cast %ni : index to i32\n"
                    f"    %keep = arith.cmpi slt, %n32, %len : i32\n"
                    f"    linalg.yield %keep : i1\n  }} -> {tm}\n")
        elif "mask" in c.constants:
            shape = [c.dims[x] for x in c.mask]
            lens_op = (f"  %mask = arith.constant "
                       f"{const_text(shape, MLIR_DT[c.mask_dtype], 7)} : {tm}\n")
        else:
            params.append(f"%mask: {tm}")
        clauses += f" mask(%mask : {tm})"
        maps.append(amap(c.mask))
    if c.sink is not None:
        ts = tensor(c.sink, c.dims, c.dtype)
        if "sink" in c.constants:
            lens_op += (f"  %sink = arith.constant "
                        f"{const_text([c.dims[x] for x in c.sink], MLIR_DT[c.dtype], 8)}"
                        f" : {ts}\n")
        else:
            params.append(f"%sink: {ts}")
        clauses += f" sink(%sink : {ts})"
        maps.append(amap(c.sink))
    if c.mods:
        tms = [tensor(d, c.dims, dt) for d, dt in c.mods]
        names = [f"%mod{i}" for i in range(len(c.mods))]
        for i, (n, t) in enumerate(zip(names, tms)):
            if f"mod{i}" in c.constants:
                shape = [c.dims[x] for x in c.mods[i][0]]
                lens_op += (f"  {n} = arith.constant "
                            f"{const_text(shape, MLIR_DT[c.mods[i][1]], 20 + i)} : {t}\n")
            else:
                params.append(f"{n}: {t}")
        clauses += f" score_mod_operands({', '.join(names)} : {', '.join(tms)})"
        maps.extend(amap(d) for d, _ in c.mods)
    rs_def = ""
    fp8 = c.dtype.startswith("float8")
    if c.runtime_scales:
        params.extend(["%qs: tensor<f32>", "%ks: tensor<1xf16>"]
                      + (["%vsc: tensor<bf16>"] if fp8 else []))
        rs_def = ("  %rs_c0 = arith.constant 0 : index\n"
                  "  %rs_q = tensor.extract %qs[] : tensor<f32>\n"
                  "  %rs_k16 = tensor.extract %ks[%rs_c0] : tensor<1xf16>\n"
                  "  %rs_k = arith.extf %rs_k16 : f16 to f32\n"
                  "  %rs_s1 = arith.mulf %s0, %rs_q : f32\n"
                  "  %s = arith.divf %rs_s1, %rs_k : f32\n")
        if fp8:  # value_scale: FP8 only
            rs_def += ("  %rs_v16 = tensor.extract %vsc[] : tensor<bf16>\n"
                       "  %rs_v = arith.extf %rs_v16 : bf16 to f32\n")
    params.append(f"%o: {to}")
    attrs = ("causal " if c.causal else "") + \
        (f"window = {c.window} " if c.window else "") + \
        (f"query_offset = {c.query_offset} " if c.query_offset else "") + \
        (f"mask_value = {c.mask_value!r} " if c.mask_value is not None else "")
    scale = c.scale if c.scale is not None else 1.0 / math.sqrt(c.dims["d"])
    region = f" {c.score_mod}" if c.score_mod else ""
    # The lse result: out's dims without e, in out's order, f32.
    results, lhs = to, "%r"
    if c.lse:
        results += ", " + tensor([x for x in c.out if x != "e"], c.dims, "float32")
        lhs = "%r, %l"
    vs_def, vs_clause = "", ""
    if c.value_scale is not None or (c.runtime_scales and fp8):
        vs = c.value_scale if c.value_scale is not None else 1.0
        vs_def = f"  %vs{'0' if c.runtime_scales else ''} = arith.constant {vs!r} : f32\n"
        if c.runtime_scales:
            vs_def += "  %vs = arith.mulf %vs0, %rs_v : f32\n"
        vs_clause = " value_scale(%vs)"
    return f"""func.func @attention({', '.join(params)}) -> {to} {{
  %s{'0' if c.runtime_scales else ''} = arith.constant {scale!r} : f32
{rs_def}{vs_def}{gathers}{lens_op}  {lhs} = attn.attention ins(%q, %k, %v : {tq}, {tk}, {tv}) scale(%s){vs_clause}{clauses}
      outs(%o : {to}) {attrs}indexing_maps = [{', '.join(maps)}]{region} -> {results}
  return %r : {to}
}}
"""


# score_mod regions. A step maps the SSA name of its input score to (lines,
# the name of its output); names are prefixed per step, so each step is used
# at most once in a region. Block arguments: %score, %b0.. (one per batch
# dim, in iteration order), %m, %n.
Step = Callable[[str], Tuple[List[str], str]]


def softcap(cap: float) -> Step:
    """Gemma-2's logit soft-capping: cap * tanh(x / cap)."""
    def step(x: str) -> Tuple[List[str], str]:
        return [f"%cap = arith.constant {float(cap)!r} : f32",
                f"%cap_d = arith.divf {x}, %cap : f32",
                "%cap_t = math.tanh %cap_d : f32",
                "%cap_y = arith.mulf %cap_t, %cap : f32"], "%cap_y"
    return step


def _plus_slope_times_distance(p: str, slope: str, x: str) -> Tuple[List[str], str]:
    """x + slope * (n - m), names prefixed with `p`."""
    return [f"%{p}_d = arith.subi %n, %m : index",
            f"%{p}_d64 = arith.index_cast %{p}_d : index to i64",
            f"%{p}_df = arith.sitofp %{p}_d64 : i64 to f32",
            f"%{p}_bias = arith.mulf {slope}, %{p}_df : f32",
            f"%{p}_y = arith.addf {x}, %{p}_bias : f32"], f"%{p}_y"


def _alibi_slope(heads: int, head: str) -> List[str]:
    """%al_slope = exp2(-8 (h + 1) / H) from the head index (no table)."""
    return [f"%al_h = arith.index_cast {head} : index to i64",
            "%al_1 = arith.constant 1 : i64",
            "%al_h1 = arith.addi %al_h, %al_1 : i64",
            "%al_hf = arith.sitofp %al_h1 : i64 to f32",
            "%al_m8 = arith.constant -8.0 : f32",
            "%al_e0 = arith.mulf %al_hf, %al_m8 : f32",
            f"%al_nh = arith.constant {float(heads)!r} : f32",
            "%al_e = arith.divf %al_e0, %al_nh : f32",
            "%al_slope = math.exp2 %al_e : f32"]


def alibi(heads: int, head: str = "%b1") -> Step:
    """ALiBi: x + slope * (n - m), slope = exp2(-8 (h + 1) / H) computed from
    the head index (no table)."""
    def step(x: str) -> Tuple[List[str], str]:
        lines, y = _plus_slope_times_distance("al", "%al_slope", x)
        return _alibi_slope(heads, head) + lines, y
    return step


def alibi_abs(heads: int, head: str = "%b1", mpt: bool = False) -> Step:
    """Non-causal ALiBi, x - slope |n - m| (FlashAttention's alibi_slopes;
    the slope as in alibi()). `mpt`: MPT's spelling, slope * -(|n - m|),
    the absolute value taken on the integer distance."""
    def step(x: str) -> Tuple[List[str], str]:
        lines = ["%aa_d = arith.subi %n, %m : index",
                 "%aa_d64 = arith.index_cast %aa_d : index to i64"]
        if mpt:
            lines += ["%aa_a = math.absi %aa_d64 : i64",
                      "%aa_af = arith.sitofp %aa_a : i64 to f32",
                      "%aa_n = arith.negf %aa_af : f32",
                      "%aa_b = arith.mulf %al_slope, %aa_n : f32"]
        else:
            lines += ["%aa_df = arith.sitofp %aa_d64 : i64 to f32",
                      "%aa_a = math.absf %aa_df : f32",
                      "%aa_p = arith.mulf %al_slope, %aa_a : f32",
                      "%aa_b = arith.negf %aa_p : f32"]
        return (_alibi_slope(heads, head) + lines
                + [f"%aa_y = arith.addf {x}, %aa_b : f32"]), "%aa_y"
    return step


def key_slope(slope: float) -> Step:
    """x + slope * (n - m) with a constant slope."""
    def step(x: str) -> Tuple[List[str], str]:
        lines, y = _plus_slope_times_distance("ks", "%ks_c", x)
        return [f"%ks_c = arith.constant {float(slope)!r} : f32"] + lines, y
    return step


# ALiBi as (m - n) times a per-head slope read from a score_mod operand.
ALIBI_MN_SLOPES = """score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %sl: f32):
        %d = arith.subi %m, %n : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %df, %sl : f32
        %y = arith.addf %bias, %x : f32
        attn.yield %y : f32
      }"""


# Non-causal ALiBi as attn_opt.dense_attention(alibi_slopes=) writes it:
# -slope |n - m|, the slope per (head) read from a score_mod operand.
ALIBI_ABS_SLOPES = """score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %sl: f32):
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %a = math.absf %df : f32
        %p = arith.mulf %sl, %a : f32
        %b = arith.negf %p : f32
        %y = arith.addf %x, %b : f32
        attn.yield %y : f32
      }"""


# The score times 1 + n / 1000 ([T, H, D] layout: %b0 the head, %n the
# key's packed position).
VARLEN_KEY_SCALED = """score_mod {
      ^bb0(%x: f32, %b0: index, %m: index, %n: index):
        %n64 = arith.index_cast %n : index to i64
        %nf = arith.sitofp %n64 : i64 to f32
        %ks = arith.constant 0.001 : f32
        %one = arith.constant 1.0 : f32
        %w = arith.mulf %nf, %ks : f32
        %w1 = arith.addf %w, %one : f32
        %y = arith.mulf %x, %w1 : f32
        attn.yield %y : f32
      }"""


def score_mod_region(num_batch: int, *steps: Step) -> str:
    """The region text (`score_mod { ... }`) applying `steps` in order."""
    args = ["%score: f32"] + [f"%b{i}: index" for i in range(num_batch)] + \
        ["%m: index", "%n: index"]
    lines, x = [], "%score"
    for st in steps:
        more, x = st(x)
        lines += more
    body = "".join(f"        {line}\n" for line in lines + [f"attn.yield {x} : f32"])
    return f"score_mod {{\n      ^bb0({', '.join(args)}):\n{body}      }}"


def shift_v(*extra: str, stages: int = 2) -> List[str]:
    """attn-bundle flags for the warp-specialized pipelined kernel with V a
    tile behind K (shift-v), `stages` stages, plus `extra`."""
    return ["--warp-specialize=1", "--pipeline=1", f"--stages={stages}",
            "--shift-v=1", *extra]


def bhsd(b: int, h: int, m: int, n: int, d: int, e: Optional[int] = None) -> Dict:
    return dict(dims={"b": b, "h": h, "m": m, "n": n, "d": d, "e": e or d},
                q=["b", "h", "m", "d"], k=["b", "h", "n", "d"],
                v=["b", "h", "n", "e"], out=["b", "h", "m", "e"])


def thd(h: int, tq: int, tk: int, d: int) -> Dict:
    """Packed varlen layout: q/out [T, H, D], k/v [T, H, D]; mask (m, n)."""
    return dict(dims={"h": h, "m": tq, "n": tk, "d": d, "e": d},
                q=["m", "h", "d"], k=["n", "h", "d"], v=["n", "h", "e"],
                out=["m", "h", "e"], mask=["m", "n"])


def b_only(b: int, m: int, n: int, d: int, e: Optional[int] = None) -> Dict:
    return dict(dims={"b": b, "m": m, "n": n, "d": d, "e": e or d},
                q=["b", "m", "d"], k=["b", "n", "d"], v=["b", "n", "e"],
                out=["b", "m", "e"])


# The persistent warp-specialized kernel (launch flags).
PERSIST = ["--warp-specialize=1", "--pipeline=1", "--tile-kv=128", "--stages=3",
           "--persistent=1"]

# Three computing warpgroups and a producer, pipelined, 128-key tiles.
W12_WS = ["--warps=12", "--warp-specialize=1", "--pipeline=1", "--stages=3",
          "--tile-kv=128"]

# The persistent warp-specialized kernel, forced.
WS_PERSISTENT = ["--warp-specialize=1", "--pipeline=1", "--persistent=1"]

CASES: Dict[str, Case] = {
    "f16_bhsd_causal": Case("float16", **bhsd(2, 4, 100, 100, 64), causal=True),
    "f16_bhsd_full": Case("float16", **bhsd(2, 4, 200, 200, 64)),
    "bf16_ragged_e32": Case("bfloat16", **b_only(2, 33, 47, 64, 32)),
    "f32_bhsd": Case("float32", **bhsd(2, 2, 130, 70, 32)),
    "f32_bshd": Case("float32", dims={"b": 2, "h": 3, "m": 77, "n": 77, "d": 32, "e": 32},
                     q=["b", "m", "h", "d"], k=["b", "n", "h", "d"],
                     v=["b", "n", "h", "e"], out=["b", "m", "h", "e"], causal=True),
    "f32_nobatch": Case("float32", dims={"m": 200, "n": 150, "d": 64, "e": 64},
                        q=["m", "d"], k=["n", "d"], v=["n", "e"], out=["m", "e"]),
    "f16_boolmask": Case("float16", **b_only(2, 33, 47, 64), mask=["b", "m", "n"]),
    # A runtime score_mod tensor on the SIMT kernel: a weight per (b, n).
    "f32_mod_arg_bn": Case("float32", **b_only(2, 40, 50, 32), mods=[(["b", "n"], "float32")],
                           score_mod="""score_mod {
      ^bb0(%x: f32, %b0: index, %m: index, %n: index, %w: f32):
        %y = arith.mulf %x, %w : f32
        attn.yield %y : f32
      }"""),
    # The lse on the SIMT kernel (f32), causal with a bool mask.
    "f32_lse_causal_boolmask": Case("float32", **b_only(2, 40, 50, 32), causal=True,
                                    mask=["b", "m", "n"], lse=True),
    "f16_floatmask_over_heads": Case("float16", **bhsd(2, 4, 100, 120, 64),
                                     mask=["b", "m", "n"], mask_dtype="float16"),
    "f32_sink_per_head_causal": Case("float32", **bhsd(2, 4, 64, 64, 32),
                                     sink=["h"], causal=True),
    "bf16_sink_per_row": Case("bfloat16", **bhsd(1, 2, 90, 90, 64), sink=["b", "h", "m"]),
    "f16_window_causal": Case("float16", **bhsd(1, 2, 300, 300, 64), causal=True, window=37),
    "f16_window": Case("float16", **bhsd(1, 2, 300, 300, 64), window=50),
    "f32_boolmask_finite_fill": Case("float32", **b_only(2, 40, 50, 32),
                                     mask=["b", "m", "n"], mask_value=-3.4028234663852886e38),
    "f32_causal_window_finite_fill": Case("float32", **bhsd(1, 2, 70, 70, 32), causal=True,
                                          window=9, mask_value=-1.0e9),
    "f16_gqa_causal": Case("float16", dims={"b": 2, "h": 2, "g": 4, "m": 64, "n": 80,
                                            "d": 64, "e": 64},
                           q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                           v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                           causal=True),
    "f16_causal_m_lt_n": Case("float16", **bhsd(1, 2, 64, 300, 64), causal=True),
    "bf16_causal_1k_d128": Case("bfloat16", **bhsd(1, 8, 1024, 1024, 128), causal=True),
    "f16_scale_1": Case("float16", **bhsd(1, 2, 128, 128, 64), scale=1.0),
    # Ragged N from the issue (not multiples of the 64-key tile), causal.
    "f16_ragged_n1000_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True),
    "bf16_ragged_n4097_d128": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128)),
    # Large logits (scores ~ +-500): beyond f16's exp range, the running max's job.
    "f16_large_logits": Case("float16", **bhsd(1, 2, 256, 256, 64), scale=8.0),
    # Head dims that are not multiples of 32 (D = 48: odd k-step count;
    # E = 16: one ldmatrix.trans per 16 keys).
    "f16_d48_e16_causal": Case("float16", **b_only(2, 70, 90, 48, 16), causal=True),
    # f16 inputs accumulating into f32 (takes the SIMT kernel).
    "f16_in_f32_out_causal": Case("float16", **bhsd(1, 2, 100, 120, 64), causal=True,
                                  out_dtype="float32"),
    # A negative scale: the row max is taken after scaling (no folding).
    "f16_negative_scale_causal": Case("float16", **bhsd(1, 2, 150, 150, 64), causal=True,
                                      scale=-0.125),
    # A negative scale on the warp-specialized kernels (D = 128: pipelined
    # ping-pong, persistent at N = 1024) and the mma.sync one.
    "bf16_negative_scale_d128_n1024": Case("bfloat16", **bhsd(1, 4, 1024, 1024, 128),
                                           scale=-0.09),
    "f16_negative_scale_d128_causal_ragged": Case("float16", **bhsd(2, 2, 700, 700, 128),
                                                  causal=True, scale=-0.1),
    "f16_negative_scale_mma": Case("float16", **bhsd(1, 2, 300, 300, 64), scale=-0.125,
                                   flags=["--wgmma=0"]),
    # mma.sync launch shapes other than the default (--tile-q, --tile-kv,
    # --warps, --stages, --q-shared; --wgmma=0 keeps sm_90a on mma.sync):
    # every code path of that kernel builder.
    "f16_q128_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                   flags=["--wgmma=0", "--tile-q=128"]),
    "bf16_q128_kv32_d128_ragged": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                       flags=["--wgmma=0", "--tile-q=128", "--tile-kv=32"]),
    "f16_q128_qshared_d128_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 128), causal=True,
                                         flags=["--wgmma=0", "--tile-q=128", "--q-shared=1"]),
    "bf16_s3_kv32_causal_m_lt_n": Case("bfloat16", **bhsd(1, 2, 64, 300, 64), causal=True,
                                       flags=["--wgmma=0", "--stages=3", "--tile-kv=32"]),
    "f16_s4_kv128_window": Case("float16", **bhsd(1, 2, 300, 300, 64), window=50,
                                flags=["--wgmma=0", "--stages=4", "--tile-kv=128"]),
    "f16_w8_q128_gqa": Case("float16", dims={"b": 2, "h": 2, "g": 4, "m": 100, "n": 80,
                                             "d": 64, "e": 64},
                            q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                            v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                            causal=True, flags=["--wgmma=0", "--warps=8", "--tile-q=128"]),
    "bf16_w2_q64_kv16_e32": Case("bfloat16", **b_only(2, 33, 47, 64, 32),
                                 flags=["--wgmma=0", "--warps=2", "--tile-q=64",
                                        "--tile-kv=16"]),
    # The classic every-tile rescale (lazy rescaling off).
    "f16_rescale_every_tile_causal": Case("float16", **bhsd(1, 2, 500, 500, 64), causal=True,
                                          flags=["--wgmma=0", "--rescale-threshold=0"]),
    # Lazy rescaling with a threshold of 1 (rescales often) on large logits.
    "bf16_rescale_t1_large_logits": Case("bfloat16", **bhsd(1, 2, 300, 300, 128), scale=6.0,
                                         flags=["--wgmma=0", "--rescale-threshold=1"]),
    # Software-pipelined tile loop (S of tile t + 1 before softmax of t):
    # ragged, causal, no visible key for whole blocks (window, M > N), one
    # tile only (the tail alone), GQA, 4 stages, D = 128.
    "f16_pipe_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                   flags=["--wgmma=0", "--pipeline=1"]),
    "bf16_pipe_d128_ragged": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                  flags=["--wgmma=0", "--pipeline=1"]),
    "f16_pipe_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                                   flags=["--wgmma=0", "--pipeline=1", "--tile-kv=32"]),
    "f16_pipe_one_tile": Case("float16", **bhsd(2, 2, 40, 20, 64),
                              flags=["--wgmma=0", "--pipeline=1"]),
    "f16_pipe_gqa_causal_s4": Case("float16", dims={"b": 2, "h": 2, "g": 4, "m": 64, "n": 300,
                                                    "d": 64, "e": 64},
                                   q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                                   v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                                   causal=True, flags=["--wgmma=0", "--pipeline=1", "--stages=4",
                                                       "--tile-kv=32"]),
    "f16_q128_bshd_large_logits": Case("float16", dims={"b": 2, "h": 3, "m": 200, "n": 200,
                                                        "d": 128, "e": 128},
                                       q=["b", "m", "h", "d"], k=["b", "n", "h", "d"],
                                       v=["b", "n", "h", "e"], out=["b", "m", "h", "e"],
                                       scale=4.0,
                                       flags=["--wgmma=0", "--tile-q=128", "--tile-kv=32"]),
    # The mma.sync kernel's defaults on shapes the wgmma kernel takes on
    # sm_90a (the kernel an sm_80 bundle gets).
    "mma_f16_bhsd_causal": Case("float16", **bhsd(2, 4, 100, 100, 64), causal=True,
                                flags=["--wgmma=0"]),
    "mma_bf16_ragged_n4097_d128": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                       flags=["--wgmma=0"]),
    # wgmma launch shapes other than the default (8 warps, 128-key tiles,
    # 2 stages): one and three warpgroups, 64/32-key tiles, 3-4 stages,
    # every-tile rescale, mixed head dims (one V panel, two Q/K panels and
    # the reverse), GQA, window, ragged, M < N and M > N.
    "wg_w4_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                flags=["--wgmma=1", "--warps=4"]),
    "wg_w12_kv64_bf16_d128": Case("bfloat16", **bhsd(1, 2, 1000, 1000, 128),
                                  flags=["--wgmma=1", "--warps=12", "--tile-kv=64"]),
    "wg_kv32_s3_causal_m_lt_n": Case("bfloat16", **bhsd(1, 2, 64, 300, 64), causal=True,
                                     flags=["--wgmma=1", "--tile-kv=32", "--stages=3"]),
    "wg_s4_kv64_window": Case("float16", **bhsd(1, 2, 300, 300, 128), window=50,
                              flags=["--wgmma=1", "--stages=4", "--tile-kv=64"]),
    "wg_rescale_every_tile_large_logits": Case("bfloat16", **bhsd(1, 2, 300, 300, 128),
                                               scale=6.0,
                                               flags=["--wgmma=1", "--rescale-threshold=0"]),
    "wg_d64_e128_causal": Case("float16", **b_only(2, 200, 260, 64, 128), causal=True,
                               flags=["--wgmma=1"]),
    "wg_d128_e64_ragged": Case("bfloat16", **b_only(2, 130, 333, 128, 64),
                               flags=["--wgmma=1"]),
    "wg_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                             flags=["--wgmma=1", "--tile-kv=64"]),
    "wg_gqa_causal_d128": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 100, "n": 300,
                                                 "d": 128, "e": 128},
                               q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                               v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                               causal=True, flags=["--wgmma=1"]),
    "wg_one_tile": Case("float16", **bhsd(2, 2, 40, 20, 64), flags=["--wgmma=1"]),
    # Head dims other than 64/128 on wgmma (64-column panels, the last one
    # partly used): 16/48, 32, 80, 96 (with a staged bias), MLA's 192/128,
    # Gemma's 256; ragged, causal.
    "wg_d16_e48": Case("float16", **b_only(2, 70, 90, 16, 48), flags=["--wgmma=1"]),
    "wg_d32_causal": Case("bfloat16", **bhsd(1, 3, 200, 200, 32), causal=True,
                          flags=["--wgmma=1"]),
    "wg_d80_ragged": Case("float16", **bhsd(1, 2, 333, 333, 80), flags=["--wgmma=1"]),
    "wg_d96_causal_bias": Case("bfloat16", **bhsd(1, 2, 300, 320, 96), causal=True,
                               mask=["b", "h", "m", "n"], mask_dtype="float32",
                               flags=["--wgmma=1"]),
    "wg_d192_e128_causal": Case("bfloat16", **bhsd(1, 2, 300, 300, 192, 128), causal=True,
                                flags=["--wgmma=1"]),
    "wg_d256_causal_ragged": Case("float16", **bhsd(1, 2, 1000, 1000, 256), causal=True,
                                  flags=["--wgmma=1"]),
    "wg_d256_large_logits": Case("bfloat16", **bhsd(1, 2, 300, 300, 256), scale=4.0,
                                 flags=["--wgmma=1"]),
    # Past D = 128 without a mask tensor: 48-key tiles, three stages, the
    # pipelined ping-pong loop, persistent blocks to N = 8192 (a block per
    # query tile past it): a sink with soft-capping, N past 8192 ragged,
    # bottom-right causal, MLA with the lse, a dynamic batch and lengths.
    "wg_d256_softcap_sink": Case("bfloat16", **bhsd(2, 2, 700, 700, 256), causal=True,
                                 sink=["h"], score_mod=score_mod_region(2, softcap(30.0))),
    "wg_d256_long_ragged": Case("float16", **bhsd(1, 2, 130, 9001, 256)),
    "wg_d256_br_causal": Case("float16", **bhsd(1, 2, 300, 1000, 256), causal=True,
                              query_offset=700),
    "wg_d192_e128_lse": Case("bfloat16", **bhsd(1, 2, 500, 777, 192, 128), lse=True),
    # Persistent blocks past D = 128 running several query tiles each (192
    # and 224 tiles over 132 blocks; the narrow descriptors, log step 158).
    "wg_d256_persist_multi_causal": Case("bfloat16", **bhsd(2, 8, 1500, 1500, 256),
                                         causal=True),
    "wg_d256_persist_multi_ragged": Case("float16", **bhsd(4, 4, 1700, 1900, 256),
                                         scale=0.3),
    # Persistent past N = 8192 at D = 96/128 without a mask tensor or
    # region (log step 163): ragged, a sink, JAX's finite fill.
    "wg_persist_long_causal_f16": Case("float16", **bhsd(1, 3, 8400, 8400, 128),
                                       causal=True),
    "wg_persist_long_d96_sink_bf16": Case("bfloat16", **bhsd(2, 2, 9000, 9000, 96),
                                          sink=["h"]),
    "wg_persist_long_finite_fill_causal": Case("float16", **bhsd(1, 3, 8300, 8300, 128),
                                               causal=True, mask_value=-65504.0),
    "wg_d256_persist_long_causal": Case("bfloat16", **bhsd(1, 4, 8700, 8700, 256),
                                        causal=True),
    "wg_d192_e128_persist_multi": Case("float16", **bhsd(2, 8, 1500, 1500, 192, 128),
                                       causal=True),
    "dyn_f16_d256_causal": Case("float16", **bhsd(-1, 2, -1, -1, 256), causal=True),
    # Bottom-right causal (chunked prefill: M new queries after N - M cached
    # keys, query m at key m + N - M) on every kernel: with a window, a
    # finite fill, the warp-specialized and mma.sync kernels, a staged bias,
    # and SIMT (f32).
    "br_causal_f16": Case("float16", **bhsd(1, 4, 300, 1000, 64), causal=True,
                          query_offset=700),
    "br_causal_window_bf16": Case("bfloat16", **bhsd(1, 2, 200, 333, 128), causal=True,
                                  window=64, query_offset=133),
    "br_causal_fill_mma": Case("float16", **bhsd(1, 2, 100, 260, 64), causal=True,
                               query_offset=160, mask_value=-2.0, flags=["--wgmma=0"]),
    "br_causal_ws_pp": Case("bfloat16", **bhsd(1, 2, 500, 4097, 128), causal=True,
                            query_offset=3597,
                            flags=["--warp-specialize=1", "--pipeline=1", "--pingpong=1"]),
    "br_causal_bias_staged": Case("float16", **bhsd(1, 2, 100, 320, 64), causal=True,
                                  query_offset=220, mask=["b", "h", "m", "n"],
                                  mask_dtype="float32",
                                  flags=["--warp-specialize=1", "--pipeline=1",
                                         "--tile-kv=64"]),
    "br_causal_f32": Case("float32", **bhsd(1, 2, 70, 130, 32), causal=True,
                          query_offset=60),
    "br_causal_f32_simt": Case("float32", **bhsd(1, 2, 70, 130, 32), causal=True,
                               query_offset=60, flags=["--f32-precision=ieee"]),
    # The wgmma kernel's pipelined loop (S of tile t with P V of tile t - 1
    # in flight): the first tile alone, ragged, causal, no visible key for
    # whole blocks, GQA with 4 stages, lazy and every-tile rescaling on
    # large logits.
    "wg_pipe_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                  flags=["--wgmma=1", "--pipeline=1"]),
    "wg_pipe_d128_kv32_ragged": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                     flags=["--wgmma=1", "--pipeline=1", "--tile-kv=32"]),
    "wg_pipe_one_tile": Case("float16", **bhsd(2, 2, 40, 20, 64),
                             flags=["--wgmma=1", "--pipeline=1"]),
    "wg_pipe_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                                  flags=["--wgmma=1", "--pipeline=1", "--tile-kv=64"]),
    "wg_pipe_gqa_causal_s4": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 100,
                                                    "n": 300, "d": 128, "e": 128},
                                  q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                                  v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                                  causal=True,
                                  flags=["--wgmma=1", "--pipeline=1", "--stages=4",
                                         "--tile-kv=64"]),
    "wg_pipe_rescale_every_tile_large_logits": Case(
        "bfloat16", **bhsd(1, 2, 300, 300, 128), scale=6.0,
        flags=["--wgmma=1", "--pipeline=1", "--rescale-threshold=0"]),
    "wg_pipe_t1_large_logits_causal": Case("float16", **bhsd(1, 2, 500, 500, 64), scale=8.0,
                                           causal=True,
                                           flags=["--wgmma=1", "--pipeline=1",
                                                  "--rescale-threshold=1", "--tile-kv=64"]),
    # The warp-specialized wgmma kernel (a producer warpgroup streams Q/K/V
    # in on mbarriers): ragged, causal, windows with blocks that see no key,
    # one tile, one and three computing warpgroups, 2-4 stages, GQA, mixed
    # head dims, every-tile rescaling on large logits.
    # The mask tile in the K/V ring (the producer copies it ahead with K
    # and V): the default launch of a bias at N = 4096 (ragged M), a bool
    # mask with fully masked rows on the non-pipelined loop, ragged N.
    "wg_ws_ring_bias_default": Case("float16", **bhsd(1, 2, 1000, 4096, 128),
                                    mask=["h", "m", "n"], mask_dtype="float16"),
    # Three computing warpgroups with the bias ring (the default from
    # N = 4096 where it fits): bf16, a bias per batch entry, ragged M.
    "wg_ws_ring_w12_bias_bf16": Case("bfloat16", **bhsd(2, 2, 700, 4160, 128),
                                     mask=["b", "m", "n"], mask_dtype="bfloat16"),
    # Q/K/V by TMA on the default path (warp-specialized from N = 1024):
    # D = 96 (the second 64-column box half outside the tensor, zero-filled),
    # causal with a ragged N; GQA with K/V [b, n, h, d] (a 4-d box over the
    # seq-major layout), non-causal bf16; D = 80 causal with the lse and a
    # sink, ragged M.
    "wg_ws_tma_d96_causal_n1500": Case("float16", **bhsd(1, 2, 1300, 1500, 96),
                                       causal=True),
    "wg_ws_tma_gqa_bshd_n2000": Case("bfloat16", dims={"b": 2, "h": 2, "g": 2,
                                                       "m": 700, "n": 2000,
                                                       "d": 128, "e": 128},
                                     q=["b", "m", "h", "g", "d"],
                                     k=["b", "n", "h", "d"], v=["b", "n", "h", "e"],
                                     out=["b", "m", "h", "g", "e"]),
    "wg_ws_tma_d80_causal_sink_lse": Case("bfloat16", **bhsd(2, 2, 1100, 1100, 80),
                                          causal=True, sink=["h"], lse=True),
    # Persistent blocks (more query tiles than blocks: each block loops,
    # taking tiles from the counter; run twice, so the counter's reset is
    # checked too): causal and ragged (longest-first groups), non-causal
    # bf16 with 640 tiles, a sink and the lse per head at D = 96, a bias
    # per head in the K/V ring, ALiBi (a per-head value computed per tile),
    # GQA with K/V [b, n, h, d]; the output as 16-byte groups (16-bit, e a
    # multiple of 32) or as pairs (D = 80).
    "wg_persist_causal_ragged": Case("float16", **bhsd(4, 8, 1100, 1100, 128),
                                     causal=True, flags=PERSIST),
    "wg_persist_full_bf16_640": Case("bfloat16", **bhsd(8, 16, 600, 700, 128),
                                     flags=PERSIST),
    "wg_persist_d96_causal_sink_lse": Case("bfloat16", **bhsd(4, 8, 700, 900, 96),
                                           causal=True, sink=["h"], lse=True,
                                           flags=PERSIST),
    "wg_persist_ring_bias_causal": Case("float16", **bhsd(2, 8, 1000, 1100, 128),
                                        mask=["h", "m", "n"], mask_dtype="float16",
                                        causal=True,
                                        flags=PERSIST[:2] + ["--tile-kv=64", "--stages=3",
                                                             "--persistent=1"]),
    "wg_persist_alibi_causal_h8": Case("bfloat16", **bhsd(4, 8, 900, 900, 128),
                                       causal=True, score_mod=score_mod_region(2, alibi(8)),
                                       flags=PERSIST),
    # D = 80: the output leaves as pairs (not 32-column groups).
    "wg_persist_d80_full": Case("float16", **bhsd(4, 8, 700, 800, 80), flags=PERSIST),
    "wg_persist_gqa_bshd": Case("float16", dims={"b": 4, "h": 4, "g": 2, "m": 900,
                                                 "n": 1000, "d": 128, "e": 128},
                                q=["b", "m", "h", "g", "d"],
                                k=["b", "n", "h", "d"], v=["b", "n", "h", "e"],
                                out=["b", "m", "h", "g", "e"], flags=PERSIST),
    # Three computing warpgroups (192 rows) with a 32-register TMA producer
    # at D = 64 (forced: measured slower than the two-block kernel with TMA,
    # log step 64): ragged M and N, large logits in bf16, a short causal N
    # with the lse.
    "wg_3wg_d64_n16400": Case("float16", **bhsd(1, 2, 1000, 16400, 64), flags=W12_WS),
    "wg_3wg_d64_bf16_large_logits": Case("bfloat16", **bhsd(1, 1, 400, 16384, 64),
                                         scale=6.0, flags=W12_WS),
    "wg_3wg_d64_causal_lse_forced": Case("float16", **bhsd(2, 2, 700, 700, 64),
                                         causal=True, lse=True, flags=W12_WS),
    # The two-block kernel with TMA (tma=1): Q and each K/V tile by thread
    # 0 onto mbarriers; ragged causal with a sink and the lse, bf16 large
    # logits, D = 128 with 64-key tiles, GQA with K/V [b, n, h, d].
    "wg_2b_tma_causal_sink_lse": Case("float16", **bhsd(2, 2, 700, 900, 64),
                                      causal=True, sink=["h"], lse=True,
                                      flags=["--tma=1"]),
    "wg_2b_tma_bf16_large_logits": Case("bfloat16", **bhsd(1, 2, 300, 1000, 64),
                                        scale=6.0, flags=["--tma=1"]),
    "wg_2b_tma_d128_n500": Case("float16", **bhsd(2, 2, 333, 500, 128),
                                flags=["--tma=1"]),
    "wg_2b_tma_gqa_bshd": Case("bfloat16", dims={"b": 2, "h": 2, "g": 2, "m": 300,
                                                 "n": 700, "d": 64, "e": 64},
                               q=["b", "m", "h", "g", "d"],
                               k=["b", "n", "h", "d"], v=["b", "n", "h", "e"],
                               out=["b", "m", "h", "g", "e"], causal=True,
                               flags=["--tma=1"]),
    # A bias per head under causal in the K/V ring (ragged M and N).
    "wg_ws_ring_bias_causal": Case("float16", **bhsd(2, 2, 1500, 1700, 128),
                                   mask=["h", "m", "n"], mask_dtype="float16",
                                   causal=True,
                                   flags=["--warp-specialize=1", "--pipeline=1",
                                          "--tile-kv=64", "--stages=3"]),
    "wg_ws_ring_bool_rows_masked": Case("bfloat16", **bhsd(2, 2, 300, 333, 128),
                                        mask=["b", "h", "m", "n"],
                                        flags=["--warp-specialize=1", "--tile-kv=64"]),
    # Bool masks with whole tiles false or true (default launch: the
    # pipelined warp-specialized kernel reads them a tile ahead): key
    # padding (each batch entry's keys past a random length false: the key
    # range is trimmed to the kept keys), causal too, ragged N (1500: rows
    # not of 16-byte multiples, no trim); and a [B, M, N] mask of all-false /
    # all-true / mixed 64 x 128 blocks (not trimmed).
    "wg_ws_keypad_tiles_f16": Case("float16", **bhsd(3, 2, 1000, 2048, 128),
                                   mask=["b", "n"], mask_pattern="tiles"),
    "wg_ws_keypad_tiles_ragged_causal_bf16": Case("bfloat16",
                                                  **bhsd(2, 2, 1500, 1500, 128),
                                                  mask=["b", "n"], causal=True,
                                                  mask_pattern="tiles"),
    "wg_ws_keypad_tiles_causal_f16": Case("float16", **bhsd(2, 3, 1024, 1024, 128),
                                          mask=["b", "n"], causal=True,
                                          mask_pattern="tiles"),
    # Hugging Face's 4D mask as the recognizer reads it (padding over causal,
    # finfo.min kept as the fill): rows whose every visible key is padding
    # average V over all keys, those above the diagonal folded in after the
    # loop; bf16 on the warp-specialized kernel, f32 on 3xTF32.
    "hf_pad_causal_fill_bf16": Case("bfloat16", **bhsd(2, 4, 1100, 1100, 128),
                                    mask=["b", "n"], causal=True,
                                    mask_value=-3.3895313892515355e38),
    "hf_pad_causal_fill_f32": Case("float32", **bhsd(2, 2, 300, 300, 64),
                                   mask=["b", "n"], causal=True,
                                   mask_value=-3.4028234663852886e38),
    # D = 64: the two-block TMA kernel trims its keys too.
    "wg_2b_keypad_tiles_f16": Case("float16", **bhsd(3, 2, 700, 1024, 64),
                                   mask=["b", "n"], mask_pattern="tiles"),
    "wg_ws_boolmask_tiles_bf16": Case("bfloat16", **bhsd(2, 2, 1100, 1300, 128),
                                      mask=["b", "m", "n"], mask_pattern="tiles"),
    # A bias over (m, n) at 1024 <= N <= 8192 by default: persistent
    # blocks with the bias tile in the K/V stages (ragged M; causal).
    "wg_ws_persistent_bias_f16": Case("float16", **bhsd(2, 4, 1100, 2048, 128),
                                      mask=["h", "m", "n"], mask_dtype="float16"),
    "wg_ws_persistent_bias_causal_bf16": Case("bfloat16", **bhsd(1, 3, 1536, 1536, 128),
                                              mask=["h", "m", "n"], mask_dtype="bfloat16",
                                              causal=True),
    # V a tile behind K in each stage (shift-v; the default for a 16-bit
    # bias at D = 128, above): plain with two stages (ragged N, a block per
    # query tile), persistent causal, key padding with the trimmed key loop,
    # a bias over one key tile (the first stage's K and the last one's V
    # only) and with large logits.
    "wg_ws_shiftv_plain_s2": Case("float16", **bhsd(1, 3, 1000, 1000, 128),
                                  flags=shift_v("--persistent=0")),
    "wg_ws_shiftv_persistent_causal": Case("bfloat16", **bhsd(2, 3, 1300, 1300, 128),
                                           causal=True,
                                           flags=shift_v("--persistent=1")),
    "wg_ws_shiftv_keypad_trim": Case("float16", **bhsd(3, 2, 700, 1024, 128),
                                     mask=["b", "n"], mask_pattern="tiles",
                                     flags=shift_v("--persistent=0")),
    "wg_ws_shiftv_bias_one_tile": Case("bfloat16", **bhsd(2, 2, 300, 128, 128),
                                       mask=["b", "h", "m", "n"], mask_dtype="bfloat16",
                                       flags=shift_v("--tile-kv=128")),
    # shift-v with 64-key tiles (one 128-byte panel per mask row, by TMA)
    # and 48-key tiles (96-byte rows: padded, copied by cp.async), ragged.
    "wg_ws_shiftv_bias_kv64": Case("float16", **bhsd(1, 2, 300, 1000, 128),
                                   mask=["b", "h", "m", "n"], mask_dtype="float16",
                                   flags=shift_v("--tile-kv=64")),
    "wg_ws_shiftv_bias_kv48": Case("bfloat16", **bhsd(1, 2, 300, 1000, 128),
                                   mask=["b", "h", "m", "n"], mask_dtype="bfloat16",
                                   flags=shift_v("--tile-kv=48", stages=3)),
    # An f32 bias by TMA (32 keys per 128-byte panel): 96-key tiles, ragged
    # N, its -inf entries and finfo.min row; persistent, 64-key tiles.
    "wg_ws_shiftv_bias_f32_kv96": Case("float16", **bhsd(2, 2, 300, 1000, 128),
                                       mask=["b", "h", "m", "n"], mask_dtype="float32",
                                       flags=shift_v("--tile-kv=96")),
    "wg_ws_shiftv_bias_f32_persistent": Case("bfloat16", **bhsd(1, 3, 700, 1024, 128),
                                             mask=["h", "m", "n"], mask_dtype="float32",
                                             causal=True,
                                             flags=shift_v("--tile-kv=64", "--persistent=1", stages=3)),
    # The default for an f32 bias at D = 128 (96-key tiles by TMA,
    # persistent; ragged M and N).
    "wg_ws_shiftv_bias_f32_default": Case("bfloat16", **bhsd(2, 2, 1100, 2000, 128),
                                          mask=["b", "h", "m", "n"], mask_dtype="float32"),
    "wg_ws_shiftv_bias_large_logits": Case("float16", **bhsd(1, 2, 500, 1024, 128),
                                           mask=["m", "n"], mask_dtype="float16",
                                           scale=4.0),
    "wg_ws_ring_bias_pipe_ragged": Case("float16", **bhsd(1, 2, 257, 4099, 64),
                                        mask=["b", "m", "n"], mask_dtype="float32",
                                        flags=["--warp-specialize=1", "--pipeline=1",
                                               "--tile-kv=64", "--stages=3"]),
    "wg_ws_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                flags=["--warp-specialize=1"]),
    "wg_ws_d128_ragged_n4097": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                    flags=["--warp-specialize=1"]),
    "wg_ws_w4_kv64_s3_window": Case("float16", **bhsd(1, 2, 300, 300, 128), window=50,
                                    flags=["--warp-specialize=1", "--warps=4",
                                           "--tile-kv=64", "--stages=3"]),
    "wg_ws_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                                flags=["--warp-specialize=1", "--tile-kv=64"]),
    "wg_ws_one_tile": Case("float16", **bhsd(2, 2, 40, 20, 64),
                           flags=["--warp-specialize=1"]),
    "wg_ws_w12_d64_e128_causal": Case("float16", **b_only(2, 200, 260, 64, 128),
                                      causal=True,
                                      flags=["--warp-specialize=1", "--warps=12"]),
    "wg_ws_gqa_causal_s4": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 100,
                                                  "n": 300, "d": 128, "e": 128},
                                q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                                v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                                causal=True,
                                flags=["--warp-specialize=1", "--stages=4",
                                       "--tile-kv=64"]),
    "wg_ws_rescale_every_tile_large_logits": Case(
        "bfloat16", **bhsd(1, 2, 300, 300, 128), scale=6.0,
        flags=["--warp-specialize=1", "--stages=3", "--rescale-threshold=0"]),
    # Warp-specialized and pipelined (the consumers free tile t - 1 after
    # its P V in iteration t).
    "wg_ws_pipe_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                     flags=["--warp-specialize=1", "--pipeline=1",
                                            "--tile-kv=64"]),
    "wg_ws_pipe_kv128_n4097": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                   flags=["--warp-specialize=1", "--pipeline=1"]),
    "wg_ws_pipe_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                                     flags=["--warp-specialize=1", "--pipeline=1",
                                            "--tile-kv=64"]),
    "wg_ws_pipe_one_tile": Case("float16", **bhsd(2, 2, 40, 20, 64),
                                flags=["--warp-specialize=1", "--pipeline=1"]),
    "wg_ws_pipe_t1_large_logits_s4": Case("bfloat16", **bhsd(1, 2, 500, 500, 128),
                                          scale=8.0, causal=True,
                                          flags=["--warp-specialize=1", "--pipeline=1",
                                                 "--rescale-threshold=1", "--tile-kv=64",
                                                 "--stages=4"]),
    # ... with the two computing warpgroups taking turns (ping-pong).
    "wg_ws_pp_ragged_causal": Case("float16", **bhsd(1, 4, 1000, 1000, 64), causal=True,
                                   flags=["--warp-specialize=1", "--pipeline=1",
                                          "--pingpong=1", "--tile-kv=64"]),
    "wg_ws_pp_kv128_n4097": Case("bfloat16", **bhsd(1, 2, 4097, 4097, 128),
                                 flags=["--warp-specialize=1", "--pipeline=1",
                                        "--pingpong=1"]),
    "wg_ws_pp_window_m_gt_n": Case("float16", **bhsd(1, 2, 300, 64, 64), window=50,
                                   flags=["--warp-specialize=1", "--pipeline=1",
                                          "--pingpong=1", "--tile-kv=64"]),
    "wg_ws_pp_one_tile_large_logits": Case("bfloat16", **bhsd(2, 2, 40, 20, 128),
                                           scale=8.0, flags=["--warp-specialize=1",
                                                             "--pipeline=1",
                                                             "--pingpong=1"]),
    # score_mod regions (applied to the scaled scores before masks and
    # causal). Soft-capping at 30 with scales that put the scores at about
    # +-16 (std), where tanh bends: a kernel that skipped the region fails.
    "softcap30_f16_d64_ragged": Case("float16", **bhsd(2, 2, 200, 333, 64), scale=2.0,
                                     score_mod=score_mod_region(2, softcap(30))),
    "softcap30_f16_d64_ragged_causal": Case("float16", **bhsd(2, 2, 200, 333, 64),
                                            scale=2.0, causal=True,
                                            score_mod=score_mod_region(2, softcap(30))),
    "softcap30_bf16_d128_ragged": Case("bfloat16", **bhsd(2, 2, 200, 333, 128), scale=1.5,
                                       score_mod=score_mod_region(2, softcap(30))),
    "softcap30_bf16_d128_ragged_causal": Case("bfloat16", **bhsd(2, 2, 200, 333, 128),
                                              scale=1.5, causal=True,
                                              score_mod=score_mod_region(2, softcap(30))),
    # Past N = 8192 soft-capping takes three computing warpgroups (log step
    # 153): ragged against 192-row blocks and 128-key tiles, large logits.
    "softcap50_bf16_d128_long_causal": Case("bfloat16", **bhsd(1, 2, 8300, 8300, 128),
                                            scale=1.5, causal=True,
                                            score_mod=score_mod_region(2, softcap(50))),
    "softcap30_f16_d128_long_m_lt_n": Case("float16", **bhsd(2, 1, 333, 9001, 128), scale=2.0,
                                           score_mod=score_mod_region(2, softcap(30))),
    # ... beside a per-head sink and grouped-query K/V; with key padding (a
    # tile ahead, trimmed keys) the default keeps two warpgroups: forced.
    "softcap30_bf16_d128_long_keypad_w12": Case(
        "bfloat16", **bhsd(2, 2, 300, 9000, 128), mask=["b", "n"], mask_pattern="tiles",
        score_mod=score_mod_region(2, softcap(30)),
        flags=["--tile-q=192", "--warps=12", "--warp-specialize=1"]),
    "softcap30_bf16_d128_long_gqa": Case("bfloat16", dims={"b": 1, "h": 2, "g": 2, "m": 400,
                                                           "n": 8400, "d": 128, "e": 128},
                                         q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                                         v=["b", "h", "n", "e"],
                                         out=["b", "h", "g", "m", "e"],
                                         score_mod=score_mod_region(3, softcap(30))),
    "softcap30_f16_d128_long_sink_causal": Case("float16", **bhsd(1, 2, 8500, 8500, 128),
                                                causal=True, sink=["h"],
                                                score_mod=score_mod_region(2, softcap(30))),
    # ALiBi, slopes 2^(-8 (h + 1) / H) from the head index, causal (top left).
    "alibi_f16_d64_causal_m_lt_n": Case("float16", **bhsd(2, 4, 200, 333, 64), causal=True,
                                        score_mod=score_mod_region(2, alibi(4))),
    "alibi_bf16_d128_causal_h8": Case("bfloat16", **bhsd(1, 8, 300, 300, 128), causal=True,
                                      score_mod=score_mod_region(2, alibi(8))),
    # ALiBi then soft-capping, then a float mask broadcast over heads (its
    # -inf entries and fully masked rows come after the region).
    "alibi_softcap30_floatmask_f16": Case("float16", **bhsd(2, 4, 200, 333, 64),
                                          mask=["b", "m", "n"], mask_dtype="float16",
                                          score_mod=score_mod_region(2, alibi(4),
                                                                     softcap(30))),
    # Soft-capping with a per-head sink (the sink is not modified), f32:
    # the SIMT kernel.
    "softcap30_f32_sink_causal": Case("float32", **bhsd(2, 4, 100, 130, 32), sink=["h"],
                                      causal=True, scale=3.0,
                                      score_mod=score_mod_region(2, softcap(30))),
}

# Decode shapes (M <= 64: mma.sync with 16-row warps) and split-KV (key
# ranges over grid z, partials merged by the last block of each tile):
# split counts from the shapes and forced 1..64, ragged last ranges, ranges
# that see no key (top-left causal with M << N), bottom-right causal, a
# window narrower than the key range, a sink (counted once), the lse, GQA,
# a bool mask, soft-capping, f16/bf16, D = 64/128/256.
_gqa = dict(q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
            v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"])
CASES.update({
    "dec_f16_m1_n8192_auto": Case("float16", **bhsd(2, 8, 1, 8192, 128)),
    # 32 query tiles of 32-key tiles: ranges for 2.25 blocks per
    # multiprocessor (10 of 928 keys, the last ragged).
    "dec_f16_m1_h32_n9001_small_tiles_auto": Case("float16",
                                                  **bhsd(1, 32, 1, 9001, 128)),
    "dec_bf16_m1_n1000_s7_ragged": Case("bfloat16", **bhsd(2, 4, 1, 1000, 128),
                                        flags=["--splits=7"]),
    "dec_f16_m1_s1": Case("float16", **bhsd(2, 4, 1, 3000, 128), flags=["--splits=1"]),
    # The default decode tiles without packing (32 keys, 2 stages, from 512
    # keys per block): ragged keys at D = 64; bottom-right causal with the
    # lse, split four ways.
    "dec_bf16_m1_n4099_d64_small_tiles": Case("bfloat16", **bhsd(8, 16, 1, 4099, 64)),
    "dec_f16_m16_br_causal_lse_small_tiles": Case("float16", **bhsd(4, 16, 16, 3000, 128),
                                                  causal=True, query_offset=2984, lse=True),
    "dec_f16_m1_n4090_s64": Case("float16", **bhsd(1, 4, 1, 4090, 64), flags=["--splits=64"]),
    "split_mma_q128_n4113_s64": Case("float16", **bhsd(1, 2, 300, 4113, 64),
                                     flags=["--splits=64", "--wgmma=0"]),
    "dec_bf16_m1_kv128_s2_pipe": Case("bfloat16", **bhsd(2, 4, 1, 3000, 128),
                                      flags=["--tile-kv=128", "--stages=3", "--pipeline=1"]),
    "dec_f16_m16_br_causal_s8": Case("float16", **bhsd(2, 4, 16, 3000, 128), causal=True,
                                     query_offset=2984, flags=["--splits=8"]),
    "dec_bf16_m4_topleft_causal_s8": Case("bfloat16", **bhsd(1, 4, 4, 1000, 64), causal=True,
                                          flags=["--splits=8"]),
    "dec_f16_m5_sink_lse_s4": Case("float16", **bhsd(2, 4, 5, 777, 64), sink=["h"],
                                   lse=True, flags=["--splits=4"]),
    "dec_bf16_m1_lse_auto": Case("bfloat16", **bhsd(1, 8, 1, 5000, 128), lse=True),
    "dec_f16_gqa_m1_auto": Case("float16", dims={"b": 2, "h": 4, "g": 8, "m": 1, "n": 4000,
                                                 "d": 128, "e": 128}, **_gqa),
    # GQA packing over a full grid: one-warp blocks of short key ranges
    # take 32-key tiles and three stages, four-warp blocks 32-key tiles and
    # four (ragged N; bottom-right causal, the lse).
    "dec_f16_gqa4_m1_full_grid_n1000": Case("float16", dims={"b": 64, "h": 4, "g": 4, "m": 1,
                                                             "n": 1000, "d": 128, "e": 128},
                                            **_gqa),
    "dec_bf16_gqa4_m3_full_grid_br_lse": Case("bfloat16", dims={"b": 96, "h": 4, "g": 4, "m": 3,
                                                                "n": 2050, "d": 128, "e": 128},
                                              causal=True, query_offset=2047, lse=True, **_gqa),
    "dec_f16_gqa4_m16_full_grid_br_ragged": Case("float16", dims={"b": 96, "h": 4, "g": 4, "m": 16,
                                                                   "n": 3001, "d": 128, "e": 128},
                                                 causal=True, query_offset=2985, **_gqa),
    # GQA packing: a kv head's query heads x M queries share a block's rows.
    "dec_bf16_gqa4_m16_br_causal_lse": Case("bfloat16", dims={"b": 3, "h": 2, "g": 4, "m": 16,
                                                             "n": 2500, "d": 128, "e": 128},
                                            causal=True, query_offset=2484, lse=True, **_gqa),
    "dec_f16_gqa4_m3_ragged_s5": Case("float16", dims={"b": 2, "h": 3, "g": 4, "m": 3,
                                                       "n": 1001, "d": 64, "e": 64},
                                      flags=["--splits=5"], **_gqa),
    "dec_f16_gqa8_m5_window_br": Case("float16", dims={"b": 1, "h": 2, "g": 8, "m": 5,
                                                       "n": 3000, "d": 128, "e": 128},
                                      causal=True, window=700, query_offset=2995, **_gqa),
    # The merge in slices (log step 130): the last 8 blocks of a 16-range
    # tile merge 8 rows each (one sequence, 64 packed rows, ragged keys,
    # with the lse); 64 ranges over 32 tiles, 2048 blocks of one per
    # multiprocessor, so many finish before their tile's last range has
    # started and leave their slice to the last block; 16 one-warp-row
    # blocks (G = 1, 16 queries) in 8 slices of 2 rows.
    "dec_f16_gqa4_m16_n8190_sliced_lse": Case("float16", dims={"b": 1, "h": 8, "g": 4, "m": 16,
                                                              "n": 8190, "d": 128, "e": 128},
                                              causal=True, query_offset=8174, lse=True, **_gqa),
    "dec_bf16_gqa4_m16_s64_waves": Case("bfloat16", dims={"b": 4, "h": 8, "g": 4, "m": 16,
                                                          "n": 8000, "d": 128, "e": 128},
                                        causal=True, query_offset=7984,
                                        flags=["--splits=64", "--key-warps=2"], **_gqa),
    "dec_f16_m16_h32_n5000_sliced": Case("float16", **bhsd(1, 32, 16, 5000, 128), causal=True,
                                         query_offset=4984),
    # 128 packed tiles of 64 rows, one range each (one wave): two key warps
    # and three stages (log step 131), ragged keys.
    "dec_f16_gqa4_m16_b16_one_range": Case("float16", dims={"b": 16, "h": 8, "g": 4, "m": 16,
                                                            "n": 1500, "d": 128, "e": 128},
                                           causal=True, query_offset=1484, **_gqa),
    "dec_f16_gqa2_m1_nosplit": Case("float16", dims={"b": 4, "h": 8, "g": 2, "m": 1,
                                                     "n": 900, "d": 128, "e": 128},
                                    flags=["--splits=1"], **_gqa),
    # Paged K/V: caches read through a random block table (pages shared by
    # sequences), page sizes 16-256, decode with GQA packing and split-KV,
    # speculative bottom-right causal in vLLM's [pages, page, heads, D]
    # layout, a prefill chunk on the non-decode mma.sync kernel, a sink and
    # the lse.
    "paged_f16_gqa4_m1_p16_auto": Case("float16", dims={"b": 4, "h": 8, "g": 4, "m": 1,
                                                        "n": 1600, "d": 128, "e": 128},
                                       pages=(16, 300), **_gqa),
    # The same with soft-capping (a region that reads nothing of the group
    # index, so the query heads stay packed): Gemma-2's paged decode.
    "paged_bf16_gqa4_m1_p16_softcap": Case("bfloat16", dims={"b": 4, "h": 8, "g": 4, "m": 1,
                                                            "n": 1600, "d": 128, "e": 128},
                                           pages=(16, 300), scale=2.0,
                                           score_mod=score_mod_region(3, softcap(30)), **_gqa),
    # 16-key pages on a ragged last tile (1008 keys: 15 tiles of 64 and 48),
    # split four ways, and with 32 kv heads (no packing): the chunks' pages
    # known per row, the rows past the keys read the last key's.
    "paged_f16_m1_p16_ragged_s4": Case("float16", **bhsd(3, 4, 1, 1008, 128),
                                       pages=(16, 250), flags=["--splits=4"]),
    "paged_bf16_m4_p16_h32": Case("bfloat16", **bhsd(2, 32, 4, 2048, 128), pages=(16, 300)),
    "paged_bf16_m1_p256_s3": Case("bfloat16", **bhsd(2, 4, 1, 2048, 128), pages=(256, 20),
                                  flags=["--splits=3"]),
    "paged_f16_bshd_m16_br_causal_p32": Case(
        "float16", dims={"b": 3, "h": 4, "m": 16, "n": 960, "d": 64, "e": 64},
        q=["b", "m", "h", "d"], k=["b", "n", "h", "d"], v=["b", "n", "h", "e"],
        out=["b", "m", "h", "e"], causal=True, query_offset=944, pages=(32, 100)),
    "paged_f16_prefill_m200_p64_causal": Case("float16", **bhsd(2, 2, 200, 1024, 64),
                                              causal=True, query_offset=824,
                                              pages=(64, 40)),
    "paged_f16_gather_program_gqa_m1_p64": Case(
        "float16", dims={"b": 3, "h": 2, "g": 4, "m": 1, "n": 1024, "d": 128, "e": 128},
        pages=(64, 60), gather_program=True, **_gqa),
    "paged_bf16_m2_sink_lse_p128": Case("bfloat16", **bhsd(2, 4, 2, 1280, 128), sink=["h"],
                                        lse=True, pages=(128, 25)),
    # GQA packing with a mask that does not index the group: key padding
    # [b, n] (per-sequence lengths), a float bias per (kv head, query, key).
    "dec_f16_gqa4_m1_keypad": Case("float16", dims={"b": 4, "h": 2, "g": 4, "m": 1,
                                                    "n": 3000, "d": 128, "e": 128},
                                   mask=["b", "n"], **_gqa),
    "dec_bf16_gqa4_m3_bias_per_kv_head": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4,
                                                                "m": 3, "n": 1500, "d": 64,
                                                                "e": 64},
                                              mask=["b", "h", "m", "n"], mask_dtype="float32",
                                              **_gqa),
    "paged_f16_gqa8_m2_keypad_br_causal": Case("float16", dims={"b": 3, "h": 2, "g": 8, "m": 2,
                                                                "n": 2048, "d": 128, "e": 128},
                                               mask=["b", "n"], causal=True, query_offset=2046,
                                               pages=(64, 100), **_gqa),
    # Paged with a window and a finite fill (the keys the window hides from
    # a block folded in after the loop, V read through the table there);
    # paged with ragged last tiles (1040 keys: their rows' page hoisted
    # before the key loop).
    "paged_f16_gqa4_m2_window_fill_p16": Case("float16", dims={"b": 3, "h": 2, "g": 4, "m": 2,
                                                               "n": 1616, "d": 128, "e": 128},
                                              causal=True, query_offset=1614, window=100,
                                              mask_value=-1.0e4, pages=(16, 320), **_gqa),
    "paged_bf16_m3_ragged_s3_p16": Case("bfloat16", **bhsd(3, 4, 3, 1040, 64),
                                        pages=(16, 200), flags=["--splits=3"]),
    # Per-sequence key counts (attn.length_mask): an empty sequence, a full
    # one, random lengths; with GQA packing and split-KV, paged, a prefill
    # chunk with bottom-right causal on the non-decode kernel.
    "lens_f16_gqa4_m1": Case("float16", dims={"b": 5, "h": 2, "g": 4, "m": 1, "n": 3000,
                                              "d": 128, "e": 128},
                             mask=["b", "n"], kv_lens=True, **_gqa),
    "lens_bf16_m4_s6": Case("bfloat16", **bhsd(3, 4, 4, 2000, 64), mask=["b", "n"],
                            kv_lens=True, flags=["--splits=6"]),
    "lens_paged_f16_gqa8_m1_p32": Case("float16", dims={"b": 4, "h": 2, "g": 8, "m": 1,
                                                        "n": 2048, "d": 128, "e": 128},
                                       mask=["b", "n"], kv_lens=True, pages=(32, 200),
                                       **_gqa),
    "lens_program_f16_gqa8_m2": Case("float16", dims={"b": 3, "h": 2, "g": 8, "m": 2,
                                                      "n": 1800, "d": 128, "e": 128},
                                     mask=["b", "n"], kv_lens=True, lens_program=True,
                                     **_gqa),
    # Varlen (attn.varlen_mask): packed [T, H, D] sequences of random
    # lengths (an empty one from 3 sequences on), on every tensor-core
    # kernel: causal top-left and bottom-right (more queries than keys:
    # leading rows see nothing), GQA, a sink, the lse, decode-sized.
    **{f"varlen_f16_causal_{v}": Case("float16", **thd(4, 1000, 1000, 128),
                                      varlen=(5, True, False), flags=fl)
       for v, fl in (("wg", []), ("wg_ws_pp", ["--warp-specialize=1", "--pipeline=1",
                                                "--pingpong=1"]),
                     ("mma", ["--wgmma=0"]))},
    "varlen_bf16_plain_s8_mma_pipe": Case("bfloat16", **thd(2, 777, 777, 64),
                                          varlen=(8, False, False),
                                          flags=["--wgmma=0", "--pipeline=1"]),
    "varlen_f16_br_q600_k900_ws": Case("float16", **thd(2, 600, 900, 128),
                                       varlen=(4, True, True),
                                       flags=["--warp-specialize=1", "--pipeline=1",
                                              "--tile-kv=64"]),
    "varlen_f16_br_q700_k300_wg": Case("float16", **thd(2, 700, 300, 64),
                                       varlen=(2, True, True)),
    "varlen_bf16_br_q700_k300_mma": Case("bfloat16", **thd(2, 700, 300, 64),
                                         varlen=(3, True, True), flags=["--wgmma=0"]),
    "varlen_f16_gqa4_causal_lse": Case("float16", dims={"h": 2, "g": 4, "m": 513, "n": 513,
                                                        "d": 128, "e": 128},
                                       q=["m", "h", "g", "d"], k=["n", "h", "d"],
                                       v=["n", "h", "e"], out=["m", "h", "g", "e"],
                                       mask=["m", "n"], varlen=(3, True, False), lse=True),
    "varlen_bf16_s33_causal_sink": Case("bfloat16", **thd(4, 2048, 2048, 64),
                                        varlen=(33, True, False), sink=["h"]),
    # More sequences than threads (300 > 128 on mma.sync, 256 on wgmma):
    # several counting rounds.
    "varlen_f16_s300_causal_mma": Case("float16", **thd(2, 3000, 3000, 64),
                                       varlen=(300, True, False), flags=["--wgmma=0"]),
    "varlen_bf16_s300_wg": Case("bfloat16", **thd(2, 3000, 3000, 64), varlen=(300, False, False)),
    "varlen_f16_t12_decode": Case("float16", **thd(4, 12, 12, 128), varlen=(3, True, False)),
    # Constants of the program (torch-mlir's buffers: a fixed mask pattern,
    # a precomputed bias, a sink vector) carried in the bundle.
    "const_boolmask_f16": Case("float16", **bhsd(2, 2, 300, 300, 64), mask=["m", "n"],
                               constants=("mask",)),
    "const_bias_bf16_per_head": Case("bfloat16", **bhsd(2, 4, 256, 384, 128),
                                     mask=["h", "m", "n"], mask_dtype="bfloat16",
                                     constants=("mask",)),
    "const_bias_f16_causal_ws": Case("float16", **bhsd(1, 2, 1024, 1024, 128),
                                     mask=["m", "n"], mask_dtype="float16", causal=True,
                                     constants=("mask",)),
    "const_sink_bf16_mma": Case("bfloat16", **bhsd(2, 4, 200, 333, 64), sink=["h"],
                                constants=("sink",), flags=["--wgmma=0"]),
    "const_mask_and_sink_f16": Case("float16", **bhsd(2, 2, 130, 257, 64), mask=["m", "n"],
                                    sink=["h"], constants=("mask", "sink")),
    # A per-(head, key) bias table too large for the kernel (Bloom's ALiBi
    # buffer), added by the region.
    "const_mod_table_hn_bf16": Case("bfloat16", **bhsd(2, 4, 300, 1100, 128),
                                    mods=[(["h", "n"], "float32")], constants=("mod0",),
                                    causal=True, score_mod="""score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %w: f32):
        %y = arith.addf %x, %w : f32
        attn.yield %y : f32
      }"""),
    # A fixed packing, static paging, fixed lengths.
    "const_varlen_tables_br_ws": Case("float16", **thd(2, 900, 1300, 128),
                                      varlen=(6, True, True), constants=("cu_seqlens",),
                                      flags=["--warp-specialize=1", "--pipeline=1",
                                             "--persistent=1"]),
    "const_varlen_table_shared_bf16": Case("bfloat16", **thd(2, 1000, 1000, 64),
                                           varlen=(5, False, False), constants=("cu_seqlens",)),
    "const_block_table_p16": Case("float16", **bhsd(3, 4, 1, 1024, 128), pages=(16, 200),
                                  constants=("block_table",)),
    "const_kv_lens_gqa": Case("float16", dims={"b": 4, "h": 2, "g": 4, "m": 1, "n": 900,
                                               "d": 128, "e": 128},
                              mask=["b", "n"], kv_lens=True, constants=("kv_lens",), **_gqa),
    # Persistent blocks over the tile slots (empty slots run empty loops):
    # causal, bottom-right with leading rows that see no key, many
    # sequences with an empty one and the lse, and the default choice.
    **{f"varlen_{n}_persistent": Case(dt, **thd(h, tq, tk, 128), varlen=vl, lse=lse,
                                      flags=["--warp-specialize=1", "--pipeline=1",
                                             "--persistent=1"])
       for n, dt, h, tq, tk, vl, lse in (
           ("f16_causal", "float16", 4, 1000, 1000, (5, True, False), False),
           ("bf16_br_q700_k300", "bfloat16", 2, 700, 300, (3, True, True), True),
           ("f16_s40_lse", "float16", 3, 3001, 3001, (40, False, False), True))},
    "varlen_bf16_s16_causal_default": Case("bfloat16", **thd(2, 16384, 16384, 128),
                                           varlen=(16, True, False)),
    # Equal lengths (the harness's "equal_seqs" tables: the second sequence
    # empty, the rest equal), which persistent causal blocks take by levels
    # (every sequence's last tile first): the default at S = 16; twelve
    # sequences on three heads; bottom-right with more queries than keys and
    # the lse on 16 tiles for 18 blocks (two take none and must still count
    # themselves out for the next launch); dynamic token counts, whose sizes
    # give levels or slots; 100 causal sequences of random lengths (exact
    # levels over four lanes' chunks); 200 (the tmax levels for equal
    # tables, else exact over seven chunks); non-causal with the lse...
    "varlen_f16_s16_levels_default": Case("float16", **thd(2, 16384, 16384, 128),
                                          varlen=(16, True, False), mask_pattern="equal_seqs"),
    "varlen_f16_s12_levels_persistent": Case("float16", **thd(3, 5000, 5000, 128),
                                             varlen=(12, True, False), mask_pattern="equal_seqs",
                                             flags=WS_PERSISTENT),
    "varlen_bf16_br_levels_idle_lse": Case("bfloat16", **thd(2, 700, 300, 128),
                                           varlen=(4, True, True), lse=True,
                                           mask_pattern="equal_seqs",
                                           flags=WS_PERSISTENT),
    "dyn_f16_varlen_levels": Case("float16", **thd(4, -1, -1, 128), varlen=(4, True, False),
                                  mask_pattern="equal_seqs"),
    "varlen_f16_s100_levels_causal": Case("float16", **thd(2, 12000, 12000, 128),
                                          varlen=(100, True, False),
                                          flags=WS_PERSISTENT),
    **{f"varlen_f16_s200_levels_causal_{tables}": Case(
        "float16", **thd(2, 51200, 51200, 128), varlen=(200, True, False),
        mask_pattern="equal_seqs" if tables == "equal" else "",
        flags=WS_PERSISTENT)
       for tables in ("equal", "random")},
    "varlen_bf16_s24_levels_full_lse": Case("bfloat16", **thd(3, 5600, 5600, 128),
                                            varlen=(24, False, False), lse=True,
                                            mask_pattern="equal_seqs",
                                            flags=["--warp-specialize=1", "--pipeline=1",
                                                   "--persistent=1"]),
    # ... and equal tables on a block per tile (by slots): the two-block
    # kernel at D = 64, bottom-right with one-tile sequences and more keys
    # than queries at D = 128.
    "varlen_f16_s8_equal_two_block": Case("float16", **thd(3, 2100, 2100, 64),
                                          varlen=(8, True, False), mask_pattern="equal_seqs"),
    "varlen_bf16_s40_equal_br_wg": Case("bfloat16", **thd(2, 3001, 5000, 128),
                                        varlen=(40, True, True), mask_pattern="equal_seqs",
                                        flags=["--warp-specialize=0"]),
    # Soft-capping on packed sequences (a region that reads neither the
    # query nor the key index): the default wgmma kernel, the persistent
    # warp-specialized one, and mma.sync.
    "varlen_f16_s5_causal_softcap": Case("float16", **thd(4, 1000, 1000, 128),
                                         varlen=(5, True, False),
                                         score_mod=score_mod_region(1, softcap(30))),
    "varlen_bf16_s16_softcap_persistent": Case(
        "bfloat16", **thd(2, 4000, 4000, 128), varlen=(16, True, False),
        score_mod=score_mod_region(1, softcap(20)),
        flags=["--warp-specialize=1", "--pipeline=1", "--persistent=1"]),
    # Past T = 8192 packed keys soft-capping takes three computing
    # warpgroups (log step 153).
    "varlen_bf16_s3_softcap_long": Case("bfloat16", **thd(2, 9000, 9000, 128),
                                        varlen=(3, True, False),
                                        score_mod=score_mod_region(1, softcap(20))),
    "varlen_bf16_s3_softcap_mma": Case("bfloat16", **thd(2, 700, 700, 64),
                                       varlen=(3, False, False),
                                       score_mod=score_mod_region(1, softcap(20)),
                                       flags=["--wgmma=0"]),
    # ALiBi on packed sequences: the region gets the op's packed positions
    # (the sequence's offsets added to the kernels' per-sequence rows and
    # keys); bottom-right with more keys than queries (different offsets
    # for q and k), and top-left causal on mma.sync and the persistent
    # kernel.
    "varlen_f16_s4_br_alibi": Case("float16", **thd(4, 600, 1100, 128),
                                   varlen=(4, True, True), scale=2.0,
                                   score_mod=score_mod_region(1, alibi(4, "%b0"))),
    "varlen_bf16_s5_causal_alibi_mma": Case("bfloat16", **thd(4, 900, 900, 64),
                                            varlen=(5, True, False),
                                            score_mod=score_mod_region(1, alibi(4, "%b0")),
                                            flags=["--wgmma=0"]),
    # A region that is not shift-invariant in n (ALiBi's packed and
    # per-sequence distances differ by a constant per row, which the
    # softmax cancels): the score scaled by 1 + n / 1000 at the packed key
    # position, bottom-right, on wgmma and mma.sync.
    "varlen_f16_s4_br_keyscaled": Case("float16", **thd(2, 500, 900, 64),
                                       varlen=(4, True, True),
                                       score_mod=VARLEN_KEY_SCALED),
    "varlen_f16_s4_br_keyscaled_mma": Case("float16", **thd(2, 500, 900, 64),
                                           varlen=(4, True, True),
                                           score_mod=VARLEN_KEY_SCALED,
                                           flags=["--wgmma=0"]),
    # Non-causal ALiBi (-slope |n - m|) on packed sequences: the region's
    # packed positions, so the diagonal's tiles are each sequence's.
    "varlen_f16_s4_alibi_abs": Case("float16", **thd(4, 600, 1100, 128),
                                    varlen=(4, False, False),
                                    score_mod=score_mod_region(1, alibi_abs(4, "%b0"))),
    "varlen_bf16_s5_alibi_abs_mma": Case("bfloat16", **thd(2, 700, 700, 64),
                                         varlen=(5, False, False),
                                         score_mod=score_mod_region(1, alibi_abs(2, "%b0")),
                                         flags=["--wgmma=0"]),
    "varlen_bf16_s16_alibi_persistent": Case(
        "bfloat16", **thd(2, 4000, 4000, 128), varlen=(16, True, False),
        score_mod=score_mod_region(1, alibi(2, "%b0")),
        flags=["--warp-specialize=1", "--pipeline=1", "--persistent=1"]),
    "lens_f16_prefill_m150_br_causal": Case("float16", **bhsd(3, 2, 150, 1000, 64),
                                            mask=["b", "n"], kv_lens=True, causal=True,
                                            query_offset=850),
    # GQA packing with a sink per query head (gpt-oss) and with a bias that
    # indexes the query head: both read per packed row.
    "dec_bf16_gqa8_m1_sink_per_qhead_lse": Case("bfloat16", dims={"b": 3, "h": 2, "g": 8,
                                                                  "m": 1, "n": 2500,
                                                                  "d": 64, "e": 64},
                                                sink=["h", "g"], lse=True, **_gqa),
    # (M = 4: the harness masks two query rows of a mask whole; rows 0, 1
    # stay live.)
    "dec_f16_gqa4_m4_bias_per_qhead_s3": Case("float16", dims={"b": 2, "h": 2, "g": 4,
                                                               "m": 4, "n": 1200, "d": 128,
                                                               "e": 128},
                                              mask=["b", "h", "g", "m", "n"],
                                              mask_dtype="float16", flags=["--splits=3"],
                                              **_gqa),
    "dec_f16_window_br_m1_auto": Case("float16", **bhsd(1, 4, 1, 5000, 128), causal=True,
                                      window=1000, query_offset=4999),
    "dec_f16_m40_boolmask_s3": Case("float16", **b_only(2, 40, 900, 64),
                                    mask=["b", "m", "n"], flags=["--splits=3"]),
    "dec_bf16_m1_softcap_auto": Case("bfloat16", **bhsd(1, 8, 1, 6000, 128), scale=2.0,
                                     score_mod=score_mod_region(2, softcap(30))),
    "dec_f16_m1_d256_s5": Case("float16", **bhsd(1, 2, 1, 2000, 256), flags=["--splits=5"]),
    # Soft-capping over grouped-query K/V: the region reads nothing of the
    # group dim, so the query heads are packed into the rows (K/V read once
    # per kv head), with M = 3, split-KV and the lse.
    "dec_bf16_gqa4_m3_softcap_lse_s3": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 3,
                                                              "n": 2500, "d": 128, "e": 128},
                                            lse=True, scale=2.0, flags=["--splits=3"],
                                            score_mod=score_mod_region(3, softcap(30)),
                                            **_gqa),
    # ALiBi (its bias linear in the key index, taken apart per row tile)
    # over grouped-query K/V (packed: the slope of each row's query head),
    # split-KV over a ragged N and the lse: the ranges'
    # partial maxima carry the row terms.
    # Non-causal ALiBi (-slope |n - m|) on split, packed decode: four
    # query tokens, so the diagonal crosses the first key tile (each key
    # range's warps take their own signs; with key warps each warp's share).
    "dec_f16_gqa4_m4_alibi_abs_lse_s3": Case("float16", dims={"b": 2, "h": 2, "g": 4, "m": 4,
                                                              "n": 1500, "d": 128, "e": 128},
                                             lse=True, scale=2.0, flags=["--splits=3"],
                                             score_mod=score_mod_region(3, alibi_abs(8, "%b2")),
                                             **_gqa),
    "dec_bf16_gqa4_m1_alibi_lse_s5": Case("bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 1,
                                                            "n": 3001, "d": 128, "e": 128},
                                          lse=True, scale=2.0, flags=["--splits=5"],
                                          score_mod=score_mod_region(3, alibi(8, "%b2")),
                                          **_gqa),
    # The key-linear bias beside a key padding mask in split, packed decode
    # (log step 173): rows whose keys are all padding, the lse.
    "dec_bf16_gqa4_m1_alibi_keypad_lse_s5": Case(
        "bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 1, "n": 3001, "d": 128, "e": 128},
        lse=True, scale=2.0, flags=["--splits=5"], mask=["b", "n"],
        score_mod=score_mod_region(3, alibi(8, "%b2")), **_gqa),
    "dec_f16_m64_s4_large_logits": Case("float16", **bhsd(1, 2, 64, 2048, 64), scale=8.0,
                                        flags=["--splits=4"]),
    "dec_f16_m1_fill_nosplit": Case("float16", **bhsd(1, 4, 1, 3000, 64), causal=True,
                                    query_offset=2999, mask_value=-2.0),
})


# Score modifications on the tensor-core kernels (mask tensors read into the
# score fragments, sinks as the running state's start, finite fills with
# hidden keys visited): each feature set on every kernel variant.
TC_FEATURES: Dict[str, Case] = {
    # An f32 bias per (batch, head) over ragged N (the -inf entries and the
    # fully masked rows the harness plants included).
    "bias_f32": Case("float16", **bhsd(2, 2, 200, 333, 64), mask=["b", "h", "m", "n"],
                     mask_dtype="float32"),
    # A bool mask, a per-head sink and JAX's fill (-0.7 * f32 max): fully
    # masked rows average V with the sink in the normalization.
    "bool_sink_jaxfill": Case("bfloat16", **bhsd(1, 2, 150, 150, 128),
                              mask=["b", "m", "n"], sink=["h"],
                              mask_value=-2.3819763e38),
    # A small finite fill under causal: the keys after the block's diagonal,
    # left out of its loop, have a non-negligible exp(fill - m) and are
    # folded in at the end (TileKernel::foldHiddenKeys).
    "causal_fill_m2": Case("float16", **bhsd(1, 2, 300, 300, 64), causal=True,
                           mask_value=-2.0),
    # Finite fills with keys past the diagonal's tiles: those tiles' scores
    # stay unscaled and P's exponent is one fma (WgmmaKernel rawInterior);
    # JAX's fill with large logits (rescales inside the loop), a small
    # fill, and bottom-right causal with the fill.
    "causal_jaxfill_large": Case("bfloat16", **bhsd(1, 2, 1000, 1000, 128), causal=True,
                                 mask_value=-2.3819763e38, scale=6.0),
    "causal_fill_m2_long": Case("float16", **bhsd(2, 2, 777, 777, 64), causal=True,
                                mask_value=-2.0),
    "br_causal_fill_long": Case("float16", **bhsd(1, 2, 300, 1000, 128), causal=True,
                                query_offset=700, mask_value=-1.0e4),
    # Bias tiles staged in shared memory by the wgmma kernel (rows 16-byte
    # aligned): an f32 bias per (batch, head) with ragged M, and a bf16 one
    # broadcast over batch and heads under causal with M < N and large logits.
    "bias_staged_f32": Case("float16", **bhsd(2, 2, 200, 320, 64),
                            mask=["b", "h", "m", "n"], mask_dtype="float32"),
    "bias_staged_bf16_causal": Case("bfloat16", **bhsd(1, 2, 300, 304, 128),
                                    mask=["m", "n"], mask_dtype="bfloat16",
                                    causal=True, scale=6.0),
    # A window without causal and a small fill: the keys before the block's
    # window, left out of its loop, are folded in at the end.
    "window_fill_m2": Case("float16", **bhsd(1, 2, 300, 300, 64), window=40,
                           mask_value=-2.0),
    # A bf16 bias broadcast over batch and heads with causal, a window and
    # large logits.
    "bias_bf16_causal_window_large": Case("bfloat16", **bhsd(1, 2, 300, 300, 64),
                                          mask=["m", "n"], mask_dtype="bfloat16",
                                          causal=True, window=50, scale=6.0),
    # A score_mod region (ALiBi from the head index, then soft-capping at
    # 30) in the score fragments, ragged N, causal with M < N.
    "alibi_softcap30_causal": Case("bfloat16", **bhsd(1, 4, 300, 333, 128), causal=True,
                                   scale=1.5, score_mod=score_mod_region(2, alibi(4),
                                                                         softcap(30))),
    # ALiBi alone (x + k (n - m)) on every tensor-core variant: non-causal
    # (both signs of n - m) with large logits (rescales in the loop); and
    # with (m - n), the slopes as a tensor, a bool mask (fully masked rows)
    # and a per-head sink.
    "alibi_linear_large": Case("bfloat16", **bhsd(1, 4, 300, 333, 128), scale=6.0,
                               score_mod=score_mod_region(2, alibi(4))),
    # Causal (the row max grows on every key tile), with large logits; and
    # bottom-right with M < N.
    "alibi_causal_large": Case("bfloat16", **bhsd(1, 4, 700, 700, 128), causal=True,
                               scale=6.0, score_mod=score_mod_region(2, alibi(4))),
    "alibi_br_causal": Case("float16", **bhsd(2, 2, 300, 1000, 64), causal=True,
                            query_offset=700, score_mod=score_mod_region(2, alibi(2))),
    # Non-causal ALiBi, -slope |n - m| (FlashAttention's, and MPT's
    # spelling with the absolute value on the integer distance): linear in
    # n on a tile where n - m keeps its sign in every row, the whole body
    # per score on the diagonal's tiles; ragged M and N with large logits,
    # and M > N.
    "alibi_abs_large": Case("bfloat16", **bhsd(1, 4, 300, 333, 128), scale=6.0,
                            score_mod=score_mod_region(2, alibi_abs(4))),
    "alibi_abs_mpt_f16_d64": Case("float16", **bhsd(2, 2, 700, 500, 64),
                                  score_mod=score_mod_region(2, alibi_abs(2, mpt=True))),
    "alibi_mn_slopes_boolmask_sink": Case(
        "float16", **bhsd(2, 4, 200, 333, 64), mask=["b", "m", "n"], sink=["h"],
        mods=[(["h"], "float32")],
        score_mod=ALIBI_MN_SLOPES),
    # A bias linear in the key index taken apart by the wgmma kernel (one
    # fma per score, the row's term in the maxima): (m - n), so the column
    # constant is negative, times runtime per-head slopes of either sign,
    # no mask, ragged M and N, large logits.
    "alibi_mn_runtime_slopes_large": Case(
        "bfloat16", **bhsd(2, 4, 300, 333, 128), scale=4.0,
        mods=[(["h"], "float32")],
        score_mod=ALIBI_MN_SLOPES),
    # The same bias added on the tensor cores (key-bias-mma, the wgmma
    # kernels' default): per-key steps X / scale of about 500 (past what
    # f16 parts would hold; the step is split into bf16 parts) in f16 and
    # bf16, and with the lse.
    "alibi_mn_runtime_slopes_small_scale_f16": Case(
        "float16", **bhsd(2, 4, 300, 333, 128), scale=0.002,
        mods=[(["h"], "float32")], score_mod=ALIBI_MN_SLOPES),
    "alibi_mn_runtime_slopes_small_scale_lse": Case(
        "bfloat16", **bhsd(2, 4, 300, 333, 64), scale=0.002, lse=True,
        mods=[(["h"], "float32")], score_mod=ALIBI_MN_SLOPES),
    # A step of 1.5e7 per key (slope 3e4 at scale 2e-3), causal: each row's
    # weight is all on its own key (the output is V's row).
    "alibi_huge_slope_causal_f16": Case(
        "float16", **bhsd(1, 2, 300, 300, 128), causal=True, scale=0.002,
        score_mod=score_mod_region(2, key_slope(3.0e4))),
    # Runtime score_mod tensors (kernel arguments): ALiBi slopes per head
    # (f32) and a per-key weight (the input dtype), read at clamped indices.
    "mod_args_alibi_keyweight": Case(
        "float16", **bhsd(2, 4, 200, 333, 64), causal=True,
        mods=[(["h"], "float32"), (["n"], "float16")],
        score_mod="""score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %sl: f32, %wn: f16):
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %bias = arith.mulf %sl, %df : f32
        %wf = arith.extf %wn : f16 to f32
        %y = arith.addf %x, %bias : f32
        %z = arith.addf %y, %wf : f32
        attn.yield %z : f32
      }"""),
    # The lse result (FlashAttention's second output): scores in the exp2
    # domain with the scale folded in (no mask), ragged N.
    "lse_plain": Case("bfloat16", **bhsd(1, 4, 300, 333, 128), lse=True),
    # ... in natural units: a bool mask (fully masked rows: -inf) and a sink,
    # in a [B, S, H, D] layout (lse [B, M, H]).
    "lse_boolmask_sink_bshd": Case("float16", dims={"b": 2, "h": 3, "m": 150, "n": 170,
                                                    "d": 64, "e": 64},
                                   q=["b", "m", "h", "d"], k=["b", "n", "h", "d"],
                                   v=["b", "n", "h", "e"], out=["b", "m", "h", "e"],
                                   mask=["b", "m", "n"], sink=["h"], lse=True),
    # ... with a small finite fill under causal: the hidden keys folded in
    # after the loop move the row max the lse is relative to.
    "lse_causal_small_fill": Case("float16", **bhsd(1, 2, 256, 256, 64), causal=True,
                                  mask_value=-2.0, lse=True),
}
CASES.update({
    # f32 on tensor cores (mma.sync m16n8k8, 3xTF32 by default: tolerance
    # 1e-5 as the SIMT kernel; TF32: 2e-3): head dims that are multiples of
    # 8 only, D = 128 with Q re-read from shared memory, the pipelined loop,
    # decode with split-KV and GQA packing, paged K/V, large logits, a bias
    # tensor with soft-capping, and the SIMT kernel kept by
    # --f32-precision=ieee.
    "f32_d40_e24_causal": Case("float32", **b_only(2, 77, 90, 40, 24), causal=True),
    "f32_d128_causal_lse": Case("float32", **bhsd(1, 3, 200, 333, 128), causal=True,
                                lse=True),
    "f32_d64_pipe": Case("float32", **bhsd(2, 2, 130, 270, 64), flags=["--pipeline=1"]),
    "f32_tf32_bhsd": Case("float32", **bhsd(2, 2, 130, 170, 64),
                          flags=["--f32-precision=tf32"]),
    "f32_tf32_d128_causal": Case("float32", **bhsd(1, 2, 300, 300, 128), causal=True,
                                 flags=["--f32-precision=tf32"]),
    "f32_large_logits": Case("float32", **bhsd(1, 2, 256, 256, 64), scale=8.0),
    # A long key loop: 3xTF32 stays f32-accurate (each tile's P V added to O
    # in f32, not chained through the tensor cores' accumulation).
    "f32_long_full": Case("float32", **bhsd(1, 2, 200, 16384, 64)),
    "f32_bias_softcap": Case("float32", **bhsd(1, 2, 100, 150, 64), mask=["b", "h", "m", "n"],
                             mask_dtype="float32", score_mod=score_mod_region(2, softcap(20.0))),
    "f32_decode_gqa_m1": Case("float32", dims={"b": 2, "h": 4, "g": 8, "m": 1, "n": 3000,
                                               "d": 128, "e": 128}, **_gqa),
    "f32_decode_m1_d64": Case("float32", **bhsd(2, 4, 1, 2000, 64)),
    "f32_paged_m1": Case("float32", **bhsd(2, 4, 1, 704, 64), pages=(16, 100)),
    "f32_ieee_bhsd": Case("float32", **bhsd(2, 2, 130, 70, 32), flags=["--f32-precision=ieee"]),
})
# TF32 on wgmma (f32-precision=tf32 on sm_90a: k8 products, V^T written by
# the producer in the order of P's A fragments; tolerance 2e-3): every head
# dim it takes (32-128, D != E), masks read a tile ahead, regions, sinks,
# the lse, a window, large logits, one key tile, a long loop, 32-key tiles,
# the mma.sync kernel kept by wgmma=0.
_tf = ["--f32-precision=tf32"]
CASES.update({
    "tf32_wg_d32": Case("float32", **bhsd(2, 2, 100, 77, 32), flags=_tf),
    "tf32_wg_d96_e64": Case("float32", **bhsd(1, 3, 190, 260, 96, 64), causal=True,
                            flags=_tf),
    "tf32_wg_d64_e128": Case("float32", **bhsd(1, 2, 129, 200, 64, 128), flags=_tf),
    "tf32_wg_bias": Case("float32", **bhsd(1, 2, 200, 333, 64), mask=["b", "h", "m", "n"],
                         mask_dtype="float32", flags=_tf),
    "tf32_wg_keypad_d128": Case("float32", **bhsd(2, 2, 150, 300, 128), mask=["b", "n"],
                                flags=_tf),
    "tf32_wg_softcap_causal": Case("float32", **bhsd(1, 2, 300, 300, 128), causal=True,
                                   score_mod=score_mod_region(2, softcap(20.0)), flags=_tf),
    "tf32_wg_sink_lse": Case("float32", **bhsd(2, 2, 140, 270, 64), sink=["h"], lse=True,
                             flags=_tf),
    "tf32_wg_window": Case("float32", **bhsd(1, 2, 400, 400, 64), causal=True, window=100,
                           flags=_tf),
    # Logits of standard deviation 17 (scale 1.5): TF32's rounding of Q and
    # K moves the output in proportion to the logits (scale 3: 1.9e-3;
    # scale 8: 2.5e-3 on both TF32 kernels, past the 2e-3 bound; log step
    # 174).
    "tf32_wg_large_logits": Case("float32", **bhsd(1, 2, 256, 256, 128), scale=1.5, flags=_tf),
    "tf32_wg_one_key": Case("float32", **bhsd(1, 2, 70, 1, 64), flags=_tf),
    "tf32_wg_long": Case("float32", **bhsd(1, 2, 200, 16384, 128), flags=_tf),
    "tf32_wg_kv32_d128": Case("float32", **bhsd(1, 2, 300, 1000, 128), causal=True,
                              flags=_tf + ["--tile-kv=32"]),
    "tf32_wg_mma": Case("float32", **bhsd(1, 2, 130, 170, 64), flags=_tf + ["--wgmma=0"]),
    "dyn_tf32_wg_d64_causal": Case("float32", **bhsd(-1, 2, -1, -1, 64), causal=True,
                                   flags=_tf),
    # Varlen: packed sequences (an empty one), causal top-left and
    # bottom-right, Q in registers at D = 128, a sink at D = 64.
    "varlen_tf32_causal_d128": Case("float32", **thd(4, 1000, 1000, 128),
                                    varlen=(5, True, False), flags=_tf),
    "varlen_tf32_br_q700_k900_d128": Case("float32", **thd(2, 700, 900, 128),
                                          varlen=(4, True, True), flags=_tf),
    "varlen_tf32_s33_sink_d64": Case("float32", **thd(4, 2048, 2048, 64),
                                     varlen=(33, True, False), sink=["h"], flags=_tf),
    "varlen_tf32_plain_d64_lse": Case("float32", **thd(2, 777, 777, 64),
                                      varlen=(8, False, False), lse=True, flags=_tf),
})
# Dynamic shapes (-1: "?"): one bundle per case, checked by run_gpu_checks.py
# at several sizes (ragged, one row and key, many tiles) against the
# reference.
CASES.update({
    "dyn_f16_bhsd_d128": Case("float16", **bhsd(-1, 4, -1, -1, 128)),
    "dyn_bf16_bshd_causal_d64": Case("bfloat16", dims={"b": -1, "h": 3, "m": -1, "n": -1,
                                                       "d": 64, "e": 64},
                                     q=["b", "m", "h", "d"], k=["b", "n", "h", "d"],
                                     v=["b", "n", "h", "e"], out=["b", "m", "h", "e"],
                                     causal=True),
    "dyn_f16_bias_sink_lse": Case("float16", **bhsd(2, 4, -1, -1, 64), mask=["m", "n"],
                                  mask_dtype="float16", sink=["h"], lse=True),
    "dyn_f16_boolmask_window": Case("float16", **b_only(-1, -1, -1, 64), mask=["b", "m", "n"],
                                    causal=True, window=100),
    # ALiBi beside a boolean key padding mask (BLOOM serving with an
    # attention_mask: the key-linear bias, the mask selecting -inf after it;
    # rows whose keys are all padding), and beside a per-head sink.
    "alibi_keypad_causal_bf16": Case("bfloat16", **bhsd(2, 4, 1100, 1100, 128), causal=True,
                                     mask=["b", "n"], score_mod=score_mod_region(2, alibi(4))),
    # Causal sliding windows at D = 128 on the default kernel since log step
    # 182 (persistent warp-specialized blocks): ragged N, a per-head sink
    # with soft-capping, bottom-right with the lse, a finite fill (keys
    # before the window folded in after the loop).
    "window_persist_bf16_n1100": Case("bfloat16", **bhsd(1, 4, 1100, 1100, 128),
                                      causal=True, window=300, scale=3.0),
    "window_persist_sink_softcap_f16": Case("float16", **bhsd(1, 4, 1500, 1500, 128),
                                            causal=True, window=200, sink=["h"],
                                            score_mod=score_mod_region(2, softcap(30))),
    "window_persist_br_lse_bf16": Case("bfloat16", **bhsd(1, 2, 1000, 1800, 128),
                                       causal=True, window=400, query_offset=800,
                                       lse=True),
    "window_persist_fill_f16": Case("float16", **bhsd(1, 2, 1200, 1200, 128),
                                    causal=True, window=256, mask_value=-2.0),
    # Non-causal ALiBi (-slope |n - m|) on the default kernels: D = 128 at
    # N = 1100 (warp-specialized) and D = 64 at 2048 (two blocks), runtime
    # slopes with the lse, key padding (rows of padding only), and TF32
    # (the bias by one fma per score, not the tensor cores).
    "alibi_abs_default_bf16_n1100": Case("bfloat16", **bhsd(1, 4, 1100, 1100, 128),
                                         scale=3.0,
                                         score_mod=score_mod_region(2, alibi_abs(4))),
    "alibi_abs_default_f16_d64_n2048": Case("float16", **bhsd(1, 2, 2048, 2048, 64),
                                            score_mod=score_mod_region(2, alibi_abs(2))),
    "alibi_abs_runtime_slopes_lse": Case("float16", **bhsd(2, 4, 300, 333, 64), lse=True,
                                         mods=[(["h"], "float32")],
                                         score_mod=ALIBI_ABS_SLOPES),
    "alibi_abs_keypad_bf16": Case("bfloat16", **bhsd(2, 4, 700, 900, 128),
                                  mask=["b", "n"], mods=[(["h"], "float32")],
                                  score_mod=ALIBI_ABS_SLOPES),
    "alibi_abs_tf32": Case("float32", **bhsd(1, 2, 300, 333, 128),
                           score_mod=score_mod_region(2, alibi_abs(2)),
                           flags=["--f32-precision=tf32"]),
    "alibi_keypad_f16_d64": Case("float16", **bhsd(2, 4, 700, 900, 64), mask=["b", "n"],
                                 score_mod=score_mod_region(2, alibi(4))),
    "alibi_keypad_causal_mma": Case("float16", **bhsd(2, 4, 300, 333, 64), causal=True,
                                    mask=["b", "n"], score_mod=score_mod_region(2, alibi(4)),
                                    flags=["--wgmma=0"]),
    "alibi_sink_causal_bf16": Case("bfloat16", **bhsd(2, 4, 700, 700, 128), causal=True,
                                   sink=["h"], score_mod=score_mod_region(2, alibi(4))),
    # ALiBi at the other head dims' default tiles (the key-linear k-step's
    # products of keyTile / 2 keys: 24 at D = 256's 48-key tiles).
    "alibi_f16_d256_causal": Case("float16", **bhsd(1, 4, 300, 333, 256), causal=True,
                                  score_mod=score_mod_region(2, alibi(4))),
    "alibi_bf16_d96_causal": Case("bfloat16", **bhsd(2, 4, 700, 700, 96), causal=True,
                                  score_mod=score_mod_region(2, alibi(4))),
    "alibi_f16_d64_causal_large": Case("float16", **bhsd(2, 4, 700, 700, 64), causal=True,
                                       scale=6.0, score_mod=score_mod_region(2, alibi(4))),
    "dyn_bf16_softcap_alibi": Case("bfloat16", **bhsd(-1, 4, -1, -1, 128), causal=True,
                                   score_mod=score_mod_region(2, alibi(4), softcap(30.0))),
    "dyn_f16_mma_gqa_causal": Case("float16", dims={"b": -1, "h": 2, "g": 4, "m": -1, "n": -1,
                                                    "d": 128, "e": 128}, **_gqa, causal=True,
                                   flags=["--wgmma=0"]),
    "dyn_f16_mma_pipe_d64": Case("float16", **bhsd(-1, 2, -1, -1, 64), flags=["--wgmma=0",
                                                                             "--pipeline=1"]),
    "dyn_f16_wg_pipe_d64": Case("float16", **bhsd(-1, 2, -1, -1, 64),
                                flags=["--wgmma=1", "--pipeline=1"]),
    "dyn_bf16_ws_d128_causal": Case("bfloat16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                                    flags=["--warp-specialize=1"]),
    # Persistent with dynamic sizes: min(tiles, 132) blocks at launch (few
    # at the small sizes, looping at the large ones), the causal head groups
    # from the runtime tile count, D = 96 with a sink and the lse.
    "dyn_persist_bf16_causal_d128": Case("bfloat16", **bhsd(-1, 8, -1, -1, 128), causal=True,
                                         flags=PERSIST),
    "dyn_persist_f16_d96_sink_lse": Case("float16", **bhsd(-1, 4, -1, -1, 96), causal=True,
                                         sink=["h"], lse=True, flags=PERSIST),
    # ... the tile mapping's run-time divisors as multipliers (FastDiv):
    # non-causal with two dynamic batch dims (the batch and the heads), and
    # causal with 5 heads (a last head group smaller than the others).
    "dyn_persist_f16_full_bh": Case("float16", **bhsd(-1, -1, -1, -1, 128), flags=PERSIST),
    "dyn_persist_f16_causal_h5": Case("float16", **bhsd(-1, 5, -1, -1, 64), causal=True,
                                      flags=PERSIST),
    # Decode: split-KV with the count chosen at launch (1 to 47 ranges over
    # the checked sizes), GQA packing; a window and the lse without packing.
    "dyn_f16_decode_gqa_m1": Case("float16", dims={"b": -1, "h": 4, "g": 8, "m": 1, "n": -1,
                                                   "d": 128, "e": 128}, **_gqa),
    # 64 packed rows (16 queries x 4 heads): the merge shared by the last 8
    # blocks from 8 ranges at run time, by the last block alone below.
    "dyn_f16_decode_gqa4_m16_sliced": Case("float16", dims={"b": -1, "h": 8, "g": 4, "m": 16,
                                                            "n": -1, "d": 128, "e": 128},
                                           lse=True, **_gqa),
    # Varlen with dynamic token counts (4 sequences; causal bottom-right and
    # GQA + lse on the wgmma and mma.sync kernels).
    "dyn_f16_varlen_br": Case("float16", **thd(4, -1, -1, 128), varlen=(4, True, True)),
    "dyn_bf16_varlen_mma_lse": Case("bfloat16", **thd(2, -1, -1, 64), varlen=(4, False, False),
                                    lse=True, flags=["--wgmma=0"]),
    "dyn_bf16_decode_m4_window_lse": Case("bfloat16", **bhsd(-1, 8, 4, -1, 128), causal=True,
                                          window=700, lse=True),
    # Serving: a dynamic batch with paged K/V and per-sequence lengths
    # (the cache and table width static; split count chosen at launch), on
    # 16-bit GQA decode and on f32 with causal bottom-right chunks.
    "dyn_f16_paged_lens_gqa_m1": Case("float16", dims={"b": -1, "h": 4, "g": 8, "m": 1,
                                                       "n": 2048, "d": 128, "e": 128},
                                      mask=["b", "n"], kv_lens=True, pages=(16, 700), **_gqa),
    # 64 packed rows through 64-key pages, bottom-right causal: at the
    # harness's batch of 40 (320 query tiles, one key range) the bundle's
    # launch variant runs (one key warp, no split; log step 208).
    "dyn_bf16_paged_lens_gqa4_m16": Case("bfloat16", dims={"b": -1, "h": 8, "g": 4, "m": 16,
                                                          "n": 1024, "d": 128, "e": 128},
                                         mask=["b", "n"], kv_lens=True, pages=(64, 700),
                                         causal=True, query_offset=1008, **_gqa),
    # The same over 256 keys: one key range at every batch, so the small
    # batches take the second variant (the bundle's launch shape, no count
    # chosen at launch) and 40 the first.
    "dyn_bf16_paged_lens_gqa4_m16_short": Case("bfloat16", dims={"b": -1, "h": 8, "g": 4, "m": 16,
                                                                "n": 256, "d": 128, "e": 128},
                                               mask=["b", "n"], kv_lens=True, pages=(64, 200),
                                               causal=True, query_offset=240, **_gqa),
    # D = 256 GQA decode with a dynamic batch and key count: at the
    # harness's batch of 40 (480 query tiles, one key range) the variant
    # with three stages runs (log step 211), elsewhere the bundle's kernel.
    # Past D = 128 a packed full grid (256 query tiles, one key range) takes
    # two key warps without split-KV (log step 212): Gemma's 256, ragged
    # keys, the lse; MLA's 192/128 in bf16.
    "dec_f16_gqa2_d256_full_grid": Case("float16", dims={"b": 64, "h": 4, "g": 2, "m": 1,
                                                         "n": 300, "d": 256, "e": 256},
                                        lse=True, **_gqa),
    "dec_bf16_gqa4_d192_e128_full_grid": Case("bfloat16", dims={"b": 64, "h": 4, "g": 4, "m": 1,
                                                               "n": 500, "d": 192, "e": 128},
                                              **_gqa),
    "dyn_f16_decode_gqa2_d256": Case("float16", dims={"b": -1, "h": 12, "g": 2, "m": 1,
                                                      "n": -1, "d": 256, "e": 256},
                                     lse=True, **_gqa),
    "dyn_bf16_lens_m4_causal": Case("bfloat16", **bhsd(-1, 8, 4, 1500, 64), mask=["b", "n"],
                                    kv_lens=True, causal=True, query_offset=1496),
    "dyn_f32_paged_m1": Case("float32", **bhsd(-1, 4, 1, 704, 64), pages=(16, 300)),
    "dyn_f32_bhsd_d64_causal": Case("float32", **bhsd(-1, 4, -1, -1, 64), causal=True),
    # A causal window of 2048 with dynamic sizes: persistent warp-specialized
    # blocks (log step 183), at the harness's sizes.
    "dyn_bf16_window2048_causal": Case("bfloat16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                                       window=2048),
    "dyn_f32_tf32_d128": Case("float32", **bhsd(-1, 2, -1, -1, 128),
                              flags=["--f32-precision=tf32"]),
})
TC_VARIANTS: Dict[str, List[str]] = {
    "wg": ["--wgmma=1"],
    "wg_pipe": ["--wgmma=1", "--pipeline=1"],
    "wg_ws": ["--warp-specialize=1"],
    "wg_ws_pipe": ["--warp-specialize=1", "--pipeline=1", "--tile-kv=64"],
    "wg_ws_pp": ["--warp-specialize=1", "--pipeline=1", "--pingpong=1"],
    "wg_t0": ["--wgmma=1", "--rescale-threshold=0"],
    "mma": ["--wgmma=0"],
    "mma_pipe": ["--wgmma=0", "--pipeline=1"],
}
for _f, _c in TC_FEATURES.items():
    for _v, _flags in TC_VARIANTS.items():
        CASES[f"tc_{_f}_{_v}"] = Case(**{**_c.__dict__, "flags": list(_flags)})


# Key warps (mma.sync kernel): warps sharing each key tile, each with its
# own (m, ℓ, O) over its share of the keys, merged in shared memory after
# the loop, on the decode features (split-KV, packing, pages, sinks counted
# once, the lse, masks, fills, windows, soft-capping, pipelined loops, f32)
# and on a prefill tile with split-KV.
KW_CASES = ["dec_f16_m1_n8192_auto", "dec_bf16_m1_n1000_s7_ragged",
            "dec_f16_m16_br_causal_lse_small_tiles", "dec_f16_m5_sink_lse_s4",
            "dec_bf16_gqa4_m16_br_causal_lse", "dec_f16_gqa4_m3_ragged_s5",
            "dec_f16_gqa8_m5_window_br", "paged_f16_gqa4_m1_p16_auto",
            "paged_f16_m1_p16_ragged_s4", "paged_bf16_m2_sink_lse_p128",
            "dec_f16_gqa4_m1_keypad", "dec_bf16_gqa4_m3_bias_per_kv_head",
            "dec_bf16_m1_softcap_auto", "dec_f16_m1_d256_s5",
            "dec_f16_m64_s4_large_logits", "dec_f16_m1_fill_nosplit",
            "dec_bf16_gqa8_m1_sink_per_qhead_lse", "dec_bf16_m1_kv128_s2_pipe",
            "f32_decode_gqa_m1", "split_mma_q128_n4113_s64",
            "dec_bf16_gqa4_m1_alibi_lse_s5", "dec_bf16_gqa4_m3_softcap_lse_s3",
            "dec_f16_gqa4_m4_alibi_abs_lse_s3",
            "paged_bf16_gqa4_m1_p16_softcap"]
for _name in KW_CASES:
    _c = CASES[_name]
    for _kw in (2, 4):
        _flags = list(_c.flags) + [f"--key-warps={_kw}"]
        if _kw == 4 and not any(f.startswith("--tile-kv") for f in _flags):
            _flags.append("--tile-kv=64")
        CASES[f"kw{_kw}_{_name}"] = Case(**{**_c.__dict__, "flags": _flags})

# FP8 (e4m3 / e5m2 Q, K, V, 16-bit output) on the warp-specialized TMA
# kernel: the producer's V transpose (ragged key tiles, several 32-key
# groups), P quantized to 8 bits, value_scale, causal and bottom-right,
# lse, a score_mod region, GQA, D = 64/256, persistent and block-per-tile
# launches, dynamic sizes.
E4 = "float8_e4m3fn"
E5 = "float8_e5m2"
CASES.update({
    "fp8_d128": Case(E4, **bhsd(2, 8, 1024, 1024, 128), out_dtype="float16",
                     value_scale=1.5),
    "fp8_d128_causal_ragged": Case(E4, **bhsd(1, 4, 1000, 1000, 128), causal=True,
                                   out_dtype="float16", scale=0.07, value_scale=0.3),
    "fp8_d128_long": Case(E4, **bhsd(1, 2, 300, 16500, 128), out_dtype="bfloat16"),
    # Persistent to N = 16384 (the 16-bit kernels stop at 8192).
    "fp8_d128_persistent_long": Case(E4, **bhsd(1, 2, 10000, 10000, 128), causal=True,
                                     out_dtype="bfloat16"),
    "fp8_d128_br_lse": Case(E4, **bhsd(1, 4, 200, 2000, 128), causal=True,
                            query_offset=1800, lse=True, out_dtype="float16"),
    "fp8_e5m2_d64": Case(E5, **bhsd(2, 3, 333, 1111, 64), out_dtype="float16"),
    "fp8_d64_causal_ragged": Case(E4, **bhsd(2, 4, 1000, 777, 64), causal=True,
                                  out_dtype="bfloat16", value_scale=0.7),
    "fp8_d64_causal_w12": Case(E4, **bhsd(1, 2, 4100, 4100, 64), causal=True,
                               out_dtype="float16"),
    # Mask tensors, read a tile ahead into the score fragments: a bias per
    # head over (m, n) with causal, a bool key-padding mask (its key loop
    # trimmed at the last kept key), a finfo.min fill.
    "fp8_bias_causal": Case(E4, **bhsd(2, 3, 700, 700, 128), causal=True,
                            mask=["h", "m", "n"], mask_dtype="float16",
                            out_dtype="float16"),
    "fp8_keypad": Case(E4, **bhsd(3, 2, 300, 1000, 128), mask=["b", "n"],
                       out_dtype="bfloat16", value_scale=1.25),
    "fp8_d64_boolmask_fill": Case(E4, **bhsd(2, 2, 333, 555, 64), mask=["b", "m", "n"],
                                  mask_value=-3.4028234663852886e38,
                                  out_dtype="float16"),
    "fp8_d256": Case(E4, **bhsd(1, 4, 600, 1500, 256), out_dtype="bfloat16",
                     value_scale=2.0),
    "fp8_softcap": Case(E4, **bhsd(2, 2, 700, 700, 128), causal=True, out_dtype="float16",
                        score_mod=score_mod_region(2, softcap(30.0))),
    "fp8_gqa": Case(E4, dims={"b": 2, "h": 2, "g": 4, "m": 500, "n": 900, "d": 128, "e": 128},
                    q=["b", "h", "g", "m", "d"], k=["b", "h", "n", "d"],
                    v=["b", "h", "n", "e"], out=["b", "h", "g", "m", "e"],
                    out_dtype="float16"),
    "fp8_block_per_tile": Case(E4, **bhsd(2, 2, 640, 3000, 128), out_dtype="float16",
                               flags=["--persistent=0"]),
    "fp8_dyn": Case(E4, **bhsd(-1, 2, -1, -1, 128), causal=True, out_dtype="float16"),
    # Wider key tiles (tile-kv = 192: V^T in a 128-key panel and a 64-key
    # one in the 64-byte swizzle; 256: two stages; 64: one 64-key panel):
    # ragged keys, causal, the lse, masks, dynamic sizes, three warpgroups
    # at D = 64.
    "fp8_kv192_causal_ragged": Case(E4, **bhsd(1, 4, 1000, 1000, 128), causal=True,
                                    out_dtype="float16", scale=0.07, value_scale=0.3,
                                    flags=["--tile-kv=192"]),
    "fp8_kv192_long": Case(E4, **bhsd(1, 2, 300, 16500, 128), out_dtype="bfloat16",
                           flags=["--tile-kv=192"]),
    "fp8_kv192_br_lse": Case(E4, **bhsd(1, 4, 200, 2000, 128), causal=True,
                             query_offset=1800, lse=True, out_dtype="float16",
                             flags=["--tile-kv=192"]),
    "fp8_kv192_keypad": Case(E4, **bhsd(3, 2, 300, 1000, 128), mask=["b", "n"],
                             out_dtype="bfloat16", flags=["--tile-kv=192"]),
    "fp8_kv192_bias_causal": Case(E4, **bhsd(2, 3, 700, 700, 128), causal=True,
                                  mask=["h", "m", "n"], mask_dtype="float16",
                                  out_dtype="float16", flags=["--tile-kv=192"]),
    "fp8_kv192_dyn": Case(E4, **bhsd(-1, 2, -1, -1, 128), causal=True,
                          out_dtype="float16", flags=["--tile-kv=192"]),
    "fp8_kv192_d64_w12": Case(E4, **bhsd(1, 2, 4100, 4100, 64), causal=True,
                              out_dtype="float16", flags=["--tile-kv=192"]),
    "fp8_kv256_persistent": Case(E4, **bhsd(1, 2, 3000, 3000, 128), causal=True,
                                 out_dtype="bfloat16", flags=["--tile-kv=256"]),
    "fp8_kv64_ragged": Case(E5, **bhsd(2, 3, 333, 1111, 128), out_dtype="float16",
                            flags=["--tile-kv=64"]),
    # Runtime per-tensor scales (tensors the kernel reads): persistent
    # causal D = 128, three warpgroups at D = 64, dynamic sizes, and a
    # 16-bit attention whose scale is a runtime value (the same rule).
    "fp8_runtime_scales": Case(E4, **bhsd(2, 4, 1000, 1000, 128), causal=True,
                               out_dtype="float16", value_scale=0.5,
                               runtime_scales=True),
    "fp8_runtime_scales_d64": Case(E4, **bhsd(1, 4, 4100, 4100, 64),
                                   out_dtype="bfloat16", runtime_scales=True),
    "fp8_runtime_scales_dyn": Case(E4, **bhsd(-1, 2, -1, -1, 128),
                                   out_dtype="float16", runtime_scales=True),
    "f16_runtime_scale": Case("float16", **bhsd(2, 4, 700, 900, 128), causal=True,
                              runtime_scales=True),
    # The same rule on the mma.sync decode kernel (split-KV), sm_80's
    # kernel, and the SIMT kernel.
    "dec_f16_runtime_scale": Case("float16", **bhsd(2, 8, 1, 5000, 128),
                                  runtime_scales=True),
    "f16_runtime_scale_sm80": Case("float16", **bhsd(1, 4, 300, 500, 64), causal=True,
                                   runtime_scales=True, flags=["--chip=sm_80"]),
    "f32_runtime_scale_ieee": Case("float32", **bhsd(1, 2, 130, 70, 32),
                                   runtime_scales=True, flags=["--f32-precision=ieee"]),
})

# Packed documents: the region keeps s where the query's segment id equals
# the key's (mod0 over (b, m), mod1 over (b, n), int32); the
# warp-specialized kernel limits each query tile's keys to the granules its
# ids meet (WgmmaConfig::segTrim). make_inputs gives sorted ids of 1 to
# L / 100 documents (equal for equal lengths; mask_pattern "ids": ids in
# [0, 4) in any order).
def doc_mask(fill: str = "0xFF800000", bits: int = 32) -> str:
    return f"""score_mod {{
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %qi: i{bits}, %ki: i{bits}):
        %eq = arith.cmpi eq, %qi, %ki : i{bits}
        %f = arith.constant {fill} : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      }}"""


DOC_IDS = [(["b", "m"], "int32"), (["b", "n"], "int32")]
DOC_IDS64 = [(["b", "m"], "int64"), (["b", "n"], "int64")]
CASES.update({
    # Persistent blocks (N <= 8192), causal and not, ragged.
    "doc_f16_n2000": Case("float16", **bhsd(2, 4, 2000, 2000, 128), mods=DOC_IDS,
                          score_mod=doc_mask()),
    "doc_causal_bf16_n3000": Case("bfloat16", **bhsd(1, 4, 3000, 3000, 128),
                                  causal=True, mods=DOC_IDS, score_mod=doc_mask()),
    "doc_lse_f16_n1500": Case("float16", **bhsd(2, 2, 1500, 1500, 128), lse=True,
                              mods=DOC_IDS, score_mod=doc_mask()),
    # Past N = 8192 (persistent since log step 184), and a block per query
    # tile (the producer's granules built per block).
    "doc_f16_n9000": Case("float16", **bhsd(1, 2, 9000, 9000, 128), mods=DOC_IDS,
                          score_mod=doc_mask()),
    "doc_tile_bf16_n2000": Case("bfloat16", **bhsd(4, 2, 2000, 2000, 128),
                                causal=True, mods=DOC_IDS, score_mod=doc_mask(),
                                flags=["--persistent=0"]),
    # Ids in any order: ranges as wide as the ids' spread.
    "doc_unsorted_f16_n1500": Case("float16", **bhsd(2, 2, 1500, 1500, 128),
                                   mods=DOC_IDS, score_mod=doc_mask(),
                                   mask_pattern="ids"),
    # JAX's finite fill with query and key ids of different lengths: rows
    # whose document has no key average V over every key (the keys left
    # out of the loop folded in after it), causal sharing the fill.
    "doc_jaxfill_bf16_m1500_n2600": Case("bfloat16", **bhsd(1, 4, 1500, 2600, 128),
                                         mods=DOC_IDS,
                                         score_mod=doc_mask("-2.38197633E+38")),
    "doc_jaxfill_causal_f16_n2000": Case("float16", **bhsd(1, 4, 2000, 2000, 128),
                                         causal=True, mask_value=-2.38197633e38,
                                         mods=DOC_IDS,
                                         score_mod=doc_mask("-2.38197633E+38")),
    # Flax's older big_neg (-1e10): a fill whose s log2 e - round(m log2 e)
    # on a row of fills left 2^440 (the exponent as (s - m) log2 e since).
    "doc_fill1e10_bf16_m1500_n2600": Case("bfloat16", **bhsd(1, 4, 1500, 2600, 128),
                                          mods=DOC_IDS, score_mod=doc_mask("-1.0E+10")),
    # D = 256 (48-key tiles, interior tiles within 128-key granules).
    "doc_d256_causal_bf16_n2000": Case("bfloat16", **bhsd(1, 4, 2000, 2000, 256),
                                       causal=True, mods=DOC_IDS, score_mod=doc_mask()),
    # torch's int64 ids: saturated to i32 for the ranges; "ids_big" puts
    # every id from the second on past int32 (those documents then share
    # the saturated value: wider ranges, no interior tiles).
    "doc_i64_causal_bf16_n2000": Case("bfloat16", **bhsd(2, 2, 2000, 2000, 128),
                                      causal=True, mods=DOC_IDS64, score_mod=doc_mask(bits=64)),
    "doc_i64_big_f16_n2000": Case("float16", **bhsd(2, 2, 2000, 2000, 128),
                                  mods=DOC_IDS64, score_mod=doc_mask(bits=64),
                                  mask_pattern="ids_big"),
    # Beside a key padding mask (applied after the region): no range.
    "doc_keypad_f16_n2000": Case("float16", **bhsd(2, 2, 2000, 2000, 128),
                                 mask=["b", "n"], mods=DOC_IDS, score_mod=doc_mask()),
    # The range on the FP8 and TF32 warp-specialized kernels (V^T by the
    # producer).
    "doc_fp8_causal_n2000": Case("float8_e4m3fn", **bhsd(1, 4, 2000, 2000, 128),
                                 out_dtype="float16", causal=True, mods=DOC_IDS,
                                 score_mod=doc_mask()),
    "doc_tf32_n1500": Case("float32", **bhsd(2, 2, 1500, 1500, 128), mods=DOC_IDS,
                           score_mod=doc_mask(), flags=["--f32-precision=tf32"]),
    # D = 64 (the warp-specialized kernel with the range since log step
    # 186), and kernels without it (the region per score): mma.sync, f32
    # (3xTF32).
    "doc_f16_d64_n2000": Case("float16", **bhsd(2, 2, 2000, 2000, 64), mods=DOC_IDS,
                              score_mod=doc_mask()),
    "doc_mma_bf16_n1200": Case("bfloat16", **bhsd(1, 2, 1200, 1200, 128), mods=DOC_IDS,
                               score_mod=doc_mask(), flags=["--wgmma=0"]),
    "doc_f32_n700": Case("float32", **bhsd(1, 2, 700, 700, 64), mods=DOC_IDS,
                         score_mod=doc_mask()),
    # Dynamic sizes: the ids [?, ?] viewed with the launch's sizes, the
    # granules of ceil(N / 2048) * 16 keys computed at run time; one bundle
    # checked at every size of dynamic_size_sets (M != N, one row, 32768
    # keys). Causal bf16 with sorted ids, unsorted at D = 64, JAX's finite
    # fill (rows whose document has no key average V), int64 ids.
    "dyn_doc_causal_bf16": Case("bfloat16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                                mods=DOC_IDS, score_mod=doc_mask()),
    "dyn_doc_unsorted_f16_d64": Case("float16", **bhsd(-1, 4, -1, -1, 64), mods=DOC_IDS,
                                     score_mod=doc_mask(), mask_pattern="ids"),
    "dyn_doc_jaxfill_f16_lse": Case("float16", **bhsd(-1, 2, -1, -1, 128), mods=DOC_IDS,
                                    lse=True, score_mod=doc_mask("-2.38197633E+38")),
    "dyn_doc_i64_causal_f16": Case("float16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                                   mods=DOC_IDS64, score_mod=doc_mask(bits=64)),
    # ... and on the kernels without key ranges (the select per score).
    "dyn_doc_mma_bf16": Case("bfloat16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                             mods=DOC_IDS, score_mod=doc_mask(), flags=["--wgmma=0"]),
    # Any runtime score_mod tensor with dynamic dims: a per-key f16 bias
    # [b, n] added to the score (key positions, a padding bias as floats).
    "dyn_mod_keybias_f16": Case("float16", **bhsd(-1, 2, -1, -1, 128),
                                mods=[(["b", "n"], "float16")], score_mod="""score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %w: f16):
        %wf = arith.extf %w : f16 to f32
        %y = arith.addf %x, %wf : f32
        attn.yield %y : f32
      }"""),
})


# Chunked attention (Llama 4's local layers): the region keeps s where the
# query's and the key's positions fall in the same chunk of C, m / C ==
# n / C, written as torch does (floordivsi on the positions) or as JAX's
# floor_divide (divsi, remsi and a correction); the kernels limit each
# query tile's keys to the granules its chunks meet, the ids computed from
# the positions (segmentMatch's rowExpr / keyExpr).
def chunk_mask(c: int, fill: str = "0xFF800000", jax: bool = False,
               op: str = "arith.floordivsi", batch: int = 2, offset: int = 0,
               id_offset: int = 0) -> str:
    """`batch` batch dims; `offset`: query m at position m + offset (decode:
    the new tokens after the cache, N - M); `id_offset`: added to both ids
    (index ids only)."""
    pos = "%m"
    if offset:
        pos = "%mo"
    if jax:
        ids = "".join(f"""
        %{x}i = arith.index_cast {pos if x == "m" else "%n"} : index to i32
        %{x}d = arith.divsi %{x}i, %c : i32
        %{x}r = arith.remsi %{x}i, %c : i32
        %{x}nz = arith.cmpi ne, %{x}r, %z : i32
        %{x}ng = arith.cmpi slt, %{x}i, %z : i32
        %{x}a = arith.andi %{x}nz, %{x}ng : i1
        %{x}d1 = arith.subi %{x}d, %one : i32
        %{x}c = arith.select %{x}a, %{x}d1, %{x}d : i32""" for x in "mn")
        consts = f"""
        %c = arith.constant {c} : i32
        %z = arith.constant 0 : i32
        %one = arith.constant 1 : i32"""
        ty = "i32"
    else:
        ids = "".join(f"""
        %{x}c = {op} {pos if x == "m" else "%n"}, %c : index""" for x in "mn")
        consts = f"""
        %c = arith.constant {c} : index"""
        ty = "index"
    if offset:
        consts += f"""
        %off = arith.constant {offset} : index
        %mo = arith.addi %m, %off : index"""
    if id_offset:  # the ids above renamed %mc0 / %nc0, then offset
        ids = ids.replace("c = ", "c0 = ") + "".join(f"""
        %{x}c = arith.addi %{x}c0, %big : index""" for x in "mn")
        consts += f"""
        %big = arith.constant {id_offset} : index"""
    args = "".join(f"%b{i}: index, " for i in range(batch))
    return f"""score_mod {{
      ^bb0(%x: f32, {args}%m: index, %n: index):{consts}{ids}
        %eq = arith.cmpi eq, %mc, %nc : {ty}
        %f = arith.constant {fill} : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      }}"""


def chunk_by_batch_offset(c: int, batch: int = 2) -> str:
    """Chunks of c where query m sits at m + 1000 * off[b] + 500 (off: an
    int32 score_mod operand indexed by the batch)."""
    args = "".join(f"%b{i}: index, " for i in range(batch))
    return f"""score_mod {{
      ^bb0(%x: f32, {args}%m: index, %n: index, %off: i32):
        %bo = arith.index_cast %off : i32 to index
        %bk = arith.constant 1000 : index
        %bok = arith.muli %bo, %bk : index
        %bh = arith.constant 500 : index
        %bp0 = arith.addi %m, %bok : index
        %bp = arith.addi %bp0, %bh : index
        %c = arith.constant {c} : index
        %pc = arith.floordivsi %bp, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      }}"""


CASES_MIXED_REGION = """score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %qi: i64):
        %c = arith.constant 100 : i64
        %n64 = arith.index_cast %n : index to i64
        %nc = arith.floordivsi %n64, %c : i64
        %eq = arith.cmpi eq, %qi, %nc : i64
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      }"""

CASES.update({
    # Causal, chunks that do not align with the 128-key granules; the
    # persistent warp-specialized kernel.
    "chunk_causal_bf16_n3000": Case("bfloat16", **bhsd(1, 4, 3000, 3000, 128),
                                    causal=True, score_mod=chunk_mask(300)),
    # Non-causal D = 64, JAX's spelling with more keys than queries.
    "chunk_jax_f16_d64_m1500_n2600": Case("float16", **bhsd(2, 2, 1500, 2600, 64),
                                          score_mod=chunk_mask(700, jax=True)),
    # JAX's finite fill with more queries than keys: rows past the keys'
    # last chunk see no key and average V (the keys left out folded in).
    "chunk_jaxfill_bf16_m2600_n1500": Case("bfloat16", **bhsd(1, 2, 2600, 1500, 128),
                                           score_mod=chunk_mask(512, "-2.38197633E+38")),
    # mma.sync (the block's threads compute the key ids), its sm_80 PTX, and
    # the f32 (3xTF32) kernel.
    "chunk_mma_causal_f16_n2000": Case("float16", **bhsd(1, 4, 2000, 2000, 128),
                                       causal=True, score_mod=chunk_mask(256),
                                       flags=["--wgmma=0"]),
    "chunk_sm80_bf16_n1800": Case("bfloat16", **bhsd(1, 2, 1800, 1800, 128),
                                  score_mod=chunk_mask(384), flags=["--chip=sm_80"]),
    "chunk_f32_n700": Case("float32", **bhsd(1, 2, 700, 700, 64), causal=True,
                           score_mod=chunk_mask(100)),
    # FP8 (V^T by the producer) and a block per query tile.
    "chunk_fp8_causal_n2000": Case("float8_e4m3fn", **bhsd(1, 4, 2000, 2000, 128),
                                   out_dtype="float16", causal=True,
                                   score_mod=chunk_mask(512)),
    "chunk_tile_f16_n2000": Case("float16", **bhsd(2, 2, 2000, 2000, 128),
                                 score_mod=chunk_mask(640), flags=["--persistent=0"]),
    # Ids from positions that are not sorted: strided attention (m % 4 ==
    # n % 4, every key range the whole row) and chunks of 2^9 by a shift.
    "chunk_strided_rem_f16_n1500": Case("float16", **bhsd(1, 2, 1500, 1500, 128),
                                        causal=True, score_mod=chunk_mask(4, op="arith.remsi")),
    "chunk_shift_bf16_n2200": Case("bfloat16", **bhsd(1, 2, 2200, 2200, 128),
                                   score_mod=chunk_mask(9, op="arith.shrsi")),
    # A query id read from an int64 tensor against the key's chunk of 100.
    "chunk_mixed_i64_f16_n2000": Case("float16", **bhsd(1, 2, 2000, 2000, 128),
                                      mods=[(["b", "m"], "int64")],
                                      score_mod=CASES_MIXED_REGION),
    "chunk_mixed_i64_mma_bf16_n1300": Case("bfloat16", **bhsd(1, 2, 1300, 1300, 64),
                                           causal=True, mods=[(["b", "m"], "int64")],
                                           score_mod=CASES_MIXED_REGION,
                                           flags=["--wgmma=0"]),
    # Dynamic sizes (one bundle, every size of dynamic_size_sets).
    "dyn_chunk_causal_f16": Case("float16", **bhsd(-1, 2, -1, -1, 128), causal=True,
                                 score_mod=chunk_mask(1000)),
    # Decode (Llama 4's chunked layers serving): the new tokens at N - M..,
    # each block's keys found by binary search over the key chunks, then
    # split into ranges: GQA packing with the split count chosen by the
    # pass; 16 packed queries whose chunks straddle a boundary (3994-4009
    # against 4000: keys 3000-4009), bottom-right causal and the lse; no
    # packing with 8 ranges forced over the 808 keys left (7 of 128); paged
    # 16-key pages; JAX's floor_divide spelling (its sign correction folds
    # for positions >= 0); a dynamic batch (split count at launch); a
    # finite fill (the ranges would not count each other's hidden keys:
    # the region per score over every key instead).
    "dec_chunk_bf16_gqa4_m1_n20000_c8192": Case(
        "bfloat16", dims={"b": 2, "h": 2, "g": 4, "m": 1, "n": 20000, "d": 128, "e": 128},
        score_mod=chunk_mask(8192, batch=3, offset=19999), **_gqa),
    "dec_chunk_f16_gqa4_m16_straddle_lse": Case(
        "float16", dims={"b": 2, "h": 2, "g": 4, "m": 16, "n": 4010, "d": 128, "e": 128},
        causal=True, query_offset=3994, lse=True,
        score_mod=chunk_mask(1000, batch=3, offset=3994), **_gqa),
    "dec_chunk_f16_m1_h8_s8": Case("float16", **bhsd(2, 8, 1, 9000, 128),
                                   score_mod=chunk_mask(4096, offset=8999),
                                   flags=["--splits=8"]),
    "dec_chunk_bf16_paged_gqa4_m1_p16": Case(
        "bfloat16", dims={"b": 3, "h": 2, "g": 4, "m": 1, "n": 4000, "d": 128, "e": 128},
        pages=(16, 800), score_mod=chunk_mask(1024, batch=3, offset=3999), **_gqa),
    # Chunks through pages from a key that starts neither a tile nor a
    # page (chunks of 1031: keys 3093..4111 of the last one), split into
    # ranges and GQA-packed (pages keep tile-aligned starts and the region
    # per score; exact keys through pages measured 0.92-0.98x: log step 200).
    "dec_chunk_f16_paged_m1_p16_unaligned": Case(
        "float16", dims={"b": 3, "h": 2, "g": 4, "m": 1, "n": 4112, "d": 128, "e": 128},
        pages=(16, 900), score_mod=chunk_mask(1031, batch=3, offset=4111), **_gqa),
    "dec_chunk_bf16_paged_m1_p64_unaligned_d64": Case(
        "bfloat16", dims={"b": 2, "h": 4, "g": 2, "m": 1, "n": 2560, "d": 64, "e": 64},
        pages=(64, 100), score_mod=chunk_mask(700, batch=3, offset=2559), **_gqa),
    "dec_chunk_jax_f16_m1_d64": Case("float16", **bhsd(2, 4, 1, 6000, 64),
                                     score_mod=chunk_mask(2048, jax=True, offset=5999)),
    "dyn_dec_chunk_f16_gqa8_m1": Case(
        "float16", dims={"b": -1, "h": 4, "g": 8, "m": 1, "n": 10000, "d": 128, "e": 128},
        score_mod=chunk_mask(3000, batch=3, offset=9999), **_gqa),
    # Chunked speculative decode (M = 16, 4 query heads per kv head) with a
    # dynamic batch: the bundle's key ranges chosen at launch over the keys
    # its chunks leave, and its launch variants (one range) at B = 40 and
    # small batches.
    "dyn_dec_chunk_f16_gqa4_m16": Case(
        "float16", dims={"b": -1, "h": 8, "g": 4, "m": 16, "n": 4096, "d": 128, "e": 128},
        score_mod=chunk_mask(1000, batch=3, offset=4080), **_gqa),
    "dec_chunk_jaxfill_bf16_m1": Case("bfloat16", **bhsd(2, 4, 1, 5000, 128),
                                      score_mod=chunk_mask(1024, "-2.38197633E+38",
                                                           offset=4999)),
    # One query position per block (M = 1) runs exactly its chunk's keys,
    # from the first (not its tile), with no region per score: a query past
    # the cache whose chunk holds no key (0 out, lse -inf); causal at
    # position 3000 of chunks of 1000 (one key: 3000); a sink with the lse,
    # split four ways over 1905 keys.
    "dec_chunk_f16_m1_empty_lse": Case("float16", **bhsd(2, 4, 1, 3000, 128), lse=True,
                                       score_mod=chunk_mask(1024, offset=5000)),
    "dec_chunk_bf16_m1_causal_one_key": Case("bfloat16", **bhsd(2, 4, 1, 5000, 128),
                                             causal=True, query_offset=3000,
                                             score_mod=chunk_mask(1000, offset=3000)),
    # Chunk ids offset by 2^31 (past 32 bits: the kernels compare ids
    # saturated to i32, all equal here): the keys are searched, but the
    # region stays on every score.
    "dec_chunk_sat_f16_m1": Case("float16", **bhsd(2, 4, 1, 3000, 128),
                                 score_mod=chunk_mask(128, offset=2999, id_offset=1 << 31)),
    # Chunks placed per sequence: the row's position offset by a value read
    # per batch entry (kv_len - 1 in decode_attention's serving call; here
    # 1000 x a small id + 500), next to per-sequence lengths (the length
    # mask bounds the keys the search runs over), GQA packing, the split
    # count chosen by the pass; and on prefill (causal) through the Hopper
    # kernel's producer and through mma.sync.
    "dec_chunk_lens_bf16_gqa4_m1": Case(
        "bfloat16", dims={"b": 5, "h": 2, "g": 4, "m": 1, "n": 4000, "d": 128, "e": 128},
        mask=["b", "n"], kv_lens=True, mods=[(["b"], "int32")],
        score_mod=chunk_by_batch_offset(1024, batch=3), **_gqa),
    "chunk_batch_offset_bf16_n2000": Case("bfloat16", **bhsd(3, 2, 2000, 2000, 128), causal=True,
                                          mods=[(["b"], "int32")],
                                          score_mod=chunk_by_batch_offset(700)),
    "chunk_batch_offset_mma_f16_n1500": Case("float16", **bhsd(3, 2, 1500, 1500, 64),
                                             mods=[(["b"], "int32")],
                                             score_mod=chunk_by_batch_offset(400),
                                             flags=["--wgmma=0"]),
    "dec_chunk_f16_m1_sink_lse_s4": Case("float16", **bhsd(2, 4, 1, 6001, 128), sink=["h"],
                                         lse=True, flags=["--splits=4"],
                                         score_mod=chunk_mask(2048, offset=6000)),
})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "bundles"))
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--only", default="")
    ap.add_argument("--attn-bundle", default=str(ROOT / "build" / "bin" / "attn-bundle"))
    ap.add_argument("--print", action="store_true", help="print the programs, compile nothing")
    a = ap.parse_args()
    out = Path(a.out)
    only = [o for o in a.only.split(",") if o]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            if only and not any(o in name for o in only):
                continue
            src = Path(tmp) / f"{name}.mlir"
            src.write_text(program(case))
            if a.print:
                print(f"// {name}\n{src.read_text()}")
                continue
            p = subprocess.run([a.attn_bundle, str(src), "-o", str(out / name),
                                f"--chip={a.chip}", *case.flags],
                               capture_output=True, text=True)
            if p.returncode != 0:
                failed.append(name)
                print(f"FAIL {name}:\n{p.stderr[-1500:]}", file=sys.stderr)
            else:
                if case.mask_pattern:
                    (out / name / "check.json").write_text(
                        json.dumps({"mask_pattern": case.mask_pattern}))
                print(f"wrote {out / name}")
    if failed:
        print(f"{len(failed)} case(s) not compiled: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
