#!/usr/bin/env python3
"""Regenerate the frontend attention corpus: JAX -> StableHLO -> upstream linalg.

Each variant is an attention written the way JAX users write it. The script
  1. lowers it on the CPU with `jax.jit(f).lower(*args).as_text()` (StableHLO),
  2. converts the StableHLO to upstream linalg/arith/math/tensor with IREE's
     input conversion:
         iree-opt --inline --iree-stablehlo-to-iree-input --canonicalize IN -o OUT
     and, for the `_raised` twin of each variant, additionally
         ... --iree-global-opt-raise-special-ops --canonicalize
     which raises the decomposed max/sub/exp/sum/div chain to the upstream
     `linalg.softmax` op (the form attn-opt --attn-fuse anchors on),
  3. post-processes the module so that only upstream dialects remain: the
     entry function @main becomes @jax_<name> (exec_check.py adds its own
     @main), `public` visibility and jax./mhlo. attributes are dropped, and any
     op or attribute of a non-upstream dialect is an error;
  4. verifies the file parses with stock `mlir-opt` (LLVM/MLIR 22) and writes
     it as OUT_DIR/jax_<name>.mlir and OUT_DIR/jax_<name>_raised.mlir
     with a header that says how it was made, lit RUN lines, and the
     expectations from the EXPECTED table below:
       // RUN: attn-opt %s --attn-fuse --attn-explain -o /dev/null 2>&1 | FileCheck ...
       // CHECK: remark: attention fused: ...     (or `attention not fused: ...`)
       // RUN: %exec-check %s
       // EXEC: [nofuse] [argN=bias]              (test/lib/exec_check.py)
     The FileCheck run uses --implicit-check-not=remark:, so the CHECK lines
     account for every remark attn-opt prints on the file.
  5. with --attn-opt PATH, runs `attn-opt --attn-fuse --attn-explain` on each
     written file and fails unless the remarks are exactly the expected ones.

When attn-opt's behaviour on a file changes on purpose, update EXPECTED and
regenerate (the output is deterministic: same tool versions, same bytes).

Requirements (used with Python 3.12.1 from pyenv; pip only, no network at run):
    python3.12 -m venv VENV && VENV/bin/pip install jax iree-base-compiler
(worked with jax 0.12.0.1 / jaxlib 0.12.0.1 and iree-base-compiler 3.13.0;
jax on the CPU needs no accelerator). iree-opt is looked up next to the
Python interpreter, then on PATH, unless --iree-opt is given.

Usage:
    VENV/bin/python gen_corpus.py --out DIR [--iree-opt PATH] [--mlir-opt PATH]
                                   [--attn-opt PATH] [--only NAME ...]
                                   [--keep-stablehlo]
"""
from __future__ import annotations

import argparse
import inspect
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

os.environ.setdefault("JAX_PLATFORMS", "cpu")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_tools  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

F32, F16 = jnp.float32, jnp.float16


