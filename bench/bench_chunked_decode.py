#!/usr/bin/env python3
"""Chunked-attention decode (Llama 4's local layers, serving) against the
peers, same inputs, one run.

    python3 bench/bench_chunked_decode.py --prepare DIR      # here (attn-bundle)
    python3 bench/bench_chunked_decode.py DIR --out OUT      # GPU

One new token per sequence at position N - 1 of a [B, N, Hkv, D] cache sees
only the keys of its own chunk of C = 8192 positions: keys
C * floor((N - 1) / C) .. N - 1. The program is
`attn_opt.decode_attention(..., chunk_size=C)`'s: the region keeps s where
(m + N - M) // C == n // C. attn-opt finds those keys by a binary search over
the key chunks and splits them over blocks (split-KV); nothing is sliced.

Rows: Llama 4 Scout's heads (40 query, 8 kv, D = 128), bf16 and fp16,
B in {1, 16, 64}, N in {32768, 131072} (8192 visible keys) and N = 100000
(1696 visible keys), up to B * N = 16 * 131072 (8.6 GB of K/V). Timed, each launch after an L2 flush (median):
- ours: the chunked decode bundle over the whole cache;
- slice: attn-opt's plain decode bundle over a contiguous copy of the visible
  keys alone (the copy made outside the timing): what a serving system that
  slices the chunk itself would get from the same kernel, the "ideal";
- full: attn-opt's plain decode over all N keys (what reading the whole cache
  costs: the region per score over every key costs at least this);
- flash / cudnn: SDPA's flash and cuDNN backends on contiguous [B, H, n, D]
  copies of the visible keys (enable_gqa), the peers given the slice;
- flex: FlexAttention (torch.compile, its decode path) over the whole cache
  with the chunk mask as its block_mask (built once, outside the timing).
GB/s count the visible K/V bytes; rel_err is against an fp32 reference.
Paged rows (bf16): the same chunked decode through vLLM's 16-key pages in a
random order against the contiguous bundle on the same values.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from bench_attention import compile_programs, compiled_flex, prepare_parser, write_table  # noqa: E402

HQ, HKV, D, C = 40, 8, 128, 8192
NS = (32768, 100000, 131072)
BS = (1, 16, 64)
DTYPES = ("bfloat16", "float16")


PAGE = 16
ROWS_PAGED = [(1, 32768), (16, 32768), (16, 131072), (1, 100000)]


def visible(n: int) -> int:
    """The keys the token at position n - 1 sees: its chunk's, up to it."""
    return n - (n - 1) // C * C


def name(kind: str, dt: str, n: int) -> str:
    return f"{kind}_{dt}_n{n}"


def prepare(out: Path, attn_bundle: str) -> None:
    from attn_opt import ops
    progs = []
    for dt in DTYPES:
        for n in NS:
            progs.append((name("chunk", dt, n),
                          ops._decode_text(1, HQ, HKV, n, D, dt, 0, 0, False, False, None,
                                           False, 0.0, False, 0, C)))
            progs.append((name("full", dt, n),
                          ops._decode_text(1, HQ, HKV, n, D, dt, 0, 0, False, False, None,
                                           False, 0.0, False)))
        # Paged (vLLM's 16-key pages, bf16): the cache holds B * N / 16
        # pages, so a bundle per (B, N).
        if dt == "bfloat16":
            for b, n in ROWS_PAGED:
                progs.append((f"paged_b{b}_n{n}",
                              ops._decode_text(1, HQ, HKV, n, D, dt, PAGE, b * n // PAGE,
                                               False, False, None, False, 0.0, False, 0, C)))
        for nv in sorted({visible(n) for n in NS}):
            progs.append((name("slice", dt, nv),
                          ops._decode_text(1, HQ, HKV, nv, D, dt, 0, 0, False, False, None,
                                           False, 0.0, False)))
    compile_programs(out, attn_bundle, progs)


