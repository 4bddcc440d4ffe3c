"""Dynamic-shape bundles: the manifest form (-1 axes, size_* int64 args,
grid -1), the loader's checks and specialization, and real bundles from
attn-bundle (no GPU: the launch itself runs in run_gpu_checks.py)."""
import copy
import json

import numpy as np
import pytest

import attn_opt
from attn_opt import bundle
from attn_opt.bundle import BundleError
from test_bundle import ptx_for, seal, try_seal
from tools import DECODE_PACKED, needs_attn_bundle, packed_decode


def dyn_manifest(**over):
    """[B=?, H=4, ?, 64] f16, m and n dynamic, a bias [m, n]: as
    convert-attn-to-gpu writes it (size args in kernel parameter order)."""
    m = {
        "format": "attn-opt-bundle/2", "kernel": "attn_fwd_kernel",
        "chip": "sm_90a", "ptx": "kernel.ptx", "cubin": "kernel.cubin",
        "args": [
            {"name": "size_b0", "dtype": "int64", "shape": [], "map": "size"},
            {"name": "q", "dtype": "float16", "shape": [-1, 4, -1, 64]},
            {"name": "size_m", "dtype": "int64", "shape": [], "map": "size"},
            {"name": "k", "dtype": "float16", "shape": [-1, 4, -1, 64]},
            {"name": "size_n", "dtype": "int64", "shape": [], "map": "size"},
            {"name": "v", "dtype": "float16", "shape": [-1, 4, -1, 64]},
            {"name": "mask", "dtype": "float16", "shape": [-1, -1],
             "map": "(d0, d1, d2, d3, d4, d5) -> (d2, d3)"},
            {"name": "out", "dtype": "float16", "shape": [-1, 4, -1, 64]},
        ],
        "grid": [-1, -1, 1], "block": [256, 1, 1], "shared_bytes": 0,
        "attention": {"scale": 0.125, "causal": True, "window": None,
                      "mask_value": "-inf", "batch_dims": 2, "tile_q": 128},
    }
    m.update(over)
    return try_seal(m)


def test_parse_dynamic():
    m = bundle.parse_manifest(dyn_manifest())
    assert m.dynamic_dims == ("b0", "m", "n")
    assert m.inputs == ("q", "k", "v", "mask")
    assert m.grid == (-1, -1, 1)
    assert m.sizes() == {"b0": -1, "b1": 4, "m": -1, "n": -1, "d": 64, "e": 64}


def test_specialize():
    m = bundle.parse_manifest(dyn_manifest())
    at = bundle.specialize(m, {"b0": 3, "m": 1000, "n": 77})
    assert at.arg("q").shape == (3, 4, 1000, 64)
    assert at.arg("k").shape == (3, 4, 77, 64)
    assert at.arg("mask").shape == (1000, 77)
    assert at.grid == (8, 12, 1)  # ceil(1000 / 128), 3 * 4
    assert at.dynamic_dims == m.dynamic_dims
    with pytest.raises(BundleError, match="no size for the dynamic dims"):
        bundle.specialize(m, {"b0": 3, "m": 10})
    with pytest.raises(BundleError, match="must be a positive integer"):
        bundle.specialize(m, {"b0": 3, "m": 0, "n": 5})
    with pytest.raises(BundleError, match="below 2\\^31"):
        bundle.specialize(m, {"b0": 3, "m": 1, "n": 2 ** 31})
    with pytest.raises(BundleError, match="not dynamic dims"):
        bundle.specialize(m, {"b0": 3, "m": 1, "n": 5, "b1": 4})
    with pytest.raises(BundleError, match="above CUDA's limit"):
        bundle.specialize(m, {"b0": 20000, "m": 1, "n": 5})  # grid y 80000
    static = bundle.parse_manifest(seal(json.loads(json.dumps(_static()))))
    assert bundle.specialize(static, {}) is static


def test_index_limit():
    """attention.index_limit (a score_mod reading m or n, exact below it):
    a dynamic m or n at or past it is refused."""
    m = dyn_manifest()
    m["attention"]["index_limit"] = 1 << 20
    m = bundle.parse_manifest(m)
    assert m.attention.index_limit == 1 << 20
    at = bundle.specialize(m, {"b0": 9000, "m": (1 << 20) - 1, "n": (1 << 20) - 1})
    assert at.arg("k").shape == (9000, 4, (1 << 20) - 1, 64)
    for dims in ({"b0": 1, "m": 1 << 20, "n": 5}, {"b0": 1, "m": 5, "n": 1 << 20}):
        with pytest.raises(BundleError, match="not below this bundle's "
                                              "attention.index_limit 1048576"):
            bundle.specialize(m, dims)
    for bad in (0, -1, 2 ** 31 + 1, 1.5, "big", True):
        m = dyn_manifest()
        m["attention"]["index_limit"] = bad
        with pytest.raises(BundleError, match="index_limit must be an integer"):
            bundle.parse_manifest(m)


