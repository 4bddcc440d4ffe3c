#!/usr/bin/env python3
"""The decode table: attn-opt's decode kernels (mma.sync, 16-row warps,
split-KV) against SDPA flash, SDPA cuDNN and FlexAttention, and against the
memory: a device-to-device copy of the same bytes, in the same run.

    python3 bench/make_bundles.py --decode --out bench/decode_bundles     # here
    python3 bench/bench_decode.py --bundles bench/decode_bundles --out OUT  # GPU

Rows (bench/make_bundles.py decode_configs): M = 1 and 16 new tokens per
sequence (M = 16: bottom-right causal, speculative decoding), B in {1, 16,
64}, N in {1k, 8k, 32k, 128k} cached keys, 32 query heads with 32 or 8 kv
heads (GQA), D = 128, fp16 (bf16 at B = 16, M = 1). K/V are read once per
call: bandwidth = (K + V bytes) / time. The copy row moves the same number
of bytes (dst.copy_(src) of a tensor as large as K + V) and its bandwidth
counts read and write (2 x bytes / time), the DRAM traffic of a copy.
Every timed launch follows an L2 flush (a 256 MB buffer written), so that
K/V come from HBM as in a model's layer loop even where they would fit the
50 MB L2; the flush is outside the timed interval (CUDA events around the
kernel only), median of the repeats.

Peers get q [B, 32, M, D], k/v [B, Hkv, N, D] (enable_gqa for Hkv = 8;
attn-opt's GQA layout [B, Hkv, G, M, D] is the same memory), is_causal
bottom-right for M = 16 only through FlexAttention's block mask (SDPA's
is_causal is top-left: for M = 16 the peers get an explicit bool mask of
the bottom-right causal pattern, which SDPA flash cannot take: that
backend is reported as n/a there). Each output is checked against the fp32
reference (torch, on the first and last sequence) before timing. FlexAttention compiles per
shape (10-40 s): --flex selects the rows (substring of the bundle name;
default rows with B = 16). FlashInfer (`BatchDecodeWithPagedKVCacheWrapper`,
its JIT kernels built on the device by its nvcc) where `import flashinfer`
works: the device image has none, so carry its source distribution
(`bash bench/flashinfer.sh fetch` here, `bash bench/flashinfer.sh install`
there); it gets the K/V values as its own 16-key pages in HND layout,
pages in order, on the rows without lengths: M = 1 through its decode
wrapper, M = 16 through its paged prefill wrapper with causal (which
FlashInfer aligns at the bottom right, as the M = 16 rows are).

Writes OUT/decode.csv and prints per row: us per call, GB/s, % of copy,
attn-opt / best peer.
"""
from __future__ import annotations

import argparse
import csv
import gc
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from attn_opt import bundle as B  # noqa: E402

TOL = 1e-2
COLUMNS = ["name", "variant", "dtype", "M", "B", "N", "Hkv", "kernel", "us", "gbps",
           "copy_gbps", "pct_copy", "vs_best_peer", "rel_err", "splits", "note"]
NAME = re.compile(r"dec_(\w+?)_m(\d+)_b(\d+)_n(\d+)_hkv(\d+)")


def start_results(torch: Any, out: str, name: str, columns: Sequence[str]) -> Any:
    """Prints the device line and opens OUT/NAME with its header: (file,
    csv writer)."""
    print(f"device: {torch.cuda.get_device_name()} | torch {torch.__version__} | "
          f"cuDNN {torch.backends.cudnn.version()}", flush=True)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    fh = open(out_dir / name, "w", newline="")
    w = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
    w.writeheader()
    return fh, w


def import_flashinfer(torch: Any) -> Any:
    """(flashinfer, a 256 MB workspace) where it imports, else (None, None)
    (bench/flashinfer.sh installs it on the device)."""
    try:
        # Its JIT builds for this card only (sm_90a on Hopper).
        cap = torch.cuda.get_device_capability()
        os.environ.setdefault("FLASHINFER_CUDA_ARCH_LIST",
                              f"{cap[0]}.{cap[1]}" + ("a" if cap[0] >= 9 else ""))
        import flashinfer
        print(f"FlashInfer {flashinfer.__version__}")
        return flashinfer, torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    except Exception as e:
        print(f"FlashInfer unavailable: {str(e).splitlines()[0][:100]}")
        return None, None


