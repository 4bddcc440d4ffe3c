"""Varlen bundles without a GPU: attn-bundle on an attention whose mask is
attn.varlen_mask, the manifest's cu_seqlens tables and attention.varlen,
the loader's checks, the reference's per-sequence mask and the drawn
tables."""
import json

import numpy as np
import pytest

from attn_opt import bundle, reference
from attn_opt.bundle import BundleError
from tools import compile_once, needs_attn_bundle, real_attn_bundle

VARLEN = """func.func @f(%q: tensor<300x2x64xf16>, %k: tensor<200x2x64xf16>, %v: tensor<200x2x64xf16>, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %o: tensor<300x2x64xf16>) -> tensor<300x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cq, %ck causal bottom_right : tensor<4xi32>, tensor<4xi32> -> tensor<300x200xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<300x2x64xf16>, tensor<200x2x64xf16>, tensor<200x2x64xf16>) scale(%s)
      mask(%m : tensor<300x200xi1>) outs(%o : tensor<300x2x64xf16>)
      indexing_maps = [affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
                       affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
                       affine_map<(h, m, n, d, e) -> (m, n)>]
      -> tensor<300x2x64xf16>
  return %r : tensor<300x2x64xf16>
}
"""


@pytest.fixture(scope="module")
def varlen_bundle(tmp_path_factory):
    return compile_once(tmp_path_factory, "varlen", VARLEN)


@needs_attn_bundle
def test_manifest(varlen_bundle):
    m = bundle.read_manifest(varlen_bundle)
    assert m.attention.varlen == (3, True, True)
    for n in ("cu_seqlens_q", "cu_seqlens_k"):
        assert m.arg(n).shape == (4,) and m.arg(n).dtype == "int32"
        assert n in m.inputs
    assert m.arg("mask") is None
    tq = m.attention.tile_q
    assert m.grid[0] == 300 // tq + 3
    assert "varlen: 3 packed sequences" in m.attention.kernel_choice


def _arg(m, name):
    return next(a for a in m["args"] if a["name"] == name)


@needs_attn_bundle
@pytest.mark.parametrize("edit, msg", [
    (lambda m: m["attention"].pop("varlen"),
     "'cu_seqlens_q'/'cu_seqlens_k' come with attention.varlen"),
    (lambda m: m["attention"]["varlen"].update(seqs=4),
     r"varlen with 4 sequences needs 'cu_seqlens_q' of shape \[5\]"),
    (lambda m: m["attention"]["varlen"].update(causal=False),
     "bottom_right only with causal"),
    (lambda m: m["attention"].update(causal=True),
     "attention.varlen takes its causal rule from the varlen tables"),
    (lambda m: _arg(m, "cu_seqlens_k").update(dtype="int64"),
     "'cu_seqlens_k' must be int32"),
    (lambda m: m.update(grid=[m["grid"][0] - 3, *m["grid"][1:]]),
     "varlen seqs 3"),
])
def test_manifest_checks(varlen_bundle, edit, msg):
    obj = json.loads((varlen_bundle / "manifest.json").read_text())
    edit(obj)
    with pytest.raises(BundleError, match=msg):
        bundle.parse_manifest(obj)


# A region over the score alone (ids: 0 the score, 1 the head, 2 m, 3 n),
# and one that reads m (the kernels pass it the packed positions): both may
# come with attention.varlen.
SCORE_ONLY = {"num_args": 4, "result": 4,
              "ops": [{"op": "arith.addf", "operands": [0, 0], "type": "f32"}]}
READS_M = {"num_args": 4, "result": 6,
           "ops": [{"op": "arith.index_cast", "operands": [2], "type": "i64"},
                   {"op": "arith.sitofp", "operands": [4], "type": "f32"},
                   {"op": "arith.addf", "operands": [0, 5], "type": "f32"}]}


@needs_attn_bundle
def test_manifest_score_mod(varlen_bundle):
    obj = json.loads((varlen_bundle / "manifest.json").read_text())
    obj["attention"]["score_mod"] = SCORE_ONLY
    assert bundle.parse_manifest(obj).attention.score_mod is not None
    obj["attention"]["score_mod"] = READS_M
    assert bundle.parse_manifest(obj).attention.score_mod.ops[0].operands == (2,)


