#!/usr/bin/env python3
"""The per-call CPU cost of `attn_opt.dense_attention` (tiny shapes, so the
loop is bound by the Python side and the launch), against a launcher from
`Kernel.prepare` (cuLaunchKernel alone), and where the call's time goes
(cProfile, top 25 by cumulative time).

    python3 bench/bench_dense_alibi.py --prepare DIR               # here
    ATTN_OPT_CACHE=DIR python3 bench/call_overhead.py               # GPU

(The bundles are those bench_dense_alibi.py prepares: H = 16, D = 128, f16.)
"""
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from attn_opt import ops  # noqa: E402

H, D, CALLS = 16, 128, 500


def per_call(fn) -> float:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / CALLS * 1e6


def main() -> None:
    q, k, v = (torch.randn(1, 128, H, D, device="cuda", dtype=torch.float16)
               for _ in range(3))
    sl = torch.rand(H, device="cuda")
    print(f"dense_attention, causal: {per_call(lambda: ops.dense_attention(q, k, v, causal=True)):.1f} us per call")
    print(f"dense_attention, causal, alibi_slopes: "
          f"{per_call(lambda: ops.dense_attention(q, k, v, causal=True, alibi_slopes=sl)):.1f} us per call")
    kern = ops._kernel(ops._dense_text(H, H, D, "float16", True, None, False, 1.0, 1.0, 1.0,
                                       None), "sm_90a", None)
    print(f"prepared launch: {per_call(kern.prepare(q=q.view(1, 128, H, 1, D), k=k, v=v)):.1f} us per call")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        ops.dense_attention(q, k, v, causal=True)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