def spec(shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


# --------------------------------------------------------------------------
# Variants. Layout [B, S, H, D] as in flax / jax.nn.dot_product_attention.
# --------------------------------------------------------------------------

def mha_f32(q, k, v):
    # flax.linen.dot_product_attention style: the query is scaled by
    # 1/sqrt(D) before Q.K^T, softmax over the keys.
    d = q.shape[-1]
    q = q / jnp.sqrt(d).astype(q.dtype)
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def gqa_causal_f32(q, k, v):
    # 8 query heads share 2 KV heads: K/V repeated over the head axis.
    # Causal mask from jnp.tril, applied with jnp.where(mask, s, -inf).
    groups = q.shape[2] // k.shape[2]
    k = jnp.repeat(k, groups, axis=2)
    v = jnp.repeat(v, groups, axis=2)
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k) * (1.0 / math.sqrt(q.shape[-1]))
    sq, sk = q.shape[1], k.shape[1]
    mask = jnp.tril(jnp.ones((sq, sk), dtype=jnp.bool_))
    s = jnp.where(mask, s, -jnp.inf)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def mha_f16_softmax_f32(q, k, v):
    # f16 inputs and contractions; the softmax is computed in f32 and the
    # probabilities are cast back to f16 before P.V.
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k)
    s = s.astype(jnp.float32) * (1.0 / math.sqrt(q.shape[-1]))
    p = jax.nn.softmax(s, axis=-1).astype(jnp.float16)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def mha_bias_f32(q, k, v, bias):
    # Additive bias [B, 1, Sq, Sk], broadcast over the heads (e.g. ALiBi or
    # a relative-position bias); ragged sequence length.
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k) / math.sqrt(q.shape[-1])
    s = s + bias
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def mha_bool_mask_f32(q, k, v, mask):
    # Boolean mask argument [B, 1, Sq, Sk] (flax `mask=`), masked scores set
    # to finfo(f32).min as flax does.
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k) / math.sqrt(q.shape[-1])
    s = jnp.where(mask, s, jnp.finfo(s.dtype).min)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def nn_dpa_gqa_causal_f32(q, k, v):
    # The library entry point: jax.nn.dot_product_attention (XLA
    # implementation), grouped-query (8 query heads, 2 KV heads), causal.
    return jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                        implementation='xla')



def nn_dpa_mask_f32(q, k, v, mask):
    # jax.nn.dot_product_attention with a boolean mask argument: the library
    # ands it with its own (all true without is_causal) before the where.
    return jax.nn.dot_product_attention(q, k, v, mask=mask, implementation='xla')


def nn_dpa_window_f32(q, k, v):
    # A causal sliding window (each query sees itself and 7 keys back): the
    # library compares broadcast jnp.arange constants, not iotas.
    return jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                        local_window_size=(7, 0),
                                        implementation='xla')



def nn_dpa_seqlens_f32(q, k, v, q_len, kv_len):
    # Padding by sequence lengths: the library builds a [B, T, S] mask from
    # iotas and the lengths (and zeroes the padded query rows after P.V).
    return jax.nn.dot_product_attention(q, k, v, query_seq_lengths=q_len,
                                        key_value_seq_lengths=kv_len,
                                        implementation='xla')


def segment_ids_f32(q, k, v, seg_q, seg_kv):
    # Packed documents as MaxText / Flax write them: a query sees the keys
    # of its own segment (flax's make_attention_mask(seg_q, seg_kv,
    # jnp.equal)), masked scores set to finfo(f32).min.
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k) / math.sqrt(q.shape[-1])
    mask = seg_q[:, :, None] == seg_kv[:, None, :]
    s = jnp.where(mask[:, None], s, jnp.finfo(s.dtype).min)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def segment_causal_f32(q, k, v, seg):
    # Packed causal training (MaxText): one id vector for queries and keys,
    # the document mask anded with the causal one, filled with
    # DEFAULT_MASK_VALUE = -0.7 * finfo(f32).max.
    s = jnp.einsum('bqhd,bkhd->bhqk', q, k) / math.sqrt(q.shape[-1])
    n = q.shape[1]
    causal = jnp.tril(jnp.ones((n, n), dtype=jnp.bool_))
    mask = jnp.logical_and(seg[:, :, None] == seg[:, None, :], causal[None])
    s = jnp.where(mask[:, None], s, -0.7 * float(jnp.finfo(jnp.float32).max))
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum('bhqk,bkhd->bqhd', p, v)


def nn_dpa_segment_f32(q, k, v, seg):
    # jax.nn.dot_product_attention with the document mask as its `mask`
    # argument ([B, 1, S, S], as flax's make_attention_mask builds it).
    mask = seg[:, None, :, None] == seg[:, None, None, :]
    return jax.nn.dot_product_attention(q, k, v, mask=mask, implementation='xla')


