#!/usr/bin/env python3
"""The varlen prefill table: attn-opt's varlen kernels (attn.varlen_mask:
packed [T, H, D] sequences with cu_seqlens) against attn-opt's dense
kernel on the same tokens as a batch of equal sequences, and against the
peers, in one run.

    python3 bench/make_bundles.py --varlen --out bench/varlen_bundles   # here
    python3 bench/bench_varlen.py --bundles bench/varlen_bundles --out OUT  # GPU

Rows (bench/make_bundles.py varlen_configs): T = 16384 tokens, H = 16
heads, D in {64, 128}, fp16, causal (top-left per sequence) and full, S in
{1, 4, 16, 64} sequences:
- "equal": S sequences of T / S tokens. attn-opt varlen (vl_*) against
  attn-opt dense (vd_*: the same memory as [S, T / S, H, D]) -- the issue's
  "varlen >= 0.95x the dense kernel at equal total tokens" -- and against
  SDPA flash and cuDNN on the dense batch, torch's varlen_attn
  (torch.nn.attention.varlen, FlashAttention's varlen kernel) and SDPA on a
  jagged nested tensor;
- "random" (S >= 4): seeded random lengths summing to T (the same vl
  bundle: the tables are arguments), against varlen_attn and nested SDPA.
FlashInfer's BatchPrefillWithRaggedKVCacheWrapper (the same packed q, k, v
and cu_seqlens) joins both where `import flashinfer` works (the device image
has none: `bash bench/flashinfer.sh fetch` here, `install` there).
TFLOP/s count the visible (query, key) pairs: 4 H D sum_s L_s^2 (full) or
4 H D sum_s L_s (L_s + 1) / 2 (causal). Each output is checked against an
fp32 reference on the first and last non-empty sequence before timing;
median of --reps CUDA-event-timed launches after a warm-up (bench_decode's
timer, without its L2 flush).

Writes OUT/varlen.csv and prints per row: us, TFLOP/s, x dense, x best peer.
"""
from __future__ import annotations

import argparse
import inspect
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from attn_opt import bundle as B  # noqa: E402
from bench_decode import import_flashinfer, start_results, timed  # noqa: E402

TOL = 1e-2
COLUMNS = ["config", "lengths", "kernel", "us", "tflops", "vs_dense", "vs_best_peer",
           "rel_err", "note"]
NAME = re.compile(r"vl_(\w+?)_d(\d+)_s(\d+)_(causal|full)")


