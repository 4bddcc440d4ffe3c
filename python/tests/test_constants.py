"""Constants of the program as kernel arguments, without a GPU: a mask,
bias or sink buffer (as torch-mlir writes a model's buffers) travels in the
bundle as "<name>.bin"; the manifest marks it, the loader checks it and
passes it, callers and the reference never draw it."""
import hashlib
import json

import numpy as np
import pytest

from attn_opt import bundle, reference
from attn_opt.bundle import BundleError
from attn_opt.compiler import CompileError
from tools import needs_attn_bundle, real_attn_bundle

M, N = 96, 160
RNG = np.random.default_rng(3)
KEEP = RNG.random((M, N)) < 0.7
KEEP[4] = False  # a fully masked row: its output is 0
BIAS = RNG.standard_normal((2, M, N)).astype(np.float32)
BIAS[0, 7] = -np.inf
SINK = np.array([0.5, -1.25], dtype=np.float32)


def _bool_text(x):
    if x.ndim == 1:
        return "[" + ",".join("true" if v else "false" for v in x) + "]"
    return "[" + ",".join(_bool_text(y) for y in x) + "]"


def _bf16_bits(x):
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _program(mask_type, mask_value, mask_dims, sink_value=None, extra=""):
    t = lambda n: f"tensor<2x2x{n}x64xf16>"  # noqa: E731
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e",
                      mask_dims) + (("h",) if sink_value else ()))
    sink_def = sink_clause = ""
    if sink_value:
        sink_def = f"  %sk = arith.constant {sink_value} : tensor<2xf16>\n"
        sink_clause = " sink(%sk : tensor<2xf16>)"
    return f"""func.func @f(%q: {t(M)}, %k: {t(N)}, %v: {t(N)}, %o: {t(M)}) -> {t(M)} {{
  %s = arith.constant 0.125 : f32
  %m = arith.constant {mask_value} : {mask_type}
{sink_def}  %r = attn.attention ins(%q, %k, %v : {t(M)}, {t(N)}, {t(N)}) scale(%s)
      mask(%m : {mask_type}){sink_clause} outs(%o : {t(M)}) indexing_maps = [{maps}] -> {t(M)}
  return %r : {t(M)}
}}
{extra}"""


def _compile(tmp_path, text, name="b"):
    src = tmp_path / f"{name}.mlir"
    src.write_text(text)
    return bundle.compile(src, tmp_path / name, attn_bundle=real_attn_bundle())


@needs_attn_bundle
def test_bool_mask_and_sink_travel_in_the_bundle(tmp_path):
    sink = "dense<[0.5, -1.25]>"
    out = _compile(tmp_path, _program(f"tensor<{M}x{N}xi1>",
                                      f"dense<{_bool_text(KEEP)}>", "m, n", sink))
    m = bundle.read_manifest(out)
    assert m.arg("mask").constant == "mask.bin" and m.arg("sink").constant == "sink.bin"
    assert m.inputs == ("q", "k", "v")
    data = (out / "mask.bin").read_bytes()
    assert data == KEEP.astype(np.uint8).tobytes()
    assert m.file_sha256("mask.bin") == hashlib.sha256(data).hexdigest()
    assert (out / "sink.bin").read_bytes() == SINK.astype(np.float16).tobytes()
    b = bundle.open_bundle(out)
    assert dict(b.constants)["mask"] == data
    # The reference reads the bundle's data; the harness draws q, k, v only.
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=2)
    assert sorted(inputs) == ["k", "q", "v"]
    ref = reference.reference(m, inputs, ops)
    assert np.all(ref[:, :, 4] == 0) and np.abs(ref[:, :, 5]).max() > 0
    q, k, v = (inputs[x].astype(np.float64) for x in ("q", "k", "v"))
    sc = np.einsum("bhmd,bhnd->bhmn", q, k) * 0.125
    sc = np.where(KEEP, sc, -np.inf)
    mx = np.maximum(sc.max(-1, keepdims=True),
                    SINK.astype(np.float16).astype(np.float64)[None, :, None, None])
    p = np.exp(sc - mx)
    den = p.sum(-1, keepdims=True) + np.exp(
        SINK.astype(np.float16).astype(np.float64)[None, :, None, None] - mx)
    want = np.einsum("bhmn,bhne->bhme", p / den, v)
    assert np.allclose(ref, want, rtol=1e-6, atol=1e-9)


