"""Paged K/V bundles without a GPU: attn-bundle on an attention over
attn.page_gather K/V (and over the gather a program writes), the manifest's
block_table and attention.paged, the loader's checks, and the reference's
gather of pages."""
import json

import numpy as np
import pytest

from attn_opt import bundle, reference
from attn_opt.bundle import BundleError
from tools import compile_once, needs_attn_bundle, real_attn_bundle

PAGED = """func.func @f(%q: tensor<3x4x1x64xf16>, %t: tensor<3x5xi32>, %kc: tensor<12x16x4x64xf16>, %vc: tensor<12x16x4x64xf16>, %o: tensor<3x4x1x64xf16>) -> tensor<3x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<12x16x4x64xf16>, tensor<3x5xi32> -> tensor<3x80x4x64xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<12x16x4x64xf16>, tensor<3x5xi32> -> tensor<3x80x4x64xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<3x4x1x64xf16>, tensor<3x80x4x64xf16>, tensor<3x80x4x64xf16>) scale(%s)
      outs(%o : tensor<3x4x1x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<3x4x1x64xf16>
  return %r : tensor<3x4x1x64xf16>
}
"""


@pytest.fixture(scope="module")
def paged_bundle(tmp_path_factory):
    return compile_once(tmp_path_factory, "paged", PAGED)


@needs_attn_bundle
def test_manifest(paged_bundle):
    m = bundle.read_manifest(paged_bundle)
    assert m.attention.paged == (16, 12)
    assert m.arg("block_table").shape == (3, 5) and m.arg("block_table").dtype == "int32"
    assert m.arg("k").shape == (12, 16, 4, 64)
    assert m.sizes()["n"] == 80 and m.sizes()["b0"] == 3
    assert "block_table" in m.inputs
    assert "paged K/V (pages of 16 keys)" in m.attention.kernel_choice


@needs_attn_bundle
@pytest.mark.parametrize("edit, msg", [
    (lambda m: m["attention"].update(paged={"page_size": 8, "pages": 12}),
     "paged 'k' has 12 pages of 16 slots; attention.paged says 12 of 8"),
    (lambda m: m["attention"].pop("paged"), "'block_table' and attention.paged come together"),
    (lambda m: m["attention"].update(paged={"page_size": 16}), "attention.paged must be"),
    (lambda m: next(a for a in m["args"] if a["name"] == "block_table").update(shape=[2, 5]),
     "'block_table' has 2 rows for b0 = 3 sequences"),
    (lambda m: next(a for a in m["args"] if a["name"] == "block_table").update(dtype="float32"),
     "'block_table' must be int32"),
])
def test_manifest_checks(paged_bundle, edit, msg):
    obj = json.loads((paged_bundle / "manifest.json").read_text())
    edit(obj)
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(obj)


@needs_attn_bundle
def test_reference_gathers_pages(paged_bundle):
    m = bundle.read_manifest(paged_bundle)
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=3)
    t = inputs["block_table"]
    assert t.dtype == np.int32 and t.min() >= 0 and t.max() < 12
    t[1, 2] = 99  # out of range: the kernel and the reference clamp it
    out = reference.reference(m, inputs, ops)
    n = np.arange(80)
    page = np.clip(t[:, n // 16], 0, 11)
    k = inputs["k"].astype(np.float64)[page, n % 16]  # [B, N, H, D]
    v = inputs["v"].astype(np.float64)[page, n % 16]
    q = inputs["q"].astype(np.float64)
    for b, h in ((0, 0), (1, 3), (2, 1)):
        s = q[b, h, 0] @ k[b, :, h].T * 0.125
        p = np.exp(s - s.max())
        want = (p / p.sum()) @ v[b, :, h]
        assert np.abs(out[b, h, 0] - want).max() < 1e-6


@needs_attn_bundle
def test_program_gather_folds_into_a_paged_bundle(tmp_path):
    """The gather as a program writes it (whole pages through the table,
    page and slot collapsed) compiles to the same paged kernel."""
    g = """  %{x}e = tensor.empty() : tensor<3x5x16x4x64xf16>
  %{x}g = linalg.generic {{indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}}
      ins(%t : tensor<3x5xi32>) outs(%{x}e : tensor<3x5x16x4x64xf16>) {{
  ^bb0(%e: i32, %out: f16):
    %p = arith.index_cast %e : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %{x}c[%p, %i2, %i3, %i4] : tensor<12x16x4x64xf16>
    linalg.yield %x : f16
  }} -> tensor<3x5x16x4x64xf16>
  %{x} = tensor.collapse_shape %{x}g [[0], [1, 2], [3], [4]] : tensor<3x5x16x4x64xf16> into tensor<3x80x4x64xf16>
"""
    lines = PAGED.splitlines(keepends=True)
    src = "".join(lines[:2]) + g.format(x="k") + g.format(x="v") + "".join(lines[4:])
    m = bundle.read_manifest(bundle.compile(src, tmp_path / "b", attn_bundle=real_attn_bundle()))
    assert m.attention.paged == (16, 12) and m.arg("k").shape == (12, 16, 4, 64)


LENGTHS = """func.func @f(%q: tensor<3x4x1x64xf16>, %k: tensor<3x4x200x64xf16>, %v: tensor<3x4x200x64xf16>, %lens: tensor<3xi32>, %o: tensor<3x4x1x64xf16>) -> tensor<3x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.length_mask %lens : tensor<3xi32> -> tensor<3x200xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<3x4x1x64xf16>, tensor<3x4x200x64xf16>, tensor<3x4x200x64xf16>) scale(%s)
      mask(%m : tensor<3x200xi1>) outs(%o : tensor<3x4x1x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>]
      -> tensor<3x4x1x64xf16>
  return %r : tensor<3x4x1x64xf16>
}
"""


@needs_attn_bundle
def test_kv_lens_bundle_and_reference(tmp_path):
    """Per-sequence key counts: the kernel takes int32 kv_lens; the reference
    masks keys past each length (an empty sequence gives 0)."""
    out = bundle.compile(LENGTHS, tmp_path / "b", attn_bundle=real_attn_bundle())
    m = bundle.read_manifest(out)
    assert m.attention.kv_lens_dim == 0 and m.arg("kv_lens").shape == (3,)
    assert m.arg("mask") is None and "kv_lens" in m.inputs
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=4)
    lens = inputs["kv_lens"]
    assert lens[0] == 0 and lens[-1] == 200
    lens[1] = 37
    o = reference.reference(m, inputs, ops)
    assert np.all(o[0] == 0)
    q, k, v = (inputs[n].astype(np.float64) for n in "qkv")
    for b, L in ((1, 37), (2, 200)):
        s = q[b, 2, 0] @ k[b, 2, :L].T * 0.125
        p = np.exp(s - s.max())
        assert np.abs((p / p.sum()) @ v[b, 2, :L] - o[b, 2, 0]).max() < 1e-9
    obj = json.loads((out / "manifest.json").read_text())
    obj["attention"].pop("kv_lens")
    with pytest.raises(BundleError, match="'kv_lens' and attention.kv_lens come together"):
        bundle.parse_manifest(obj)
