"""attn-bundle's output safety, checked on the real binary (no GPU needed):
symlinks already in -o DIR are never written through, a directory holding
other files is never replaced, and a run killed at any moment leaves the
old bundle or the new one, complete, never a mix."""
import hashlib
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tools import DECODE_PACKED

ATTN_BUNDLE = os.environ.get("ATTN_BUNDLE", "")

pytestmark = pytest.mark.skipif(not os.path.isfile(ATTN_BUNDLE),
                                reason="needs build/bin/attn-bundle")


def attention(shape, dtype="f16", causal=False):
    *batch, m, d = shape
    dims = [f"b{i}" for i in range(len(batch))]
    allv = ", ".join(dims + ["m", "n", "d", "e"])
    t = "tensor<" + "x".join(map(str, shape)) + "x" + dtype + ">"

    def mp(*names):
        return f"affine_map<({allv}) -> ({', '.join(dims + list(names))})>"

    return (f"func.func @f(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{\n"
            f"  %s = arith.constant 0.5 : f32\n"
            f"  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s)\n"
            f"      outs(%o : {t}) {'causal' if causal else ''}\n"
            f"      indexing_maps = [{mp('m', 'd')}, {mp('n', 'd')}, {mp('n', 'e')}, {mp('m', 'e')}]\n"
            f"      -> {t}\n  return %r : {t}\n}}\n")


A = attention([2, 2, 128, 64], causal=True)  # the wgmma kernel on sm_90a
B = attention([1, 128, 48])                  # the mma.sync kernel


def bundle(src, out, tmp_path, check=True):
    path = tmp_path / f"in_{abs(hash(src))}.mlir"
    path.write_text(src)
    p = subprocess.run([ATTN_BUNDLE, str(path), "-o", str(out)],
                       capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def consistent(d: Path):
    """The manifest's hashes match the files next to it."""
    man = json.loads((d / "manifest.json").read_text())
    for name, digest in man["sha256"].items():
        assert hashlib.sha256((d / name).read_bytes()).hexdigest() == digest, name
    return man


def test_symlinks_in_dir_are_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM")
    out = tmp_path / "out"
    out.mkdir()
    (out / "kernel.ptx").symlink_to(victim)
    (out / "manifest.json").symlink_to(tmp_path / "created_outside.json")
    bundle(A, out, tmp_path)
    assert victim.read_text() == "VICTIM"
    assert not (tmp_path / "created_outside.json").exists()
    assert not (out / "kernel.ptx").is_symlink()
    consistent(out)


def test_foreign_directory_is_not_replaced(tmp_path):
    out = tmp_path / "home"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    p = bundle(A, out, tmp_path, check=False)
    assert p.returncode != 0
    assert "not part of a bundle" in p.stderr
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "manifest.json").exists()


def test_output_path_that_is_a_file_is_refused(tmp_path):
    out = tmp_path / "f"
    out.write_text("x")
    p = bundle(A, out, tmp_path, check=False)
    assert p.returncode != 0 and out.read_text() == "x"


def test_bad_input_writes_nothing(tmp_path):
    out = tmp_path / "out"
    p = bundle(A.replace("0.5 : f32", "0x7FC00000 : f32"), out, tmp_path, check=False)
    assert p.returncode != 0
    assert ":3:8: error: the GPU kernel needs a finite f32 scale" in p.stderr
    assert not out.exists()


def test_replacing_a_bundle_leaves_no_temporaries(tmp_path):
    out = tmp_path / "out"
    bundle(A, out, tmp_path)
    first = consistent(out)
    bundle(B, out, tmp_path)
    second = consistent(out)
    assert first["binding_sha256"] != second["binding_sha256"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_killed_run_leaves_old_or_new_bundle(tmp_path):
    out = tmp_path / "out"
    bundle(A, out, tmp_path)
    old = consistent(out)["binding_sha256"]
    src = tmp_path / "b.mlir"
    src.write_text(B)
    t0 = time.time()
    subprocess.run([ATTN_BUNDLE, str(src), "-o", str(tmp_path / "timing")], check=True)
    full = time.time() - t0
    rng = random.Random(7)
    seen = set()
    for i in range(6):
        # Kill at a random moment of the run (both compiles, ptxas, writing).
        p = subprocess.Popen([ATTN_BUNDLE, str(src), "-o", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, full * 1.1))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if out.exists():
            seen.add(consistent(out)["binding_sha256"])
        else:
            seen.add(None)  # between the two renames of the fallback path
        # Start again from bundle A when B got through.
        if out.exists() and consistent(out)["binding_sha256"] != old:
            bundle(A, out, tmp_path)
    assert seen <= {old, None} | {json.loads((tmp_path / "timing" / "manifest.json")
                                             .read_text())["binding_sha256"]}


def test_bundle_with_launch_variants_is_replaced_whole(tmp_path):
    """A bundle with launch variants (v1/, v2/: dynamic M = 16 packed decode)
    is replaced by another bundle with nothing left of them; a directory
    nested inside a variant is not part of a bundle, so not replaced."""
    out = tmp_path / "out"
    bundle(DECODE_PACKED, out, tmp_path)
    man = consistent(out)
    assert [v["dir"] for v in man["variants"]] == ["v1", "v2"]
    for v in ("v1", "v2"):
        consistent(out / v)
    bundle(B, out, tmp_path)
    assert not (out / "v1").exists() and "variants" not in consistent(out)
    bundle(DECODE_PACKED, out, tmp_path)
    (out / "v1" / "v3").mkdir()
    (out / "v1" / "v3" / "manifest.json").write_text("{}")
    p = bundle(B, out, tmp_path, check=False)
    assert p.returncode != 0 and "not part of a bundle" in p.stderr
    assert (out / "v1" / "v3" / "manifest.json").exists()
