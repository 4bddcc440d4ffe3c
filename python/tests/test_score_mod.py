"""attention.score_mod: the loader's validation (hostile input, every failure
a BundleError naming the field), the reference's evaluator against
hand-written numpy (soft-capping, ALiBi), MLIR's integer and NaN semantics,
and a manifest round trip. No GPU; the torch backend where torch is
installed."""
import copy
from pathlib import Path
import json
import math
import random

import numpy as np
import pytest

from attn_opt import bundle
from tools import needs_attn_bundle
from attn_opt.bundle import BundleError, ScoreMod, ScoreModOp, parse_score_mod
from attn_opt.reference import (NumpyOps, apply_score_mod, make_inputs, make_problem,
                                reference)

OPS = NumpyOps()


class Program:
    """A score_mod under construction, as attn-bundle writes it: ids 0..r+2
    are the score, b_0..b_{r-1}, m, n; each op returns its id."""

    def __init__(self, r=2):
        self.r, self.ops = r, []

    def op(self, name, type, *operands, **fields):
        self.ops.append(dict(op=name, type=type, operands=list(operands), **fields))
        return self.r + 2 + len(self.ops)

    def const(self, value, type="f32"):
        return self.op("arith.constant", type, value=value)

    def json(self, result):
        return {"num_args": self.r + 3, "ops": self.ops, "result": result}

    def parse(self, result):
        return parse_score_mod(json.loads(json.dumps(self.json(result))), self.r)


def softcap(cap, r=2, p=None):
    """cap * tanh(x / cap) of value x (default: the score)."""
    p = p or Program(r)
    c = p.const(cap)
    return p, p.op("arith.mulf", "f32", p.op("math.tanh", "f32",
                                            p.op("arith.divf", "f32", 0, c)), c)


def alibi_from_head(H, p=None, x=0):
    """x + exp2(-8 (h + 1) / H) * (n - m), the slope computed from %h (r = 2:
    ids b=1, h=2, m=3, n=4), as the GPU check cases write it."""
    p = p or Program(2)
    h = p.op("arith.index_cast", "i64", 2)
    h1 = p.op("arith.addi", "i64", h, p.const(1, "i64"))
    e = p.op("arith.divf", "f32", p.op("arith.mulf", "f32",
                                       p.op("arith.sitofp", "f32", h1), p.const(-8.0)),
             p.const(float(H)))
    d = p.op("arith.sitofp", "f32", p.op("arith.index_cast", "i64",
                                         p.op("arith.subi", "index", 4, 3)))
    return p, p.op("arith.addf", "f32", x,
                   p.op("arith.mulf", "f32", p.op("math.exp2", "f32", e), d))


def alibi_table(slopes, p=None, x=0):
    """x + slopes[h] * (n - m), the slopes in an attn.table (r = 2)."""
    p = p or Program(2)
    slope = p.op("attn.table", "f32", 2, shape=[len(slopes)], values=list(slopes))
    d = p.op("arith.sitofp", "f32", p.op("arith.index_cast", "i64",
                                         p.op("arith.subi", "index", 4, 3)))
    return p, p.op("arith.addf", "f32", x, p.op("arith.mulf", "f32", slope, d))


def indices(B, H, M, N, rows=None):
    rows = np.arange(M) if rows is None else np.asarray(rows)
    return ([np.arange(B).reshape(-1, 1, 1, 1), np.arange(H).reshape(1, -1, 1, 1)],
            rows.reshape(-1, 1), np.arange(N).reshape(1, -1))


# --- the evaluator --------------------------------------------------------------

def test_softcap_matches_numpy():
    s = np.random.default_rng(0).standard_normal((2, 3, 5, 7)) * 80
    p, res = softcap(30.0)
    got = apply_score_mod(p.parse(res), s, *indices(2, 3, 5, 7), OPS)
    np.testing.assert_allclose(got, 30 * np.tanh(s / 30), rtol=1e-15)
    assert np.abs(got).max() < 30


