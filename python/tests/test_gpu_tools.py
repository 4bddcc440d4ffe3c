"""The GPU check tools' pure-Python parts (no GPU, no CUDA tools):
spills.py's count of full waits in cuobjdump's SASS (log step 216)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "Integration" / "GPU"))

import spills  # noqa: E402


def sass(*lines: str) -> str:
    return "\n".join(f"        /*{16 * i:04x}*/                   {x} ;"
                     f"                 /* 0x000fe20000000000 */"
                     for i, x in enumerate(lines))


def test_full_wait_right_after_the_partial_one_counts():
    text = sass("HGMMA.64x256x16.F32 R24, R184, gdesc[UR8].tnspB, R24, gsb0",
                "BAR.ARV R11, 0x100",
                "WARPGROUP.DEPBAR.LE gsb0, 0x1",
                "WARPGROUP.DEPBAR.LE gsb0, 0x0",
                "FMNMX R2, R152, R153, !PT")
    assert spills.full_waits(text) == 1


def test_full_wait_after_the_softmax_does_not_count():
    text = sass("WARPGROUP.DEPBAR.LE gsb0, 0x1",
                "FMNMX R2, R152, R153, !PT",
                "FMNMX R2, R2, R154, !PT",
                "FMNMX R2, R2, R155, !PT",
                "SHFL.BFLY PT, R3, R2, 0x1, 0x1f",
                "WARPGROUP.DEPBAR.LE gsb0, 0x0")
    assert spills.full_waits(text) == 0
    assert spills.full_waits("") == 0
