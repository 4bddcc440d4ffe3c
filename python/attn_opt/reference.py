"""A reference for what a bundle computes, in numpy (float64) or torch (float32).

    S = scale * Q K^T                                     per batch index, [m, n]
    S = score_mod(S, b..., m, n)      when the manifest has attention.score_mod
    S = S + float mask
    S = mask_value  where a bool mask is False, causal and n > m + K, or
                    window and m + K - n >= window       (mask_value: -inf by default;
                                                          K: query_offset, 0 by default)
    M = max(max_n S, sink);  Ms = 0 if M == -inf else M
    P = exp(S - Ms);  l = sum_n P (+ exp(sink - Ms))
    O = 0 if l == 0 else (P V) / l

So a row whose scores are all -inf gives 0, and with a finite mask_value a
row whose keys are all masked averages V uniformly. Operands are read
through the manifest's layouts (bundle.py), missing (or size-1 mask/sink)
dimensions broadcast. The work is cut into chunks of at most `budget`
score elements, and `rows` restricts it to some query rows (for problems too
large to check whole). The same code runs on numpy arrays (CPU tests) and on
torch tensors (the GPU checks); torch is imported only by `TorchOps`.

The score modification (`apply_score_mod`) runs the manifest's straight-line
program elementwise over a whole score tile: floats in the backend's dtype,
integers in int64 (i32 wrapped to 32 bits, i1 as bool); `m` is the query
row (0..M-1, not shifted by query_offset) and `n` the key.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .bundle import (_SCALE_ARG, constant_array, INT64_MIN, INT_WIDTH, SCORE_MOD_OPS, TENSOR_MAPS,
                     WORKSPACE, Manifest, ScoreMod, ScoreModOp)

# ---------------------------------------------------------------------------
# Array backends: the dozen operations the reference needs.
# ---------------------------------------------------------------------------


class NumpyOps:
    def __init__(self, dtype: Any = None) -> None:
        import numpy as np
        self.np = np
        self.dtype = dtype or np.float64

    def asarray(self, x: Any) -> Any:
        x = self.np.asarray(x)
        return x if x.dtype == bool else x.astype(self.dtype)

    def permute(self, x: Any, perm: Sequence[int]) -> Any:
        return self.np.transpose(x, perm)

    def take(self, x: Any, idx: Any, axis: int) -> Any:
        return self.np.take(x, idx, axis=axis)

    def index(self, idx: Sequence[int]) -> Any:
        return self.np.asarray(idx, dtype=self.np.int64)

    def amax(self, x: Any) -> Any:
        return self.np.max(x, axis=-1, keepdims=True)

    def rowsum(self, x: Any) -> Any:
        return self.np.sum(x, axis=-1, keepdims=True)

    def exp(self, x: Any) -> Any:
        with self.np.errstate(over="ignore", under="ignore"):
            return self.np.exp(x)

    def log(self, x: Any) -> Any:
        with self.np.errstate(divide="ignore"):
            return self.np.log(x)

    def maximum(self, a: Any, b: Any) -> Any:
        return self.np.maximum(a, b)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.np.where(c, a, b)

    def empty(self, shape: Sequence[int]) -> Any:
        return self.np.empty(tuple(shape), dtype=self.dtype)

    def f64(self, x: Any) -> Any:
        return self.np.asarray(x, dtype=self.np.float64)

    # For the score modification: `kind` is "float" (self.dtype), "int"
    # (int64) or "bool".
    @property
    def xp(self) -> Any:
        return self.np

    def _dt(self, kind: str) -> Any:
        return {"float": self.dtype, "int": self.np.int64, "bool": bool}[kind]

    def const(self, value: Any, kind: str) -> Any:
        return self.np.asarray(value, dtype=self._dt(kind))

    def cast(self, x: Any, kind: str) -> Any:
        return self.np.asarray(x).astype(self._dt(kind))

    def broadcast(self, x: Any, shape: Sequence[int]) -> Any:
        return self.np.broadcast_to(x, tuple(shape))

    def quiet(self) -> Any:
        return self.np.errstate(all="ignore")


class TorchOps:
    def __init__(self, device: Any = "cuda", dtype: Any = None) -> None:
        import torch
        self.torch = torch
        self.device = device
        self.dtype = dtype or torch.float32

    def asarray(self, x: Any) -> Any:
        t = self.torch.as_tensor(x, device=self.device)
        return t if t.dtype == self.torch.bool else t.to(self.dtype)

    def permute(self, x: Any, perm: Sequence[int]) -> Any:
        return x.permute(*perm)

    def take(self, x: Any, idx: Any, axis: int) -> Any:
        return self.torch.index_select(x, axis % x.dim(), idx)

    def index(self, idx: Sequence[int]) -> Any:
        if isinstance(idx, range):
            return self.torch.arange(idx.start, idx.stop, idx.step,
                                     dtype=self.torch.int64, device=self.device)
        return self.torch.as_tensor(list(idx), dtype=self.torch.int64,
                                    device=self.device)

    def amax(self, x: Any) -> Any:
        return self.torch.amax(x, dim=-1, keepdim=True)

    def rowsum(self, x: Any) -> Any:
        return self.torch.sum(x, dim=-1, keepdim=True)

    def exp(self, x: Any) -> Any:
        return self.torch.exp(x)

    def log(self, x: Any) -> Any:
        return self.torch.log(x)

    def maximum(self, a: Any, b: Any) -> Any:
        return self.torch.maximum(a, b)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.torch.where(c, a, b)

    def empty(self, shape: Sequence[int]) -> Any:
        return self.torch.empty(tuple(shape), dtype=self.dtype, device=self.device)

    def f64(self, x: Any) -> Any:
        return self.torch.as_tensor(x, device=self.device).double()

    @property
    def xp(self) -> Any:
        return self.torch

    def _dt(self, kind: str) -> Any:
        t = self.torch
        return {"float": self.dtype, "int": t.int64, "bool": t.bool}[kind]

    def const(self, value: Any, kind: str) -> Any:
        return self.torch.tensor(value, dtype=self._dt(kind), device=self.device)

    def cast(self, x: Any, kind: str) -> Any:
        return x.to(self._dt(kind))

    def broadcast(self, x: Any, shape: Sequence[int]) -> Any:
        return self.torch.broadcast_to(x, tuple(shape))

    def quiet(self) -> Any:
        return contextlib.nullcontext()


# ---------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------

def to_canonical(ops: Any, x: Any, dims: Sequence[str],
                 target: Sequence[str]) -> Any:
    """x (axes named by `dims`) as a view/array with axes `target`; target
    dims that x lacks get size 1."""
    perm = [list(dims).index(t) for t in target if t in dims]
    extra = [d for d in dims if d not in target]
    if extra:
        raise ValueError(f"dims {extra} of {list(dims)} not in {list(target)}")
    y = ops.permute(x, perm)
    shape = []
    it = iter(y.shape)
    for t in target:
        shape.append(next(it) if t in dims else 1)
    return y.reshape(shape)


def gather_pages(ops: Any, cache: Any, table: Any, page_size: int) -> Any:
    """The logical K or V of a paged cache: `cache` canonical [pages, b1..,
    page_size, x] (its b0 axis counts pages, its n axis slots), `table`
    [B, pages per sequence] (entries clamped to the pages, as the kernel
    does) -> [B, b1.., pages per sequence x page_size, x]."""
    nd = len(cache.shape)
    pages = cache.shape[0]
    n = ops.index(range(table.shape[1] * page_size))
    page = ops.xp.clip(table[:, n // page_size], 0, pages - 1)   # [B, N]
    # [pages, slot, b1.., x] indexed by (page, slot) -> [B, N, b1.., x]
    c = ops.permute(cache, [0, nd - 2] + list(range(1, nd - 2)) + [nd - 1])
    g = c[page, n % page_size]
    return ops.permute(g, [0] + list(range(2, nd - 1)) + [1, nd - 1])


def varlen_keep(cu_q: Sequence[int], cu_k: Sequence[int], M: int, N: int,
                causal: bool, bottom_right: bool) -> Any:
    """attn.varlen_mask as a numpy bool [M, N]: query m of sequence s (rows
    [cu_q[s], cu_q[s+1])) sees keys [cu_k[s], cu_k[s+1]), with `causal`
    those at or before its place (bottom_right: aligned at the last query).
    Entries are clamped to [0, M] / [0, N] as the kernels do."""
    import numpy as np
    keep = np.zeros((M, N), dtype=bool)
    cq = [min(max(int(x), 0), M) for x in cu_q]
    ck = [min(max(int(x), 0), N) for x in cu_k]
    for s in range(len(cq) - 1):
        q0, q1, k0, k1 = cq[s], cq[s + 1], ck[s], ck[s + 1]
        lq, lk = max(q1 - q0, 0), max(k1 - k0, 0)
        if not lq or not lk:
            continue
        if not causal:
            keep[q0:q1, k0:k1] = True
            continue
        off = lk - lq if bottom_right else 0
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        keep[q0:q1, k0:k1] = j <= i + off
    return keep


def canonical_target(man: Manifest, name: str) -> Sequence[str]:
    b = list(man.batch_names)
    return {"q": b + ["m", "d"], "k": b + ["n", "d"], "v": b + ["n", "e"],
            "out": b + ["m", "e"], "mask": b + ["m", "n"],
            "sink": b + ["m"], "lse": b + ["m"]}[name]


def canonical(ops: Any, man: Manifest, name: str, x: Any) -> Any:
    spec = man.arg(name)
    assert spec is not None, name
    return to_canonical(ops, x, spec.dims, canonical_target(man, name))


# ---------------------------------------------------------------------------
# The score modification (attention.score_mod)
# ---------------------------------------------------------------------------

_KIND = {"f32": "float", "i1": "bool", "i32": "int", "i64": "int", "index": "int"}

_FBIN = {
    "arith.addf": lambda xp, x, y: x + y,
    "arith.subf": lambda xp, x, y: x - y,
    "arith.mulf": lambda xp, x, y: x * y,
    "arith.divf": lambda xp, x, y: x / y,
    "arith.maximumf": lambda xp, x, y: xp.maximum(x, y),  # NaN wins
    "arith.minimumf": lambda xp, x, y: xp.minimum(x, y),
    "arith.maxnumf": lambda xp, x, y: xp.fmax(x, y),      # NaN loses
    "arith.minnumf": lambda xp, x, y: xp.fmin(x, y),
    "math.powf": lambda xp, x, y: x ** y,
}
_FUNARY = {
    "arith.negf": lambda xp, x: -x,
    "arith.extf": lambda xp, x: x,    # every float is computed as f32
    "arith.truncf": lambda xp, x: x,
    "math.tanh": lambda xp, x: xp.tanh(x),
    "math.exp": lambda xp, x: xp.exp(x),
    "math.exp2": lambda xp, x: xp.exp2(x),
    "math.log": lambda xp, x: xp.log(x),
    "math.log2": lambda xp, x: xp.log2(x),
    "math.sqrt": lambda xp, x: xp.sqrt(x),
    "math.rsqrt": lambda xp, x: 1 / xp.sqrt(x),
    "math.absf": lambda xp, x: xp.abs(x),
}
_REL = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


def _sext(ops: Any, x: Any, t: str) -> Any:
    """An integer value as int64, read as signed (i1 true: -1)."""
    return -ops.cast(x, "int") if t == "i1" else x


def _zext(ops: Any, x: Any, t: str) -> Any:
    """An integer value as int64, read as unsigned (64-bit ones keep their bits)."""
    if t == "i1":
        return ops.cast(x, "int")
    return x & 0xFFFFFFFF if t == "i32" else x


def _wrap(x: Any, t: str) -> Any:
    """int64 x truncated to type t (i32 sign-extended back, i1 as bool)."""
    if t == "i1":
        return (x & 1) != 0
    return ((x + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31 if t == "i32" else x


def _ukey(ops: Any, x: Any, t: str) -> Any:
    """int64 whose signed order is x's unsigned order."""
    return x ^ INT64_MIN if t in ("i64", "index") else _zext(ops, x, t)