@pytest.mark.parametrize("build", ["table", "head"])
def test_alibi_matches_numpy(build):
    H, rows = 4, [0, 3, 4]
    s = np.random.default_rng(1).standard_normal((2, H, 3, 9))
    slopes = np.exp2(-8.0 * np.arange(1, H + 1) / H)
    p, res = alibi_table(slopes) if build == "table" else alibi_from_head(H)
    got = apply_score_mod(p.parse(res), s, *indices(2, H, 5, 9, rows), OPS)
    m, n = np.asarray(rows)[:, None], np.arange(9)[None, :]
    want = s + slopes[None, :, None, None] * (n - m)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_alibi_abs_matches_numpy():
    """Non-causal ALiBi as MPT writes it: slope * -(|n - m|), the absolute
    value on the integer distance (math.absi), from a table."""
    H = 4
    s = np.random.default_rng(2).standard_normal((2, H, 5, 9))
    slopes = np.exp2(-8.0 * np.arange(1, H + 1) / H)
    p = Program(2)
    slope = p.op("attn.table", "f32", 2, shape=[H], values=list(slopes))
    a = p.op("math.absi", "i64", p.op("arith.index_cast", "i64",
                                      p.op("arith.subi", "index", 4, 3)))
    neg = p.op("arith.negf", "f32", p.op("arith.sitofp", "f32", a))
    res = p.op("arith.addf", "f32", 0, p.op("arith.mulf", "f32", slope, neg))
    got = apply_score_mod(p.parse(res), s, *indices(2, H, 5, 9), OPS)
    m, n = np.arange(5)[:, None], np.arange(9)[None, :]
    want = s - slopes[None, :, None, None] * np.abs(n - m)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    # Wrapping, as MLIR's: |INT32_MIN| is INT32_MIN.
    assert scalar(lambda p: ival(p, "math.absi", "i32", -2 ** 31)) == -2.0 ** 31
    assert scalar(lambda p: ival(p, "math.absi", "i64", -7)) == 7.0


def test_result_independent_of_the_score_is_broadcast():
    p = Program(0)
    s = np.zeros((3, 4))
    got = apply_score_mod(p.parse(p.const(2.5)), s, [], np.arange(3)[:, None],
                          np.arange(4)[None, :], OPS)
    assert got.shape == (3, 4) and (got == 2.5).all()
    # No ops at all: the identity.
    assert apply_score_mod(p.parse(0), s + 1, [], np.arange(3)[:, None],
                           np.arange(4)[None, :], OPS).tolist() == (s + 1).tolist()


def scalar(build):
    """The f32 a program built by `build(p)` (returning an f32 id) yields."""
    p = Program(0)
    res = build(p)
    out = apply_score_mod(p.parse(res), np.zeros((1, 1)), [], np.zeros((1, 1), np.int64),
                          np.zeros((1, 1), np.int64), OPS)
    return float(out[0, 0])


def ival(p, name, t, *xs):
    """An integer op on constants, as f32 (sitofp)."""
    ids = [p.const(x, t) if not isinstance(x, tuple) else x[0] for x in xs]
    return p.op("arith.sitofp", "f32", p.op(name, t, *ids))


def flag(p, i1):
    return p.op("arith.select", "f32", i1, p.const(1.0), p.const(0.0))


