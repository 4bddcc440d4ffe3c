"""attn_opt.ops: the varlen and decode programs it writes compile with
attn-bundle to the kernels they should (here, no GPU), and the calls match
an fp32 reference on a GPU (run there with ATTN_OPT_CACHE holding bundles
that prepare_* compiled ahead, since the GPU machine has no attn-bundle:
`python3 -m pytest python/tests/test_ops.py` after
`python3 python/tests/test_ops.py --prepare DIR`)."""
import itertools
import math
import os
import sys

import pytest

from attn_opt import bundle, ops
from tools import needs_attn_bundle

# (kind, shape arguments, prepare keywords)
# Varlen bundles have dynamic token counts; the GPU test runs each at two
# (tq, tk) pairs with S sequences (padded to seq_bucket(S) in the table).
VARLEN = dict(hq=8, hkv=2, d=128, seqs=5, causal=True, return_lse=True)
VARLEN_BR = dict(hq=4, hkv=4, d=64, seqs=3, dtype="bfloat16",
                 causal=True, bottom_right=True)
VARLEN_TOKENS = {"VARLEN": ((777, 777), (64, 64)), "VARLEN_BR": ((300, 500), (1100, 900))}
PAGED = dict(b=3, m=1, hq=16, hkv=2, n=1024, d=128, page_size=64, pages=60,
             kv_lens=True, return_lse=True)
SPEC = dict(b=2, m=4, hq=8, hkv=8, n=700, d=64, dtype="bfloat16", causal=True)
DENSE = dict(hq=8, hkv=2, d=128, causal=True, return_lse=True)
# f32: 3xTF32 on tensor cores (f32-accurate), checked at 1e-5.
DENSE_F32 = dict(hq=4, hkv=2, d=64, dtype="float32")
# FP8: e4m3 with per-tensor scales, bf16 out, causal (checked at 3e-2).
DENSE_FP8 = dict(hq=8, hkv=2, d=128, dtype="float8_e4m3fn", causal=True, q_scale=0.5,
                 k_scale=2.0, v_scale=0.25, out_dtype="bfloat16")
# FP8 with runtime scales (float32 tensors, as FlashAttention-3's descale):
# one bundle for every scale value.
DENSE_FP8_RT = dict(hq=8, hkv=2, d=128, dtype="float8_e4m3fn", causal=True,
                    out_dtype="float16", runtime_scales="qkv")
# (B, M, N) the one dense bundle runs at on the GPU.
DENSE_SIZES = ((1, 1, 1), (2, 37, 53), (3, 300, 300), (1, 1000, 4097))


# Soft-capping (Gemma-2; FlashAttention's `softcap`) on each call.
SOFTCAP = 30.0
SC_VARLEN = dict(hq=8, hkv=4, d=128, seqs=3, dtype="bfloat16", causal=True)
SC_PAGED = dict(b=4, m=1, hq=16, hkv=4, n=512, d=128, page_size=64, pages=40,
                kv_lens=True, dtype="bfloat16")
SC_DENSE = dict(hq=8, hkv=2, d=64, causal=True)


def prepare_softcap(cache):
    return [ops.prepare_varlen(**SC_VARLEN, softcap=SOFTCAP, cache_dir=cache),
            ops.prepare_decode(**SC_PAGED, softcap=SOFTCAP, cache_dir=cache),
            ops.prepare_dense(**SC_DENSE, softcap=SOFTCAP, cache_dir=cache)]


# ALiBi (FlashAttention's `alibi_slopes`) on dense calls: causal (the
# key-linear form), and non-causal after soft-capping (-slope |m - n|).
AL_DENSE = dict(hq=8, hkv=2, d=128, causal=True)
AL_DENSE_NC = dict(hq=4, hkv=4, d=64, dtype="bfloat16", softcap=SOFTCAP)


def alibi_slopes(hq):
    """ALiBi's geometric slopes, 2^(-8 (h + 1) / hq)."""
    return [2.0 ** (-8.0 * (h + 1) / hq) for h in range(hq)]


# ... and on varlen and decode calls: varlen causal bottom-right (cu_q !=
# cu_k) and non-causal (equal tables), paged GQA decode (M = 1, kv_lens,
# not causal) and speculative decode (M = 4, causal).
AL_VARLEN = dict(hq=8, hkv=2, d=128, seqs=4, causal=True, bottom_right=True)
AL_VARLEN_NC = dict(hq=4, hkv=4, d=64, seqs=3, dtype="bfloat16")
AL_PAGED = dict(b=3, m=1, hq=16, hkv=2, n=1024, d=128, page_size=64, pages=60,
                kv_lens=True, return_lse=True)
AL_SPEC = dict(b=2, m=4, hq=8, hkv=8, n=700, d=64, dtype="bfloat16", causal=True)


# Sliding windows (FlashAttention's `window_size`): dense causal (top-left)
# and not, decode with four new tokens under causal (at the cache's end).
WIN_DENSE = dict(hq=8, hkv=2, d=128, window_size=(255, 0))
WIN_DENSE_NC = dict(hq=4, hkv=4, d=64, dtype="bfloat16", window_size=(100, -1))
# ... a window of 2048 (the persistent warp-specialized kernel; log step 183).
WIN_DENSE_LONG = dict(hq=8, hkv=2, d=128, dtype="bfloat16", window_size=(2047, 0))
WIN_DEC = dict(b=2, m=4, hq=8, hkv=2, n=700, d=128, causal=True, window_size=(127, 0))


def prepare_window(cache):
    return [ops.prepare_dense(**WIN_DENSE, cache_dir=cache),
            ops.prepare_dense(**WIN_DENSE_NC, cache_dir=cache),
            ops.prepare_dense(**WIN_DENSE_LONG, cache_dir=cache),
            ops.prepare_decode(**WIN_DEC, cache_dir=cache)]


def prepare_alibi(cache):
    return [ops.prepare_dense(**AL_DENSE, alibi=True, cache_dir=cache),
            ops.prepare_dense(**AL_DENSE_NC, alibi=True, cache_dir=cache),
            ops.prepare_varlen(**AL_VARLEN, alibi=True, cache_dir=cache),
            ops.prepare_varlen(**AL_VARLEN_NC, alibi=True, cache_dir=cache),
            ops.prepare_decode(**AL_PAGED, alibi=True, cache_dir=cache),
            ops.prepare_decode(**AL_SPEC, alibi=True, cache_dir=cache)]


# Packed documents (document_attention): GQA bf16 causal with the lse over
# one id vector; f16 with separate, shorter query ids (rows whose document
# has no key: 0, lse -inf).
DOC_GQA = dict(b=2, m=1000, n=1000, hq=8, hkv=2, d=128, dtype="bfloat16", causal=True,
               return_lse=True)
DOC_MN = dict(b=1, m=700, n=1300, hq=4, hkv=4, d=128, dtype="float16")
# torch's int64 ids (the kernel saturates them to i32 for its key ranges).
DOC_I64 = dict(b=2, m=1500, n=1500, hq=4, hkv=4, d=64, dtype="float16", causal=True,
               ids_dtype="int64")


def _dynamic(cfg):
    return dict(cfg, b=None, m=None, n=None)


# Chunked attention (Llama 4): dense calls with chunk_size, causal GQA and
# non-causal.
CH_DENSE = dict(hq=8, hkv=2, d=128, causal=True, chunk_size=300)
CH_DENSE_NC = dict(hq=4, hkv=4, d=64, dtype="bfloat16", chunk_size=128)


# Chunked decode: Llama 4's GQA serving shape (M = 1, 32 query / 8 kv heads)
# over more than two chunks, and 4 speculative tokens through 16-key pages
# whose chunks straddle a boundary (positions 2060-2063 against 2062).
CH_DEC = dict(b=3, m=1, hq=32, hkv=8, n=20000, d=128, dtype="bfloat16", chunk_size=8192)
CH_DEC_PAGED = dict(b=2, m=4, hq=8, hkv=2, n=2064, d=64, page_size=16, pages=400,
                    causal=True, chunk_size=1031)
# ... and with per-sequence lengths: each token at its kv_len - 1.
CH_DEC_LENS = dict(b=6, m=1, hq=16, hkv=4, n=3000, d=128, kv_lens=True, chunk_size=512)


