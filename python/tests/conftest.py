import os
from pathlib import Path

# Use the attn-opt of this checkout unless the caller chose one.
_BIN = Path(__file__).resolve().parents[2] / "build" / "bin" / "attn-opt"
if "ATTN_OPT" not in os.environ and _BIN.is_file():
    os.environ["ATTN_OPT"] = str(_BIN)
