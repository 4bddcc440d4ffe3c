"""A FlashAttention-style forward kernel in Triton: the Triton peer of the
attention benchmark (bench_attention.py).

One program per (BLOCK_M query rows, batch*head); it walks the keys in
BLOCK_N tiles with the online softmax (running max m, sum l, f32
accumulator; exp2 with log2(e) folded into the scale) and divides once.
Causal attention (top-left aligned, key n visible to query m iff n <= m)
splits the key loop into unmasked tiles below the diagonal and masked tiles
on it, and skips the tiles above. Inputs are [Z, H, N, D] tensors with any
strides (last dim contiguous); N must be a multiple of BLOCK_M and BLOCK_N.

    out = attention(q, k, v, causal, scale, block_m=128, block_n=64, num_warps=8)
    variants()  # the tuning space the benchmark searches
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator, Tuple

import torch
import triton
import triton.language as tl


@triton.jit
def _inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_kn, stride_kd, stride_vn,
           stride_vd, offs_m, offs_n, offs_d, lo, hi, qk_scale,
           BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k = tl.load(k_ptr + cols[:, None] * stride_kn + offs_d[None, :] * stride_kd)
        qk = tl.dot(q, tl.trans(k))
        if MASKED:
            qk = qk * qk_scale + tl.where(offs_m[:, None] >= cols[None, :], 0.0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit(do_not_specialize=["H"])  # H == 1 (one head) would compile anew
def _attn_fwd(Q, K, V, O, sm_scale,
              s_qz, s_qh, s_qm, s_qd, s_kz, s_kh, s_kn, s_kd,
              s_vz, s_vh, s_vn, s_vd, s_oz, s_oh, s_om, s_od,
              H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = (off_hz // H).to(tl.int64)
    off_h = (off_hz % H).to(tl.int64)
    q_ptr = Q + off_z * s_qz + off_h * s_qh
    k_ptr = K + off_z * s_kz + off_h * s_kh
    v_ptr = V + off_z * s_vz + off_h * s_vh
    o_ptr = O + off_z * s_oz + off_h * s_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * s_qm + offs_d[None, :] * s_qd)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504089
    if CAUSAL:
        # keys [0, full) are visible to every row of the tile
        full = (start_m * BLOCK_M // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, s_kn, s_kd, s_vn, s_vd,
                               offs_m, offs_n, offs_d, 0, full, qk_scale,
                               BLOCK_N, False)
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, s_kn, s_kd, s_vn, s_vd,
                               offs_m, offs_n, offs_d, full, hi, qk_scale,
                               BLOCK_N, True)
    else:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, s_kn, s_kd, s_vn, s_vd,
                               offs_m, offs_n, offs_d, 0, N_CTX, qk_scale,
                               BLOCK_N, False)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * s_om + offs_d[None, :] * s_od,
             acc.to(O.dtype.element_ty))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
              scale: float, block_m: int = 128, block_n: int = 64,
              num_warps: int = 8, num_stages: int = 3,
              out: Any = None) -> torch.Tensor:
    """softmax(scale * q k^T) v for [Z, H, N, D] q, k, v (same N for all)."""
    Z, H, N, D = q.shape
    assert k.shape == v.shape == q.shape, "self-attention shapes only"
    assert D in (16, 32, 64, 128, 256), f"head dim {D}"
    assert N % block_m == 0 and N % block_n == 0, \
        f"N={N} must be a multiple of BLOCK_M={block_m} and BLOCK_N={block_n}"
    assert q.stride(-1) == k.stride(-1) == v.stride(-1) == 1
    o = torch.empty_like(q) if out is None else out
    grid = (N // block_m, Z * H)
    _attn_fwd[grid](q, k, v, o, scale,
                    *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                    H, N, HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n,
                    CAUSAL=causal, num_warps=num_warps, num_stages=num_stages)
    return o


def variants(quick: bool = False) -> Iterator[Tuple[int, int, int]]:
    """(BLOCK_M, BLOCK_N, num_warps) candidates."""
    if quick:
        yield from [(128, 64, 4), (128, 64, 8), (128, 128, 8), (64, 64, 4)]
        return
    yield from itertools.product((64, 128), (32, 64, 128), (4, 8))

