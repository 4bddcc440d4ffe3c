import os
import sys
from pathlib import Path

# Test the package of this checkout, also when an older one is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Use the attn-opt of this checkout unless the caller chose one.
_BIN = Path(__file__).resolve().parents[2] / "build" / "bin" / "attn-opt"
if "ATTN_OPT" not in os.environ and _BIN.is_file():
    os.environ["ATTN_OPT"] = str(_BIN)

_BUNDLE_BIN = Path(__file__).resolve().parents[2] / "build" / "bin" / "attn-bundle"
if "ATTN_BUNDLE" not in os.environ and _BUNDLE_BIN.is_file():
    os.environ["ATTN_BUNDLE"] = str(_BUNDLE_BIN)