def timed(torch: Any, fn: Callable[[], Any], flush: Any, reps: int) -> float:
    """Median us of `fn` over `reps` launches, each after an L2 flush."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "decode_bundles"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--only", default="", help="comma-separated substrings of names")
    ap.add_argument("--flex", default="_b16_", help="rows FlexAttention runs on "
                    "(substring; '' none)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--deadline", type=float, default=0, help="seconds; 0: none")
    ap.add_argument("--no-peers", action="store_true", help="attn-opt and copy only")
    ap.add_argument("--flashinfer-page", type=int, default=16,
                    help="keys per FlashInfer page (its own copy of K/V)")
    a = ap.parse_args()
    t0 = time.time()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    flex = cbm = None
    if a.flex:
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            torch._dynamo.config.cache_size_limit = 256
            flex = torch.compile(flex_attention, dynamic=False)
            cbm = create_block_mask
        except Exception as e:  # pragma: no cover - depends on the torch build
            print(f"FlexAttention unavailable: {e}")
    fi, fi_ws = (None, None) if a.no_peers else import_flashinfer(torch)
    fh, w = start_results(torch, a.out, "decode.csv", COLUMNS)
    out_dir = Path(a.out)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    root = Path(a.bundles)
    dirs = sorted(p.parent for p in root.rglob("manifest.json"))
    if a.only:
        keys = [s for s in a.only.split(",") if s]
        dirs = [p for p in dirs if any(s in str(p.relative_to(root)) for s in keys)]
    failures = 0
    copy_cache: Dict[int, float] = {}
    for bdir in dirs:
        # Each row from a clean allocator (the previous row's tensors
        # dropped first): after the large rows, a paged row's caches placed
        # among freed blocks measured 1.19x its time alone (session 36).
        q = k = v = out = ref = launch = kernel = None  # noqa: F841
        qp = kp = vp = mask = lens = keep = table = None  # noqa: F841
        ours_args = {}
        gc.collect()
        torch.cuda.empty_cache()
        mt = NAME.fullmatch(bdir.name)
        if not mt:
            continue
        if a.deadline and time.time() - t0 > a.deadline:
            print(f"deadline: skipping {bdir} and later")
            break
        dtype, M, Bn, N, Hkv = mt.group(1), *(int(x) for x in mt.groups()[1:])
        variant = str(bdir.parent.relative_to(root)) if bdir.parent != root else ""
        Hq, D = 32, 128
        G = Hq // Hkv
        dt = getattr(torch, dtype)
        kv_bytes = 2 * Bn * Hkv * N * D * 2
        base = dict(name=bdir.name, variant=variant, dtype=dtype, M=M, B=Bn, N=N, Hkv=Hkv)
        print(f"== {variant + '/' if variant else ''}{bdir.name} "
              f"(K+V {kv_bytes / 2**20:.0f} MiB)", flush=True)
        # The copy of the same bytes (cached per size).
        if kv_bytes not in copy_cache:
            src = torch.empty(kv_bytes, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            us = timed(torch, lambda: dst.copy_(src), flush, a.reps)
            copy_cache[kv_bytes] = 2 * kv_bytes / (us * 1e-6) / 1e9
            del src, dst
        copy_gbps = copy_cache[kv_bytes]
        rows: List[Dict[str, Any]] = []

        def emit(kernel: str, us: Optional[float], err: Optional[float] = None,
                 note: str = "", splits: str = "") -> None:
            row = dict(base, kernel=kernel, note=note, splits=splits,
                       copy_gbps=f"{copy_gbps:.0f}")
            if us:
                gbps = kv_bytes / (us * 1e-6) / 1e9
                row.update(us=f"{us:.1f}", gbps=f"{gbps:.0f}",
                           pct_copy=f"{100 * gbps / copy_gbps:.1f}")
            if err is not None:
                row["rel_err"] = f"{err:.2e}"
            rows.append(row)

        try:
            kernel = B.load(bdir)
        except Exception as e:
            failures += 1
            emit("attn-opt", None, note=f"load: {e}"[:200])
            for r in rows:
                w.writerow(r)
            continue
        man = kernel.manifest
        gen = torch.Generator(device="cuda").manual_seed(5)
        q, k, v = (torch.randn(man.arg(n).shape, generator=gen, device="cuda", dtype=dt)
                   for n in ("q", "k", "v"))
        ours_args: Dict[str, Any] = dict(q=q, k=k, v=v)
        lens = None
        if variant in ("lens", "padmask"):
            # Per-sequence lengths, uniform in [1, N] (seeded): as int32
            # kv_lens (the loop ends there) or as a bool padding mask.
            lens = torch.randint(1, N + 1, (Bn,), generator=gen, device="cuda",
                                 dtype=torch.int32)
            keep = torch.arange(N, device="cuda")[None, :] < lens[:, None]
            if variant == "lens":
                ours_args["kv_lens"] = lens
            else:
                ours_args["mask"] = keep
        if man.attention.paged:
            # Caches [pages, page, Hkv, D], every page used once, in a random
            # order; the logical K/V [B, Hkv, N, D] for the reference and
            # the peers.
            P, pages = man.attention.paged
            table = torch.randperm(pages, generator=gen, device="cuda").reshape(Bn, N // P)
            ours_args = dict(q=q, block_table=table.to(torch.int32), k=k, v=v)
            k, v = (x[table].reshape(Bn, N, Hkv, D).transpose(1, 2).contiguous()
                    for x in (k, v))
        # fp32 reference on the first and last sequence ([Hq, M, E]): the
        # full batch in fp32 would not fit beside the largest rows.
        seqs = sorted({0, Bn - 1})

        def reference(b: int) -> Any:
            qb = q[b].reshape(Hq, M, D).float()
            kb = k[b].float().repeat_interleave(G, dim=0)
            vb = v[b].float().repeat_interleave(G, dim=0)
            s = qb @ kb.transpose(-1, -2) / math.sqrt(D)
            if M > 1:
                i = torch.arange(M, device="cuda")[:, None] + (N - M)
                s = s.masked_fill(torch.arange(N, device="cuda")[None, :] > i, -math.inf)
            if lens is not None:
                s[..., int(lens[b]):] = -math.inf
            return torch.softmax(s, dim=-1) @ vb
        ref = torch.stack([reference(b) for b in seqs])

        def check(o: Any) -> float:
            o = o.reshape(Bn, Hq, M, D)[seqs].float()
            if torch.isnan(o).any():
                return math.inf
            return float((o - ref).norm() / ref.norm())

        out = torch.empty(man.arg("out").shape, dtype=dt, device="cuda")
        launch = kernel.prepare(**ours_args, out=out)
        launch()
        torch.cuda.synchronize()
        err = check(out)
        ours = None
        if err <= TOL:
            ours = timed(torch, launch, flush, a.reps)
        else:
            failures += 1
        emit("attn-opt", ours, err, splits=str(man.splits),
             note=man.attention.kernel_choice[:120])
        peers: Dict[str, float] = {}
        # Paged rows compare with the contiguous row of the same shape (in
        # the table printed at the end), not with the peers again.
        if not a.no_peers and not man.attention.paged and variant != "padmask":
            qp = q.reshape(Bn, Hq, M, D)
            kp, vp = k.reshape(Bn, Hkv, N, D), v.reshape(Bn, Hkv, N, D)
            mask = None
            if lens is not None:  # key padding: [B, 1, 1, N]
                mask = (torch.arange(N, device="cuda")[None, :] < lens[:, None])[:, None, None]
            if M > 1:  # bottom-right causal
                i = torch.arange(M, device="cuda")[:, None] + (N - M)
                mask = torch.arange(N, device="cuda")[None, :] <= i
            for be_name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                                ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                def sdpa(be: Any = be) -> Any:
                    with sdpa_kernel([be]):
                        return F.scaled_dot_product_attention(
                            qp, kp, vp, attn_mask=mask, enable_gqa=Hkv != Hq)
                try:
                    e2 = check(sdpa().reshape(out.shape))
                    if e2 > TOL:
                        emit(be_name, None, e2, note="wrong result")
                        continue
                    peers[be_name] = timed(torch, sdpa, flush, a.reps)
                    emit(be_name, peers[be_name], e2)
                except Exception as e:
                    emit(be_name, None, note=f"n/a: {str(e).splitlines()[0][:100]}")
            P = a.flashinfer_page
            if fi is not None and lens is None and N % P == 0:
                try:
                    # Its own paged copy: [pages, Hkv, P, D] (HND), pages in order.
                    kc, vc = (x.reshape(Bn, Hkv, N // P, P, D).permute(0, 2, 1, 3, 4)
                              .reshape(-1, Hkv, P, D).contiguous() for x in (kp, vp))
                    i32 = dict(device="cuda", dtype=torch.int32)
                    pages = (torch.arange(Bn + 1, **i32) * (N // P),
                             torch.arange(Bn * N // P, **i32), torch.full((Bn,), P, **i32))
                    if M == 1:
                        wrap = fi.BatchDecodeWithPagedKVCacheWrapper(fi_ws, "HND")
                        wrap.plan(*pages, Hq, Hkv, D, P, pos_encoding_mode="NONE",
                                  q_data_type=dt, kv_data_type=dt)
                        qf = qp.reshape(Bn, Hq, D)
                        back = lambda o: o  # noqa: E731
                        how = "decode wrapper"
                    else:
                        # M tokens per sequence: its prefill wrapper, whose
                        # causal mask is aligned at the bottom right.
                        wrap = fi.BatchPrefillWithPagedKVCacheWrapper(fi_ws, "HND")
                        wrap.plan(torch.arange(Bn + 1, **i32) * M, *pages, Hq, Hkv, D, P,
                                  causal=True, q_data_type=dt, kv_data_type=dt)
                        qf = qp.transpose(1, 2).reshape(Bn * M, Hq, D).contiguous()
                        back = lambda o: o.reshape(Bn, M, Hq, D).transpose(1, 2)  # noqa: E731
                        how = "prefill wrapper, causal"
                    fx = lambda: wrap.run(qf, (kc, vc))  # noqa: E731
                    e4 = check(back(fx()).reshape(out.shape))
                    if e4 <= TOL:
                        peers["flashinfer"] = timed(torch, fx, flush, a.reps)
                        emit("flashinfer", peers["flashinfer"], e4,
                             note=f"{how}, {P}-key pages, HND")
                    else:
                        emit("flashinfer", None, e4, note="wrong result")
                    del kc, vc
                except Exception as e:
                    emit("flashinfer", None, note=f"n/a: {str(e).splitlines()[0][:100]}")
            if flex is not None and a.flex in bdir.name and lens is None:
                try:
                    bm = None
                    if M > 1:
                        off = N - M

                        def br_causal(b, h, qi, ki, off=off):  # noqa: E306
                            return ki <= qi + off
                        bm = cbm(br_causal, None, None, M, N, device="cuda")
                    fx = lambda: flex(qp, kp, vp, block_mask=bm,  # noqa: E731
                                      enable_gqa=Hkv != Hq)
                    e3 = check(fx().reshape(out.shape))
                    if e3 <= TOL:
                        peers["flex"] = timed(torch, fx, flush, a.reps)
                        emit("flex", peers["flex"], e3)
                    else:
                        emit("flex", None, e3, note="wrong result")
                except Exception as e:
                    emit("flex", None, note=f"n/a: {str(e).splitlines()[0][:100]}")
        best = min(peers.values()) if peers else None
        for r in rows:
            if r["kernel"] == "attn-opt" and best and ours:
                r["vs_best_peer"] = f"{best / ours:.2f}"
            w.writerow(r)
            print("  " + " ".join(f"{k}={r[k]}" for k in
                                  ("kernel", "us", "gbps", "pct_copy", "vs_best_peer",
                                   "rel_err", "splits") if r.get(k)), flush=True)
        fh.flush()
        del kernel, q, k, v, ref, out
        torch.cuda.empty_cache()
    fh.close()
    rows = list(csv.DictReader(open(out_dir / "decode.csv")))
    dense = {r["name"]: r for r in rows if r["kernel"] == "attn-opt" and not r["variant"]}
    pad = {r["name"]: r for r in rows if r["kernel"] == "attn-opt" and r["variant"] == "padmask"}
    for r in rows:
        if r["variant"] == "lens" and r["kernel"] == "attn-opt" and r["us"]:
            for other, label in ((pad.get(r["name"]), "padding mask"),
                                 (dense.get(r["name"]), "full length")):
                if other and other["us"]:
                    print(f"lens/{r['name']}: {r['us']} us against the {label} "
                          f"{other['us']} us: {float(r['us']) / float(other['us']):.3f}x")
        if r["variant"].startswith("paged") and r["kernel"] == "attn-opt" and r["us"]:
            d = dense.get(r["name"])
            if d and d["us"]:
                print(f"{r['variant']}/{r['name']}: {r['us']} us against contiguous "
                      f"{d['us']} us: {float(r['us']) / float(d['us']):.3f}x")
    print(f"wrote {out_dir / 'decode.csv'}; failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
