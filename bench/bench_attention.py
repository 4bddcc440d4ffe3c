#!/usr/bin/env python3
"""Attention forward on one GPU: attn-opt bundles against torch SDPA (flash
and cuDNN backends) and a tuned Triton FlashAttention kernel, same inputs.

    python3 bench/bench_attention.py --bundles bench/bundles --out OUTDIR [--quick]

Configs: fp16 and bf16, head dim D in {64, 128}, N in {512, ..., 16384}
with 16k tokens per batch (B = 16384 // N) and model dim 2048
(H = 2048 // D), causal and not; plus one head (B = H = 1) at N = 131072.
--quick: N in {512, 2048}, no N = 131072, 4 Triton variants. Self-attention,
scale 1/sqrt(D) (the bundle's own scale when there is one).
FLOPs = 4 B H N^2 D, half that for causal.

attn-opt bundles are matched to configs by their manifests (dtype, D, N,
B*H, causal; no mask/sink/window/score_mod), whatever their directory names
(bench/make_bundles.py writes {dtype}_d{D}_n{N}_b{B}_h{H}_{causal|full}). A
config without a bundle still times the peers; attn-opt shows "n/a".

Per config: inputs ~ N(0,1) (seeded), laid out as the bundle wants (else
[B, H, N, D]); peers get contiguous [B, H, N, D] copies. Each kernel runs
once into a NaN-poisoned output (where the output is ours to allocate); it
must leave no NaN anywhere and match an fp32 reference (attn_opt.reference)
on a sample of query rows (--ref-flops): ||out-ref||/||ref|| <= 1e-2, or it
is not timed (status FAIL). Timing (device/METHOD.md): warm-up, then CUDA events around
each launch, median of repeats (~--target-ms of work, at least 5);
kernels slower than --slow-ms per launch get 1 sample (after the check run).
With --rounds R > 1 (run_on_device.sh uses 3) the kernels of a config are
timed after all are checked, in R rounds with the order rotating, and each
reports the median of its round medians (the CSV note gives the range):
GPU clocks drift within a config, and this keeps the drift off one kernel.
With --interleave (run_on_device.sh with INTERLEAVE=1) the kernels take
turns launch by launch within each round instead (A B C D, B C D A, ...), so
all see the same clocks and power state; in phases a kernel runs at the
clocks its own power draw and the kernel before it leave, which moved the
short rows by up to 10% (log step 165). Triton: every
(BLOCK_M, BLOCK_N, num_warps) variant is checked and timed briefly, the
fastest is timed in full. Inputs (>= 64 MB per tensor, except at
N = 131072) exceed the 50 MB L2, so no rotation.

Outputs in --out: bench.csv (one row per config x kernel, written as it
goes), bench.png (TFLOP/s vs N, a panel per D x causal, a line per kernel
and dtype; skipped without matplotlib), and a table of TFLOP/s and
attn-opt/peer speed ratios on stdout. --deadline stops starting new configs
after that many seconds. A kernel that breaks the CUDA context or hangs past
--kernel-timeout makes the script re-execute itself after that config.
Exit status 1 when an attn-opt bundle fails its check, else 0.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
import traceback
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(HERE))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402
from attn_opt.harness import Watchdog, cuda_healthy  # noqa: E402

PEERS = ("sdpa-flash", "sdpa-cudnn", "triton")
KERNELS = ("attn-opt",) + PEERS
COLUMNS = ["config", "dtype", "D", "N", "B", "H", "causal", "kernel", "status",
           "tflops", "ms", "reps", "rel_err", "variant", "flops", "bundle", "note"]
TOL = 1e-2


@dataclass(frozen=True)
class Config:
    dtype: str
    D: int
    N: int
    B: int
    H: int
    causal: bool

    @property
    def name(self) -> str:
        return (f"{self.dtype}_d{self.D}_n{self.N}_b{self.B}_h{self.H}_"
                f"{'causal' if self.causal else 'full'}")

    @property
    def flops(self) -> float:
        f = 4.0 * self.B * self.H * self.N * self.N * self.D
        return f / 2 if self.causal else f


def configs(quick: bool) -> List[Config]:
    ns = [512, 2048] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    out = []
    for dtype in ("float16", "bfloat16"):
        for d in (64, 128):
            for causal in (False, True):
                for n in ns:
                    out.append(Config(dtype, d, n, 16384 // n, 2048 // d, causal))
                if not quick:
                    out.append(Config(dtype, d, 131072, 1, 1, causal))
    return out


def bundle_key(man: B.Manifest) -> Optional[Tuple[str, int, int, int, bool]]:
    """(dtype, D, N, batch product, causal) of a plain self-attention bundle."""
    att = man.attention
    if man.arg("mask") or man.arg("sink") or att.window is not None or \
            att.score_mod is not None:
        return None
    s = man.sizes()
    q, k = man.arg("q"), man.arg("k")
    if s["m"] != s["n"] or s["d"] != s["e"] or len(k.dims) != len(q.dims):
        return None
    if len({man.arg(n).dtype for n in ("q", "k", "v", "out")}) != 1:
        return None
    return (q.dtype, s["d"], s["n"], math.prod(s[b] for b in man.batch_names),
            att.causal)


def index_bundles(root: Optional[Path]) -> Dict[Tuple, Path]:
    found: Dict[Tuple, Path] = {}
    if root is None or not root.is_dir():
        return found
    for mf in sorted(root.rglob("manifest.json")):
        try:
            key = bundle_key(B.read_manifest(mf.parent))
        except B.BundleError as e:
            print(f"warning: ignoring {mf.parent}: {e}", file=sys.stderr)
            continue
        if key is None:
            continue
        if key in found:
            print(f"warning: {mf.parent} and {found[key]} are the same config; "
                  f"using {found[key]}", file=sys.stderr)
            continue
        found[key] = mf.parent
    return found


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------

def prepare_parser(description: str) -> argparse.ArgumentParser:
    """The arguments of a script that compiles its programs here
    (`--prepare DIR`, with `--attn-bundle`) and times them on the GPU
    (`DIR --out OUT`, `--reps` launches per round, `--rounds`)."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--prepare", metavar="DIR")
    ap.add_argument("--attn-bundle", default=str(Path(__file__).resolve().parent.parent
                                                 / "build/bin/attn-bundle"))
    ap.add_argument("--out", default=".")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    return ap


