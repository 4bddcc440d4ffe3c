"""The differential fuzzer's own rewriting (no MLIR tools): mutate.py's
all-f32 version of an f16 mutant, which decides whether a mismatch is f16
rounding (the program's) or a wrong fusion."""
import struct
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[2] / "test" / "fuzz"
sys.path.insert(0, str(FUZZ))

import mutate  # noqa: E402


def test_promote_f16_translates_dense_hex_blobs():
    vals = [-65504.0, 0.0, 1.5, -2.0]
    blob = struct.pack("<4e", *vals).hex().upper()
    text = (f'%c = arith.constant dense<"0x{blob}"> : tensor<1x4xf16>\n'
            f'%s = arith.constant 0xFBFF : f16\n')
    out = mutate.promote_f16(text)
    want = struct.pack("<4f", *vals).hex().upper()
    assert f'dense<"0x{want}"> : tensor<1x4xf32>' in out
    assert "f16" not in out
    # The scalar hex literal is translated too (-65504 as f32 bits).
    assert "0xC77FE000 : f32" in out


def test_promote_f16_leaves_other_blobs_alone():
    text = '%c = arith.constant dense<"0x0000803F"> : tensor<1xf32>\n'
    assert mutate.promote_f16(text) == text
