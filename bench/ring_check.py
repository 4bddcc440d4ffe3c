#!/usr/bin/env python3
"""Context-parallel attention with attn-opt's GPU kernels on one GPU: the
ring schedule of attn_opt.distributed simulated in one process (W ranks'
steps in turn), each chunk pair computed by an attn-opt bundle that writes
the lse, merged exactly, against the unsharded attention in fp32.

    python3 bench/ring_check.py --make --out bench/ring_bundles     # here
    python3 bench/ring_check.py --bundles bench/ring_bundles         # GPU

One dynamic-shape bundle pair (full and causal; B and the chunk lengths
are kernel parameters, written with the lse) serves every shard size:
B = 1, H = 8, D = 128, f16; N = 4096 and a ragged N = 4096 + 333 over W = 2
and 3 ranks, with the causal zigzag (2W chunks) and without (W chunks).
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

C, B, H, D = 1024, 1, 8, 128  # C: N = 4C


def program(causal: bool, elt: str = "f16", heads: int = H) -> str:
    t = f"tensor<?x{heads}x?x{D}x{elt}>"
    lt = f"tensor<?x{heads}x?xf32>"
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


def make(out: Path, elt: str = "f16", heads: int = H) -> None:
    """The dynamic-shape bundle pair (dyn_full, dyn_causal) with the lse."""
    for causal in (False, True):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(program(causal, elt, heads))
            f.flush()
            d = out / f"dyn_{'causal' if causal else 'full'}"
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
    k_full = Bdl.load(root / "dyn_full")
    k_causal = Bdl.load(root / "dyn_causal")
    kernel = Dist.bundle_kernel(k_full, k_causal)
    for world, causal, n in ((2, True, 4 * C), (2, False, 4 * C), (2, True, 4 * C + 333),
                             (3, True, 4 * C + 333), (3, False, 4 * C + 333)):
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
