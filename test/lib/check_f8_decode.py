#!/usr/bin/env python3
"""Reads the 256 values printed by fp8-decode.mlir (stdin) and compares them
with the values the 8-bit float format defines for each code (exactly; NaN
codes must print NaN)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from exec_check import f8_values, parse_output  # noqa: E402

elt = sys.argv[1]
# The f32 bit patterns, printed as i32.
bits = parse_output(sys.stdin.read()).astype(np.int64).astype(np.uint32)
got = bits.view(np.float32).astype(np.float64)
want = f8_values(elt)
if got.shape != want.shape:
    sys.exit(f"expected 256 values, got {got.shape}")
bad = [c for c in range(256)
       if not (np.isnan(want[c]) and np.isnan(got[c])) and got[c] != want[c]]
for c in bad[:10]:
    print(f"code 0x{c:02x}: got {got[c]!r}, want {want[c]!r}")
print(f"{elt}: {256 - len(bad)}/256 codes exact")
sys.exit(1 if bad else 0)
