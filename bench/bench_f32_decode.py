#!/usr/bin/env python3
"""f32 decode (M = 1) against torch's f32 SDPA (memory-efficient and math
backends; flash and cuDNN take no f32), same inputs, one run: each bundle
under --bundles whose q is f32 with one query row (as the A/B programs of
log step 179: [B, H, 1, D] over [B, H, N, D], an optional key mask [B, N]).

    python3 bench/bench_f32_decode.py --bundles DIR          # GPU

Prints per bundle: our time, each backend's, and our speed-up over the
best; outputs compared with an fp64 reference of the same inputs.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_attention import timed_rounds  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundles", required=True)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from attn_opt import bundle as B

    def timed(fn) -> float:
        return timed_rounds(torch, fn, a.reps)

    for d in sorted(p for p in Path(a.bundles).iterdir() if (p / "manifest.json").exists()):
        k = B.load(d)
        man = k.manifest
        q = man.arg("q")
        if q.dtype != "float32" or q.shape[2] != 1:
            continue
        g = torch.Generator(device="cuda").manual_seed(3)
        ins = {n: torch.randn(man.arg(n).shape, generator=g, device="cuda")
               for n in ("q", "k", "v")}
        mask = None
        if man.arg("mask") is not None:
            mask = torch.rand(man.arg("mask").shape, generator=g, device="cuda") < 0.85
            mask[:, 0] = True
            ins["mask"] = mask
        out = k.empty_out()
        ours = timed(k.prepare(**ins, out=out))
        am = None if mask is None else mask[:, None, None, :]
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
            ins["q"], ins["k"], ins["v"], attn_mask=am, scale=man.attention.scale)
        peers = {}
        for name, be in (("efficient", SDPBackend.EFFICIENT_ATTENTION),
                         ("math", SDPBackend.MATH)):
            try:
                with sdpa_kernel([be]):
                    peers[name] = timed(sdpa)
            except RuntimeError:
                peers[name] = float("nan")
        ref = torch.nn.functional.scaled_dot_product_attention(
            *(ins[n].double() for n in "qkv"), attn_mask=am, scale=man.attention.scale)
        err = float((out.double() - ref).norm() / ref.norm())
        best = min(v for v in peers.values() if v == v)
        print(f"{d.name}: attn-opt {ours:.1f} us, sdpa efficient {peers['efficient']:.1f} us, "
              f"math {peers['math']:.1f} us, x best peer {best / ours:.2f}, rel err {err:.1e}",
              flush=True)
        k.close()


if __name__ == "__main__":
    main()
