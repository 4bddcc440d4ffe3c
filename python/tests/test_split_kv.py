"""Split-KV bundles without a GPU: the workspace arguments (o_part,
ml_part, locks) a manifest with grid z = splits > 1 must carry, their
shapes and dtypes, and that callers never pass them."""
import pytest

from attn_opt import bundle
from attn_opt.bundle import BundleError
from test_bundle import seal, try_seal
from tools import needs_attn_bundle, real_attn_bundle


def split_manifest(splits=4, **over):
    """One decode token, [B=2, H=8], N = 1000, D = 128, `splits` ranges."""
    m = {
        "format": "attn-opt-bundle/2", "kernel": "attn_fwd_kernel",
        "chip": "sm_90a", "ptx": "kernel.ptx", "cubin": "kernel.cubin",
        "args": [
            {"name": "q", "dtype": "float16", "shape": [2, 8, 1, 128]},
            {"name": "k", "dtype": "float16", "shape": [2, 8, 1000, 128]},
            {"name": "v", "dtype": "float16", "shape": [2, 8, 1000, 128]},
            {"name": "o_part", "dtype": "float32", "shape": [splits, 16, 1, 128],
             "map": "workspace"},
            {"name": "ml_part", "dtype": "float32", "shape": [splits, 16, 1, 2],
             "map": "workspace"},
            {"name": "locks", "dtype": "int32", "shape": [16, 1], "map": "workspace"},
            {"name": "out", "dtype": "float16", "shape": [2, 8, 1, 128]},
        ],
        "grid": [1, 16, splits], "block": [32, 1, 1], "shared_bytes": 108800,
        "attention": {"scale": 0.088, "causal": False, "window": None,
                      "mask_value": "-inf", "batch_dims": 2, "tile_q": 16,
                      "tensor_cores": True, "splits": splits},
    }
    m.update(over)
    return try_seal(m)


def test_workspace_parsed_and_hidden_from_callers():
    m = bundle.parse_manifest(seal(split_manifest()))
    assert m.splits == 4 and m.grid == (1, 16, 4)
    assert m.inputs == ("q", "k", "v")
    assert m.arg("locks").dtype == "int32" and m.arg("o_part").dims == ()
    assert m.sizes()["n"] == 1000
    with pytest.raises(TypeError, match="unexpected argument 'locks'"):
        bundle.bind_args(m, [1, 2, 3], {"locks": 0})


@pytest.mark.parametrize("edit, msg", [
    (lambda m: m["args"].pop(5), "needs the workspace argument 'locks'"),
    (lambda m: m["args"][3].update(shape=[4, 16, 1, 64]),
     r"workspace 'o_part' has shape \[4, 16, 1, 64\]; splits 4 need \[4, 16, 1, 128\]"),
    (lambda m: m["args"][4].update(shape=[3, 16, 1, 2]), "workspace 'ml_part'"),
    (lambda m: m["args"][5].update(dtype="float32"), "workspace 'locks' must be int32"),
    (lambda m: m["args"][3].update(map="affine_map<(d0) -> (d0)>"),
     "has no attention layout"),
    (lambda m: m.update(grid=[1, 16, 2]), r"need grid \[1, 16, 4\]"),
    (lambda m: m["attention"].update(splits=0), "attention.splits must be an integer"),
])
def test_workspace_validated(edit, msg):
    obj = split_manifest()
    edit(obj)
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(try_seal(obj))


def test_workspace_without_splits_refused():
    obj = split_manifest(splits=1)
    with pytest.raises(BundleError, match="splits 1 need none"):
        bundle.parse_manifest(seal(obj))


@needs_attn_bundle
def test_attn_bundle_writes_split_kv(tmp_path):
    """attn-bundle on a decode attention: split-KV from the shapes, the
    workspace in kernel parameter order, accepted by the loader."""
    src = tmp_path / "decode.mlir"
    t, tk = "tensor<2x8x1x128xf16>", "tensor<2x8x8192x128xf16>"
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e"))
    src.write_text(f"""func.func @f(%q: {t}, %k: {tk}, %v: {tk}, %o: {t}) -> {t} {{
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {tk}, {tk}) scale(%s) outs(%o : {t})
      indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
""")
    out = bundle.compile(src, tmp_path / "b", attn_bundle=real_attn_bundle())
    m = bundle.read_manifest(out)
    assert m.splits == 13 and m.grid == (1, 16, 13)
    assert {a.name for a in m.args} >= {"o_part", "ml_part", "locks"}
    assert m.arg("o_part").shape == (13, 16, 1, 128)
    assert "split-KV: 13 key ranges of 640 keys" in m.attention.kernel_choice
    out1 = bundle.compile(src, tmp_path / "b1", attn_bundle=real_attn_bundle(),
                          launch={"splits": 1})
    m1 = bundle.read_manifest(out1)
    assert m1.splits == 1 and m1.arg("locks") is None