@pytest.mark.parametrize("build, want", [
    # divsi / remsi truncate toward zero (C), unlike Python's // and %.
    (lambda p: ival(p, "arith.divsi", "i64", -7, 2), -3),
    (lambda p: ival(p, "arith.remsi", "i64", -7, 2), -1),
    (lambda p: ival(p, "arith.divsi", "i32", 7, -2), -3),
    (lambda p: p.op("arith.sitofp", "f32", p.op("arith.index_cast", "i64", p.op(
        "arith.remsi", "index", p.const(7, "index"), p.const(-2, "index")))), 1),
    (lambda p: ival(p, "arith.divsi", "i64", -2 ** 63, -1), -2 ** 63),  # wraps
    # Position chunks (floor/ceil division, shifts, min/max): rounded down
    # (up) whatever the signs.
    (lambda p: ival(p, "arith.floordivsi", "i64", -7, 2), -4),
    (lambda p: ival(p, "arith.floordivsi", "i64", 7, 2), 3),
    (lambda p: ival(p, "arith.floordivsi", "i32", 7, -2), -4),
    (lambda p: ival(p, "arith.ceildivsi", "i64", -7, 2), -3),
    (lambda p: ival(p, "arith.ceildivsi", "i64", 7, 2), 4),
    (lambda p: ival(p, "arith.floordivsi", "i64", -2 ** 63, -1), -2 ** 63),  # wraps
    (lambda p: ival(p, "arith.shrsi", "i64", -9, 2), -3),
    (lambda p: ival(p, "arith.shli", "i32", 1, 31), -2 ** 31),  # wraps
    (lambda p: ival(p, "arith.maxsi", "i64", -3, 2), 2),
    (lambda p: ival(p, "arith.minsi", "i32", -3, 2), -3),
    (lambda p: ival(p, "arith.muli", "i64", -3, 5), -15),
    (lambda p: ival(p, "arith.xori", "i64", 6, 3), 5),
    # i32 wraps at 32 bits; constants may be written unsigned.
    (lambda p: ival(p, "arith.addi", "i32", 2 ** 31 - 1, 1), -2 ** 31),
    (lambda p: ival(p, "arith.addi", "i32", 2 ** 32 - 1, 0), -1),
    (lambda p: p.op("arith.sitofp", "f32",
                    p.op("arith.trunci", "i32", p.const(2 ** 32 + 5, "i64"))), 5),
    (lambda p: p.op("arith.uitofp", "f32", p.const(-1, "i32")), 2.0 ** 32 - 1),
    (lambda p: p.op("arith.uitofp", "f32", p.const(-1, "i64")), 2.0 ** 64),
    (lambda p: p.op("arith.sitofp", "f32", p.const(True, "i1")), -1),
    (lambda p: p.op("arith.uitofp", "f32", p.const(1, "i1")), 1),
    (lambda p: p.op("arith.sitofp", "f32", p.op("arith.extsi", "i64", p.const(-1, "i1"))), -1),
    (lambda p: p.op("arith.sitofp", "f32", p.op("arith.extui", "i64", p.const(-1, "i32"))),
     2.0 ** 32 - 1),
    (lambda p: p.op("arith.sitofp", "f32", p.op("arith.index_cast", "i64",
                    p.op("arith.index_castui", "index", p.const(-2, "i32")))), 2.0 ** 32 - 2),
    (lambda p: p.op("arith.sitofp", "f32", p.op("arith.index_cast", "i32",
                    p.const(2 ** 33 + 7, "index"))), 7),
    (lambda p: flag(p, p.op("arith.trunci", "i1", p.const(6, "i64"))), 0),
    (lambda p: flag(p, p.op("arith.addi", "i1", p.const(1, "i1"), p.const(1, "i1"))), 0),
    # Unsigned and signed comparisons.
    (lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(-1, "i64"), p.const(1, "i64"),
                            predicate="ult")), 0),
    (lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(-1, "i64"), p.const(1, "i64"),
                            predicate="slt")), 1),
    (lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(-1, "i32"), p.const(1, "i32"),
                            predicate="ugt")), 1),
    (lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(1, "i1"), p.const(0, "i1"),
                            predicate="slt")), 1),  # i1 true is -1 signed
    (lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(1, "i1"), p.const(0, "i1"),
                            predicate="ugt")), 1),
    # Floats: NaN in the predicates and min/max flavours.
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), nan(p), predicate="oeq")), 0),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="une")), 1),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="ugt")), 1),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="one")), 0),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", p.const(2.0), p.const(1.0), predicate="one")), 1),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="ord")), 0),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="uno")), 1),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", nan(p), p.const(1.0), predicate="true")), 1),
    (lambda p: flag(p, p.op("arith.cmpf", "i1", p.const(1.0), p.const(1.0),
                            predicate="false")), 0),
    (lambda p: p.op("arith.maxnumf", "f32", nan(p), p.const(2.0)), 2.0),
    (lambda p: p.op("arith.minimumf", "f32", nan(p), p.const(2.0)), math.nan),
    (lambda p: p.op("arith.maximumf", "f32", p.const("-inf"), p.const(-3.0)), -3.0),
    (lambda p: p.op("math.powf", "f32", p.const(2.0), p.const(10.0)), 1024.0),
    (lambda p: p.op("math.rsqrt", "f32", p.const(16.0)), 0.25),
    (lambda p: p.op("math.log2", "f32", p.const(8.0)), 3.0),
    (lambda p: p.op("math.absf", "f32", p.op("arith.negf", "f32", p.const(5.0))), 5.0),
    (lambda p: p.op("arith.truncf", "f32", p.op("arith.extf", "f32", p.const(1.5))), 1.5),
    (lambda p: p.op("arith.divf", "f32", p.const(1.0), p.const(0.0)), math.inf),
    # Tables: row-major, out-of-range indices clamped.
    (lambda p: p.op("attn.table", "f32", p.const(1, "index"), p.const(2, "i32"),
                    shape=[2, 3], values=[0, 1, 2, 3, 4, 5]), 5.0),
    (lambda p: p.op("attn.table", "f32", p.const(9, "index"), shape=[3],
                    values=[10, 20, "inf"]), math.inf),
    (lambda p: p.op("arith.sitofp", "f32", p.op("attn.table", "i64", p.const(-4, "i64"),
                                                shape=[2], values=[-7, 8])), -7),
])
def test_scalar_semantics(build, want):
    got = scalar(build)
    assert got == want or (math.isnan(want) and math.isnan(got))


