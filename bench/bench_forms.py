#!/usr/bin/env python3
"""The "forms" table: attention with the score modifications frontends
write, attn-opt against the best peer for each form, same inputs, one run.

    python3 bench/make_bundles.py --forms --out bench/forms_bundles     # here
    python3 bench/bench_forms.py --bundles bench/forms_bundles --out OUT  # GPU

Forms (bench/make_bundles.py FORMS), fp16 and bf16, D = 128 (plain and
causal also at D = 80, 96, 256: the head-dim rows, against SDPA flash and
cuDNN), H = 16,
N in {1024, 4096, 16384} at 16k tokens per batch (B = 16384 / N):
  plain           no modification (attn-opt's own baseline for the ratios)
  causal          top-left causal, -inf
  bias            a float bias per head [H, N, N], broadcast over the batch
  padmask         key padding, bool [B, N] (per-batch valid lengths N/2..N)
  causal_jaxfill  causal with JAX's fill (-0.7 * f32 max) instead of -inf
  sink            one sink logit per head (gpt-oss)
  softcap         Gemma-2's soft-capping, 50 tanh(s / 50) of the scaled
                  scores (a score_mod region), causal
  alibi           ALiBi, s + slope_h (n - m) with slope_h = 2^(-8 (h+1) / H)
                  computed in the region from the head index, causal
  alibi_full      ALiBi without causal, s - slope_h |n - m|
  window          a causal sliding window of 512 keys (m - 512 < n <= m);
                  its TFLOP/s count the products it needs
Peers, each timed in the same run on the same inputs:
  SDPA with attn_mask (cuDNN and memory-efficient backends) for bias,
  padmask, alibi and alibi_full (its bias materialized [H, N, N] in the
  input dtype, the causal -inf folded in) and window (a bool [N, N]
  mask); SDPA flash (is_causal) for causal and causal_jaxfill (the same
  numbers: no row is fully masked); FlexAttention
  (torch.compile(flex_attention)) with the equivalent score_mod (bias,
  softcap: 50 tanh(score / 50), alibi: score + slope[h] (kv_idx - q_idx),
  alibi_full: score - slope[h] |kv_idx - q_idx|) and block_mask (padmask,
  the causal forms, softcap, alibi, window). The sink has
  no peer kernel here (SDPA and FlexAttention take no sink); its row
  compares with attn-opt's plain.
Each kernel's output is checked against the fp32 reference
(attn_opt.reference, sampled rows, ||out-ref||/||ref|| <= 1e-2, no NaN;
the bundle's score_mod applied, so softcap/alibi bundles must carry
attention.score_mod) before it is timed (CUDA events, median). Writes
OUT/forms.csv and prints a table: TFLOP/s per kernel, attn-opt / best peer,
attn-opt / attn-opt plain (same dtype and N; causal forms, softcap and alibi
against attn-opt causal).
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402
from bench_attention import run_once, time_kernel  # noqa: E402
from make_bundles import FORMS, SOFTCAP, WINDOW  # noqa: E402

TOL = 1e-2
COLUMNS = ["form", "dtype", "N", "B", "H", "D", "kernel", "status", "ms", "tflops",
           "rel_err", "note"]


def causal_mod(b, h, qi, ki):  # one function: FlexAttention compiles it once per shape
    return qi >= ki


def window_mod(b, h, qi, ki):  # the window form's band, causal
    return (qi >= ki) & (qi - ki < WINDOW)


def visible_pairs(form: str, n: int) -> float:
    """The (query, key) products a form needs (M = N)."""
    if form == "window":
        w = min(WINDOW, n)
        return w * (w + 1) / 2 + (n - w) * w
    return n * n / (2 if is_causal(form) else 1)


def softcap_mod(score, b, h, qi, ki):  # Gemma-2's soft-cap, as the softcap form's region
    return SOFTCAP * (score / SOFTCAP).tanh()


def is_causal(form: str) -> bool:
    return bool(FORMS.get(form, {}).get("causal", form.startswith("causal")))


def parse_name(name: str) -> Optional[Dict[str, Any]]:
    # {dtype}_d{D}_n{N}_b{B}_h{H}_{form}
    parts = name.split("_")
    if len(parts) < 6:
        return None
    try:
        return dict(dtype=parts[0], D=int(parts[1][1:]), N=int(parts[2][1:]),
                    B=int(parts[3][1:]), H=int(parts[4][1:]), form="_".join(parts[5:]))
    except ValueError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "forms_bundles"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--only", default="", help="comma-separated substrings of bundle names")
    ap.add_argument("--no-flex", action="store_true", help="skip FlexAttention (compiles)")
    ap.add_argument("--target-ms", type=float, default=60.0)
    ap.add_argument("--ref-flops", type=float, default=1e10)
    ap.add_argument("--deadline", type=float, default=0, help="seconds; 0: none")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "forms.csv"
    if a.report_only:
        report(csv_path)
        return 0
    t0 = time.time()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    flex = block_mask_fn = None
    if not a.no_flex:
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            # One compile per shape and modification: more than dynamo's
            # default 8 recompiles, past which it would silently run eager.
            torch._dynamo.config.cache_size_limit = 256
            torch._dynamo.config.accumulated_cache_size_limit = 1024
            flex = torch.compile(flex_attention, dynamic=False)
            block_mask_fn = create_block_mask
        except Exception as e:  # pragma: no cover - depends on the torch build
            print(f"FlexAttention unavailable: {e}")
    print(f"device: {torch.cuda.get_device_name()} | torch {torch.__version__} | "
          f"cuDNN {torch.backends.cudnn.version()}")
    ops = R.TorchOps("cuda")
    fh = open(csv_path, "w", newline="")
    w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
    w.writeheader()
    failures = 0
    dirs = sorted(p for p in Path(a.bundles).iterdir() if (p / "manifest.json").exists())
    if a.only:
        keys = [s for s in a.only.split(",") if s]
        dirs = [p for p in dirs if any(s in p.name for s in keys)]
    for bdir in dirs:
        cfg = parse_name(bdir.name)
        if cfg is None:
            continue
        if a.deadline and time.time() - t0 > a.deadline:
            print(f"deadline: skipping {bdir.name} and later")
            break
        form, N, Bn, H, D = cfg["form"], cfg["N"], cfg["B"], cfg["H"], cfg["D"]
        causal = is_causal(form)
        flops = 4 * Bn * H * D * visible_pairs(form, N)
        print(f"== {bdir.name}", flush=True)
        dt = getattr(torch, cfg["dtype"])

        def emit(kernel: str, **row: Any) -> None:
            row.update(form=form, dtype=cfg["dtype"], N=N, B=Bn, H=H, D=D, kernel=kernel)
            if row.get("ms"):
                row["tflops"] = f"{flops / (row['ms'] * 1e-3) / 1e12:.1f}"
                row["ms"] = f"{row['ms']:.4f}"
            w.writerow(row)
            fh.flush()
            print(f"  {kernel:12} {row['status']:6} {row.get('tflops', ''):>7} TFLOP/s "
                  f"rel={row.get('rel_err', '')} {row.get('note', '')}", flush=True)

        try:
            kernel = B.load(bdir)
        except Exception as e:
            emit("attn-opt", status="FAIL", note=f"load: {e}"[:300])
            failures += 1
            continue
        man = kernel.manifest
        if "score_mod" in FORMS.get(form, {}) and man.attention.score_mod is None:
            emit("attn-opt", status="FAIL", note="the manifest has no attention.score_mod "
                 "(the reference could not apply it)")
            failures += 1
            kernel.close()
            continue
        g = torch.Generator(device="cuda").manual_seed(1234 + N)
        q, k, v = (torch.randn(Bn, H, N, D, generator=g, device="cuda").to(dt)
                   for _ in range(3))
        inputs: Dict[str, Any] = {"q": q, "k": k, "v": v}
        sdpa_mask = bias = score_mod = mask_mod = None
        if form == "bias":
            bias = torch.randn(H, N, N, generator=g, device="cuda").to(dt)
            inputs["mask"] = bias
            sdpa_mask = bias.unsqueeze(0).expand(Bn, H, N, N)

            def score_mod(s, b, h, qi, ki, bias=bias):  # noqa: E306
                return s + bias[h, qi, ki]
        elif form == "padmask":
            lens = torch.randint(N // 2, N + 1, (Bn,), generator=g, device="cuda")
            keep = torch.arange(N, device="cuda")[None, :] < lens[:, None]
            inputs["mask"] = keep
            sdpa_mask = keep[:, None, None, :].expand(Bn, H, N, N)

            def mask_mod(b, h, qi, ki, lens=lens):  # noqa: E306
                return ki < lens[b]
        elif form == "softcap":
            score_mod, mask_mod = softcap_mod, causal_mod
        elif form == "alibi":
            slopes = torch.exp2(-8.0 * torch.arange(1, H + 1, device="cuda") / H)
            pos = torch.arange(N, device="cuda")
            rel = (pos[None, :] - pos[:, None]).float()  # n - m
            future = pos[None, :] > pos[:, None]
            bias = torch.empty(H, N, N, dtype=dt, device="cuda")
            for i in range(H):  # a head at a time: no [H, N, N] f32 temporary
                bias[i] = (slopes[i] * rel).masked_fill_(future, -math.inf)
            del rel, future
            sdpa_mask = bias.unsqueeze(0).expand(Bn, H, N, N)
            mask_mod = causal_mod

            def score_mod(s, b, h, qi, ki, slopes=slopes):  # noqa: E306
                return s + slopes[h] * (ki - qi)
        elif form == "alibi_full":
            slopes = torch.exp2(-8.0 * torch.arange(1, H + 1, device="cuda") / H)
            pos = torch.arange(N, device="cuda")
            dist = (pos[None, :] - pos[:, None]).abs().float()
            bias = torch.empty(H, N, N, dtype=dt, device="cuda")
            for i in range(H):
                bias[i] = -slopes[i] * dist
            del dist
            sdpa_mask = bias.unsqueeze(0).expand(Bn, H, N, N)

            def score_mod(s, b, h, qi, ki, slopes=slopes):  # noqa: E306
                return s - slopes[h] * (ki - qi).abs()
        elif form == "window":
            pos = torch.arange(N, device="cuda")
            band = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < WINDOW)
            sdpa_mask = band[None, None].expand(Bn, H, N, N)
            mask_mod = window_mod
        elif causal:
            mask_mod = causal_mod
        elif form == "sink":
            inputs["sink"] = torch.randn(H, generator=g, device="cuda").to(dt)
        rows = R.rows_for_budget(man, a.ref_flops, 0)
        ref = R.reference(man, inputs, ops, rows=rows)

        def check_time(name: str, fn: Callable[[], Any], to_canon: Callable[[Any], Any],
                       note: str = "") -> None:
            nonlocal failures
            try:
                o, _ = run_once(torch, fn)
                nan = int(torch.isnan(o).sum().item())
                got = to_canon(o)
                if rows is not None:
                    got = ops.take(got, ops.index(rows), -2)
                rel = R.rel_error(ops, got, ref)
            except Exception as e:
                emit(name, status="error", note=f"{type(e).__name__}: {e}"[:300])
                return
            if nan or not rel <= TOL:
                emit(name, status="FAIL", rel_err=f"{rel:.2e}", note=f"{nan} NaN; not timed")
                if name == "attn-opt":
                    failures += 1
                return
            ms, _ = time_kernel(torch, fn, a.target_ms, 1000.0)
            emit(name, status="ok", ms=ms, rel_err=f"{rel:.2e}", note=note)

        canon = lambda o: o  # noqa: E731  [B, H, N, D] is canonical here
        out = kernel.empty_out()
        out.fill_(float("nan"))
        launch = kernel.prepare(*[inputs[n] for n in man.inputs], out=out)

        def attn_opt() -> Any:
            launch()
            return out
        check_time("attn-opt", attn_opt, lambda o: R.canonical(ops, man, "out", o),
                   note=man.attention.kernel_choice[:80] if hasattr(man.attention, "kernel_choice") else "")
        scale = 1.0 / math.sqrt(D)
        if form in ("bias", "padmask", "alibi", "alibi_full", "window"):
            for name, be in (("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION),
                             ("sdpa-efficient", SDPBackend.EFFICIENT_ATTENTION)):
                def sdpa(be: Any = be) -> Any:
                    with sdpa_kernel([be]):
                        return F.scaled_dot_product_attention(q, k, v, attn_mask=sdpa_mask,
                                                              scale=scale)
                check_time(name, sdpa, canon)
        if form.startswith("causal") or form == "plain":
            for name, be in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                             ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                def sdpa_c(be: Any = be) -> Any:
                    with sdpa_kernel([be]):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                              scale=scale)
                check_time(name, sdpa_c, canon)
        # FlexAttention's score_mod reading a bias of 2^31 elements or more
        # (the [16, 16384, 16384] rows): wrong output (rel err 0.75-1.73,
        # H100 sessions 35-40) or an illegal address that ends the process's
        # CUDA context (H200, session 53): skipped, with the reason.
        huge_bias = form == "bias" and H * N * N >= 2**31
        if flex is not None and huge_bias:
            emit("flex", status="skip",
                 note=f"score_mod bias of {H * N * N} elements (>= 2^31): "
                      "FlexAttention fails there (wrong output or an illegal address)")
        elif flex is not None and D == 128 and (form in ("bias", "padmask", "alibi_full")
                                                or causal):
            try:
                bm = None
                if mask_mod is not None:
                    bm = block_mask_fn(mask_mod, Bn if form == "padmask" else None, None,
                                       N, N, device="cuda")

                def fx() -> Any:
                    return flex(q, k, v, score_mod=score_mod, block_mask=bm, scale=scale)
                check_time("flex", fx, canon)
            except Exception as e:
                emit("flex", status="error", note=f"{type(e).__name__}: {e}"[:300])
        kernel.close()
        del q, k, v, inputs, ref, sdpa_mask, bias, score_mod
        torch.cuda.empty_cache()
    fh.close()
    report(csv_path)
    return 1 if failures else 0


def report(csv_path: Path) -> None:
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    tf: Dict[tuple, Dict[str, float]] = {}
    for r in rows:
        if r["status"] == "ok" and r["tflops"]:
            tf.setdefault((r["dtype"], int(r["D"]), int(r["N"]), r["form"]), {})[
                r["kernel"]] = float(r["tflops"])
    peers = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex"]
    print("\nTFLOP/s (H = 16, 16k tokens per batch); ratios are attn-opt / peer")
    head = f"{'dtype':8} {'D':>3} {'N':>6} {'form':15} {'attn-opt':>8} " + \
        " ".join(f"{p:>14}" for p in peers) + f" {'/best peer':>10} {'/own base':>9}"
    print(head)
    for (dtype, d, n, form), k in sorted(tf.items()):
        ours = k.get("attn-opt")
        best = max((k[p] for p in peers if p in k), default=None)
        base_form = "causal" if is_causal(form) else "plain"
        base = tf.get((dtype, d, n, base_form), {}).get("attn-opt")
        cells = " ".join(f"{k[p]:14.1f}" if p in k else f"{'-':>14}" for p in peers)
        r_peer = f"{ours / best:10.3f}" if ours and best else f"{'-':>10}"
        r_base = f"{ours / base:9.3f}" if ours and base and form != base_form else f"{'-':>9}"
        print(f"{dtype:8} {d:3} {n:6} {form:15} {ours or 0:8.1f} {cells} {r_peer} {r_base}")


if __name__ == "__main__":
    sys.exit(main())