# Several new tokens per sequence with kv_lens under causal: token i of
# sequence b at kv_lens[b] - M + i (FlashAttention's cache_seqlens rule):
# GQA with the lse; ALiBi's slopes through 64-key pages; and Llama 4's
# chunks through 16-key pages (the region's lengths after no slopes).
SPEC_LENS = dict(b=5, m=4, hq=8, hkv=2, n=700, d=64, dtype="bfloat16", causal=True,
                 kv_lens=True, return_lse=True)
SPEC_LENS_ALIBI = dict(b=3, m=3, hq=16, hkv=2, n=1024, d=128, page_size=64, pages=60,
                       causal=True, kv_lens=True, alibi=True)
SPEC_LENS_CHUNK = dict(CH_DEC_PAGED, kv_lens=True)
# ... soft-capping (its region before the lengths'); and chunks without
# causal (each token sees its chunk's keys below kv_len, later new tokens
# too).
SPEC_LENS_CAP = dict(b=4, m=5, hq=8, hkv=8, n=900, d=128, causal=True, kv_lens=True,
                     softcap=30.0)
SPEC_LENS_CHUNK_NC = dict(CH_DEC_LENS, m=3)


def prepare_spec_lens(cache):
    return [ops.prepare_decode(**SPEC_LENS, cache_dir=cache),
            ops.prepare_decode(**SPEC_LENS_ALIBI, cache_dir=cache),
            ops.prepare_decode(**SPEC_LENS_CHUNK, cache_dir=cache),
            ops.prepare_decode(**SPEC_LENS_CAP, cache_dir=cache),
            ops.prepare_decode(**SPEC_LENS_CHUNK_NC, cache_dir=cache)]


@needs_attn_bundle
def test_spec_lens_programs_compile(tmp_path):
    """kv_lens with several causal tokens: no causal attribute (it would
    place them at the cache's end) but a region over the lengths (the last
    score_mod operand), n <= len - M + m."""
    plain, alibi, chunk, cap, chunk_nc = (bundle.read_manifest(p)
                                          for p in prepare_spec_lens(tmp_path))
    for man, lens_arg in ((plain, "mod0"), (alibi, "mod1"), (chunk, "mod0"), (cap, "mod0")):
        assert {"kv_lens", lens_arg} <= set(man.inputs)
        assert not man.attention.causal
        ops_ = man.attention.score_mod.ops
        assert any(o.op == "arith.cmpi" and o.predicate == "sle" for o in ops_)
        assert "per-sequence key counts" in man.attention.kernel_choice
    assert "mod0" in alibi.inputs  # the slopes
    assert "found by binary search" in chunk.attention.kernel_choice
    assert any(o.op == "math.tanh" for o in cap.attention.score_mod.ops)
    # Chunks without causal: the lengths place the chunks, no causal select.
    assert {"kv_lens", "mod0"} <= set(chunk_nc.inputs)
    assert not any(o.op == "arith.cmpi" and o.predicate == "sle"
                   for o in chunk_nc.attention.score_mod.ops)
    # decode_program alone writes the op's causal rule (the cache's end):
    # refused with kv_lens and several tokens.
    with pytest.raises(bundle.BundleError, match="each sequence's kv_len places them"):
        ops.decode_program(None, 4, 8, 2, 700, 64, kv_lens=True, causal=True)


# Chunked varlen: fresh sequences (top-left causal, GQA, an empty one), and
# bottom-right causal after caches (one cache spanning three chunks before
# its queries, bf16, the lse); each runs as varlen over its pieces.
CH_VARLEN = dict(hq=8, hkv=2, d=128, causal=True, chunk_size=256)
CH_VARLEN_LENS = ([700, 0, 1000, 300], [700, 0, 1000, 300])
CH_VARLEN_BR = dict(hq=4, hkv=4, d=64, dtype="bfloat16", causal=True, bottom_right=True,
                    return_lse=True, chunk_size=300)
CH_VARLEN_BR_LENS = ([100, 50, 333], [1000, 50, 900])


def _ch_varlen_seqs(cfg, lens, on_device=False):
    """The pieces of a chunked varlen call: with tables on the host as
    chunk_virtual_tables splits them, on the GPU chunk_table_bound's."""
    cq, ck = ([0] + list(itertools.accumulate(x)) for x in lens)
    if on_device:
        return ops.chunk_table_bound(len(lens[0]), cq[-1], cfg["chunk_size"])
    vq, _ = ops.chunk_virtual_tables(cq, ck, cfg["chunk_size"],
                                     cfg.get("bottom_right", False))
    return len(vq) - 1


def prepare_chunked(cache):
    vl = [{k: v for k, v in cfg.items() if k != "chunk_size"} for cfg in (CH_VARLEN,
                                                                         CH_VARLEN_BR)]
    return [ops.prepare_dense(**CH_DENSE, cache_dir=cache),
            ops.prepare_dense(**CH_DENSE_NC, cache_dir=cache),
            ops.prepare_decode(**CH_DEC, cache_dir=cache),
            ops.prepare_decode(**CH_DEC_PAGED, cache_dir=cache),
            ops.prepare_varlen(**vl[0], seqs=_ch_varlen_seqs(CH_VARLEN, CH_VARLEN_LENS),
                               cache_dir=cache),
            ops.prepare_varlen(**vl[1], seqs=_ch_varlen_seqs(CH_VARLEN_BR, CH_VARLEN_BR_LENS),
                               cache_dir=cache),
            ops.prepare_decode(**CH_DEC_LENS, cache_dir=cache),
            ops.prepare_varlen(**vl[0], seqs=_ch_varlen_seqs(CH_VARLEN, CH_VARLEN_LENS, True),
                               cache_dir=cache),
            ops.prepare_varlen(**vl[1], seqs=_ch_varlen_seqs(CH_VARLEN_BR, CH_VARLEN_BR_LENS,
                                                              True),
                               cache_dir=cache)]


@needs_attn_bundle
def test_chunked_programs_compile(tmp_path):
    """chunk_size's region: m // C == n // C on the positions, no operand;
    the Hopper kernel bounds each query tile's keys by its chunks."""
    paths = prepare_chunked(tmp_path)
    for p, c in zip(paths, (300, 128)):
        man = bundle.read_manifest(p)
        sm = man.attention.score_mod
        assert [o.op for o in sm.ops].count("arith.floordivsi") == 2
        assert any(o.op == "arith.constant" and o.value == c for o in sm.ops)
        assert set(man.inputs) == {"q", "k", "v"}
        assert "each tile's keys limited to those its segment ids match" \
            in man.attention.kernel_choice
    # Decode: the new tokens at n - m (an addi before the chunk), the keys by
    # binary search, then split into ranges chosen at launch.
    # key_span: the keys from the first one's 128-key tile to the last the
    # chunks leave (16384..19999; 1024..2063 for chunks 1 and 2 of 1031).
    for p, cfg, span in zip(paths[2:], (CH_DEC, CH_DEC_PAGED), (3616, 1040)):
        man = bundle.read_manifest(p)
        assert man.attention.key_span == span
        ops_ = man.attention.score_mod.ops
        assert any(o.op == "arith.constant" and o.value == cfg["n"] - cfg["m"] for o in ops_)
        assert any(o.op == "arith.addi" for o in ops_)
        assert "found by binary search, before the split into key ranges" \
            in man.attention.kernel_choice
        assert "GQA packing" in man.attention.kernel_choice
    # One token per sequence at kv_len - 1: the lengths are the region's
    # operand too.
    man = bundle.read_manifest(paths[6])
    assert {"kv_lens", "mod0"} <= set(man.inputs)
    assert "exactly those keys" in man.attention.kernel_choice
    assert any(o.op == "arith.index_cast" for o in man.attention.score_mod.ops)
    for bad in (-4, True, 2.5):
        with pytest.raises(bundle.BundleError, match="chunk_size must be"):
            ops.prepare_dense(**dict(CH_DENSE, chunk_size=bad), cache_dir=tmp_path)


def prepare_document(cache):
    """The dynamic bundles document_attention uses (one per configuration,
    every shape), and DOC_MN's static one (dynamic=False)."""
    return [ops.prepare_document(**_dynamic(DOC_GQA), cache_dir=cache),
            ops.prepare_document(**_dynamic(DOC_MN), cache_dir=cache),
            ops.prepare_document(**_dynamic(DOC_I64), cache_dir=cache),
            ops.prepare_document(**DOC_MN, cache_dir=cache)]