def _static():
    m = dyn_manifest()
    m["args"] = [a for a in m["args"] if a["map" if "map" in a else "name"] != "size"]
    for a in m["args"]:
        a["shape"] = [{-1: 5}.get(x, x) for x in a["shape"]]
    m["grid"] = [1, 20, 1]
    return m


def test_dynamic_sizes_from_tensors():
    m = bundle.parse_manifest(dyn_manifest())
    q = np.zeros((2, 4, 100, 64), np.float16)
    k = np.zeros((2, 4, 30, 64), np.float16)
    mask = np.zeros((100, 30), np.float16)
    got = bundle.dynamic_sizes(m, {"q": q, "k": k, "v": k, "mask": mask})
    assert got == {"b0": 2, "m": 100, "n": 30}
    at = bundle.specialize(m, got)
    bundle.check_args(at, {"q": q, "k": k, "v": k, "mask": mask})
    with pytest.raises(BundleError, match="'mask' has n = 30, other arguments n = 31"):
        bundle.dynamic_sizes(m, {"q": q, "mask": mask,
                                 "k": np.zeros((2, 4, 31, 64), np.float16)})
    # A static axis still has to match.
    with pytest.raises(BundleError, match="must have shape"):
        bundle.check_args(at, {"q": np.zeros((2, 5, 100, 64), np.float16)})


def _edit(fn):
    m = copy.deepcopy(dyn_manifest())
    fn(m)
    return try_seal(m)


@pytest.mark.parametrize("edit, message", [
    # -1 on a head dim: no size argument can give it.
    (lambda m: m["args"][1].update(shape=[-1, 4, -1, -1]), r"size -1 along \['d'\]"),
    # A size argument no tensor uses.
    (lambda m: m["args"].append({"name": "size_b1", "dtype": "int64", "shape": [],
                                 "map": "size"}), r"size arguments for \['b1'\]"),
    (lambda m: m["args"][0].update(dtype="int32"), "must be an int64 scalar"),
    (lambda m: m["args"][0].update(name="size_z"), "unknown argument name"),
    (lambda m: m["args"][0].update(name="size_b7"), "names no batch dim"),
    # Static where the sizes are dynamic, and -1 where they are static.
    (lambda m: m.update(grid=[3, -1, 1]), "grid"),
    (lambda m: m.update(grid=[-1, -1, -1]), "does not match the attention"),
    (lambda m: m["attention"].update(splits=2), "split-KV"),
    # A static size on one tensor where another has it dynamic.
    (lambda m: m["args"][3].update(shape=[-1, 4, 77, 64]), "has n=-1 but other arguments have n=77"),
])
def test_bad_dynamic_manifests(edit, message):
    with pytest.raises(BundleError, match=message):
        bundle.parse_manifest(_edit(edit))


def test_static_manifest_rejects_minus_one():
    m = _static()
    m["args"][0]["shape"][2] = -1
    with pytest.raises(BundleError, match="must be >= 1"):
        bundle.parse_manifest(seal(m))


def test_open_dynamic_bundle_checks_params(tmp_path):
    """Size parameters are 64-bit too: one .u64 per manifest arg."""
    d = tmp_path / "b"
    d.mkdir()
    m = dyn_manifest()
    (d / "kernel.ptx").write_text(ptx_for(m["kernel"], len(m["args"])))
    (d / "kernel.cubin").write_bytes(b"\x7fELF fake")
    (d / "manifest.json").write_text(json.dumps(seal(m)))
    b = bundle.open_bundle(d)
    assert b.manifest.dynamic_dims == ("b0", "m", "n")


PROGRAM = """
func.func @attention(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %o: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>) scale(%s)
      outs(%o : tensor<?x8x?x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<?x8x?x64xf16>
  return %r : tensor<?x8x?x64xf16>
}
"""