def nan(p):
    return p.op("arith.divf", "f32", p.const(0.0), p.const(0.0))


# --- the reference with a score_mod ----------------------------------------------

def attention_np(inputs, scale, mod, causal):
    """softmax(mod(scale q k^T), causal) v for [B, H, M, D] inputs, float64."""
    q, k, v = (inputs[x].astype(np.float64) for x in "qkv")
    s = mod(q @ k.swapaxes(-1, -2) * scale)
    if causal:
        m, n = np.arange(s.shape[-2])[:, None], np.arange(s.shape[-1])[None, :]
        s = np.where(n > m, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("budget", [1 << 26, 1, 37])
def test_reference_applies_score_mod_before_causal(budget):
    B, H, M, N, D = 3, 4, 11, 13, 8
    slopes = np.exp2(-8.0 * np.arange(1, H + 1) / H)
    p = Program(2)
    _, x = alibi_table(slopes, p=p)
    c = p.const(5.0)  # a soft-cap of the ALiBi'd score
    res = p.op("arith.mulf", "f32", p.op("math.tanh", "f32",
                                         p.op("arith.divf", "f32", x, c)), c)
    man = make_problem(dtype="float32", batch=(B, H), M=M, N=N, D=D, causal=True,
                       scale=2.0, score_mod=p.json(res))
    inputs = make_inputs(man, OPS, seed=5)

    def mod(s):
        m, n = np.arange(M)[:, None], np.arange(N)[None, :]
        return 5 * np.tanh((s + slopes[:, None, None] * (n - m)) / 5)
    want = attention_np(inputs, 2.0, mod, causal=True)
    np.testing.assert_allclose(reference(man, inputs, OPS, budget=budget), want,
                               rtol=1e-12, atol=1e-12)
    rows = [0, 6, 10]
    np.testing.assert_allclose(reference(man, inputs, OPS, rows=rows, budget=budget),
                               want[..., rows, :], rtol=1e-12, atol=1e-12)


def test_score_mod_comes_before_the_mask():
    """A mask's -inf survives a soft-cap (the cap is applied first)."""
    p, res = softcap(2.0, r=1)
    man = make_problem(dtype="float32", batch=(2,), M=6, N=5, D=4, mask="float32",
                       scale=3.0, score_mod=p.json(res))
    inputs = make_inputs(man, OPS, seed=9, fully_masked_rows=1)
    q, k, v, mask = (inputs[x].astype(np.float64) for x in ("q", "k", "v", "mask"))
    s = 2 * np.tanh(3.0 * q @ k.swapaxes(-1, -2) / 2) + mask
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isinf(mx), 0, mx))
    den = e.sum(-1, keepdims=True)
    want = np.where(den == 0, 0, (e @ v) / np.where(den == 0, 1, den))
    np.testing.assert_allclose(reference(man, inputs, OPS), want, rtol=1e-12, atol=1e-12)


