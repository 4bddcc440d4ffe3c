#!/usr/bin/env python3
"""Writes random split-KV programs for exec_check.py: attention over N keys
computed as k partials over random key ranges (each an attn.attention with
its lse, optionally with an additive mask slice holding -inf) merged by
attn.merge, against the unsplit attn.attention on the same inputs; the
output or the lse is compared (a property test of the merge).

    python3 test/lib/gen_split_merge.py --seed 1 --count 6 > cases.mlir
"""
from __future__ import annotations

import argparse
import random


def case(rng: random.Random, idx: int) -> str:
    B, H = rng.choice([1, 2]), rng.choice([1, 3])
    M, N = rng.randint(1, 40), rng.randint(2, 70)
    D, E = rng.choice([8, 16]), rng.choice([4, 8])
    k = rng.randint(2, min(4, N))
    cuts = sorted(rng.sample(range(1, N), k - 1))
    masked = rng.random() < 0.5
    ret_lse = rng.random() < 0.4
    amp = rng.choice([1.0, 3.0, 8.0])
    q = f"tensor<{B}x{H}x{M}x{D}xf32>"
    kt = lambda n: f"tensor<{B}x{H}x{n}x{D}xf32>"  # noqa: E731
    vt = lambda n: f"tensor<{B}x{H}x{n}x{E}xf32>"  # noqa: E731
    mt = lambda n: f"tensor<{H}x{M}x{n}xf32>"  # noqa: E731
    o = f"tensor<{B}x{H}x{M}x{E}xf32>"
    lt = f"tensor<{B}x{H}x{M}xf32>"
    maps = ("affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, "
            "affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, "
            "affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, "
            "affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>")
    mmap = ", affine_map<(b, h, m, n, d, e) -> (h, m, n)>"
    args = f"%q: {q}, %k: {kt(N)}, %v: {vt(N)}" + (f", %mask: {mt(N)}" if masked else "")
    head = (f"  %s = arith.constant 0.25 : f32\n  %zero = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {o}\n"
            f"  %init = linalg.fill ins(%zero : f32) outs(%e : {o}) -> {o}\n")

    def att(res, kv, vv, mk, n):
        clause = f" mask({mk} : {mt(n)})" if mk else ""
        return (f"  {res}, {res}_lse = attn.attention ins(%q, {kv}, {vv} : {q}, {kt(n)}, {vt(n)}) "
                f"scale(%s){clause} outs(%init : {o}) indexing_maps = [{maps}"
                f"{mmap if mk else ''}] -> {o}, {lt}\n")

    body = head
    outs, lses = [], []
    bounds = [0] + cuts + [N]
    for lo, hi in zip(bounds, bounds[1:]):
        n = hi - lo
        body += (f"  %k{lo} = tensor.extract_slice %k[0, 0, {lo}, 0] [{B}, {H}, {n}, {D}] "
                 f"[1, 1, 1, 1] : {kt(N)} to {kt(n)}\n"
                 f"  %v{lo} = tensor.extract_slice %v[0, 0, {lo}, 0] [{B}, {H}, {n}, {E}] "
                 f"[1, 1, 1, 1] : {vt(N)} to {vt(n)}\n")
        mk = None
        if masked:
            body += (f"  %m{lo} = tensor.extract_slice %mask[0, 0, {lo}] [{H}, {M}, {n}] "
                     f"[1, 1, 1] : {mt(N)} to {mt(n)}\n")
            mk = f"%m{lo}"
        body += att(f"%o{lo}", f"%k{lo}", f"%v{lo}", mk, n)
        outs.append(f"%o{lo}")
        lses.append(f"%o{lo}_lse")
    body += (f"  %r, %r_lse = attn.merge ({', '.join(outs)} : {', '.join([o] * k)}) "
             f"lse({', '.join(lses)} : {', '.join([lt] * k)}) -> {o}, {lt}\n")
    rt = lt if ret_lse else o
    ret = "%r_lse" if ret_lse else "%r"
    full = head + att("%r", "%k", "%v", "%mask" if masked else None, N)
    directive = f"// EXEC: @split{idx} ref=fn:full{idx} amp={amp}" + (" arg3=mask" if masked else "")
    return (f"// Case {idx}: B={B} H={H} M={M} N={N} D={D} E={E}, keys cut at {cuts}, "
            f"{'masked, ' if masked else ''}{'lse' if ret_lse else 'output'} compared.\n"
            f"{directive}\n"
            f"func.func @split{idx}({args}) -> {rt} {{\n{body}  return {ret} : {rt}\n}}\n"
            f"func.func @full{idx}({args}) -> {rt} {{\n{full}  return {ret} : {rt}\n}}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=6)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    print("\n// -----\n\n".join(case(rng, i) for i in range(a.count)))


if __name__ == "__main__":
    main()