def random_lengths(torch: Any, seqs: int, total: int, seed: int) -> List[int]:
    """`seqs` positive lengths summing to `total` (sorted cut points)."""
    g = torch.Generator().manual_seed(seed)
    cuts = sorted(torch.randperm(total - 1, generator=g)[:seqs - 1].add(1).tolist())
    edges = [0] + cuts + [total]
    return [b - a for a, b in zip(edges, edges[1:])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "varlen_bundles"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--only", default="", help="comma-separated substrings of names")
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        from torch.nn.attention.varlen import varlen_attn
    except Exception as e:  # pragma: no cover - depends on the torch build
        varlen_attn = None
        print(f"torch varlen_attn unavailable: {e}")
    if varlen_attn is not None:
        import inspect as _inspect
        print(f"torch varlen_attn{_inspect.signature(varlen_attn)}")
    fi, fi_ws = import_flashinfer(torch)
    fh, w = start_results(torch, a.out, "varlen.csv", COLUMNS)
    out_dir = Path(a.out)
    root = Path(a.bundles)
    # Prefill is compute-bound: no L2 flush between launches (bench_decode's
    # timer zeroes this one byte instead).
    no_flush = torch.empty(1, dtype=torch.uint8, device="cuda")
    failures = 0
    for vdir in sorted(root.glob("vl_*")):
        mt = NAME.fullmatch(vdir.name)
        if not mt or (a.only and not any(s in vdir.name for s in a.only.split(","))):
            continue
        dtype, D, S, causal = mt.group(1), int(mt.group(2)), int(mt.group(3)), \
            mt.group(4) == "causal"
        dt = getattr(torch, dtype)
        try:
            ours_k = B.load(vdir)
            dense_k = B.load(root / ("vd" + vdir.name[2:]))
        except Exception as e:
            failures += 1
            print(f"{vdir.name}: load failed: {e}")
            continue
        T, H = ours_k.manifest.arg("q").shape[:2]
        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v = (torch.randn((T, H, D), generator=gen, device="cuda", dtype=dt)
                   for _ in range(3))
        out = torch.empty_like(q)
        scale = 1.0 / math.sqrt(D)
        for kind in ("equal", "random"):
            if kind == "random" and S < 4:
                continue
            lens = [T // S] * S if kind == "equal" else random_lengths(torch, S, T, 11 + S)
            cu_list = [0]
            for n in lens:
                cu_list.append(cu_list[-1] + n)
            cu = torch.tensor(cu_list, dtype=torch.int32, device="cuda")
            pairs = sum(n * (n + 1) // 2 if causal else n * n for n in lens)
            flops = 4 * H * D * pairs
            base = dict(config=vdir.name[3:], lengths=kind if kind == "equal" else
                        f"random {min(lens)}..{max(lens)}")
            rows: List[Dict[str, Any]] = []
            live = [i for i, n in enumerate(lens) if n]
            check_seqs = sorted({live[0], live[-1]})

            def ref_seq(i: int) -> Any:
                sl = slice(cu_list[i], cu_list[i + 1])
                qs, ks, vs = (x[sl].transpose(0, 1).float() for x in (q, k, v))
                s = qs @ ks.transpose(-1, -2) * scale
                if causal:
                    n = s.shape[-1]
                    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device="cuda")
                                      .triu(1), -math.inf)
                return torch.softmax(s, -1) @ vs

            refs = {i: ref_seq(i) for i in check_seqs}

            def check(o: Any) -> float:
                num = den = 0.0
                for i in check_seqs:
                    oi = o[cu_list[i]:cu_list[i + 1]].transpose(0, 1).float()
                    if torch.isnan(oi).any():
                        return math.inf
                    num += float((oi - refs[i]).norm()) ** 2
                    den += float(refs[i].norm()) ** 2
                return math.sqrt(num / den)

            def emit(kernel: str, us: Optional[float], err: Optional[float] = None,
                     note: str = "") -> None:
                row = dict(base, kernel=kernel, note=note)
                if us:
                    row.update(us=f"{us:.1f}", tflops=f"{flops / (us * 1e-6) / 1e12:.0f}")
                if err is not None:
                    row["rel_err"] = f"{err:.2e}"
                rows.append(row)

            times: Dict[str, float] = {}

            def run(name: str, fn: Callable[[], Any], result: Callable[[], Any],
                    note: str = "") -> None:
                try:
                    fn()
                    torch.cuda.synchronize()
                    err = check(result())
                    if err > TOL:
                        emit(name, None, err, note="wrong result")
                        return
                    times[name] = timed(torch, fn, no_flush, a.reps)
                    emit(name, times[name], err, note)
                except Exception as e:
                    emit(name, None, note=f"n/a: {str(e).splitlines()[0][:100]}")

            out.fill_(float("nan"))
            launch = ours_k.prepare(q=q, k=k, v=v, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                    out=out)
            run("attn-opt-varlen", launch, lambda: out,
                ours_k.manifest.attention.kernel_choice[:100])
            if "attn-opt-varlen" not in times:
                failures += 1
            if kind == "equal":
                L = T // S
                qd, kd, vd = (x.view(S, L, H, D) for x in (q, k, v))
                od = torch.empty_like(qd)
                dl = dense_k.prepare(q=qd, k=kd, v=vd, out=od)
                run("attn-opt-dense", dl, lambda: od.view(T, H, D))
                qt, kt, vt = (x.transpose(1, 2) for x in (qd, kd, vd))
                for be_name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                                    ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                    res: Dict[str, Any] = {}

                    def sdpa(be: Any = be, res: Dict[str, Any] = res) -> Any:
                        with sdpa_kernel([be]):
                            res["o"] = F.scaled_dot_product_attention(
                                qt, kt, vt, is_causal=causal)
                        return res["o"]
                    run(be_name, sdpa,
                        lambda res=res: res["o"].transpose(1, 2).reshape(T, H, D))
            if varlen_attn is not None:
                mx = max(lens)
                res2: Dict[str, Any] = {}
                # The causal switch's name differs between torch versions.
                params = inspect.signature(varlen_attn).parameters
                kw: Dict[str, Any] = {}
                if "is_causal" in params:
                    kw["is_causal"] = causal
                elif "window_size" in params:
                    kw["window_size"] = (-1, 0) if causal else (-1, -1)
                elif causal:
                    kw["causal"] = True

                def tv() -> Any:
                    res2["o"] = varlen_attn(q, k, v, cu, cu, mx, mx, **kw)
                    return res2["o"]
                run("torch-varlen", tv, lambda: res2["o"])
            if fi is not None:
                try:
                    wrap = fi.BatchPrefillWithRaggedKVCacheWrapper(fi_ws, "NHD")
                    wrap.plan(cu, cu, H, H, D, causal=causal, q_data_type=dt,
                              kv_data_type=dt)
                    res4: Dict[str, Any] = {}

                    def fiv() -> Any:
                        res4["o"] = wrap.run(q, k, v)
                        return res4["o"]
                    run("flashinfer", fiv, lambda: res4["o"])
                except Exception as e:
                    emit("flashinfer", None, note=f"n/a: {str(e).splitlines()[0][:100]}")
            try:
                nq, nk, nv = (torch.nested.nested_tensor_from_jagged(
                    x, offsets=cu.long()).transpose(1, 2) for x in (q, k, v))
                res3: Dict[str, Any] = {}

                def nested() -> Any:
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        res3["o"] = F.scaled_dot_product_attention(nq, nk, nv,
                                                                   is_causal=causal)
                    return res3["o"]
                run("sdpa-nested-flash", nested,
                    lambda: res3["o"].transpose(1, 2).values())
            except Exception as e:
                emit("sdpa-nested-flash", None, note=f"n/a: {str(e).splitlines()[0][:100]}")
            peers = [times[x] for x in ("sdpa-flash", "sdpa-cudnn", "torch-varlen",
                                        "sdpa-nested-flash", "flashinfer") if x in times]
            ours = times.get("attn-opt-varlen")
            for r in rows:
                if r["kernel"] == "attn-opt-varlen" and ours:
                    if "attn-opt-dense" in times:
                        r["vs_dense"] = f"{times['attn-opt-dense'] / ours:.3f}"
                    if peers:
                        r["vs_best_peer"] = f"{min(peers) / ours:.2f}"
                w.writerow(r)
                print(f"{r['config']:<22} {r['lengths']:<16} " + " ".join(
                    f"{c}={r[c]}" for c in ("kernel", "us", "tflops", "vs_dense",
                                            "vs_best_peer", "rel_err", "note")
                    if r.get(c)), flush=True)
            fh.flush()
        del ours_k, dense_k, q, k, v, out
        torch.cuda.empty_cache()
    fh.close()
    print(f"wrote {out_dir / 'varlen.csv'}; failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
