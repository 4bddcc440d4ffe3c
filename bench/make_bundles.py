#!/usr/bin/env python3
"""Writes one attention program per benchmark config and compiles each into
a kernel bundle with build/bin/attn-bundle (run here, on the machine with
MLIR; the bundles then travel to the GPU machine).

  python3 bench/make_bundles.py --out bench/bundles [--quick] [--chip sm_90a]

Configs follow bench_attention.py: fp16/bf16, D in {64, 128}, N in {512 ..
16384} with 16k tokens per batch (B = 16384 // N) and model dim 2048
(H = 2048 // D), causal and not, plus one head at N = 131072. Layout
[B, H, N, D]. Bundle directory names: {dtype}_d{D}_n{N}_b{B}_h{H}_{causal|full}.
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MLIR_DT = {"float16": "f16", "bfloat16": "bf16"}


def configs(quick: bool):
    ns = [512, 2048] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    for dtype in ("float16", "bfloat16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in ns:
                    yield dtype, d, n, 16384 // n, 2048 // d, causal
                if not quick:
                    yield dtype, d, 131072, 1, 1, causal


def program(dtype: str, d: int, n: int, b: int, h: int, causal: bool) -> str:
    t = f"tensor<{b}x{h}x{n}x{d}x{MLIR_DT[dtype]}>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = ", ".join(m + x + ">" for x in
                     ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)", "(b, h, m, e)"))
    return f"""func.func @attention(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant {1.0 / math.sqrt(d)!r} : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      {"causal " if causal else ""}indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench" / "bundles"))
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--attn-bundle", default=str(ROOT / "build" / "bin" / "attn-bundle"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for dtype, d, n, b, h, causal in configs(a.quick):
        name = f"{dtype}_d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}"
        src = out / f"{name}.mlir"
        src.write_text(program(dtype, d, n, b, h, causal))
        p = subprocess.run([a.attn_bundle, str(src), "-o", str(out / name),
                            f"--chip={a.chip}"], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {name}: {p.stderr[-2000:]}", file=sys.stderr)
            return 1
        src.unlink()
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
