#!/usr/bin/env python3
"""attn-opt bundles against SDPA cuDNN at Nsight Compute's locked clocks:
one launch of each per bundle, timed by `ncu` (which locks the SM clock
to base, about 1.4 GHz on the H100), so the ratio is each kernel's speed
per clock, free of the power and boost state that the timed benchmark's
kernels leave each other (log step 165 in docs/performance.md). ncu also
flushes the caches before each profiled launch (its default), so both
kernels start from a cold L2, as they rarely do in the timed table.

    python3 bench/locked_clocks.py --bundles bench/bundles --only _n512_,_n1024_ --out OUT   # GPU

Both kernels run twice untimed, then once inside the NVTX range "m", which
is all `ncu --nvtx --nvtx-include m/` profiles. Inputs as
bench_attention.py's (attn_opt.reference.make_inputs, seed 0); cuDNN gets
contiguous [B, H, N, D] copies. Writes OUT/locked.txt (ncu's report) and
OUT/locked.csv, and prints a row per bundle with cuDNN's time over ours
(> 1: attn-opt faster).

--pair A:B times two of attn-opt's own bundles instead: each bundle whose
name ends in A against the one that ends in B instead of A (the forms
table's ratios: `--pair _alibi:_causal`, `_bias:_plain`), on the same
inputs where their arguments agree; the ratio printed is B's time over
A's (A ÷ its baseline in speed).
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))


def bundles(root: Path, only: str):
    keys = [s for s in only.split(",") if s]
    return [b for b in sorted(root.iterdir())
            if (b / "manifest.json").exists() and (not keys or any(k in b.name for k in keys))]


def profiled(torch, fns) -> None:
    """Each launch twice untimed, then once inside the NVTX range "m" (all
    that ncu --nvtx-include m/ profiles), in order."""
    for fn in fns:
        fn()
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("m")
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def pairs(root: Path, only: str, pair: str):
    a, b = pair.split(":")
    return [(x, x.with_name(x.name[: -len(a)] + b)) for x in bundles(root, only)
            if x.name.endswith(a) and (x.with_name(x.name[: -len(a)] + b) / "manifest.json").exists()]


def child_pairs(root: Path, only: str, pair: str) -> int:
    import torch
    from attn_opt import bundle as B
    from attn_opt import reference as R
    ops = R.TorchOps("cuda")
    for pa, pb in pairs(root, only, pair):
        ka, kb = B.load(pa), B.load(pb)
        ins_a = R.make_inputs(ka.manifest, ops, 0)
        ins_b = R.make_inputs(kb.manifest, ops, 0)
        # B takes A's tensors where names and shapes agree (q, k, v).
        for n in kb.manifest.inputs:
            if n in ins_a and tuple(ins_a[n].shape) == tuple(ins_b[n].shape):
                ins_b[n] = ins_a[n]
        fns = [k.prepare(**{n: ins[n] for n in k.manifest.inputs}, out=k.empty_out())
               for k, ins in ((ka, ins_a), (kb, ins_b))]
        profiled(torch, fns)
        print("BUNDLE", pa.name, flush=True)
        ka.close()
        kb.close()
    return 0


def child(root: Path, only: str) -> int:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from attn_opt import bundle as B
    from attn_opt import reference as R
    ops = R.TorchOps("cuda")
    for b in bundles(root, only):
        kern = B.load(b)
        man = kern.manifest
        inputs = R.make_inputs(man, ops, 0)
        out = kern.empty_out()
        ours = kern.prepare(*[inputs[x] for x in man.inputs], out=out)
        q, k, v = (R.canonical(ops, man, x, inputs[x]).contiguous() for x in ("q", "k", "v"))
        if q.dim() != 4:
            q, k, v = (x.reshape(1, -1, x.shape[-2], x.shape[-1]) for x in (q, k, v))

        def cudnn() -> None:
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                F.scaled_dot_product_attention(q, k, v, is_causal=man.attention.causal,
                                               scale=man.attention.scale)
        profiled(torch, (ours, cudnn))
        print("BUNDLE", b.name, flush=True)
        kern.close()
    return 0


def parse(report: str, pair: bool = False):
    """(bundle, ours µs, cuDNN µs, ours GHz, cuDNN GHz) per bundle, from
    ncu's report: results follow the launches in order."""
    names = [l.split()[1] for l in report.splitlines() if l.startswith("BUNDLE ")]
    res, cur = [], None
    for line in report.splitlines():
        m = re.match(r"  (attn_fwd\w*|cudnn\w*)", line)
        if m:
            cur = {"kernel": m.group(1)}
            res.append(cur)
            continue
        m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
        if m and cur is not None:
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[m.group(1)]
            cur["us"] = float(m.group(2).replace(",", "")) * scale
            continue
        m = re.search(r"sm__cycles_elapsed.avg.per_second\s+(\w+)\s+([\d.,]+)", line)
        if m and cur is not None:
            cur["ghz"] = float(m.group(2)) * (1e-3 if m.group(1) == "Mhz" else 1.0)
    rows = []
    for i, n in enumerate(names):
        a, c = res[2 * i], res[2 * i + 1]
        if not (a["kernel"].startswith("attn_fwd")
                and c["kernel"].startswith("attn_fwd" if pair else "cudnn")):
            raise SystemExit(f"unexpected kernels for {n}: {a['kernel']}, {c['kernel']}")
        rows.append((n, a["us"], c["us"], a.get("ghz"), c.get("ghz")))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "bundles"))
    ap.add_argument("--only", default="", help="comma-separated substrings of bundle names")
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--pair", default="", help="A:B: attn-opt's bundles *A against *B")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        if a.pair:
            return child_pairs(Path(a.bundles), a.only, a.pair)
        return child(Path(a.bundles), a.only)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = ["ncu", "--nvtx", "--nvtx-include", "m/", "--metrics",
           "gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second",
           sys.executable, os.path.abspath(__file__), "--child",
           "--bundles", a.bundles, "--only", a.only] + (["--pair", a.pair] if a.pair else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / "locked.txt").write_text(p.stdout + p.stderr)
    if p.returncode:
        print(p.stdout[-2000:], p.stderr[-2000:])
        return p.returncode
    rows = parse(p.stdout, bool(a.pair))
    other = a.pair.split(":")[1].strip("_") if a.pair else "cuDNN"
    name = "locked_pair.csv" if a.pair else "locked.csv"
    with open(out / name, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["bundle", "attn_opt_us", f"{other}_us", f"{other}_over_ours", "ghz_ours",
                    f"ghz_{other}"])
        for n, ta, tc, ga, gc in rows:
            w.writerow([n, f"{ta:.1f}", f"{tc:.1f}", f"{tc / ta:.3f}", ga, gc])
            print(f"{n:38s} attn-opt {ta:8.1f} us  {other} {tc:8.1f} us  {other}/ours {tc / ta:.3f}  "
                  f"({ga} / {gc} GHz)")
    rs = [tc / ta for _, ta, tc, _, _ in rows]
    if rs:
        print(f"{len(rs)} bundles: geometric mean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}, "
              f"min {min(rs):.3f}, {sum(r >= 1 for r in rs)} at >= 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