@needs_attn_bundle
def test_document_programs_compile(tmp_path):
    """document_attention's programs: the segment ids are int32 score_mod
    tensors over (b, m) and (b, n), and the Hopper kernel bounds each query
    tile's keys by them."""
    for i, p in enumerate(prepare_document(tmp_path)):
        man = bundle.read_manifest(p)
        assert {"mod0", "mod1"} <= set(man.inputs)
        assert man.arg("mod0").dtype == man.arg("mod1").dtype in ("int32", "int64")
        assert "each tile's keys limited to those its segment ids match" \
            in man.attention.kernel_choice
        # The first three are dynamic: the ids [?, ?] follow the batch, m
        # and n given at launch.
        assert man.dynamic_dims == (("b0", "m", "n") if i < 3 else ())
        if i < 3:
            assert man.arg("mod0").shape == man.arg("mod1").shape == (-1, -1)
    # The dynamic bundle's ids follow q's and k's sizes: other lengths are
    # refused before a launch.
    import numpy as np
    man = bundle.read_manifest(prepare_document(tmp_path)[1])
    q = np.zeros((1, 100, 4, 1, 128), np.float16)
    k = np.zeros((1, 300, 4, 128), np.float16)
    ids = {"q": q, "k": k, "v": k, "mod0": np.zeros((1, 100), np.int32),
           "mod1": np.zeros((1, 300), np.int32)}
    assert bundle.dynamic_sizes(man, ids) == {"b0": 1, "m": 100, "n": 300}
    with pytest.raises(bundle.BundleError, match="'mod1' has n = 299"):
        bundle.dynamic_sizes(man, dict(ids, mod1=np.zeros((1, 299), np.int32)))


def prepare_all(cache):
    return [ops.prepare_varlen(**VARLEN, cache_dir=cache),
            ops.prepare_varlen(**VARLEN_BR, cache_dir=cache),
            ops.prepare_decode(**PAGED, cache_dir=cache),
            ops.prepare_decode(**SPEC, cache_dir=cache),
            ops.prepare_dense(**DENSE, cache_dir=cache),
            ops.prepare_dense(**DENSE_F32, cache_dir=cache),
            ops.prepare_dense(**DENSE_FP8, cache_dir=cache),
            ops.prepare_dense(**DENSE_FP8_RT, cache_dir=cache),
            ops.prepare_dense(**DENSE_F32, f32_precision="tf32", cache_dir=cache),
            ops.prepare_dense(**DENSE_F32, causal=True, f32_precision="tf32",
                              cache_dir=cache),
            ops.prepare_dense(**DENSE_F32, causal=True, cache_dir=cache)]


@needs_attn_bundle
def test_programs_compile(tmp_path):
    paths = prepare_all(tmp_path)
    vl, vbr, paged, spec, dense, f32, fp8, fp8rt, tf32, *_ = (bundle.read_manifest(p)
                                                              for p in paths)
    # f32 with f32_precision="tf32": the Hopper kernel, Q/K/V by TMA.
    assert tf32.attention.f32_precision == "tf32"
    assert "wgmma (sm_90a)" in tf32.attention.kernel_choice
    assert "TF32 k8 products" in tf32.attention.kernel_choice
    # Runtime scales: three float32 0-d inputs after q, k, v; Q's and K's
    # multiply the scale, V's the value scale.
    assert fp8rt.inputs == ("q", "k", "v", "scale0", "scale1", "scale2")
    assert fp8rt.attention.scale_factors == (("scale0", (), False), ("scale1", (), False))
    assert fp8rt.attention.value_scale_factors == (("scale2", (), False),)
    assert all(fp8rt.arg(f"scale{i}").dtype == "float32" for i in range(3))
    # FP8: e4m3 q, k, v, bf16 out; Q's and K's scales in scale, V's apart.
    assert fp8.arg("q").dtype == "float8_e4m3fn" and fp8.arg("out").dtype == "bfloat16"
    assert fp8.attention.value_scale == 0.25 and set(fp8.dynamic_dims) == {"b0", "m", "n"}
    assert abs(fp8.attention.scale - 0.5 * 2.0 / math.sqrt(128)) < 1e-7
    assert "Q/K/V by TMA" in fp8.attention.kernel_choice
    assert f32.attention.f32_precision == "3xtf32" and f32.arg("q").dtype == "float32"
    assert "mma.sync m16n8k8 3xTF32" in f32.attention.kernel_choice
    assert set(dense.dynamic_dims) == {"b0", "m", "n"} and dense.arg("lse") is not None
    assert "wgmma" in dense.attention.kernel_choice and dense.attention.causal
    # 5 sequences: a table for 8 (empty ones padded), any token count.
    assert vl.attention.varlen == (8, True, False) and vl.arg("lse") is not None
    assert vl.arg("q").shape == (-1, 2, 4, 128) and set(vl.dynamic_dims) == {"m", "n"}
    assert "wgmma" in vl.attention.kernel_choice
    assert vbr.attention.varlen == (4, True, True)
    assert ops.seq_bucket(1) == 1 and ops.seq_bucket(5) == 8 and ops.seq_bucket(8) == 8
    assert paged.attention.paged == (64, 60) and paged.attention.kv_lens_dim == 0
    # Decode bundles take any batch size (split count chosen at launch).
    assert paged.dynamic_dims == ("b0",) and spec.dynamic_dims == ("b0",)
    assert paged.arg("block_table").shape == (-1, 16) and paged.arg("kv_lens").shape == (-1,)
    assert "GQA packing: 8 query heads" in paged.attention.kernel_choice
    assert spec.attention.causal and spec.attention.query_offset == 696
    # The same shapes find the same bundle (no second compile).
    assert prepare_all(tmp_path) == paths


@needs_attn_bundle
def test_softcap_programs_compile(tmp_path):
    vl, paged, dense = (bundle.read_manifest(p) for p in prepare_softcap(tmp_path))
    for m in (vl, paged, dense):
        ops_ = [o.op for o in m.attention.score_mod.ops]
        assert ops_ == ["arith.constant", "arith.divf", "math.tanh", "arith.mulf"]
        assert m.attention.score_mod.ops[0].value == SOFTCAP
    assert vl.attention.varlen == (4, True, False)
    # The region reads no index: decode keeps its query heads packed.
    assert "GQA packing: 4 query heads" in paged.attention.kernel_choice
    assert "wgmma" in dense.attention.kernel_choice
    # Without softcap (or 0) the program has no region.
    text = ops.decode_program(None, 1, 16, 4, 512, 128)
    assert ops.with_softcap(text, 0.0) == text and "score_mod" not in text


@needs_attn_bundle
def test_alibi_programs_compile(tmp_path):
    causal, nc, vl, vl_nc, paged, spec = (bundle.read_manifest(p)
                                          for p in prepare_alibi(tmp_path))
    for m, (hkv, g) in ((causal, (2, 4)), (nc, (4, 1))):
        # The slopes: a runtime argument [hkv, g] read per (kv head, group).
        assert m.inputs == ("q", "k", "v", "mod0")
        assert m.arg("mod0").shape == (hkv, g) and m.arg("mod0").dtype == "float32"
        assert "wgmma" in m.attention.kernel_choice
        # The region reads m and n, whose dynamic sizes are bounded.
        assert m.attention.index_limit == 1 << 20
    # Causal: linear in the key index, on the tensor cores.
    assert "the key-linear bias on the tensor cores" in causal.attention.kernel_choice
    assert [o.op for o in causal.attention.score_mod.ops][-2:] == ["arith.mulf",
                                                                     "arith.addf"]
    assert "math.absf" in [o.op for o in nc.attention.score_mod.ops]
    assert "math.tanh" in [o.op for o in nc.attention.score_mod.ops]
    # Varlen: causal takes the key-linear form, non-causal -slope |n - m|
    # (split per key tile on the Hopper kernel: the k-step too).
    for m, absf in ((vl, False), (vl_nc, True)):
        assert "mod0" in m.inputs and "wgmma" in m.attention.kernel_choice
        assert ("math.absf" in [o.op for o in m.attention.score_mod.ops]) == absf
        assert "the key-linear bias on the tensor cores" in m.attention.kernel_choice
    assert vl.attention.varlen == (4, True, True)
    # Decode: the slopes per (kv head, group) keep the query heads packed.
    assert "GQA packing: 8 query heads" in paged.attention.kernel_choice
    assert paged.inputs[-1] == "mod0" and paged.arg("mod0").shape == (2, 8)
    assert spec.attention.causal and spec.attention.query_offset == 696
    assert "math.absf" not in [o.op for o in spec.attention.score_mod.ops]
    # Decode with M > 1 and no causal: where the queries sit depends on
    # each sequence's kv_len; refused.
    with pytest.raises(bundle.BundleError, match="needs causal=True"):
        ops.prepare_decode(**dict(AL_SPEC, causal=False), alibi=True, cache_dir=tmp_path)


