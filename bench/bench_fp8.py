#!/usr/bin/env python3
"""The FP8 table: attn-opt's FP8 kernel (e4m3 Q, K, V; f16 output) against
its own f16 kernel at the same shape, and SDPA's f16 flash and cuDNN
backends, same inputs, one run.

    python3 bench/make_bundles.py --fp8 --out bench/fp8_bundles       # here
    python3 bench/bench_fp8.py --bundles bench/fp8_bundles --out OUT  # GPU

Mask rows (D = 128): a per-head f16 bias with causal and a bool key-padding
mask, against SDPA's efficient and cuDNN backends with the same attn_mask
(flash takes none). Inputs: N(0, 1) values rounded to e4m3 (the FP8 kernel's operands); the
f16 kernels take the same values in f16 (exact), so both compute the same
attention and differ by FP8's rounding of P only. Every output is checked
against the fp32 reference of those values (sampled rows): relative error
(FP8 tolerance 3e-2, f16 1e-2) and NaN count. cuDNN's FP8 attention is
not reachable from torch's SDPA (it takes no 8-bit inputs): the run says
so after trying. Writes OUT/fp8.csv and prints TFLOP/s, FP8 / own f16 and
FP8 / the faster SDPA backend.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402
from bench_attention import run_once, time_kernel  # noqa: E402
from bench_decode import start_results  # noqa: E402

COLUMNS = ["name", "D", "N", "B", "H", "causal", "kernel", "status", "ms", "tflops",
           "fp8_vs_own_f16", "fp8_vs_best_sdpa", "rel_err", "nan", "note"]
NAME = re.compile(r"(?P<dt>fp8|f16)_d(?P<D>\d+)_n(?P<N>\d+)_b(?P<B>\d+)_h(?P<H>\d+)_"
                  r"(?P<tag>causal|full)(?:_(?P<mask>bias|keypad))?$")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "fp8_bundles"))
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--only", default="", help="comma-separated substrings of bundle names")
    ap.add_argument("--target-ms", type=float, default=40.0)
    ap.add_argument("--ref-flops", type=float, default=5e9)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.backends.cuda.matmul.allow_tf32 = False
    fh, w = start_results(torch, a.out, "fp8.csv", COLUMNS)
    ops = R.TorchOps("cuda")
    dirs = sorted(p for p in Path(a.bundles).iterdir() if (p / "manifest.json").exists())
    if a.only:
        keys = [s for s in a.only.split(",") if s]
        dirs = [p for p in dirs if any(s in p.name for s in keys)]
    groups: Dict[Tuple[int, int, bool, str], Dict[str, Path]] = {}
    for p in dirs:
        m = NAME.match(p.name)
        if m:
            key = (int(m["D"]), int(m["N"]), m["tag"] == "causal", m["mask"] or "")
            groups.setdefault(key, {})[m["dt"]] = p
    failures = 0
    cudnn_fp8_note = ""
    for (D, N, causal, mask), members in sorted(groups.items()):
        Bn, H = 16384 // N, 2048 // D
        flops = 4 * Bn * H * N * N * D / (2 if causal else 1)
        print(f"== D={D} N={N} B={Bn} H={H} {'causal' if causal else 'full'} {mask}",
              flush=True)
        g = torch.Generator(device="cuda").manual_seed(9876 + N + D)
        q8, k8, v8 = (torch.randn(Bn, H, N, D, generator=g, device="cuda")
                      .to(torch.float8_e4m3fn) for _ in range(3))
        q, k, v = (x.to(torch.float16) for x in (q8, k8, v8))  # exact
        # Mask rows: a per-head f16 bias [H, N, N], or key padding [B, N]
        # (sequence b keeps its first N - b N / 8 keys); SDPA takes them as
        # attn_mask broadcast to [B, H, N, N].
        inputs: Dict[str, Any] = {"q": q, "k": k, "v": v}
        sdpa_mask = None
        if mask == "bias":
            inputs["mask"] = torch.randn(H, N, N, generator=g, device="cuda").half()
            sdpa_mask = inputs["mask"][None]
        elif mask == "keypad":
            lens = torch.tensor([N - b * N // 8 for b in range(Bn)], device="cuda")
            inputs["mask"] = torch.arange(N, device="cuda")[None, :] < lens[:, None]
            sdpa_mask = inputs["mask"][:, None, None, :]
        scale = 1.0 / math.sqrt(D)
        man0 = B.read_manifest(members.get("f16") or members["fp8"])
        rows = R.rows_for_budget(man0, a.ref_flops, 0)
        ref = R.reference(man0, inputs, ops, rows=rows)
        res: Dict[str, float] = {}

        def measure(kernel: str, fn: Callable[[], Any], tol: float,
                    note: str = "") -> Optional[float]:
            nonlocal failures
            row: Dict[str, Any] = dict(name=f"d{D}_n{N}_{'causal' if causal else 'full'}"
                                       + (f"_{mask}" if mask else ""),
                                       D=D, N=N, B=Bn, H=H, causal=causal, kernel=kernel,
                                       note=note)
            try:
                o, _ = run_once(torch, fn)
                nan = int(torch.isnan(o).sum().item())
                got = ops.take(o, ops.index(rows), -2) if rows is not None else o
                rel = R.rel_error(ops, got, ref)
            except Exception as e:
                row.update(status="error", note=f"{type(e).__name__}: {e}"[:200])
                w.writerow(row)
                print(f"  {kernel:14} error {row['note']}", flush=True)
                return None
            row.update(rel_err=f"{rel:.2e}", nan=nan)
            if nan or not rel <= tol:
                row.update(status="FAIL")
                if kernel.startswith("attn-opt"):
                    failures += 1
                w.writerow(row)
                print(f"  {kernel:14} FAIL rel={rel:.2e} nan={nan}", flush=True)
                return None
            ms, _ = time_kernel(torch, fn, a.target_ms, 2000.0, min_reps=3, max_reps=100)
            tf = flops / (ms * 1e-3) / 1e12
            res[kernel] = ms
            row.update(status="ok", ms=f"{ms:.4f}", tflops=f"{tf:.1f}")
            if kernel == "attn-opt fp8":
                if "attn-opt f16" in res:
                    row["fp8_vs_own_f16"] = f"{res['attn-opt f16'] / ms:.3f}"
                sd = [res[x] for x in ("sdpa-flash", "sdpa-eff", "sdpa-cudnn")
                      if x in res]
                if sd:
                    row["fp8_vs_best_sdpa"] = f"{min(sd) / ms:.3f}"
            w.writerow(row)
            fh.flush()
            print(f"  {kernel:14} {tf:7.1f} TFLOP/s rel={rel:.2e} "
                  f"{row.get('fp8_vs_own_f16', '')} {note}", flush=True)
            return ms

        backends = (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                    ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION))
        if mask:  # flash takes no attn_mask
            backends = (("sdpa-eff", SDPBackend.EFFICIENT_ATTENTION),
                        ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION))
        for name, backend in backends:
            def sdpa(backend: Any = backend) -> Any:
                with sdpa_kernel([backend]):
                    return F.scaled_dot_product_attention(
                        q, k, v, attn_mask=sdpa_mask, is_causal=causal, scale=scale)
            measure(name, sdpa, 1e-2)
        if not cudnn_fp8_note:
            try:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    F.scaled_dot_product_attention(q8, k8, v8, is_causal=causal)
                cudnn_fp8_note = "torch SDPA (cuDNN) accepted e4m3 inputs"
            except Exception as e:
                cudnn_fp8_note = f"torch SDPA has no FP8 path: {type(e).__name__}: {e}"[:200]
            print(f"  cuDNN FP8: {cudnn_fp8_note}", flush=True)
        for dt, tol, args in (("f16", 1e-2, (q, k, v)), ("fp8", 3e-2, (q8, k8, v8))):
            if dt not in members:
                continue
            kernel = B.load(members[dt])
            out = kernel.empty_out()
            out.fill_(float("nan"))
            named = dict(zip("qkv", args))
            if mask:
                named["mask"] = inputs["mask"]
            launch = kernel.prepare(out=out, **named)

            def attn() -> Any:
                launch()
                return out
            measure(f"attn-opt {dt}", attn, tol,
                    note=kernel.manifest.attention.kernel_choice[:70])
            kernel.close()
        del q, k, v, q8, k8, v8, ref, inputs, sdpa_mask
        torch.cuda.empty_cache()
    w.writerow(dict(name="note", note=cudnn_fp8_note))
    fh.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
