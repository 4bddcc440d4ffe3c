#!/usr/bin/env python3
"""Launches of one loaded kernel on several CUDA streams at once (GPU only):

    python3 test/Integration/GPU/streams_check.py BUNDLE [BUNDLE ...] [--streams 3] [--rounds 20]

A persistent kernel takes its query tiles from a counter in its workspace,
and split-KV's last block merges through its locks: launches that overlap
must not share them. For each bundle (static shapes), one input set per
stream; the reference output of each set comes from launches in order on
one stream; then every round launches all sets, set i on stream i, without
waiting in between, and each output must equal its reference bit for bit
(the kernels are deterministic). Exits 1 on a mismatch.
--one-workspace gives every stream the same workspace (as the loader did
before session 28): a persistent kernel then loses or repeats tiles, which
shows that the check can fail.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--one-workspace", action="store_true")
    a = ap.parse_args()
    import torch
    from attn_opt import bundle as B
    bad = 0
    for d in a.bundles:
        k = B.load(d)
        man = k.manifest
        if a.one_workspace:
            own = k._workspace_for
            k._workspace_for = lambda m, stream=None: own(m, 0)
        gen = torch.Generator(device="cuda").manual_seed(7)
        sets = [{n: torch.randn(man.arg(n).shape, generator=gen, device="cuda")
                 .to(getattr(torch, man.arg(n).dtype)) for n in man.inputs}
                for _ in range(a.streams)]
        refs = [k(**ins) for ins in sets]
        torch.cuda.synchronize()
        streams = [torch.cuda.Stream() for _ in range(a.streams)]
        outs = [k.empty_out() for _ in range(a.streams)]
        launches = [k.prepare(**ins, out=o, stream=s)
                    for ins, o, s in zip(sets, outs, streams)]
        wrong = 0
        for _ in range(a.rounds):
            for o, s in zip(outs, streams):
                with torch.cuda.stream(s):
                    o.fill_(float("nan"))
            for f in launches:
                f()
            torch.cuda.synchronize()
            wrong += sum(not torch.equal(o, r) for o, r in zip(outs, refs))
        persistent = man.attention.persistent
        print(f"{'PASS' if not wrong else 'FAIL'}  {d}  streams={a.streams} "
              f"rounds={a.rounds} persistent={persistent} grid={list(man.grid)} "
              f"mismatched outputs={wrong}")
        bad += wrong > 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