def compiled_flex(torch: Any) -> Any:
    """torch.compile(flex_attention), one compile per shape and modification:
    dynamo's recompile limits raised (past them it would silently run
    eager)."""
    from torch.nn.attention.flex_attention import flex_attention
    torch._dynamo.config.cache_size_limit = 256
    torch._dynamo.config.accumulated_cache_size_limit = 1024
    return torch.compile(flex_attention, dynamic=False)


def compile_programs(out: Path, attn_bundle: str, programs: List[Tuple[str, str]],
                     chip: str = "sm_90a") -> None:
    """Each (name, MLIR text) compiled by attn-bundle into OUT/NAME."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "p.mlir"
        for name, text in programs:
            src.write_text(text)
            subprocess.run([attn_bundle, str(src), "-o", str(out / name), f"--chip={chip}"],
                           check=True)
            print("wrote", out / name, flush=True)


def write_table(out_dir: str, name: str, lines: List[str]) -> None:
    """The CSV `lines` (header first) as OUT_DIR/NAME, the directory made."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text("\n".join(lines) + "\n")


def timed_rounds(torch, fn, reps: int, rounds: int = 5) -> float:
    """Median over `rounds` of the mean us of `reps` back-to-back launches
    (one pair of CUDA events around each round: the Python side of a call
    counts, as a user's loop sees it)."""
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(rounds):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / reps * 1e3)
    return statistics.median(ts)


def time_kernel(torch: Any, fn: Callable[[], Any], target_ms: float, slow_ms: float,
                min_reps: int = 5, max_reps: int = 200) -> Tuple[float, int]:
    """Median ms per launch with CUDA events; the caller has run `fn` once
    (compilation, plan caches). One more timed launch sizes the warm-up and
    the repeats; a launch over `slow_ms` is the only sample."""
    _, est = run_once(torch, fn)
    if est > slow_ms:
        return est, 1
    for _ in range(max(1, min(25, int(25.0 / max(est, 1e-3))))):
        fn()
    reps = max(min_reps, min(max_reps, int(target_ms / max(est, 1e-3))))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)), reps


def run_once(torch: Any, fn: Callable[[], Any]) -> Tuple[Any, float]:
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    out = fn()
    e.record()
    torch.cuda.synchronize()
    return out, s.elapsed_time(e)