def test_torch_backend_agrees_with_numpy():
    torch = pytest.importorskip("torch")
    from attn_opt.reference import TorchOps
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t_ops = TorchOps(dev, dtype=torch.float64)
    H = 4
    p = Program(2)
    _, x = alibi_from_head(H, p=p)
    _, res = softcap(7.0, p=p)  # of the score; then add the ALiBi'd one
    res = p.op("arith.addf", "f32", res, x)
    for build in (lambda p: ival(p, "arith.divsi", "i64", -7, 2),
                  lambda p: flag(p, p.op("arith.cmpi", "i1", p.const(-1, "i64"),
                                         p.const(1, "i64"), predicate="ult")),
                  lambda p: p.op("arith.uitofp", "f32", p.const(-1, "i32"))):
        q = Program(2)
        sm = q.parse(build(q))
        a = apply_score_mod(sm, np.zeros((1, 1, 1, 1)), *indices(1, 1, 1, 1), OPS)
        zero = t_ops.index([0])
        b = apply_score_mod(sm, torch.zeros(1, 1, 1, 1, dtype=torch.float64, device=dev),
                            [zero.reshape(1, 1, 1, 1)] * 2, zero.reshape(1, 1),
                            zero.reshape(1, 1), t_ops)
        assert float(a[0, 0, 0, 0]) == float(b[0, 0, 0, 0])
    man = make_problem(dtype="float32", batch=(2, H), M=20, N=33, D=8, causal=True,
                       scale=3.0, score_mod=p.json(res))
    x_np = make_inputs(man, OPS, seed=4)
    x_t = {k: torch.as_tensor(v, device=dev) for k, v in x_np.items()}
    want = reference(man, x_np, OPS)
    got = reference(man, x_t, t_ops, budget=100).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got32 = reference(man, x_t, TorchOps(dev), rows=[0, 19]).cpu().numpy()
    np.testing.assert_allclose(got32, want[..., [0, 19], :], rtol=1e-4, atol=1e-5)


# --- validation -------------------------------------------------------------------

def good():
    p, res = softcap(50.0)
    return p.json(res)  # ops: const 5, divf 6, tanh 7, mulf 8


def _op(i, **kw):
    return lambda j: j["ops"][i].update(kw)


