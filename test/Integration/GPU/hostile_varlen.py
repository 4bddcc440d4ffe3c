#!/usr/bin/env python3
"""Hostile cu_seqlens tables on the varlen kernels (run on the GPU, best
under compute-sanitizer):

    compute-sanitizer --tool memcheck python3 test/Integration/GPU/hostile_varlen.py \\
        test/Integration/GPU/bundles/varlen_f16_causal_wg ...

For each varlen bundle: tables that decrease, start past 0, end past T,
hold negative entries or entries far past T, all-equal ones, and
overlapping sequences (0, T, 0, T, ...). The
result is unspecified for such tables (attn.varlen_mask says so); what is
checked is that every launch completes without a CUDA error (memcheck
reports any access outside the tensors) and that rows no sequence covers
with a valid table are not read as garbage: with the valid table, the
output is finite. Exit status 0 when every launch succeeded.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from attn_opt import bundle as B  # noqa: E402


def main() -> int:
    import torch
    bad = 0
    for d in sys.argv[1:]:
        k = B.load(d)
        man = k.manifest
        seqs = man.attention.varlen[0]
        T_q, T_k = man.arg("q").shape[0], man.arg("k").shape[0]
        g = torch.Generator(device="cuda").manual_seed(0)
        args = {n: torch.randn(man.arg(n).shape, generator=g, device="cuda",
                               dtype=getattr(torch, man.arg(n).dtype))
                for n in ("q", "k", "v") + (("sink",) if man.arg("sink") else ())}
        gen = torch.Generator().manual_seed(1)
        tables = [
            list(range(seqs + 1))[::-1],                     # decreasing
            [T_q // 2] * (seqs + 1),                         # all equal, past 0
            [-(1 << 30)] + [T_q * 4] * seqs,                 # negative, far past T
            torch.randint(-2 * T_q, 3 * T_q, (seqs + 1,), generator=gen).tolist(),
            [0] + [T_q + 7] * seqs,                          # ends past T
            [2**31 - 1] * (seqs + 1),
            # overlapping: every other sequence all the tokens (more tiles
            # than the slots by far)
            [0 if i % 2 == 0 else T_q for i in range(seqs + 1)],
        ]
        for t in tables:
            cu = torch.tensor(t, dtype=torch.int32, device="cuda")
            try:
                k(**args, cu_seqlens_q=cu, cu_seqlens_k=cu)
                torch.cuda.synchronize()
                print(f"ok    {Path(d).name} {t[:6]}")
            except Exception as e:
                bad += 1
                print(f"FAIL  {Path(d).name} {t[:6]}: {e}")
        valid = torch.tensor([round(i * T_q / seqs) for i in range(seqs + 1)],
                             dtype=torch.int32, device="cuda")
        validk = torch.tensor([round(i * T_k / seqs) for i in range(seqs + 1)],
                              dtype=torch.int32, device="cuda")
        res = k(**args, cu_seqlens_q=valid, cu_seqlens_k=validk)
        out = res[0] if isinstance(res, tuple) else res
        torch.cuda.synchronize()
        if not torch.isfinite(out).all():
            bad += 1
            print(f"FAIL  {Path(d).name}: non-finite output with a valid table")
    print(f"{bad} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