# ---------------------------------------------------------------------------
# One config
# ---------------------------------------------------------------------------

class Bench:
    def __init__(self, args: argparse.Namespace, torch: Any) -> None:
        self.args = args
        self.torch = torch
        self.ops = R.TorchOps("cuda")
        self.csv_path = Path(args.out) / "bench.csv"
        new = not args.append
        self.fh = open(self.csv_path, "w" if new else "a", newline="")
        self.writer = csv.DictWriter(self.fh, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            self.writer.writeheader()
        self.attn_failures = 0
        self.pending: List[Tuple[str, Callable[[], Any], float, float, Dict[str, Any]]] = []

    def emit(self, cfg: Config, kernel: str, **row: Any) -> None:
        row.update(config=cfg.name, dtype=cfg.dtype, D=cfg.D, N=cfg.N, B=cfg.B,
                   H=cfg.H, causal=cfg.causal, kernel=kernel, flops=f"{cfg.flops:.4g}")
        if row.get("ms"):
            row["tflops"] = f"{cfg.flops / (row['ms'] * 1e-3) / 1e12:.2f}"
            row["ms"] = f"{row['ms']:.4f}"
        self.writer.writerow(row)
        self.fh.flush()
        tf = row.get("tflops", "")
        print(f"  {kernel:11} {row['status']:11} {tf:>8} TFLOP/s  ms={row.get('ms', '')} "
              f"rel={row.get('rel_err', '')} {row.get('variant', '')} {row.get('note', '')}",
              flush=True)
        if kernel == "attn-opt" and row["status"] in ("FAIL", "error"):
            self.attn_failures += 1

    def check(self, got_canonical: Any, ref: Any, rows: Optional[List[int]]) -> float:
        ops = self.ops
        if rows is not None:
            got_canonical = ops.take(got_canonical, ops.index(rows), -2)
        return R.rel_error(ops, got_canonical, ref)

    def measure(self, cfg: Config, kernel: str, fn: Callable[[], Any],
                to_canonical: Callable[[Any], Any], ref: Any, rows: Any,
                target_ms: float, emit: bool = True, **extra: Any
                ) -> Optional[float]:
        """Check, then time; returns the median ms (None when not timed)."""
        torch = self.torch
        try:
            out, _ = run_once(torch, fn)
            nan = int(torch.isnan(out).sum().item())
            rel = self.check(to_canonical(out), ref, rows)
        except Exception as e:
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            if emit:
                self.emit(cfg, kernel, status="error", note=msg, **extra)
            return None
        del out
        if nan or not rel <= TOL:
            if emit:
                why = f"{nan} NaN (unwritten?)" if nan else f"rel error > {TOL}"
                self.emit(cfg, kernel, status="FAIL", rel_err=f"{rel:.3e}",
                          note=f"{why}, not timed", **extra)
            return None
        if emit and self.args.rounds > 1:
            # Timed later, interleaved with the other kernels of the config.
            self.pending.append((kernel, fn, target_ms, rel, extra))
            return None
        ms, reps = time_kernel(torch, fn, target_ms, self.args.slow_ms)
        if emit:
            self.emit(cfg, kernel, status="ok", ms=ms, reps=reps, rel_err=f"{rel:.3e}",
                      **extra)
        return ms

    def time_pending(self, cfg: Config) -> None:
        """--rounds > 1: every checked kernel of the config is timed in each
        of the rounds, the order rotating, and reported by the median of its
        per-round medians: clock and thermal drift during a config then hits
        all kernels alike instead of whichever ran last."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        times: List[List[float]] = [[] for _ in pending]
        reps_total = [0] * len(pending)
        if self.args.interleave:
            self.time_interleaved(pending, times, reps_total)
        else:
            for rnd in range(self.args.rounds):
                for j in range(len(pending)):
                    idx = (j + rnd) % len(pending)
                    _, fn, target_ms, _, _ = pending[idx]
                    ms, reps = time_kernel(self.torch, fn, target_ms, self.args.slow_ms)
                    times[idx].append(ms)
                    reps_total[idx] += reps
        for i, (kernel, _, _, rel, extra) in enumerate(pending):
            ts = times[i]
            extra = dict(extra)
            note = extra.pop("note", "") or ""
            spread = f"{len(ts)} rounds {min(ts):.4f}-{max(ts):.4f} ms"
            self.emit(cfg, kernel, status="ok", ms=statistics.median(ts),
                      reps=reps_total[i], rel_err=f"{rel:.3e}",
                      note=f"{note}; {spread}" if note else spread, **extra)

    def time_interleaved(self, pending: List[Any], times: List[List[float]],
                         reps_total: List[int]) -> None:
        """--interleave: the kernels take turns launch by launch (A B C A B C
        ..., the order rotating per launch), so each one's launches see the
        same clocks and power state; whole phases per kernel let the clock a
        kernel starts at depend on the kernel before it (log step 165). One
        repeat count for all: --target-ms over the median launch time."""
        torch = self.torch
        fns = [p[1] for p in pending]
        ests = [run_once(torch, fn)[1] for fn in fns]
        reps = max(5, min(200, int(pending[0][2] / max(statistics.median(ests), 1e-3))))
        k = len(fns)
        for _ in range(self.args.rounds):
            for fn in fns:
                for _ in range(3):
                    fn()
            evs = [[(torch.cuda.Event(enable_timing=True),
                     torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
                   for _ in fns]
            for j in range(reps):
                for o in range(k):
                    i = (o + j) % k
                    s, e = evs[i][j]
                    s.record()
                    fns[i]()
                    e.record()
            torch.cuda.synchronize()
            for i in range(k):
                times[i].append(statistics.median(s.elapsed_time(e) for s, e in evs[i]))
                reps_total[i] += reps

    def run_config(self, cfg: Config, bundle_dir: Optional[Path]) -> None:
        torch, ops, args = self.torch, self.ops, self.args
        F = torch.nn.functional
        from torch.nn.attention import SDPBackend, sdpa_kernel
        seed = args.seed + zlib.crc32(cfg.name.encode()) % 100000
        kernel = None
        note = ""
        if bundle_dir is not None:
            try:
                kernel = B.load(bundle_dir)
                man = kernel.manifest
                note = "; ".join(kernel.load_notes)
            except Exception as e:
                self.emit(cfg, "attn-opt", status="FAIL", bundle=str(bundle_dir),
                          note=f"load: {e}"[:400])
        if kernel is None:
            man = R.make_problem(cfg.dtype, batch=(cfg.B, cfg.H), M=cfg.N, N=cfg.N,
                                 D=cfg.D, causal=cfg.causal)
        scale = man.attention.scale
        inputs = R.make_inputs(man, ops, seed)
        rows = R.rows_for_budget(man, args.ref_flops, seed)
        ref = R.reference(man, inputs, ops, rows=rows)
        sizes = man.sizes()
        canon_shape = tuple(sizes[b] for b in man.batch_names) + (sizes["m"], sizes["e"])

        def peer_layout(name: str) -> Any:
            x = R.canonical(ops, man, name, inputs[name])  # [b..., N, D]
            if x.dim() != 4:
                x = x.reshape(1, -1, x.shape[-2], x.shape[-1])
            return x.contiguous()

        q, k, v = peer_layout("q"), peer_layout("k"), peer_layout("v")

        def from_peer(o: Any) -> Any:
            return o.reshape(canon_shape)

        # SDPA: flash and cuDNN
        for name, backend in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                              ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
            if self.past_deadline():
                self.emit(cfg, name, status="skipped", note="deadline")
                continue
            def sdpa(backend: Any = backend) -> Any:
                with sdpa_kernel([backend]):
                    return F.scaled_dot_product_attention(
                        q, k, v, is_causal=cfg.causal, scale=scale)

            self.measure(cfg, name, sdpa, from_peer, ref, rows, args.target_ms)

        # Triton: tune, then time the best
        if self.past_deadline():
            self.emit(cfg, "triton", status="skipped", note="deadline")
        else:
            self.run_triton(cfg, q, k, v, scale, from_peer, ref, rows)

        # attn-opt
        if kernel is None:
            if bundle_dir is None:
                self.emit(cfg, "attn-opt", status="n/a", note="no bundle")
        elif self.past_deadline():
            self.emit(cfg, "attn-opt", status="skipped", note="deadline",
                      bundle=str(bundle_dir))
        else:
            out = kernel.empty_out()
            try:
                launch = kernel.prepare(*[inputs[n] for n in man.inputs], out=out)
            except Exception as e:
                self.emit(cfg, "attn-opt", status="FAIL", bundle=str(bundle_dir),
                          note=f"arguments: {e}"[:400])
                return

            def attn_opt() -> Any:
                launch()
                return out

            out.fill_(float("nan"))
            self.measure(cfg, "attn-opt", attn_opt,
                         lambda o: R.canonical(ops, man, "out", o), ref, rows,
                         args.target_ms, bundle=str(bundle_dir),
                         variant=f"{kernel.image} grid={list(man.grid)} "
                                 f"block={list(man.block)}", note=note)
            self.time_pending(cfg)
            kernel.close()

    def run_triton(self, cfg: Config, q: Any, k: Any, v: Any, scale: float,
                   from_peer: Callable[[Any], Any], ref: Any, rows: Any) -> None:
        import triton_attention as TA
        torch = self.torch
        o = torch.empty_like(q)
        best: Optional[Tuple[float, Tuple[int, int, int, int]]] = None
        tried, errors = 0, []
        for bm, bn, warps in TA.variants(self.args.quick):
            if cfg.N % bm or cfg.N % bn:
                continue
            for stages in (3, 2):
                def fn(bm: int = bm, bn: int = bn, warps: int = warps,
                       stages: int = stages) -> Any:
                    return TA.attention(q, k, v, cfg.causal, scale, bm, bn, warps,
                                        stages, out=o)
                o.fill_(float("nan"))
                tried += 1
                try:
                    out, _ = run_once(torch, fn)
                except Exception as e:  # out of shared memory, ...
                    errors.append(f"{bm}x{bn}w{warps}s{stages}: {type(e).__name__}")
                    continue
                rel = self.check(from_peer(out), ref, rows)
                if not rel <= TOL:
                    errors.append(f"{bm}x{bn}w{warps}s{stages}: rel {rel:.2e}")
                    break
                ms, _ = time_kernel(torch, fn, self.args.tune_ms, self.args.slow_ms,
                                    min_reps=3, max_reps=50)
                if best is None or ms < best[0]:
                    best = (ms, (bm, bn, warps, stages))
                break
        if best is None:
            self.emit(cfg, "triton", status="error" if tried else "n/a",
                      note=("; ".join(errors) or "no variant fits N")[:300])
            return
        bm, bn, warps, stages = best[1]
        self.measure(cfg, "triton",
                     lambda: TA.attention(q, k, v, cfg.causal, scale, bm, bn, warps,
                                          stages, out=o),
                     from_peer, ref, rows, self.args.target_ms,
                     variant=f"BM{bm} BN{bn} w{warps} s{stages}",
                     note=f"best of {tried}" + (f"; {len(errors)} failed" if errors else ""))

    def past_deadline(self) -> bool:
        return time.time() > self.args.deadline_at


# ---------------------------------------------------------------------------
# Report: table, ratios, plot (all from the CSV, which survives restarts)
# ---------------------------------------------------------------------------

def report(csv_path: Path, png: Path, matmul_tflops: Optional[float]) -> None:
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        if r["config"] == "_peak" and r["tflops"] and not matmul_tflops:
            matmul_tflops = float(r["tflops"])
    rows = [r for r in rows if not r["config"].startswith("_")]
    tf: Dict[Tuple[str, str], float] = {}
    for r in rows:
        if r["status"] == "ok" and r["tflops"]:
            tf[(r["config"], r["kernel"])] = float(r["tflops"])
    cfgs = list(dict.fromkeys(r["config"] for r in rows))
    status = {(r["config"], r["kernel"]): r["status"] for r in rows}
    head = f"{'config':38}" + "".join(f"{k:>12}" for k in KERNELS) + \
        "".join(f"{'ao/' + p[5:] if p.startswith('sdpa') else 'ao/' + p:>12}" for p in PEERS)
    print("\nTFLOP/s (ao = attn-opt; ratio > 1: attn-opt faster)")
    print(head)
    ratios: Dict[str, List[float]] = {p: [] for p in PEERS}
    for c in cfgs:
        line = f"{c:38}"
        for k in KERNELS:
            v = tf.get((c, k))
            line += f"{v:12.1f}" if v is not None else f"{status.get((c, k), '-'):>12}"
        a = tf.get((c, "attn-opt"))
        for p in PEERS:
            b = tf.get((c, p))
            if a is not None and b:
                ratios[p].append(a / b)
                line += f"{a / b:12.3f}"
            else:
                line += f"{'n/a':>12}"
        print(line)
    for p in PEERS:
        rs = ratios[p]
        if rs:
            g = math.exp(sum(map(math.log, rs)) / len(rs))
            print(f"attn-opt / {p}: geometric mean {g:.3f} over {len(rs)} configs "
                  f"(min {min(rs):.3f}, max {max(rs):.3f})")
        else:
            print(f"attn-opt / {p}: n/a (no config with both timed)")
    if matmul_tflops:
        print(f"(fp16 8192^3 torch.matmul on this GPU: {matmul_tflops:.0f} TFLOP/s)")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return
    fig, axes = plt.subplots(2, 2, figsize=(13, 9), sharex=True)
    colors = {"attn-opt": "tab:red", "sdpa-flash": "tab:blue",
              "sdpa-cudnn": "tab:green", "triton": "tab:purple"}
    styles = {"float16": "-", "bfloat16": "--"}
    meta = {r["config"]: r for r in rows}
    for i, d in enumerate((64, 128)):
        for j, causal in enumerate((False, True)):
            ax = axes[i][j]
            for kname in KERNELS:
                for dt in ("float16", "bfloat16"):
                    pts = sorted((int(meta[c]["N"]), tf[(c, kname)]) for c in cfgs
                                 if (c, kname) in tf and int(meta[c]["D"]) == d
                                 and meta[c]["causal"] == str(causal)
                                 and meta[c]["dtype"] == dt)
                    main = [p for p in pts if p[0] <= 16384]
                    long = [p for p in pts if p[0] > 16384]
                    label = f"{kname} {'fp16' if dt == 'float16' else 'bf16'}"
                    if main:
                        ax.plot([p[0] for p in main], [p[1] for p in main], styles[dt],
                                color=colors[kname], marker="o", ms=3, label=label)
                    if long:
                        ax.plot([p[0] for p in long], [p[1] for p in long],
                                "*" if dt == "float16" else "x", color=colors[kname],
                                ms=9, label=None if main else label)
            if matmul_tflops:
                ax.axhline(matmul_tflops, color="gray", lw=0.8, ls=":",
                           label="fp16 matmul")
            ax.set_xscale("log", base=2)
            vals = [v for (c, _), v in tf.items()
                    if int(meta[c]["D"]) == d and meta[c]["causal"] == str(causal)]
            if vals and min(vals) < max(vals) / 20:
                ax.set_yscale("log")
            ax.set_title(f"D={d}, {'causal' if causal else 'non-causal'}")
            ax.set_xlabel("N (16k tokens/batch; N=131072: one head)")
            ax.set_ylabel("TFLOP/s")
            ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes.flat:
        h, l = ax.get_legend_handles_labels()
        for hh, ll in zip(h, l):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8)
    fig.suptitle("attention forward, TFLOP/s")
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


def matmul_peak(torch: Any) -> Optional[float]:
    try:
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
        run_once(torch, lambda: a @ b)
        ms, _ = time_kernel(torch, lambda: a @ b, 200.0, 1e9)
        return 2 * 8192 ** 3 / (ms * 1e-3) / 1e12
    except Exception:
        return None


# ---------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundles", default=str(HERE / "bundles"),
                    help="directory of attn-opt bundles (searched recursively)")
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated substrings of config names")
    ap.add_argument("--bundled-only", action="store_true",
                    help="only the configs with a bundle in --bundles (an A/B over a subset)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-flops", type=float, default=2e10,
                    help="fp32 reference work per config (query rows are sampled)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time the kernels of a config in this many interleaved rounds "
                         "(median of the round medians)")
    ap.add_argument("--interleave", action="store_true",
                    help="with --rounds > 1: the kernels take turns launch by launch "
                         "instead of in whole phases")
    ap.add_argument("--target-ms", type=float, default=100.0,
                    help="GPU time per timed kernel (repeats = target / one launch)")
    ap.add_argument("--tune-ms", type=float, default=20.0,
                    help="GPU time per Triton variant while tuning")
    ap.add_argument("--slow-ms", type=float, default=1000.0,
                    help="launches slower than this are timed once")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds after which no new config starts (0: none)")
    ap.add_argument("--kernel-timeout", type=float, default=180.0,
                    help="seconds for one config before the script restarts past it")
    ap.add_argument("--report-only", action="store_true",
                    help="print the table and draw the plot from OUT/bench.csv")
    ap.add_argument("--append", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--resume-after", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline-at", type=float, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--matmul-tflops", type=float, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--prior-attn-failures", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    t0 = time.time()
    if not args.deadline_at:
        args.deadline_at = t0 + args.deadline if args.deadline > 0 else float("inf")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        report(out_dir / "bench.csv", out_dir / "bench.png", None)
        return 0

    import torch
    if not torch.cuda.is_available():
        print("error: torch sees no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if not args.append:
        import triton
        print(f"device: {torch.cuda.get_device_name()} | torch {torch.__version__} | "
              f"triton {triton.__version__} | cuDNN {torch.backends.cudnn.version()}")
        args.matmul_tflops = matmul_peak(torch) or 0.0

    all_cfgs = configs(args.quick)
    if args.only:
        keys = [s for s in args.only.split(",") if s]
        all_cfgs = [c for c in all_cfgs if any(s in c.name for s in keys)]
    if args.resume_after:
        names = [c.name for c in all_cfgs]
        all_cfgs = all_cfgs[names.index(args.resume_after) + 1:] \
            if args.resume_after in names else all_cfgs
    index = index_bundles(Path(args.bundles))
    if args.bundled_only:
        all_cfgs = [c for c in all_cfgs
                    if (c.dtype, c.D, c.N, c.B * c.H, c.causal) in index]
    if not args.append:
        print(f"{len(all_cfgs)} configs, {len(index)} matching bundle(s) in {args.bundles}")

    bench = Bench(args, torch)
    bench.attn_failures = args.prior_attn_failures
    if args.matmul_tflops and not args.append:
        bench.writer.writerow({"config": "_peak", "kernel": "torch.matmul fp16 8192^3",
                               "status": "ok", "tflops": f"{args.matmul_tflops:.1f}"})

    def restart(after: str) -> None:
        bench.fh.flush()
        argv = [sys.executable, os.path.abspath(__file__), "--append",
                "--resume-after", after, "--deadline-at", repr(args.deadline_at),
                "--matmul-tflops", repr(args.matmul_tflops),
                "--prior-attn-failures", str(bench.attn_failures),
                "--bundles", args.bundles, "--out", args.out, "--seed", str(args.seed),
                "--ref-flops", repr(args.ref_flops), "--target-ms", repr(args.target_ms),
                "--rounds", str(args.rounds),
                "--tune-ms", repr(args.tune_ms), "--slow-ms", repr(args.slow_ms),
                "--kernel-timeout", repr(args.kernel_timeout)]
        if args.interleave:
            argv.append("--interleave")
        if args.quick:
            argv.append("--quick")
        if args.only:
            argv += ["--only", args.only]
        if args.bundled_only:
            argv.append("--bundled-only")
        print(f"restarting in a fresh process after {after}", flush=True)
        os.execv(sys.executable, argv)

    for cfg in all_cfgs:
        if bench.past_deadline():
            for k in KERNELS:
                bench.emit(cfg, k, status="skipped", note="deadline")
            continue
        key = (cfg.dtype, cfg.D, cfg.N, cfg.B * cfg.H, cfg.causal)
        print(f"{cfg.name}  ({cfg.flops / 1e12:.3f} TFLOP)", flush=True)

        def expire(cfg: Config = cfg) -> None:
            bench.emit(cfg, "-", status="error",
                       note=f"config took over {args.kernel_timeout:.0f} s; restarted")
            restart(cfg.name)

        with Watchdog(args.kernel_timeout, expire):
            try:
                bench.run_config(cfg, index.get(key))
                bench.time_pending(cfg)  # peers of a config whose attn-opt did not run
            except Exception as e:
                traceback.print_exc()
                bench.emit(cfg, "-", status="error", note=f"{type(e).__name__}: {e}"[:300])
        torch.cuda.empty_cache()
        if not cuda_healthy(torch):
            bench.emit(cfg, "-", status="error", note="CUDA context broken; restarted")
            restart(cfg.name)

    bench.fh.close()
    report(bench.csv_path, out_dir / "bench.png", args.matmul_tflops or None)
    print(f"csv: {bench.csv_path}  ({time.time() - t0:.0f} s in this process)")
    if bench.attn_failures:
        print(f"{bench.attn_failures} attn-opt bundle(s) failed their check")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
