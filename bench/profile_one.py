#!/usr/bin/env python3
"""One launch of an attn-opt bundle and of SDPA flash on the same inputs, for
a profiler on the GPU machine (no timing here):

    ncu -k regex:'attn_fwd|flash_fwd' -c 2 python3 bench/profile_one.py BUNDLE

Inputs ~ N(0,1) in the bundle's layout; the peer gets [B, H, N, D] copies.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402


def main() -> int:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    kern = B.load(Path(sys.argv[1]))
    man = kern.manifest
    ops = R.TorchOps("cuda")
    inputs = R.make_inputs(man, ops, 0)
    out = kern.empty_out()
    kern.prepare(*[inputs[x] for x in man.inputs], out=out)()
    q, k, v = (R.canonical(ops, man, x, inputs[x]).contiguous() for x in ("q", "k", "v"))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        F.scaled_dot_product_attention(q, k, v, is_causal=man.attention.causal,
                                       scale=man.attention.scale)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