def test_varlen_keep_per_sequence():
    # Sequence 1 is empty on the query side, sequence 2 on the key side
    # (its queries see nothing); bottom-right with more queries than keys
    # hides the first queries of sequence 0; the last rows are past cu_q[S].
    cq, ck = [0, 5, 5, 9, 11], [0, 3, 7, 7, 12]
    keep = reference.varlen_keep(cq, ck, 12, 12, causal=True, bottom_right=True)
    want = np.zeros((12, 12), dtype=bool)
    for i in range(5):  # queries 0..4 against keys 0..2, offset 3 - 5 = -2
        for j in range(3):
            want[i, j] = j <= i - 2
    want[9:11, 7:12] = np.array([[j <= i + 3 for j in range(5)] for i in range(2)])
    assert (keep == want).all()
    full = reference.varlen_keep(cq, ck, 12, 12, causal=False, bottom_right=False)
    assert full[5:9].sum() == 0 and full[11].sum() == 0 and full[0:5, 0:3].all()
    # Hostile entries are clamped to the token counts.
    assert reference.varlen_keep([0, 99], [-5, 4], 3, 4, False, False).all()


@needs_attn_bundle
def test_reference_and_inputs(varlen_bundle):
    m = bundle.read_manifest(varlen_bundle)
    ops = reference.NumpyOps()
    inputs = reference.make_inputs(m, ops, seed=5)
    for n, total in (("cu_seqlens_q", 300), ("cu_seqlens_k", 200)):
        cu = inputs[n]
        assert cu.dtype == np.int32 and cu[0] == 0 and cu[-1] == total
        assert (np.diff(cu) >= 0).all() and cu[1] == cu[2]  # an empty sequence
    out = reference.reference(m, inputs, ops)  # [h, m, e]
    q, k, v = (inputs[x].astype(np.float64) for x in ("q", "k", "v"))
    cq, ck = inputs["cu_seqlens_q"], inputs["cu_seqlens_k"]
    for s in range(3):
        q0, q1, k0, k1 = cq[s], cq[s + 1], ck[s], ck[s + 1]
        for h in range(2):
            for i in range(q0, q1):
                last = (i - q0) + (k1 - k0) - (q1 - q0)  # bottom-right
                if last < 0 or k1 == k0:
                    assert np.all(out[h, i] == 0)
                    continue
                sc = k[k0:k0 + last + 1, h] @ q[i, h] * 0.125
                p = np.exp(sc - sc.max())
                want = p @ v[k0:k0 + last + 1, h] / p.sum()
                assert np.allclose(out[h, i], want, rtol=1e-6, atol=1e-9)