def main() -> None:
    a = prepare_parser(__doc__).parse_args()
    if a.prepare:
        prepare(Path(a.prepare), a.attn_bundle)
        return
    import gc
    import math

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask

    import attn_opt
    from bench_decode import timed
    flex = compiled_flex(torch)
    root = Path(a.dir)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    G = HQ // HKV

    def t(fn) -> float:
        return timed(torch, fn, flush, max(a.reps, 20))

    cols = ["dtype", "B", "N", "visible", "ours_us", "slice_us", "full_us", "flash_us",
            "cudnn_us", "flex_us", "ours_gbps", "slice/ours", "best_peer/ours",
            "full/ours", "rel_err"]
    lines = [",".join(cols)]
    print(lines[0], flush=True)
    for dt in DTYPES:
        for b in BS:
            for n in NS:
                if b * n > 16 * 131072:  # K/V of 17 GB and more: left out
                    continue
                gc.collect()
                torch.cuda.empty_cache()
                nv = visible(n)
                lo = n - nv
                g = torch.Generator(device="cuda").manual_seed(n + b)
                tdt = getattr(torch, dt)
                q = torch.randn(b, 1, HQ, D, device="cuda", dtype=tdt, generator=g)
                k, v = (torch.randn(b, n, HKV, D, device="cuda", dtype=tdt, generator=g)
                        for _ in range(2))
                q5 = q.view(b, 1, HKV, G, D)
                out = torch.empty_like(q5)
                ours = attn_opt.load(root / name("chunk", dt, n)).prepare(
                    q=q5, k=k, v=v, out=out)
                t_ours = t(ours)
                ks, vs = k[:, lo:].contiguous(), v[:, lo:].contiguous()
                t_slice = t(attn_opt.load(root / name("slice", dt, nv)).prepare(
                    q=q5, k=ks, v=vs))
                t_full = t(attn_opt.load(root / name("full", dt, n)).prepare(q=q5, k=k, v=v))
                del ks, vs
                # The peers' layout: [B, H, S, D].
                qh = q.transpose(1, 2).contiguous()
                kh, vh = (x[:, lo:].transpose(1, 2).contiguous() for x in (k, v))
                peer = {}
                for nm, be in (("flash", SDPBackend.FLASH_ATTENTION),
                               ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel([be]):
                            peer[nm] = t(lambda: F.scaled_dot_product_attention(
                                qh, kh, vh, enable_gqa=True))
                    except RuntimeError as e:
                        print(f"{nm}: {str(e).splitlines()[0]}", flush=True)
                        peer[nm] = float("nan")
                del kh, vh
                kf, vf = (x.transpose(1, 2) for x in (k, v))

                def chunk_mask(bb, h, qi, ki):
                    return (qi + (n - 1)) // C == ki // C
                try:
                    bm = create_block_mask(chunk_mask, None, None, 1, n)
                    peer["flex"] = t(lambda: flex(qh, kf, vf, block_mask=bm, enable_gqa=True))
                except Exception as e:  # noqa: BLE001 - a peer's failure is a row's note
                    print(f"flex: {str(e).splitlines()[0]}", flush=True)
                    peer["flex"] = float("nan")
                # fp32 reference over the visible keys.
                kr = k[:, lo:].float().repeat_interleave(G, 2)
                vr = v[:, lo:].float().repeat_interleave(G, 2)
                s = torch.einsum("bmhd,bnhd->bhmn", q.float(), kr) / math.sqrt(D)
                ref = torch.einsum("bhmn,bnhd->bmhd", s.softmax(-1), vr)
                o = out.view(b, 1, HQ, D).float()
                err = float((o - ref).norm() / ref.norm())
                assert not o.isnan().any()
                del kr, vr, s, ref
                best = min(x for x in peer.values() if x == x) if any(
                    x == x for x in peer.values()) else float("nan")
                gbps = 2 * b * HKV * nv * D * 2 / (t_ours * 1e-6) / 1e9
                row = [dt, str(b), str(n), str(nv), f"{t_ours:.1f}", f"{t_slice:.1f}",
                       f"{t_full:.1f}", f"{peer['flash']:.1f}", f"{peer['cudnn']:.1f}",
                       f"{peer['flex']:.1f}", f"{gbps:.0f}", f"{t_slice / t_ours:.3f}",
                       f"{best / t_ours:.3f}", f"{t_full / t_ours:.2f}", f"{err:.2e}"]
                lines.append(",".join(row))
                print(lines[-1], flush=True)
    write_table(a.out, "bench_chunked_decode.csv", lines)
    # Paged rows: the same cache through 16-key pages in a random order
    # (vLLM's layout [pages, 16, Hkv, D]) against the contiguous bundle.
    plines = ["B,N,visible,paged_us,contiguous_us,contiguous/paged,rel_diff"]
    print(plines[0], flush=True)
    for b, n in ROWS_PAGED:
        gc.collect()
        torch.cuda.empty_cache()
        g = torch.Generator(device="cuda").manual_seed(7 * n + b)
        q = torch.randn(b, 1, HQ, D, device="cuda", dtype=torch.bfloat16, generator=g)
        pages = b * n // PAGE
        kc, vc = (torch.randn(pages, PAGE, HKV, D, device="cuda", dtype=torch.bfloat16,
                              generator=g) for _ in range(2))
        table = torch.randperm(pages, device="cuda", generator=g).view(b, n // PAGE).int()
        k, v = (x[table.long()].reshape(b, n, HKV, D) for x in (kc, vc))
        q5 = q.view(b, 1, HKV, G, D)
        out_p, out_c = torch.empty_like(q5), torch.empty_like(q5)
        t_p = t(attn_opt.load(root / f"paged_b{b}_n{n}").prepare(
            q=q5, block_table=table, k=kc, v=vc, out=out_p))
        t_c = t(attn_opt.load(root / name("chunk", "bfloat16", n)).prepare(
            q=q5, k=k, v=v, out=out_c))
        diff = float((out_p.float() - out_c.float()).norm() / out_c.float().norm())
        plines.append(f"{b},{n},{visible(n)},{t_p:.1f},{t_c:.1f},{t_c / t_p:.3f},{diff:.1e}")
        print(plines[-1], flush=True)
        del kc, vc, k, v
    write_table(a.out, "bench_chunked_decode_paged.csv", plines)


if __name__ == "__main__":
    main()
