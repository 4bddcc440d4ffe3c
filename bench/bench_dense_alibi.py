#!/usr/bin/env python3
"""ALiBi through the Python call: `attn_opt.dense_attention(q, k, v,
alibi_slopes=...)` (one dynamic bundle per configuration, the slopes a
runtime tensor) against its own plain kernel and the peers, same inputs,
one run.

    python3 bench/bench_dense_alibi.py --prepare DIR             # here (attn-bundle)
    ATTN_OPT_CACHE=DIR python3 bench/bench_dense_alibi.py --out OUT   # GPU

Rows: fp16 and bf16, D = 128, H = 16, N in {1024, 4096, 16384} at 16k
tokens per batch, causal (the bias slope_h (n - m): linear in the key
index) and not (FlashAttention's -slope_h |m - n|), slopes 2^(-8 (h+1) / H).
Each is timed two ways: the call as a user makes it (dense_attention,
Python and launch included: "call") and the launch alone of the same bundle
(`Kernel.prepare`: "kernel"). Peers: FlexAttention (torch.compile of
flex_attention with the same score_mod, and the causal block_mask) and SDPA
with the bias materialized [H, N, N] in the input dtype (cuDNN and
memory-efficient backends; the causal -inf folded in). Output: CSV of
TFLOP/s (causal counts half the products), the ratios, and the call's
relative error against FlexAttention in fp32 on the first batch.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from attn_opt import ops  # noqa: E402
from bench_attention import timed_rounds, write_table  # noqa: E402

H, D = 16, 128
ROWS = [(n, c, dt) for n in (1024, 4096, 16384) for c in (True, False)
        for dt in ("float16", "bfloat16")]


def prepare(cache: str) -> None:
    for dt in ("float16", "bfloat16"):
        for c in (True, False):
            for al in (True, False):
                print(ops.prepare_dense(H, H, D, dt, causal=c, alibi=al, cache_dir=cache))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prepare", metavar="DIR")
    ap.add_argument("--out", default=".")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    if a.prepare:
        prepare(a.prepare)
        return
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 1024
    flex = torch.compile(flex_attention, dynamic=False)
    sl = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], device="cuda")

    def timed(fn) -> float:
        return timed_rounds(torch, fn, a.reps) / 1e3

    cols = ["N", "causal", "dtype", "plain_call", "alibi_call", "plain_kernel",
            "alibi_kernel", "flex", "sdpa_bias", "alibi/plain_kernel",
            "alibi/plain_call", "alibi_call/flex", "alibi_call/sdpa_bias", "rel_err"]
    lines = [",".join(cols)]
    print(lines[0], flush=True)
    for n, c, dt in ROWS:
        b = 16384 // n
        tdt = getattr(torch, dt)
        q, k, v = (torch.randn(b, n, H, D, device="cuda", dtype=tdt) for _ in range(3))
        fl = 4 * b * H * n * n * D * (0.5 if c else 1.0)
        t_pc = timed(lambda: ops.dense_attention(q, k, v, causal=c))
        t_ac = timed(lambda: ops.dense_attention(q, k, v, causal=c, alibi_slopes=sl))
        # The same bundles' launches alone.
        qv = q.view(b, n, H, 1, D)
        plain = ops._kernel(ops._dense_text(H, H, D, dt, c, None, False, 1.0, 1.0, 1.0,
                                            None), "sm_90a", None)
        alibi = ops._kernel(ops._dense_text(H, H, D, dt, c, None, False, 1.0, 1.0, 1.0,
                                            None, "", 0.0, True), "sm_90a", None)
        t_pk = timed(plain.prepare(q=qv, k=k, v=v))
        t_ak = timed(alibi.prepare(q=qv, k=k, v=v, mod0=sl.view(H, 1)))
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

        def mod(s, bb, h, qi, ki):
            return s - sl[h] * (qi - ki).abs()
        bm = create_block_mask(lambda bb, h, qi, ki: qi >= ki, None, None, n, n) if c else None
        t_fx = timed(lambda: flex(qt, kt, vt, score_mod=mod, block_mask=bm))
        dist = (torch.arange(n, device="cuda")[:, None]
                - torch.arange(n, device="cuda")[None, :]).abs()
        bias = (-sl[:, None, None] * dist).to(tdt)
        del dist
        if c:
            bias.masked_fill_(torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1),
                              -math.inf)
        bias = bias[None].expand(b, H, n, n)
        try:
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                t_sd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                    qt, kt, vt, attn_mask=bias))
        except RuntimeError:
            t_sd = float("nan")
        del bias
        torch.cuda.empty_cache()
        out = ops.dense_attention(q, k, v, causal=c, alibi_slopes=sl).transpose(1, 2)[:1]
        ref = flex(qt[:1].float(), kt[:1].float(), vt[:1].float(), score_mod=mod,
                   block_mask=bm)
        err = float((out.float() - ref).norm() / ref.norm())
        assert not out.isnan().any()
        del out, ref
        torch.cuda.empty_cache()
        tf = [fl / t / 1e9 for t in (t_pc, t_ac, t_pk, t_ak, t_fx, t_sd)]
        row = [str(n), str(c), dt] + [f"{x:.1f}" for x in tf] + [
            f"{t_pk / t_ak:.3f}", f"{t_pc / t_ac:.3f}", f"{t_fx / t_ac:.3f}",
            f"{t_sd / t_ac:.3f}", f"{err:.2e}"]
        lines.append(",".join(row))
        print(lines[-1], flush=True)
    write_table(a.out, "bench_dense_alibi.csv", lines)


if __name__ == "__main__":
    main()
