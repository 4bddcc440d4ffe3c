#!/usr/bin/env python3
"""A causal sliding window through the Python call:
`attn_opt.dense_attention(q, k, v, window_size=(W - 1, 0))` (one dynamic
bundle per configuration) against the peers, same inputs, one run.

    python3 bench/bench_dense_window.py --prepare DIR             # here (attn-bundle)
    ATTN_OPT_CACHE=DIR python3 bench/bench_dense_window.py --out OUT   # GPU

Rows: fp16 and bf16, D = 128, H = 16, N in {1024, 4096, 16384} at 16k
tokens per batch, windows of 512 and 4096 keys (query m sees keys
m - W < n <= m). attn-opt is timed as the call ("call") and as the launch
of the same bundle alone ("kernel"). Peers: FlexAttention (torch.compile
of flex_attention with the band as its block_mask) and SDPA with the band
materialized as a bool [N, N] mask (cuDNN and memory-efficient backends).
TFLOP/s count the products the band needs (N W - W (W - 1) / 2 per head);
the call's relative error is against FlexAttention in fp32.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from attn_opt import ops  # noqa: E402
from bench_attention import timed_rounds, write_table  # noqa: E402

H, D = 16, 128
ROWS = [(n, w, dt) for n in (1024, 4096, 16384) for w in (512, 4096)
        for dt in ("float16", "bfloat16")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", metavar="DIR")
    ap.add_argument("--out", default=".")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    if a.prepare:
        for dt in ("float16", "bfloat16"):
            for w in (512, 4096):
                print(ops.prepare_dense(H, H, D, dt, window_size=(w - 1, 0),
                                        cache_dir=a.prepare))
        return
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 1024
    flex = torch.compile(flex_attention, dynamic=False)

    def timed(fn) -> float:
        return timed_rounds(torch, fn, a.reps) / 1e3

    cols = ["N", "window", "dtype", "call", "kernel", "flex", "sdpa_mask",
            "call/flex", "call/sdpa_mask", "rel_err"]
    lines = [",".join(cols)]
    print(lines[0], flush=True)
    for n, w, dt in ROWS:
        b = 16384 // n
        tdt = getattr(torch, dt)
        q, k, v = (torch.randn(b, n, H, D, device="cuda", dtype=tdt) for _ in range(3))
        we = min(w, n)
        fl = 4 * b * H * D * (n * we - we * (we - 1) / 2)
        t_c = timed(lambda: ops.dense_attention(q, k, v, window_size=(w - 1, 0)))
        kern = ops._kernel(ops._dense_text(H, H, D, dt, True, None, False, 1.0, 1.0, 1.0,
                                           None, "", 0.0, False, w), "sm_90a", None)
        t_k = timed(kern.prepare(q=q.view(b, n, H, 1, D), k=k, v=v))
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

        def band(bb, h, qi, ki):
            return (qi >= ki) & (qi - ki < w)
        bm = create_block_mask(band, None, None, n, n)
        t_fx = timed(lambda: flex(qt, kt, vt, block_mask=bm))
        pos = torch.arange(n, device="cuda")
        keep = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < w)
        try:
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                t_sd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(
                    qt, kt, vt, attn_mask=keep))
        except RuntimeError:
            t_sd = float("nan")
        out = ops.dense_attention(q, k, v, window_size=(w - 1, 0)).transpose(1, 2)[:1]
        ref = flex(qt[:1].float(), kt[:1].float(), vt[:1].float(), block_mask=bm)
        err = float((out.float() - ref).norm() / ref.norm())
        assert not out.isnan().any()
        del out, ref, keep
        torch.cuda.empty_cache()
        tf = [fl / t / 1e9 for t in (t_c, t_k, t_fx, t_sd)]
        row = [str(n), str(w), dt] + [f"{x:.1f}" for x in tf] + [
            f"{t_fx / t_c:.3f}", f"{t_sd / t_c:.3f}", f"{err:.2e}"]
        lines.append(",".join(row))
        print(lines[-1], flush=True)
    write_table(a.out, "bench_dense_window.csv", lines)


if __name__ == "__main__":
    main()
