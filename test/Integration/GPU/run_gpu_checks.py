#!/usr/bin/env python3
"""Correctness of attn-opt kernel bundles on a CUDA GPU (the lent H100).

    python3 test/Integration/GPU/run_gpu_checks.py DIR [DIR ...] [--csv OUT.csv]

Each DIR is a bundle (has manifest.json) or holds bundles in subdirectories.
For every bundle: load it (python/attn_opt/bundle.py: CUDA driver through
ctypes, no MLIR), draw seeded random inputs of the manifest's shapes and
dtypes (q, k, v, sink ~ N(0,1); a bool mask keeps ~85% of keys, a float mask
has ~10% -inf; two query rows of a mask are masked whole), then

  1. fill `out` with NaN, launch, synchronize: count NaNs (unwritten or
     computed);
  2. fill `out` with 4096 (no softmax average of N(0,1) values comes near),
     launch again: count elements still 4096 (unwritten), and compare the two
     outputs bit for bit (a difference suggests a race; reported, not failed);
  3. compare run 1 with an fp32 torch reference (python/attn_opt/reference.py:
     softmax(score_mod(scale*q@k^T) + mask) @ v with the manifest's causal /
     window / mask_value / sink / layout / score_mod (attention.score_mod,
     evaluated by the reference); a fully masked row gives 0 with mask_value
     -inf/null and the uniform average of V with a finite one):
     ||out - ref|| / ||ref|| must be <= 1e-2 (f16/bf16 out) or 1e-5 (f32).
     Problems whose reference would cost more than --ref-flops are checked on
     a sample of query rows (first/last 16 and random ones, every batch
     index); `rows_checked` says how many.

Layouts: read from the manifest (attention.layout, else each arg's `map`,
else canonical q [b..., M, D], k [b..., N, D], v [b..., N, E], out
[b..., M, E]). Before the bundles, the torch reference is checked against
the numpy float64 one on small problems with every feature (self-test).

A launch that breaks the CUDA context (illegal address, ...) or exceeds
--timeout seconds is recorded and the script re-executes itself on the
remaining bundles. Exit status: 0 when every bundle passed, 1 otherwise
(2 for usage errors). Results: one CSV row per bundle (--csv), and a table
on stdout.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import os
import sys
import traceback
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python"))

from attn_opt import bundle as B  # noqa: E402
from attn_opt import reference as R  # noqa: E402
from attn_opt.harness import Watchdog, cuda_healthy  # noqa: E402

COLUMNS = ["bundle", "kernel", "status", "rel_err", "tol", "nan", "unwritten",
           "deterministic", "rows_checked", "ms", "dtype", "shapes", "causal",
           "window", "mask", "sink", "mask_value", "score_mod", "image", "note", "error"]
POISON = 4096.0


def tolerance(dtype: str, f32_precision: Optional[str] = None,
              q_dtype: str = "") -> float:
    # FP8: P is rounded to 8 bits (3 mantissa bits in e4m3) for P V; the
    # issue's bound against the f32 reference of the same 8-bit inputs.
    if q_dtype.startswith("float8"):
        return 3e-2
    # TF32 products keep 10 mantissa bits (unit roundoff 2^-11); 3xTF32 and
    # the SIMT kernel are f32-accurate.
    if dtype == "float32":
        return 2e-3 if f32_precision == "tf32" else 1e-5
    return 1e-2


def find_bundles(paths: List[str]) -> List[Path]:
    found: List[Path] = []
    for p in map(Path, paths):
        if (p / "manifest.json").is_file():
            found.append(p)
        elif p.is_dir():
            # A bundle's launch variants (DIR/v1, ...) run through it.
            found.extend(sorted(m.parent for m in p.rglob("manifest.json")
                                if not (re.fullmatch(r"v[0-9]{1,3}", m.parent.name)
                                        and (m.parent.parent / "manifest.json").is_file())))
        else:
            print(f"warning: {p} is neither a bundle nor a directory", file=sys.stderr)
    return found


def describe(man: B.Manifest) -> Dict[str, Any]:
    att = man.attention
    out = man.arg("out")
    mask = man.arg("mask")
    return {
        "kernel": man.kernel, "dtype": out.dtype if out else "",
        "shapes": " ".join(f"{a.name}={'x'.join(map(str, a.shape))}" for a in man.args),
        "causal": att.causal, "window": att.window or "",
        "mask": mask.dtype if mask else "", "sink": bool(man.arg("sink")),
        "mask_value": att.mask_value,
        "score_mod": f"{len(att.score_mod.ops)} ops" if att.score_mod else "",
    }


def check_once(kernel: Any, man: B.Manifest, d: Path, row: Dict[str, Any], torch: Any,
               ops: Any, args: argparse.Namespace) -> List[str]:
    """One launch pair at the manifest's (specialized) shapes; fills row's
    numbers, returns the problems found."""
    seed = args.seed + zlib.crc32(str(d.name).encode()) % 100000
    # Every float mask gets a finfo.min row: split-KV bundles too (their
    # merge weighs ranges by (m, ℓ), exact where m + log ℓ rounds to m).
    # check.json (make_check_bundles): the case's input pattern.
    hints = json.loads((d / "check.json").read_text()) if (d / "check.json").exists() else {}
    inputs = R.make_inputs(man, ops, seed, mask_pattern=hints.get("mask_pattern", ""))
    ins = [inputs[n] for n in man.inputs]

    has_lse = man.arg("lse") is not None
    out1 = kernel.empty_out("out", man).fill_(float("nan"))
    # A written lse (f32, -inf allowed) is poisoned with NaN and with POISON too.
    outs1 = {"out": out1}
    if has_lse:
        outs1["lse"] = kernel.empty_out("lse", man).fill_(float("nan"))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    try:
        start.record()
        kernel(*ins, **outs1)
        end.record()
        torch.cuda.synchronize()
        row["ms"] = round(start.elapsed_time(end), 4)
        out2 = kernel.empty_out("out", man).fill_(POISON)
        outs2 = {"out": out2}
        if has_lse:
            outs2["lse"] = kernel.empty_out("lse", man).fill_(POISON)
        kernel(*ins, **outs2)
        torch.cuda.synchronize()
    except Exception as e:
        return [f"launch: {e}"]
    nan1 = int(torch.isnan(out1).sum().item())
    unwritten = int((out2 == POISON).sum().item())
    if has_lse:
        nan1 += int(torch.isnan(outs1["lse"]).sum().item())
        unwritten += int((outs2["lse"] == POISON).sum().item())
    row["nan"], row["unwritten"] = nan1, unwritten
    row["deterministic"] = bool(torch.equal(out1, out2)) if nan1 == 0 else ""

    rows = R.rows_for_budget(man, args.ref_flops, seed)
    row["rows_checked"] = man.sizes()["m"] if rows is None else len(rows)
    ref = R.reference(man, inputs, ops, rows=rows, with_lse=has_lse)
    if has_lse:
        ref, ref_lse = ref
    got = R.canonical(ops, man, "out", out1)
    if rows is not None:
        got = ops.take(got, ops.index(rows), -2)
    rel = R.rel_error(ops, got, ref)
    if has_lse:
        # The lse where the reference is finite (-inf rows must be -inf).
        got_lse = R.canonical(ops, man, "lse", outs1["lse"])
        if rows is not None:
            got_lse = ops.take(got_lse, ops.index(rows), -1)
        finite = torch.isfinite(ref_lse)
        if not torch.equal(torch.isfinite(got_lse), finite):
            rel = float("inf")
        else:
            rel = max(rel, R.rel_error(ops, got_lse[finite], ref_lse[finite]))
    row["rel_err"] = f"{rel:.3e}"
    problems = []
    if nan1:
        problems.append(f"{nan1} NaN")
    if unwritten:
        problems.append(f"{unwritten} elements not written")
    if not rel <= row["tol"]:
        problems.append(f"rel error {rel:.3e} > {row['tol']}")
    del out1, out2, inputs, ref, got
    return problems


def check_bundle(d: Path, torch: Any, ops: Any, args: argparse.Namespace) -> Dict[str, Any]:
    row: Dict[str, Any] = {"bundle": str(d), "status": "FAIL"}
    try:
        man = B.read_manifest(d)
    except B.BundleError as e:
        row["error"] = f"manifest: {e}"
        return row
    row.update(describe(man))
    out_dt = man.arg("out").dtype
    row["tol"] = tolerance(out_dt, man.attention.f32_precision,
                           man.arg("q").dtype)
    try:
        kernel = B.load(d, check_params=not args.no_param_check)
    except Exception as e:  # BundleError, CudaError
        row["error"] = f"load: {e}"
        return row
    row["image"] = kernel.image
    row["note"] = "; ".join(kernel.load_notes)
    # A dynamic bundle: one kernel, checked at several sizes (ragged, one
    # row, one key, several tiles); the row keeps the worst numbers.
    variants = [man]
    if man.dynamic_dims:
        variants = [B.specialize(man, dims) for dims in dynamic_size_sets(man)]
        row["note"] = "; ".join(filter(None, [row.get("note", ""), "dynamic, checked at " + ", ".join(
            "/".join(f"{k}={v}" for k, v in dims.items()) for dims in dynamic_size_sets(man))]))
        # Launch variants (the manifest's "variants"): which sizes took one.
        took = [("/".join(f"{k}={v}" for k, v in dims.items()), kernel.variant_for(dims))
                for dims in dynamic_size_sets(man)] if man.variants else []
        if took:
            row["note"] += "; launch variants: " + ", ".join(
                f"{where} -> {k.bundle.dir.name if k else 'main'}" for where, k in took)
    problems: List[str] = []
    worst: Dict[str, Any] = {}
    for at in variants:
        row.pop("rel_err", None)
        found = check_once(kernel, at, d, row, torch, ops, args)
        where = f" at q {list(at.arg('q').shape)}" if man.dynamic_dims else ""
        problems += [p + where for p in found]
        rel = float(row.get("rel_err") or "inf")
        if not worst or rel > worst["rel"]:
            worst = {"rel": rel, **{k: row.get(k) for k in (
                "rel_err", "nan", "unwritten", "deterministic", "rows_checked", "ms")}}
        if found and found[0].startswith("launch:"):
            break
    worst.pop("rel", None)
    row.update({k: v for k, v in worst.items() if v is not None})
    row["status"] = "PASS" if not problems else "FAIL"
    row["error"] = "; ".join(problems)
    kernel.close()
    return row


def dynamic_size_sets(man: B.Manifest) -> List[Dict[str, int]]:
    """Sizes a dynamic bundle is checked at: a ragged small, a one-row /
    one-key, a multi-tile problem, a long one (batch dims small; with a
    split count chosen at launch these give 1 to 47 ranges) and a batch of
    40 (serving)."""
    sets = []
    for m, n, b in ((37, 53, 2), (1, 1, 1), (1000, 1531, 3), (130, 4096, 1),
                    (16, 32768, 1), (7, 900, 40)):
        sets.append({d: (m if d == "m" else n if d == "n" else b) for d in man.dynamic_dims})
    return sets


SELFTEST = {
    "causal-gqa-bshd": dict(batch=(2, 2, 2), M=37, N=53, D=16, E=8, causal=True,
                            layout={"q": ["b0", "m", "b1", "b2", "d"],
                                    "k": ["b0", "n", "b1", "d"], "v": ["b0", "n", "b1", "e"],
                                    "out": ["b0", "m", "b1", "b2", "e"]}),
    "bool-mask-sink-window": dict(batch=(2, 3), M=40, N=40, D=16, mask="bool",
                                  sink=True, window=7),
    "float-mask-finite-fill": dict(batch=(3,), M=20, N=70, D=32, mask="float32",
                                   causal=True, mask_value=-3.0e38),
    "no-batch": dict(batch=(), M=130, N=90, D=64),
    # score_mod programs (ids: 0 the score, then b0.., m, n, then one per op).
    "softcap-causal": dict(batch=(2, 3), M=37, N=53, D=16, causal=True, scale=4.0,
                           score_mod={"num_args": 5, "ops": [
                               {"op": "arith.constant", "type": "f32", "value": 20.0},
                               {"op": "arith.divf", "type": "f32", "operands": [0, 5]},
                               {"op": "math.tanh", "type": "f32", "operands": [6]},
                               {"op": "arith.mulf", "type": "f32", "operands": [7, 5]}],
                               "result": 8}),
    "alibi-table-bool-mask": dict(batch=(2, 4), M=40, N=45, D=16, mask="bool",
                                  score_mod={"num_args": 5, "ops": [
                                      {"op": "attn.table", "type": "f32", "operands": [2],
                                       "shape": [4], "values": [0.5, 0.25, 0.125, 0.0625]},
                                      {"op": "arith.subi", "type": "index", "operands": [4, 3]},
                                      {"op": "arith.index_cast", "type": "i64", "operands": [6]},
                                      {"op": "arith.sitofp", "type": "f32", "operands": [7]},
                                      {"op": "arith.mulf", "type": "f32", "operands": [5, 8]},
                                      {"op": "arith.addf", "type": "f32", "operands": [0, 9]}],
                                      "result": 10}),
    "select-no-batch": dict(batch=(), M=50, N=70, D=16, sink=True,
                            score_mod={"num_args": 3, "ops": [
                                {"op": "arith.constant", "type": "f32", "value": -1.0},
                                {"op": "arith.cmpf", "type": "i1", "operands": [0, 3],
                                 "predicate": "olt"},
                                {"op": "arith.constant", "type": "f32", "value": 0.5},
                                {"op": "arith.mulf", "type": "f32", "operands": [0, 5]},
                                {"op": "arith.select", "type": "f32", "operands": [4, 6, 0]}],
                                "result": 7}),
}


def selftest(torch: Any, ops: Any) -> List[Dict[str, Any]]:
    """The torch fp32 reference against the numpy float64 one."""
    rows = []
    np_ops = R.NumpyOps()
    for name, kw in SELFTEST.items():
        man = R.make_problem(dtype="float32", **kw)
        x_np = R.make_inputs(man, np_ops, seed=11)
        x_t = {k: torch.as_tensor(v, device="cuda") for k, v in x_np.items()}
        want = R.reference(man, x_np, np_ops)
        got = R.reference(man, x_t, ops, budget=500).cpu().numpy()
        rel = R.rel_error(np_ops, got, want)
        ok = rel <= 1e-5
        rows.append({"bundle": f"selftest:{name}", "kernel": "torch-reference",
                     "status": "PASS" if ok else "FAIL", "rel_err": f"{rel:.3e}",
                     "tol": 1e-5, "dtype": "float32", **({} if ok else
                     {"error": "torch reference disagrees with numpy float64"})})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="bundle directories or directories of bundles")
    ap.add_argument("--csv", default="gpu_checks.csv")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-flops", type=float, default=2e11,
                    help="reference cost above which query rows are sampled")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds per bundle before the script restarts past it")
    ap.add_argument("--no-selftest", action="store_true")
    ap.add_argument("--no-param-check", action="store_true",
                    help="launch even if the PTX entry does not take one pointer per arg")
    ap.add_argument("--append", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--prior-failures", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--prior-passes", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    bundles = find_bundles(args.paths)
    import torch
    if not torch.cuda.is_available():
        print("error: torch sees no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    ops = R.TorchOps("cuda")
    if not args.append:
        print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
              f"{len(bundles)} bundle(s)")

    csv_path = Path(args.csv)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(csv_path, "a" if args.append else "w", newline="")
    writer = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
    if not args.append:
        writer.writeheader()
    results: List[Dict[str, Any]] = []

    def emit(row: Dict[str, Any]) -> None:
        results.append(row)
        writer.writerow(row)
        fh.flush()
        print(f"{row['status']:4}  {row['bundle']}  rel={row.get('rel_err', '-')} "
              f"nan={row.get('nan', '-')} unwritten={row.get('unwritten', '-')} "
              f"rows={row.get('rows_checked', '-')} ms={row.get('ms', '-')}"
              + (f"  ({row['error']})" if row.get("error") else ""), flush=True)

    if not args.no_selftest and not args.append:
        for row in selftest(torch, ops):
            emit(row)

    def restart(rest: List[Path]) -> None:
        fh.flush()
        failures = args.prior_failures + sum(r["status"] != "PASS" for r in results)
        passes = args.prior_passes + sum(r["status"] == "PASS" for r in results)
        argv = [sys.executable, os.path.abspath(__file__), *map(str, rest),
                "--csv", str(csv_path), "--seed", str(args.seed),
                "--ref-flops", str(args.ref_flops), "--timeout", str(args.timeout),
                "--append", "--no-selftest", "--prior-failures", str(failures),
                "--prior-passes", str(passes)]
        if args.no_param_check:
            argv.append("--no-param-check")
        print(f"restarting in a fresh process for {len(rest)} remaining bundle(s)",
              flush=True)
        sys.stdout.flush()
        os.execv(sys.executable, argv)

    for i, d in enumerate(bundles):
        def expire(d: Path = d, i: int = i) -> None:
            emit({"bundle": str(d), "status": "FAIL",
                  "error": f"timed out after {args.timeout:.0f} s (hung kernel?)"})
            restart(bundles[i + 1:])

        with Watchdog(args.timeout, expire):
            try:
                row = check_bundle(d, torch, ops, args)
            except Exception as e:
                row = {"bundle": str(d), "status": "FAIL",
                       "error": f"{type(e).__name__}: {e}"}
                traceback.print_exc()
        broken = row["status"] != "PASS" and not cuda_healthy(torch)
        if broken:
            row["error"] = (row.get("error") or "") + "; the CUDA context is broken"
        emit(row)
        if broken and i + 1 < len(bundles):
            restart(bundles[i + 1:])

    fh.close()
    failed = args.prior_failures + sum(r["status"] != "PASS" for r in results)
    passed = args.prior_passes + sum(r["status"] == "PASS" for r in results)
    print(f"\n{passed} passed, {failed} failed (csv: {csv_path})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