@needs_attn_bundle
@pytest.mark.parametrize("launch", [{}, {"wgmma": 0}])
def test_real_dynamic_bundle(tmp_path, launch):
    out = attn_opt.compile_bundle(PROGRAM, tmp_path / "b", launch=launch)
    b = bundle.open_bundle(out, check_params=True)
    m = b.manifest
    assert set(m.dynamic_dims) == {"b0", "m", "n"}
    assert m.inputs == ("q", "k", "v")
    assert m.grid == (-1, -1, 1)
    assert "dynamic sizes (b0, m, n) as kernel parameters" in m.attention.kernel_choice
    tq = m.attention.tile_q
    at = bundle.specialize(m, {"b0": 2, "m": 3 * tq + 1, "n": 5})
    assert at.grid == (4, 16, 1)
    assert at.arg("out").shape == (2, 8, 3 * tq + 1, 64)


def split_manifest(**att):
    """Dynamic decode [B=?, 4, 8 (group), 1, 128] over [?, 4, ?, 128] with a
    split count chosen at launch (grid z -1, attention.splits -1)."""
    m = {
        "format": "attn-opt-bundle/2", "kernel": "attn_fwd_kernel",
        "chip": "sm_90a", "ptx": "kernel.ptx", "cubin": "kernel.cubin",
        "args": [
            {"name": "locks", "dtype": "int32", "shape": [-1, 1], "map": "workspace"},
            {"name": "ml_part", "dtype": "float32", "shape": [-1, -1, 8, 2],
             "map": "workspace"},
            {"name": "o_part", "dtype": "float32", "shape": [-1, -1, 8, 128],
             "map": "workspace"},
            {"name": "size_b0", "dtype": "int64", "shape": [], "map": "size"},
            {"name": "q", "dtype": "float16", "shape": [-1, 4, 8, 1, 128],
             "map": "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d5)"},
            {"name": "size_n", "dtype": "int64", "shape": [], "map": "size"},
            {"name": "k", "dtype": "float16", "shape": [-1, 4, -1, 128],
             "map": "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d4, d5)"},
            {"name": "v", "dtype": "float16", "shape": [-1, 4, -1, 128],
             "map": "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d4, d6)"},
            {"name": "out", "dtype": "float16", "shape": [-1, 4, 8, 1, 128],
             "map": "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)"},
        ],
        "grid": [1, -1, -1], "block": [32, 1, 1], "shared_bytes": 0,
        "attention": {"scale": 0.088, "causal": False, "window": None,
                      "mask_value": "-inf", "batch_dims": 3, "tile_q": 16,
                      "tile_kv": 64, "splits": -1, "pack_dim": 2},
    }
    m["attention"].update(att)
    return try_seal(m)


def test_split_count_chosen_at_launch():
    m = bundle.parse_manifest(split_manifest())
    assert m.splits == -1 and m.dynamic_dims == ("b0", "n")
    # The compiler's rule for a static B = 1, N = 32768 bundle: 47 ranges
    # of 704 keys (docs/performance.md, decode).
    at = bundle.specialize(m, {"b0": 1, "n": 32768}, multiprocessors=132)
    assert at.grid == (1, 4, 47)
    assert at.arg("o_part").shape == (47, 4, 8, 128)
    assert at.arg("ml_part").shape == (47, 4, 8, 2) and at.arg("locks").shape == (4, 1)
    # A full grid or few keys: one range.
    assert bundle.specialize(m, {"b0": 64, "n": 1000}, 132).grid == (1, 256, 1)
    assert bundle.specialize(m, {"b0": 2, "n": 1}, 132).grid[2] == 1
    assert bundle.split_count(32768, 4, 64, 132) == 47
    assert bundle.split_count(8192, 64, 64, 132) == 4
    # Blocks of four row warps with two key warps: one wave of ranges
    # (floor(132 / 8) = 16 for 8 tiles, also where a range is long); a full
    # grid stays one range.
    assert bundle.split_count(8192, 8, 64, 132, one_wave=True) == 16
    assert bundle.split_count(32768, 8, 64, 132, one_wave=True) == 16
    assert bundle.split_count(1 << 20, 8, 64, 132, one_wave=True) == 16
    assert bundle.split_count(1024, 128, 64, 132, one_wave=True) == 1
    assert bundle.split_count(8192, 32, 64, 132, one_wave=True) == 4


