"""Bundle sets: a module with several attentions (one per layer) gives
DIR/index.json and one format/2 bundle per attention (DIR/attn0, ...),
written atomically by attn-bundle and read as hostile input."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import attn_opt
from attn_opt import bundle
from tools import DECODE_PACKED, needs_attn_bundle, real_attn_bundle

TWO_LAYERS = """
func.func @layer0(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}
func.func @layer1(%q: tensor<2x40x32xf32>, %k: tensor<2x50x32xf32>, %v: tensor<2x50x32xf32>, %o: tensor<2x40x32xf32>) -> tensor<2x40x32xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf32>, tensor<2x50x32xf32>, tensor<2x50x32xf32>) scale(%s)
      outs(%o : tensor<2x40x32xf32>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] -> tensor<2x40x32xf32>
  return %r : tensor<2x40x32xf32>
}
"""


@pytest.fixture(scope="module")
def two_layer_set(tmp_path_factory):
    if real_attn_bundle() is None:
        pytest.skip("attn-bundle not built")
    return attn_opt.compile(TWO_LAYERS, tmp_path_factory.mktemp("set") / "model")


def test_set_layout_and_members(two_layer_set):
    out = two_layer_set
    assert sorted(p.name for p in out.iterdir()) == ["attn0", "attn1", "index.json"]
    members = attn_opt.read_set(out)
    assert [m.function for m in members] == ["layer0", "layer1"]
    assert [m.dir.name for m in members] == ["attn0", "attn1"]
    assert [m.location for m in members] == ["input.mlir:4:8", "input.mlir:12:8"]
    assert members[0].kernel_choice.startswith("wgmma (sm_90a)")
    assert members[1].kernel_choice.startswith("mma.sync m16n8k8 3xTF32")
    # Each member is a whole format/2 bundle: its files check against it.
    for m in members:
        bundle.open_bundle(m.dir)
        assert m.manifest.attention.scale == 0.125
    assert members[0].manifest.sizes()["m"] == 100
    assert members[1].manifest.sizes()["n"] == 50


def test_one_bundle_functions_name_the_set(two_layer_set):
    with pytest.raises(attn_opt.BundleError, match="is a bundle set"):
        attn_opt.read_manifest(two_layer_set)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _edit_index(d: Path, edit) -> None:
    obj = json.loads((d / "index.json").read_text())
    edit(obj)
    (d / "index.json").write_text(json.dumps(obj))


@pytest.mark.parametrize("edit, message", [
    (lambda o: o.update(format="attn-opt-bundle-set/9"), "'format' must be"),
    (lambda o: o.update(bundles=[]), "non-empty list"),
    (lambda o: o["bundles"][0].update(dir="../attn0"), "must be 'attn<digits>'"),
    (lambda o: o["bundles"][1].update(dir="attn0"), "appears twice"),
    (lambda o: o["bundles"][0].update(dir="attn7"), "not a directory inside the set"),
    (lambda o: o["bundles"][0].update(function=["x"]), "function must be a string"),
    (lambda o: o["bundles"].append(7), r"bundles\[2\] must be an object"),
])
def test_hostile_index(two_layer_set, tmp_path, edit, message):
    d = _copy(two_layer_set, tmp_path / "s")
    _edit_index(d, edit)
    with pytest.raises(attn_opt.BundleError, match=message):
        attn_opt.read_set(d)


def test_member_symlinked_outside_is_refused(two_layer_set, tmp_path):
    d = _copy(two_layer_set, tmp_path / "s")
    outside = _copy(two_layer_set / "attn0", tmp_path / "elsewhere")
    shutil.rmtree(d / "attn0")
    os.symlink(outside, d / "attn0")
    with pytest.raises(attn_opt.BundleError, match="not a directory inside the set"):
        attn_opt.read_set(d)


def test_member_manifest_is_checked(two_layer_set, tmp_path):
    d = _copy(two_layer_set, tmp_path / "s")
    m = json.loads((d / "attn1" / "manifest.json").read_text())
    m["grid"] = [1, 1, 1]
    (d / "attn1" / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(attn_opt.BundleError):
        attn_opt.read_set(d)


@needs_attn_bundle
def test_set_replaces_a_bundle_and_back(tmp_path):
    """attn-bundle swaps a single bundle for a set in DIR and back (the old
    contents are bundle files), never leaving a mix."""
    one = TWO_LAYERS.split("func.func @layer1")[0]
    out = tmp_path / "model"
    attn_opt.compile(one, out)
    assert (out / "manifest.json").is_file() and not bundle.is_bundle_set(out)
    attn_opt.compile(TWO_LAYERS, out)
    assert bundle.is_bundle_set(out) and not (out / "manifest.json").exists()
    attn_opt.compile(one, out)
    assert sorted(p.name for p in out.iterdir()) == ["kernel.cubin", "kernel.ptx",
                                                    "manifest.json"]


@needs_attn_bundle
def test_set_is_not_written_over_foreign_files(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(attn_opt.CompileError):
        attn_opt.compile(TWO_LAYERS, out)
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    (out / "attn0").mkdir()
    (out / "attn0" / "notes.txt").write_text("mine")
    with pytest.raises(attn_opt.CompileError):
        attn_opt.compile(TWO_LAYERS, out)
    assert (out / "attn0" / "notes.txt").read_text() == "mine"


@needs_attn_bundle
def test_set_members_carry_their_launch_variants(tmp_path):
    """Two speculative decodes (dynamic batch, four row warps) in one module:
    each member carries its own launch variants (attnN/v1, attnN/v2), opened
    with it; a bundle written over the set leaves none of them."""
    two = DECODE_PACKED + DECODE_PACKED.replace("@decode_packed", "@other").replace(
        "0.088", "0.1")
    out = tmp_path / "set"
    attn_opt.compile_bundle(two, out)
    members = bundle.read_set(out)
    assert [[v[0] for v in m.manifest.variants] for m in members] == [["v1", "v2"]] * 2
    scales = [vb.manifest.attention.scale for m in members
              for _, vb in bundle.open_bundle(m.dir).variants]
    assert scales == pytest.approx([0.088, 0.088, 0.1, 0.1])
    attn_opt.compile_bundle(DECODE_PACKED, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "kernel.cubin", "kernel.ptx", "manifest.json", "v1", "v2"] or sorted(
        p.name for p in out.iterdir()) == ["kernel.ptx", "manifest.json", "v1", "v2"]
