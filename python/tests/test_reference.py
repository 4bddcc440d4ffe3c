"""The numpy reference (attn_opt.reference) against a per-element loop that
reads every operand through its own layout. No GPU, no torch."""
import itertools
import math

import numpy as np
import pytest

from attn_opt.reference import (NumpyOps, make_inputs, make_problem, reference,
                                rel_error, rows_for_budget, select_rows,
                                tile_pattern_mask, to_canonical)

OPS = NumpyOps()


def naive(man, inputs):
    """O[b..., m, e] in float64, one score at a time, straight from the op's
    definition (attn.attention's description)."""
    att = man.attention
    sz = man.sizes()
    bnames = list(man.batch_names)
    out = np.zeros([sz[b] for b in bnames] + [sz["m"], sz["e"]])

    def at(name, idx):
        spec = man.arg(name)
        x = inputs[name]
        pos = tuple(0 if s == 1 and spec.name in ("mask", "sink") else idx[d]
                    for d, s in zip(spec.dims, spec.shape))
        return x[pos]

    for bidx in itertools.product(*[range(sz[b]) for b in bnames]):
        idx = dict(zip(bnames, bidx))
        for m in range(sz["m"]):
            idx["m"] = m
            s = []
            for n in range(sz["n"]):
                idx["n"] = n
                dot = 0.0
                for d in range(sz["d"]):
                    idx["d"] = d
                    dot += float(at("q", idx)) * float(at("k", idx))
                x = att.scale * dot
                masked = False
                if man.arg("mask") is not None:
                    mv = at("mask", idx)
                    if man.arg("mask").dtype == "bool":
                        masked = not bool(mv)
                    else:
                        x += float(mv)
                if att.causal and n > m:
                    masked = True
                if att.window is not None and m - n >= att.window:
                    masked = True
                s.append(att.mask_value if masked else x)
            s = np.array(s)
            logits = list(s)
            if man.arg("sink") is not None:
                logits.append(float(at("sink", idx)))
            mx = max(logits)
            if mx == -math.inf:
                continue  # all masked: 0
            p = np.exp(s - mx)
            denom = p.sum() + (math.exp(logits[-1] - mx) if man.arg("sink") is not None else 0)
            for e in range(sz["e"]):
                idx["e"] = e
                acc = sum(p[n] * float(at("v", {**idx, "n": n})) for n in range(sz["n"]))
                out[tuple(bidx) + (m, e)] = acc / denom
    return out