B = 2
# name, function, argument specs, extra EXEC options (beyond `nofuse`, which
# follows from EXPECTED). Shapes are kept small so that the whole corpus runs
# through lit (FileCheck + exec_check.py, i.e. attn-opt's CPU pipeline and the
# unfused mlir-runner reference) in well under a minute on 2 cores; the
# f16 and bias variants keep the ragged length 100.
VARIANTS = [
    ("mha_f32", mha_f32,
     [spec((B, 64, 4, 16))] * 3, ""),
    ("gqa_causal_f32", gqa_causal_f32,
     [spec((B, 128, 8, 32)), spec((B, 128, 2, 32)), spec((B, 128, 2, 32))], ""),
    ("mha_f16_softmax_f32", mha_f16_softmax_f32,
     [spec((B, 100, 4, 32), F16)] * 3, ""),
    ("mha_bias_f32", mha_bias_f32,
     [spec((B, 100, 4, 16))] * 3 + [spec((B, 1, 100, 100))], "arg3=bias"),
    ("mha_bool_mask_f32", mha_bool_mask_f32,
     [spec((B, 64, 4, 16))] * 3 + [spec((B, 1, 64, 64), jnp.bool_)], ""),
    ("nn_dpa_gqa_causal_f32", nn_dpa_gqa_causal_f32,
     [spec((B, 96, 8, 16)), spec((B, 96, 2, 16)), spec((B, 96, 2, 16))], ""),
    ("nn_dpa_mask_f32", nn_dpa_mask_f32,
     [spec((B, 33, 8, 16)), spec((B, 40, 2, 16)), spec((B, 40, 2, 16)),
      spec((B, 1, 33, 40), jnp.bool_)], ""),
    ("nn_dpa_window_f32", nn_dpa_window_f32,
     [spec((B, 45, 8, 16)), spec((B, 45, 2, 16)), spec((B, 45, 2, 16))], ""),
    ("nn_dpa_seqlens_f32", nn_dpa_seqlens_f32,
     [spec((B, 33, 8, 16)), spec((B, 40, 2, 16)), spec((B, 40, 2, 16)),
      spec((B,), jnp.int32), spec((B,), jnp.int32)], "arg3=lens:33 arg4=lens:40"),
    ("segment_ids_f32", segment_ids_f32,
     [spec((B, 48, 4, 16))] * 3 + [spec((B, 48), jnp.int32)] * 2,
     "arg3=seg:3 arg4=seg:3"),
    ("segment_causal_f32", segment_causal_f32,
     [spec((B, 48, 4, 16))] * 3 + [spec((B, 48), jnp.int32)], "arg3=seg:4"),
    ("nn_dpa_segment_f32", nn_dpa_segment_f32,
     [spec((B, 40, 8, 16)), spec((B, 40, 2, 16)), spec((B, 40, 2, 16)),
      spec((B, 40), jnp.int32)], "arg3=seg:3"),
]

