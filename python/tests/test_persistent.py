"""Persistent launches without a GPU: the manifest's attention.persistent
(grid [P, 1, 1] over the query tiles) and its workspace `tile_counter`,
their checks, that callers never pass the counter, the launcher's zeroed
workspace, and attn-bundle choosing and refusing them."""
import json
from pathlib import Path

import pytest

from attn_opt import bundle
from attn_opt.bundle import BundleError
from test_bundle import seal, try_seal
from test_tma import tma_manifest
from tools import needs_attn_bundle, real_attn_bundle

ROOT = Path(__file__).resolve().parents[2]


def persistent_manifest(blocks=128, **over):
    """tma_manifest's [2, 4, 4096, 128] (32 x 8 = 256 query tiles) on
    `blocks` persistent blocks."""
    m = tma_manifest()
    m["args"].insert(4, {"name": "tile_counter", "dtype": "int32", "shape": [2],
                         "map": "workspace"})
    m["grid"] = [blocks, 1, 1]
    m["attention"]["persistent"] = blocks
    m.update(over)
    return try_seal(m)


def test_persistent_parsed_and_counter_hidden_from_callers():
    m = bundle.parse_manifest(seal(persistent_manifest()))
    assert m.attention.persistent == 128 and m.grid == (128, 1, 1)
    assert m.inputs == ("q", "k", "v")
    with pytest.raises(TypeError, match="unexpected argument 'tile_counter'"):
        bundle.bind_args(m, [1, 2, 3], {"tile_counter": 0})


def _drop_counter(m):
    m["args"] = [a for a in m["args"] if a["name"] != "tile_counter"]


def _no_persistent(m):
    del m["attention"]["persistent"]
    m["grid"] = [32, 8, 1]


@pytest.mark.parametrize("edit, msg", [
    (lambda m: m.update(grid=[132, 1, 1]), "grid \\[132, 1, 1\\] does not match"),
    (lambda m: m.update(grid=[32, 8, 1]), "grid \\[32, 8, 1\\] does not match"),
    (lambda m: m["attention"].update(persistent=257), "at most the query tiles"),
    (lambda m: m["attention"].update(persistent=-1), "attention.persistent must be"),
    (lambda m: m["attention"].update(persistent=True), "attention.persistent must be"),
    (_drop_counter, "needs the workspace 'tile_counter' of shape \\[2\\]"),
    (lambda m: m["args"][4].update(shape=[3]), "'tile_counter' of shape \\[2\\]"),
    (lambda m: m["args"][4].update(dtype="float32"), "tile_counter"),
    (_no_persistent, "'tile_counter' comes with attention.persistent"),
])
def test_persistent_validated(edit, msg):
    obj = persistent_manifest()
    edit(obj)
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(try_seal(obj))


def test_reset_workspace_zeroes_the_tile_counter():
    """After a launch that did not finish, reset_workspace zeroes the tile
    counter as it does split-KV's locks (the kernel leaves both at 0)."""
    class Buf:
        zeroed = False

        def zero_(self):
            self.zeroed = True

    k = bundle.Kernel.__new__(bundle.Kernel)
    k.device = 0
    # Per stream (handle, name): every stream's counters.
    k._workspaces = {(7, "tile_counter"): Buf(), (9, "tile_counter"): Buf(),
                     (7, "locks"): Buf(), (7, "o_part"): Buf()}
    import sys
    import types
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda d: None))
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake
    try:
        k.reset_workspace()
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    ws = k._workspaces
    assert ws[(7, "tile_counter")].zeroed and ws[(9, "tile_counter")].zeroed
    assert ws[(7, "locks")].zeroed and not ws[(7, "o_part")].zeroed
    k.free_workspace(9)
    assert set(ws) == {(7, "tile_counter"), (7, "locks"), (7, "o_part")}
    k.free_workspace()
    assert not ws


def _program(tmp_path, n, causal, d=128, heads=16):
    t = f"tensor<2x{heads}x{n}x{d}xbf16>"
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e"))
    src = tmp_path / f"a{n}_{int(causal)}_{d}.mlir"
    src.write_text(f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t}){" causal" if causal else ""}
      indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
""")
    return src


@needs_attn_bundle
@pytest.mark.parametrize("n, causal, d, launch, blocks", [
    (512, False, 128, {}, 128),       # default: a block per tile (128)
    (2048, True, 128, {}, 132),
    (1024, True, 128, {"persistent": 0}, 0),
    (16384, True, 128, {}, 132),       # past 8192 too since log step 163
    (1024, False, 64, {}, 0),          # D = 64: the two-block kernel
    (16384, False, 128, {"persistent": 1}, 132),
])
def test_attn_bundle_persistent_default(tmp_path, n, causal, d, launch, blocks):
    out = bundle.compile(_program(tmp_path, n, causal, d), tmp_path / "b",
                         attn_bundle=real_attn_bundle(), launch=launch)
    m = bundle.read_manifest(out)
    raw = json.loads((out / "manifest.json").read_text())
    assert m.attention.persistent == blocks
    assert m.inputs == ("q", "k", "v")  # parameters by first use: q first
    assert (m.arg("tile_counter") is not None) == bool(blocks)
    if blocks:
        assert m.grid == (blocks, 1, 1)
        assert raw["attention"]["launch_rules"]["grid"] == \
            "[min(ceil(m / tile_q) * b0 * b1, persistent), 1, 1]"
        assert "persistent:" in m.attention.kernel_choice
    else:
        assert m.grid[0] * m.grid[1] * m.grid[2] > 1


@needs_attn_bundle
def test_attn_bundle_persistent_dynamic(tmp_path):
    """A dynamic m: grid x -1 in the manifest, min(tiles, 132) blocks at
    launch (specialize), the counter as for a static bundle."""
    t = "tensor<2x16x?x128xbf16>"
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e"))
    src = tmp_path / "dyn.mlir"
    src.write_text(f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t}) causal
      indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
""")
    m = bundle.read_manifest(bundle.compile(src, tmp_path / "b",
                                            attn_bundle=real_attn_bundle(),
                                            launch={"persistent": 1}))
    assert m.grid == (-1, 1, 1) and m.attention.persistent == 132
    assert m.arg("tile_counter").shape == (2,)
    assert "persistent: up to 132 blocks" in m.attention.kernel_choice
    # 2 x 16 heads: 4 tiles each at m = 500, 32 each at m = 4096.
    assert bundle.specialize(m, {"m": 500, "n": 500}).grid == (128, 1, 1)
    assert bundle.specialize(m, {"m": 4096, "n": 4096}).grid == (132, 1, 1)


@needs_attn_bundle
def test_persistent_tile_numbers_are_32_bit(tmp_path):
    """A dynamic batch and m: more than 2^31 - 1 query tiles are refused
    at launch (the kernel numbers tiles in 32 bits)."""
    src = open(ROOT / "test/Conversion/convert-attn-to-gpu-dynamic.mlir").read()
    m = bundle.read_manifest(bundle.compile(src.split("// -----")[0], tmp_path / "b",
                                            attn_bundle=real_attn_bundle()))
    assert m.attention.persistent == 132 and m.dynamic_dims == ("b0", "m", "n")
    assert bundle.specialize(m, {"b0": 2**10, "m": 2**20, "n": 64}).grid == (132, 1, 1)
    with pytest.raises(BundleError, match="at most 2\\^31 - 1"):
        bundle.specialize(m, {"b0": 2**20, "m": 2**20, "n": 64})
