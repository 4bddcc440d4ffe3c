"""What the corpus generators (gen_corpus.py, gen_torch_corpus.py) share:
finding a tool next to the venv's interpreter and running it."""
import os
import shutil
import subprocess
import sys


def find_tool(name, given=None, prog="corpus"):
    """`given`, else NAME next to the running interpreter, else on PATH."""
    if given:
        return given
    cand = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(cand):
        return cand
    found = shutil.which(name)
    if not found:
        sys.exit(f"{prog}: cannot find {name}; pass --{name}")
    return found


def run(cmd, prog="corpus"):
    """stdout of `cmd`; exits with its stderr if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{prog}: command failed: {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def check_upstream_ops(text, name, allowed, prog="corpus"):
    """Exits unless every op of `text` belongs to a dialect in `allowed`."""
    import re
    for m in re.finditer(r"^\s*(?:%[\w:#, %]+=\s*)?\"?([a-z_]+)\.([\w.]+)", text, re.M):
        if m.group(1) not in allowed:
            sys.exit(f"{prog}: {name}: op of a non-upstream dialect: "
                     f"{m.group(1)}.{m.group(2)}")


# The lit lines every corpus file starts with: the remarks are exactly the
# CHECK lines that follow, and the file is executed fused and unfused.
RUN_LINES = [
    "// RUN: attn-opt %s --attn-fuse --attn-explain -o /dev/null 2>&1 \\",
    "// RUN:   | FileCheck %s --implicit-check-not=remark:",
    "// RUN: %exec-check %s",
    "//",
]


def check_lines(remarks):
    """CHECK lines for the expected remarks (the first one anchored)."""
    return [f"// CHECK: remark: {remarks[0]}{{{{$}}}}"] + \
        [f"// CHECK: remark: {r}" for r in remarks[1:]]
