#!/usr/bin/env python3
"""Packed documents (a document mask from segment ids) against the peers,
same inputs, one run.

    python3 bench/bench_document.py --prepare DIR        # here (attn-bundle)
    python3 bench/bench_document.py DIR --out OUT        # GPU

The program is what the recognizer makes of JAX's (MaxText, Flax)
`jnp.where(seg_q[:, :, None] == seg_kv[:, None, :], s, -inf)`: an
attention whose score_mod region keeps s where the query's id equals the
key's, the ids int32 [B, N] tensors the kernel reads (one bundle per shape
serves every packing). Rows: fp16 and bf16, D = 128, H = 16 (--head-dim 64:
H = 32), [B, H, N, D]
with B N = 16384 (N = 4096 and 16384), causal and not, equal documents of
L = 512 and 2048 tokens (ids n // L). Timed (CUDA events, median of
rounds of --reps launches): attn-opt's document bundle; FlexAttention
(torch.compile of flex_attention with the document mask as its
block_mask, built once outside the timing, as users cache it); SDPA with
the mask materialized as a bool [B, 1, N, N] tensor (cuDNN and
memory-efficient backends); and attn-opt's own plain (or causal) bundle at
the same shape, whose time, scaled by the fraction of the products the
documents need, is what a perfect block-sparse kernel would take
("ideal"); and the dynamic document bundle (B, M and N dynamic: one for
every shape) on the same inputs ("dyn_vs_static": the static time over the
dynamic one, as bench_dynamic.py).
TFLOP/s count the products the documents need (B H S L^2 4 D,
causal L (L + 1) / 2 per document); rel_err is against FlexAttention in
fp32 on the first batch entry.
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

H, D = 16, 128  # --head-dim 64 / 256: H = 32 / 8 (model dim 2048)
SHAPES = [(n, c, dt) for n in (4096, 16384) for c in (False, True)
          for dt in ("float16", "bfloat16")]
DOCS = (512, 2048)
MLIR_DT = {"float16": "f16", "bfloat16": "bf16"}


def program(dt: str, n: int, causal: bool, doc: bool) -> str:
    """The [B, H, N, D] program (doc: with the segment-id region); n = 0:
    B, M and N dynamic (one bundle for every shape)."""
    b, n = (16384 // n, n) if n else ("?", "?")
    t = f"tensor<{b}x{H}x{n}x{D}x{MLIR_DT[dt]}>"
    ids = f"tensor<{b}x{n}xi32>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = [m + x + ">" for x in ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)",
                                   "(b, h, m, e)")]
    params = f"%q: {t}, %k: {t}, %v: {t}"
    mods = region = ""
    if doc:
        maps += [m + "(b, m)>", m + "(b, n)>"]
        params += f", %sq: {ids}, %sk: {ids}"
        mods = f" score_mod_operands(%sq, %sk : {ids}, {ids})"
        region = """ score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %eq = arith.cmpi eq, %qi, %ki : i32
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      }"""
    return f"""func.func @attention({params}, %o: {t}) -> {t} {{
  %s = arith.constant {1.0 / math.sqrt(D)!r} : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s){mods} outs(%o : {t})
      {"causal " if causal else ""}indexing_maps = [{", ".join(maps)}]{region} -> {t}
  return %r : {t}
}}
"""


def name(dt: str, n: int, causal: bool, doc: bool) -> str:
    return (f"{'doc' if doc else 'plain'}_{dt}_d{D}_n{n if n else 'dyn'}_"
            f"{'causal' if causal else 'full'}")


def prepare(out: Path, attn_bundle: str) -> None:
    # (n = 0: the dynamic document bundle of each dtype and causal.)
    jobs = [(n, c, dt, doc) for n, c, dt in SHAPES for doc in (True, False)]
    jobs += sorted({(0, c, dt, True) for _, c, dt in SHAPES})
    compile_programs(out, attn_bundle, [(name(dt, n, c, doc), program(dt, n, c, doc))
                                        for n, c, dt, doc in jobs])


def main() -> None:
    ap = prepare_parser(__doc__)
    ap.add_argument("--head-dim", type=int, default=128, choices=(64, 128, 256))
    a = ap.parse_args()
    global H, D
    D = a.head_dim
    H = 2048 // D
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

    cols = ["D", "N", "B", "causal", "dtype", "doc", "ours_us", "flex_us", "sdpa_mask_us",
            "plain_us", "ours_tflops", "flex_tflops", "flex/ours", "sdpa/ours",
            "ideal/ours", "rel_err", "dyn_us", "dyn_vs_static", "dyn_vs_static_err"]
    lines = [",".join(cols)]
    print(lines[0], flush=True)
    for n, c, dt in SHAPES:
        b = 16384 // n
        tdt = getattr(torch, dt)
        g = torch.Generator(device="cuda").manual_seed(n + c)
        q, k, v = (torch.randn(b, H, n, D, device="cuda", dtype=tdt, generator=g)
                   for _ in range(3))
        kd = attn_opt.load(root / name(dt, n, c, True))
        kp = attn_opt.load(root / name(dt, n, c, False))
        kdyn = attn_opt.load(root / name(dt, 0, c, True))
        t_plain = timed(kp.prepare(q=q, k=k, v=v))
        for L in DOCS:
            ids = (torch.arange(n, device="cuda", dtype=torch.int32) // L).repeat(b, 1)
            out = torch.empty_like(q)
            t_ours = timed(kd.prepare(q=q, k=k, v=v, mod0=ids, mod1=ids, out=out))
            # The dynamic bundle (one for every B and N), same inputs.
            out_dyn = torch.empty_like(q)
            t_dyn = timed(kdyn.prepare(q=q, k=k, v=v, mod0=ids, mod1=ids, out=out_dyn))
            dyn_err = float((out_dyn.float() - out.float()).norm() / out.float().norm())

            def doc_mask(bb, h, qi, ki):
                keep = ids[bb, qi] == ids[bb, ki]
                return keep & (qi >= ki) if c else keep
            bm = create_block_mask(doc_mask, b, None, n, n)
            t_fx = timed(lambda: flex(q, k, v, block_mask=bm))
            keep = (ids[:, :, None] == ids[:, None, :])
            if c:
                keep &= torch.ones(n, n, device="cuda", dtype=torch.bool).tril()
            keep = keep[:, None]
            try:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION,
                                  SDPBackend.EFFICIENT_ATTENTION]):
                    t_sd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, attn_mask=keep))
            except RuntimeError:
                t_sd = float("nan")
            del keep
            # Products the documents need, and the fraction of the plain
            # (or causal) kernel's.
            docs = n // L
            per_doc = L * L if not c else L * (L + 1) / 2
            full = n * n if not c else n * (n + 1) / 2
            flops = 4 * D * b * H * docs * per_doc
            ideal = t_plain * docs * per_doc / full
            ref = flex(q[:1].float(), k[:1].float(), v[:1].float(),
                       block_mask=create_block_mask(doc_mask, 1, None, n, n))
            err = float((out[:1].float() - ref).norm() / ref.norm())
            assert not out.isnan().any()
            del ref
            torch.cuda.empty_cache()
            row = [str(D), str(n), str(b), str(c), dt, str(L), f"{t_ours:.1f}", f"{t_fx:.1f}",
                   f"{t_sd:.1f}", f"{t_plain:.1f}", f"{flops / t_ours / 1e6:.1f}",
                   f"{flops / t_fx / 1e6:.1f}", f"{t_fx / t_ours:.3f}",
                   f"{t_sd / t_ours:.3f}", f"{ideal / t_ours:.3f}", f"{err:.2e}",
                   f"{t_dyn:.1f}", f"{t_ours / t_dyn:.3f}", f"{dyn_err:.2e}"]
            lines.append(",".join(row))
            print(lines[-1], flush=True)
    write_table(a.out, f"bench_document_d{D}.csv", lines)


if __name__ == "__main__":
    main()
