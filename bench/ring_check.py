#!/usr/bin/env python3
"""Context-parallel attention with attn-opt's GPU kernels on one GPU: the
ring schedule of attn_opt.distributed simulated in one process (W ranks'
steps in turn), each chunk pair computed by an attn-opt bundle that writes
the lse, merged exactly, against the unsharded attention in fp32.

    python3 bench/ring_check.py --make --out bench/ring_bundles     # here
    python3 bench/ring_check.py --bundles bench/ring_bundles         # GPU

Chunks of C = 1024 tokens, B = 1, H = 8, D = 128, f16; W = 2 ranks with the
causal zigzag (4 chunks) and without (2 chunks of 2C: a second bundle pair).
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

C, B, H, D = 1024, 1, 8, 128


def program(n: int, causal: bool) -> str:
    t = f"tensor<{B}x{H}x{n}x{D}xf16>"
    lt = f"tensor<{B}x{H}x{n}xf32>"
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = ", ".join(m + x + ">" for x in ("(b, h, m, d)", "(b, h, n, d)", "(b, h, n, e)",
                                            "(b, h, m, e)"))
    return f"""func.func @chunk(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> ({t}, {lt}) {{
  %s = arith.constant {1 / math.sqrt(D)!r} : f32
  %r, %l = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      {"causal " if causal else ""}indexing_maps = [{maps}] -> {t}, {lt}
  return %r, %l : {t}, {lt}
}}
"""


def make(out: Path) -> None:
    for n in (C, 2 * C):
        for causal in (False, True):
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                f.write(program(n, causal))
                f.flush()
                d = out / f"c{n}_{'causal' if causal else 'full'}"
                subprocess.run([str(HERE.parent / "build/bin/attn-bundle"), f.name, "-o",
                                str(d), "--chip=sm_90a"], check=True)
                print(f"wrote {d}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", action="store_true")
    ap.add_argument("--out", default=str(HERE / "ring_bundles"))
    ap.add_argument("--bundles", default=str(HERE / "ring_bundles"))
    a = ap.parse_args()
    if a.make:
        make(Path(a.out))
        return 0
    import torch
    from attn_opt import bundle as Bdl
    from attn_opt import distributed as Dist
    root = Path(a.bundles)
    failures = 0
    world = 2
    for causal in (True, False):
        n_chunk = C if causal else 2 * C  # 2W chunks with causal, W without
        k_full = Bdl.load(root / f"c{n_chunk}_full")
        k_causal = Bdl.load(root / f"c{n_chunk}_causal")
        kernel = Dist.bundle_kernel(k_full, k_causal)
        n = 4 * C
        g = torch.Generator(device="cuda").manual_seed(3)
        q, k, v = (torch.randn(B, H, n, D, generator=g, device="cuda", dtype=torch.float16)
                   for _ in range(3))
        scale = 1 / math.sqrt(D)
        o, lse = Dist.simulate_ring(q, k, v, world, scale, causal, kernel=kernel)
        ro, rlse = Dist.reference_kernel(q, k, v, scale, causal)
        rel = float((o - ro).norm() / ro.norm())
        lse_err = float((lse - rlse).abs().max())
        nan = bool(torch.isnan(o).any())
        ok = rel <= 2e-3 and lse_err <= 1e-2 and not nan
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} W={world} causal={causal} N={n}: rel err "
              f"{rel:.2e}, max |lse - ref| {lse_err:.2e}, nan={nan}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
