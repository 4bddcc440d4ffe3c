"""Context-parallel (ring) attention: the sequence sharded over ranks, K/V
shards passed around the ring, each step's partial (O, LSE) merged exactly.

Layout: q, k, v are [B, H, S, D] (k and v may have fewer heads: GQA, the
query heads of one kv head adjacent). With `causal`, the sequence is cut into
2W chunks and rank r holds chunks r and 2W-1-r (the zigzag layout), so that
every rank has the same amount of visible work; without it, rank r holds
chunk r of W. Chunks may be ragged (S not a multiple of the chunk count).

Per step s, rank r holds the K/V chunks of rank (r - s) mod W; each of its
query chunks attends to each of them as a whole ("full"), as the same chunk
(top-left causal: the diagonal) or not at all (a later chunk under causal),
and the step's partial (O, LSE) is merged in with

    lse = m + log(e^(lse_a - m) + e^(lse_b - m)),  m = max(lse_a, lse_b)
    O   = (e^(lse_a - lse) O_a + e^(lse_b - lse) O_b)

which is exact (a partial with lse = -inf takes no part). The kernel is a
callable `kernel(q, k, v, scale, causal) -> (O, LSE)` on one chunk pair:
`reference_kernel` (any array library: numpy or torch), or an attn-opt
bundle pair (full and causal, written with the lse result) wrapped by the
caller.

`simulate_ring` runs the schedule in one process (numpy or torch; what CI
tests); `ring_attention` runs it over torch.distributed, sending the K/V
chunks with batch_isend_irecv while the chunks in hand are computed.
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

Kernel = Callable[[Any, Any, Any, float, bool], Tuple[Any, Any]]


def _xp(x: Any) -> Any:
    """The array module of `x`: torch for tensors, else numpy."""
    if type(x).__module__.startswith("torch"):
        import torch
        return torch
    import numpy
    return numpy


def chunk_bounds(n: int, parts: int) -> List[Tuple[int, int]]:
    """[start, end) of `parts` near-equal chunks of n (the first n % parts
    one longer), as numpy.array_split cuts."""
    base, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def chunk_ids(world: int, rank: int, causal: bool) -> Tuple[int, ...]:
    """The global chunks rank `rank` holds: (r, 2W-1-r) of 2W with causal
    (zigzag), else (r,) of W."""
    return (rank, 2 * world - 1 - rank) if causal else (rank,)


def num_chunks(world: int, causal: bool) -> int:
    return 2 * world if causal else world


def pair_kind(iq: int, ik: int, causal: bool) -> Optional[str]:
    """How query chunk iq sees key chunk ik: "full", "causal" (the same
    chunk: the diagonal), or None (nothing visible)."""
    if not causal or ik < iq:
        return "full"
    return "causal" if ik == iq else None


def shard(x: Any, world: int, rank: int, causal: bool, dim: int = -2) -> List[Any]:
    """Rank `rank`'s chunks of x along `dim` (a list, one per chunk id)."""
    n = x.shape[dim]
    bounds = chunk_bounds(n, num_chunks(world, causal))
    out = []
    for c in chunk_ids(world, rank, causal):
        lo, hi = bounds[c]
        idx = [slice(None)] * x.ndim
        idx[dim] = slice(lo, hi)
        out.append(x[tuple(idx)])
    return out


def unshard(parts: Sequence[Sequence[Any]], causal: bool, dim: int = -2) -> Any:
    """The full sequence back from every rank's chunks (parts[rank][i])."""
    world = len(parts)
    by_id = {}
    for r in range(world):
        for c, x in zip(chunk_ids(world, r, causal), parts[r]):
            by_id[c] = x
    xs = [by_id[c] for c in range(num_chunks(world, causal))]
    xp = _xp(xs[0])
    return xp.concatenate(xs, axis=dim) if xp.__name__ == "numpy" else xp.cat(xs, dim=dim)


