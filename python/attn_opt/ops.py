"""Calls on torch tensors: dense attention of any length, varlen prefill and
(paged) decode.

    out = dense_attention(q, k, v, causal=True)        # one bundle, any B, M, N
    out = varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, causal=True)
    out, lse = decode_attention(q, k_cache, v_cache, block_table=table,
                                kv_lens=lens, return_lse=True)

Each call writes the attention as MLIR (`varlen_program`, `decode_program`:
attn.varlen_mask, attn.page_gather, attn.length_mask around attn.attention),
compiles it with attn-bundle (for the tensors' shapes, or dynamic ones) under
`cache_dir` (named by the sha256 of the program and chip, reused when it
is there), loads it once per process and launches it. Without attn-bundle
(a GPU machine with no MLIR) only bundles already in the cache run:
`prepare_*` compiles them ahead of time with the same names, so a cache
built on one machine serves another.

`dense_attention` compiles one dynamic-shape bundle per (heads, head dim,
dtype, causal, scale, lse; with FP8 inputs also the value scale and output
dtype): batch, query and key lengths are kernel
parameters, so a model whose lengths change does not recompile;
`decode_attention` one per (query tokens, heads, key capacity, head dim,
dtype, paging, kv_lens, causal, scale, lse) for every batch size (the
split-KV count chosen at launch);
`varlen_attention` likewise per table size, the sequence count rounded up
to a power of two (`seq_bucket`; the tables are padded with empty
sequences), at every token count. All three take `softcap` (Gemma-2's
`softcap * tanh(s / softcap)` of the scaled scores, FlashAttention's
argument; 0: none) as a score_mod region: decode keeps its query heads
packed with it. All three take `alibi_slopes` (float32 [Hq],
FlashAttention's ALiBi, read at each call; varlen without causal with
equal tables, decode with more than one query token under causal).
`dense_attention` and `decode_attention` take `window_size` (left, right),
FlashAttention's sliding window: query m sees keys m - left <= n, and
right is -1 (every later key) or 0 (causal); dense aligns it top-left as
its causal rule, decode at the cache's end (not with kv_lens).
`document_attention` (packed documents: segment ids per query and key,
int32 or int64 [B, M] / [B, N]) compiles one bundle for every shape and
packing (B, M and N dynamic; `dynamic=False`: one per shape).
`dense_attention`'s causal
rule is top-left (SDPA's `is_causal`: query m sees keys n <= m); the
varlen and decode calls also take bottom-right.

Layouts are FlashAttention's: dense q [B, M, Hq, D], k/v [B, N, Hkv, D];
varlen q [Tq, Hq, D], k/v [Tk, Hkv, D],
cu_seqlens int32 [S + 1]; decode q [B, M, Hq, D], k/v [B, N, Hkv, D], or
paged caches [pages, page_size, Hkv, D] with an int32 block table
[B, pages per sequence] and int32 kv_lens [B]. Hq = G * Hkv (GQA: query
head h reads kv head h // G). Returns out (q's shape and dtype) or
(out, lse) with lse f32 [Tq, Hq] / [B, M, Hq].
"""
from __future__ import annotations

import functools
import hashlib
import math
import numbers
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .bundle import BundleError, Kernel, compile, dtype_name, load

# float32 runs on tensor cores as 3xTF32 (f32-accurate; attn-bundle's
# default f32-precision).
_DT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
# FP8 (dense_attention only): 8-bit q, k, v with a 16-bit output.
_F8 = {"float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2"}
_LOADED: Dict[str, Kernel] = {}
_BY_PROGRAM: Dict[Tuple[Any, ...], Kernel] = {}


