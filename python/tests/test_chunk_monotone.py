"""The GPU pass's order analysis of computed segment ids, against brute force.

convert-attn-to-gpu finds a block's keys by binary search where the key id
the score_mod region computes from the key position never decreases along
the keys (position chunks, Llama 4's chunked attention), and, for a static
decode shape, evaluates the keys the chunk leaves (the manifest's
key_span). A wrong "never decreases" skips keys the region keeps: silently
wrong outputs. Here random id expressions (additions, products, the three
divisions, remainders, shifts, min/max, narrowing casts, selects, JAX's
floor_divide correction; constants near the wrap too) are compiled as a
chunk comparison of a decode program; wherever the pass says "binary
search", the expression evaluated here with MLIR's semantics must never
decrease over every key position, and key_span must be the keys from the
first match's 128-key tile to the last.
"""
import os
import random
import re
import subprocess

import pytest

N, OFF = 3000, 2999  # keys; the query's position (M = 1)
I64 = 1 << 64


def wrap(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


class Expr:
    """An integer expression of the position as MLIR lines and as a Python
    evaluator; w: the current width (index is 64)."""

    def __init__(self, rng):
        self.rng, self.lines, self.n = rng, [], 0
        self.steps = []  # (kind, args) for the evaluator
        self.ty, self.w = "index", 64

    def fresh(self):
        self.n += 1
        return f"%t{self.n}"

    def const(self, v):
        name = self.fresh()
        self.lines.append(f"{name} = arith.constant {v} : {self.ty}")
        return name

    def build(self, pos):
        rng, cur = self.rng, pos
        for _ in range(rng.randint(1, 4)):
            k = rng.choice(["add", "sub", "mul", "div", "div", "div", "rem", "shr", "shl",
                            "max", "min", "cast", "select", "jax"])
            if k == "cast":
                if self.ty == "index":
                    t = rng.choice(["i32", "i64"])
                    name = self.fresh()
                    self.lines.append(f"{name} = arith.index_cast {cur} : index to {t}")
                    self.steps.append(("cast", 32 if t == "i32" else 64, False))
                    self.ty, self.w, cur = t, 32 if t == "i32" else 64, name
                elif self.ty == "i32":
                    op = rng.choice(["extsi", "extui"])
                    name = self.fresh()
                    self.lines.append(f"{name} = arith.{op} {cur} : i32 to i64")
                    self.steps.append(("cast", 64, op == "extui"))
                    self.ty, self.w, cur = "i64", 64, name
                continue
            big = (1 << (self.w - 1)) - 1
            if k in ("add", "sub"):
                c = rng.choice([rng.randint(-5000, 5000), big - rng.randint(0, 4000),
                                -big + rng.randint(0, 4000)])
                op = "addi" if k == "add" else "subi"
            elif k == "mul":
                c = rng.choice([rng.randint(-3, 7), 1 << rng.randint(20, self.w - 2)])
                op = "muli"
            elif k == "div":
                c = rng.choice([rng.randint(1, 3000), rng.randint(1, 16), -rng.randint(1, 300)])
                op = rng.choice(["floordivsi", "divsi", "ceildivsi"])
            elif k == "rem":
                c = rng.choice([rng.randint(1, 3000), -rng.randint(1, 50)])
                op = "remsi"
            elif k in ("shr", "shl"):
                c = rng.randint(0, self.w - 1)
                op = "shrsi" if k == "shr" else "shli"
            elif k in ("max", "min"):
                c = rng.randint(-100, 3500)
                op = "maxsi" if k == "max" else "minsi"
            elif k == "select":
                pred = rng.choice(["slt", "sle", "sgt", "sge", "eq", "ne", "ult", "uge"])
                c, av = rng.randint(-10, 3000), rng.randint(-50, 50)
                cc, a = self.const(c), self.const(av)
                cond, alt = self.fresh(), self.fresh()
                self.lines.append(f"{cond} = arith.cmpi {pred}, {cur}, {cc} : {self.ty}")
                self.lines.append(f"{alt} = arith.addi {cur}, {a} : {self.ty}")
                name = self.fresh()
                swap = rng.random() < 0.5
                x, y = (alt, cur) if swap else (cur, alt)
                self.lines.append(f"{name} = arith.select {cond}, {x}, {y} : {self.ty}")
                self.steps.append(("select", pred, c, av, swap))
                cur = name
                continue
            else:  # jax: lax.div then one less where the remainder is nonzero and signs differ
                c = rng.choice([rng.randint(1, 3000), -rng.randint(1, 100)])
                cc, z, one = self.const(c), self.const(0), self.const(1)
                d, r, nz, ng, a, d1, name = (self.fresh() for _ in range(7))
                self.lines += [f"{d} = arith.divsi {cur}, {cc} : {self.ty}",
                               f"{r} = arith.remsi {cur}, {cc} : {self.ty}",
                               f"{nz} = arith.cmpi ne, {r}, {z} : {self.ty}",
                               f"{ng} = arith.cmpi slt, {cur}, {z} : {self.ty}",
                               f"{a} = arith.andi {nz}, {ng} : i1",
                               f"{d1} = arith.subi {d}, {one} : {self.ty}",
                               f"{name} = arith.select {a}, {d1}, {d} : {self.ty}"]
                self.steps.append(("jax", c))
                cur = name
                continue
            cc = self.const(c)
            name = self.fresh()
            self.lines.append(f"{name} = arith.{op} {cur}, {cc} : {self.ty}")
            self.steps.append((op, c))
            cur = name
        return cur

    def eval(self, p):
        """MLIR's value at position p; None where an op would be poison or
        trap (the program is then not well defined there)."""
        v, w = p, 64
        for s in self.steps:
            k = s[0]
            if k == "cast":
                nw, zext = s[1], s[2]
                if zext:
                    v &= (1 << w) - 1
                v, w = wrap(v, nw), nw
            elif k in ("addi", "subi", "muli"):
                c = s[1]
                v = wrap(v + c if k == "addi" else v - c if k == "subi" else v * c, w)
            elif k in ("floordivsi", "divsi", "ceildivsi", "remsi"):
                c = s[1]
                if v == -(1 << (w - 1)) and c == -1:
                    return None
                q = abs(v) // abs(c) * (1 if (v < 0) == (c < 0) else -1)
                r = v - q * c
                if k == "remsi":
                    v = r
                elif k == "floordivsi":
                    v = q - (1 if r != 0 and (r < 0) != (c < 0) else 0)
                elif k == "ceildivsi":
                    v = q + (1 if r != 0 and (r < 0) == (c < 0) else 0)
                else:
                    v = q
            elif k == "shrsi":
                v = v >> s[1]
            elif k == "shli":
                v = wrap(v << s[1], w)
            elif k == "maxsi":
                v = max(v, s[1])
            elif k == "minsi":
                v = min(v, s[1])
            elif k == "select":
                _, pred, c, a, swap = s
                uv, uc = v & ((1 << w) - 1), c & ((1 << w) - 1)
                t = {"slt": v < c, "sle": v <= c, "sgt": v > c, "sge": v >= c, "eq": v == c,
                     "ne": v != c, "ult": uv < uc, "uge": uv >= uc}[pred]
                alt = wrap(v + a, w)
                v = (alt if t else v) if swap else (v if t else alt)
            elif k == "jax":
                c = s[1]
                if v == -(1 << (w - 1)) and c == -1:
                    return None
                q = abs(v) // abs(c) * (1 if (v < 0) == (c < 0) else -1)
                r = v - q * c
                v = wrap(q - 1, w) if (r != 0 and v < 0) else q
        # The kernels compare ids saturated to 32 bits.
        return max(-(1 << 31), min((1 << 31) - 1, v))


def program(e_key, e_row):
    kl, kr = e_key.lines, e_row.lines
    ty = e_key.ty
    body = "\n        ".join(
        [f"%off = arith.constant {OFF} : index", "%mp = arith.addi %m, %off : index"] +
        [x.replace("%t", "%r") for x in kr] + kl +
        [f"%eq = arith.cmpi eq, {e_row.res.replace('%t', '%r')}, {e_key.res} : {ty}",
         "%f = arith.constant 0xFF800000 : f32",
         "%y = arith.select %eq, %x, %f : f32", "attn.yield %y : f32"])
    tq, tk = "tensor<?x2x2x1x64xf16>", f"tensor<?x2x{N}x64xf16>"
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    maps = ", ".join(mp + x + ">" for x in ("(b, h, g, m, d)", "(b, h, n, d)", "(b, h, n, e)",
                                            "(b, h, g, m, e)"))
    return f"""func.func @f(%q: {tq}, %k: {tk}, %v: {tk}, %o: {tq}) -> {tq} {{
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : {tq}, {tk}, {tk}) scale(%s) outs(%o : {tq})
      indexing_maps = [{maps}] score_mod {{
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        {body}
      }} -> {tq}
  return %r : {tq}
}}
"""


def make_case(seed):
    rng = random.Random(seed)
    # The same steps on both sides: the row id of position OFF, the key id of n.
    key = Expr(rng)
    key.res = key.build("%n")
    # The row side: every line of the key side with %n replaced by %mp.
    row = Expr(rng)
    row.lines = [re.sub(r"%n\b", "%mp", ln) for ln in key.lines]
    row.res, row.ty = key.res, key.ty
    return key, row


@pytest.mark.skipif(not os.environ.get("ATTN_OPT"), reason="attn-opt not built")
@pytest.mark.parametrize("seed", range(48))
def test_binary_search_only_where_sorted(seed, tmp_path):
    key, row = make_case(seed)
    src = tmp_path / "p.mlir"
    src.write_text(program(key, row))
    res = subprocess.run([os.environ["ATTN_OPT"], str(src), "--convert-attn-to-gpu=chip=sm_90a"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    head = res.stdout[:res.stdout.index("func.func")]
    ids = [key.eval(p) for p in range(N)]
    if any(i is None for i in ids) or key.eval(OFF) is None:
        return  # poison or a trap at some position: no claim to check
    searched = "found by binary search" in head
    if searched:
        assert all(a <= b for a, b in zip(ids, ids[1:])), \
            f"seed {seed}: binary search over ids that decrease:\n" + "\n".join(key.lines)
        qid = key.eval(OFF)
        first = next((n for n in range(N) if ids[n] >= qid), N)
        end = next((n for n in range(first, N) if ids[n] > qid), N)
        span = max(1, min(N, end - first // 128 * 128))
        got = re.search(r"key_span = (\d+)", head)
        assert got and int(got.group(1)) == span, (seed, got and got.group(0), span)
    else:
        assert "key_span = " not in head


def test_the_generator_covers_both_outcomes(tmp_path):
    """Some generated ids are sorted and some are not (the test above would
    otherwise check nothing)."""
    if not os.environ.get("ATTN_OPT"):
        pytest.skip("attn-opt not built")
    sorted_count = 0
    for seed in range(48):
        key, _ = make_case(seed)
        ids = [key.eval(p) for p in range(N)]
        if None not in ids and all(a <= b for a, b in zip(ids, ids[1:])):
            sorted_count += 1
    assert 5 <= sorted_count <= 43, sorted_count