# Expected `attn-opt --attn-fuse --attn-explain` remark per generated file
# (file name without .mlir -> remark text after `remark: `). A file whose
# remark starts with `attention fused:` must fuse (EXEC without `nofuse`) and
# also gets the companion `Q·K^T of a fused attention (...)` remark; one whose
# remark starts with `attention not fused:` must stay unfused (`EXEC: nofuse`).
# scale= follows from the head dimension D of the variant's shapes.
_FUSED = "attention fused: "
_NOT_FUSED = "attention not fused: "
EXPECTED = {
    "jax_mha_f32": _FUSED + "scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32",
    "jax_mha_f32_raised": _FUSED + "scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32",
    # jnp.repeat of K/V heads (broadcast + collapse_shape) is read unrepeated:
    # the 8 query heads are viewed as 2 KV heads x 4.
    "jax_gqa_causal_f32": _FUSED + "scale=0.176777, mask=none, kv heads 2 x group 4, causal=yes, batch dims=3, dtype f32 -> f32",
    "jax_gqa_causal_f32_raised": _FUSED + "scale=0.176777, mask=none, kv heads 2 x group 4, causal=yes, batch dims=3, dtype f32 -> f32",
    "jax_mha_f16_softmax_f32": _FUSED + "scale=0.176777, mask=none, causal=no, batch dims=2, dtype f16 -> f16",
    "jax_mha_f16_softmax_f32_raised": _FUSED + "scale=0.176777, mask=none, causal=no, batch dims=2, dtype f16 -> f16",
    "jax_mha_bias_f32": _FUSED + "scale=0.25, mask=additive over (b0,m,n), causal=no, batch dims=2, dtype f32 -> f32",
    "jax_mha_bias_f32_raised": _FUSED + "scale=0.25, mask=additive over (b0,m,n), causal=no, batch dims=2, dtype f32 -> f32",
    "jax_mha_bool_mask_f32": _FUSED + "scale=0.25, mask=boolean over (b0,m,n), causal=no, batch dims=2, dtype f32 -> f32",
    "jax_mha_bool_mask_f32_raised": _FUSED + "scale=0.25, mask=boolean over (b0,m,n), causal=no, batch dims=2, dtype f32 -> f32",
    # jax.nn.dot_product_attention reshapes Q to [B, Sq, Hkv, G, D] and keeps
    # K/V at Hkv heads: the group dim G becomes a batch dim K and V do not
    # index (grouped-query attention without a broadcast copy).
    "jax_nn_dpa_gqa_causal_f32": _FUSED + "scale=0.25, mask=none, causal=yes, batch dims=3, dtype f32 -> f32",
    "jax_nn_dpa_gqa_causal_f32_raised": _FUSED + "scale=0.25, mask=none, causal=yes, batch dims=3, dtype f32 -> f32",
    # The mask argument anded with an all-true constant: the constant part
    # keeps every key, the argument is the mask tensor.
    "jax_nn_dpa_mask_f32": _FUSED + "scale=0.25, mask=boolean over (b1,m,n), causal=no, batch dims=3, dtype f32 -> f32",
    "jax_nn_dpa_mask_f32_raised": _FUSED + "scale=0.25, mask=boolean over (b1,m,n), causal=no, batch dims=3, dtype f32 -> f32",
    # arange constants compared as indices: causal and a window of 8 keys.
    "jax_nn_dpa_window_f32": _FUSED + "scale=0.25, mask=none, causal=yes, window=8, batch dims=3, dtype f32 -> f32",
    # The length mask the program computes (an i1 [B, T, S] tensor) is the
    # mask operand; the program still computes it.
    "jax_nn_dpa_seqlens_f32": _FUSED + "scale=0.25, mask=boolean over (b1,m,n), causal=no, batch dims=3, dtype f32 -> f32",
    "jax_nn_dpa_seqlens_f32_raised": _FUSED + "scale=0.25, mask=boolean over (b1,m,n), causal=no, batch dims=3, dtype f32 -> f32",
    "jax_nn_dpa_window_f32_raised": _FUSED + "scale=0.25, mask=none, causal=yes, window=8, batch dims=3, dtype f32 -> f32",
    # Segment ids (packed documents): the id comparison is a select in the
    # score_mod region over the two id vectors; causal stays an attribute.
    "jax_segment_ids_f32": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -3.40282e+38), causal=no, batch dims=2, dtype f32 -> f32",
    "jax_segment_ids_f32_raised": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -3.40282e+38), causal=no, batch dims=2, dtype f32 -> f32",
    "jax_segment_causal_f32": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -2.38198e+38), causal=yes, batch dims=2, dtype f32 -> f32",
    "jax_segment_causal_f32_raised": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -2.38198e+38), causal=yes, batch dims=2, dtype f32 -> f32",
    "jax_nn_dpa_segment_f32": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -2.38198e+38), causal=no, batch dims=3, dtype f32 -> f32",
    "jax_nn_dpa_segment_f32_raised": _FUSED + "scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -2.38198e+38), causal=no, batch dims=3, dtype f32 -> f32",
}


def expected_remarks(fname):
    """All remarks attn-opt --attn-fuse --attn-explain prints on the file, in
    order, and whether the file must fuse."""
    if fname not in EXPECTED:
        sys.exit(f"gen_corpus: no EXPECTED entry for {fname}")
    r = EXPECTED[fname]
    if r.startswith(_FUSED):
        return [r, "Q·K^T of a fused attention (" + r[len(_FUSED):] + ")"], True
    if r.startswith(_NOT_FUSED):
        return [r], False
    sys.exit(f"gen_corpus: EXPECTED[{fname}] is neither fused nor not fused: {r}")


