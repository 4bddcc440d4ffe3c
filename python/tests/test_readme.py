"""README.md's Python blocks run as written (from the project root), so the
README cannot drift from the package. A block says what it needs with a
comment line `# needs: attn-opt`, `# needs: attn-bundle` or `# needs: gpu`
(comma-separated for several); a block whose needs are not met here is
skipped: a GPU block runs only where torch sees a CUDA device."""
import builtins
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attn_opt

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
NEEDS = re.compile(r"^#\s*needs:\s*(.+)$", re.M)
KNOWN_NEEDS = {"gpu", "attn-opt", "attn-bundle"}


def needs(block):
    return {n.strip() for line in NEEDS.findall(block) for n in line.split(",")
            if n.strip()}


def _tool_runs(find):
    """The tool is there and starts (not half-written by a rebuild)."""
    try:
        exe = find()
    except FileNotFoundError as e:
        return str(e)
    try:
        p = subprocess.run([exe, "--version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{exe} does not start: {e}"
    return None if p.returncode == 0 else f"{exe} --version exited {p.returncode}"


def _gpu():
    try:
        import torch
    except ImportError:
        return "no torch"
    return None if torch.cuda.is_available() else "torch sees no CUDA device"


CHECKS = {"attn-opt": lambda: _tool_runs(attn_opt.find_attn_opt),
          "attn-bundle": lambda: _tool_runs(attn_opt.find_attn_bundle),
          "gpu": _gpu}


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 3
    assert any(not needs(b) & {"gpu"} for b in BLOCKS)
    for b in BLOCKS:
        unknown = needs(b) - KNOWN_NEEDS
        assert not unknown, f"unknown '# needs:' {unknown} (known: {KNOWN_NEEDS})"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, monkeypatch):
    block = BLOCKS[index]
    for need in sorted(needs(block) & KNOWN_NEEDS, key=lambda n: n != "gpu"):
        why = CHECKS[need]()
        if why:
            pytest.skip(f"needs {need}: {why}")
    monkeypatch.chdir(ROOT)
    code = builtins.compile(block, f"README.md python block {index}", "exec")
    exec(code, {"__name__": "__readme__"})


def test_version_matches_pyproject():
    text = (ROOT / "python" / "pyproject.toml").read_text()
    if sys.version_info >= (3, 11):
        import tomllib
        version = tomllib.loads(text)["project"]["version"]
    else:
        version = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    assert attn_opt.__version__ == version


def test_top_level_api():
    """What the README names is at the package's top level."""
    from attn_opt import bundle
    assert attn_opt.load is bundle.load and attn_opt.load_bundle is bundle.load
    assert attn_opt.compile is bundle.compile and attn_opt.compile_bundle is bundle.compile
    for name in ("fuse", "lower_cpu", "read_manifest", "BundleError", "__version__"):
        assert name in attn_opt.__all__ and hasattr(attn_opt, name)
