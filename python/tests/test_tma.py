"""TMA tensor maps without a GPU: the manifest entries (map "tensormap")
the warp-specialized kernel's K/V loads need, their checks, that callers
never pass them, and the cuTensorMapEncodeTiled layout the loader derives
from an operand's shape and box."""
import pytest

from attn_opt import bundle
from attn_opt.bundle import BundleError
from test_bundle import seal, try_seal
from tools import needs_attn_bundle, real_attn_bundle


def tma_manifest(**over):
    """[B=2, H=4, N=4096, D=128] f16, K/V by TMA with 128-key boxes."""
    shape = [2, 4, 4096, 128]
    tmap = lambda t: {"name": f"tmap_{t}", "dtype": "int64", "shape": [16],  # noqa: E731
                      "map": "tensormap", "tensor": t, "box": [1, 1, 128, 64]}
    m = {
        "format": "attn-opt-bundle/2", "kernel": "attn_fwd_kernel",
        "chip": "sm_90a", "ptx": "kernel.ptx", "cubin": "kernel.cubin",
        "args": [
            {"name": "q", "dtype": "float16", "shape": shape},
            tmap("k"),
            {"name": "k", "dtype": "float16", "shape": shape},
            tmap("v"),
            {"name": "v", "dtype": "float16", "shape": shape},
            {"name": "out", "dtype": "float16", "shape": shape},
        ],
        "grid": [32, 8, 1], "block": [384, 1, 1], "shared_bytes": 230504,
        "attention": {"scale": 0.088, "causal": False, "window": None,
                      "mask_value": "-inf", "batch_dims": 2, "tile_q": 128,
                      "tensor_cores": True},
    }
    m.update(over)
    return try_seal(m)


def test_tensor_maps_parsed_and_hidden_from_callers():
    m = bundle.parse_manifest(seal(tma_manifest()))
    assert m.inputs == ("q", "k", "v")
    assert m.arg("tmap_k").box == (1, 1, 128, 64) and m.arg("tmap_k").shape == (16,)
    assert m.arg("tmap_v").dims == ()
    with pytest.raises(TypeError, match="unexpected argument 'tmap_k'"):
        bundle.bind_args(m, [1, 2, 3], {"tmap_k": 0})


@pytest.mark.parametrize("edit, msg", [
    (lambda m: m["args"][1].update(dtype="int32"), "must be an int64\\[16\\] tensor map of 'k'"),
    (lambda m: m["args"][1].update(shape=[8]), "must be an int64\\[16\\] tensor map"),
    (lambda m: m["args"][1].update(tensor="v"), "tensor map of 'k'"),
    (lambda m: m["args"][1].update(map="workspace"), "tensor map of 'k'"),
    (lambda m: m["args"][1].update(box=[1, 128, 64]), "has box \\[1, 128, 64\\]"),
    (lambda m: m["args"][1].update(box=[1, 1, 128, 128]),
     "128 bytes along the last"),
    (lambda m: m["args"][1].update(box=[1, 1, 512, 64]), "each <= 256"),
    (lambda m: m["args"][1].update(box=[1, 1, 0, 64]), "must be >= 1"),
])
def test_tensor_maps_validated(edit, msg):
    obj = tma_manifest()
    edit(obj)
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(try_seal(obj))


def test_tensor_map_f32_operands_take_32_column_boxes():
    # TF32 on wgmma: f32 Q, K, V by TMA, 32 elements (128 bytes) per row.
    obj = tma_manifest()
    obj["attention"]["f32_precision"] = "tf32"
    for a in obj["args"]:
        if a["name"] in ("q", "k", "v", "out"):
            a["dtype"] = "float32"
    with pytest.raises(BundleError, match="128 bytes along the last"):
        bundle.parse_manifest(try_seal(obj))
    for a in obj["args"]:
        if a.get("map") == "tensormap":
            a["box"] = a["box"][:-1] + [32]
    bundle.parse_manifest(try_seal(obj))


def fp8_manifest(dtype="float8_e4m3fn", box=128, out="float16", **att):
    """tma_manifest with 8-bit q, k, v (128-element boxes) and `out`."""
    obj = tma_manifest()
    for a in obj["args"]:
        if a["name"] in ("q", "k", "v"):
            a["dtype"] = dtype
        elif a["name"] == "out":
            a["dtype"] = out
        elif a.get("map") == "tensormap":
            a["box"] = [1, 1, 128, box]
    obj["attention"].update(att)
    return obj


def test_fp8_manifest():
    m = bundle.parse_manifest(seal(fp8_manifest(value_scale=0.5)))
    assert m.arg("q").dtype == "float8_e4m3fn" and m.arg("out").dtype == "float16"
    assert m.arg("tmap_v").box == (1, 1, 128, 128)
    assert m.attention.value_scale == 0.5
    assert bundle.parse_manifest(seal(fp8_manifest())).attention.value_scale == 1.0
    assert bundle.ITEMSIZE["float8_e5m2"] == 1
    # cuTensorMapEncodeTiled moves bytes: UINT8 (0), byte strides.
    assert bundle._TENSOR_MAP_DTYPE["float8_e4m3fn"] == 0
    dims, strides, boxes = bundle.tensor_map_layout("float8_e4m3fn", (2, 4, 4096, 128),
                                                    (1, 1, 128, 128))
    assert dims == (128, 4096, 4, 2) and strides == (128, 128 * 4096, 128 * 4096 * 4)


