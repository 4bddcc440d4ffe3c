#!/usr/bin/env python3
"""A/B of two compilers' bundles for the same programs: bundles with the
same name under DIR_A and DIR_B (built here from one program with two
attn-bundle builds, or with two flag sets) run on the same inputs, taking
turns for --rounds rounds of --reps CUDA-event-timed launches; prints the
median of each one's round medians, A's time over B's, and the outputs'
relative difference.

    python3 bench/ab_bundles.py --make --out DIR [--flags "..."]   # here
    python3 bench/ab_bundles.py DIR_A DIR_B                         # GPU

--make writes the [B, H, N, D] programs of CONFIGS (name:
{dtype}_d{D}_n{N}_b{B}_h{H}_{causal|full}, as bench/make_bundles.py), or
with --forms F,... the forms table's D = 128 rows of those forms (inputs:
N(0, 1) in each operand's dtype, a bias included), with
build/bin/attn-bundle into DIR.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

# Default: the rows that take the warp-specialized kernel (non-causal
# D = 128, 4096 <= N <= 16384), both 16-bit types.
CONFIGS = [(dt, 128, n, 16384 // n, 16, False) for dt in ("float16", "bfloat16")
           for n in (4096, 8192, 16384)]


def shape_configs(shapes: str, dtypes: str = "float16,bfloat16"):
    """--shapes D:N:causal|full[:H],...: [B, H, N, D] rows in each of
    --dtypes (f16 and bf16; an 8-bit type writes f16), 16k tokens per batch
    (B = 16384 / N) and model dim 2048 (H = 2048 / D) unless H is given."""
    out = []
    for item in shapes.split(","):
        d, n, kind, *h = item.split(":")
        d, n = int(d), int(n)
        out += [(dt, d, n, max(1, 16384 // n), int(h[0]) if h else 2048 // d,
                 kind == "causal") for dt in dtypes.split(",")]
    return out


# Forms for A/Bs only (not in the forms table, which needs a peer for
# each): a bias per head under causal (T5-style decoders).
AB_FORMS = {"bias_causal": dict(mask=("h", "m", "n"), mask_dtype="dtype", causal=True)}


def make(out: Path, flags: str, forms: str = "", shapes: str = "",
         head_dims: str = "128", dtypes: str = "float16,bfloat16",
         attn_bundle: str = str(HERE.parent / "build" / "bin" / "attn-bundle")) -> int:
    from make_bundles import FORMS, forms_configs, forms_program, program
    FORMS.update(AB_FORMS)
    jobs = []  # (name, program)
    if forms:
        wanted = forms.split(",")
        for dt, d, n, b, h, form in forms_configs():
            if str(d) in head_dims.split(",") and form in wanted:
                jobs.append((f"{dt}_d{d}_n{n}_b{b}_h{h}_{form}",
                             forms_program(dt, d, n, b, h, form)))
    else:
        for dt, d, n, b, h, causal in (shape_configs(shapes, dtypes) if shapes
                                       else CONFIGS):
            out_dt = "float16" if dt.startswith("float8") else ""
            jobs.append((f"{dt}_d{d}_n{n}_b{b}_h{h}_{'causal' if causal else 'full'}",
                         program(dt, d, n, b, h, causal, out_dtype=out_dt)))
    failed = 0
    for name, text in jobs:
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as src:
            src.write(text)
            src.flush()
            p = subprocess.run([attn_bundle, src.name,
                                "-o", str(out / name), "--chip=sm_90a", *flags.split()],
                               capture_output=True, text=True)
        print(("FAIL " + p.stderr[-500:]) if p.returncode else f"wrote {out / name}")
        failed += p.returncode != 0
    return 1 if failed else 0


def run(a_dir: Path, b_dir: Path, rounds: int, reps: int) -> int:
    import torch
    from attn_opt import bundle as B
    print(f"device: {torch.cuda.get_device_name()} | torch {torch.__version__}")
    for pa in sorted(p for p in a_dir.iterdir() if (p / "manifest.json").exists()):
        pb = b_dir / pa.name
        if not (pb / "manifest.json").exists():
            continue
        ka, kb = B.load(pa), B.load(pb)
        gen = torch.Generator(device="cuda").manual_seed(1)
        ins = [torch.randn(s.shape, generator=gen, device="cuda").to(getattr(torch, s.dtype))
               for s in (ka.manifest.arg(n) for n in ka.manifest.inputs)]
        outs, fns = [], []
        for k in (ka, kb):
            o = k.empty_out()
            # By name: the two kernels may order their parameters differently.
            fns.append(k.prepare(**dict(zip(ka.manifest.inputs, ins)), out=o))
            outs.append(o)
        for f in fns:
            f()
        torch.cuda.synchronize()
        diff = float((outs[0].float() - outs[1].float()).norm() / outs[0].float().norm())
        meds = [[], []]
        for _ in range(rounds):
            for i, f in enumerate(fns):
                ev = [(torch.cuda.Event(enable_timing=True),
                       torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
                for s, e in ev:
                    s.record()
                    f()
                    e.record()
                torch.cuda.synchronize()
                meds[i].append(statistics.median(s.elapsed_time(e) for s, e in ev))
        ta, tb = (statistics.median(m) for m in meds)
        print(f"{pa.name}: A {ta * 1e3:.1f} us, B {tb * 1e3:.1f} us, A/B {ta / tb:.3f}, "
              f"outputs differ by {diff:.1e}", flush=True)
        ka.close()
        kb.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--make", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--flags", default="")
    ap.add_argument("--forms", default="",
                    help="--make: the forms table's rows (D = 128 unless "
                         "--head-dims) of these forms "
                         "(comma-separated, e.g. bias,plain) instead of CONFIGS")
    ap.add_argument("--shapes", default="",
                    help="--make: D:N:causal|full,... rows (f16 and bf16, 16k "
                         "tokens, model dim 2048) instead of CONFIGS")
    ap.add_argument("--dtypes", default="float16,bfloat16",
                    help="--make --shapes: these element types (float8_e4m3fn: "
                         "FP8 operands, f16 output)")
    ap.add_argument("--head-dims", default="128",
                    help="--make --forms: the forms table's rows of these head "
                         "dims (comma-separated; 80, 96, 256 have plain and causal)")
    ap.add_argument("--attn-bundle", default=str(HERE.parent / "build" / "bin" / "attn-bundle"),
                    help="--make: the attn-bundle to compile with (an older "
                         "build for the A side)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    if a.make:
        return make(Path(a.out), a.flags, a.forms, a.shapes, a.head_dims, a.dtypes,
                    a.attn_bundle)
    if len(a.dirs) != 2:
        ap.error("give DIR_A DIR_B (or --make --out DIR)")
    return run(Path(a.dirs[0]), Path(a.dirs[1]), a.rounds, a.reps)


if __name__ == "__main__":
    sys.exit(main())