@needs_attn_bundle
@pytest.mark.parametrize("which", [0, 1])
def test_alibi_matches_numpy(tmp_path, which):
    """The bundles' region, run by the reference (the loader's evaluator),
    is FlashAttention's ALiBi: -slope_h |m - n| added to the scaled (and
    capped) scores; M != N, aligned top-left."""
    import numpy as np
    from attn_opt.reference import NumpyOps, reference
    cfg = (AL_DENSE, AL_DENSE_NC)[which]
    man = bundle.specialize(bundle.read_manifest(prepare_alibi(tmp_path)[which]),
                            {"b0": 2, "m": 37, "n": 53})
    hq, hkv, d = cfg["hq"], cfg["hkv"], cfg["d"]
    g = hq // hkv
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 37, hkv, g, d)).astype(np.float32)
    k, v = (rng.standard_normal((2, 53, hkv, d)).astype(np.float32) for _ in range(2))
    sl = np.array(alibi_slopes(hq), np.float32)
    out = reference(man, {"q": q, "k": k, "v": v, "mod0": sl.reshape(hkv, g)},
                    NumpyOps("float64"))
    # By hand: [b, hq, m, n] scores.
    qh = q.reshape(2, 37, hq, d).transpose(0, 2, 1, 3).astype(np.float64)
    kh, vh = (np.repeat(x.transpose(0, 2, 1, 3), g, 1).astype(np.float64) for x in (k, v))
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if cfg.get("softcap"):
        s = cfg["softcap"] * np.tanh(s / cfg["softcap"])
    dist = np.abs(np.arange(37)[:, None] - np.arange(53)[None, :])
    s = s - sl.astype(np.float64)[None, :, None, None] * dist
    if cfg.get("causal"):
        s = np.where(np.arange(53)[None, :] <= np.arange(37)[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ vh  # [b, hq, m, d]
    got = np.asarray(out).reshape(2, hkv, g, 37, d).reshape(2, hq, 37, d)
    assert np.abs(got - want).max() < 1e-6  # the region runs in f32


@needs_attn_bundle
def test_window_programs_compile(tmp_path):
    dense, nc, long, dec = (bundle.read_manifest(p) for p in prepare_window(tmp_path))
    assert "persistent" in long.attention.kernel_choice and long.attention.window == 2048
    assert dense.attention.window == 256 and dense.attention.causal
    assert nc.attention.window == 101 and not nc.attention.causal
    # Decode: the new tokens sit at the cache's end for both rules.
    assert dec.attention.window == 128 and dec.attention.query_offset == 696
    with pytest.raises(bundle.BundleError, match="without kv_lens"):
        ops.prepare_decode(**dict(PAGED, window_size=(63, 0)), cache_dir=tmp_path)
    for bad, why in (((5, 3), "not supported"), ((-2, 0), "-1"), ((1,), "two integers"),
                     ("ab", "two integers")):
        with pytest.raises(bundle.BundleError, match=why):
            ops.prepare_dense(**dict(WIN_DENSE, window_size=bad), cache_dir=tmp_path)


def test_program_errors_fp8():
    with pytest.raises(bundle.BundleError, match="are for FP8 inputs"):
        ops.dense_program(8, 2, 128, "float16", runtime_scales="q")
    with pytest.raises(bundle.BundleError, match="float16 or bfloat16"):
        ops.dense_program(8, 2, 128, "float8_e4m3fn", out_dtype="float32")
    with pytest.raises(bundle.BundleError, match="are for FP8 inputs"):
        ops.prepare_dense(8, 2, 128, "float16", v_scale=2.0)


def test_program_errors_softcap():
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(bundle.BundleError, match="softcap must be a positive"):
            ops.with_softcap(ops.decode_program(1, 1, 4, 4, 64, 64), bad)


def test_program_errors():
    with pytest.raises(bundle.BundleError, match="not a multiple"):
        ops.varlen_program(6, 4, 64, 2)
    with pytest.raises(bundle.BundleError, match="float16, bfloat16 or float32"):
        ops.decode_program(1, 1, 4, 4, 64, 64, dtype="float64")
    with pytest.raises(bundle.BundleError, match="whole pages"):
        ops.decode_program(1, 1, 4, 4, 100, 64, page_size=64, pages=4)


def _gpu():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


needs_gpu = pytest.mark.skipif(not _gpu() or "ATTN_OPT_CACHE" not in os.environ,
                               reason="needs a CUDA GPU and ATTN_OPT_CACHE")


def _ref(q, k, v, keep):
    """fp32 attention of q [Hq, M, D] over k/v [Hkv, N, D] (GQA) with a bool
    mask [M, N]; (out [Hq, M, D], lse [Hq, M])."""
    import torch
    g = q.shape[0] // k.shape[0]
    k, v = (x.float().repeat_interleave(g, 0) for x in (k, v))
    s = q.float() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~keep, -math.inf)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None].clamp_min(-1e30)).nan_to_num(0.0)
    return p @ v, lse


def _ref_softcap(q, k, v, keep, cap, slopes=None, offset=0):
    """_ref with cap * tanh(s / cap) of the scaled scores (cap 0: none),
    then ALiBi's -slopes[h] |m + offset - n| (slopes: [Hq] or None;
    FlashAttention's offset is N - M, 0 for dense calls)."""
    import torch
    g = q.shape[0] // k.shape[0]
    k, v = (x.float().repeat_interleave(g, 0) for x in (k, v))
    s = q.float() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if cap:
        s = cap * torch.tanh(s / cap)
    if slopes is not None:
        m, n = s.shape[-2:]
        dist = (torch.arange(m, device=s.device)[:, None] + offset
                - torch.arange(n, device=s.device)[None, :]).abs()
        s = s - slopes.float()[:, None, None] * dist
    s = s.masked_fill(~keep, -math.inf)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ v


def _close(out, ref):
    assert not out.isnan().any()
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2


def _check_varlen(out, lse, q, k, v, keep):
    """A varlen call's out [Tq, Hq, D] (and lse [Tq, Hq] or None) against
    the fp32 reference over the bool mask keep [Tq, Tk]."""
    import torch
    ref, rlse = _ref(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), keep)
    _close(out.transpose(0, 1), ref)
    if lse is not None:
        live = rlse.isfinite()
        assert torch.equal(lse.transpose(0, 1).isfinite(), live)
        assert torch.allclose(lse.transpose(0, 1)[live], rlse[live], atol=1e-2)


@needs_gpu
def test_varlen_on_gpu():
    import torch
    from attn_opt.reference import random_cu_seqlens, varlen_keep
    for name, cfg, (tq, tk) in [(n, c, t) for n, c in (("VARLEN", VARLEN),
                                                       ("VARLEN_BR", VARLEN_BR))
                                for t in VARLEN_TOKENS[n]]:
        cfg = dict(cfg, tq=tq, tk=tk)
        dt = getattr(torch, cfg.get("dtype", "float16"))
        g = torch.Generator(device="cuda").manual_seed(1)
        q = torch.randn(cfg["tq"], cfg["hq"], cfg["d"], generator=g, device="cuda", dtype=dt)
        k, v = (torch.randn(cfg["tk"], cfg["hkv"], cfg["d"], generator=g, device="cuda",
                            dtype=dt) for _ in range(2))
        cuq, cuk = (torch.as_tensor(random_cu_seqlens(cfg["seqs"], t, 3), dtype=torch.int32,
                                    device="cuda") for t in (cfg["tq"], cfg["tk"]))
        res = ops.varlen_attention(q, k, v, cuq, cuk, causal=cfg["causal"],
                                   bottom_right=cfg.get("bottom_right", False),
                                   return_lse=cfg.get("return_lse", False))
        out, lse = res if cfg.get("return_lse") else (res, None)
        keep = torch.as_tensor(varlen_keep(cuq.tolist(), cuk.tolist(), cfg["tq"], cfg["tk"],
                                           cfg["causal"], cfg.get("bottom_right", False)),
                               device="cuda")
        _check_varlen(out, lse, q, k, v, keep)