def default_cache_dir() -> Path:
    """$ATTN_OPT_CACHE, else ~/.cache/attn-opt."""
    env = os.environ.get("ATTN_OPT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "attn-opt"


def _dt(dtype: str) -> str:
    if dtype not in _DT:
        raise BundleError(f"attn_opt.ops: tensor-core kernels take float16, "
                          f"bfloat16 or float32, got {dtype}")
    return _DT[dtype]


def _heads(hq: int, hkv: int) -> int:
    if hkv < 1 or hq % hkv:
        raise BundleError(f"attn_opt.ops: {hq} query heads are not a multiple "
                          f"of {hkv} kv heads")
    return hq // hkv


def _common(hq: int, hkv: int, d: int, dtype: str,
            scale: Optional[float]) -> Tuple[int, str, float]:
    """What every program starts from: the group size, the MLIR element
    type and the scale (1/sqrt(d) by default)."""
    return (_heads(hq, hkv), _dt(dtype),
            1.0 / math.sqrt(d) if scale is None else float(scale))


def _results(tqt: str, tl: str, lse: bool) -> Tuple[str, str, str]:
    """The function's result types, the attention's result names and the
    returned values: out, or out and the lse."""
    return ((f"{tqt}, {tl}", "%r, %l", "%r, %l") if lse else (tqt, "%r", "%r"))


def with_softcap(text: str, softcap: Optional[float]) -> str:
    """`text` (a program with one attn.attention) with logit soft-capping,
    softcap * tanh(s / softcap) of the scaled scores (Gemma-2; FlashAttention's
    `softcap` argument), as the op's score_mod region; unchanged for None or
    0. The region reads no index, so GQA decode keeps its query heads
    packed and varlen takes it."""
    return _with_region(text, softcap, None)


def _check_chunk(chunk: Any) -> None:
    if isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or \
            not 0 <= chunk < 2 ** 62:
        raise BundleError("attn_opt.ops: chunk_size must be an int in [0, 2^62) "
                          f"(0 for none), got {chunk!r}")


def _with_region(text: str, softcap: Optional[float], alibi: Optional[bool],
                 chunk: int = 0, chunk_offset: int = 0, chunk_lens: bool = False,
                 lens_causal: int = 0) -> str:
    """`text` with a score_mod region: soft-capping (see with_softcap), then
    ALiBi's bias when `alibi` is not None (the program reads the slopes as
    its first score_mod operand: dense_program(alibi=True)). ALiBi, as
    FlashAttention's `alibi_slopes`, adds -slope * |m - n| to the scaled
    (and capped) score of query m and key n; under causal (alibi True) the
    keys a query sees have n <= m, so it is slope * (n - m): linear in the
    key index, which the tensor-core kernels take apart (no op per score).
    Without causal the Hopper kernel takes -slope * |m - n| apart on every
    key tile where n - m keeps its sign in each row, and applies it per
    score on the diagonal's tiles. `chunk` > 0 (Llama 4's chunked attention)
    then keeps a score only where query m and key n lie in the same chunk
    of that many positions, m // chunk == n // chunk (-inf elsewhere): the
    kernels bound each query tile's keys by its chunks. `chunk_offset`
    places query m at key position m + chunk_offset for the chunks (decode:
    the new tokens after the cache, as `query_offset`); `chunk_lens`: plus
    the sequence's length, the region's last operand (an i32 per batch
    entry: decode_attention's kv_lens). `lens_causal` M > 0: causal per
    sequence, query m at position len - M + m of its sequence (the length
    the same operand): keys n > len - M + m score -inf (FlashAttention's
    bottom-right rule with cache_seqlens)."""
    cap = float(softcap or 0.0)
    _check_chunk(chunk)
    if softcap and not (cap > 0 and math.isfinite(cap)):
        raise BundleError("attn_opt.ops: softcap must be a positive finite "
                          f"number (or 0 for none), got {softcap!r}")
    if not cap and alibi is None and not chunk and not lens_causal:
        return text
    at = text.index("indexing_maps = [affine_map<(")
    dims = text[at + len("indexing_maps = [affine_map<("):].split(")", 1)[0]
    batch = len(dims.split(",")) - 4  # the first map's (batch..., m, n, d, e)
    args = ", ".join(["%sc_s: f32"] + [f"%sc_b{i}: index" for i in range(batch)]
                     + ["%sc_m: index", "%sc_n: index"]
                     + (["%al_sl: f32"] if alibi is not None else [])
                     + (["%ch_len: i32"] if chunk_lens or lens_causal else []))
    body, y = [], "%sc_s"
    if cap:
        body += [f"%sc_c = arith.constant {cap!r} : f32",
                 "%sc_x = arith.divf %sc_s, %sc_c : f32",
                 "%sc_t = math.tanh %sc_x : f32",
                 "%sc_y = arith.mulf %sc_t, %sc_c : f32"]
        y = "%sc_y"
    if alibi is not None:
        body += ["%al_m = arith.index_cast %sc_m : index to i64",
                 "%al_n = arith.index_cast %sc_n : index to i64",
                 "%al_d = arith.subi %al_n, %al_m : i64",
                 "%al_f = arith.sitofp %al_d : i64 to f32"]
        if alibi:  # causal: n <= m where it counts
            body.append("%al_b = arith.mulf %al_sl, %al_f : f32")
        else:
            body += ["%al_a = math.absf %al_f : f32",
                     "%al_p = arith.mulf %al_sl, %al_a : f32",
                     "%al_b = arith.negf %al_p : f32"]
        body.append(f"%al_y = arith.addf {y}, %al_b : f32")
        y = "%al_y"
    if lens_causal:
        body += ["%lc_li = arith.index_cast %ch_len : i32 to index",
                 "%lc_p = arith.addi %sc_m, %lc_li : index",
                 f"%lc_c = arith.constant {-int(lens_causal)} : index",
                 "%lc_q = arith.addi %lc_p, %lc_c : index",
                 "%lc_ok = arith.cmpi sle, %sc_n, %lc_q : index",
                 "%lc_f = arith.constant 0xFF800000 : f32",
                 f"%lc_y = arith.select %lc_ok, {y}, %lc_f : f32"]
        y = "%lc_y"
    if chunk:
        pos = "%sc_m"
        if chunk_offset:
            body += [f"%ch_o = arith.constant {int(chunk_offset)} : index",
                     "%ch_p = arith.addi %sc_m, %ch_o : index"]
            pos = "%ch_p"
        if chunk_lens:
            body += ["%ch_li = arith.index_cast %ch_len : i32 to index",
                     f"%ch_q = arith.addi {pos}, %ch_li : index"]
            pos = "%ch_q"
        body += [f"%ch_c = arith.constant {int(chunk)} : index",
                 f"%ch_m = arith.floordivsi {pos}, %ch_c : index",
                 "%ch_n = arith.floordivsi %sc_n, %ch_c : index",
                 "%ch_eq = arith.cmpi eq, %ch_m, %ch_n : index",
                 "%ch_f = arith.constant 0xFF800000 : f32",
                 f"%ch_y = arith.select %ch_eq, {y}, %ch_f : f32"]
        y = "%ch_y"
    region = (f" score_mod {{\n      ^bb0({args}):\n"
              + "".join(f"        {x}\n" for x in body)
              + f"        attn.yield {y} : f32\n      }}")
    end = text.index("] -> ", at) + 1
    return text[:end] + region + text[end:]


def _window(window_size: Any, causal: bool) -> Tuple[int, bool]:
    """FlashAttention's `window_size` (left, right) as the op's (window,
    causal): query m sees keys m - left <= n (left -1: no bound) and n <=
    m + right, where the op bounds the right side only by causal: right 0
    (or causal) is causal, right -1 none. Window 0: none."""
    try:
        left, right = (int(x) for x in window_size)
    except (TypeError, ValueError):
        raise BundleError(f"attn_opt.ops: window_size must be two integers "
                          f"(left, right), got {window_size!r}") from None
    if left < -1 or right < -1:
        raise BundleError(f"attn_opt.ops: window_size entries must be -1 (no "
                          f"bound) or >= 0, got {window_size!r}")
    if right > 0:
        raise BundleError(f"attn_opt.ops: window_size ({left}, {right}): keys "
                          f"after the query are either all seen (-1) or none "
                          f"(0, causal); a bound of {right} is not supported")
    return (0 if left == -1 else left + 1), causal or right == 0


def _slopes_operand(hkv: int, g: int, mp: str) -> Tuple[str, str, str]:
    """ALiBi's slopes as the attention's score_mod operand: (the function
    parameter, the op clause, its indexing map)."""
    ts = f"tensor<{hkv}x{g}xf32>"
    return f"%al: {ts}", f" score_mod_operands(%al : {ts})", f"{mp}(h, g)>"


def _slopes_arg(slopes: Any, hq: int, hkv: int) -> Any:
    """`alibi_slopes` checked (float32 [Hq]) and viewed [Hkv, G]."""
    if (not hasattr(slopes, "dim") or dtype_name(slopes) != "float32"
            or tuple(slopes.shape) != (hq,)):
        raise BundleError(f"attn_opt.ops: alibi_slopes must be a float32 tensor "
                          f"[Hq] = [{hq}], got {getattr(slopes, 'shape', type(slopes))}")
    return slopes.reshape(hkv, hq // hkv)


def varlen_program(hq: int, hkv: int, d: int, seqs: int,
                   dtype: str = "float16", causal: bool = False,
                   bottom_right: bool = False, scale: Optional[float] = None,
                   lse: bool = False, alibi: bool = False) -> str:
    """The varlen attention as MLIR: q [?, hq, d], k/v [?, hkv, d] (token
    counts dynamic: one bundle for every batch of at most `seqs`
    sequences), tables [seqs + 1], q heads grouped as [hkv, hq / hkv].
    `alibi`: it also takes ALiBi's slopes %al [hkv, g] as its score_mod
    operand (the region: _with_region)."""
    g, t, scale = _common(hq, hkv, d, dtype, scale)
    tqt = f"tensor<?x{hkv}x{g}x{d}x{t}>"
    tkt = f"tensor<?x{hkv}x{d}x{t}>"
    tc = f"tensor<{seqs + 1}xi32>"
    tm = "tensor<?x?xi1>"
    tl = f"tensor<?x{hkv}x{g}xf32>"
    flags = (" causal" if causal else "") + (" bottom_right" if bottom_right else "")
    mp = "affine_map<(h, g, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(m, h, g, d)", "(n, h, d)", "(n, h, e)",
                                            "(m, h, g, e)", "(m, n)"))
    param, mods = "", ""
    if alibi:
        param, mods, amap = _slopes_operand(hkv, g, mp)
        param, maps = ", " + param, maps + ", " + amap
    res, lhs, ret = _results(tqt, tl, lse)
    return f"""func.func @varlen(%q: {tqt}, %k: {tkt}, %v: {tkt}, %cuq: {tc}, %cuk: {tc}{param}, %o: {tqt}) -> ({res}) {{
  %s = arith.constant {scale!r} : f32
  %c0 = arith.constant 0 : index
  %tq = tensor.dim %q, %c0 : {tqt}
  %tk = tensor.dim %k, %c0 : {tkt}
  %m = attn.varlen_mask %cuq, %cuk{flags} sizes(%tq, %tk) : {tc}, {tc} -> {tm}
  {lhs} = attn.attention ins(%q, %k, %v : {tqt}, {tkt}, {tkt}) scale(%s)
      mask(%m : {tm}){mods} outs(%o : {tqt}) indexing_maps = [{maps}] -> {res}
  return {ret} : {res}
}}
"""