@needs_attn_bundle
def test_bf16_bias_per_head_hex_and_behind_a_reshape(tmp_path):
    """A bf16 bias [h, m, n] written as hex, reaching the attention through
    an expand_shape (the data keeps its row-major order)."""
    raw = _bf16_bits(BIAS).tobytes()
    t = lambda n: f"tensor<2x2x{n}x64xbf16>"  # noqa: E731
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e", "h, m, n"))
    text = f"""func.func @f(%q: {t(M)}, %k: {t(N)}, %v: {t(N)}, %o: {t(M)}) -> {t(M)} {{
  %s = arith.constant 0.125 : f32
  %flat = arith.constant dense<"0x{raw.hex().upper()}"> : tensor<{2 * M}x{N}xbf16>
  %m = tensor.expand_shape %flat [[0, 1], [2]] output_shape [2, {M}, {N}] : tensor<{2 * M}x{N}xbf16> into tensor<2x{M}x{N}xbf16>
  %r = attn.attention ins(%q, %k, %v : {t(M)}, {t(N)}, {t(N)}) scale(%s)
      mask(%m : tensor<2x{M}x{N}xbf16>) outs(%o : {t(M)}) indexing_maps = [{maps}] -> {t(M)}
  return %r : {t(M)}
}}
"""
    out = _compile(tmp_path, text)
    m = bundle.read_manifest(out)
    assert m.arg("mask").constant == "mask.bin" and m.arg("mask").shape == (2, M, N)
    assert (out / "mask.bin").read_bytes() == raw
    got = bundle.constant_array(m, "mask")
    want = (_bf16_bits(BIAS).astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(got, want)


@needs_attn_bundle
def test_dense_resource_blob(tmp_path):
    """torch-mlir writes buffers as dense_resource blobs (4 alignment bytes,
    then the data): the file holds the data."""
    vals = BIAS[0].astype(np.float16)
    blob = "0x02000000" + vals.tobytes().hex().upper()
    extra = f"""{{-#
  dialect_resources: {{ builtin: {{ bias: "{blob}" }} }}
#-}}
"""
    out = _compile(tmp_path, _program(f"tensor<{M}x{N}xf16>", "dense_resource<bias>",
                                      "m, n", extra=extra))
    assert (out / "mask.bin").read_bytes() == vals.tobytes()


@needs_attn_bundle
@pytest.mark.parametrize("text, msg", [
    (_program(f"tensor<{M}x{N}xf16>", "dense_resource<__elided__>", "m, n"),
     "the mask is a constant of the program that a bundle cannot carry: its "
     "data is elided"),
])
def test_constants_a_bundle_cannot_carry(tmp_path, text, msg):
    with pytest.raises(CompileError) as e:
        _compile(tmp_path, text)
    assert msg in e.value.diagnostics


@needs_attn_bundle
def test_constant_checked_when_loaded(tmp_path):
    out = _compile(tmp_path, _program(f"tensor<{M}x{N}xi1>",
                                      f"dense<{_bool_text(KEEP)}>", "m, n"))
    obj = json.loads((out / "manifest.json").read_text())
    # Another file name, a constant q, no sha256 entry: refused.
    for edit, msg in (
            (lambda o: o["args"][3].update(constant="other.bin"),
             "may be constants of the program"),
            (lambda o: next(a for a in o["args"] if a["name"] == "q").update(
                constant="q.bin"), "may be constants of the program"),
            (lambda o: o["sha256"].pop("mask.bin"), "no entry for 'mask.bin'")):
        o = json.loads(json.dumps(obj))
        if o["args"][3]["name"] != "mask":
            o["args"] = sorted(o["args"], key=lambda a: a["name"] != "mask")
        edit(o)
        with pytest.raises(BundleError, match=msg):
            bundle.parse_manifest(o)
    # The data changed on disk: the sha256 no longer matches.
    data = bytearray((out / "mask.bin").read_bytes())
    data[0] ^= 1
    (out / "mask.bin").write_bytes(bytes(data))
    with pytest.raises(BundleError, match="mask.bin does not match"):
        bundle.open_bundle(out)
    # The constant dropped from the manifest: the binding no longer holds.
    (out / "mask.bin").write_bytes(bytes(data[:1]) + bytes(data[1:]))
    o = json.loads(json.dumps(obj))
    for a in o["args"]:
        a.pop("constant", None)
    o["sha256"].pop("mask.bin")
    with pytest.raises(BundleError, match="binding_sha256 mismatch"):
        bundle.parse_manifest(o)


@needs_attn_bundle
def test_constant_varlen_tables(tmp_path):
    """A fixed packing: one constant table for both sides becomes two int32
    files; the reference runs on them."""
    t = "tensor<300x2x64xf16>"
    maps = ", ".join(f"affine_map<(h, m, n, d, e) -> ({x})>" for x in
                     ("m, h, d", "n, h, d", "n, h, e", "m, h, e", "m, n"))
    text = f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %s = arith.constant 0.125 : f32
  %cu = arith.constant dense<[0, 100, 100, 300]> : tensor<4xi32>
  %m = attn.varlen_mask %cu, %cu causal : tensor<4xi32>, tensor<4xi32> -> tensor<300x300xi1>
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) mask(%m : tensor<300x300xi1>)
      outs(%o : {t}) indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