@needs_attn_bundle
def test_equal_tables_input_pattern(varlen_bundle):
    """mask_pattern "equal_seqs" (check.json): tables of equal lengths with
    the second sequence empty, which the persistent causal kernel takes by
    levels (S x max tiles <= floor(T / 128) + S here), on both sides."""
    m = bundle.read_manifest(varlen_bundle)
    inputs = reference.make_inputs(m, reference.NumpyOps(), seed=5,
                                   mask_pattern="equal_seqs")
    for n, total in (("cu_seqlens_q", 300), ("cu_seqlens_k", 200)):
        cu = inputs[n]
        assert cu.dtype == np.int32 and cu[0] == 0 and cu[-1] == total
        lens = np.diff(cu)
        assert lens[1] == 0 and lens.max() - lens[lens > 0].min() <= 1
    cu = reference.equal_cu_seqlens(16, 16384)
    tiles = -(-np.diff(cu) // 128)
    assert cu[-1] == 16384 and 16 * tiles.max() <= 16384 // 128 + 16
    assert list(reference.equal_cu_seqlens(2, 5)) == [0, 3, 5]


def _varlen_program(tokens: str) -> str:
    """VARLEN at D = 128 with T = 300 query and key tokens, or dynamic ones."""
    t, tm = f"tensor<{tokens}x2x128xf16>", f"tensor<{tokens}x{tokens}xi1>"
    sizes = ""
    head = ""
    if tokens == "?":
        head = (f"  %c0 = arith.constant 0 : index\n"
                f"  %tq = tensor.dim %q, %c0 : {t}\n  %tk = tensor.dim %k, %c0 : {t}\n")
        sizes = " sizes(%tq, %tk)"
    maps = ", ".join(f"affine_map<(h, m, n, d, e) -> ({x})>" for x in
                     ("m, h, d", "n, h, d", "n, h, e", "m, h, e", "m, n"))
    return f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %o: {t}) -> {t} {{
{head}  %s = arith.constant 0.088 : f32
  %m = attn.varlen_mask %cq, %ck causal bottom_right{sizes} : tensor<4xi32>, tensor<4xi32> -> {tm}
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) mask(%m : {tm})
      outs(%o : {t}) indexing_maps = [{maps}] -> {t}
  return %r : {t}
}}
"""


@needs_attn_bundle
@pytest.mark.parametrize("tokens", ["300", "?"])
def test_persistent_varlen(tmp_path, tokens):
    """Persistent blocks over varlen's tile slots: P = min(slots x heads,
    132) blocks (grid x -1 with a dynamic token count: counted at launch,
    floor(T / tile_q) + S slots per head), Q/K/V by TMA; a wrong grid is
    refused."""
    src = tmp_path / "v.mlir"
    src.write_text(_varlen_program(tokens))
    out = bundle.compile(src, tmp_path / "b", attn_bundle=real_attn_bundle(),
                         launch={"warp_specialize": 1, "pipeline": 1,
                                 "persistent": 1})
    m = bundle.read_manifest(out)
    tq = m.attention.tile_q
    slots = 2 * (300 // tq + 3)
    assert m.arg("tile_counter").shape == (2,)
    assert "Q/K/V by TMA" in m.attention.kernel_choice
    # The producer takes the tiles by levels where the tables allow.
    assert "(tiles by levels" in m.attention.kernel_choice
    assert m.attention.varlen == (3, True, True)
    if tokens == "?":
        assert m.grid == (-1, 1, 1) and m.attention.persistent == 132
        assert bundle.specialize(m, {"m": 300, "n": 300}).grid == (slots, 1, 1)
        assert bundle.specialize(m, {"m": 40000, "n": 40000}).grid == (132, 1, 1)
        return
    assert m.grid == (slots, 1, 1) and m.attention.persistent == slots
    obj = json.loads((out / "manifest.json").read_text())
    obj["grid"] = [slots - 2, 1, 1]
    with pytest.raises(BundleError, match=r"grid \[%d, 1, 1\] does not match" % (slots - 2)):
        bundle.parse_manifest(obj)


def _chunk_keep(cq, ck, c, causal, bottom_right):
    """The chunk rule per sequence, written out: query i of sequence s at
    position p = i (+ lk - lq bottom-right) sees key n of s where n // c ==
    p // c (and n <= p with causal)."""
    keep = np.zeros((cq[-1], ck[-1]), bool)
    for s in range(len(cq) - 1):
        lq, lk = cq[s + 1] - cq[s], ck[s + 1] - ck[s]
        off = lk - lq if bottom_right else 0
        p = off + np.arange(lq)[:, None]
        n = np.arange(lk)[None, :]
        ok = (n // c) == (p // c)
        if causal:
            ok &= n <= p
        keep[cq[s]:cq[s + 1], ck[s]:ck[s + 1]] = ok
    return keep


def test_chunk_virtual_tables_are_the_chunk_mask():
    """varlen_attention(chunk_size=C) runs plain varlen attention over the
    pieces of each sequence within one chunk: on random batches (empty
    sequences, more queries than keys, caches before the queries, chunks
    of 1 to 9) the pieces' varlen mask is exactly the chunk rule, the
    tables cover every token, and each ends where the call's does."""
    from attn_opt.ops import chunk_virtual_tables
    rng = np.random.default_rng(52)
    for _ in range(600):
        s, c = int(rng.integers(1, 6)), int(rng.integers(1, 10))
        causal, br = bool(rng.random() < 0.6), bool(rng.random() < 0.5)
        lq = rng.integers(0, 20, s)
        lk = np.maximum(lq, rng.integers(0, 25, s)) if br and causal else rng.integers(0, 25, s)
        cq, ck = ([0] + np.cumsum(x).tolist() for x in (lq, lk))
        vq, vk = chunk_virtual_tables(cq, ck, c, br)
        assert vq[0] == vk[0] == 0 and vq[-1] == cq[-1] and vk[-1] == ck[-1]
        assert all(np.diff(vq) >= 0) and all(np.diff(vk) >= 0)
        got = reference.varlen_keep(vq, vk, cq[-1], ck[-1], causal, br)
        assert np.array_equal(got, _chunk_keep(cq, ck, c, causal, br)), (cq, ck, c)
    # Llama 4's shape: two sequences of 20000 tokens over 8192-token chunks
    # are 6 pieces; a cache of 9000 keys before 100 queries is one piece
    # after a query-less one (the cache's first chunk).
    assert chunk_virtual_tables([0, 20000, 40000], [0, 20000, 40000], 8192,
                                False) == ([0, 8192, 16384, 20000, 28192, 36384, 40000],
                                           [0, 8192, 16384, 20000, 28192, 36384, 40000])
    assert chunk_virtual_tables([0, 100], [0, 9000], 8192, True) == \
        ([0, 0, 100], [0, 8192, 9000])
    for bad in (([0, 5, 3], [0, 5, 6]), ([1, 5], [0, 5]), ([0, 5], [0, 5, 9])):
        with pytest.raises(BundleError, match="never decrease"):
            chunk_virtual_tables(*bad, 4, False)


def test_chunk_virtual_tables_on_the_device_agree():
    """chunk_virtual_tables_on (the pieces computed where the tables are,
    at chunk_table_bound's size, no wait for the device; numpy stands in
    for torch here): on random batches its tables are the host's once
    entries that hold nothing are dropped, they end at the token counts,
    never decrease, and have bound + 1 entries."""
    from attn_opt.ops import chunk_table_bound, chunk_virtual_tables, \
        chunk_virtual_tables_on

    def held(vq, vk):
        out = [(0, 0)]
        for a, b in zip(vq[1:], vk[1:]):
            if (int(a), int(b)) != out[-1]:
                out.append((int(a), int(b)))
        return out
    rng = np.random.default_rng(54)
    for _ in range(2000):
        s, c = int(rng.integers(1, 7)), int(rng.integers(1, 12))
        br = bool(rng.random() < 0.5)
        lq, lk = rng.integers(0, 30, s), rng.integers(0, 30, s)
        cq, ck = ([0] + np.cumsum(x).tolist() for x in (lq, lk))
        hq, hk = chunk_virtual_tables(cq, ck, c, br)
        dq, dk = chunk_virtual_tables_on(np.array(cq, np.int32), np.array(ck, np.int32),
                                         c, br, cq[-1], xp=np)
        assert dq.dtype == dk.dtype == np.int32
        assert len(dq) == len(dk) == chunk_table_bound(s, cq[-1], c) + 1
        assert dq[-1] == cq[-1] and dk[-1] == ck[-1]
        assert all(np.diff(dq) >= 0) and all(np.diff(dk) >= 0)
        assert held(dq, dk) == held(hq, hk), (cq, ck, c, br)
    # Llama 4's shape: 6 pieces among chunk_table_bound(2, 40000, 8192) = 12.
    dq, dk = chunk_virtual_tables_on(np.array([0, 20000, 40000]), np.array([0, 20000, 40000]),
                                     8192, False, 40000, xp=np)
    assert held(dq, dk) == [(0, 0), (8192, 8192), (16384, 16384), (20000, 20000),
                            (28192, 28192), (36384, 36384), (40000, 40000)]


def test_chunk_virtual_tables_on_torch():
    """The same on torch tensors (the GPU path's code, run here on the CPU
    where torch is installed): equal to the numpy result entry for entry."""
    torch = pytest.importorskip("torch")
    from attn_opt.ops import chunk_virtual_tables_on
    rng = np.random.default_rng(55)
    for _ in range(400):
        s, c = int(rng.integers(1, 7)), int(rng.integers(1, 12))
        br = bool(rng.random() < 0.5)
        lq, lk = rng.integers(0, 30, s), rng.integers(0, 30, s)
        cq, ck = (np.array([0] + np.cumsum(x).tolist(), np.int32) for x in (lq, lk))
        want = chunk_virtual_tables_on(cq, ck, c, br, int(cq[-1]), xp=np)
        got = chunk_virtual_tables_on(torch.from_numpy(cq), torch.from_numpy(ck), c, br,
                                      int(cq[-1]))
        for g, w in zip(got, want):
            assert g.dtype == torch.int32
            assert g.tolist() == w.tolist(), (cq, ck, c, br)


def test_varlen_chunk_size_checked():
    """varlen_attention's chunk_size is checked before anything runs on the
    device: not an int, negative, or tables that do not end at the token
    counts or that decrease (numpy stands in for the tensors: the checks
    read shapes and lists only)."""
    from attn_opt import ops
    q = np.zeros((10, 2, 64), np.float16)
    k = v = np.zeros((12, 2, 64), np.float16)
    cu_q, cu_k = np.array([0, 4, 10], np.int32), np.array([0, 5, 12], np.int32)
    for bad in (-1, True, 2.5, "8"):
        with pytest.raises(BundleError, match="chunk_size must be an int"):
            ops.varlen_attention(q, k, v, cu_q, cu_k, causal=True, chunk_size=bad)
    with pytest.raises(BundleError, match="end at the token counts"):
        ops.varlen_attention(q, k, v, cu_q, np.array([0, 5, 11], np.int32), causal=True,
                             chunk_size=4)
    with pytest.raises(BundleError, match="never decrease"):
        ops.varlen_attention(q, k, v, np.array([0, 11, 10], np.int32), cu_k, causal=True,
                             chunk_size=4)