def dense_program(hq: int, hkv: int, d: int, dtype: str = "float16",
                  causal: bool = False, scale: Optional[float] = None,
                  lse: bool = False, out_dtype: Optional[str] = None,
                  value_scale: float = 1.0, runtime_scales: str = "",
                  alibi: bool = False, window: int = 0) -> str:
    """Dense attention as MLIR with B, M and N dynamic: q [?, ?, hq, d]
    (viewed [?, ?, hkv, g, d]), k/v [?, ?, hkv, d]. FP8 (`dtype` an 8-bit
    float): q, k, v of that type, the output `out_dtype` (float16 or
    bfloat16), V's dequantization scale `value_scale` (Q's and K's are
    part of `scale`); `runtime_scales` (letters of "qkv"): those operands'
    dequantization scales are also f32 0-d tensor arguments %qds, %kds,
    %vds (the kernel's scale0, scale1, .. in that order) multiplied in at
    run time. `alibi`: the program also takes ALiBi's slopes, f32 %al
    [hkv, g] (one per query head), as the attention's score_mod operand
    (the region that reads them: _with_region). `window` W > 0: query m
    sees keys m - W < n (a sliding window, aligned top-left)."""
    f8 = _F8.get(dtype)
    g, t, scale = _common(hq, hkv, d, "float16" if f8 else dtype, scale)
    to = t
    if f8:
        t, to = f8, _dt(out_dtype or "float16")
        if to == "f32":
            raise BundleError("attn_opt.ops: FP8 attention writes float16 or "
                              "bfloat16")
    elif out_dtype not in (None, dtype) or value_scale != 1.0 or runtime_scales:
        raise BundleError("attn_opt.ops: out_dtype and value_scale are for FP8 "
                          "inputs")
    tqt = f"tensor<?x?x{hkv}x{g}x{d}x{t}>"
    tot = f"tensor<?x?x{hkv}x{g}x{d}x{to}>"
    tkt = f"tensor<?x?x{hkv}x{d}x{t}>"
    tl = f"tensor<?x?x{hkv}x{g}xf32>"
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(b, m, h, g, d)", "(b, n, h, d)",
                                            "(b, n, h, e)", "(b, m, h, g, e)"))
    res, lhs, ret = _results(tot, tl, lse)
    # The scales: constants, times the runtime ones (0-d f32 arguments).
    lines = [f"%s0 = arith.constant {scale!r} : f32"]
    s_name, vs_name, params = "%s0", "", ""
    if value_scale != 1.0 or "v" in runtime_scales:
        lines.append(f"%vs0 = arith.constant {float(value_scale)!r} : f32")
        vs_name = "%vs0"
    for x in "qkv":
        if x not in runtime_scales:
            continue
        params += f", %{x}ds: tensor<f32>"
        lines.append(f"%{x}d = tensor.extract %{x}ds[] : tensor<f32>")
        prev = vs_name if x == "v" else s_name
        lines.append(f"%{x}m = arith.mulf {prev}, %{x}d : f32")
        if x == "v":
            vs_name = f"%{x}m"
        else:
            s_name = f"%{x}m"
    vs = f" value_scale({vs_name})" if vs_name else ""
    mods = ""
    if alibi:
        param, mods, amap = _slopes_operand(hkv, g, mp)
        params += ", " + param
        maps += ", " + amap
    defs = "".join(f"  {x}\n" for x in lines)
    return f"""func.func @dense(%q: {tqt}, %k: {tkt}, %v: {tkt}{params}, %o: {tot}) -> ({res}) {{
{defs}  {lhs} = attn.attention ins(%q, %k, %v : {tqt}, {tkt}, {tkt}) scale({s_name}){vs}{mods}
      outs(%o : {tot}) {"causal " if causal else ""}{f"window = {window} " if window else ""}indexing_maps = [{maps}] -> {res}
  return {ret} : {res}
}}
"""


def document_program(b: Optional[int], m: Optional[int], n: Optional[int], hq: int,
                     hkv: int, d: int, dtype: str = "float16", causal: bool = False,
                     scale: Optional[float] = None, lse: bool = False,
                     ids_dtype: str = "int32") -> str:
    """Packed documents as MLIR: q [b, m, hq, d] (viewed [b, m, hkv, g, d]),
    k/v [b, n, hkv, d], and the segment ids (int32, or int64 as torch's
    default) %sq [b, m] and %sk [b, n] as the attention's score_mod
    operands; the region keeps the scaled score where the query's id equals
    the key's (FlexAttention's document mask, what the recognizer makes of
    JAX's segment-id masks), -inf elsewhere. `causal` top-left. b, m or n
    None: a dynamic size (one bundle for every value)."""
    b, m, n = ("?" if x is None else x for x in (b, m, n))
    g, t, scale = _common(hq, hkv, d, dtype, scale)
    tqt = f"tensor<{b}x{m}x{hkv}x{g}x{d}x{t}>"
    tkt = f"tensor<{b}x{n}x{hkv}x{d}x{t}>"
    tl = f"tensor<{b}x{m}x{hkv}x{g}xf32>"
    if ids_dtype not in ("int32", "int64"):
        raise BundleError(f"attn_opt.ops: segment ids are int32 or int64, got {ids_dtype}")
    it = "i" + ids_dtype[3:]
    ids_q, ids_k = f"tensor<{b}x{m}x{it}>", f"tensor<{b}x{n}x{it}>"
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(b, m, h, g, d)", "(b, n, h, d)",
                                            "(b, n, h, e)", "(b, m, h, g, e)",
                                            "(b, m)", "(b, n)"))
    res, lhs, ret = _results(tqt, tl, lse)
    return f"""func.func @document(%q: {tqt}, %k: {tkt}, %v: {tkt}, %sq: {ids_q}, %sk: {ids_k}, %o: {tqt}) -> ({res}) {{
  %s0 = arith.constant {scale!r} : f32
  {lhs} = attn.attention ins(%q, %k, %v : {tqt}, {tkt}, {tkt}) scale(%s0)
      score_mod_operands(%sq, %sk : {ids_q}, {ids_k})
      outs(%o : {tqt}) {"causal " if causal else ""}indexing_maps = [{maps}] score_mod {{
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index, %iq: {it}, %ik: {it}):
        %same = arith.cmpi eq, %iq, %ik : {it}
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %same, %x, %ninf : f32
        attn.yield %y : f32
      }} -> {res}
  return {ret} : {res}
}}
"""