@pytest.mark.parametrize("edit, message", [
    (lambda j: j.clear() or j.update(x=1), r"score_mod.num_args must be 5"),
    (lambda j: j.update(num_args=4), r"score_mod.num_args must be 5 \(the score, 2 batch"),
    (lambda j: j.update(num_args=True), r"num_args must be 5"),
    (lambda j: j.update(ops={}), r"score_mod.ops must be a list of at most 4096"),
    (lambda j: j.update(ops=[{"op": "arith.constant", "type": "f32", "value": 1.0}] * 4097,
                        result=5), r"at most 4096 ops, got 4097 ops"),
    (lambda j: j["ops"].append(7), r"score_mod.ops\[4\] must be an object"),
    (_op(1, op="arith.shrui"), r"score_mod.ops\[1\].op: 'arith.shrui' is not an op"),
    (_op(1, op="func.call"), r"ops\[1\].op: 'func.call' is not an op"),
    (_op(1, op=None), r"ops\[1\].op: None is not an op"),
    (_op(0, type="f16"), r"ops\[0\].type must be one of \['f32', 'i64', 'i32', 'index', "
     r"'i1'\], got 'f16'"),
    (_op(0, type=["f32"]), r"ops\[0\].type must be one of"),
    (_op(1, operands=[0, 7]), r"ops\[1\].operands\[1\]: 7 is not an earlier value "
     r"\(ids 0..5 are defined before arith.divf\)"),
    (_op(1, operands=[0, 6]), r"ops\[1\].operands\[1\]: 6 is not an earlier value"),
    (_op(1, operands=[-1, 5]), r"ops\[1\].operands\[0\]: -1 is not an earlier value"),
    (_op(1, operands=[0.0, 5]), r"ops\[1\].operands must be a list of value ids"),
    (_op(1, operands="0, 5"), r"ops\[1\].operands must be a list of value ids"),
    (_op(0, operands=[0]), r"ops\[0\].operands: arith.constant takes 0 operand"),
    (_op(1, operands=[0]), r"ops\[1\].operands: arith.divf takes 2 operand\(s\), got 1"),
    (_op(1, operands=[1, 5]), r"ops\[1\].type: arith.divf does not take \(index, f32\) "
     r"-> f32"),
    (_op(1, type="i64"), r"arith.divf does not take \(f32, f32\) -> i64"),
    (_op(2, op="arith.sitofp"), r"ops\[2\].type: arith.sitofp does not take \(f32\) -> f32"),
    (_op(2, op="arith.cmpf", type="i1", operands=[6, 6], predicate="lt"),
     r"ops\[2\].predicate must be one of \['oeq'"),
    (_op(2, op="arith.cmpf", type="i1", operands=[6, 6]), r"ops\[2\].predicate must be"),
    (_op(2, op="arith.cmpi", type="i1", operands=[1, 2], predicate="olt"),
     r"ops\[2\].predicate must be one of \['eq'"),
    (_op(2, op="arith.cmpi", type="i1", operands=[6, 6], predicate="slt"),
     r"arith.cmpi does not take \(f32, f32\) -> i1"),
    (_op(0, value="nan"), r'ops\[0\].value must be an f32 number, "inf" or "-inf"'),
    (_op(0, value=1e39), r"ops\[0\].value must be an f32 number"),
    (_op(0, value=True), r"ops\[0\].value must be an f32 number"),
    (lambda j: j["ops"][0].pop("value"), r"ops\[0\] lacks 'value'"),
    (_op(0, type="i32", value=2 ** 40), r"ops\[0\].value must be an integer of type i32"),
    (_op(0, type="i1", value=2), r"ops\[0\].value must be an integer of type i1"),
    (_op(0, type="index", value=1.5), r"ops\[0\].value must be an integer of type index"),
    (_op(0, op="attn.table", operands=[2], shape=[4], values=[1, 2, 3]),
     r"ops\[0\].values must be a list of 4 numbers \(shape \[4\]\), got 3"),
    (_op(0, op="attn.table", operands=[2], shape=[256, 257], values=[]),
     r"ops\[0\].shape \[256, 257\] holds more than 65536 values"),
    (_op(0, op="attn.table", operands=[2], shape=[65537], values=[]),
     r"ops\[0\].shape must be a list of 1 to 18 positive sizes"),
    (_op(0, op="attn.table", operands=[], shape=[], values=[]), r"ops\[0\].shape must be"),
    (_op(0, op="attn.table", operands=[2], shape=[0], values=[]), r"ops\[0\].shape must be"),
    (_op(0, op="attn.table", operands=[2, 3], shape=[2], values=[1, 2]),
     r"ops\[0\].operands must hold one index per table dimension \(1\), got 2"),
    (_op(0, op="attn.table", operands=[0], shape=[2], values=[1, 2]),
     r"attn.table does not take \(f32\) -> f32"),
    (_op(0, op="attn.table", operands=[2], shape=[2], values=[1, "x"]),
     r"ops\[0\].values\[1\] must be an f32 number"),
    (lambda j: j.update(result=1), r"score_mod.result must be the id of an f32 value "
     r"\(0..8\), got 1 of type index"),
    (lambda j: j.update(result=9), r"result must be the id of an f32 value \(0..8\), got 9"),
    (lambda j: j.update(result=None), r"result must be the id of an f32 value"),
    (lambda j: j.pop("result"), r"result must be the id of an f32 value"),
])
def test_bad_score_mod(edit, message):
    j = good()
    edit(j)
    with pytest.raises(BundleError, match=r"attention\.score_mod"):
        parse_score_mod(j, 2)
    with pytest.raises(BundleError, match=message):
        parse_score_mod(j, 2)


def test_score_mod_must_be_an_object():
    for x in ([], "softcap", 3):
        with pytest.raises(BundleError, match="attention.score_mod must be an object"):
            parse_score_mod(x, 2)


def test_ops_before_the_limit_are_accepted():
    p = Program(0)
    for _ in range(4095):
        p.const(1.0)
    sm = p.parse(p.op("arith.addf", "f32", 0, 3))
    assert len(sm.ops) == 4096
    t = Program(0)
    t.op("attn.table", "f32", 1, 2, shape=[256, 256], values=[0.5] * 65536)
    assert len(t.parse(3).ops[0].values) == 65536