IREE_FLAGS = ["--inline", "--iree-stablehlo-to-iree-input", "--canonicalize"]
RAISE_FLAGS = ["--iree-global-opt-raise-special-ops", "--canonicalize"]
UPSTREAM = {"builtin", "func", "linalg", "arith", "math", "tensor", "scf",
            "affine", "complex"}
FOREIGN_ATTR = re.compile(r"\b(jax|mhlo|stablehlo|chlo|iree|iree_input|util|flow|hal"
                          r"|sdy|tf)\.[\w.]+")


def find_tool(name, given):
    return corpus_tools.find_tool(name, given, prog="gen_corpus")


def run(cmd):
    return corpus_tools.run(cmd, prog="gen_corpus")


def strip_attr_dicts(text: str) -> str:
    """Drops `{jax.* = ..., mhlo.* = ...}` argument/result/function attribute
    dictionaries and `attributes {...}` on modules/functions whose entries
    are all foreign."""
    def drop(m):
        body = m.group(1)
        entries, cur, quoted = [], "", False
        for ch in body:  # split on commas outside string literals
            if ch == '"':
                quoted = not quoted
            if ch == "," and not quoted:
                entries.append(cur.strip())
                cur = ""
            else:
                cur += ch
        entries.append(cur.strip())
        keep = [e for e in entries if e and not FOREIGN_ATTR.match(e)]
        return ("{" + ", ".join(keep) + "}") if keep else ""
    text = re.sub(r"\s*attributes\s*\{([^{}]*)\}",
                  lambda m: (" attributes " + drop(m)) if drop(m) else "", text)
    text = re.sub(r"\s*\{((?:jax|mhlo)\.[^{}]*)\}", lambda m: drop(m), text)
    return text


def postprocess(text: str, name: str) -> str:
    text = re.sub(r"func\.func\s+public\s+@", "func.func @", text)
    text = re.sub(r"func\.func\s+private\s+@main\b", "func.func @main", text)
    text = re.sub(r"@main\b", f"@{name}", text)
    text = strip_attr_dicts(text)
    # Result lists left as `-> (tensor<...>)` after dropping the attribute.
    text = re.sub(r"->\s*\((tensor<[^>]*>)\)\s*\{", r"-> \1 {", text)
    # Every op must belong to an upstream dialect.
    corpus_tools.check_upstream_ops(text, name, UPSTREAM, prog="gen_corpus")
    bad = FOREIGN_ATTR.search(text) or re.search(r"[#!](iree|util|flow|hal)\b", text)
    if bad:
        sys.exit(f"gen_corpus: {name}: foreign attribute/type left: {bad.group(0)}")
    return text


def header(fname, fn, directive, versions, stablehlo_cmd, iree_cmd, note):
    src = textwrap.dedent(inspect.getsource(fn)).rstrip().splitlines()
    remarks, _ = expected_remarks(fname)
    checks = corpus_tools.check_lines(remarks)
    lines = corpus_tools.RUN_LINES + checks + [
        f"// EXEC: {directive}".rstrip(),
        "//",
        f"// {fname}: attention exported from JAX, converted to upstream linalg"
        f"{note}.",
        "// Generated by test/corpus/gen_corpus.py; do not edit by hand. Regenerate with",
        "//   VENV/bin/python test/corpus/gen_corpus.py --out test/corpus"
        " --attn-opt build/bin/attn-opt",
        f"// Tools: {versions}",
        "// Steps:",
        f"//   {stablehlo_cmd}",
        f"//   {iree_cmd}",
        f"//   post-process: @main -> @{fname}, drop `public` and jax./mhlo. attributes",
        "//   verify: mlir-opt FILE > /dev/null (LLVM/MLIR 22)",
        "// JAX source:",
    ] + ["//   " + l if l else "//" for l in src] + [""]
    return "\n".join(lines)