CASES = {
    "plain": dict(batch=(2,), M=5, N=7, D=3),
    "no-batch": dict(batch=(), M=6, N=4, D=2, E=3),
    "causal-ragged": dict(batch=(2, 2), M=5, N=9, D=3, causal=True),
    "window": dict(batch=(1,), M=9, N=9, D=2, window=3),
    "causal-window": dict(batch=(1,), M=9, N=9, D=2, causal=True, window=2),
    "bool-mask": dict(batch=(2,), M=6, N=5, D=2, mask="bool"),
    "float-mask": dict(batch=(2,), M=6, N=5, D=2, mask="float32"),
    "bool-mask-finite-fill": dict(batch=(2,), M=6, N=5, D=2, mask="bool",
                                  mask_value=-3.0e38),
    "causal-finite-fill": dict(batch=(1,), M=5, N=5, D=2, causal=True,
                               mask_value=-1.0e9),
    "sink": dict(batch=(2, 3), M=4, N=5, D=2, sink=True, causal=True),
    "sink-per-head": dict(batch=(2, 3), M=4, N=5, D=2, sink=True,
                          layout={"sink": ["b1"]}),
    "mask-broadcast-head": dict(batch=(2, 3), M=4, N=5, D=2, mask="float32",
                                layout={"mask": ["b0", "m", "n"]}),
    "mask-size1-dim": dict(batch=(2, 3), M=4, N=5, D=2, mask="bool",
                           shapes={"mask": [2, 1, 4, 5]}),
    # [B, S, H, D] everywhere, and GQA: K/V without the group dim b2.
    "bshd": dict(batch=(2, 3), M=4, N=6, D=2, E=3,
                 layout={"q": ["b0", "m", "b1", "d"], "k": ["b0", "n", "b1", "d"],
                         "v": ["b0", "n", "b1", "e"], "out": ["b0", "m", "b1", "e"]}),
    "gqa": dict(batch=(2, 2, 3), M=4, N=5, D=2, causal=True,
                layout={"k": ["b0", "b1", "n", "d"], "v": ["b0", "b1", "n", "e"]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_matches_definition(name):
    man = make_problem(dtype="float32", **CASES[name])
    inputs = make_inputs(man, OPS, seed=hash(name) % 1000)
    want = naive(man, inputs)
    got = reference(man, inputs, OPS)
    assert got.shape == want.shape
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fully_masked_rows():
    man = make_problem(dtype="float32", batch=(1,), M=12, N=6, D=2, mask="bool")
    inputs = make_inputs(man, OPS, seed=3, fully_masked_rows=1)
    dead = [m for m in range(12) if not inputs["mask"][0, m].any()]
    assert dead == [3]
    out = reference(man, inputs, OPS)
    assert (out[0, 3] == 0).all()
    # finite fill: the dead row averages V uniformly
    man2 = make_problem(dtype="float32", batch=(1,), M=12, N=6, D=2, mask="bool",
                        mask_value=-3.4028234663852886e38)
    out2 = reference(man2, inputs, OPS)
    np.testing.assert_allclose(out2[0, 3], inputs["v"][0].mean(axis=0), rtol=1e-6)


def test_chunks_and_rows_do_not_change_the_result():
    man = make_problem(dtype="float32", batch=(3, 2), M=20, N=16, D=4,
                       causal=True, mask="float32", sink=True)
    inputs = make_inputs(man, OPS, seed=1)
    full = reference(man, inputs, OPS)
    for budget in (1, 16, 100, 1000):
        np.testing.assert_allclose(reference(man, inputs, OPS, budget=budget), full,
                                   rtol=1e-12, atol=1e-14)
    rows = [0, 5, 19]
    np.testing.assert_allclose(reference(man, inputs, OPS, rows=rows, budget=40),
                               full[..., rows, :], rtol=1e-12)


def test_float16_inputs_are_upcast():
    man = make_problem(dtype="float16", batch=(2,), M=9, N=9, D=8, causal=True)
    inputs = make_inputs(man, OPS, seed=2)
    assert inputs["q"].dtype == np.float16
    ref = reference(man, inputs, OPS)
    rounded = ref.astype(np.float16)
    assert 0 < rel_error(OPS, rounded, ref) < 1e-3


def test_rel_error_sees_nan():
    ref = np.ones((2, 3))
    out = ref.copy()
    out[1, 1] = np.nan
    assert math.isnan(rel_error(OPS, out, ref))
    assert rel_error(OPS, ref, ref) == 0


def test_select_rows():
    assert select_rows(100, 100) is None
    rows = select_rows(1000, 64, seed=1)
    assert len(rows) == 64 and rows == sorted(set(rows))
    assert rows[:16] == list(range(16)) and rows[-16:] == list(range(984, 1000))
    assert rows == select_rows(1000, 64, seed=1)


def test_rows_for_budget():
    man = make_problem(batch=(4, 8), M=4096, N=4096, D=64)
    rows = rows_for_budget(man, 2e10)
    per_row = 2 * 4096 * 128 * 32
    assert rows is not None and abs(len(rows) - 2e10 // per_row) <= 1
    assert rows_for_budget(make_problem(batch=(1,), M=64, N=64, D=8), 2e10) is None


def test_to_canonical_inserts_missing_dims():
    x = np.arange(6).reshape(2, 3)  # (n, b1)
    y = to_canonical(OPS, x, ["n", "b1"], ["b0", "b1", "n", "d"])
    assert y.shape == (1, 3, 2, 1)
    assert y[0, 2, 1, 0] == x[1, 2]


def test_tile_pattern_mask():
    """The GPU checks' "tiles" mask: key padding past a length per batch
    entry (one entry with no key), and [B, M, N] masks with all-false,
    all-true and mixed 64 x 128 blocks."""
    keys = tile_pattern_mask(["b", "n"], (3, 2048), seed=5)
    lens = keys.sum(1)
    assert keys.dtype == bool and lens[1] == 0
    for b in (0, 2):  # a prefix of kept keys, at least a quarter of them
        assert lens[b] >= 512 and keys[b, :lens[b]].all() and not keys[b, lens[b]:].any()
    full = tile_pattern_mask(["b", "m", "n"], (2, 1024, 1280), seed=5)
    blocks = full[0].reshape(16, 64, 10, 128).transpose(0, 2, 1, 3).reshape(160, -1)
    kept = blocks.sum(1)
    assert (kept == 0).any() and (kept == blocks.shape[1]).any()
    assert ((kept > 0) & (kept < blocks.shape[1])).any()
