#!/usr/bin/env python3
"""Random TF32 attentions for the Hopper wgmma kernel (f32-precision=tf32),
compiled here into check bundles that run_gpu_checks.py then holds to the
f32 reference (2e-3) on the GPU machine:

    python3 test/Integration/GPU/make_random_tf32_bundles.py --seed 46 --count 30 --out DIR
    python3 test/Integration/GPU/run_gpu_checks.py DIR          # GPU machine

Each case draws D and E from {32, 64, 96, 128}, M from 1 to 777, N from 1
to 3001, a layout of batch and heads, causal or not, a key mask, a float
bias or a sink, soft-capping, the lse, a window, dynamic sizes, and a
forced q-regs or tile-kv. A case attn-bundle refuses (a forced option the
attention cannot take, shared memory past the limit) is reported with its
diagnostic and skipped; the exit status is then 1.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_check_bundles as M  # noqa: E402


def cases(seed: int, count: int) -> dict:
    rng = random.Random(seed)
    out = {}
    for i in range(count):
        d = rng.choice([32, 64, 96, 128])
        e = rng.choice([d, d, 32, 64, 128])
        m = rng.choice([1, 17, 64, 129, 300, 777])
        n = rng.choice([1, 31, 64, 65, 200, 1000, 3001])
        b, h = rng.choice([(1, 1), (2, 3), (1, 8)])
        causal = rng.random() < 0.4
        kw: dict = {}
        r = rng.random()
        if r < 0.2:
            kw.update(mask=["b", "n"])
        elif r < 0.35:
            kw.update(mask=["b", "h", "m", "n"], mask_dtype="float32")
        elif r < 0.45:
            kw.update(sink=["h"])
        if rng.random() < 0.2:
            kw.update(score_mod=M.score_mod_region(2, M.softcap(rng.choice([5.0, 30.0]))))
        if rng.random() < 0.2:
            kw.update(lse=True)
        if rng.random() < 0.15:
            kw.update(window=rng.choice([16, 100]))
        flags = ["--f32-precision=tf32"] + rng.choice(
            [[], [], ["--q-regs=0"], ["--q-regs=1"], ["--tile-kv=32"], ["--tile-kv=96"]])
        dims = M.bhsd(b, h, m, n, d, e)
        if rng.random() < 0.25:
            dims = M.bhsd(-1, h, -1, -1, d, e)
        name = f"fz{i:02d}_d{d}e{e}_m{m}n{n}{'_c' if causal else ''}"
        out[name] = M.Case("float32", **dims, causal=causal, flags=flags, **kw)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=46)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--out", required=True)
    ap.add_argument("--attn-bundle", default=None)
    a = ap.parse_args()
    M.CASES.clear()
    M.CASES.update(cases(a.seed, a.count))
    argv = ["make_check_bundles", "--out", a.out]
    if a.attn_bundle:
        argv += ["--attn-bundle", a.attn_bundle]
    sys.argv = argv
    return M.main()


if __name__ == "__main__":
    sys.exit(main())
