#!/usr/bin/env python3
"""Register use and local-memory spills of bundles' kernels, from ptxas -v
on each bundle's kernel.ptx (for the manifest's chip), without a GPU:

    python3 test/Integration/GPU/spills.py DIR [DIR ...] [--max-spill N]
        [--no-serialized] [--csv F]

DIR is a bundle or a folder of bundles (searched recursively). Prints one
line per kernel (registers, spill stores/loads in bytes, stack frame, and
"serialized" where ptxas serialized its wgmma products: its C7510-C7519
performance notes) and a summary; exits 1 when a kernel spills more than
--max-spill bytes (default: no limit) or, with --no-serialized, when one is
serialized; 2 on usage errors or when ptxas fails.

--sass (needs cuobjdump) also counts each cubin's "full waits": a
`WARPGROUP.DEPBAR.LE gsb0, 0x0` within three instructions after a wait for
all but the newest group (`0x1`), i.e. a loop that meant to run its P V
product under the softmax but waits for it at once. ptxas says nothing
about these (log step 216: D = 256 at 0.80x); --no-full-waits fails on any.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

PTXAS = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
USED = re.compile(r"Used (\d+) registers")
SERIAL = re.compile(r"\((C751\d)\)[^\n]*wgmma[^\n]*serialized")
SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


CUOBJDUMP = os.environ.get("CUOBJDUMP", "cuobjdump")
SASS_INS = re.compile(r"/\*[0-9a-f]{4,6}\*/\s+(.*?);")


def full_waits(sass: str) -> int:
    """Waits for every wgmma group right after a wait that leaves one in
    flight (within three instructions), in cuobjdump -sass text."""
    ins = [m.group(1).strip() for m in SASS_INS.finditer(sass)]
    return sum(1 for i, x in enumerate(ins) if "DEPBAR.LE gsb0, 0x1" in x and
               any("DEPBAR.LE gsb0, 0x0" in y for y in ins[i + 1:i + 4]))


def bundles(paths):
    for p in paths:
        p = Path(p)
        if (p / "manifest.json").exists():
            yield p
        elif p.is_dir():
            yield from sorted(m.parent for m in p.rglob("manifest.json"))


def measure(b: Path, sass: bool = False) -> dict:
    man = json.loads((b / "manifest.json").read_text())
    ptx = b / man.get("ptx", "kernel.ptx")
    out = subprocess.run([PTXAS, f"-arch={man['chip']}", "-v", str(ptx), "-o", os.devnull],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"ptxas failed on {ptx}: {out.stderr[-300:]}")
    used, spill = USED.search(out.stderr), SPILL.search(out.stderr)
    return {"bundle": str(b), "registers": int(used.group(1)) if used else -1,
            "stack": int(spill.group(1)) if spill else 0,
            "spill_stores": int(spill.group(2)) if spill else 0,
            "spill_loads": int(spill.group(3)) if spill else 0,
            "serialized": ",".join(sorted(set(SERIAL.findall(out.stderr)))),
            "full_waits": count_full_waits(b, man) if sass else -1,
            "kernel_choice": man.get("attention", {}).get("kernel_choice", "")[:90]}


def count_full_waits(b: Path, man: dict) -> int:
    if not man.get("cubin"):
        raise RuntimeError(f"{b}: no cubin for --sass")
    out = subprocess.run([CUOBJDUMP, "-sass", str(b / man["cubin"])],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"cuobjdump failed on {b}: {out.stderr[-300:]}")
    return full_waits(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--max-spill", type=int, default=-1,
                    help="fail when a kernel's spill stores exceed this many bytes")
    ap.add_argument("--no-serialized", action="store_true",
                    help="fail when ptxas serialized a kernel's wgmma products")
    ap.add_argument("--sass", action="store_true",
                    help="count full waits in each cubin's SASS (cuobjdump)")
    ap.add_argument("--no-full-waits", action="store_true",
                    help="with --sass: fail when a kernel has a full wait")
    ap.add_argument("--csv")
    a = ap.parse_args()
    rows = []
    try:
        for b in bundles(a.paths):
            rows.append(measure(b, a.sass or a.no_full_waits))
    except (RuntimeError, KeyError, json.JSONDecodeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not rows:
        print("error: no bundles found", file=sys.stderr)
        return 2
    for r in rows:
        serial = f"  serialized ({r['serialized']})" if r["serialized"] else ""
        waits = f"  full waits {r['full_waits']}" if r["full_waits"] > 0 else ""
        print(f"{r['registers']:4d} regs  {r['spill_stores']:4d} B spilled  "
              f"{Path(r['bundle']).name}  {r['kernel_choice']}{serial}{waits}")
    spilling = [r for r in rows if r["spill_stores"]]
    print(f"\n{len(rows)} kernels, {len(spilling)} spill (max "
          f"{max((r['spill_stores'] for r in rows), default=0)} bytes)")
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    over = [r for r in rows if a.max_spill >= 0 and r["spill_stores"] > a.max_spill]
    serialized = [r for r in rows if a.no_serialized and r["serialized"]]
    waiting = [r for r in rows if a.no_full_waits and r["full_waits"] > 0]
    if a.sass or a.no_full_waits:
        print(f"{sum(r['full_waits'] > 0 for r in rows)} kernel(s) with full waits")
    return 1 if over or serialized or waiting else 0


if __name__ == "__main__":
    sys.exit(main())
