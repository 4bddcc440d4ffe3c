#!/usr/bin/env python3
"""A/B of dense_attention's ALiBi bundles (`alibi_slopes`, D = 128, H = 16,
16k tokens, f16/bf16, N = 1024/4096/16384, causal and not) built by two
compilers into two caches, beside the plain kernel of the same shape from
the second: the three launches alone (`Kernel.prepare`), in turns for
--rounds rounds of --reps back-to-back launches each (median of the round
means); prints old, new and plain in us, old / new, plain / new (the issue's
"ALiBi at >= 0.9x our unmodified kernel"), plain / old, and the two
outputs' relative difference.

    ATTN_BUNDLE=OLD/attn-bundle python3 bench/ab_dense_alibi.py --prepare A   # here
    python3 bench/ab_dense_alibi.py --prepare B                               # here
    python3 bench/ab_dense_alibi.py A B [--order 2]                           # GPU

--order 2 runs plain, new, old in each round instead of old, new, plain."""
import sys, statistics, argparse
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from attn_opt import ops

H, D = 16, 128
ROWS = [(n, c, dt) for n in (1024, 4096, 16384) for c in (False, True)
        for dt in ("float16", "bfloat16")]

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--prepare")
    ap.add_argument("--order", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    if a.prepare:
        for dt in ("float16", "bfloat16"):
            for c in (True, False):
                for al in (True, False):
                    print(ops.prepare_dense(H, H, D, dt, causal=c, alibi=al, cache_dir=a.prepare))
        return
    import torch
    old, new = a.dirs
    sl = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], device="cuda")
    print("N,causal,dtype,old_us,new_us,plain_us,old/new,new_vs_plain,old_vs_plain,diff")
    for n, c, dt in ROWS:
        b = 16384 // n
        tdt = getattr(torch, dt)
        g = torch.Generator(device="cuda").manual_seed(n)
        q, k, v = (torch.randn(b, n, H, D, device="cuda", dtype=tdt, generator=g) for _ in range(3))
        qv = q.view(b, n, H, 1, D)
        txt_al = ops._dense_text(H, H, D, dt, c, None, False, 1.0, 1.0, 1.0, None, "", 0.0, True)
        txt_pl = ops._dense_text(H, H, D, dt, c, None, False, 1.0, 1.0, 1.0, None)
        ko = ops._kernel(txt_al, "sm_90a", old)
        kn = ops._kernel(txt_al, "sm_90a", new)
        kp = ops._kernel(txt_pl, "sm_90a", new)
        outs = []
        fns = []
        for kk in (ko, kn):
            o = torch.empty_like(qv)
            fns.append(kk.prepare(q=qv, k=k, v=v, mod0=sl.view(H, 1), out=o))
            outs.append(o)
        fns.append(kp.prepare(q=qv, k=k, v=v))
        names = [0, 1, 2] if a.order == 1 else [2, 1, 0]
        for f in fns:
            f()
        torch.cuda.synchronize()
        diff = float((outs[0].float() - outs[1].float()).norm() / outs[0].float().norm())
        assert not outs[1].isnan().any()
        meds = {i: [] for i in range(3)}
        for _ in range(a.rounds):
            for i in names:
                s, e = torch.cuda.Event(True), torch.cuda.Event(True)
                s.record()
                for _ in range(a.reps):
                    fns[i]()
                e.record()
                torch.cuda.synchronize()
                meds[i].append(s.elapsed_time(e) / a.reps * 1e3)
        t = [statistics.median(meds[i]) for i in range(3)]
        print(f"{n},{c},{dt},{t[0]:.1f},{t[1]:.1f},{t[2]:.1f},{t[0]/t[1]:.3f},{t[2]/t[1]:.3f},{t[2]/t[0]:.3f},{diff:.1e}", flush=True)


if __name__ == "__main__":
    main()
