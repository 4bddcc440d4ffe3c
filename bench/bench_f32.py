#!/usr/bin/env python3
"""The f32 table: f32 attention on tensor cores (mma.sync m16n8k8 on TF32
values) against Triton's TF32 kernel and SDPA's f32 backend, same inputs,
one run.

    python3 bench/make_bundles.py --f32 --out bench/f32_bundles      # here
    python3 bench/bench_f32.py --bundles bench/f32_bundles --out OUT  # GPU

Bundles (bench/make_bundles.py F32_VARIANTS): 3xTF32 (each product as three
TF32 products of split halves: f32-accurate, attn-opt's default) and TF32
(one product: 10-bit mantissas, what Triton's and cuBLAS's TF32 compute),
D in {64, 128}, N in {1024, 4096, 16384} at 16k tokens, H = 2048 / D,
causal and not; launch-shape variants at N = 4096; the SIMT kernel
(f32-precision=ieee) at N = 1024. Peers per (D, N, causal): Triton
(bench/triton_attention.py, f32 inputs, tl.dot in TF32, best of its
variants) and SDPA's memory-efficient backend (the one that takes f32).
Every output is checked against the fp32 reference computed with full-f32
matmuls (torch's "highest" precision; sampled rows): relative error and
NaN count are reported; the tolerance is 1e-5 for 3xTF32, SIMT and SDPA,
2e-3 for TF32 kernels (Triton included). Writes OUT/f32.csv and prints
TFLOP/s with each bundle's ratio to the best Triton variant.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402
from bench_attention import run_once, time_kernel  # noqa: E402
from bench_decode import start_results  # noqa: E402

COLUMNS = ["name", "variant", "D", "N", "B", "H", "causal", "kernel", "status", "ms",
           "tflops", "vs_triton", "rel_err", "nan", "note"]
NAME = re.compile(r"f32_(?P<var>\w+?)_d(?P<D>\d+)_n(?P<N>\d+)_b(?P<B>\d+)_h(?P<H>\d+)_"
                  r"(?P<tag>causal|full)$")


def tol_for(kernel: str, precision: Optional[str]) -> float:
    if kernel == "triton" or precision == "tf32":
        return 2e-3
    return 1e-5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "f32_bundles"))
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--only", default="", help="comma-separated substrings of bundle names")
    ap.add_argument("--target-ms", type=float, default=40.0)
    ap.add_argument("--ref-flops", type=float, default=5e9)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import triton_attention as TA
    # The reference's matmuls in full f32 (not TF32).
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    fh, w = start_results(torch, a.out, "f32.csv", COLUMNS)
    ops = R.TorchOps("cuda")
    dirs = sorted(p for p in Path(a.bundles).iterdir() if (p / "manifest.json").exists())
    if a.only:
        keys = [s for s in a.only.split(",") if s]
        dirs = [p for p in dirs if any(s in p.name for s in keys)]
    groups: Dict[Tuple[int, int, bool], list] = {}
    for p in dirs:
        m = NAME.match(p.name)
        if m:
            key = (int(m["D"]), int(m["N"]), m["tag"] == "causal")
            groups.setdefault(key, []).append((m["var"], p))
    failures = 0
    for (D, N, causal), members in sorted(groups.items()):
        Bn, H = 16384 // N, 2048 // D
        flops = 4 * Bn * H * N * N * D / (2 if causal else 1)
        print(f"== D={D} N={N} B={Bn} H={H} {'causal' if causal else 'full'}", flush=True)
        g = torch.Generator(device="cuda").manual_seed(4321 + N + D)
        q, k, v = (torch.randn(Bn, H, N, D, generator=g, device="cuda") for _ in range(3))
        scale = 1.0 / math.sqrt(D)
        man0 = B.read_manifest(members[0][1])
        rows = R.rows_for_budget(man0, a.ref_flops, 0)
        ref = R.reference(man0, {"q": q, "k": k, "v": v}, ops, rows=rows)
        triton_ms = None

        def measure(kernel: str, variant: str, fn: Callable[[], Any],
                    precision: Optional[str], note: str = "") -> Optional[float]:
            nonlocal failures
            row: Dict[str, Any] = dict(name=f"d{D}_n{N}_{'causal' if causal else 'full'}",
                                       variant=variant, D=D, N=N, B=Bn, H=H, causal=causal,
                                       kernel=kernel, note=note)
            try:
                o, _ = run_once(torch, fn)
                nan = int(torch.isnan(o).sum().item())
                got = ops.take(o, ops.index(rows), -2) if rows is not None else o
                rel = R.rel_error(ops, got, ref)
            except Exception as e:  # out of shared memory, launch errors
                row.update(status="error", note=f"{type(e).__name__}: {e}"[:200])
                w.writerow(row)
                print(f"  {kernel:10} {variant:12} error {row['note']}", flush=True)
                return None
            tol = tol_for(kernel, precision)
            row.update(rel_err=f"{rel:.2e}", nan=nan)
            if nan or not rel <= tol:
                row.update(status="FAIL")
                if kernel == "attn-opt":
                    failures += 1
                w.writerow(row)
                print(f"  {kernel:10} {variant:12} FAIL rel={rel:.2e} nan={nan}", flush=True)
                return None
            ms, _ = time_kernel(torch, fn, a.target_ms, 2000.0, min_reps=3, max_reps=100)
            tf = flops / (ms * 1e-3) / 1e12
            row.update(status="ok", ms=f"{ms:.4f}", tflops=f"{tf:.1f}")
            if triton_ms and kernel == "attn-opt":
                row["vs_triton"] = f"{triton_ms / ms:.2f}"
            w.writerow(row)
            fh.flush()
            print(f"  {kernel:10} {variant:12} {tf:7.1f} TFLOP/s rel={rel:.2e} "
                  f"{row.get('vs_triton', '')} {note}", flush=True)
            return ms

        # Peers first, so that each bundle's row carries its ratio.
        o = torch.empty_like(q)
        best: Optional[Tuple[float, str, Callable[[], Any]]] = None
        for bm, bn, warps in TA.variants(quick=True):
            if N % bm or N % bn:
                continue
            for stages in (2, 3):
                def fn(bm: int = bm, bn: int = bn, warps: int = warps,
                       stages: int = stages) -> Any:
                    return TA.attention(q, k, v, causal, scale, bm, bn, warps, stages, out=o)
                var = f"BM{bm}BN{bn}w{warps}s{stages}"
                ms = measure("triton", var, fn, "tf32")
                if ms is not None and (best is None or ms < best[0]):
                    best = (ms, var, fn)
        triton_ms = best[0] if best else None
        if best:
            print(f"  best triton: {best[1]}", flush=True)

        def sdpa() -> Any:
            with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
        measure("sdpa-eff", "f32", sdpa, None)
        for var, path in sorted(members):
            kernel = B.load(path)
            man = kernel.manifest
            out = kernel.empty_out()
            out.fill_(float("nan"))
            launch = kernel.prepare(q, k, v, out=out)

            def attn() -> Any:
                launch()
                return out
            measure("attn-opt", var, attn, man.attention.f32_precision,
                    note=man.attention.kernel_choice[:70])
            kernel.close()
        del q, k, v, ref, o
        torch.cuda.empty_cache()
    fh.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