def check_remarks(attn_opt, path, fname):
    """1 (and a message) unless attn-opt prints exactly the expected remarks."""
    p = subprocess.run([attn_opt, path, "--attn-fuse", "--attn-explain",
                        "-o", os.devnull], capture_output=True, text=True,
                       encoding="utf-8")
    got = re.findall(r"^\S*: remark: (.*)$", p.stderr, re.M)
    want = expected_remarks(fname)[0]
    if p.returncode != 0 or got != want:
        print(f"gen_corpus: {fname}: remarks differ from EXPECTED\n"
              f"  want: {want}\n  got:  {got}" +
              (f"\n  attn-opt exit {p.returncode}" if p.returncode else ""))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--iree-opt", help="iree-opt binary (iree-base-compiler)")
    ap.add_argument("--mlir-opt", help="stock mlir-opt for verification "
                    "(default /usr/lib/llvm-22/bin/mlir-opt or PATH)")
    ap.add_argument("--attn-opt", help="check every written file's remarks "
                    "against EXPECTED with this attn-opt")
    ap.add_argument("--only", nargs="*", help="variant names to generate")
    ap.add_argument("--keep-stablehlo", action="store_true",
                    help="also write jax_<name>.stablehlo.mlir")
    a = ap.parse_args()

    iree_opt = find_tool("iree-opt", a.iree_opt)
    mlir_opt = a.mlir_opt or ("/usr/lib/llvm-22/bin/mlir-opt"
                              if os.path.exists("/usr/lib/llvm-22/bin/mlir-opt")
                              else shutil.which("mlir-opt"))
    if not mlir_opt:
        sys.exit("gen_corpus: cannot find mlir-opt; pass --mlir-opt")
    try:
        from importlib.metadata import version
        iree_ver = version("iree-base-compiler")
    except Exception:  # iree-opt given explicitly, package not importable
        iree_ver = run([iree_opt, "--version"]).split("version")[1].split()[0]
    versions = (f"jax {jax.__version__}, jaxlib {jax.lib.__version__}, "
                f"iree-base-compiler {iree_ver}")

    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="attn-corpus-")
    mismatches = 0
    for name, fn, args, extra in VARIANTS:
        if a.only and name not in a.only:
            continue
        shlo = jax.jit(fn).lower(*args).as_text()
        shlo_path = os.path.join(tmp, f"jax_{name}.stablehlo.mlir")
        with open(shlo_path, "w") as f:
            f.write(shlo)
        if a.keep_stablehlo:
            shutil.copy(shlo_path, os.path.join(a.out, f"jax_{name}.stablehlo.mlir"))
        argdesc = ", ".join(f"{s.dtype}{list(s.shape)}" for s in args)
        forms = [
            (f"jax_{name}", IREE_FLAGS, ""),
            (f"jax_{name}_raised", IREE_FLAGS + RAISE_FLAGS,
             ", softmax raised to linalg.softmax"),
        ]
        for fname, flags, note in forms:
            fuses = expected_remarks(fname)[1]
            directive = ("" if fuses else "nofuse ") + extra
            linalg = run([iree_opt] + flags + [shlo_path])
            body = postprocess(linalg, fname)
            text = header(
                fname, fn, " ".join(directive.split()), versions,
                f"jax.jit({fn.__name__}).lower({argdesc}).as_text()  -> StableHLO",
                "iree-opt " + " ".join(flags) + f" jax_{name}.stablehlo.mlir", note,
            ) + body
            out_path = os.path.join(a.out, f"{fname}.mlir")
            with open(out_path, "w", encoding="utf-8") as f:
                f.write(text)
            run([mlir_opt, out_path, "-o", os.devnull])
            print(f"wrote {out_path}")
            if a.attn_opt:
                mismatches += check_remarks(a.attn_opt, out_path, fname)
    shutil.rmtree(tmp, ignore_errors=True)
    if mismatches:
        sys.exit(f"gen_corpus: {mismatches} file(s) do not match EXPECTED")


if __name__ == "__main__":
    main()
