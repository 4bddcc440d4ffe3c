#!/usr/bin/env python3
"""A/B of one dynamic-shape bundle against static bundles of the same
program, at shapes the dynamic table does not have (docs/performance.md,
"Dynamic shapes": the 32-bit sizes and the two-block shape for a dynamic
N were decided with these):

    python3 bench/ab_dynamic.py --make --out bench/ab_dynamic   # here
    python3 bench/ab_dynamic.py --bundles bench/ab_dynamic      # GPU

Pairs (fp16, default launch shapes unless said):
- "ws": [B, 16, N, 128] non-causal, B = 4, N in {4000, 4032, 4096}, both
  forced to the warp-specialized pipelined shape (`--warp-specialize=1
  --pipeline=1`), so that only static against dynamic sizes differs;
- "short": [64, 256, 16, D] (the varlen table's dense shape), D in {64,
  128}, causal and full, each with its own default shape.
The two kernels of a pair take turns for 5 rounds of 30 CUDA-event-timed
launches; each prints the median of its round medians, static ÷ dynamic
time, and the two outputs' relative difference (same inputs).
"""
from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

MAPS = {"bhnd": ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)", "(b, h, m, e)"),
        "bnhd": ("(b, m, h, d)", "(b, n, h, d)", "(b, n, h, e)", "(b, m, h, e)")}


def program(shape: Tuple[str, ...], layout: str, causal: bool) -> str:
    t = "tensor<" + "x".join(shape) + "xf16>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = ", ".join(m + x + ">" for x in MAPS[layout])
    return f"""func.func @attention(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant {1 / math.sqrt(int(shape[-1]))!r} : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      {"causal " if causal else ""}indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
"""


def pairs() -> List[Dict[str, Any]]:
    """name, layout, causal, flags, concrete shape, dynamic shape."""
    out = []
    for n in (4000, 4032, 4096):
        out.append(dict(name=f"ws_n{n}", layout="bhnd", causal=False,
                        flags=["--warp-specialize=1", "--pipeline=1"],
                        shape=(4, 16, n, 128), dyn=("?", "16", "?", "128")))
    for d in (64, 128):
        for causal in (False, True):
            out.append(dict(name=f"short_d{d}_{'causal' if causal else 'full'}",
                            layout="bnhd", causal=causal, flags=[],
                            shape=(64, 256, 16, d), dyn=("?", "?", "16", str(d))))
    return out


def make(out: Path) -> None:
    tool = str(HERE.parent / "build" / "bin" / "attn-bundle")
    for p in pairs():
        for kind, shape in (("static", tuple(map(str, p["shape"]))), ("dynamic", p["dyn"])):
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                f.write(program(shape, p["layout"], p["causal"]))
                f.flush()
                d = out / p["name"] / kind
                subprocess.run([tool, f.name, "-o", str(d), *p["flags"]], check=True)
                print(f"wrote {d}")


def run(root: Path) -> int:
    import torch
    from attn_opt import bundle as B
    from bench_decode import timed
    no_flush = torch.empty(1, dtype=torch.uint8, device="cuda")
    for p in pairs():
        ks = {k: B.load(root / p["name"] / k) for k in ("static", "dynamic")}
        g = torch.Generator(device="cuda").manual_seed(1)
        q, k, v = (torch.randn(p["shape"], generator=g, device="cuda",
                               dtype=torch.float16) for _ in range(3))
        outs = {n: torch.empty_like(q) for n in ks}
        fns = {n: kern.prepare(q, k, v, out=outs[n]) for n, kern in ks.items()}
        times: Dict[str, List[float]] = {n: [] for n in ks}
        for _ in range(5):
            for n, fn in fns.items():
                # bench_decode's timer; zeroing one byte stands for its flush.
                times[n].append(timed(torch, fn, no_flush, 30))
        st, dy = (statistics.median(times[n]) for n in ("static", "dynamic"))
        a, b = outs["static"].float(), outs["dynamic"].float()
        diff = float((a - b).norm() / a.norm())
        print(f"{p['name']}: static {st:.1f} us, dynamic {dy:.1f} us, static/dynamic "
              f"{st / dy:.3f}, outputs differ by {diff:.1e} "
              f"({ks['dynamic'].manifest.attention.kernel_choice[:60]})", flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", action="store_true")
    ap.add_argument("--out", default=str(HERE / "ab_dynamic"))
    ap.add_argument("--bundles", default=str(HERE / "ab_dynamic"))
    a = ap.parse_args()
    if a.make:
        make(Path(a.out))
        return 0
    return run(Path(a.bundles))


if __name__ == "__main__":
    sys.exit(main())
