"""Context-parallel attention (attn_opt.distributed): the ring schedule and
the exact merge against single-device attention, in one process with numpy
(CI); over torch.distributed with two gloo processes where torch is
installed (the device machine)."""
import math
import os

import numpy as np
import pytest

from attn_opt import distributed as D


def full(q, k, v, scale, causal):
    return D.reference_kernel(q, k, v, scale, causal)


@pytest.mark.parametrize("world", [2, 3, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n, hq, hkv", [(64, 2, 2), (61, 4, 2), (9, 2, 1)])
def test_ring_equals_full(world, causal, n, hq, hkv):
    """Ragged chunks (61, 9 tokens over 2W chunks: some empty at W = 4, 9),
    GQA, causal zigzag and not; O and LSE."""
    rng = np.random.default_rng(world * 100 + n)
    q = rng.standard_normal((2, hq, n, 16))
    k = rng.standard_normal((2, hkv, n, 16)) * 2.0
    v = rng.standard_normal((2, hkv, n, 16))
    scale = 1 / math.sqrt(16)
    o, lse = D.simulate_ring(q, k, v, world, scale, causal)
    ro, rlse = full(q, k, v, scale, causal)
    assert np.abs(o - ro).max() < 1e-12 and np.abs(lse - rlse).max() < 1e-12


def test_zigzag_balances_causal_work():
    """Every rank's visible (query, key) pairs under causal are equal within
    one chunk's rows (the point of the zigzag layout)."""
    world, n = 4, 8 * 64
    bounds = D.chunk_bounds(n, 2 * world)
    work = []
    for r in range(world):
        w = 0
        for iq in D.chunk_ids(world, r, True):
            for ik in range(2 * world):
                kind = D.pair_kind(iq, ik, True)
                lq = bounds[iq][1] - bounds[iq][0]
                lk = bounds[ik][1] - bounds[ik][0]
                w += lq * lk if kind == "full" else lq * (lq + 1) // 2 if kind else 0
        work.append(w)
    assert max(work) == min(work)


def test_merge_ignores_empty_partials():
    o = np.ones((1, 3, 4))
    lse = np.array([[0.5, -np.inf, 2.0]])
    empty_o, empty_lse = np.zeros((1, 3, 4)), np.full((1, 3), -np.inf)
    mo, ml = D.merge(o, lse, empty_o, empty_lse)
    want = o.copy()
    want[:, 1] = 0  # no key on either side: O = 0, as a fully masked row
    assert np.array_equal(mo, want) and np.array_equal(ml, lse)
    mo, ml = D.merge(empty_o, empty_lse, empty_o, empty_lse)
    assert np.all(mo == 0) and np.all(np.isneginf(ml))


def _worker(rank, world, port, causal, out_path):  # pragma: no cover - subprocess
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    g = torch.Generator().manual_seed(7)
    n = 77
    q = torch.randn(1, 4, n, 32, generator=g)
    k = torch.randn(1, 2, n, 32, generator=g)
    v = torch.randn(1, 2, n, 32, generator=g)
    acc = D.ring_attention(D.shard(q, world, rank, causal), D.shard(k, world, rank, causal),
                           D.shard(v, world, rank, causal), n, 1 / math.sqrt(32), causal)
    torch.save([(o, lse) for o, lse in acc], f"{out_path}.{rank}")
    dist.destroy_process_group()


@pytest.mark.parametrize("causal", [False, True])
def test_ring_over_gloo(tmp_path, causal):
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as mp
    world, port = 2, 29500 + (7 if causal else 3)
    out = str(tmp_path / "part")
    mp.spawn(_worker, args=(world, port, causal, out), nprocs=world, join=True)
    g = torch.Generator().manual_seed(7)
    n = 77
    q = torch.randn(1, 4, n, 32, generator=g)
    k = torch.randn(1, 2, n, 32, generator=g)
    v = torch.randn(1, 2, n, 32, generator=g)
    parts = [torch.load(f"{out}.{r}") for r in range(world)]
    o = D.unshard([[p[0] for p in parts[r]] for r in range(world)], causal)
    lse = D.unshard([[p[1][..., None] for p in parts[r]] for r in range(world)], causal)[..., 0]
    ro, rlse = D.reference_kernel(q, k, v, 1 / math.sqrt(32), causal)
    assert (o - ro).abs().max() < 1e-5 and (lse - rlse).abs().max() < 1e-5
