#!/usr/bin/env python3
"""Launch-shape sweep for attn-opt's tensor-core kernel (on the GPU machine).

    python3 bench/make_bundles.py --tune --out bench/tune     # here (MLIR)
    python3 bench/tune.py bench/tune [--csv OUT/tune.csv]      # on the device

ROOT/VARIANT/CONFIG/ holds one bundle per launch shape (VARIANT names the
attn-bundle flags, e.g. q128_kv64_w4_s2) and benchmark config. Per config:
one input set and fp32 reference, SDPA flash timed once as the yardstick;
then every variant runs into a NaN-poisoned output, is checked (rel err <=
1e-2, no NaN) and timed like bench_attention.py. Prints TFLOP/s per config x
variant and, per variant, the geometric mean of its ratio to flash: the
numbers that pick the defaults of `--attn-gpu-pipeline`. A tuning aid, not
the benchmark (bench_attention.py times all peers).
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import zlib
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

import bench_attention as BA  # noqa: E402
from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--csv", default="")
    ap.add_argument("--target-ms", type=float, default=60.0)
    ap.add_argument("--ref-flops", type=float, default=2e10)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    root = Path(a.root)
    variants = sorted(p.name for p in root.iterdir() if p.is_dir())
    configs = sorted({c.name for v in variants for c in (root / v).iterdir() if c.is_dir()})
    ops = R.TorchOps("cuda")
    rows_out: List[Dict[str, str]] = []
    ratios: Dict[str, List[float]] = {v: [] for v in variants}
    failures = 0
    for name in configs:
        first = next(root / v / name for v in variants if (root / v / name).is_dir())
        man = B.read_manifest(first)
        key = BA.bundle_key(man)
        if key is None:
            continue
        dtype, d, n, bh, causal = key
        flops = 4.0 * bh * n * n * d / (2 if causal else 1)
        seed = zlib.crc32(name.encode()) % 100000
        inputs = R.make_inputs(man, ops, seed)
        rows = R.rows_for_budget(man, a.ref_flops, seed)
        ref = R.reference(man, inputs, ops, rows=rows)
        q, k, v = (R.canonical(ops, man, x, inputs[x]).contiguous() for x in ("q", "k", "v"))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            fl_ms, _ = BA.time_kernel(torch, lambda: F.scaled_dot_product_attention(
                q, k, v, is_causal=causal, scale=man.attention.scale), a.target_ms, 1000.0)
        flash = flops / fl_ms / 1e9
        print(f"{name}: sdpa-flash {flash:.1f} TFLOP/s", flush=True)
        for var in variants:
            d_ = root / var / name
            if not d_.is_dir():
                continue
            kern = B.load(d_)
            out = kern.empty_out()
            launch = kern.prepare(*[inputs[x] for x in kern.manifest.inputs], out=out)
            out.fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            nan = int(torch.isnan(out).sum().item())
            got = R.canonical(ops, man, "out", out)
            if rows is not None:
                got = ops.take(got, ops.index(rows), -2)
            rel = R.rel_error(ops, got, ref)
            status, tf = "ok", 0.0
            if nan or not rel <= BA.TOL:
                status = "FAIL"
                failures += 1
            else:
                ms, _ = BA.time_kernel(torch, lambda: launch(), a.target_ms, 1000.0)
                tf = flops / ms / 1e9
                ratios[var].append(tf / flash)
            kern.close()
            print(f"  {var:24} {status:4} {tf:7.1f} TFLOP/s  x{tf / flash:.3f} flash  "
                  f"rel={rel:.2e} nan={nan}", flush=True)
            rows_out.append(dict(config=name, variant=var, status=status, tflops=f"{tf:.2f}",
                                 flash=f"{flash:.2f}", rel_err=f"{rel:.3e}", nan=str(nan)))
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows_out[0]))
            w.writeheader()
            w.writerows(rows_out)
    print("\nvariant                   geomean x flash  (configs)")
    for var in variants:
        r = ratios[var]
        if r:
            g = math.exp(sum(map(math.log, r)) / len(r))
            print(f"{var:24}  {g:.3f}  ({len(r)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