def decode_program(b: Union[int, str, None], m: int, hq: int, hkv: int, n: int, d: int,
                   dtype: str = "float16", page_size: int = 0, pages: int = 0,
                   kv_lens: bool = False, causal: bool = False,
                   scale: Optional[float] = None, lse: bool = False,
                   alibi: bool = False, window: int = 0) -> str:
    """Decode as MLIR: q [b, m, hq, d] (viewed [b, m, hkv, g, d]); k/v
    [b, n, hkv, d], or caches [pages, page_size, hkv, d] read through a
    table [b, n / page_size]; kv_lens [b] masks keys n >= kv_lens[b];
    causal: the m new tokens are the cache's last (bottom-right; with
    kv_lens and m > 1 refused: _decode_text writes that rule). b None (or "?"):
    a dynamic batch, one bundle for every batch size. `alibi`: ALiBi's
    slopes %al [hkv, g] as its score_mod operand. `window` W > 0: each new
    token (at n - m + its index) sees the W keys up to its position."""
    if kv_lens and causal and m > 1:
        raise BundleError("attn_opt.ops: decode_program's causal attribute "
                          "places several new tokens at the cache's end; with "
                          "kv_lens each sequence's kv_len places them "
                          "(prepare_decode and decode_attention add that rule "
                          "as a region over the lengths)")
    g, t, scale = _common(hq, hkv, d, dtype, scale)
    b = "?" if b is None else b
    tqt = f"tensor<{b}x{m}x{hkv}x{g}x{d}x{t}>"
    tkt = f"tensor<{b}x{n}x{hkv}x{d}x{t}>"
    tl = f"tensor<{b}x{m}x{hkv}x{g}xf32>"
    params, pre = [f"%q: {tqt}"], ""
    if page_size:
        if n % page_size:
            raise BundleError(f"attn_opt.ops: {n} keys are not whole pages of "
                              f"{page_size}")
        tc = f"tensor<{pages}x{page_size}x{hkv}x{d}x{t}>"
        tt = f"tensor<{b}x{n // page_size}xi32>"
        params += [f"%t: {tt}", f"%kc: {tc}", f"%vc: {tc}"]
        pre = "".join(f"  %{x} = attn.page_gather %{x}c[%t] seq_dim = 0 token_dim = 1 "
                      f": {tc}, {tt} -> {tkt}\n" for x in "kv")
    else:
        params += [f"%k: {tkt}", f"%v: {tkt}"]
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    maps = [mp + x + ">" for x in ("(b, m, h, g, d)", "(b, n, h, d)", "(b, n, h, e)",
                                   "(b, m, h, g, e)")]
    mask = ""
    if kv_lens:
        tm = f"tensor<{b}x{n}xi1>"
        params.append(f"%lens: tensor<{b}xi32>")
        pre += f"  %mask = attn.length_mask %lens : tensor<{b}xi32> -> {tm}\n"
        mask = f" mask(%mask : {tm})"
        maps.append(mp + "(b, n)>")
    if alibi:
        param, mods, amap = _slopes_operand(hkv, g, mp)
        params.append(param)
        mask += mods
        maps.append(amap)
    params.append(f"%o: {tqt}")
    attrs = ("causal " if causal and (m > 1 or window) else "") + \
        (f"window = {window} " if window else "") + \
        (f"query_offset = {n - m} " if (causal and m > 1) or window else "")
    res, lhs, ret = _results(tqt, tl, lse)
    return f"""func.func @decode({', '.join(params)}) -> ({res}) {{
  %s = arith.constant {scale!r} : f32
{pre}  {lhs} = attn.attention ins(%q, %k, %v : {tqt}, {tkt}, {tkt}) scale(%s){mask}
      outs(%o : {tqt}) {attrs}indexing_maps = [{', '.join(maps)}] -> {res}
  return {ret} : {res}
}}
"""