def _weights(lse_a: Any, lse_b: Any) -> Tuple[Any, Any, Any]:
    """The two partials' weights in the merge and the merged LSE: e^(lse_a -
    lse) and e^(lse_b - lse), computed from m = max(lse_a, lse_b) (0 and 0,
    and -inf, where neither partial saw a key)."""
    xp = _xp(lse_a)
    m = xp.maximum(lse_a, lse_b)
    none = xp.isinf(m) & (m < 0)
    ref = xp.where(none, xp.zeros_like(m), m)
    wa, wb = xp.exp(lse_a - ref), xp.exp(lse_b - ref)
    tot = wa + wb
    safe = xp.where(none, xp.ones_like(tot), tot)
    return wa / safe, wb / safe, xp.where(none, m, ref + xp.log(safe))


def merge(o_a: Any, lse_a: Any, o_b: Any, lse_b: Any) -> Tuple[Any, Any]:
    """Exact merge of two partials over disjoint keys: O [.., S, D] each
    normalized over its keys, LSE [.., S] (natural log; -inf: no key)."""
    ca, cb, lse = _weights(lse_a, lse_b)
    return ca[..., None] * o_a + cb[..., None] * o_b, lse


def reference_kernel(q: Any, k: Any, v: Any, scale: float,
                     causal: bool) -> Tuple[Any, Any]:
    """softmax(scale q k^T) v and its LSE in float64 (numpy) / float32
    (torch), top-left causal; k/v heads repeated for GQA. O [B, H, Sq, D],
    LSE [B, H, Sq]; a row with no visible key gives O = 0, LSE = -inf."""
    xp = _xp(q)
    is_np = xp.__name__ == "numpy"
    f = (lambda x: x.astype("float64")) if is_np else (lambda x: x.float())
    q, k, v = f(q), f(k), f(v)
    g = q.shape[1] // k.shape[1]
    if g > 1:
        k = xp.repeat(k, g, axis=1) if is_np else k.repeat_interleave(g, dim=1)
        v = xp.repeat(v, g, axis=1) if is_np else v.repeat_interleave(g, dim=1)
    s = (q @ (k.swapaxes(-1, -2) if is_np else k.transpose(-1, -2))) * scale
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        if is_np:
            hide = xp.arange(sk)[None, :] > xp.arange(sq)[:, None]
            s = xp.where(hide, -math.inf, s)
        else:
            hide = xp.arange(sk, device=s.device)[None, :] > \
                xp.arange(sq, device=s.device)[:, None]
            s = s.masked_fill(hide, -math.inf)
    m = s.max(axis=-1, keepdims=True) if is_np else s.amax(dim=-1, keepdim=True)
    none = xp.isinf(m) & (m < 0)
    m = xp.where(none, xp.zeros_like(m), m)
    p = xp.exp(s - m)
    den = p.sum(axis=-1, keepdims=True) if is_np else p.sum(dim=-1, keepdim=True)
    o = (p @ v) / xp.where(den == 0, xp.ones_like(den), den)
    lse = xp.where(den == 0, -math.inf * xp.ones_like(den), m + xp.log(
        xp.where(den == 0, xp.ones_like(den), den)))
    return o, lse[..., 0]


def _empty_partial(q: Any) -> Tuple[Any, Any]:
    xp = _xp(q)
    if xp.__name__ == "numpy":
        o = xp.zeros(q.shape, dtype="float64")
    else:
        o = xp.zeros(q.shape, dtype=xp.float32, device=q.device)
    lse = -math.inf * xp.ones_like(o[..., 0])
    return o, lse


def _step(q_chunks: Sequence[Any], q_ids: Sequence[int], k_chunks: Sequence[Any],
          v_chunks: Sequence[Any], k_ids: Sequence[int], acc: List[Tuple[Any, Any]],
          kernel: Kernel, scale: float, causal: bool) -> None:
    """Attends each local query chunk to each K/V chunk in hand; merges."""
    for i, (q, iq) in enumerate(zip(q_chunks, q_ids)):
        for k, v, ik in zip(k_chunks, v_chunks, k_ids):
            kind = pair_kind(iq, ik, causal)
            if kind is None or q.shape[-2] == 0 or k.shape[-2] == 0:
                continue
            o, lse = kernel(q, k, v, scale, kind == "causal")
            if _xp(o).__name__ == "numpy":
                acc[i] = merge(acc[i][0], acc[i][1], o, lse)
            else:
                _merge_into(acc[i][0], acc[i][1], o, lse)