def test_fuzz_accepted_programs_evaluate():
    """Random edits of a program that uses every kind of op (names, types,
    operands, values, predicates swapped): each is refused with a
    BundleError, or evaluates to scores of the tile's shape."""
    p = Program(2)
    _, x = alibi_from_head(4, p=p)
    _, x = alibi_table([0.5, 0.25, 0.125, 0.0625], p=p, x=x)
    c = p.const(30.0)
    capped = p.op("arith.mulf", "f32", p.op("math.tanh", "f32", p.op("arith.divf", "f32", x, c)), c)
    far = p.op("arith.cmpi", "i1", p.op("arith.remsi", "index", 4, p.const(3, "index")),
               p.const(0, "index"), predicate="eq")
    sel = p.op("arith.select", "f32", far, capped, p.op("math.exp", "f32", 0))
    base = p.json(sel)
    rng = random.Random(20261201)
    names, types = sorted(bundle.SCORE_MOD_OPS), list(bundle.SCORE_MOD_TYPES)
    preds = list(bundle.CMPF_PREDICATES + bundle.CMPI_PREDICATES)
    s = np.random.default_rng(3).standard_normal((2, 4, 3, 5)) * 10
    outcome = {"accepted": 0, "refused": 0}
    for _ in range(3000):
        j = copy.deepcopy(base)
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(j["ops"]))
            o, what = j["ops"][i], rng.randrange(6)
            if what == 0:
                o["op"] = rng.choice(names)
            elif what == 1:
                o["type"] = rng.choice(types)
            elif what == 2:
                o["operands"] = [rng.randrange(5 + i) for _ in range(rng.randrange(4))]
            elif what == 3:
                o["value"] = rng.choice([0, 1, -1, 2 ** 40, -2 ** 63, 1.5, "inf", True])
            elif what == 4:
                o["predicate"] = rng.choice(preds)
            else:
                j["result"] = rng.randrange(5 + len(j["ops"]))
        try:
            sm = parse_score_mod(j, 2)
        except BundleError:
            outcome["refused"] += 1
            continue
        outcome["accepted"] += 1
        out = apply_score_mod(sm, s, *indices(2, 4, 3, 5), OPS)
        assert out.shape == s.shape and out.dtype == np.float64
    assert outcome["accepted"] >= 300 and outcome["refused"] >= 300, outcome


# --- the manifest ------------------------------------------------------------------

def manifest_with(score_mod):
    return make_problem(dtype="float16", batch=(2, 4), M=33, N=47, D=64, causal=True,
                        score_mod=score_mod)


def test_manifest_round_trip(tmp_path):
    p = Program(2)
    _, x = alibi_table([0.5, 0.25, 0.125, 0.0625], p=p)
    lo = p.const("-inf")
    big = p.op("arith.cmpf", "i1", x, p.const(-1.0e4), predicate="olt")
    res = p.op("arith.select", "f32", big, lo, x)
    obj = make_problem(batch=(2, 4), M=33, N=47, D=64)  # for its args and launch
    raw = {"format": bundle.FORMAT, "kernel": "k", "chip": "sm_90a", "ptx": "kernel.ptx",
           "args": [{"name": a.name, "dtype": a.dtype, "shape": list(a.shape)}
                    for a in obj.args],
           "grid": list(obj.grid), "block": list(obj.block), "shared_bytes": 0,
           "attention": {"scale": 0.125, "causal": True, "mask_value": "-inf",
                         "batch_dims": 2, "tile_q": 128, "score_mod": p.json(res)}}
    ptx = b"// ptx"
    bundle.seal(raw, ptx)
    (tmp_path / "manifest.json").write_text(json.dumps(raw))
    (tmp_path / "kernel.ptx").write_bytes(ptx)
    man = bundle.read_manifest(tmp_path)
    sm = man.attention.score_mod
    assert isinstance(sm, ScoreMod) and sm.num_args == 5 and sm.result == res
    assert sm.ops[0] == ScoreModOp("attn.table", "f32", (2,), shape=(4,),
                                   values=(0.5, 0.25, 0.125, 0.0625))
    assert sm.ops[1] == ScoreModOp("arith.subi", "index", (4, 3))
    assert sm.ops[lo - 5] == ScoreModOp("arith.constant", "f32", value=-math.inf)
    assert sm.ops[big - 5].predicate == "olt"
    assert sm.types[:5] == ("f32", "index", "index", "index", "index")
    assert sm.types[res] == "f32" and sm.types[big] == "i1"
    # Absent or null: no region.
    assert manifest_with(None).attention.score_mod is None
    raw["attention"]["score_mod"] = None
    assert bundle.parse_manifest(bundle.seal(raw, ptx)).attention.score_mod is None
    # A bad one is refused through the whole loader, the field named.
    raw["attention"]["score_mod"] = p.json(res)
    raw["attention"]["score_mod"]["ops"][1]["op"] = "arith.shrui"
    with pytest.raises(BundleError, match=r"manifest \(kernel 'k'\): attention.score_mod"
                       r".ops\[1\].op: 'arith.shrui'"):
        bundle.parse_manifest(bundle.seal(raw, ptx))
    # num_args follows batch_dims.
    p3, res3 = softcap(30.0, r=3)
    with pytest.raises(BundleError, match="num_args must be 5"):
        manifest_with(p3.json(res3))