def test_key_span_bounds_the_split():
    """attention.key_span (chunked decode: the keys a tile's chunk ranges
    leave) is the split rule's span: B = 1, N = 32768 over 1696 visible keys
    takes 6 ranges of 320 keys, not the whole cache's 47; invalid values are
    refused."""
    m = split_manifest()
    m["attention"]["key_span"] = 1696
    m = bundle.parse_manifest(try_seal(m))
    assert m.attention.key_span == 1696
    at = bundle.specialize(m, {"b0": 1, "n": 32768}, multiprocessors=132)
    assert at.grid == (1, 4, bundle.split_count(1696, 4, 64, 132)) == (1, 4, 6)
    # Below the span: n itself.
    assert bundle.specialize(m, {"b0": 1, "n": 1000}, 132).grid[2] == \
        bundle.split_count(1000, 4, 64, 132)
    for bad in (0, -3, 2 ** 31, 2.5, "n", True):
        m = split_manifest()
        m["attention"]["key_span"] = bad
        with pytest.raises(BundleError, match="key_span must be an integer"):
            bundle.parse_manifest(try_seal(m))


@pytest.mark.parametrize("att, message", [
    (dict(tile_kv=None), "needs attention.tile_kv"),
    (dict(splits=1), "does not match the attention"),
    (dict(splits=-2), "attention.splits must be"),
])
def test_bad_split_manifests(att, message):
    m = split_manifest(**att)
    if att.get("tile_kv", 1) is None:
        del m["attention"]["tile_kv"]
        try_seal(m)
    with pytest.raises(BundleError, match=message):
        bundle.parse_manifest(m)


def test_split_workspace_shape_checked():
    m = split_manifest()
    m["args"][2]["shape"] = [-1, -1, 8, 64]
    with pytest.raises(BundleError, match="workspace 'o_part' has shape"):
        bundle.parse_manifest(try_seal(m))


DECODE = """
func.func @decode(%q: tensor<?x32x1x128xf16>, %k: tensor<?x32x?x128xf16>, %v: tensor<?x32x?x128xf16>, %o: tensor<?x32x1x128xf16>) -> tensor<?x32x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x32x1x128xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>) scale(%s)
      outs(%o : tensor<?x32x1x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<?x32x1x128xf16>
  return %r : tensor<?x32x1x128xf16>
}
"""


@needs_attn_bundle
def test_real_dynamic_decode_bundle(tmp_path):
    m = bundle.open_bundle(attn_opt.compile_bundle(DECODE, tmp_path / "d")).manifest
    assert m.splits == -1 and m.grid == (1, -1, -1)
    assert "chosen at launch" in m.attention.kernel_choice
    at = bundle.specialize(m, {"b0": 1, "n": 32768}, multiprocessors=132)
    # 32 blocks: ceil(198 / 32) = 7 ranges wanted, of 4736 keys: 7.
    assert at.grid == (1, 32, 7) and at.arg("o_part").shape == (7, 32, 1, 128)


FRONTEND = """
func.func @dynamic_seq(%q: tensor<?x?x64xf16>, %k: tensor<?x?x64xf16>, %v: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> {
  %cst = arith.constant 0.0 : f16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x64xf16>
  %m = tensor.dim %q, %c1 : tensor<?x?x64xf16>
  %n = tensor.dim %k, %c1 : tensor<?x?x64xf16>
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf16>
  %z = linalg.fill ins(%cst : f16) outs(%e : tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<?x?x64xf16>, tensor<?x?x64xf16>) outs(%z : tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
  %e3 = tensor.empty(%b, %m, %n) : tensor<?x?x?xf16>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x?x?xf16>) outs(%e3 : tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
  %eo = tensor.empty(%b, %m) : tensor<?x?x64xf16>
  %zo = linalg.fill ins(%cst : f16) outs(%eo : tensor<?x?x64xf16>) -> tensor<?x?x64xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf16>, tensor<?x?x64xf16>) outs(%zo : tensor<?x?x64xf16>) -> tensor<?x?x64xf16>
  return %o : tensor<?x?x64xf16>
}
"""


@needs_attn_bundle
def test_frontend_program_with_dynamic_lengths(tmp_path):
    """linalg as a frontend writes it (tensor.dim sizes, batch_matmul,
    linalg.softmax) fuses and compiles to one dynamic tensor-core bundle."""
    m = bundle.open_bundle(attn_opt.compile_bundle(FRONTEND, tmp_path / "f")).manifest
    assert set(m.dynamic_dims) == {"b0", "m", "n"}
    assert m.attention.kernel_choice.startswith("wgmma (sm_90a)")
    assert m.attention.scale == 1.0 and m.arg("q").shape == (-1, -1, 64)