@needs_gpu
def test_dense_on_gpu():
    """One bundle, every length: the same kernel at each (B, M, N)."""
    import torch
    before = None
    for b, m, n in DENSE_SIZES:
        g = torch.Generator(device="cuda").manual_seed(m)
        q = torch.randn(b, m, DENSE["hq"], DENSE["d"], generator=g, device="cuda",
                        dtype=torch.float16)
        k, v = (torch.randn(b, n, DENSE["hkv"], DENSE["d"], generator=g, device="cuda",
                            dtype=torch.float16) for _ in range(2))
        out, lse = ops.dense_attention(q, k, v, causal=True, return_lse=True)
        loaded = set(ops._LOADED)
        assert before is None or loaded == before
        before = loaded
        keep = torch.ones(m, n, dtype=torch.bool, device="cuda").tril()
        for i in range(b):
            ref, rlse = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1),
                             v[i].transpose(0, 1), keep)
            _close(out[i].transpose(0, 1), ref)
            assert torch.allclose(lse[i].transpose(0, 1), rlse, atol=1e-2)


def _check_fp8(out, qkv8, scales):
    """Causal out [B, M, Hq, D] within 3e-2 of the fp32 attention of the
    dequantized 8-bit q, k, v (each times its scale), no NaN."""
    import torch
    dq, dk, dv = (x.float() * s for x, s in zip(qkv8, scales))
    b, m, n = dq.shape[0], dq.shape[1], dk.shape[1]
    keep = torch.ones(m, n, dtype=torch.bool, device="cuda").tril()
    for i in range(b):
        ref, _ = _ref(dq[i].transpose(0, 1), dk[i].transpose(0, 1),
                      dv[i].transpose(0, 1), keep)
        o = out[i].transpose(0, 1).float()
        assert not o.isnan().any()
        assert float((o - ref).norm() / ref.norm()) < 3e-2


@needs_gpu
def test_dense_fp8_on_gpu():
    """FP8 q, k, v (stored / their scales), one bundle at several lengths,
    within 3e-2 of the fp32 attention of the dequantized values."""
    import torch
    kw = {k: v for k, v in DENSE_FP8.items() if k not in ("hq", "hkv", "d", "dtype")}
    for b, m, n in DENSE_SIZES:
        g = torch.Generator(device="cuda").manual_seed(m + 7)
        q, k, v = (torch.randn(b, x, h, DENSE_FP8["d"], generator=g, device="cuda")
                   for x, h in ((m, DENSE_FP8["hq"]), (n, DENSE_FP8["hkv"]),
                                (n, DENSE_FP8["hkv"])))
        q8, k8, v8 = ((x / s).to(torch.float8_e4m3fn) for x, s in
                      ((q, kw["q_scale"]), (k, kw["k_scale"]), (v, kw["v_scale"])))
        out = ops.dense_attention(q8, k8, v8, **kw)
        assert out.dtype == torch.bfloat16
        _check_fp8(out, (q8, k8, v8), (kw["q_scale"], kw["k_scale"], kw["v_scale"]))


@needs_gpu
def test_dense_fp8_runtime_scales_on_gpu():
    """FP8 with the scales as float32 tensors: one bundle, two sets of scale
    values, each within 3e-2 of the fp32 attention of the dequantized
    values."""
    import torch
    kw = {k: v for k, v in DENSE_FP8_RT.items()
          if k not in ("hq", "hkv", "d", "dtype", "runtime_scales")}
    b, m, n = 2, 300, 1000
    g = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (torch.randn(b, x, h, 128, generator=g, device="cuda")
               for x, h in ((m, 8), (n, 2), (n, 2)))
    for scales in ((0.5, 2.0, 0.25), (0.03, 0.7, 3.0)):
        st = [torch.tensor([s], device="cuda") for s in scales]
        q8, k8, v8 = ((x / s).to(torch.float8_e4m3fn) for x, s in zip((q, k, v), scales))
        out = ops.dense_attention(q8, k8, v8, q_scale=st[0], k_scale=st[1],
                                  v_scale=st[2], **kw)
        _check_fp8(out, (q8, k8, v8), scales)
    # A negative runtime scale breaks the kernel's contract: NaN, not a
    # plausible wrong answer.
    st = [torch.tensor([x], device="cuda") for x in (-0.5, 2.0, 0.25)]
    out = ops.dense_attention(q8, k8, v8, q_scale=st[0], k_scale=st[1], v_scale=st[2], **kw)
    assert out.isnan().all()