# --- what attn-bundle writes --------------------------------------------------------

ALIBI_SOFTCAP = """func.func @attention(%q: tensor<1x4x33x64xf16>, %k: tensor<1x4x47x64xf16>,
    %v: tensor<1x4x47x64xf16>, %o: tensor<1x4x33x64xf16>) -> tensor<1x4x33x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x33x64xf16>, tensor<1x4x47x64xf16>,
      tensor<1x4x47x64xf16>) scale(%s) outs(%o : tensor<1x4x33x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%score: f32, %b0: index, %b1: index, %m: index, %n: index):
        %h64 = arith.index_cast %b1 : index to i64
        %one = arith.constant 1 : i64
        %h1 = arith.addi %h64, %one : i64
        %hf = arith.sitofp %h1 : i64 to f32
        %c = arith.constant -2.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %y = arith.addf %score, %bias : f32
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %y, %cap : f32
        %t = math.tanh %x : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<1x4x33x64xf16>
  return %r : tensor<1x4x33x64xf16>
}
"""


@needs_attn_bundle
def test_real_attn_bundle_writes_the_region(tmp_path):
    """attn-bundle's attention.score_mod computes what the region says."""
    man = bundle.read_manifest(bundle.compile(ALIBI_SOFTCAP, tmp_path / "b"))
    sm = man.attention.score_mod
    assert sm is not None
    s = np.random.default_rng(2).standard_normal((1, 4, 33, 47)) * 20
    got = apply_score_mod(sm, s, *indices(1, 4, 33, 47), OPS)
    m, n = np.arange(33)[:, None], np.arange(47)[None, :]
    slopes = np.exp2(-2.0 * np.arange(1, 5))[None, :, None, None]
    np.testing.assert_allclose(got, 30 * np.tanh((s + slopes * (n - m)) / 30),
                               rtol=1e-12, atol=1e-12)


# --- runtime score_mod tensors (attn.arg) ------------------------------------

def _arg_manifest(tmp_path):
    """A real bundle whose score_mod reads two runtime tensors (mod0 per
    head, mod1 per key)."""
    src = (Path(__file__).resolve().parents[2] / "test" / "Conversion" /
           "convert-attn-to-gpu-score-mod.mlir").read_text()
    chunk = [c for c in src.split("// -----") if "@runtime_key_weight" in c][0]
    out = bundle.compile(chunk, tmp_path / "b")
    return json.loads((out / "manifest.json").read_text()), out


@needs_attn_bundle
def test_attn_arg_reads_the_runtime_tensor(tmp_path):
    obj, out = _arg_manifest(tmp_path)
    man = bundle.read_manifest(out)
    assert man.arg("mod0").dims == ("n",) and man.arg("mod0").dtype == "float16"
    assert "mod0" in man.inputs
    ops = NumpyOps()
    inputs = make_inputs(man, ops, 3)
    got = reference(man, inputs, ops)
    q, k, v = (inputs[n].astype(np.float64) for n in ("q", "k", "v"))
    s = q @ k.swapaxes(-1, -2) * man.attention.scale + inputs["mod0"].astype(np.float64)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    assert np.abs(got - want).max() < 1e-9


@needs_attn_bundle
@pytest.mark.parametrize("edit, message", [
    (lambda o: o["attention"]["score_mod"]["ops"][0].update(name="mod7"),
     "argument 'mod0' is not read by attention.score_mod"),
    (lambda o: o["attention"]["score_mod"]["ops"][0].update(name="../x"),
     "must be 'mod<digits>'"),
    (lambda o: o["attention"]["score_mod"]["ops"][0].update(operands=[3, 4]),
     "with 2 indices, it has rank 1"),
    (lambda o: o["attention"]["score_mod"]["ops"][0].update(type="i64"),
     r"arith.extf does not take \(i64\) -> f32"),
    (lambda o: o["attention"].update(score_mod=None),
     "'mod0' is not read by attention.score_mod"),
])
def test_attn_arg_hostile(tmp_path, edit, message):
    obj, _ = _arg_manifest(tmp_path)
    edit(obj)
    with pytest.raises(BundleError, match=message):
        bundle.parse_manifest(obj)