def _reseal(d, edit):
    """Rewrites d/manifest.json through `edit` (no new binding)."""
    p = d / "manifest.json"
    obj = json.loads(p.read_text())
    edit(obj)
    p.write_text(json.dumps(obj))


@needs_attn_bundle
def test_launch_variant_bundle(tmp_path):
    """A dynamic decode of four row warps (M = 16, 4 query heads per kv head)
    carries a variant for full grids with one key range: one key warp,
    32-key tiles, four stages, no split-KV, as the static bundle of those
    sizes; a second for other launches with one range (its own launch
    shape, no count chosen at launch); the rules pick them at launch, the
    bundle's kernel where the keys are split."""
    d = attn_opt.compile_bundle(DECODE_PACKED, tmp_path / "d")
    b = bundle.open_bundle(d)
    m = b.manifest
    assert m.splits == -1 and "2 key warps" in m.attention.kernel_choice
    assert [(v[0], v[1]) for v in m.variants] == [("v1", "full_grid_one_range"),
                                                  ("v2", "one_range")]
    (when, vb), (when2, vb2) = b.variants
    vm, vm2 = vb.manifest, vb2.manifest
    assert vm2.splits == 1 and "64-key tiles, 3 stages, 2 key warps" in vm2.attention.kernel_choice
    assert vm.splits == 1 and not vm.variants and vm.dynamic_dims == m.dynamic_dims
    assert "32-key tiles, 4 stages" in vm.attention.kernel_choice
    assert "key warps" not in vm.attention.kernel_choice
    assert m.variants[0][3] == vm.attention.kernel_choice
    # Which kernel: v1, v2 or the bundle's (None).
    for dims, takes in (({"b0": 64, "n": 4096}, 1),    # 512 tiles: full, one range
                        ({"b0": 25, "n": 4096}, 1),    # 200 >= 198
                        ({"b0": 24, "n": 4096}, 2),    # 192: two wanted, one wave
                        ({"b0": 20, "n": 400}, 1),     # 160 tiles, too few keys to split
                        ({"b0": 16, "n": 8192}, 2),    # 128 < 132 multiprocessors
                        ({"b0": 1, "n": 32768}, None),  # split 16 ways
                        ({"b0": 2, "n": 4096}, None),   # 16 tiles: split
                        ({"b0": 8, "n": 300}, 2)):     # one range, grid short
        at = bundle.specialize(m, dims, multiprocessors=132)
        got = next((i + 1 for i, (w, _) in enumerate(b.variants)
                    if bundle._variant_applies(w, m, at, 132)), None)
        assert got == takes, (dims, got, at.grid)
    # The variant's manifest is bound to the bundle's: an edited rule, a
    # swapped variant or a variant with variants is refused.
    _reseal(d, lambda o: o["variants"][0].update(when="always"))
    with pytest.raises(BundleError, match="variants\\[0\\].when must be one of"):
        bundle.open_bundle(d)
    _reseal(d, lambda o: o["variants"][0].update(when="full_grid_one_range",
                                                 binding_sha256="0" * 64))
    with pytest.raises(BundleError, match="binding_sha256 mismatch"):
        bundle.open_bundle(d)


@needs_attn_bundle
def test_launch_variant_checked(tmp_path):
    """A variant directory that is not the one listed, or takes other inputs,
    is refused when the bundle is opened."""
    d = attn_opt.compile_bundle(DECODE_PACKED, tmp_path / "d")
    other = attn_opt.compile_bundle(DECODE, tmp_path / "o")
    import shutil
    shutil.rmtree(d / "v1")
    with pytest.raises(BundleError, match="variant v1: not a directory"):
        bundle.open_bundle(d)
    shutil.copytree(other, d / "v1")
    with pytest.raises(BundleError, match="not the one the bundle lists"):
        bundle.open_bundle(d)
    # The right variant, but through a symlink out of the bundle.
    shutil.rmtree(d / "v1")
    fresh = attn_opt.compile_bundle(DECODE_PACKED, tmp_path / "fresh")
    (d / "v1").symlink_to(fresh / "v1")
    with pytest.raises(BundleError, match="variant v1: not a directory inside"):
        bundle.open_bundle(d)
    # Without variants (a one-warp decode: 32-key tiles serve every grid).
    assert bundle.open_bundle(other).manifest.variants == ()