def _check_dense_f32(tol, **kw):
    """f32 q, k, v at two lengths (one bundle), causal and not, against a
    full-f32 reference (relative error under `tol`, no NaN)."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    for causal in (False, True):
        for b, m, n in ((2, 37, 53), (1, 300, 2000)):
            g = torch.Generator(device="cuda").manual_seed(n + causal)
            q = torch.randn(b, m, DENSE_F32["hq"], DENSE_F32["d"], generator=g, device="cuda")
            k, v = (torch.randn(b, n, DENSE_F32["hkv"], DENSE_F32["d"], generator=g,
                                device="cuda") for _ in range(2))
            out = ops.dense_attention(q, k, v, causal=causal, **kw)
            keep = torch.ones(m, n, dtype=torch.bool, device="cuda")
            if causal:
                keep = keep.tril()
            for i in range(b):
                ref, _ = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1),
                              v[i].transpose(0, 1), keep)
                got = out[i].transpose(0, 1)
                assert not got.isnan().any()
                assert float((got - ref).norm() / ref.norm()) < tol


@needs_gpu
def test_dense_f32_on_gpu():
    """f32 inputs: 3xTF32 within 1e-5 of a full-f32 reference."""
    _check_dense_f32(1e-5)


@needs_gpu
def test_dense_tf32_on_gpu():
    """f32 inputs with f32_precision="tf32" (the wgmma kernel): within 2e-3."""
    _check_dense_f32(2e-3, f32_precision="tf32")


def test_f32_precision_checked():
    with pytest.raises(bundle.BundleError, match="f32_precision must be"):
        ops.prepare_dense(**DENSE_F32, f32_precision="tf16")


@needs_gpu
def test_decode_on_gpu():
    """One bundle per config serves every batch size (run at two)."""
    import torch
    for cfg, b in ((PAGED, PAGED["b"]), (PAGED, 50), (SPEC, SPEC["b"]), (SPEC, 9)):
        dt = getattr(torch, cfg.get("dtype", "float16"))
        g = torch.Generator(device="cuda").manual_seed(2 + b)
        m, hq, hkv, n, d = (cfg[x] for x in ("m", "hq", "hkv", "n", "d"))
        q = torch.randn(b, m, hq, d, generator=g, device="cuda", dtype=dt)
        lens = None
        args, table, k, v = _decode_kv(cfg, b, g, dt)
        if cfg.get("kv_lens"):
            lens = torch.tensor(([0, n, 333] * b)[:b], dtype=torch.int32, device="cuda")
        res = ops.decode_attention(q, *args, block_table=table, kv_lens=lens,
                                   causal=cfg.get("causal", False),
                                   return_lse=cfg.get("return_lse", False))
        out = res[0] if cfg.get("return_lse") else res
        for i in range(b):
            keep = torch.ones(m, n, dtype=torch.bool, device="cuda")
            if cfg.get("causal"):
                keep = torch.arange(n, device="cuda")[None, :] <= \
                    torch.arange(m, device="cuda")[:, None] + (n - m)
            if lens is not None:
                keep = keep & (torch.arange(n, device="cuda")[None, :] < lens[i])
            ref, _ = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1), v[i].transpose(0, 1),
                          keep)
            if not keep.any():
                assert float(out[i].abs().max()) == 0.0
                continue
            _close(out[i].transpose(0, 1), ref)


@needs_gpu
def test_softcap_on_gpu():
    """softcap on varlen, paged decode (GQA packed) and dense calls, against
    an fp32 reference of the capped scores."""
    import torch
    from attn_opt.reference import random_cu_seqlens, varlen_keep
    dev, g = "cuda", torch.Generator(device="cuda").manual_seed(11)
    bf = torch.bfloat16
    # Varlen: 3 causal sequences over 900 tokens.
    c = SC_VARLEN
    q = torch.randn(900, c["hq"], c["d"], generator=g, device=dev, dtype=bf) * 3
    k, v = (torch.randn(900, c["hkv"], c["d"], generator=g, device=dev, dtype=bf)
            for _ in range(2))
    cu = torch.as_tensor(random_cu_seqlens(c["seqs"], 900, 5), dtype=torch.int32, device=dev)
    out = ops.varlen_attention(q, k, v, cu, cu, causal=True, softcap=SOFTCAP)
    keep = torch.as_tensor(varlen_keep(cu.tolist(), cu.tolist(), 900, 900, True, False),
                           device=dev)
    _close(out.transpose(0, 1), _ref_softcap(q.transpose(0, 1), k.transpose(0, 1),
                                             v.transpose(0, 1), keep, SOFTCAP))
    # Paged decode with kv_lens.
    c = SC_PAGED
    b, n, d, hkv = c["b"], c["n"], c["d"], c["hkv"]
    q = torch.randn(b, 1, c["hq"], d, generator=g, device=dev, dtype=bf) * 3
    kc, vc = (torch.randn(c["pages"], c["page_size"], hkv, d, generator=g, device=dev,
                          dtype=bf) for _ in range(2))
    table = torch.stack([torch.randperm(c["pages"], generator=g, device=dev)[:n // 64]
                         for _ in range(b)]).to(torch.int32)
    lens = torch.tensor([n, 300, 1, 77], dtype=torch.int32, device=dev)
    out = ops.decode_attention(q, kc, vc, block_table=table, kv_lens=lens, softcap=SOFTCAP)
    k, v = (x[table.long()].reshape(b, n, hkv, d) for x in (kc, vc))
    for i in range(b):
        keep = torch.arange(n, device=dev)[None, :] < lens[i]
        _close(out[i].transpose(0, 1), _ref_softcap(q[i].transpose(0, 1), k[i].transpose(0, 1),
                                                    v[i].transpose(0, 1), keep, SOFTCAP))
    # Dense, causal, ragged.
    c = SC_DENSE
    q = torch.randn(2, 333, c["hq"], c["d"], generator=g, device=dev, dtype=torch.float16) * 3
    k, v = (torch.randn(2, 333, c["hkv"], c["d"], generator=g, device=dev,
                        dtype=torch.float16) for _ in range(2))
    out = ops.dense_attention(q, k, v, causal=True, softcap=SOFTCAP)
    keep = torch.ones(333, 333, dtype=torch.bool, device=dev).tril()
    for i in range(2):
        _close(out[i].transpose(0, 1), _ref_softcap(q[i].transpose(0, 1), k[i].transpose(0, 1),
                                                    v[i].transpose(0, 1), keep, SOFTCAP))


@needs_gpu
def test_chunked_on_gpu():
    """chunk_size on dense calls (causal GQA, and non-causal with M != N),
    ragged, against an fp32 reference of the chunk mask."""
    import torch
    dev, gen = "cuda", torch.Generator(device="cuda").manual_seed(13)
    for cfg, (b, m, n) in ((CH_DENSE, (2, 1000, 1000)), (CH_DENSE, (1, 700, 2100)),
                           (CH_DENSE_NC, (2, 555, 555)), (CH_DENSE_NC, (1, 300, 900)),
                           (CH_DENSE_NC, (1, 900, 300))):
        hq, hkv, d, c = cfg["hq"], cfg["hkv"], cfg["d"], cfg["chunk_size"]
        dt = getattr(torch, cfg.get("dtype", "float16"))
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt) * 2
        k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        out = ops.dense_attention(q, k, v, causal=cfg.get("causal", False), chunk_size=c)
        keep = _chunk_keep(m, n, c, cfg.get("causal"), 0, dev)
        for i in range(b):
            ref, _ = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1), v[i].transpose(0, 1),
                          keep)
            rows = keep.any(1)
            _close(out[i].transpose(0, 1)[:, rows], ref[:, rows])
            assert not out[i][~rows].any()  # rows whose chunk has no key


def _chunk_keep(m, n, c, causal, offset, dev):
    """The chunk rule as a bool [m, n]: query i at position i + offset sees
    key j where j // c equals its position // c (and j <= it with causal)."""
    import torch
    qi = torch.arange(m, device=dev)[:, None] + offset
    ki = torch.arange(n, device=dev)[None, :]
    keep = (qi // c) == (ki // c)
    return keep & (ki <= qi) if causal else keep


def _decode_kv(cfg, b, gen, dt, dev="cuda"):
    """K/V for a decode call: contiguous [b, n, hkv, d], or paged caches
    with a random table (pages distinct within a sequence, shared across
    them). Returns (call args, table or None, k, v as [b, n, hkv, d])."""
    import torch
    n, hkv, d = cfg["n"], cfg["hkv"], cfg["d"]
    if cfg.get("page_size"):
        P, pages = cfg["page_size"], cfg["pages"]
        kc, vc = (torch.randn(pages, P, hkv, d, generator=gen, device=dev, dtype=dt)
                  for _ in range(2))
        table = torch.stack([torch.randperm(pages, generator=gen, device=dev)[:n // P]
                             for _ in range(b)]).to(torch.int32)
        k, v = (x[table.long()].reshape(b, n, hkv, d) for x in (kc, vc))
        return (kc, vc), table, k, v
    k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=dt) for _ in range(2))
    return (k, v), None, k, v


@needs_gpu
def test_chunked_decode_on_gpu():
    """chunk_size on decode calls (GQA over three chunks; speculative tokens
    through pages, causal, straddling a chunk boundary) at two batch sizes,
    against an fp32 reference of the chunk mask at positions n - m..n - 1."""
    import torch
    dev = "cuda"
    for cfg, b in ((CH_DEC, CH_DEC["b"]), (CH_DEC, 17), (CH_DEC_PAGED, CH_DEC_PAGED["b"]),
                   (CH_DEC_PAGED, 5)):
        gen = torch.Generator(device=dev).manual_seed(14 + b)
        dt = getattr(torch, cfg.get("dtype", "float16"))
        m, hq, hkv, n, d, c = (cfg[x] for x in ("m", "hq", "hkv", "n", "d", "chunk_size"))
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt) * 2
        args, table, k, v = _decode_kv(cfg, b, gen, dt)
        out = ops.decode_attention(q, *args, block_table=table,
                                   causal=cfg.get("causal", False), chunk_size=c)
        keep = _chunk_keep(m, n, c, cfg.get("causal"), n - m, dev)
        for i in range(b):
            ref, _ = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1), v[i].transpose(0, 1),
                          keep)
            _close(out[i].transpose(0, 1), ref)


@needs_gpu
def test_chunked_decode_lens_on_gpu():
    """chunk_size with kv_lens: each sequence's token at kv_len - 1 sees its
    own chunk's keys below kv_len (lengths 0, full, at a chunk boundary and
    random), at two batch sizes, against an fp32 reference."""
    import torch
    dev, cfg = "cuda", CH_DEC_LENS
    m, hq, hkv, n, d, c = (cfg[x] for x in ("m", "hq", "hkv", "n", "d", "chunk_size"))
    for b in (cfg["b"], 11):
        gen = torch.Generator(device=dev).manual_seed(16 + b)
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=torch.float16) * 2
        k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=torch.float16)
                for _ in range(2))
        lens = torch.randint(1, n + 1, (b,), generator=gen, device=dev, dtype=torch.int32)
        lens[:4] = torch.tensor([0, n, 2 * c, 2 * c + 1], device=dev, dtype=torch.int32)
        out = ops.decode_attention(q, k, v, kv_lens=lens, chunk_size=c)
        for i in range(b):
            keep = _chunk_keep(m, n, c, False, int(lens[i]) - 1, dev) & \
                (torch.arange(n, device=dev)[None, :] < lens[i])
            if not keep.any():  # kv_len 0: no key, 0 out
                assert not out[i].any()
                continue
            ref, _ = _ref(q[i].transpose(0, 1), k[i].transpose(0, 1), v[i].transpose(0, 1),
                          keep)
            _close(out[i].transpose(0, 1), ref)