def _merge_into(o_a: Any, lse_a: Any, o_b: Any, lse_b: Any) -> None:
    """merge() in place into the float32 accumulators (o_a, lse_a), torch:
    no temporary the size of O (o_b, 16-bit or f32, is weighted inside
    addcmul_), where merge() makes two, so a rank's working memory stays
    near its share."""
    ca, cb, lse = _weights(lse_a, lse_b)
    o_a.mul_(ca[..., None]).addcmul_(o_b, cb[..., None])
    lse_a.copy_(lse)


def simulate_ring(q: Any, k: Any, v: Any, world: int, scale: float, causal: bool,
                  kernel: Kernel = reference_kernel) -> Tuple[Any, Any]:
    """The ring schedule in one process: every rank's steps, K/V chunks
    passed from rank r - 1 to r between steps, outputs unsharded."""
    qs = [shard(q, world, r, causal) for r in range(world)]
    held = [(shard(k, world, r, causal), shard(v, world, r, causal),
             chunk_ids(world, r, causal)) for r in range(world)]
    accs = [[_empty_partial(x) for x in qs[r]] for r in range(world)]
    for _ in range(world):
        for r in range(world):
            kc, vc, ids = held[r]
            _step(qs[r], chunk_ids(world, r, causal), kc, vc, ids, accs[r],
                  kernel, scale, causal)
        held = [held[(r - 1) % world] for r in range(world)]  # r receives from r-1
    o = unshard([[a[0] for a in accs[r]] for r in range(world)], causal)
    lse = unshard([[a[1][..., None] for a in accs[r]] for r in range(world)], causal)
    return o, lse[..., 0]


def ring_attention(q_chunks: Sequence[Any], k_chunks: Sequence[Any],
                   v_chunks: Sequence[Any], seq_len: int, scale: float,
                   causal: bool, kernel: Kernel = reference_kernel,
                   group: Any = None) -> List[Tuple[Any, Any]]:
    """This rank's (O, LSE) per local query chunk (its chunks of `shard` of a
    sequence of `seq_len`), over torch.distributed: the K/V chunks in hand go
    to rank + 1 and the next arrive from rank - 1 (batch_isend_irecv) while
    they are computed."""
    import torch
    import torch.distributed as dist
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    send_to, recv_from = (rank + 1) % world, (rank - 1) % world
    bounds = chunk_bounds(seq_len, num_chunks(world, causal))
    acc = [_empty_partial(x) for x in q_chunks]
    kc, vc = [x.contiguous() for x in k_chunks], [x.contiguous() for x in v_chunks]
    ids = chunk_ids(world, rank, causal)
    for s in range(world):
        reqs, nk, nv = [], [], []
        src = (rank - s - 1) % world  # whose chunks arrive for step s + 1
        if s + 1 < world:
            for x_list, out in ((kc, nk), (vc, nv)):
                for x, c in zip(x_list, chunk_ids(world, src, causal)):
                    shape = list(x.shape)
                    shape[-2] = bounds[c][1] - bounds[c][0]
                    out.append(torch.empty(shape, dtype=x.dtype, device=x.device))
            ops = [dist.P2POp(dist.isend, x, send_to, group) for x in kc + vc] + \
                  [dist.P2POp(dist.irecv, x, recv_from, group) for x in nk + nv]
            reqs = dist.batch_isend_irecv(ops)
        _step(q_chunks, chunk_ids(world, rank, causal), kc, vc, ids, acc,
              kernel, scale, causal)
        for req in reqs:
            req.wait()
        if s + 1 < world:
            kc, vc, ids = nk, nv, chunk_ids(world, src, causal)
    return acc


def bundle_kernel(full: Any, causal: Any) -> Kernel:
    """A chunk-pair kernel from two loaded attn-opt bundles with the lse
    result (attn_opt.load of bundles compiled for [B, H, C, D] chunk pairs,
    one without and one with top-left causal): O in the bundle's type, LSE."""
    def kernel(q: Any, k: Any, v: Any, scale: float, is_causal: bool) -> Tuple[Any, Any]:
        b = causal if is_causal else full
        want = b.manifest.attention.scale
        if abs(want - scale) > 1e-6 * abs(scale):
            raise ValueError(f"the bundle's scale is {want}, the ring asks {scale}")
        o, lse = b(q=q.contiguous(), k=k.contiguous(), v=v.contiguous())
        return o, lse  # 16-bit O: the ring's merge promotes it
    return kernel