"""
    out = _compile(tmp_path, text)
    m = bundle.read_manifest(out)
    assert m.inputs == ("q", "k", "v")
    for n in ("cu_seqlens_q", "cu_seqlens_k"):
        assert m.arg(n).constant == f"{n}.bin"
        assert (out / f"{n}.bin").read_bytes() == np.array([0, 100, 100, 300],
                                                           dtype=np.int32).tobytes()
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=4)
    ref = reference.reference(m, inputs, ops)  # [h, m, e]
    q, k, v = (inputs[x].astype(np.float64) for x in ("q", "k", "v"))
    # Row 150 (sequence 2, its 50th query) sees keys 100..150.
    sc = k[100:151, 0] @ q[150, 0] * 0.125
    p = np.exp(sc - sc.max())
    assert np.allclose(ref[0, 150], p @ v[100:151, 0] / p.sum(), rtol=1e-6, atol=1e-9)


@needs_attn_bundle
def test_large_score_mod_table(tmp_path):
    """A constant score_mod table past the kernel's 1024 elements (a bias per
    head, query and key, read by the region) is the argument mod0 with its data in mod0.bin; a second
    attn-bundle run replaces the bundle (mod files are bundle files)."""
    w = RNG.standard_normal((2, M, N)).astype(np.float32)
    t = lambda n: f"tensor<2x2x{n}x64xf16>"  # noqa: E731
    maps = ", ".join(f"affine_map<(b, h, m, n, d, e) -> ({x})>" for x in
                     ("b, h, m, d", "b, h, n, d", "b, h, n, e", "b, h, m, e", "h, m, n"))
    text = f"""func.func @f(%q: {t(M)}, %k: {t(N)}, %v: {t(N)}, %o: {t(M)}) -> {t(M)} {{
  %s = arith.constant 0.125 : f32
  %w = arith.constant dense<"0x{w.tobytes().hex().upper()}"> : tensor<2x{M}x{N}xf32>
  %r = attn.attention ins(%q, %k, %v : {t(M)}, {t(N)}, {t(N)}) scale(%s)
      score_mod_operands(%w : tensor<2x{M}x{N}xf32>) outs(%o : {t(M)})
      indexing_maps = [{maps}] score_mod {{
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %wn: f32):
        %y = arith.addf %x, %wn : f32
        attn.yield %y : f32
      }} -> {t(M)}
  return %r : {t(M)}
}}
"""
    out = _compile(tmp_path, text)
    out = _compile(tmp_path, text)  # over the first bundle
    m = bundle.read_manifest(out)
    assert m.arg("mod0").constant == "mod0.bin" and m.inputs == ("q", "k", "v")
    assert (out / "mod0.bin").read_bytes() == w.tobytes()
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=6)
    ref = reference.reference(m, inputs, ops)
    q, k, v = (inputs[x].astype(np.float64) for x in ("q", "k", "v"))
    sc = q[1, 1, 3] @ k[1, 1].T * 0.125 + w[1, 3]
    p = np.exp(sc - sc.max())
    assert np.allclose(ref[1, 1, 3], p @ v[1, 1] / p.sum(), rtol=1e-6, atol=1e-9)