@needs_gpu
def test_spec_lens_on_gpu():
    """kv_lens with several causal tokens per sequence: token i of sequence
    b sees keys n <= kv_lens[b] - M + i (lengths 0, below M, exactly M,
    full and random; GQA with the lse; ALiBi through pages at
    FlashAttention's distances; chunks through pages; soft-capping), and
    chunks without causal, at two batch sizes, against an fp32 reference."""
    import torch
    dev = "cuda"
    for cfg in (SPEC_LENS, SPEC_LENS_ALIBI, SPEC_LENS_CHUNK, SPEC_LENS_CAP,
                SPEC_LENS_CHUNK_NC):
        causal = cfg.get("causal", False)
        for b in (cfg["b"], 9):
            gen = torch.Generator(device=dev).manual_seed(40 + b)
            dt = getattr(torch, cfg.get("dtype", "float16"))
            m, hq, hkv, n, d = (cfg[x] for x in ("m", "hq", "hkv", "n", "d"))
            q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt) * 2
            args, table, k, v = _decode_kv(cfg, b, gen, dt)
            lens = torch.randint(1, n + 1, (b,), generator=gen, device=dev,
                                 dtype=torch.int32)
            edge = torch.tensor([0, m - 2, m, n], device=dev, dtype=torch.int32)
            lens[:min(b, 4)] = edge[:b]
            sl = (torch.tensor(alibi_slopes(hq), device=dev) if cfg.get("alibi")
                  else None)
            c = cfg.get("chunk_size", 0)
            res = ops.decode_attention(q, *args, block_table=table, kv_lens=lens,
                                       causal=causal, return_lse=cfg.get("return_lse", False),
                                       alibi_slopes=sl, chunk_size=c,
                                       softcap=cfg.get("softcap", 0.0))
            out, lse = res if cfg.get("return_lse") else (res, None)
            for i in range(b):
                L = int(lens[i])
                pos = torch.arange(m, device=dev)[:, None] + L - m
                keys = torch.arange(L, device=dev)[None, :]
                keep = keys <= pos if causal else torch.ones_like(keys <= pos)
                if c:
                    keep &= torch.div(keys, c, rounding_mode="floor") == \
                        torch.div(pos, c, rounding_mode="floor")
                if L == 0:  # no key: 0 out, lse -inf
                    assert not out[i].any()
                    if lse is not None:
                        assert torch.isneginf(lse[i]).all()
                    continue
                ref = _ref_softcap(q[i].transpose(0, 1), k[i, :L].transpose(0, 1),
                                   v[i, :L].transpose(0, 1), keep, cfg.get("softcap", 0.0),
                                   sl, offset=L - m)
                rows = keep.any(1)
                _close(out[i][rows].transpose(0, 1), ref[:, rows])
                assert not out[i][~rows].any()  # tokens before any key: 0
                if lse is not None:
                    _, rl = _ref(q[i].transpose(0, 1), k[i, :L].transpose(0, 1),
                                 v[i, :L].transpose(0, 1), keep)
                    got = lse[i].transpose(0, 1)
                    assert torch.isneginf(got[:, ~rows]).all()
                    torch.testing.assert_close(got[:, rows], rl[:, rows], atol=2e-3,
                                               rtol=1e-3)


@needs_gpu
def test_chunked_varlen_on_gpu():
    """chunk_size on varlen calls (fresh sequences top-left causal with GQA
    and an empty one; bottom-right causal after caches with the lse), each
    with its tables on the host (split there) and on the GPU (split there),
    against an fp32 reference of the chunk rule per sequence."""
    import torch
    dev = "cuda"
    for cfg, lens in ((CH_VARLEN, CH_VARLEN_LENS), (CH_VARLEN_BR, CH_VARLEN_BR_LENS)):
        gen = torch.Generator(device=dev).manual_seed(15)
        dt = getattr(torch, cfg.get("dtype", "float16"))
        hq, hkv, d, c = cfg["hq"], cfg["hkv"], cfg["d"], cfg["chunk_size"]
        br = cfg.get("bottom_right", False)
        cq, ck = ([0] + list(itertools.accumulate(x)) for x in lens)
        q = torch.randn(cq[-1], hq, d, generator=gen, device=dev, dtype=dt) * 2
        k, v = (torch.randn(ck[-1], hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        keep = torch.zeros(cq[-1], ck[-1], dtype=torch.bool, device=dev)
        for s in range(len(lens[0])):
            lq, lk = lens[0][s], lens[1][s]
            keep[cq[s]:cq[s + 1], ck[s]:ck[s + 1]] = _chunk_keep(lq, lk, c, True,
                                                                 lk - lq if br else 0, dev)
        # Tables on the host (no wait for the device), and on the GPU.
        for where in (None, dev):
            cuq, cuk = (torch.tensor(x, dtype=torch.int32, device=where) for x in (cq, ck))
            res = ops.varlen_attention(q, k, v, cuq, cuk, causal=True, bottom_right=br,
                                       return_lse=cfg.get("return_lse", False), chunk_size=c)
            out, lse = res if cfg.get("return_lse") else (res, None)
            _check_varlen(out, lse, q, k, v, keep)


@needs_gpu
def test_alibi_on_gpu():
    """alibi_slopes on dense calls (causal with GQA, and non-causal with
    softcap at M != N), ragged, against an fp32 reference; and the argument
    checked."""
    import torch
    dev, gen = "cuda", torch.Generator(device="cuda").manual_seed(12)
    for cfg, dt, (b, m, n) in ((AL_DENSE, torch.float16, (2, 333, 333)),
                               (AL_DENSE, torch.float16, (1, 1000, 4097)),
                               (AL_DENSE_NC, torch.bfloat16, (2, 300, 517)),
                               (AL_DENSE_NC, torch.bfloat16, (1, 129, 64))):
        hq, hkv, d = cfg["hq"], cfg["hkv"], cfg["d"]
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt) * 3
        k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        sl = torch.tensor(alibi_slopes(hq), device=dev)
        out = ops.dense_attention(q, k, v, causal=cfg.get("causal", False),
                                  softcap=cfg.get("softcap", 0.0), alibi_slopes=sl)
        keep = torch.ones(m, n, dtype=torch.bool, device=dev)
        if cfg.get("causal"):
            keep = keep.tril()
        for i in range(b):
            _close(out[i].transpose(0, 1),
                   _ref_softcap(q[i].transpose(0, 1), k[i].transpose(0, 1),
                                v[i].transpose(0, 1), keep, cfg.get("softcap", 0.0), sl))
    with pytest.raises(bundle.BundleError, match="alibi_slopes must be a float32"):
        ops.dense_attention(q, k, v, alibi_slopes=sl.half())


@needs_gpu
def test_window_on_gpu():
    """window_size on dense calls (causal top-left and not, ragged, M != N)
    and on causal decode with four new tokens, against an fp32 reference of
    FlashAttention's band: query i (at position i + off) sees keys
    i + off - left <= j <= i + off (+ right)."""
    import torch
    dev, gen = "cuda", torch.Generator(device="cuda").manual_seed(14)
    for cfg, dt, (b, m, n) in ((WIN_DENSE, torch.float16, (2, 333, 333)),
                               (WIN_DENSE, torch.float16, (1, 1000, 4097)),
                               (WIN_DENSE_NC, torch.bfloat16, (2, 300, 517)),
                               (WIN_DENSE_LONG, torch.bfloat16, (1, 3000, 3000)),
                               (WIN_DENSE_LONG, torch.bfloat16, (2, 2500, 5100))):
        hq, hkv, d = cfg["hq"], cfg["hkv"], cfg["d"]
        left, right = cfg["window_size"]
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt)
        k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        out = ops.dense_attention(q, k, v, window_size=(left, right))
        i, j = torch.arange(m, device=dev)[:, None], torch.arange(n, device=dev)[None, :]
        keep = (j >= i - left) & ((j <= i) if right == 0 else True)
        for x in range(b):
            ref, _ = _ref(q[x].transpose(0, 1), k[x].transpose(0, 1), v[x].transpose(0, 1),
                          keep)
            _close(out[x].transpose(0, 1), ref)
    c = WIN_DEC
    b, m, n, d, hq, hkv = c["b"], c["m"], c["n"], c["d"], c["hq"], c["hkv"]
    left = c["window_size"][0]
    q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=torch.float16)
    k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=torch.float16)
            for _ in range(2))
    out = ops.decode_attention(q, k, v, causal=True, window_size=c["window_size"])
    i, j = torch.arange(m, device=dev)[:, None] + n - m, torch.arange(n, device=dev)[None, :]
    keep = (j <= i) & (j >= i - left)
    for x in range(b):
        ref, _ = _ref(q[x].transpose(0, 1), k[x].transpose(0, 1), v[x].transpose(0, 1), keep)
        _close(out[x].transpose(0, 1), ref)


