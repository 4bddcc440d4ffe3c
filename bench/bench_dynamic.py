#!/usr/bin/env python3
"""Dynamic against static bundles: one dynamic-shape bundle per (dtype, D,
causal) -- B, M and N are kernel parameters -- timed at several lengths
beside the static bundle compiled for each length, and the peers (SDPA
flash and cuDNN), in one run.

    python3 bench/make_bundles.py --dynamic --out bench/dynamic_bundles   # here
    python3 bench/bench_dynamic.py --bundles bench/dynamic_bundles --out OUT  # GPU

Rows (bench/make_bundles.py dynamic_configs, DYNAMIC_NS): fp16, [B, H, N, D]
with 16k tokens per batch and model dim 2048, D in {64, 128}, causal and
full, N in {1024, 3000, 4096, 16384}. Each output is checked against an
fp32 reference on one (batch, head) slice before timing. Time: median of
--reps CUDA-event-timed launches after a warm-up (no L2 flush:
compute-bound); the static and dynamic kernels take turns for --rounds
rounds and report the median of their round medians (drift between rows
and rounds on this device is several percent).
`dyn_vs_static` is the static kernel's time over the dynamic one's (1.0:
equal; the issue asks for within 3%).

Decode rows (DYNAMIC_DECODE): M = 1, 32 query heads over 32 or 8 kv heads,
D = 128, fp16, (B, N) in {(1, 32k), (16, 8k), (64, 4k)}: the dynamic decode
bundle (B and N dynamic; split count chosen at launch) against the static
decode bundle of each shape and SDPA flash/cuDNN, each launch after a
256 MB L2 flush (bench_decode's timer); `gbps` is K/V bytes over time.
Serving rows (serve_paged_lens_*) at the same shapes: paged K/V (64-key
pages of one 4096-page cache) with kv_lens, the bundle with a dynamic
batch against the static bundle of each B. Speculative rows (spec_m16_*):
16 new tokens per sequence, bottom-right causal, 8 kv heads, the bundle
with a dynamic batch (launch variants) against the static one. D = 256
decode rows (decode_m1_hkv8_d256, Gemma's head dim) at the same shapes.

Writes OUT/dynamic.csv and prints one line per row.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from attn_opt import bundle as B  # noqa: E402
from bench_decode import start_results, timed  # noqa: E402
from make_bundles import DYNAMIC_DECODE, DYNAMIC_NS, SERVE_PAGES  # noqa: E402

TOL = 1e-2
COLUMNS = ["config", "n", "b", "kernel", "us", "tflops", "dyn_vs_static",
           "vs_best_peer", "rel_err", "gbps", "note"]
NAME = re.compile(r"dyn_(\w+?)_d(\d+)_h(\d+)_(causal|full)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "dynamic_bundles"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    fh, w = start_results(torch, a.out, "dynamic.csv", COLUMNS)
    out_dir = Path(a.out)
    root = Path(a.bundles)
    no_flush = torch.empty(1, dtype=torch.uint8, device="cuda")
    failures = 0
    for ddir in sorted(root.glob("dyn_*")):
        mt = NAME.fullmatch(ddir.name)
        if not mt:
            continue
        dtype, D, H, causal = mt.group(1), int(mt.group(2)), int(mt.group(3)), \
            mt.group(4) == "causal"
        tag = "causal" if causal else "full"
        dt = getattr(torch, dtype)
        dyn = B.load(ddir)
        for n in DYNAMIC_NS:
            b = 16384 // n
            sdir = root / f"st_{dtype}_d{D}_n{n}_b{b}_h{H}_{tag}"
            static = B.load(sdir)
            gen = torch.Generator(device="cuda").manual_seed(n)
            q, k, v = (torch.randn((b, H, n, D), generator=gen, device="cuda", dtype=dt)
                       for _ in range(3))
            flops = 4 * b * H * n * n * D // (2 if causal else 1)
            s = q[0, 0].float() @ k[0, 0].float().T / math.sqrt(D)
            if causal:
                s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1),
                               -math.inf)
            ref = torch.softmax(s, -1) @ v[0, 0].float()
            del s

            def check(o: Any) -> float:
                got = o[0, 0].float()
                if torch.isnan(o).any():
                    return math.inf
                return float((got - ref).norm() / ref.norm())

            times: Dict[str, float] = {}
            rows = []

            def run(name: str, fn: Callable[[], Any], result: Callable[[], Any],
                    note: str = "") -> None:
                row: Dict[str, Any] = dict(config=f"{dtype}_d{D}_h{H}_{tag}", n=n, b=b,
                                           kernel=name, note=note)
                try:
                    fn()
                    torch.cuda.synchronize()
                    err = check(result())
                    row["rel_err"] = f"{err:.2e}"
                    if err > TOL:
                        row["note"] = "wrong result"
                    else:
                        times[name] = timed(torch, fn, no_flush, a.reps)
                        row["us"] = f"{times[name]:.1f}"
                        row["tflops"] = f"{flops / (times[name] * 1e-6) / 1e12:.0f}"
                except Exception as e:
                    row["note"] = f"n/a: {str(e).splitlines()[0][:100]}"
                rows.append(row)

            ours = {}
            for name, kern in (("attn-opt-static", static), ("attn-opt-dynamic", dyn)):
                out = torch.full_like(q, float("nan"))
                ours[name] = kern.prepare(q, k, v, out=out)
                run(name, ours[name], lambda out=out: out,
                    kern.manifest.attention.kernel_choice[:110])
            # Alternate the two for the remaining rounds.
            rounds = {x: [times[x]] for x in ours if x in times}
            for _ in range(a.rounds - 1):
                for x in rounds:
                    rounds[x].append(timed(torch, ours[x], no_flush, a.reps))
            for x, ts in rounds.items():
                times[x] = statistics.median(ts)
                for row in rows:
                    if row["kernel"] == x:
                        row["us"] = f"{times[x]:.1f}"
                        row["tflops"] = f"{flops / (times[x] * 1e-6) / 1e12:.0f}"
            for be_name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                                ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                res: Dict[str, Any] = {}

                def sdpa(be: Any = be, res: Dict[str, Any] = res) -> Any:
                    with sdpa_kernel([be]):
                        res["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    return res["o"]
                run(be_name, sdpa, lambda res=res: res["o"])
            failures += finish_rows(rows, times, w, fh)
            static.close()
            del q, k, v, ref
        dyn.close()
    failures += decode_rows(a, torch, F, SDPBackend, sdpa_kernel, root, w, fh)
    fh.close()
    print(f"wrote {out_dir / 'dynamic.csv'}; {failures} row(s) without both kernels")
    return 1 if failures else 0


def finish_rows(rows: list, times: Dict[str, float], w: Any, fh: Any) -> int:
    """Ratios (static / dynamic time, best peer / ours) into the rows,
    written and printed; 1 when either attn-opt kernel has no time."""
    peers = [times[x] for x in ("sdpa-flash", "sdpa-cudnn") if x in times]
    best: Optional[float] = min(peers) if peers else None
    for row in rows:
        t = times.get(row["kernel"])
        if t and row["kernel"].startswith("attn-opt"):
            if best:
                row["vs_best_peer"] = f"{best / t:.2f}"
            if "attn-opt-static" in times:
                row["dyn_vs_static"] = f"{times['attn-opt-static'] / t:.3f}"
        w.writerow(row)
        print(" | ".join(f"{row.get(c, '')}" for c in COLUMNS[:10]), flush=True)
    fh.flush()
    return int("attn-opt-dynamic" not in times or "attn-opt-static" not in times)


def decode_rows(a: Any, torch: Any, F: Any, SDPBackend: Any, sdpa_kernel: Any,
                root: Path, w: Any, fh: Any) -> int:
    failures = 0
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for hkv, D in ((32, 128), (8, 128), (8, 256)):
        sfx = "" if D == 128 else f"_d{D}"
        ddir = root / f"decdyn_float16_m1_hkv{hkv}{sfx}"
        if not ddir.is_dir():
            continue
        dyn = B.load(ddir)
        hq, g = 32, 32 // hkv
        for b, n in DYNAMIC_DECODE:
            static = B.load(root / f"decst_float16_m1_b{b}_n{n}_hkv{hkv}{sfx}")
            gen = torch.Generator(device="cuda").manual_seed(n + b)
            q = torch.randn(b, hkv, g, 1, D, generator=gen, device="cuda",
                            dtype=torch.float16)
            k, v = (torch.randn(b, hkv, n, D, generator=gen, device="cuda",
                                dtype=torch.float16) for _ in range(2))
            kv_bytes = 2 * k.numel() * 2
            ref = torch.softmax(q[0].float() @ k[0, :, None].float().transpose(-1, -2)
                                / math.sqrt(D), -1) @ v[0, :, None].float()
            times: Dict[str, float] = {}
            rows = []

            def run(name: str, fn: Callable[[], Any], result: Callable[[], Any],
                    note: str = "") -> None:
                rows.append(check_and_time(
                    a, torch, flush, dict(config=f"decode_m1_hkv{hkv}{sfx}", n=n, b=b,
                                          kernel=name, note=note),
                    fn, result, ref, kv_bytes, times))

            for name, kern in (("attn-opt-static", static), ("attn-opt-dynamic", dyn)):
                out = torch.full_like(q, float("nan"))
                run(name, kern.prepare(q, k, v, out=out), lambda out=out: out,
                    kern.manifest.attention.kernel_choice[:110])
            # The peers on [B, Hq, 1, D] against [B, Hkv, N, D] (GQA).
            qp = q.reshape(b, hq, 1, D)
            for be_name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                                ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                res: Dict[str, Any] = {}

                def sdpa(be: Any = be, res: Dict[str, Any] = res) -> Any:
                    with sdpa_kernel([be]):
                        res["o"] = F.scaled_dot_product_attention(
                            qp, k, v, enable_gqa=hkv != hq)
                    return res["o"]
                run(be_name, sdpa, lambda res=res: res["o"].reshape(b, hkv, g, 1, D))
            failures += finish_rows(rows, times, w, fh)
            static.close()
            if D != 128:
                continue
            failures += serve_rows(a, torch, root, w, fh, flush, hkv, b, n)
            if hkv == 8:
                failures += spec_rows(a, torch, root, w, fh, flush, b, n)
        dyn.close()
    return failures


def serve_rows(a: Any, torch: Any, root: Path, w: Any, fh: Any, flush: Any,
               hkv: int, b: int, n: int) -> int:
    """Serving decode at (B, N): paged K/V (64-key pages of one cache of
    SERVE_PAGES) with kv_lens (every sequence full), the bundle with a
    dynamic batch against the static one of this B."""
    pdyn = root / f"decpdyn_float16_m1_b{b}_n{n}_hkv{hkv}"
    pst = root / f"decpst_float16_m1_b{b}_n{n}_hkv{hkv}"
    if not (pdyn.is_dir() and pst.is_dir()):
        return 0
    D, g, P = 128, 32 // hkv, 64
    gen = torch.Generator(device="cuda").manual_seed(7 * n + b)
    q = torch.randn(b, hkv, g, 1, D, generator=gen, device="cuda", dtype=torch.float16)
    kc, vc = (torch.randn(SERVE_PAGES, P, hkv, D, generator=gen, device="cuda",
                          dtype=torch.float16) for _ in range(2))
    table = torch.randperm(SERVE_PAGES, generator=gen, device="cuda")[:b * n // P]
    table = table.reshape(b, n // P).to(torch.int32)
    lens = torch.full((b,), n, dtype=torch.int32, device="cuda")
    k0, v0 = (x[table[0].long()].reshape(n, hkv, D).transpose(0, 1).float()
              for x in (kc, vc))
    ref = torch.softmax(q[0].float() @ k0[:, None].transpose(-1, -2) / math.sqrt(D),
                        -1) @ v0[:, None]
    kv_bytes = 2 * b * n * hkv * D * 2
    times: Dict[str, float] = {}
    rows = []
    for name, path in (("attn-opt-static", pst), ("attn-opt-dynamic", pdyn)):
        kern = B.load(path)
        out = torch.full_like(q, float("nan"))
        row: Dict[str, Any] = dict(config=f"serve_paged_lens_m1_hkv{hkv}", n=n, b=b,
                                   kernel=name,
                                   note=kern.manifest.attention.kernel_choice[:110])
        try:
            launch = kern.prepare(q=q, k=kc, v=vc, kv_lens=lens, block_table=table,
                                  out=out)
        except Exception as e:
            row["note"] = f"n/a: {str(e).splitlines()[0][:100]}"
            rows.append(row)
            kern.close()
            continue
        rows.append(check_and_time(a, torch, flush, row, launch, lambda: out, ref,
                                   kv_bytes, times))
        kern.close()
    return finish_rows(rows, times, w, fh)


def spec_rows(a: Any, torch: Any, root: Path, w: Any, fh: Any, flush: Any,
              b: int, n: int) -> int:
    """Speculative decode at (B, N): 16 new tokens per sequence
    (bottom-right causal), 32 query heads over 8 kv heads (64 packed rows),
    the bundle with a dynamic batch (its launch variants: log steps 208,
    209) against the static one of this B."""
    pdyn = root / f"decsdyn_float16_m16_n{n}_hkv8"
    pst = root / f"decsst_float16_m16_b{b}_n{n}_hkv8"
    if not (pdyn.is_dir() and pst.is_dir()):
        return 0
    D, g, M, hkv = 128, 4, 16, 8
    gen = torch.Generator(device="cuda").manual_seed(11 * n + b)
    q = torch.randn(b, hkv, g, M, D, generator=gen, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(b, hkv, n, D, generator=gen, device="cuda", dtype=torch.float16)
            for _ in range(2))
    s = q[0].float() @ k[0, :, None].float().transpose(-1, -2) / math.sqrt(D)
    keep = (torch.arange(n, device="cuda")[None, :] <=
            torch.arange(M, device="cuda")[:, None] + (n - M))
    ref = torch.softmax(s.masked_fill(~keep, float("-inf")), -1) @ v[0, :, None].float()
    kv_bytes = 2 * k.numel() * 2
    times: Dict[str, float] = {}
    rows = []
    for name, path in (("attn-opt-static", pst), ("attn-opt-dynamic", pdyn)):
        kern = B.load(path)
        out = torch.full_like(q, float("nan"))
        chosen = kern.variant_for({"b0": b}) if kern.manifest.variants else None
        row: Dict[str, Any] = dict(config="spec_m16_hkv8", n=n, b=b, kernel=name,
                                   note=(f"variant {chosen.bundle.dir.name}: " if chosen else "")
                                   + (chosen or kern).manifest.attention.kernel_choice[:110])
        rows.append(check_and_time(a, torch, flush, row,
                                   kern.prepare(q=q, k=k, v=v, out=out), lambda: out, ref,
                                   kv_bytes, times))
        kern.close()
    return finish_rows(rows, times, w, fh)


def check_and_time(a: Any, torch: Any, flush: Any, row: Dict[str, Any],
                   fn: Callable[[], Any], result: Callable[[], Any], ref: Any,
                   kv_bytes: int, times: Dict[str, float]) -> Dict[str, Any]:
    """Runs `fn` once, checks result()[0] against `ref`, then times it (each
    launch after an L2 flush, --rounds medians of --reps) into
    times[row["kernel"]]; returns `row` with rel_err, us, gbps or why not."""
    try:
        fn()
        torch.cuda.synchronize()
        o = result()
        err = (math.inf if torch.isnan(o).any() else
               float((o[0].float() - ref).norm() / ref.norm()))
        row["rel_err"] = f"{err:.2e}"
        if err > TOL:
            row["note"] = "wrong result"
        else:
            t = statistics.median(timed(torch, fn, flush, a.reps) for _ in range(a.rounds))
            times[row["kernel"]] = t
            row["us"] = f"{t:.1f}"
            row["gbps"] = f"{kv_bytes / (t * 1e-6) / 1e9:.0f}"
    except Exception as e:
        row["note"] = f"n/a: {str(e).splitlines()[0][:100]}"
    return row


if __name__ == "__main__":
    sys.exit(main())