@pytest.mark.parametrize("obj, msg", [
    (lambda: fp8_manifest(box=64), "128 bytes along the last"),
    (lambda: fp8_manifest(out="float8_e4m3fn"), "one dtype in"),
    (lambda: fp8_manifest(out="float32"), "one dtype in"),
    (lambda: fp8_manifest(value_scale="inf"), "value_scale must be a finite number"),
])
def test_fp8_manifest_checked(obj, msg):
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(try_seal(obj()))


def test_fp8_mixed_types_refused():
    obj = fp8_manifest()
    for a in obj["args"]:
        if a["name"] == "k":
            a["dtype"] = "float8_e5m2"
    with pytest.raises(BundleError, match="one dtype in"):
        bundle.parse_manifest(try_seal(obj))


def test_tensor_map_layout_innermost_first():
    # [2, 4, 4097, 128] f16: dims reversed, byte strides of every axis but
    # the contiguous one, the box reversed (TMA coordinate order).
    dims, strides, box = bundle.tensor_map_layout("float16", (2, 4, 4097, 128),
                                                  (1, 1, 128, 64))
    assert dims == (128, 4097, 4, 2)
    assert strides == (256, 256 * 4097, 256 * 4097 * 4)
    assert box == (64, 128, 1, 1)
    # GQA: K without the group dim, bf16.
    assert bundle.tensor_map_layout("bfloat16", (3, 8, 1000, 256),
                                    (1, 1, 64, 64))[1] == (512, 512000, 4096000)


@needs_attn_bundle
def test_attn_bundle_writes_tensor_maps(tmp_path):
    """attn-bundle on a long non-causal D = 128 attention: the
    warp-specialized kernel with Q/K/V by TMA, the tensor maps in kernel
    parameter order, accepted by the loader; tma=0 gives none."""
    src = tmp_path / "a.mlir"
    t = "tensor<1x4x4096x128xf16>"
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e"))
    src.write_text(f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
""")
    m = bundle.read_manifest(bundle.compile(src, tmp_path / "b",
                                            attn_bundle=real_attn_bundle()))
    assert "Q/K/V by TMA" in m.attention.kernel_choice
    assert m.arg("tmap_k").box == (1, 1, 128, 64) and m.inputs == ("q", "k", "v")
    m0 = bundle.read_manifest(bundle.compile(src, tmp_path / "b0",
                                             attn_bundle=real_attn_bundle(),
                                             launch={"tma": 0}))
    assert m0.arg("tmap_k") is None and "TMA" not in m0.attention.kernel_choice


def _bias_source(tmp_path, qtype: str, mtype: str):
    """A D = 128, N = 4096 attention with a bias per head ([4, N, N])."""
    src = tmp_path / "a.mlir"
    t = f"tensor<1x4x4096x128x{qtype}>"
    mt = f"tensor<4x4096x4096x{mtype}>"
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e",
                      "h, m, n"))
    src.write_text(f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %bias: {mt}, %o: {t}) -> {t} {{
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) mask(%bias : {mt})
      outs(%o : {t}) indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
""")
    return src


@needs_attn_bundle
def test_attn_bundle_writes_mask_tensor_map(tmp_path):
    """A bf16 bias per head at D = 128, N = 4096: V a tile behind K, the
    bias tile by TMA (tmap_mask: the block's 128 rows by 64 keys), hidden
    from callers like the others; shift_v=0 keeps the cp.async ring."""
    src = _bias_source(tmp_path, "bf16", "bf16")
    m = bundle.read_manifest(bundle.compile(src, tmp_path / "b",
                                            attn_bundle=real_attn_bundle()))
    assert "Q/K/V and the mask by TMA" in m.attention.kernel_choice
    assert "V a tile behind K" in m.attention.kernel_choice
    assert m.arg("tmap_mask").box == (1, 128, 64)
    assert m.inputs == ("q", "k", "v", "mask")
    with pytest.raises(TypeError, match="unexpected argument 'tmap_mask'"):
        bundle.bind_args(m, [1, 2, 3, 4], {"tmap_mask": 0})
    m0 = bundle.read_manifest(bundle.compile(src, tmp_path / "b0",
                                             attn_bundle=real_attn_bundle(),
                                             launch={"shift_v": 0}))
    assert m0.arg("tmap_mask") is None
    assert "V a tile behind K" not in m0.attention.kernel_choice


@needs_attn_bundle
def test_attn_bundle_f32_mask_tensor_map(tmp_path):
    """An f32 bias at D = 128, N = 4096: 96-key tiles, its tile by TMA in
    panels of 32 keys (128 bytes); the loader accepts a float32 map for the
    mask only."""
    src = _bias_source(tmp_path, "f16", "f32")
    m = bundle.read_manifest(bundle.compile(src, tmp_path / "b",
                                            attn_bundle=real_attn_bundle()))
    assert "96-key tiles" in m.attention.kernel_choice
    assert m.arg("tmap_mask").box == (1, 128, 32)
    assert bundle.tensor_map_layout("float32", (4, 4096, 4096), (1, 128, 32)) == (
        (4096, 4096, 4), (16384, 67108864), (32, 128, 1))