def _eval_op(ops: Any, o: ScoreModOp, a: List[Any], ta: List[str],
             args: Optional[Mapping[str, Any]] = None) -> Any:
    xp, name, t = ops.xp, o.op, o.type
    kind = SCORE_MOD_OPS[name]
    if kind == "const":
        return ops.const(o.value, _KIND[t])
    if kind == "arg":  # the tensor `o.name` (its own layout) at the indices
        x = (args or {}).get(o.name)
        if x is None:
            raise ValueError(f"score_mod reads {o.name!r}, which was not given")
        idx = tuple(xp.clip(i, 0, d - 1) for i, d in zip(a, x.shape))
        return ops.cast(x[idx], _KIND[t])
    if kind == "table":  # out-of-range indices are clamped
        flat: Any = 0
        for i, d in zip(a, o.shape):
            flat = flat * d + xp.clip(i, 0, d - 1)
        return ops.const(list(o.values), _KIND[t])[flat]
    if kind == "fbin":
        return _FBIN[name](xp, a[0], a[1])
    if kind == "funary":
        return _FUNARY[name](xp, a[0])
    if kind == "iunary":  # math.absi, wrapping (|INT_MIN| is INT_MIN)
        return _wrap(xp.abs(_sext(ops, a[0], t)), t)
    if kind == "ibin":
        x, y = _sext(ops, a[0], t), _sext(ops, a[1], t)
        if name in ("arith.floordivsi", "arith.ceildivsi"):
            # Rounded down (up); x / 0 (undefined) gives x, and -1 avoids
            # INT64_MIN / -1, as for divsi.
            y1 = xp.where((y == 0) | (y == -1), 1, y)
            q = x // y1
            if name == "arith.ceildivsi":  # one more where inexact (no -x: INT64_MIN)
                q = q + ((x - q * y1) != 0)
            return _wrap(xp.where(y == -1, -x, q), t)
        if name in ("arith.shrsi", "arith.shli"):
            # A shift past the width is undefined: taken as width - 1.
            w = INT_WIDTH.get(t, 64)
            c = xp.where(y < 0, 0, xp.where(y >= w, w - 1, y))
            return _wrap(x >> c if name == "arith.shrsi" else x << c, t)
        if name in ("arith.maxsi", "arith.minsi"):
            return _wrap(xp.maximum(x, y) if name == "arith.maxsi" else xp.minimum(x, y), t)
        if name in ("arith.divsi", "arith.remsi"):
            # Truncating; x / 0 (undefined) gives x, and -1 avoids INT64_MIN / -1.
            y1 = xp.where((y == 0) | (y == -1), 1, y)
            r = xp.fmod(x, y1)
            if name == "arith.remsi":
                return _wrap(r, t)
            return _wrap(xp.where(y == -1, -x, (x - r) // y1), t)
        return _wrap({"arith.addi": lambda: x + y, "arith.subi": lambda: x - y,
                      "arith.muli": lambda: x * y, "arith.andi": lambda: x & y,
                      "arith.ori": lambda: x | y, "arith.xori": lambda: x ^ y}[name](), t)
    if kind == "cmpf":
        x, y, p = a[0], a[1], o.predicate
        nan = xp.isnan(x) | xp.isnan(y)
        if p in ("true", "false"):
            return nan | True if p == "true" else nan & False
        if p in ("ord", "uno"):
            return ~nan if p == "ord" else nan
        rel = _REL[p[1:]](x, y)
        return (~nan & rel) if p[0] == "o" else (nan | rel)
    if kind == "cmpi":
        p = o.predicate
        if p[0] == "u":
            return _REL[p[1:]](_ukey(ops, a[0], ta[0]), _ukey(ops, a[1], ta[1]))
        return _REL[p[-2:]](_sext(ops, a[0], ta[0]), _sext(ops, a[1], ta[1]))
    if kind == "select":
        return xp.where(a[0], a[1], a[2])
    x, src = a[0], ta[0]
    if kind == "itofp":
        if name == "arith.sitofp":
            return ops.cast(_sext(ops, x, src), "float")
        f = ops.cast(_zext(ops, x, src), "float")
        return xp.where(x < 0, f + 2.0 ** 64, f) if src == "i64" else f
    # index_cast(ui), ext(s|u)i, trunci: widen by the op's signedness, then
    # truncate to the result type.
    unsigned = name in ("arith.index_castui", "arith.extui")
    return _wrap(_zext(ops, x, src) if unsigned else _sext(ops, x, src), t)


def apply_score_mod(sm: ScoreMod, s: Any, batch: Sequence[Any], m: Any, n: Any,
                    ops: Any, args: Optional[Mapping[str, Any]] = None) -> Any:
    """score_mod(s, b_0.., b_{r-1}, m, n), elementwise, as the kernels apply it
    to the scaled scores. `s`: scores [b..., rows, N] in ops.dtype; `batch`
    (one per batch dim), `m`, `n`: int64 index arrays that broadcast against
    it (arange views: b_i [.., -1, .., 1, 1], m [rows, 1], n [1, N]). Returns
    the modified scores, of s's shape and dtype."""
    vals: List[Any] = [s, *batch, m, n]
    types = sm.types
    with ops.quiet():
        for o in sm.ops:
            vals.append(_eval_op(ops, o, [vals[i] for i in o.operands],
                                 [types[i] for i in o.operands], args))
        out = ops.cast(vals[sm.result], "float")
    return ops.broadcast(out, s.shape)


def score_mod_indices(ops: Any, bsizes: Sequence[int], b0: int, b1: int,
                      rows: Sequence[int], N: int) -> Any:
    """(batch, m, n) index arrays for apply_score_mod on the scores of batch
    entries b0..b1-1 of the first batch dim (all of the others), query rows
    `rows` and every key."""
    r = len(bsizes)
    batch = []
    for i in range(r):
        lo, hi = (b0, b1) if i == 0 else (0, bsizes[i])
        batch.append(ops.index(range(lo, hi)).reshape(
            [-1 if j == i else 1 for j in range(r)] + [1, 1]))
    return (batch, ops.index(list(rows)).reshape(-1, 1),
            ops.index(range(N)).reshape(1, -1))


# ---------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------

def effective_scales(att: Any, inputs: Mapping[str, Any]
                     ) -> Tuple[float, float]:
    """The score scale and V's scale with the runtime factors applied:
    attention.scale (value_scale) times, or divided by, each factor's
    element of its scale<i> input, in f32 as the kernel computes them."""
    import numpy as np

    def apply(c: float, factors: Sequence[Any]) -> float:
        if not factors:
            return c  # the manifest's constant, as it is
        acc = np.float32(c)
        for arg, index, divide in factors:
            x = inputs[arg][tuple(index)]
            x = np.float32(float(x.float() if hasattr(x, "float") else x))
            acc = np.float32(acc / x) if divide else np.float32(acc * x)
        return float(acc)
    return (apply(att.scale, att.scale_factors),
            apply(att.value_scale, att.value_scale_factors))


def reference(man: Manifest, inputs: Mapping[str, Any], ops: Any,
              rows: Optional[Sequence[int]] = None,
              budget: int = 1 << 26, with_lse: bool = False) -> Any:
    """Canonical [b..., len(rows) or M, e] output in `ops.dtype`; with
    `with_lse`, also the canonical [b..., len(rows) or M] log-sum-exp (the
    sink included, -inf for a fully masked row): (out, lse)."""
    att = man.attention
    scale, value_scale = effective_scales(att, inputs)
    sizes = man.sizes()
    r = att.batch_dims
    M, N, E = sizes["m"], sizes["n"], sizes["e"]
    bsizes = [sizes[b] for b in man.batch_names]
    row_list = list(range(M)) if rows is None else [int(i) for i in rows]
    R = len(row_list)

    # The bundle's own data for its constant arguments.
    inputs = dict(inputs)
    for spec in man.args:
        if spec.constant is not None and spec.name not in inputs:
            x = constant_array(man, spec.name)
            inputs[spec.name] = (ops.torch.as_tensor(x, device=ops.device)
                                 if isinstance(ops, TorchOps) else x)

    def load(name: str) -> Any:
        x = inputs.get(name)
        if x is None:
            return None
        return canonical(ops, man, name, ops.asarray(x))

    q, k, v = load("q"), load("k"), load("v")
    if att.paged is not None:
        table = ops.cast(inputs["block_table"], "int")
        k, v = (gather_pages(ops, x, table, att.paged[0]) for x in (k, v))
    mask, sink = load("mask"), load("sink")
    if att.kv_lens_dim is not None:
        # Keys n >= kv_lens[b] masked: a bool mask [1.., B, 1.., 1, N].
        lens = ops.cast(inputs["kv_lens"], "int")
        keep = ops.index(range(N))[None, :] < lens[:, None]      # [B, N]
        shape = [1] * r + [1, N]
        shape[att.kv_lens_dim] = bsizes[att.kv_lens_dim]
        mask = keep.reshape(shape)
    if att.varlen is not None:
        # Packed sequences: a bool mask [1.., M, N] from the tables.
        tables = [inputs[n].tolist() for n in ("cu_seqlens_q", "cu_seqlens_k")]
        keep = varlen_keep(*tables, M, N, att.varlen[1], att.varlen[2])
        mask = ops.asarray(keep).reshape([1] * r + [M, N])
    if sink is not None:
        sink = sink.reshape(list(sink.shape) + [1])  # [b..., m, 1]
    if rows is not None:
        idx = ops.index(row_list)
        q = ops.take(q, idx, -2)
        if mask is not None and mask.shape[-2] != 1:
            mask = ops.take(mask, idx, -2)
        if sink is not None and sink.shape[-2] != 1:
            sink = ops.take(sink, idx, -2)
    mv = att.mask_value
    out = ops.empty(bsizes + [R, E])
    lse = ops.empty(bsizes + [R, 1]) if with_lse else None

    # Chunks: query rows, then slices of the first batch dim.
    per_row = max(1, math.prod(bsizes[1:]) * N)
    rows_fit = max(1, budget // per_row)
    if rows_fit >= R and r >= 1:
        cm, cb = R, max(1, min(bsizes[0], rows_fit // max(R, 1)))
    else:
        cm, cb = min(R, rows_fit), 1
    nb = bsizes[0] if r >= 1 else 1

    def bslice(x: Any, b0: int, b1: int) -> Any:
        if x is None or r == 0 or x.shape[0] == 1:
            return x
        return x[b0:b1]

    def rslice(x: Any, i0: int, i1: int) -> Any:
        if x is None or x.shape[-2] == 1:
            return x
        return x[..., i0:i1, :]

    for b0 in range(0, nb, cb):
        b1 = min(nb, b0 + cb)
        qb, kb, vb = bslice(q, b0, b1), bslice(k, b0, b1), bslice(v, b0, b1)
        mb, sb = bslice(mask, b0, b1), bslice(sink, b0, b1)
        for i0 in range(0, R, max(cm, 1)):
            i1 = min(R, i0 + cm)
            s = (rslice(qb, i0, i1) @ kb.swapaxes(-1, -2)) * scale
            if att.score_mod is not None:
                bi, mi, ni = score_mod_indices(ops, bsizes, b0, b1,
                                               row_list[i0:i1], N)
                mods = {n: ops.asarray(x) for n, x in inputs.items()
                        if n.startswith("mod")}
                s = apply_score_mod(att.score_mod, s, bi, mi, ni, ops, mods)
            mc = rslice(mb, i0, i1)
            if mc is not None:
                if str(mc.dtype).endswith("bool"):
                    s = ops.where(mc, s, mv)
                else:
                    s = s + mc
            if att.causal or att.window is not None:
                # Query m sits at key m + query_offset (bottom-right causal).
                m_idx = ops.index([r + att.query_offset for r in row_list[i0:i1]]
                                  ).reshape(-1, 1)
                n_idx = ops.index(range(N)).reshape(1, -1)
                if att.causal:
                    s = ops.where(n_idx > m_idx, mv, s)
                if att.window is not None:
                    s = ops.where(m_idx - n_idx >= att.window, mv, s)
            mx = ops.amax(s)
            sc = rslice(sb, i0, i1)
            if sc is not None:
                mx = ops.maximum(mx, sc)
            ms = ops.where(mx == -math.inf, 0.0, mx)
            p = ops.exp(s - ms)
            denom = ops.rowsum(p)
            if sc is not None:
                denom = denom + ops.exp(sc - ms)
            o = p @ vb
            safe = ops.where(denom == 0, 1.0, denom)
            o = ops.where(denom == 0, 0.0, o / safe)
            if value_scale != 1.0:
                o = o * value_scale
            if r >= 1:
                out[b0:b1, ..., i0:i1, :] = o
            else:
                out[i0:i1, :] = o
            if lse is not None:
                lc = ops.where(denom == 0, -math.inf, ms + ops.log(safe))
                if r >= 1:
                    lse[b0:b1, ..., i0:i1, :] = lc
                else:
                    lse[i0:i1, :] = lc
    if lse is not None:
        return out, lse[..., 0]
    return out


def select_rows(M: int, max_rows: int, seed: int = 0) -> Optional[Sequence[int]]:
    """All rows (None) when M <= max_rows, else the first and last few and a
    seeded random sample in between, sorted."""
    if M <= max_rows:
        return None
    import random
    edge = min(16, max_rows // 4)
    chosen = set(range(edge)) | set(range(M - edge, M))
    rng = random.Random(seed)
    rest = [i for i in range(edge, M - edge)]
    chosen |= set(rng.sample(rest, max_rows - len(chosen)))
    return sorted(chosen)


def rows_for_budget(man: Manifest, flops: float, seed: int = 0
                    ) -> Optional[Sequence[int]]:
    """Query rows to check so that the reference costs about `flops`."""
    s = man.sizes()
    per_row = 2.0 * s["n"] * (s["d"] + s["e"]) * math.prod(
        s[b] for b in man.batch_names)
    return select_rows(s["m"], max(8, int(flops // per_row)), seed)


def rel_error(ops: Any, out: Any, ref: Any) -> float:
    """||out - ref|| / ||ref|| in float64 (absolute when ref is 0); NaN when
    out has a NaN."""
    o, rr = ops.f64(out), ops.f64(ref)
    num = float(((o - rr) ** 2).sum()) ** 0.5
    den = float((rr ** 2).sum()) ** 0.5
    return num / den if den > 0 else num


# The lowest finite value of each float dtype (finfo.min).
LOWEST = {"float16": -65504.0, "bfloat16": -3.3895313892515355e38,
          "float32": -3.4028234663852886e38}


def tile_pattern_mask(dims: Sequence[str], shape: Sequence[int], seed: int) -> Any:
    """A bool mask (numpy) whose 64-row x 128-key blocks are all False,
    all True or mixed (~85% True), as key padding and block-sparse masks
    are: with a query dim, each block by a hash of its indices; without one
    (key padding), keys past a random length per batch entry (at least a
    quarter of the keys; with three or more entries the second has none)
    are False."""
    import numpy as np
    rng = np.random.default_rng(seed * 31 + 7)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    at = dict(zip(dims, grids))
    n = at["n"]
    mixed = rng.random(tuple(shape)) < 0.85
    if "m" in at:
        code = (3 * (at["m"] // 64) + (n // 128) * 5 + 1) % 7 % 3
        return np.where(code == 0, False, np.where(code == 1, True, mixed))
    N = shape[dims.index("n")]
    batch = [d for d in dims if d != "n"]
    lens = rng.integers(max(1, N // 4), N + 1, size=tuple(shape[dims.index(d)] for d in batch))
    if lens.size >= 3:
        lens.flat[1] = 0  # a batch entry with no key at all
    idx = tuple(at[d] for d in batch)
    return n < (lens[idx] if batch else lens)


def make_inputs(man: Manifest, ops: Any, seed: int,
                fully_masked_rows: int = 2, lowest_row: bool = True,
                mask_pattern: str = "") -> Dict[str, Any]:
    """Random inputs of the manifest's shapes/dtypes: q, k, v, sink ~ N(0, 1);
    a bool mask keeps ~85% of keys, a float mask is N(0, 1) with ~10% -inf;
    `fully_masked_rows` query rows of the mask mask every key, and a float
    mask has one more row of its dtype's lowest finite value (a padding
    bias as Hugging Face writes it, finfo.min: every key equally far, so the
    row averages V) unless `lowest_row` is False. `mask_pattern` "tiles":
    a bool mask by tile_pattern_mask instead; "equal_seqs": varlen tables
    of equal lengths (equal_cu_seqlens). Returns
    backend arrays of the manifest dtypes (numpy: bfloat16 unsupported)."""
    out: Dict[str, Any] = {}
    is_torch = isinstance(ops, TorchOps)
    if is_torch:
        torch = ops.torch
        gen = torch.Generator(device=ops.device).manual_seed(seed)

        def randn(shape: Sequence[int]) -> Any:
            return torch.randn(tuple(shape), generator=gen, device=ops.device)

        def rand(shape: Sequence[int]) -> Any:
            return torch.rand(tuple(shape), generator=gen, device=ops.device)

        def cast(x: Any, dt: str) -> Any:
            return x.to(getattr(torch, dt)).contiguous()
    else:
        np = ops.np
        rng = np.random.default_rng(seed)

        def randn(shape: Sequence[int]) -> Any:
            return rng.standard_normal(tuple(shape))

        def rand(shape: Sequence[int]) -> Any:
            return rng.random(tuple(shape))

        def cast(x: Any, dt: str) -> Any:
            if dt == "bfloat16":
                raise ValueError("numpy has no bfloat16")
            # astype(order="C"): contiguous, and 0-d stays 0-d (a scale).
            return np.asarray(x).astype(dt, order="C")

    for spec in man.args:
        if (spec.name == "out" or spec.name in WORKSPACE or spec.name in TENSOR_MAPS
                or spec.constant is not None):  # the bundle's own data
            continue
        if spec.name == "kv_lens":
            # Lengths in [0, N]: one empty sequence and one full where there
            # are several.
            n = man.sizes()["n"]
            lens = ops.xp.floor(rand(spec.shape) * (n + 1))
            if spec.shape[0] > 1:
                lens[0] = 0
                lens[-1] = n
            out[spec.name] = cast(lens, "int32")
            continue
        if spec.name in ("cu_seqlens_q", "cu_seqlens_k"):
            # Nondecreasing from 0 to the token count, one table per side
            # drawn alike (same seed offset): sequences of random lengths,
            # with an empty one where there are several.
            T = man.sizes()["m" if spec.name == "cu_seqlens_q" else "n"]
            cu = (equal_cu_seqlens if mask_pattern == "equal_seqs"
                  else random_cu_seqlens)(spec.shape[0] - 1, T, seed)
            if is_torch:
                cu = torch.as_tensor(cu, device=ops.device)
            out[spec.name] = cast(cu, "int32")
            continue
        if spec.name == "block_table":
            # Random pages (repeats allowed: pages shared by sequences).
            pages = man.attention.paged[1] if man.attention.paged else 1
            out[spec.name] = cast(ops.xp.floor(rand(spec.shape) * pages), "int32")
            continue
        if _SCALE_ARG.fullmatch(spec.name):
            # Runtime per-tensor scales: positive, 0.25 to 2.
            out[spec.name] = cast(0.25 + 1.75 * rand(spec.shape), spec.dtype)
            continue
        if spec.dtype in ("int32", "int64"):
            # Integer score_mod tensors are ids (packed documents' segment
            # ids): see segment_ids; `mask_pattern` "ids" gives them in any
            # order, "ids_big" (int64) times 2^31.
            ids = segment_ids(spec.shape, seed, sort=mask_pattern != "ids")
            if mask_pattern == "ids_big" and spec.dtype == "int64":
                ids = ids * (1 << 31)  # past int32 from the second id on
            if is_torch:
                ids = torch.as_tensor(ids, device=ops.device)
            out[spec.name] = cast(ids, spec.dtype)
            continue
        if spec.name != "mask":
            out[spec.name] = cast(randn(spec.shape), spec.dtype)
            continue
        if mask_pattern == "tiles" and spec.dtype == "bool":
            keep = tile_pattern_mask(spec.dims, spec.shape, seed)
            if is_torch:
                keep = torch.as_tensor(keep, device=ops.device)
            out["mask"] = cast(keep, "bool")
            continue
        # Masked keys: ~15% (bool) or ~10% (-inf in a float mask), plus a few
        # whole query rows when the mask has both m and n.
        dead = rand(spec.shape) >= (0.85 if spec.dtype == "bool" else 0.9)
        lowest = None  # the finfo.min row's index into the mask
        if fully_masked_rows > 0 and "m" in spec.dims and "n" in spec.dims:
            ax = spec.dims.index("m")
            M = spec.shape[ax]
            if M > 1:
                sel = [slice(None)] * len(spec.shape)
                rows = sorted({(7 * j + 3) % M for j in range(fully_masked_rows)})
                for i in rows:
                    sel[ax] = slice(i, i + 1)
                    dead[tuple(sel)] = True
                low = (7 * fully_masked_rows + 3) % M
                if lowest_row and spec.dtype != "bool" and M > 2 and low not in rows:
                    sel[ax] = slice(low, low + 1)
                    lowest = tuple(sel)
        if spec.dtype == "bool":
            out["mask"] = cast(~dead, "bool")
        else:
            vals = ops.where(dead, -math.inf, randn(spec.shape))
            if lowest is not None:
                vals[lowest] = LOWEST[spec.dtype]
            out["mask"] = cast(vals, spec.dtype)
    return out


def segment_ids(shape: Sequence[int], seed: int, sort: bool = True) -> Any:
    """Segment ids (numpy int64) of packed documents along the last axis:
    per leading index, nondecreasing from 0 over 1 to L / 100 documents of
    random lengths (some shorter than a tile, some spanning several); with
    `sort` False, ids in [0, 4) in any order. Arrays of one last length get
    the same ids per leading index (a program's query and key ids)."""
    import numpy as np
    shape = tuple(int(x) for x in shape)
    L = shape[-1] if shape else 1
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    out = np.zeros((rows, L), dtype=np.int64)
    for i in range(rows):
        rng = np.random.default_rng(seed * 104729 + L * 31 + i)
        if not sort:
            out[i] = rng.integers(0, 4, size=L)
            continue
        docs = int(rng.integers(1, max(2, L // 100) + 1))
        cuts = np.sort(rng.integers(1, L, size=docs - 1)) if L > 1 else []
        out[i] = np.searchsorted(cuts, np.arange(L), side="right")
    return out.reshape(shape)


def random_cu_seqlens(seqs: int, total: int, seed: int) -> Any:
    """Cumulative lengths (numpy int64, seqs + 1 entries, 0 .. total) of
    `seqs` random sequences summing to `total`; with 3 or more sequences
    the second is empty."""
    import numpy as np
    rng = np.random.default_rng(seed * 7919 + seqs)
    cuts = np.sort(rng.integers(0, total + 1, size=seqs - 1))
    cu = np.concatenate([[0], cuts, [total]]).astype(np.int64)
    if seqs >= 3:
        cu[2] = cu[1]
        cu[2:] = np.maximum.accumulate(cu[2:])
    return cu


def equal_cu_seqlens(seqs: int, total: int, seed: int = 0) -> Any:
    """Cumulative lengths (numpy int64) of `seqs` sequences as equal as
    they go (the first ones one token longer), with 3 or more sequences the
    second empty, as random_cu_seqlens: the tables the varlen kernels take
    by levels (WgmmaKernel), where random ones take slots. `seed` unused."""
    import numpy as np
    live = seqs - 1 if seqs >= 3 else seqs
    base, extra = divmod(total, live)
    lens = [base + (1 if i < extra else 0) for i in range(live)]
    if seqs >= 3:
        lens.insert(1, 0)
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def make_problem(dtype: str = "float16", batch: Sequence[int] = (2,), M: int = 8,
                 N: int = 8, D: int = 4, E: Optional[int] = None, *,
                 causal: bool = False, window: Optional[int] = None,
                 mask: Optional[str] = None, sink: bool = False,
                 mask_value: Optional[float] = None, scale: Optional[float] = None,
                 query_offset: int = 0,
                 score_mod: Optional[Mapping[str, Any]] = None,
                 layout: Optional[Mapping[str, Sequence[str]]] = None,
                 shapes: Optional[Mapping[str, Sequence[int]]] = None) -> Manifest:
    """A manifest (no kernel files) for an attention problem: for tests, the
    GPU self-check and benchmark configs with no bundle. `mask` is its dtype
    (None: no mask); `layout` maps an operand to its dims (default
    canonical); `shapes` overrides a shape (a size-1 mask dim broadcasts);
    `score_mod` is attention.score_mod as the manifest holds it."""
    from .bundle import FORMAT, parse_manifest, seal
    E = D if E is None else E
    batch = [int(x) for x in batch]
    M, N, D, E = int(M), int(N), int(D), int(E)
    r = len(batch)
    b = [f"b{i}" for i in range(r)]
    size = dict(zip(b, batch), m=M, n=N, d=D, e=E)
    dims = {"q": b + ["m", "d"], "k": b + ["n", "d"], "v": b + ["n", "e"],
            "mask": b + ["m", "n"], "sink": b + ["m"], "out": b + ["m", "e"]}
    dims.update({k: list(v) for k, v in (layout or {}).items()})
    names = ["q", "k", "v"] + (["mask"] if mask else []) + (["sink"] if sink else []) + ["out"]
    args = []
    for n in names:
        shape = [int(x) for x in (shapes or {}).get(n, [size[x] for x in dims[n]])]
        args.append({"name": n, "dtype": mask if n == "mask" else dtype,
                     "shape": shape})
    # A SIMT-style launch that covers the problem (no kernel runs it).
    if mask_value is None or mask_value == -math.inf:
        mv: object = "-inf"
    elif mask_value == math.inf:
        mv = "inf"
    else:
        mv = float(mask_value)
    tile_q = 128
    q_shape, q_dims = args[0]["shape"], list(dims["q"])
    m_size = q_shape[q_dims.index("m")] if "m" in q_dims else 1
    b_prod = math.prod(q_shape[q_dims.index(x)] for x in b if x in q_dims)
    obj = {"format": FORMAT, "kernel": "reference", "chip": "", "ptx": "none.ptx",
           "args": args, "grid": [-(-m_size // tile_q), b_prod, 1],
           "block": [tile_q, 1, 1], "shared_bytes": 0,
           "attention": {"scale": 1.0 / math.sqrt(D) if scale is None else float(scale),
                         "causal": causal, "window": window,
                         "query_offset": int(query_offset),
                         "mask_value": mv, "batch_dims": r, "tile_q": tile_q,
                         "layout": {n: dims[n] for n in names}}}
    if score_mod is not None:
        obj["attention"]["score_mod"] = dict(score_mod)
    return parse_manifest(seal(obj, b""))