def _bundle(text: str, chip: str, cache_dir: Optional[Union[str, Path]],
            compile_missing: bool = True,
            launch: Optional[Dict[str, Union[int, str]]] = None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    opts = "".join(f"\n{k}={v}" for k, v in sorted((launch or {}).items()))
    key = hashlib.sha256(f"{chip}\n{text}{opts}".encode()).hexdigest()[:32]
    path = root / key
    if not (path / "manifest.json").exists():
        if not compile_missing:
            raise BundleError(f"attn_opt.ops: no bundle {path} for this shape")
        root.mkdir(parents=True, exist_ok=True)
        compile(text, path, chip=chip, launch=launch)
    return path


def _f32_launch(dtype: str, f32_precision: str) -> Optional[Dict[str, Union[int, str]]]:
    """The launch option of f32 inputs: "3xtf32" (f32-accurate, the
    default) or "tf32" (one TF32 product: 10-bit mantissas, torch's
    allow_tf32 and JAX's default precision; the Hopper kernel)."""
    if f32_precision not in ("3xtf32", "tf32"):
        raise BundleError(f"attn_opt.ops: f32_precision must be \"3xtf32\" or "
                          f"\"tf32\", got {f32_precision!r}")
    if dtype != "float32" or f32_precision == "3xtf32":
        return None
    return {"f32_precision": f32_precision}


def _kernel(text: str, chip: str, cache_dir: Optional[Union[str, Path]],
            launch: Optional[Dict[str, Union[int, str]]] = None) -> Kernel:
    # The program, chip, cache and options name the kernel: a call that
    # repeats them skips the hashing and the file system (the bundle stays
    # loaded).
    root = str(cache_dir) if cache_dir is not None else str(default_cache_dir())
    memo = (text, chip, root, tuple(sorted((launch or {}).items())))
    kern = _BY_PROGRAM.get(memo)
    if kern is not None:
        return kern
    path = _bundle(text, chip, cache_dir, launch=launch)
    key = str(path.resolve())
    if key not in _LOADED:
        _LOADED[key] = load(path)
    _BY_PROGRAM[memo] = _LOADED[key]
    return _LOADED[key]


def seq_bucket(seqs: int) -> int:
    """The table size a varlen bundle is compiled for: the next power of
    two (tables are padded with empty sequences), so that one bundle serves
    every batch of up to that many sequences."""
    return 1 << max(0, int(seqs) - 1).bit_length()


def _varlen_text(hq: int, hkv: int, d: int, bucket: int, dtype: str, causal: bool,
                 bottom_right: bool, scale: Optional[float], lse: bool,
                 softcap: float, alibi: bool) -> str:
    """varlen_attention's program. ALiBi on packed positions: under causal
    slope * (n - m), which differs from FlashAttention's bottom-right
    distance by a constant per row (the softmax cancels it in the output;
    the lse returned keeps it, so it is not FlashAttention's there);
    without, -slope * |n - m|, FlashAttention's where each sequence has as
    many queries as keys (the call checks, a wait on the device)."""
    return _with_region(varlen_program(hq, hkv, d, bucket, dtype, causal, bottom_right,
                                       scale, lse, alibi),
                        softcap, causal if alibi else None)


def _decode_text(m: int, hq: int, hkv: int, n: int, d: int, dtype: str, page_size: int,
                 pages: int, kv_lens: bool, causal: bool, scale: Optional[float],
                 lse: bool, softcap: float, alibi: bool, window: int = 0,
                 chunk: int = 0) -> str:
    """decode_attention's program. ALiBi as slope * (n - m): the keys a
    query sees are at or before it (causal, or one query token after its
    sequence's keys), so FlashAttention's -slope * |m + kv_len - M - n|
    is that plus a constant per row (which the output does not see; the
    lse returned differs from FlashAttention's by it). `chunk` > 0: Llama
    4's chunked attention, the new tokens at positions n - m.. n - 1 of the
    cache (as causal places them; with kv_lens at kv_len - m..kv_len - 1 of
    their sequence), each seeing the keys of its own chunk."""
    if alibi and not causal and m > 1:
        raise BundleError("attn_opt.ops: decode_attention with alibi_slopes and "
                          "more than one query token needs causal=True (each "
                          "sequence's kv_len sets where its queries sit)")
    if window and kv_lens:
        raise BundleError("attn_opt.ops: decode_attention takes window_size "
                          "without kv_lens (each sequence's kv_len would place "
                          "its window; the bundle places it at the cache's end)")
    # With kv_lens, several causal tokens sit at the end of their own
    # sequence (positions kv_len - m..kv_len - 1, FlashAttention's
    # bottom-right rule with cache_seqlens): a region over the lengths, not
    # the op's causal attribute, which would place them at the cache's end.
    lens_causal = kv_lens and causal and m > 1
    text = decode_program(None, m, hq, hkv, n, d, dtype, page_size, pages, kv_lens,
                          causal and not lens_causal, scale, lse, alibi, window)
    if kv_lens and (chunk or lens_causal):
        # Each sequence's tokens at kv_len - m.. : the lengths are also the
        # region's last operand (indexed by the batch).
        lens_t = "tensor<?xi32>"
        if " score_mod_operands(%al : " in text:  # ALiBi's slopes first
            at = text.index(" score_mod_operands(%al : ")
            end = text.index(")\n      outs(%o", at)
            ts = text[at + len(" score_mod_operands(%al : "):end]
            text = (text[:at] + f" score_mod_operands(%al, %lens : {ts}, {lens_t})"
                    + text[end + 1:])
        else:
            text = text.replace("\n      outs(%o", f" score_mod_operands(%lens : {lens_t})"
                                "\n      outs(%o", 1)
        at = text.index("indexing_maps = [")
        end = text.index("] -> ", at)
        text = text[:end] + ", affine_map<(b, h, g, m, n, d, e) -> (b)>" + text[end:]
        return _with_region(text, softcap, True if alibi else None, chunk, -m,
                            chunk_lens=bool(chunk), lens_causal=m if lens_causal else 0)
    return _with_region(text, softcap, True if alibi else None, chunk, n - m)


def prepare_varlen(hq: int, hkv: int, d: int, seqs: int,
                   dtype: str = "float16", causal: bool = False,
                   bottom_right: bool = False, scale: Optional[float] = None,
                   return_lse: bool = False, chip: str = "sm_90a",
                   cache_dir: Optional[Union[str, Path]] = None,
                   softcap: float = 0.0, alibi: bool = False) -> Path:
    """Compiles (or finds) the bundle varlen_attention uses for batches of
    up to seq_bucket(seqs) sequences, at every token count (`alibi`: it
    takes `alibi_slopes`; for a call with `chunk_size`, `seqs` counts its
    pieces: len(chunk_virtual_tables(...)[0]) - 1 for tables on the host,
    chunk_table_bound(S, T, C) for tables on the GPU)."""
    return _bundle(_varlen_text(hq, hkv, d, seq_bucket(seqs), dtype, causal, bottom_right,
                                scale, return_lse, softcap, alibi),
                   chip, cache_dir)


@functools.lru_cache(maxsize=256)
def _dense_text(hq: int, hkv: int, d: int, dtype: str, causal: bool,
                scale: Optional[float], lse: bool, q_scale: float, k_scale: float,
                v_scale: float, out_dtype: Optional[str],
                runtime_scales: str = "", softcap: float = 0.0,
                alibi: bool = False, window: int = 0, chunk: int = 0) -> str:
    """dense_attention's program; FP8 folds the constant dequantization
    scales, and reads the `runtime_scales` ones ("qkv" letters) from
    tensors; then soft-capping and ALiBi as its region."""
    if dtype in _F8:
        scale = (1.0 / math.sqrt(d) if scale is None else float(scale)) * q_scale * k_scale
        text = dense_program(hq, hkv, d, dtype, causal, scale, lse,
                             out_dtype or "float16", v_scale, runtime_scales, alibi,
                             window)
    elif (q_scale, k_scale, v_scale) != (1.0, 1.0, 1.0) or out_dtype is not None \
            or runtime_scales:
        raise BundleError("attn_opt.ops: q_scale, k_scale, v_scale and out_dtype "
                          "are for FP8 inputs")
    else:
        text = dense_program(hq, hkv, d, dtype, causal, scale, lse, alibi=alibi,
                             window=window)
    return _with_region(text, softcap, causal if alibi else None, chunk)


def prepare_dense(hq: int, hkv: int, d: int, dtype: str = "float16",
                  causal: bool = False, scale: Optional[float] = None,
                  return_lse: bool = False, chip: str = "sm_90a",
                  cache_dir: Optional[Union[str, Path]] = None,
                  q_scale: float = 1.0, k_scale: float = 1.0, v_scale: float = 1.0,
                  out_dtype: Optional[str] = None, runtime_scales: str = "",
                  softcap: float = 0.0, f32_precision: str = "3xtf32",
                  alibi: bool = False, window_size: Any = (-1, -1),
                  chunk_size: int = 0) -> Path:
    """Compiles (or finds) the one bundle dense_attention uses for these
    heads and head dim, at every length (`runtime_scales`: the letters of
    "qkv" whose scales dense_attention gets as tensors; `alibi`: it takes
    `alibi_slopes`, one bundle for every slope value)."""
    window, causal = _window(window_size, causal)
    return _bundle(_dense_text(hq, hkv, d, dtype, causal, scale, return_lse, q_scale,
                               k_scale, v_scale, out_dtype, runtime_scales, softcap,
                               alibi, window, chunk_size),
                   chip, cache_dir, launch=_f32_launch(dtype, f32_precision))


def prepare_decode(b: Optional[int], m: int, hq: int, hkv: int, n: int, d: int,
                   dtype: str = "float16", page_size: int = 0, pages: int = 0,
                   kv_lens: bool = False, causal: bool = False,
                   scale: Optional[float] = None, return_lse: bool = False,
                   chip: str = "sm_90a",
                   cache_dir: Optional[Union[str, Path]] = None,
                   softcap: float = 0.0, alibi: bool = False,
                   window_size: Any = (-1, -1), chunk_size: int = 0) -> Path:
    """Compiles (or finds) the bundle decode_attention would use: one for
    every batch size (`b` is accepted for the call's shape and not part of
    the bundle; `alibi`: it takes `alibi_slopes`)."""
    window, causal = _window(window_size, causal)
    return _bundle(_decode_text(m, hq, hkv, n, d, dtype, page_size, pages, kv_lens,
                                causal, scale, return_lse, softcap, alibi, window,
                                chunk_size),
                   chip, cache_dir)


def varlen_attention(q: Any, k: Any, v: Any, cu_seqlens_q: Any, cu_seqlens_k: Any,
                     causal: bool = False, bottom_right: bool = False,
                     scale: Optional[float] = None, return_lse: bool = False,
                     chip: str = "sm_90a",
                     cache_dir: Optional[Union[str, Path]] = None,
                     softcap: float = 0.0, alibi_slopes: Any = None,
                     chunk_size: int = 0) -> Any:
    """Attention over packed sequences (see the module docstring).
    `alibi_slopes`: float32 [Hq], FlashAttention's ALiBi; without causal
    each sequence must have as many queries as keys (equal tables).
    `chunk_size` C > 0: chunked attention (Llama 4's local layers), each
    sequence's query at position p (i, or lk - lq + i with `bottom_right`)
    seeing only its sequence's keys n with n // C == p // C (and n <= p
    with causal); run as varlen attention over each sequence's pieces
    within one chunk, so the kernel reads no key outside a query's chunk:
    tables on the host are split there (chunk_virtual_tables, checked),
    tables on the GPU on the GPU (chunk_virtual_tables_on, no wait for the
    device, a bundle for seq_bucket(chunk_table_bound(S, T, C)) pieces)."""
    tq, hq, d = q.shape
    tk, hkv, _ = k.shape
    seqs = int(cu_seqlens_q.shape[0]) - 1
    if tuple(cu_seqlens_k.shape) != (seqs + 1,) or seqs < 1:
        raise BundleError("attn_opt.ops: cu_seqlens_q and cu_seqlens_k must have "
                          "the same length (S + 1, S >= 1)")
    _check_chunk(chunk_size)
    args: Dict[str, Any] = {}
    if alibi_slopes is not None:
        args["mod0"] = _slopes_arg(alibi_slopes, hq, hkv)
        # Non-causal: -slope |n - m| at packed positions is FlashAttention's
        # bias only where a sequence's queries and keys start together.
        if not causal and cu_seqlens_k is not cu_seqlens_q and not bool(
                (cu_seqlens_q == cu_seqlens_k).all()):
            raise BundleError("attn_opt.ops: varlen_attention with alibi_slopes "
                              "and no causal mask takes equal cu_seqlens_q and "
                              "cu_seqlens_k (FlashAttention aligns each "
                              "sequence's queries to the end of its keys)")
    if chunk_size and getattr(getattr(cu_seqlens_q, "device", None), "type", "cpu") != "cpu":
        # Tables on the device: the pieces computed on q's device, at the
        # size chunk_table_bound gives (no wait for the device; not checked).
        # A key table on the host comes through pinned memory.
        ck_dev = cu_seqlens_k
        if getattr(getattr(ck_dev, "device", None), "type", "cpu") == "cpu":
            ck_dev = ck_dev.pin_memory()
        cu_seqlens_q, cu_seqlens_k = chunk_virtual_tables_on(
            cu_seqlens_q.to(q.device, non_blocking=True),
            ck_dev.to(q.device, non_blocking=True), chunk_size, bottom_right, tq)
        seqs = int(cu_seqlens_q.shape[0]) - 1
    elif chunk_size:
        cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
        if len(cq) != seqs + 1 or cq[-1] != tq or ck[-1] != tk:
            raise BundleError("attn_opt.ops: varlen_attention with chunk_size needs "
                              "cu_seqlens tables that end at the token counts")
        vq, vk = chunk_virtual_tables(cq, ck, chunk_size, bottom_right)
        # From pinned memory without a wait: tables given on the host (as
        # serving schedulers keep them) cost the device nothing.
        torch = __import__("torch")
        cu_seqlens_q, cu_seqlens_k = (
            torch.tensor(x, dtype=torch.int32).pin_memory().to(q.device, non_blocking=True)
            for x in (vq, vk))
        seqs = len(vq) - 1
    bucket = seq_bucket(seqs)
    text = _varlen_text(hq, hkv, d, bucket, dtype_name(q), causal, bottom_right, scale,
                        return_lse, softcap, alibi_slopes is not None)
    kern = _kernel(text, chip, cache_dir)
    if bucket > seqs:  # empty sequences after the last
        cu_seqlens_q, cu_seqlens_k = (
            __import__("torch").cat([c, c[-1:].expand(bucket - seqs)])
            for c in (cu_seqlens_q, cu_seqlens_k))
    g = hq // hkv
    res = kern(q=q.view(tq, hkv, g, d), k=k, v=v, cu_seqlens_q=cu_seqlens_q,
               cu_seqlens_k=cu_seqlens_k, **args)
    if return_lse:
        out, lse = res
        return out.view(tq, hq, d), lse.view(tq, hq)
    return res.view(tq, hq, d)


def chunk_virtual_tables(cu_q: Sequence[int], cu_k: Sequence[int], chunk: int,
                         bottom_right: bool) -> Tuple[List[int], List[int]]:
    """Chunked attention over packed sequences as plain varlen attention
    over virtual sequences (vLLM's local-attention virtual batches): each
    sequence's queries split where their positions (i, or lk - lq + i with
    `bottom_right`) cross a multiple of `chunk`, each piece with the keys of
    its chunk, up to the sequence's last key. A piece keeps the varlen rule
    of the call, causal or not: top-left pieces start at their chunk's
    first key (causal offset 0), bottom-right ones end at its last (offset
    lk' - lq' = their first position - the chunk's start). Keys no piece reads (earlier chunks of a
    cache, keys past the last query's chunk) become sequences without
    queries, so that the key table stays contiguous. Returns the virtual
    (cu_q, cu_k)."""
    cq, ck = [int(x) for x in cu_q], [int(x) for x in cu_k]
    if len(cq) != len(ck) or len(cq) < 2 or cq[0] != 0 or ck[0] != 0 or any(
            x > y for c in (cq, ck) for x, y in zip(c, c[1:])):
        raise BundleError("attn_opt.ops: chunk_size takes cu_seqlens tables that "
                          "start at 0 and never decrease, of one length")
    vq, vk = [0], [0]

    def emit(q_end: int, k_end: int) -> None:
        vq.append(q_end)
        vk.append(max(k_end, vk[-1]))
    for s in range(len(cq) - 1):
        q0, q1, k0, k1 = cq[s], cq[s + 1], ck[s], ck[s + 1]
        lq, lk = q1 - q0, k1 - k0
        off = lk - lq if bottom_right else 0
        if lq:
            # Positions off .. off + lq - 1 (floor: a negative position's
            # chunk holds no key).
            for j in range(off // chunk, (off + lq - 1) // chunk + 1):
                start = k0 + min(max(j * chunk, 0), lk)
                if vk[-1] < start:  # keys before the chunk: read by nobody
                    emit(vq[-1], start)
                emit(q0 + min(lq, (j + 1) * chunk - off),
                     k0 + max(min(lk, (j + 1) * chunk), 0))
        if vk[-1] < k1 or vq[-1] < q1:  # keys after the last query's chunk
            emit(q1, k1)
    return vq, vk


def chunk_table_bound(seqs: int, tokens: int, chunk: int) -> int:
    """How many virtual sequences chunk_virtual_tables_on can make for `seqs`
    sequences of `tokens` queries in all: a sequence of lq queries is at
    most lq // chunk + 2 pieces, one query-less sequence before them and one
    after (seq_bucket of it is the bundle a call with tables on the device
    takes)."""
    return 4 * int(seqs) + int(tokens) // int(chunk)


def chunk_virtual_tables_on(cu_q: Any, cu_k: Any, chunk: int, bottom_right: bool,
                            tokens: int, xp: Any = None) -> Tuple[Any, Any]:
    """chunk_virtual_tables computed where the tables are (torch tensors on
    the GPU: no wait for the device; or numpy arrays, `xp` = numpy), at a
    size known without reading them: chunk_table_bound(S, tokens, chunk)
    virtual sequences. Each sequence takes a fixed run of entries (the
    query-less one before its first piece, its pieces, the query-less one
    after it), each emitted whether or not it holds anything; the key table
    is its running maximum as in chunk_virtual_tables, so an entry that
    holds nothing is an empty sequence, and the entries past the last
    sequence repeat the token counts. Tables are not checked (they are on
    the device): bad ones give empty or clamped sequences, as plain varlen
    calls. Returns int32 (cu_q, cu_k) of bound + 1 entries."""
    if xp is None:
        xp = __import__("torch")
    is_np = xp.__name__ == "numpy"
    cq = cu_q.astype(xp.int64) if is_np else cu_q.to(xp.int64)
    ck = cu_k.astype(xp.int64) if is_np else cu_k.to(xp.int64)
    s = int(cq.shape[0]) - 1
    bound = chunk_table_bound(s, tokens, chunk)
    q0, q1, k0, k1 = cq[:-1], cq[1:], ck[:-1], ck[1:]
    lq, lk = q1 - q0, k1 - k0
    off = lk - lq if bottom_right else lq * 0
    jfirst = off // chunk
    pieces = xp.where(lq > 0, (off + lq - 1) // chunk - jfirst + 1, lq * 0)
    ends = (pieces + 2).cumsum(0)
    i = xp.arange(bound) if is_np else xp.arange(bound, device=cq.device)
    # Entry i belongs to sequence seq (S: past the last), run position t.
    seq = xp.searchsorted(ends, i, side="right")
    live = seq < s
    sc = xp.minimum(seq, seq * 0 + (s - 1))
    t = i - (ends[sc] - (pieces[sc] + 2))
    q0s, q1s, k0s, k1s = q0[sc], q1[sc], k0[sc], k1[sc]
    lqs, lks, offs = lq[sc], lk[sc], off[sc]
    zero = lqs * 0
    j = jfirst[sc] + t - 1
    piece_q = q0s + xp.minimum(lqs, (j + 1) * chunk - offs)
    piece_k = k0s + xp.maximum(xp.minimum(lks, (j + 1) * chunk), zero)
    first_k = k0s + xp.minimum(xp.maximum(jfirst[sc] * chunk, zero), lks)
    pre_k = xp.where(pieces[sc] > 0, first_k, k0s)
    is_pre, is_post = t == 0, t == pieces[sc] + 1
    vq = xp.where(is_pre, q0s, xp.where(is_post, q1s, piece_q))
    vk = xp.where(is_pre, pre_k, xp.where(is_post, k1s, piece_k))
    vq = xp.where(live, vq, cq[-1] + zero)
    vk = xp.where(live, vk, ck[-1] + zero)
    vk = xp.maximum.accumulate(vk) if is_np else xp.cummax(vk, 0).values
    head = zero[:1]
    out = [xp.concatenate([head, x]) for x in (vq, vk)]
    return tuple(x.astype(xp.int32) if is_np else x.to(xp.int32) for x in out)


def _check_dense_layout(call: str, q: Any, k: Any, v: Any) -> None:
    """q [B, M, Hq, D] with k and v [B, N, Hkv, D] of one shape."""
    b, _, _, d = q.shape
    if k.dim() != 4 or k.shape[0] != b or k.shape[3] != d or tuple(v.shape) != tuple(k.shape):
        raise BundleError(f"attn_opt.ops: {call} takes q [B, M, Hq, D] and k, "
                          f"v [B, N, Hkv, D]; got q {list(q.shape)}, k {list(k.shape)}, "
                          f"v {list(v.shape)}")


def dense_attention(q: Any, k: Any, v: Any, causal: bool = False,
                    scale: Optional[float] = None, return_lse: bool = False,
                    chip: str = "sm_90a",
                    cache_dir: Optional[Union[str, Path]] = None,
                    q_scale: Any = 1.0, k_scale: Any = 1.0,
                    v_scale: Any = 1.0, out_dtype: Optional[str] = None,
                    softcap: float = 0.0, f32_precision: str = "3xtf32",
                    alibi_slopes: Any = None, window_size: Any = (-1, -1),
                    chunk_size: int = 0) -> Any:
    """Attention of q [B, M, Hq, D] over k/v [B, N, Hkv, D] (see the module
    docstring); one bundle serves every B, M and N. `alibi_slopes`: float32
    [Hq] on the device (FlashAttention's argument): -slope_h * |m - n| is
    added to the scaled score of query m and key n (after `softcap`),
    FlashAttention's bias where M = N; rows are aligned top-left, as the
    causal rule (query m is at position m). The slopes are read at each
    call: one bundle for every value. FP8: q, k, v of one
    8-bit type (torch.float8_e4m3fn / float8_e5m2) hold q / q_scale etc.
    (per-tensor dequantization scales: a float is a constant of the bundle;
    a one-element float32 tensor on the device, as FlashAttention-3's
    descale tensors, is read by the kernel at each call, so one bundle
    serves every scale; it must be positive and finite, else the output is
    NaN); the output is `out_dtype` (float16 by default, or bfloat16).
    float32: `f32_precision` "3xtf32" (f32-accurate, the default) or "tf32"
    (one TF32 product per multiply, about 4e-4 relative error: the Hopper
    wgmma kernel, 1.4-1.5x the f32-accurate one's speed and more).
    `chunk_size` > 0: chunked attention (Llama 4's local layers, Hugging
    Face's chunked_overlay): query m sees key n only where m // chunk_size
    == n // chunk_size (positions top-left, as the causal rule), with causal
    or not; each query tile's keys are those of its chunks."""
    b, m, hq, d = q.shape
    _check_dense_layout("dense_attention", q, k, v)
    hkv = k.shape[2]
    dt = dtype_name(q)
    if dt in _F8 and (dtype_name(k) != dt or dtype_name(v) != dt):
        raise BundleError(f"attn_opt.ops: FP8 attention takes q, k and v of one "
                          f"8-bit type; got {dt}, {dtype_name(k)}, {dtype_name(v)}")
    floats, tensors = [], {}
    for x, val in zip("qkv", (q_scale, k_scale, v_scale)):
        if hasattr(val, "dim"):  # a tensor: read by the kernel at run time
            if dtype_name(val) != "float32" or val.numel() != 1:
                raise BundleError(f"attn_opt.ops: {x}_scale as a tensor must be "
                                  f"float32 with one element, got "
                                  f"{dtype_name(val)} {list(val.shape)}")
            tensors[x] = val.reshape(())
            val = 1.0
        floats.append(float(val))
    runtime = "".join(tensors)
    args = {f"scale{i}": t for i, t in enumerate(tensors.values())}
    if alibi_slopes is not None:
        args["mod0"] = _slopes_arg(alibi_slopes, hq, hkv)
    window, causal = _window(window_size, causal)
    text = _dense_text(hq, hkv, d, dt, causal, scale, return_lse, *floats, out_dtype,
                       runtime, softcap, alibi_slopes is not None, window, chunk_size)
    kern = _kernel(text, chip, cache_dir, launch=_f32_launch(dt, f32_precision))
    res = kern(q=q.view(b, m, hkv, hq // hkv, d), k=k, v=v, **args)
    if return_lse:
        out, lse = res
        return out.view(b, m, hq, d), lse.view(b, m, hq)
    return res.view(b, m, hq, d)


def prepare_document(b: Optional[int], m: Optional[int], n: Optional[int], hq: int,
                     hkv: int, d: int, dtype: str = "float16", causal: bool = False,
                     scale: Optional[float] = None, return_lse: bool = False,
                     chip: str = "sm_90a",
                     cache_dir: Optional[Union[str, Path]] = None,
                     ids_dtype: str = "int32") -> Path:
    """Compiles (or finds) a bundle document_attention uses: b, m, n None
    (dynamic=True's, one per heads, head dim, dtype, causal, scale, lse and
    ids dtype, for every shape), or given (dynamic=False's, one per shape);
    either serves every packing (the ids are read at each call)."""
    return _bundle(document_program(b, m, n, hq, hkv, d, dtype, causal, scale,
                                    return_lse, ids_dtype), chip, cache_dir)


def document_attention(q: Any, k: Any, v: Any, segment_ids: Any,
                       kv_segment_ids: Any = None, causal: bool = False,
                       scale: Optional[float] = None, return_lse: bool = False,
                       chip: str = "sm_90a",
                       cache_dir: Optional[Union[str, Path]] = None,
                       dynamic: bool = True) -> Any:
    """Attention over packed documents: query m of batch entry b sees the
    keys n whose segment id kv_segment_ids[b, n] equals segment_ids[b, m]
    (and n <= m with `causal`, top-left), as MaxText's and Flax's segment
    ids and FlexAttention's document masks. q [B, M, Hq, D], k/v
    [B, N, Hkv, D], ids [B, M] and [B, N] on the device, int32 or int64
    (torch's default), both of one type (kv_segment_ids defaults to
    segment_ids where M = N). One bundle serves every B, M, N and packing
    (`dynamic=False`: a bundle per shape); on the Hopper kernel each query
    tile runs
    only its documents' keys (the ids need not be sorted: a sorted packing
    gives the tightest ranges). A row whose document has no key gives 0
    (and lse -inf)."""
    if q.dim() != 4:
        raise BundleError(f"attn_opt.ops: document_attention takes q [B, M, Hq, D], "
                          f"got {list(q.shape)}")
    b, m, hq, d = q.shape
    _check_dense_layout("document_attention", q, k, v)
    n, hkv = k.shape[1], k.shape[2]
    if kv_segment_ids is None:
        if n != m:
            raise BundleError("attn_opt.ops: document_attention needs kv_segment_ids "
                              f"where M != N ({m} queries, {n} keys)")
        kv_segment_ids = segment_ids
    ids_dt = dtype_name(segment_ids)
    for name, ids, length in (("segment_ids", segment_ids, m),
                              ("kv_segment_ids", kv_segment_ids, n)):
        if dtype_name(ids) not in ("int32", "int64") or dtype_name(ids) != ids_dt \
                or tuple(ids.shape) != (b, length):
            raise BundleError(f"attn_opt.ops: {name} must be int32 or int64 (both of "
                              f"one type) [{b}, {length}], got {dtype_name(ids)} "
                              f"{list(ids.shape)}")
        if str(getattr(ids, "device", "")) != str(getattr(q, "device", "")):
            raise BundleError(f"attn_opt.ops: {name} must be on q's device "
                              f"({q.device}), got {ids.device}")
    text = document_program(*((None,) * 3 if dynamic else (b, m, n)), hq, hkv, d,
                            dtype_name(q), causal, scale, return_lse, ids_dt)
    kern = _kernel(text, chip, cache_dir)
    res = kern(q=q.view(b, m, hkv, hq // hkv, d), k=k, v=v,
               mod0=segment_ids.contiguous(), mod1=kv_segment_ids.contiguous())
    if return_lse:
        out, lse = res
        return out.view(b, m, hq, d), lse.view(b, m, hq)
    return res.view(b, m, hq, d)


def decode_attention(q: Any, k: Any, v: Any, block_table: Any = None,
                     kv_lens: Any = None, causal: bool = False,
                     scale: Optional[float] = None, return_lse: bool = False,
                     chip: str = "sm_90a",
                     cache_dir: Optional[Union[str, Path]] = None,
                     softcap: float = 0.0, alibi_slopes: Any = None,
                     window_size: Any = (-1, -1), chunk_size: int = 0) -> Any:
    """Decode against a (paged) KV cache (see the module docstring).
    `alibi_slopes`: float32 [Hq], FlashAttention's ALiBi (with M > 1 query
    tokens under causal only). With `kv_lens` the M new tokens of sequence
    b sit at its positions kv_lens[b] - M..kv_lens[b] - 1 (with causal,
    token i sees the keys n <= kv_lens[b] - M + i: FlashAttention's
    bottom-right rule with cache_seqlens), else at the cache's last
    positions N - M..N - 1. `chunk_size` C > 0: Llama 4's chunked
    attention, token p seeing only the keys n with n // C == p // C (with
    causal: n <= p too); the kernel reads only those keys."""
    b, m, hq, d = q.shape
    if block_table is not None:
        pages, page_size, hkv, _ = k.shape
        n = int(block_table.shape[1]) * page_size
    else:
        _, n, hkv, _ = k.shape
        pages = page_size = 0
    window, causal = _window(window_size, causal)
    text = _decode_text(m, hq, hkv, n, d, dtype_name(q), page_size, pages,
                        kv_lens is not None, causal, scale, return_lse, softcap,
                        alibi_slopes is not None, window, chunk_size)
    kern = _kernel(text, chip, cache_dir)
    args: Dict[str, Any] = dict(q=q.view(b, m, hkv, hq // hkv, d), k=k, v=v)
    if alibi_slopes is not None:
        args["mod0"] = _slopes_arg(alibi_slopes, hq, hkv)
    if block_table is not None:
        args["block_table"] = block_table
    if kv_lens is not None:
        args["kv_lens"] = kv_lens
        # The region reads the lengths too (_decode_text), after the slopes.
        if chunk_size or (causal and m > 1):
            args["mod1" if alibi_slopes is not None else "mod0"] = kv_lens
    res = kern(**args)
    if return_lse:
        out, lse = res
        return out.view(b, m, hq, d), lse.view(b, m, hq)
    return res.view(b, m, hq, d)


__all__ = ["decode_attention", "decode_program", "default_cache_dir",
           "dense_attention", "dense_program", "prepare_decode", "prepare_dense",
           "prepare_varlen", "varlen_attention", "varlen_program"]
