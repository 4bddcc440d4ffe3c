#!/usr/bin/env python3
"""Writes one attention program per benchmark config and compiles each into
a kernel bundle with build/bin/attn-bundle (run here, on the machine with
MLIR; the bundles then travel to the GPU machine).

  python3 bench/make_bundles.py --out bench/bundles [--quick] [--chip sm_90a]

Configs follow bench_attention.py: fp16/bf16, D in {64, 128}, N in {512 ..
16384} with 16k tokens per batch (B = 16384 // N) and model dim 2048
(H = 2048 // D), causal and not, plus one head at N = 131072. Layout
[B, H, N, D]. Bundle directory names: {dtype}_d{D}_n{N}_b{B}_h{H}_{causal|full}.
--dynamic writes OUT/dyn_* (B, M, N dynamic) and the static OUT/st_* at
DYNAMIC_NS for bench/bench_dynamic.py. --flags go to attn-bundle (launch-shape options). --tune writes the
launch-shape sweep of bench/tune.py instead: OUT/VARIANT/CONFIG for each
variant in TUNE_VARIANTS and N in {1024, 8192}. --forms writes the forms
table's bundles (FORMS below, at D = 128; plain and causal also at D in
{80, 96, 256}; bench/bench_forms.py times them):
OUT/{dtype}_d{D}_n{N}_b{B}_h16_{form}. The softcap and alibi forms carry a
score_mod region (score_mod_region). --decode writes the decode table's
bundles (decode_configs; bench/bench_decode.py times them):
OUT/dec_{dtype}_m{M}_b{B}_n{N}_hkv{Hkv}; with --decode-tune, the
launch-shape variants DECODE_TUNE at three shapes, OUT/VARIANT/NAME.
--f32 writes the f32 table's bundles (F32_VARIANTS; bench/bench_f32.py):
OUT/f32_{variant}_d{D}_n{N}_b{B}_h{H}_{causal|full}.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MLIR_DT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32",
           "float8_e4m3fn": "f8E4M3FN"}


def configs(quick: bool):
    ns = [512, 2048] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    for dtype in ("float16", "bfloat16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in ns:
                    yield dtype, d, n, 16384 // n, 2048 // d, causal
                if not quick:
                    yield dtype, d, 131072, 1, 1, causal


# Launch shapes bench/tune.py compares (name: attn-bundle flags, head dims
# it is tried on). The defaults came from sweeps like this one
# (docs/performance.md, steps 9-25); this is round 13's: the two-block
# wgmma kernel against warp-specialized ones at D = 128.
TUNE_VARIANTS = {
    "wg": (["--warp-specialize=0"], (128,)),
    "ws_pipe_kv128_s3_pp": (["--warp-specialize=1", "--pipeline=1"], (128,)),
    "ws_pipe_kv64_s4_pp": (["--warp-specialize=1", "--pipeline=1", "--tile-kv=64",
                            "--stages=4"], (128,)),
    "ws_w12_kv64_s4": (["--warp-specialize=1", "--warps=12", "--tile-kv=64",
                        "--stages=4"], (128,)),
    "ws_w12_pipe_kv64_s3": (["--warp-specialize=1", "--warps=12", "--pipeline=1",
                             "--tile-kv=64"], (128,)),
}


def tune_configs(ns=(1024, 8192)):
    for dtype in ("float16", "bfloat16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in ns:
                    yield dtype, d, n, 16384 // n, 2048 // d, causal


# Masks a program may take (the FP8 table's mask rows): a per-head f16 bias
# over (m, n), or a bool key-padding mask over (b, n).
MASKS = {"bias": ("(b, h, m, n, d, e) -> (h, m, n)", "h x n x n", "f16"),
         "keypad": ("(b, h, m, n, d, e) -> (b, n)", "b x n", "i1")}


def program(dtype: str, d: int, n: int, b: int, h: int, causal: bool,
            out_dtype: str = "", value_scale: float = 1.0, mask: str = "") -> str:
    """[B, H, N, D] attention; b = n = -1: B, M and N dynamic ("?"). An
    8-bit `dtype` writes `out_dtype`, with V's dequantization scale
    `value_scale`; `mask` one of MASKS."""
    sz = lambda x: "?" if x < 0 else str(x)  # noqa: E731
    t = f"tensor<{sz(b)}x{h}x{sz(n)}x{d}x{MLIR_DT[dtype]}>"
    to = f"tensor<{sz(b)}x{h}x{sz(n)}x{d}x{MLIR_DT[out_dtype or dtype]}>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = [m + x + ">" for x in
            ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)", "(b, h, m, e)")]
    params, clauses, consts = f"%q: {t}, %k: {t}, %v: {t}, %o: {to}", "", ""
    if value_scale != 1.0:
        consts = f"\n  %vs = arith.constant {value_scale!r} : f32"
        clauses += " value_scale(%vs)"
    if mask:
        mmap, shape, elt = MASKS[mask]
        dims = {"b": sz(b), "h": str(h), "n": sz(n)}
        tm = "tensor<" + "x".join(dims[x] for x in shape.split(" x ")) + f"x{elt}>"
        params += f", %mask: {tm}"
        clauses += f" mask(%mask : {tm})"
        maps.append(f"affine_map<{mmap}>")
    return f"""func.func @attention({params}) -> {to} {{
  %s = arith.constant {1.0 / math.sqrt(d)!r} : f32{consts}
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s){clauses} outs(%o : {to})
      {"causal " if causal else ""}indexing_maps = [{", ".join(maps)}] -> {to}
  return %r : {to}
}}
"""


# The f32 table (bench/bench_f32.py): f32 attention on tensor cores, 3xTF32
# (f32-accurate, the default) and TF32, against Triton's TF32 kernel; D in
# {64, 128}, N in {1024, 4096, 16384} at 16k tokens, model dim 2048. Launch
# shapes other than the default are tried at N = 4096 (non-causal), the
# SIMT kernel (f32-precision=ieee) at N = 1024.
F32_NS = (1024, 4096, 16384)
F32_VARIANTS = {  # name: (flags, Ns)
    "3x": (["--f32-precision=3xtf32"], F32_NS),
    "tf32": (["--f32-precision=tf32"], F32_NS),
    "3x_tq64": (["--f32-precision=3xtf32", "--warps=4", "--tile-q=64"], (4096,)),
    "tf32_tq64": (["--f32-precision=tf32", "--warps=4", "--tile-q=64", "--wgmma=0"], (4096,)),
    "3x_w4": (["--f32-precision=3xtf32", "--warps=4"], F32_NS),
    "tf32_w4": (["--f32-precision=tf32", "--warps=4", "--wgmma=0"], F32_NS),
    "3x_pipe": (["--f32-precision=3xtf32", "--warps=4", "--pipeline=1"], (4096,)),
    "tf32_pipe": (["--f32-precision=tf32", "--warps=4", "--pipeline=1", "--wgmma=0"], (4096,)),
    "3x_qreg": (["--f32-precision=3xtf32", "--q-shared=0"], (4096,)),
    "tf32_kv64": (["--f32-precision=tf32", "--warps=4", "--tile-kv=64", "--wgmma=0"], (4096,)),
    "ieee": (["--f32-precision=ieee"], (1024,)),
    # TF32 on the mma.sync kernel (the sm_90a default before wgmma took
    # TF32), and wgmma with 32-key tiles (three stages, pipelined).
    "tf32_mma": (["--f32-precision=tf32", "--wgmma=0"], F32_NS),
    "tf32_kv32": (["--f32-precision=tf32", "--tile-kv=32"], (4096, 16384)),
}


# The FP8 table (bench/bench_fp8.py): e4m3 Q, K, V with f16 output against
# attn-opt's own f16 kernel at the same shape (and SDPA's f16 backends);
# D in {64, 128, 256}, N in {1024, 4096, 16384} at 16k tokens, H = 2048 / D.
FP8_NS = (1024, 4096, 16384)


def fp8_configs():
    for d in (64, 128, 256):
        for n in FP8_NS:
            for causal in (False, True):
                yield d, n, 16384 // n, 2048 // d, causal, ""
    # Mask tensors at D = 128 (SDPA's peers take them as attn_mask).
    for mask in MASKS:
        for n in (4096, 16384):
            yield 128, n, 16384 // n, 16, mask == "bias", mask


def f32_configs():
    for var, (flags, ns) in F32_VARIANTS.items():
        for d in (64, 128):
            for causal in (False, True):
                # Causal rows: the defaults, and 4 warps at D = 128.
                if causal and var not in ("3x", "tf32", "3x_w4", "tf32_w4", "tf32_mma",
                                          "tf32_kv32"):
                    continue
                if var.endswith("_w4") and d == 64:  # the D = 64 default
                    continue
                for n in ns:
                    yield var, flags, d, n, 16384 // n, 2048 // d, causal


# Dynamic against static bundles (bench/bench_dynamic.py): one dynamic
# bundle per (dtype, D, causal) with B, M and N as kernel parameters, and
# the static bundles of the same program at these lengths (16k tokens per
# batch, model dim 2048; 3000 is not a multiple of any tile).
DYNAMIC_NS = (512, 1024, 3000, 4096, 16384)


# Decode rows of the same table: one dynamic bundle per kv-head count
# (B and N dynamic, M = 1, split count chosen at launch) against the static
# decode bundle of each (B, N).
DYNAMIC_DECODE = ((1, 32768), (16, 8192), (64, 4096))
# The serving rows' cache: 64-key pages for the largest B * N above.
SERVE_PAGES = 64 * 4096 // 64


def dynamic_configs():
    for dtype in ("float16",):
        for d in (64, 128):
            for causal in (False, True):
                yield dtype, d, 2048 // d, causal


# The "forms" table (bench/bench_forms.py): score modifications as
# frontends write them, at D = 128 and 16k tokens per batch. Each form's
# mask/sink operand (dims named as in the program), mask dtype, attributes.
FORMS = {
    "plain": dict(),
    "causal": dict(causal=True),
    # T5/relative-position style: a bias per head, broadcast over the batch.
    "bias": dict(mask=("h", "m", "n"), mask_dtype="dtype"),
    # Key padding (BERT, PyTorch's key_padding_mask): bool [B, N].
    "padmask": dict(mask=("b", "n"), mask_dtype="i1"),
    # JAX's causal: jnp.where(causal, s, -0.7 * finfo(f32).max).
    "causal_jaxfill": dict(causal=True, mask_value=-2.3819763e38),
    # gpt-oss: one sink logit per head.
    "sink": dict(sink=("h",)),
    # Gemma-2: SOFTCAP * tanh(s / SOFTCAP) of the scaled scores, causal.
    "softcap": dict(causal=True, score_mod="softcap"),
    # ALiBi: s + slope_h * (n - m), slope_h = exp2(-8 (h + 1) / H) computed
    # in the region from the head index, causal.
    "alibi": dict(causal=True, score_mod="alibi"),
    # Non-causal ALiBi (encoders, FlashAttention's alibi_slopes without
    # causal): s - slope_h |n - m|.
    "alibi_full": dict(score_mod="alibi_abs"),
    # A causal sliding window of WINDOW keys (Mistral, Gemma-2's local
    # layers, gpt-oss): keys m - WINDOW < n <= m.
    "window": dict(causal=True, window=512),
}
SOFTCAP = 50.0
WINDOW = FORMS["window"]["window"]


def score_mod_region(kind: str, h: int) -> str:
    """The score_mod region of a form ([B, H, N, D]: %b0 batch, %b1 head)."""
    if kind == "softcap":
        body = [f"%cap = arith.constant {SOFTCAP!r} : f32",
                "%x = arith.divf %score, %cap : f32",
                "%t = math.tanh %x : f32",
                "%y = arith.mulf %t, %cap : f32"]
    elif kind in ("alibi", "alibi_abs"):
        # slope_h = 2^(-8 (h + 1) / H) from the head index, the distance
        # n - m; "alibi_abs" subtracts slope_h |n - m| (no causal).
        body = ["%h64 = arith.index_cast %b1 : index to i64",
                "%one = arith.constant 1 : i64",
                "%h1 = arith.addi %h64, %one : i64",
                "%hf = arith.sitofp %h1 : i64 to f32",
                f"%c = arith.constant {-8.0 / h!r} : f32",
                "%e = arith.mulf %hf, %c : f32",
                "%slope = math.exp2 %e : f32",
                "%d = arith.subi %n, %m : index",
                "%d64 = arith.index_cast %d : index to i64",
                "%df = arith.sitofp %d64 : i64 to f32"]
        if kind == "alibi":
            body += ["%bias = arith.mulf %slope, %df : f32",
                     "%y = arith.addf %score, %bias : f32"]
        else:
            body += ["%a = math.absf %df : f32",
                     "%bias = arith.mulf %slope, %a : f32",
                     "%y = arith.subf %score, %bias : f32"]
    else:
        raise ValueError(f"unknown score_mod {kind!r}")
    lines = "".join(f"        {x}\n" for x in body + ["attn.yield %y : f32"])
    return ("score_mod {\n      ^bb0(%score: f32, %b0: index, %b1: index, %m: index, "
            f"%n: index):\n{lines}      }}")


def forms_configs():
    for dtype in ("float16", "bfloat16"):
        for n in (1024, 4096, 16384):
            for form in FORMS:
                yield dtype, 128, n, 16384 // n, 16, form
            # Head dims other than 64/128 (cuDNN's rows in the issue).
            for d in (80, 96, 256):
                for form in ("plain", "causal"):
                    yield dtype, d, n, 16384 // n, 16, form


def forms_program(dtype: str, d: int, n: int, b: int, h: int, form: str) -> str:
    f = FORMS[form]
    dt = MLIR_DT[dtype]
    size = {"b": b, "h": h, "m": n, "n": n}
    t = f"tensor<{b}x{h}x{n}x{d}x{dt}>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = [m + x + ">" for x in
            ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)", "(b, h, m, e)")]
    params = [f"%q: {t}", f"%k: {t}", f"%v: {t}"]
    clauses = ""
    for name in ("mask", "sink"):
        if name not in f:
            continue
        edt = dt if name == "sink" or f["mask_dtype"] == "dtype" else f["mask_dtype"]
        ts = "tensor<" + "".join(f"{size[x]}x" for x in f[name]) + edt + ">"
        params.append(f"%{name}: {ts}")
        clauses += f" {name}(%{name} : {ts})"
        maps.append(m + "(" + ", ".join(f[name]) + ")>")
    attrs = ("causal " if f.get("causal") else "") + \
        (f"window = {f['window']} " if "window" in f else "") + \
        (f"mask_value = {f['mask_value']!r} " if "mask_value" in f else "")
    region = f" {score_mod_region(f['score_mod'], h)}" if "score_mod" in f else ""
    return f"""func.func @attention({', '.join(params)}, %o: {t}) -> {t} {{
  %s = arith.constant {1.0 / math.sqrt(d)!r} : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s){clauses} outs(%o : {t})
      {attrs}indexing_maps = [{", ".join(maps)}]{region} -> {t}
  return %r : {t}
}}
"""


# The decode table (bench/bench_decode.py): M new query tokens per sequence
# against N cached keys, 32 query heads with 32 or 8 kv heads (GQA: q laid
# out [B, Hkv, G, M, D], the same memory as [B, 32, M, D]), D = 128. Rows
# whose K/V would pass DECODE_MAX_KV_BYTES are left out (80 GB device).
DECODE_MAX_KV_BYTES = 24 << 30
# Launch-shape variants tried at two decode shapes (--decode-tune).
DECODE_TUNE = {
    "kv64_s3": [],
    "kv32_s4": ["--tile-kv=32", "--stages=4"],
    "kv64_s2": ["--stages=2"],
    "kv128_s2": ["--tile-kv=128", "--stages=2"],
    "kv64_s4": ["--stages=4"],
    "nosplit": ["--splits=1"],
    "splits_x2": ["--splits=SPLITS_X2"],
}


def decode_configs(quick: bool):
    for dtype in ("float16", "bfloat16"):
        for m in (1, 16):
            for b in (1, 16, 64):
                for n in (1024, 8192, 32768, 131072):
                    for hkv in (32, 8):
                        if quick and (b != 16 or n not in (8192,)):
                            continue
                        if dtype == "bfloat16" and (b != 16 or m != 1):
                            continue  # bf16: one row set (same kernel)
                        if 2 * b * hkv * n * 128 * 2 > DECODE_MAX_KV_BYTES:
                            continue
                        yield dtype, m, b, n, hkv


def auto_splits(m: int, b: int, n: int, hkv: int, hq: int = 32) -> int:
    """The split count convert-attn-to-gpu picks for a decode row on an H100
    (its launch_rules.splits, 64-key tiles)."""
    # One query tile per (sequence, kv head) with GQA packing (m x group
    # rows <= 64), else per (sequence, query head).
    blocks = b * (hkv if m * (hq // hkv) <= 64 and hq != hkv else hq)
    want = max(1, min(-(-(3 * 132 // 2) // blocks), n // 256))
    chunk = -(-(-(-n // want)) // 64) * 64
    return -(-n // chunk)


# Paged rows (bench_decode.py times each against the contiguous row of the
# same shape): vLLM's cache layout [pages, page, Hkv, D], page sizes 16/256.
DECODE_PAGED = [(p, "float16", 1, 16, 8192, hkv) for p in (16, 256) for hkv in (32, 8)] + \
    [(16, "float16", 16, 64, 8192, 8), (16, "float16", 16, 16, 8192, 8),
     (16, "float16", 1, 1, 32768, 8)]


# Per-sequence lengths (bench_decode.py: the lens rows against the same
# shapes with the lengths given as a padding mask tensor, "padmask").
DECODE_LENS = [("float16", 1, 16, 32768, 8), ("float16", 1, 64, 8192, 32)]


def decode_program(dtype: str, m: int, b: Any, n: int, hkv: int, hq: int = 32,
                   d: int = 128, page: int = 0, lens: str = "",
                   cache_pages: int = 0) -> str:
    """b "?": a dynamic batch; cache_pages: the caches' pages (default
    b * n / page, every page used once)."""
    dt = MLIR_DT[dtype]
    g = hq // hkv
    tq = f"tensor<{b}x{hkv}x{g}x{m}x{d}x{dt}>"
    tk = f"tensor<{b}x{hkv}x{n}x{d}x{dt}>"
    kmap, vmap = "(b, h, n, d)", "(b, h, n, e)"
    params, gathers = f"%k: {tk}, %v: {tk}", ""
    if page:
        # Logical K [B, N, Hkv, D] from the cache [B N / page, page, Hkv, D].
        tk = f"tensor<{b}x{n}x{hkv}x{d}x{dt}>"
        tc = f"tensor<{cache_pages or b * n // page}x{page}x{hkv}x{d}x{dt}>"
        tt = f"tensor<{b}x{n // page}xi32>"
        kmap, vmap = "(b, n, h, d)", "(b, n, h, e)"
        params = f"%t: {tt}, %kc: {tc}, %vc: {tc}"
        gathers = "".join(f"  %{x} = attn.page_gather %{x}c[%t] seq_dim = 0 token_dim = 1 "
                          f": {tc}, {tt} -> {tk}\n" for x in "kv")
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(b, h, g, m, d)", kmap, vmap,
                                            "(b, h, g, m, e)"))
    mask = ""
    if lens:  # "lens": attn.length_mask of int32 lengths; "padmask": a bool mask
        tm = f"tensor<{b}x{n}xi1>"
        if lens == "lens":
            params += f", %lens: tensor<{b}xi32>"
            gathers += f"  %mask = attn.length_mask %lens : tensor<{b}xi32> -> {tm}\n"
        else:
            params += f", %mask: {tm}"
        mask = f" mask(%mask : {tm})"
        maps += ", " + mp + "(b, n)>"
    # The new tokens are the last M positions: bottom-right causal.
    causal = f"causal query_offset = {n - m} " if m > 1 else ""
    return f"""func.func @attention(%q: {tq}, {params}, %o: {tq}) -> {tq} {{
  %s = arith.constant {1.0 / math.sqrt(d)!r} : f32
{gathers}  %r = attn.attention ins(%q, %k, %v : {tq}, {tk}, {tk}) scale(%s){mask} outs(%o : {tq})
      {causal}indexing_maps = [{maps}] -> {tq}
  return %r : {tq}
}}
"""


# Varlen prefill (bench_varlen.py): T packed tokens in S sequences, [T, H, D]
# (attn.varlen_mask of cu_seqlens tables), against the dense kernel on S
# sequences of T / S tokens in the same memory ([S, T / S, H, D]).
VARLEN_T, VARLEN_H = 16384, 16


def varlen_configs():
    for d in (64, 128):
        for causal in (True, False):
            for s in (1, 4, 16, 64):
                yield "float16", d, s, causal


def varlen_program(dtype: str, d: int, seqs: int, causal: bool, dense: bool,
                   t: int = VARLEN_T, h: int = VARLEN_H) -> str:
    dt = MLIR_DT[dtype]
    scale = repr(1.0 / math.sqrt(d))
    if dense:
        length = t // seqs
        ty = f"tensor<{seqs}x{length}x{h}x{d}x{dt}>"
        mp = "affine_map<(b, h, m, n, d, e) -> "
        maps = ", ".join(mp + x + ">" for x in ("(b, m, h, d)", "(b, n, h, d)",
                                                "(b, n, h, e)", "(b, m, h, e)"))
        return f"""func.func @attention(%q: {ty}, %k: {ty}, %v: {ty}, %o: {ty}) -> {ty} {{
  %s = arith.constant {scale} : f32
  %r = attn.attention ins(%q, %k, %v : {ty}, {ty}, {ty}) scale(%s) outs(%o : {ty})
      {'causal ' if causal else ''}indexing_maps = [{maps}] -> {ty}
  return %r : {ty}
}}
"""
    ty = f"tensor<{t}x{h}x{d}x{dt}>"
    tc = f"tensor<{seqs + 1}xi32>"
    tm = f"tensor<{t}x{t}xi1>"
    mp = "affine_map<(h, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(m, h, d)", "(n, h, d)", "(n, h, e)",
                                            "(m, h, e)", "(m, n)"))
    return f"""func.func @attention(%q: {ty}, %k: {ty}, %v: {ty}, %cu: {tc}, %o: {ty}) -> {ty} {{
  %s = arith.constant {scale} : f32
  %mask = attn.varlen_mask %cu, %cu{' causal' if causal else ''} : {tc}, {tc} -> {tm}
  %r = attn.attention ins(%q, %k, %v : {ty}, {ty}, {ty}) scale(%s) mask(%mask : {tm})
      outs(%o : {ty}) indexing_maps = [{maps}] -> {ty}
  return %r : {ty}
}}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench" / "bundles"))
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--attn-bundle", default=str(ROOT / "build" / "bin" / "attn-bundle"))
    ap.add_argument("--flags", default="", help="attn-bundle options, space-separated")
    ap.add_argument("--tune", action="store_true", help="the launch-shape sweep")
    ap.add_argument("--tune-n", default="1024,8192",
                    help="--tune: sequence lengths, comma-separated")
    ap.add_argument("--forms", action="store_true",
                    help="the forms table's bundles (bench/bench_forms.py)")
    ap.add_argument("--decode", action="store_true",
                    help="the decode table's bundles (bench/bench_decode.py)")
    ap.add_argument("--decode-tune", action="store_true",
                    help="--decode: the launch-shape variants (DECODE_TUNE) at "
                         "two shapes, OUT/VARIANT/NAME")
    ap.add_argument("--varlen", action="store_true",
                    help="the varlen table's bundles (bench/bench_varlen.py)")
    ap.add_argument("--dynamic", action="store_true",
                    help="dynamic and static bundles (bench/bench_dynamic.py): "
                         "OUT/dyn_{dtype}_d{D}_h{H}_{causal|full} and "
                         "OUT/st_{dtype}_d{D}_n{N}_b{B}_h{H}_{causal|full}")
    ap.add_argument("--f32", action="store_true",
                    help="the f32 table's bundles (bench/bench_f32.py)")
    ap.add_argument("--fp8", action="store_true",
                    help="the FP8 table: e4m3 bundles and their f16 twins")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    out = Path(a.out)
    jobs = []  # (bundle dir, program, flags)
    if a.fp8:
        for d, n, b, h, causal, mask in fp8_configs():
            tag = (f"d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}"
                   + (f"_{mask}" if mask else ""))
            jobs.append((out / f"fp8_{tag}",
                         program("float8_e4m3fn", d, n, b, h, causal,
                                 out_dtype="float16", mask=mask), a.flags.split()))
            jobs.append((out / f"f16_{tag}",
                         program("float16", d, n, b, h, causal, mask=mask),
                         a.flags.split()))
    elif a.f32:
        for var, flags, d, n, b, h, causal in f32_configs():
            name = f"f32_{var}_d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}"
            jobs.append((out / name, program("float32", d, n, b, h, causal),
                         flags + a.flags.split()))
    elif a.dynamic:
        for dtype, d, h, causal in dynamic_configs():
            tag = "causal" if causal else "full"
            jobs.append((out / f"dyn_{dtype}_d{d}_h{h}_{tag}",
                         program(dtype, d, -1, -1, h, causal), a.flags.split()))
            for n in DYNAMIC_NS:
                b = 16384 // n
                jobs.append((out / f"st_{dtype}_d{d}_n{n}_b{b}_h{h}_{tag}",
                             program(dtype, d, n, b, h, causal), a.flags.split()))
        # D = 256 (Gemma's head dim) over 8 kv heads, decode rows only.
        for b, n in ((None, None),) + DYNAMIC_DECODE:
            dest = (f"decdyn_float16_m1_hkv8_d256" if b is None
                    else f"decst_float16_m1_b{b}_n{n}_hkv8_d256")
            jobs.append((out / dest, decode_program("float16", 1, b or "?", n or "?", 8,
                                                    d=256), a.flags.split()))
        for hkv in (32, 8):
            jobs.append((out / f"decdyn_float16_m1_hkv{hkv}",
                         decode_program("float16", 1, "?", "?", hkv), a.flags.split()))
            for b, n in DYNAMIC_DECODE:
                jobs.append((out / f"decst_float16_m1_b{b}_n{n}_hkv{hkv}",
                             decode_program("float16", 1, b, n, hkv), a.flags.split()))
                # Serving: paged (64-key pages, one cache of SERVE_PAGES)
                # with kv_lens, the batch dynamic, against its static twin.
                for tag, bb in (("dyn", "?"), ("st", b)):
                    jobs.append((out / f"decp{tag}_float16_m1_b{b}_n{n}_hkv{hkv}",
                                 decode_program("float16", 1, bb, n, hkv, page=64,
                                                lens="lens", cache_pages=SERVE_PAGES),
                                 a.flags.split()))
                # Speculative decode (M = 16, bottom-right causal): the
                # batch dynamic (one bundle per N), against the static one.
                if hkv == 8:
                    jobs.append((out / f"decsst_float16_m16_b{b}_n{n}_hkv8",
                                 decode_program("float16", 16, b, n, 8), a.flags.split()))
                    jobs.append((out / f"decsdyn_float16_m16_n{n}_hkv8",
                                 decode_program("float16", 16, "?", n, 8), a.flags.split()))
    elif a.varlen:
        for dtype, d, seqs, causal in varlen_configs():
            tag = f"{dtype}_d{d}_s{seqs}_{'causal' if causal else 'full'}"
            for dense in (False, True):
                jobs.append((out / f"{'vd' if dense else 'vl'}_{tag}",
                             varlen_program(dtype, d, seqs, causal, dense),
                             a.flags.split()))
    elif a.decode and a.decode_tune:
        for var, flags in DECODE_TUNE.items():
            for dtype, m, b, n, hkv in (("float16", 1, 16, 8192, 32),
                                        ("float16", 1, 1, 32768, 8),
                                        ("float16", 16, 64, 4096, 8)):
                name = f"dec_{dtype}_m{m}_b{b}_n{n}_hkv{hkv}"
                fl = [f.replace("SPLITS_X2", str(2 * auto_splits(m, b, n, hkv)))
                      for f in flags]
                jobs.append((out / var / name, decode_program(dtype, m, b, n, hkv), fl))
    elif a.decode:
        for dtype, m, b, n, hkv in decode_configs(a.quick):
            name = f"dec_{dtype}_m{m}_b{b}_n{n}_hkv{hkv}"
            jobs.append((out / name, decode_program(dtype, m, b, n, hkv), a.flags.split()))
        for dtype, m, b, n, hkv in DECODE_LENS:
            name = f"dec_{dtype}_m{m}_b{b}_n{n}_hkv{hkv}"
            for kind in ("lens", "padmask"):
                jobs.append((out / kind / name,
                             decode_program(dtype, m, b, n, hkv, lens=kind),
                             a.flags.split()))
        for page, dtype, m, b, n, hkv in DECODE_PAGED:
            name = f"dec_{dtype}_m{m}_b{b}_n{n}_hkv{hkv}"
            jobs.append((out / f"paged{page}" / name,
                         decode_program(dtype, m, b, n, hkv, page=page), a.flags.split()))
    elif a.forms:
        for dtype, d, n, b, h, form in forms_configs():
            name = f"{dtype}_d{d}_n{n}_b{b}_h{h}_{form}"
            jobs.append((out / name, forms_program(dtype, d, n, b, h, form), a.flags.split()))
    elif a.tune:
        for var, (flags, dims) in TUNE_VARIANTS.items():
            ns = tuple(int(x) for x in a.tune_n.split(","))
            for dtype, d, n, b, h, causal in tune_configs(ns):
                if d not in dims:
                    continue
                name = f"{dtype}_d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}"
                jobs.append((out / var / name, program(dtype, d, n, b, h, causal), flags))
    else:
        for dtype, d, n, b, h, causal in configs(a.quick):
            name = f"{dtype}_d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}"
            jobs.append((out / name, program(dtype, d, n, b, h, causal), a.flags.split()))

    def build(job) -> str:
        dest, text, flags = job
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as src:
            src.write(text)
            src.flush()
            p = subprocess.run([a.attn_bundle, src.name, "-o", str(dest),
                                f"--chip={a.chip}", *flags], capture_output=True, text=True)
        return f"FAIL {dest}: {p.stderr[-2000:]}" if p.returncode else ""

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        for job, err in zip(jobs, pool.map(build, jobs)):
            if err:
                failed += 1
                print(err, file=sys.stderr)
            else:
                print(f"wrote {job[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