@needs_attn_bundle
def test_launch_variant_must_match(tmp_path):
    """A variant listed with its true binding (the bundle's manifest sealed
    again) is still refused where it computes another attention, has
    variants of its own, or is listed with another kernel_choice."""
    import shutil
    d = attn_opt.compile_bundle(DECODE_PACKED, tmp_path / "d")
    other = attn_opt.compile_bundle(DECODE_PACKED.replace("0.088", "0.1"), tmp_path / "o")

    def relist(src, choice=None):
        obj = json.loads((src / "manifest.json").read_text())
        shutil.rmtree(d / "v1")
        shutil.copytree(src, d / "v1")
        p = d / "manifest.json"
        top = json.loads(p.read_text())
        top["variants"][0].update(binding_sha256=obj["binding_sha256"],
                                  kernel_choice=choice or obj["attention"]["kernel_choice"])
        bundle.seal(top, (d / "kernel.ptx").read_bytes(), (d / "kernel.cubin").read_bytes()
                    if (d / "kernel.cubin").exists() else None)
        p.write_text(json.dumps(top))

    relist(other / "v1")  # another scale
    with pytest.raises(BundleError, match="computes another attention"):
        bundle.open_bundle(d)
    relist(other)  # a bundle with variants
    with pytest.raises(BundleError, match="no variants of its own"):
        bundle.open_bundle(d)
    relist(tmp_path / "d" / "v2", choice="something else")
    with pytest.raises(BundleError, match="kernel_choice is not the one"):
        bundle.open_bundle(d)
    relist(tmp_path / "d" / "v2")  # v2 as v1 too: the same attention, loads
    assert bundle.open_bundle(d).variants[0][1].manifest.splits == 1


CHUNKED_PACKED = """
func.func @f(%q: tensor<?x8x4x16x128xf16>, %k: tensor<?x8x4096x128xf16>, %v: tensor<?x8x4096x128xf16>, %o: tensor<?x8x4x16x128xf16>) -> tensor<?x8x4x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x16x128xf16>, tensor<?x8x4096x128xf16>, tensor<?x8x4096x128xf16>) scale(%s) outs(%o : tensor<?x8x4x16x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 4080 : index
        %mp = arith.addi %m, %off : index
        %c = arith.constant 1000 : index
        %rq = arith.floordivsi %mp, %c : index
        %rk = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %rq, %rk : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<?x8x4x16x128xf16>
  return %r : tensor<?x8x4x16x128xf16>
}
"""


@needs_attn_bundle
def test_launch_variants_of_chunked_decode_open(tmp_path):
    """Chunked speculative decode (ids from the positions, a dynamic batch):
    the bundle's key_span feeds its split count chosen at launch; its
    variants, compiled with one range, have none, and still open (found by
    review: key_span was compared as part of the attention)."""
    b = bundle.open_bundle(attn_opt.compile_bundle(CHUNKED_PACKED, tmp_path / "c"))
    assert b.manifest.attention.key_span is not None
    assert [w for w, _ in b.variants] == ["full_grid_one_range", "one_range"]
    assert all(vb.manifest.attention.key_span is None for _, vb in b.variants)


DECODE_D256 = packed_decode("decode_d256", 1, 256, "0.0625")


@needs_attn_bundle
def test_decode_stages_variant(tmp_path):
    """D = 256 packed decode with a dynamic batch: the bundle's two stages
    (three blocks per multiprocessor) and a three-stage variant (two), which
    a launch with one key range takes where the pass's decodeStages would:
    not where the bundle's kernel alone holds the grid in one wave, else
    where the variant's last wave is fuller."""
    b = bundle.open_bundle(attn_opt.compile_bundle(DECODE_D256, tmp_path / "d"))
    (when, vb), = b.variants
    assert when == "decode_stages" and vb.manifest.splits == 1
    assert bundle._resident_blocks(b.manifest) == 3
    assert bundle._resident_blocks(vb.manifest) == 2
    # 132 multiprocessors: 396 blocks in one wave of the bundle's kernel,
    # 264 of the variant's.
    for b0, n, takes in ((32, 4096, None),     # 256 tiles: one wave either way
                         (40, 4096, None),     # 320: one wave of the bundle's only
                         (64, 4096, "v1"),     # 512: 512/528 against 512/792
                         (128, 2048, "v1"),    # 1024: 1024/1056 against 1024/1188
                         (99, 4096, None),     # 792: two whole waves either way
                         (16, 8192, None),     # 128 tiles: split
                         (1, 32768, None)):    # split
        assert bundle.variant_at(b, {"b0": b0, "n": n}, 132) == takes, (b0, n)
