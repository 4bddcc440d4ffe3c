"""Thin, typed wrappers around the attn-opt command line."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple


class CompileError(RuntimeError):
    """attn-opt rejected its input; `diagnostics` holds its stderr."""

    def __init__(self, message: str, diagnostics: str) -> None:
        super().__init__(f"{message}\n{diagnostics}")
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class Remark:
    """One --attn-explain remark: where, and what was (not) fused."""

    line: int
    column: int
    message: str

    @property
    def fused(self) -> bool:
        return self.message.startswith("attention fused")


def find_tool(name: str, env_var: str) -> str:
    """$env_var, else build/bin/<name> above this file, else PATH."""
    env = os.environ.get(env_var)
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError(f"{env_var}={env} does not exist")
        return env
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent / "build" / "bin" / name
        if cand.is_file():
            return str(cand)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"{name} not found: build it (bash .ci/setup) or set ${env_var}")


def find_attn_opt() -> str:
    return find_tool("attn-opt", "ATTN_OPT")


_REMARK = re.compile(r"^[^:\n]*:(\d+):(\d+): remark: (.*)$", re.M)


def _run(args: List[str], source: str) -> Tuple[str, str]:
    proc = subprocess.run([find_attn_opt(), "-"] + args, input=source,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"attn-opt {' '.join(args)} failed "
                           f"(exit {proc.returncode})", proc.stderr)
    return proc.stdout, proc.stderr


def fuse(source: str, tile: Optional[Tuple[int, int]] = None
         ) -> Tuple[str, List[Remark]]:
    """Recognizes attention in `source`; returns the IR and one remark per
    candidate. With `tile=(tq, tkv)` the result is also tiled."""
    args = ["--attn-fuse", "--attn-explain"]
    if tile is not None:
        args.append(f"--attn-tile=tile-q={tile[0]} tile-kv={tile[1]}")
    out, err = _run(args, source)
    remarks = [Remark(int(m.group(1)), int(m.group(2)), m.group(3))
               for m in _REMARK.finditer(err)]
    return out, remarks


def lower_cpu(source: str, tile: Tuple[int, int] = (64, 64)) -> str:
    """The whole module through --attn-cpu-pipeline (LLVM dialect)."""
    out, _ = _run([f"--attn-cpu-pipeline=tile-q={tile[0]} tile-kv={tile[1]}"],
                  source)
    return out
