#!/usr/bin/env python3
"""Chunked attention (Llama 4's local layers) against the peers, same
inputs, one run.

    python3 bench/bench_chunked.py --prepare DIR        # here (attn-bundle)
    python3 bench/bench_chunked.py DIR --out OUT        # GPU

The program is what the recognizer makes of Hugging Face's
`and_masks(causal_mask_function, chunked_overlay(C))` (`kv_idx // C ==
q_idx // C`): an attention whose score_mod region keeps s where the
query's and the key's positions lie in the same chunk of C tokens,
`floordivsi(m, C) == floordivsi(n, C)`, causal as the op's attribute. The
kernels read no ids: each query tile's key range comes from its chunks.
Rows: fp16 and bf16, D = 128, H = 16, [1, H, N, D], (N, C) in
{(16384, 2048), (16384, 8192), (32768, 8192)} causal and (16384, 2048)
non-causal. Timed (CUDA events, median of rounds of --reps launches):
attn-opt's chunked bundle; FlexAttention (torch.compile of flex_attention
with the same mask as its block_mask, built once outside the timing); SDPA
with the mask materialized as a bool [1, 1, N, N] tensor (cuDNN and
memory-efficient backends); and attn-opt's own causal (or plain) bundle at
the same shape, whose time scaled by the fraction of the products the
chunks need is what a perfect block-sparse kernel would take ("ideal").
TFLOP/s count the products the chunks need; rel_err is against
FlexAttention in fp32.

Varlen rows (`varlen_attention(..., chunk_size=C)`: packed sequences, each
run as plain varlen attention over its pieces within one chunk): bf16,
H = 16, D = 128, causal, sequences of VARLEN_LENS tokens packed into one
axis; timed per call (the host's piece tables included; the cu_seqlens
tables given on the host, and on the GPU, which costs a wait for the
device) against FlexAttention with the packed-document-and-chunk mask as
its block_mask, and against attn-opt's plain causal varlen call at the
same tokens (what the chunks save).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from bench_attention import (compile_programs, compiled_flex, prepare_parser,  # noqa: E402
                             timed_rounds, write_table)

H, D = 16, 128
ROWS = [(16384, 2048, True), (16384, 8192, True), (32768, 8192, True),
        (16384, 2048, False)]
DTYPES = ("float16", "bfloat16")
MLIR_DT = {"float16": "f16", "bfloat16": "bf16"}


def program(dt: str, n: int, c: int, causal: bool) -> str:
    """[1, H, N, D]; c > 0: the chunk region (dense_attention's), else the
    plain (causal) op."""
    from attn_opt.ops import _with_region
    t = f"tensor<1x{H}x{n}x{D}x{MLIR_DT[dt]}>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = [m + x + ">" for x in ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)",
                                   "(b, h, m, e)")]
    return _with_region(f"""func.func @attention(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant {1.0 / math.sqrt(D)!r} : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      {"causal " if causal else ""}indexing_maps = [{", ".join(maps)}] -> {t}
  return %r : {t}
}}
""", None, None, c)


VARLEN_LENS = [(16384, 16384, 8192), (8192, 20000, 4096, 1500, 30000), (4096,) * 16]
VARLEN_C = 8192


def varlen_configs():
    """(name, lengths, seqs the call's tables need: pieces for chunks, the
    sequences for the plain call)."""
    from attn_opt.ops import chunk_virtual_tables
    out = []
    for lens in VARLEN_LENS:
        cu = [0]
        for x in lens:
            cu.append(cu[-1] + x)
        pieces = len(chunk_virtual_tables(cu, cu, VARLEN_C, False)[0]) - 1
        out.append((f"varlen_{len(lens)}x{sum(lens) // len(lens)}", lens, pieces))
    return out


def name(dt: str, n: int, c: int, causal: bool) -> str:
    return f"{'chunk' + str(c) if c else 'plain'}_{dt}_n{n}_{'causal' if causal else 'full'}"


def prepare(out: Path, attn_bundle: str) -> None:
    jobs = sorted({(dt, n, c, causal) for n, c, causal in ROWS for dt in DTYPES} |
                  {(dt, n, 0, causal) for n, _, causal in ROWS for dt in DTYPES})
    compile_programs(out, attn_bundle, [(name(dt, n, c, causal), program(dt, n, c, causal))
                                        for dt, n, c, causal in jobs])
    # Varlen: the cache the calls use, compiled here (attn-bundle).
    import os
    from attn_opt import ops
    os.environ["ATTN_BUNDLE"] = attn_bundle
    for _, lens, pieces in varlen_configs():
        for seqs in (pieces, len(lens)):
            print(ops.prepare_varlen(H, H, D, seqs, "bfloat16", causal=True,
                                     cache_dir=out / "varlen_cache"), flush=True)


def main() -> None:
    a = prepare_parser(__doc__).parse_args()
    if a.prepare:
        prepare(Path(a.prepare), a.attn_bundle)
        return
    import torch
    import attn_opt
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask
    flex = compiled_flex(torch)
    root = Path(a.dir)

    def timed(fn) -> float:
        return timed_rounds(torch, fn, a.reps, a.rounds)

    cols = ["D", "N", "C", "causal", "dtype", "ours_us", "flex_us", "sdpa_mask_us",
            "plain_us", "ours_tflops", "flex_tflops", "flex/ours", "sdpa/ours",
            "ideal/ours", "rel_err"]
    lines = [",".join(cols)]
    print(lines[0], flush=True)
    for n, c, causal in ROWS:
        for dt in DTYPES:
            g = torch.Generator(device="cuda").manual_seed(n + c)
            q, k, v = (torch.randn(1, H, n, D, device="cuda", dtype=getattr(torch, dt),
                                   generator=g) for _ in range(3))
            out = torch.empty_like(q)
            t_ours = timed(attn_opt.load(root / name(dt, n, c, causal)).prepare(
                q=q, k=k, v=v, out=out))
            t_plain = timed(attn_opt.load(root / name(dt, n, 0, causal)).prepare(
                q=q, k=k, v=v))

            def chunk_mask(bb, h, qi, ki):
                keep = (qi // c) == (ki // c)
                return keep & (qi >= ki) if causal else keep
            bm = create_block_mask(chunk_mask, 1, None, n, n)
            t_fx = timed(lambda: flex(q, k, v, block_mask=bm))
            pos = torch.arange(n, device="cuda")
            keep = (pos[:, None] // c) == (pos[None, :] // c)
            if causal:
                keep &= pos[:, None] >= pos[None, :]
            try:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION,
                                  SDPBackend.EFFICIENT_ATTENTION]):
                    t_sd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, attn_mask=keep[None, None]))
            except RuntimeError:
                t_sd = float("nan")
            del keep
            chunks = n // c
            per = c * c if not causal else c * (c + 1) / 2
            full = n * n if not causal else n * (n + 1) / 2
            flops = 4 * D * H * chunks * per
            ideal = t_plain * chunks * per / full
            ref = flex(q.float(), k.float(), v.float(), block_mask=bm)
            err = float((out.float() - ref).norm() / ref.norm())
            assert not out.isnan().any()
            del ref
            torch.cuda.empty_cache()
            row = [str(D), str(n), str(c), str(causal), dt, f"{t_ours:.1f}", f"{t_fx:.1f}",
                   f"{t_sd:.1f}", f"{t_plain:.1f}", f"{flops / t_ours / 1e6:.1f}",
                   f"{flops / t_fx / 1e6:.1f}", f"{t_fx / t_ours:.3f}",
                   f"{t_sd / t_ours:.3f}", f"{ideal / t_ours:.3f}", f"{err:.2e}"]
            lines.append(",".join(row))
            print(lines[-1], flush=True)
    write_table(a.out, "bench_chunked.csv", lines)
    # Varlen rows.
    from attn_opt import ops
    cache = root / "varlen_cache"
    vcols = ["lengths", "C", "ours_us", "ours_gpu_tables_us", "flex_us", "plain_varlen_us",
             "flex/ours", "plain/ours", "rel_err"]
    vlines = [",".join(vcols)]
    print(vlines[0], flush=True)
    for nm, lens, _ in varlen_configs():
        t = sum(lens)
        g = torch.Generator(device="cuda").manual_seed(t)
        q, k, v = (torch.randn(t, H, D, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(3))
        cu_l = [0]
        for x in lens:
            cu_l.append(cu_l[-1] + x)
        cu = torch.tensor(cu_l, dtype=torch.int32, device="cuda")
        # The chunked call takes the tables on the host (no wait for the
        # device); on the GPU they would cost one (column ours_gpu_tables_us).
        cu_h = torch.tensor(cu_l, dtype=torch.int32)
        out = ops.varlen_attention(q, k, v, cu_h, cu_h, causal=True, chunk_size=VARLEN_C,
                                   cache_dir=cache)
        t_ours = timed(lambda: ops.varlen_attention(q, k, v, cu_h, cu_h, causal=True,
                                                    chunk_size=VARLEN_C, cache_dir=cache))
        t_sync = timed(lambda: ops.varlen_attention(q, k, v, cu, cu, causal=True,
                                                    chunk_size=VARLEN_C, cache_dir=cache))
        t_plain = timed(lambda: ops.varlen_attention(q, k, v, cu, cu, causal=True,
                                                     cache_dir=cache))
        doc = torch.repeat_interleave(torch.arange(len(lens), device="cuda"),
                                      torch.tensor(lens, device="cuda"))
        pos = torch.arange(t, device="cuda") - cu[:-1].long()[doc]

        def vmask(bb, h, qi, ki):
            return (doc[qi] == doc[ki]) & (pos[qi] // VARLEN_C == pos[ki] // VARLEN_C) & \
                (qi >= ki)
        bm = create_block_mask(vmask, 1, None, t, t)
        qh, kh, vh = (x.transpose(0, 1)[None] for x in (q, k, v))
        t_fx = timed(lambda: flex(qh, kh, vh, block_mask=bm))
        ref = flex(qh.float(), kh.float(), vh.float(), block_mask=bm)[0].transpose(0, 1)
        err = float((out.float() - ref).norm() / ref.norm())
        assert not out.isnan().any()
        row = ["/".join(map(str, lens)), str(VARLEN_C), f"{t_ours:.1f}", f"{t_sync:.1f}",
               f"{t_fx:.1f}",
               f"{t_plain:.1f}", f"{t_fx / t_ours:.3f}", f"{t_plain / t_ours:.3f}",
               f"{err:.2e}"]
        vlines.append(",".join(row))
        print(vlines[-1], flush=True)
        del q, k, v, ref
        torch.cuda.empty_cache()
    write_table(a.out, "bench_chunked_varlen.csv", vlines)


if __name__ == "__main__":
    main()