@needs_gpu
def test_alibi_varlen_decode_on_gpu():
    """alibi_slopes on varlen and decode calls against FlashAttention's
    bias, -slope_h |i + N_s - M_s - j| per sequence (N_s - M_s: its keys
    past its queries), in fp32."""
    import torch
    from attn_opt.reference import random_cu_seqlens, varlen_keep
    dev, gen = "cuda", torch.Generator(device="cuda").manual_seed(13)
    # Varlen: causal bottom-right with more keys than queries (an empty
    # sequence too), and non-causal with equal tables.
    for cfg, (tq, tk), same in ((AL_VARLEN, (600, 1100), False),
                                (AL_VARLEN_NC, (900, 900), True)):
        dt = getattr(torch, cfg.get("dtype", "float16"))
        hq, hkv, d = cfg["hq"], cfg["hkv"], cfg["d"]
        q = torch.randn(tq, hq, d, generator=gen, device=dev, dtype=dt) * 3
        k, v = (torch.randn(tk, hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        cuq = torch.as_tensor(random_cu_seqlens(cfg["seqs"], tq, 7), dtype=torch.int32,
                              device=dev)
        cuk = cuq if same else torch.as_tensor(random_cu_seqlens(cfg["seqs"], tk, 8),
                                               dtype=torch.int32, device=dev)
        sl = torch.tensor(alibi_slopes(hq), device=dev)
        causal, br = cfg.get("causal", False), cfg.get("bottom_right", False)
        out = ops.varlen_attention(q, k, v, cuq, cuk, causal=causal, bottom_right=br,
                                   alibi_slopes=sl)
        assert not out.isnan().any()
        keep = torch.as_tensor(varlen_keep(cuq.tolist(), cuk.tolist(), tq, tk, causal, br),
                               device=dev)
        for s in range(cfg["seqs"]):
            q0, q1, k0, k1 = (int(x) for x in (cuq[s], cuq[s + 1], cuk[s], cuk[s + 1]))
            if q1 == q0 or k1 == k0:
                continue
            ref = _ref_softcap(q[q0:q1].transpose(0, 1), k[k0:k1].transpose(0, 1),
                               v[k0:k1].transpose(0, 1), keep[q0:q1, k0:k1], 0.0, sl,
                               offset=(k1 - k0) - (q1 - q0))
            ref = ref.nan_to_num(0.0)
            _close(out[q0:q1].transpose(0, 1), ref)
        if not same:
            with pytest.raises(bundle.BundleError, match="equal cu_seqlens_q"):
                ops.varlen_attention(q, k, v, cuq, cuk, alibi_slopes=sl)
    # Paged GQA decode (M = 1) with kv_lens, not causal.
    c = AL_PAGED
    b, n, d, hkv, hq = c["b"], c["n"], c["d"], c["hkv"], c["hq"]
    q = torch.randn(b, 1, hq, d, generator=gen, device=dev, dtype=torch.float16) * 3
    kc, vc = (torch.randn(c["pages"], c["page_size"], hkv, d, generator=gen, device=dev,
                          dtype=torch.float16) for _ in range(2))
    table = torch.stack([torch.randperm(c["pages"], generator=gen, device=dev)[:n // 64]
                         for _ in range(b)]).to(torch.int32)
    lens = torch.tensor([n, 300, 77], dtype=torch.int32, device=dev)
    sl = torch.tensor(alibi_slopes(hq), device=dev)
    out, _ = ops.decode_attention(q, kc, vc, block_table=table, kv_lens=lens,
                                  return_lse=True, alibi_slopes=sl)
    k, v = (x[table.long()].reshape(b, n, hkv, d) for x in (kc, vc))
    for i in range(b):
        L = int(lens[i])
        keep = torch.ones(1, L, dtype=torch.bool, device=dev)
        _close(out[i].transpose(0, 1),
               _ref_softcap(q[i].transpose(0, 1), k[i, :L].transpose(0, 1),
                            v[i, :L].transpose(0, 1), keep, 0.0, sl, offset=L - 1))
    # Speculative decode: M = 4 causal (bottom-right).
    c = AL_SPEC
    b, m, n, d, hq = c["b"], c["m"], c["n"], c["d"], c["hq"]
    q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=torch.bfloat16) * 3
    k, v = (torch.randn(b, n, c["hkv"], d, generator=gen, device=dev, dtype=torch.bfloat16)
            for _ in range(2))
    sl = torch.tensor(alibi_slopes(hq), device=dev)
    out = ops.decode_attention(q, k, v, causal=True, alibi_slopes=sl)
    keep = torch.arange(n, device=dev)[None, :] <= torch.arange(m, device=dev)[:, None] + n - m
    for i in range(b):
        _close(out[i].transpose(0, 1),
               _ref_softcap(q[i].transpose(0, 1), k[i].transpose(0, 1),
                            v[i].transpose(0, 1), keep, 0.0, sl, offset=n - m))


@needs_gpu
def test_document_on_gpu():
    """document_attention against an fp32 reference of the document mask:
    sorted ids of random lengths (GQA, causal, the lse), query ids
    shorter than the keys' (some rows see no key: 0 and lse -inf), and
    int64 ids at D = 64; each dynamic bundle at two shapes, and a static
    one."""
    import torch
    from attn_opt.reference import segment_ids
    dev, gen = "cuda", torch.Generator(device="cuda").manual_seed(21)
    # One dynamic bundle per configuration at two shapes (the second: other
    # B, M and N), and DOC_MN's static bundle (dynamic=False).
    runs = [(DOC_GQA, 3, True), (dict(DOC_GQA, b=1, m=2500, n=2500), 6, True),
            (DOC_MN, 4, True), (dict(DOC_MN, b=3, m=300, n=170), 7, True),
            (DOC_MN, 4, False), (DOC_I64, 5, True), (dict(DOC_I64, m=4100, n=4100), 8, True)]
    for cfg, seed, dyn in runs:
        b, m, n, hq, hkv, d = (cfg[x] for x in ("b", "m", "n", "hq", "hkv", "d"))
        dt = getattr(torch, cfg["dtype"])
        causal, lse_too = cfg.get("causal", False), cfg.get("return_lse", False)
        q = torch.randn(b, m, hq, d, generator=gen, device=dev, dtype=dt)
        k, v = (torch.randn(b, n, hkv, d, generator=gen, device=dev, dtype=dt)
                for _ in range(2))
        idt = getattr(torch, cfg.get("ids_dtype", "int32"))
        iq = torch.as_tensor(segment_ids((b, m), seed), device=dev, dtype=idt)
        ik = iq if m == n else torch.as_tensor(segment_ids((b, n), seed), device=dev,
                                               dtype=idt)
        res = ops.document_attention(q, k, v, iq, None if m == n else ik, causal=causal,
                                     return_lse=lse_too, dynamic=dyn)
        out, lse = res if lse_too else (res, None)
        for x in range(b):
            keep = iq[x][:, None] == ik[x][None, :]
            if causal:
                keep &= torch.ones(m, n, device=dev, dtype=torch.bool).tril()
            ref, ref_lse = _ref(q[x].transpose(0, 1), k[x].transpose(0, 1),
                                v[x].transpose(0, 1), keep)
            _close(out[x].transpose(0, 1), ref)
            empty = ~keep.any(1)
            assert not out[x][empty].any()
            if lse is not None:
                got = lse[x].transpose(0, 1)
                assert torch.equal(got.isinf(), ref_lse.isinf())
                fin = ~ref_lse.isinf()
                assert float((got[fin] - ref_lse[fin]).abs().max()) < 1e-2
    # Queries and keys of different lengths need the keys' ids.
    q2 = torch.randn(1, 7, 4, 64, device=dev, dtype=torch.float16)
    k2 = torch.randn(1, 13, 4, 64, device=dev, dtype=torch.float16)
    with pytest.raises(bundle.BundleError, match="kv_segment_ids"):
        ops.document_attention(q2, k2, k2, torch.zeros(1, 7, device=dev,
                                                      dtype=torch.int32))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prepare":
        for p in prepare_all(sys.argv[2]) + prepare_softcap(sys.argv[2]) \
                + prepare_alibi(sys.argv[2]) + prepare_window(sys.argv[2]) \
                + prepare_document(sys.argv[2]) + prepare_chunked(sys.argv[2]) \
                + prepare_spec_lens(sys.argv[2]):
            print(p)
    else:
        print(__doc__)
