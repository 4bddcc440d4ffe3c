#!/usr/bin/env python3
"""Context-parallel attention on two GPUs of one host: attn_opt.distributed's
ring (K/V chunks passed with batch_isend_irecv over NCCL while the chunks in
hand are computed, partials merged exactly; causal in the zigzag layout)
against one GPU running the whole sequence with the same attn-opt kernel, and
against torch's own context parallelism (`context_parallel` with SDPA) in the
same run.

    python3 bench/bench_ring.py --make --out bench/ring_bench_bundles   # here
    python3 bench/bench_ring.py --bundles bench/ring_bench_bundles --out OUT

One dynamic-shape bundle pair (bf16, H heads of D = 128, with the lse; B and
both lengths are kernel parameters) serves the whole sequence and every
chunk pair. Memory per GPU: Q, K and V resident (the whole sequence on one
GPU, the rank's share with the ring) plus the peak the run allocates. NVLink multicast stays off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1, set here before
the workers start). Prints one row per (N, causal) and writes ring.csv.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))
import ring_check  # noqa: E402  (the bundle pair's program)

H, D = 2, 128
NS = (131072, 262144, 524288)

for _k, _v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
               ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_k] = _v


def make(out: Path) -> None:
    ring_check.make(out, "bf16", H)


def worker(rank: int, world: int, bundles: str, out: str, reps: int) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from attn_opt import bundle as Bdl
    from attn_opt import distributed as Dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            init_method="tcp://127.0.0.1:29511",
                            device_id=torch.device("cuda", rank))
    k_full = Bdl.load(Path(bundles) / "dyn_full")
    k_causal = Bdl.load(Path(bundles) / "dyn_causal")
    kernel = Dist.bundle_kernel(k_full, k_causal)
    scale = 1 / math.sqrt(D)

    def timed(fn):
        """Median over reps of the slowest rank's time (ms)."""
        fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            dist.barrier()
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            t = torch.tensor([s.elapsed_time(e)], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            ts.append(float(t))
        ts.sort()
        return ts[len(ts) // 2]

    cp = None
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.experimental import context_parallel
        from torch.distributed.tensor.experimental._attention import _cp_options
        from torch.nn.attention import SDPBackend, sdpa_kernel
        mesh = init_device_mesh("cuda", (world,))
        cp = (mesh, context_parallel, _cp_options, SDPBackend, sdpa_kernel)
    except Exception as e:  # pragma: no cover - depends on the torch build
        if rank == 0:
            print(f"torch context_parallel unavailable: {e}", flush=True)

    rows = []
    for n in NS:
        for causal in (False, True):
            g = torch.Generator(device="cuda").manual_seed(11)
            q, k, v = (torch.randn(1, H, n, D, generator=g, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(3))
            flops = 4 * n * n * D * H * (0.5 if causal else 1.0)
            # One GPU: the whole sequence through the same kernel (each rank
            # on its own GPU; the slowest counts).
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            one_out = {}

            def one():
                one_out["o"], _ = kernel(q, k, v, scale, causal)
            t1 = timed(one)
            # Per GPU: Q, K and V resident (all of them on one GPU, this
            # rank's share with the ring) plus the peak the run adds.
            inputs = 3 * q.numel() * q.element_size()
            mem1 = torch.cuda.max_memory_allocated() - base + inputs
            ref = one_out["o"]
            # Two GPUs: this rank's chunks, the ring.
            # This rank's chunks, each its own contiguous tensor (as a rank
            # holding only its share would have them).
            qc, kc, vc = ([c.contiguous() for c in Dist.shard(x, world, rank, causal)]
                          for x in (q, k, v))
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            ring_out = {}

            def ring():
                ring_out["acc"] = Dist.ring_attention(qc, kc, vc, n, scale, causal,
                                                      kernel=kernel)
            t2 = timed(ring)
            mem2 = torch.cuda.max_memory_allocated() - base + sum(
                x.numel() * x.element_size() for x in qc + kc + vc)
            # Exact: this rank's chunks against the one-GPU output.
            mine = Dist.shard(ref, world, rank, causal)
            num = sum(float((a[0] - b.float()).norm() ** 2)
                      for a, b in zip(ring_out["acc"], mine))
            den = sum(float(b.float().norm() ** 2) for b in mine)
            err = torch.tensor([num, den], device="cuda")
            dist.all_reduce(err)
            rel = math.sqrt(float(err[0]) / float(err[1]))
            # torch's context parallelism (SDPA flash; load balancing for causal).
            tcp, cp_note = None, ""
            if cp is not None:
                mesh, context_parallel, opts, SDPBackend, sdpa_kernel = cp
                try:
                    # The buffers sharded once (on entering the context), the
                    # attention timed inside it.
                    opts.enable_load_balance = causal
                    qq, kk, vv = q.clone(), k.clone(), v.clone()
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        with context_parallel(mesh, buffers=[qq, kk, vv],
                                              buffer_seq_dims=[2, 2, 2]):
                            tcp = timed(lambda: F.scaled_dot_product_attention(
                                qq, kk, vv, is_causal=causal))
                    del qq, kk, vv
                except Exception as e:  # pragma: no cover
                    cp_note = f"torch cp: {str(e).splitlines()[0][:120]}"
            row = dict(n=n, heads=H, d=D, causal=causal, one_gpu_ms=f"{t1:.2f}",
                       two_gpu_ms=f"{t2:.2f}", two_over_one=f"{t2 / t1:.3f}",
                       torch_cp_ms=f"{tcp:.2f}" if tcp else "",
                       vs_torch_cp=f"{tcp / t2:.2f}" if tcp else "",
                       tflops_one=f"{flops / t1 / 1e9:.0f}",
                       tflops_two=f"{flops / t2 / 1e9:.0f}",
                       mem_one_gib=f"{mem1 / 2**30:.2f}", mem_two_gib=f"{mem2 / 2**30:.2f}",
                       rel_err=f"{rel:.2e}", note=cp_note)
            rows.append(row)
            if rank == 0:
                print("  ".join(f"{k}={v}" for k, v in row.items() if v != ""), flush=True)
            del q, k, v, qc, kc, vc, ref, one_out, ring_out, mine
            torch.cuda.empty_cache()
    if rank == 0:
        path = Path(out) / "ring.csv"
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {path}")
    dist.barrier()
    dist.destroy_process_group()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", action="store_true")
    ap.add_argument("--out", default=".")
    ap.add_argument("--bundles", default=str(HERE / "ring_bench_bundles"))
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    if a.make:
        make(Path(a.out))
        return 0
    import torch
    import torch.multiprocessing as mp
    world = torch.cuda.device_count()
    if world < 2:
        print(f"needs two GPUs, found {world}")
        return 1
    world = 2
    mp.spawn(worker, args=(world, a.bundles, a.out, a.reps), nprocs=world, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
