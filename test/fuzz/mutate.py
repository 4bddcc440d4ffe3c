#!/usr/bin/env python3
"""Mutation fuzzer for attn-opt over the lit corpus.

Takes the `// -----` chunks with a func.func from test/Transforms/*.mlir and
test/corpus/*.mlir, applies 1-3 random textual/structural mutations (swap two
results of an affine_map, change a softmax dimension / reduce or broadcast
dimensions / linalg.index, flip an iterator type, replace an op (math.exp ->
arith.negf, maximumf -> minimumf, divf <-> mulf, ...), swap operands, change a
constant, switch f32 <-> f16 in one place, delete or bypass an op) and runs
`attn-opt --attn-fuse --attn-explain` on the mutant.

Rules:
  * attn-opt never crashes: a signal, an exit code other than 0/1, or
    'PLEASE submit a bug report' / 'Assertion' / 'LLVM ERROR' / 'Stack dump'
    on stderr is a failure (so is a hang).
  * exit 1 is fine when stock mlir-opt also rejects the mutant (parse/verify
    error); if mlir-opt accepts it but attn-opt --attn-fuse fails, the pass
    broke valid IR: a failure.
  * if something fused, every fused function is executed with exec_check
    semantics (attn-opt CPU pipeline vs the unfused program through stock
    mlir-opt) and must match; NaN in the reference means the mutant itself is
    ill-defined (skipped). Functions with several results are not executed.

    mutate.py --seed 1 --count 200 [--keep DIR] [--jobs 2]

Tool options as in gen_attention.py / exec_check.py. Exit status non-zero on
a crash, a broken-IR error or a mismatch; the offending mutants are saved
(--keep DIR, or a temp dir that is then kept) and their paths printed.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_attention as ga  # noqa: E402
from gen_attention import ec  # noqa: E402

SRC_ROOT = ga.SRC_ROOT
DEFAULT_CORPUS = [os.path.join(SRC_ROOT, "test", "Transforms", "*.mlir"),
                  os.path.join(SRC_ROOT, "test", "corpus", "*.mlir")]

# ----------------------------------------------------------------------------
# Corpus
# ----------------------------------------------------------------------------


def load_corpus(patterns):
    seeds = []
    for pat in patterns:
        for path in sorted(glob.glob(pat)):
            text = open(path).read()
            for i, chunk in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
                if "func.func" not in chunk:
                    continue
                lines = [l for l in chunk.splitlines()
                         if not re.match(r"\s*//\s*(RUN|CHECK|EXPLAIN|[A-Z]+(-[A-Z]+)*:)", l)
                         or re.match(r"\s*//\s*EXEC:", l)]
                seeds.append((f"{os.path.relpath(path, SRC_ROOT)}#{i}", "\n".join(lines) + "\n"))
    return seeds


# ----------------------------------------------------------------------------
# Mutations. Each takes (text, rng) and returns the new text or None.
# ----------------------------------------------------------------------------

def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _replace_span(text, m, new, group=0):
    return text[:m.start(group)] + new + text[m.end(group):]


def mut_swap_map_dims(text, rng):
    ms = list(re.finditer(r"affine_map<\(([^)]*)\)\s*->\s*\(([^)]*)\)>", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    res = [r.strip() for r in m.group(2).split(",") if r.strip()]
    if len(res) < 2:
        return None
    i, j = rng.choice(len(res), 2, replace=False)
    res[i], res[j] = res[j], res[i]
    return _replace_span(text, m, ", ".join(res), 2), "swap two results of an affine_map"


def mut_map_result_to_other_dim(text, rng):
    ms = list(re.finditer(r"affine_map<\(([^)]*)\)\s*->\s*\(([^)]*)\)>", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    res = [r.strip() for r in m.group(2).split(",") if r.strip()]
    if not dims or not res:
        return None
    i = int(rng.integers(len(res)))
    res[i] = _pick(rng, dims + ["0"])
    return _replace_span(text, m, ", ".join(res), 2), "change one result of an affine_map"


def mut_softmax_dim(text, rng):
    ms = list(re.finditer(r"linalg\.softmax\s+dimension\((\d+)\)", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = str(int(rng.integers(0, 5)))
    if new == m.group(1):
        new = str((int(new) + 1) % 5)
    return _replace_span(text, m, new, 1), f"softmax dimension {m.group(1)} -> {new}"


def mut_dimensions_attr(text, rng):
    ms = list(re.finditer(r"(dimensions|permutation)\s*=\s*\[([\d,\s]*)\]", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    vals = [v.strip() for v in m.group(2).split(",") if v.strip()]
    if vals and rng.random() < 0.5 and len(vals) > 1:
        i, j = rng.choice(len(vals), 2, replace=False)
        vals[i], vals[j] = vals[j], vals[i]
    elif vals:
        vals[int(rng.integers(len(vals)))] = str(int(rng.integers(0, 5)))
    return _replace_span(text, m, ", ".join(vals), 2), f"change {m.group(1)}"


def mut_linalg_index(text, rng):
    ms = list(re.finditer(r"linalg\.index\s+(\d+)", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = str(int(rng.integers(0, 5)))
    return _replace_span(text, m, new, 1), f"linalg.index {m.group(1)} -> {new}"


def mut_iterator(text, rng):
    ms = list(re.finditer(r'"(parallel|reduction)"', text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = "reduction" if m.group(1) == "parallel" else "parallel"
    return _replace_span(text, m, new, 1), f"iterator {m.group(1)} -> {new}"


OP_SWAPS = {
    "math.exp": ["arith.negf", "math.exp2", "math.tanh", "math.log"],
    "arith.maximumf": ["arith.minimumf", "arith.addf", "arith.maxnumf"],
    "arith.maxnumf": ["arith.minnumf", "arith.maximumf", "arith.mulf"],
    "arith.divf": ["arith.mulf", "arith.subf", "arith.remf"],
    "arith.mulf": ["arith.divf", "arith.addf", "arith.subf"],
    "arith.addf": ["arith.subf", "arith.mulf", "arith.maximumf"],
    "arith.subf": ["arith.addf", "arith.divf"],
    "arith.andi": ["arith.ori", "arith.xori"],
    "arith.ori": ["arith.andi", "arith.xori"],
    "arith.addi": ["arith.subi", "arith.muli"],
    "arith.subi": ["arith.addi"],
    "arith.extf": ["arith.truncf"],
    "linalg.mul": ["linalg.div", "linalg.add", "linalg.sub", "linalg.max"],
    "linalg.div": ["linalg.mul", "linalg.sub"],
    "linalg.add": ["linalg.sub", "linalg.mul", "linalg.max"],
    "linalg.exp": ["linalg.log", "linalg.negf", "linalg.abs"],
    "linalg.matmul": ["linalg.matmul"],
    "linalg.softmax": ["linalg.softmax"],
}
CMP_PREDS = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF_PREDS = ["oeq", "one", "olt", "ole", "ogt", "oge", "ueq", "une"]


def mut_replace_op(text, rng):
    ms = [m for m in re.finditer(r"\b(math\.exp|arith\.\w+|linalg\.(mul|div|add|exp))\b", text)
          if m.group(1) in OP_SWAPS]
    if not ms:
        return None
    m = _pick(rng, ms)
    new = _pick(rng, OP_SWAPS[m.group(1)])
    return _replace_span(text, m, new, 1), f"{m.group(1)} -> {new}"


def mut_cmp_pred(text, rng):
    ms = list(re.finditer(r"arith\.cmp([if])\s+(\w+)", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = _pick(rng, CMP_PREDS if m.group(1) == "i" else CMPF_PREDS)
    return _replace_span(text, m, new, 2), f"cmp{m.group(1)} {m.group(2)} -> {new}"


def mut_swap_operands(text, rng):
    ms = list(re.finditer(r"(arith\.\w+(?:\s+\w+,)?|arith\.select\s+%[\w.]+,)\s+(%[\w.#]+),\s*(%[\w.#]+)",
                          text))
    ms += list(re.finditer(r"(ins)\((%[\w.#]+),\s*(%[\w.#]+)", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    a, b = m.group(2), m.group(3)
    # Operand types in `ins(a, b : T1, T2)` swap along when they differ.
    new = text[:m.start(2)] + b + ", " + a + text[m.end(3):]
    if m.group(1) == "ins":
        tm = re.compile(r"(:\s*)(tensor<[^>]*>),\s*(tensor<[^>]*>)").search(new, m.end(3))
        if tm and tm.start() - m.end(3) < 20:
            new = new[:tm.start(2)] + tm.group(3) + ", " + tm.group(2) + new[tm.end(3):]
    return new, f"swap operands {a}, {b}"


FLOAT_RE = re.compile(r"(arith\.constant\s+(?:dense<)?)(-?(?:0x[0-9A-Fa-f]+|\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?))")
FLOAT_VALUES = ["0.0", "1.0", "-1.0", "0.5", "2.0", "-0.5", "0xFF800000", "0x7F800000",
                "-3.40282347E+38", "-6.550400e+04", "1.000000e+04", "-1.000000e+30",
                "0.125", "3.0", "7", "0", "1", "-1", "128", "1.0e-30"]


def mut_constant(text, rng):
    ms = list(FLOAT_RE.finditer(text))
    if not ms:
        return None
    m = _pick(rng, ms)
    old = m.group(2)
    is_int = re.fullmatch(r"-?\d+", old) is not None
    # Keep the literal kind so that it still parses most of the time.
    if is_int:
        new = str(int(old) + int(_pick(rng, [-2, -1, 1, 2, 7, -128])))
        return _replace_span(text, m, new, 2), f"int constant {old} -> {new}"
    else:
        new = _pick(rng, [v for v in FLOAT_VALUES if not re.fullmatch(r"-?\d+", v)])
        if old.startswith("0x") and len(old) == 6 and new.startswith("0x"):
            new = _pick(rng, ["0xFC00", "0x7C00", "0x0000", "0x3C00"])
    return _replace_span(text, m, new, 2), f"constant {old} -> {new}"


def mut_bool_const(text, rng):
    ms = list(re.finditer(r"\b(true|false)\b", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = "false" if m.group(1) == "true" else "true"
    return _replace_span(text, m, new, 1), f"{m.group(1)} -> {new}"


def mut_dtype(text, rng):
    ms = list(re.finditer(r"(?<=[x\W])(f32|f16)\b", text))
    if not ms:
        return None
    m = _pick(rng, ms)
    new = "f16" if m.group(1) == "f32" else "f32"
    return _replace_span(text, m, new, 1), f"one {m.group(1)} -> {new}"


def mut_dtype_value(text, rng):
    """f32 <-> f16 for every occurrence in one line (one op or one argument)."""
    lines = text.split("\n")
    idx = [i for i, l in enumerate(lines) if re.search(r"(?<=[x\W])(f32|f16)\b", l)]
    if not idx:
        return None
    i = _pick(rng, idx)
    frm = "f32" if "f32" in lines[i] else "f16"
    to = "f16" if frm == "f32" else "f32"
    lines[i] = re.sub(rf"(?<=[x\W]){frm}\b", to, lines[i])
    return "\n".join(lines), f"{frm} -> {to} on line {i + 1}"


OP_LINE_RE = re.compile(r"^\s*(%[\w.#:]+(?:\s*,\s*%[\w.#]+)*)\s*=\s*([\w.]+)")


def _op_spans(text):
    """(start, end, result, opname) of top-level-ish ops: single line, or a
    region op ending at the matching `}` line."""
    lines = text.split("\n")
    spans = []
    offs = np.cumsum([0] + [len(l) + 1 for l in lines])
    for i, l in enumerate(lines):
        m = OP_LINE_RE.match(l)
        if not m:
            continue
        depth = l.count("{") - l.count("}")
        j = i
        while depth > 0 and j + 1 < len(lines):
            j += 1
            depth += lines[j].count("{") - lines[j].count("}")
        spans.append((int(offs[i]), int(offs[j + 1]), m.group(1).split(":")[0], m.group(2), i, j))
    return spans


def mut_delete_op(text, rng):
    spans = [s for s in _op_spans(text) if s[3] not in ("func.func",)]
    if not spans:
        return None
    s = _pick(rng, spans)
    return text[:s[0]] + text[s[1]:], f"delete {s[3]} ({s[2]})"


def mut_bypass_op(text, rng):
    """Delete an op and use one of its operands in its place."""
    spans = [s for s in _op_spans(text) if s[3].startswith(("linalg.", "arith.", "math.", "tensor."))]
    if not spans:
        return None
    s = _pick(rng, spans)
    body = text[s[0]:s[1]]
    head = body.split("\n")[0]
    operands = re.findall(r"(%[\w.#]+)", head.split("=", 1)[1])
    if s[2].startswith("%") and ":" not in s[2] and operands:
        res = s[2].strip()
        repl = _pick(rng, operands)
        if repl == res:
            return None
        rest = re.sub(re.escape(res) + r"(?![\w.#])", repl, text[s[1]:])
        return text[:s[0]] + rest, f"bypass {s[3]} ({res} -> {repl})"
    return None


def mut_duplicate_use(text, rng):
    """Return a different value of the same type (e.g. the probabilities)."""
    m = re.search(r"^\s*(?:func\.)?return\s+(%[\w.#]+)\s*:\s*(tensor<[^>]*>)", text, re.M)
    if not m:
        return None
    cands = [v for v in re.findall(r"(%[\w.#]+)\s*=\s*[^\n]*->\s*" + re.escape(m.group(2)), text)
             if v != m.group(1)]
    if not cands:
        return None
    new = _pick(rng, cands)
    return _replace_span(text, m, new, 1), f"return {new} instead of {m.group(1)}"


MUTATIONS = [
    (mut_swap_map_dims, 3), (mut_map_result_to_other_dim, 2), (mut_softmax_dim, 2),
    (mut_dimensions_attr, 1), (mut_linalg_index, 1), (mut_iterator, 2),
    (mut_replace_op, 4), (mut_cmp_pred, 1), (mut_swap_operands, 2), (mut_constant, 3),
    (mut_bool_const, 1), (mut_dtype, 1), (mut_dtype_value, 1), (mut_delete_op, 1),
    (mut_bypass_op, 3), (mut_duplicate_use, 1),
]


def mutate(text, rng, n):
    applied = []
    fns = [f for f, _ in MUTATIONS]
    w = np.array([w for _, w in MUTATIONS], float)
    tries = 0
    while len(applied) < n and tries < 20:
        tries += 1
        f = fns[int(rng.choice(len(fns), p=w / w.sum()))]
        r = f(text, rng)
        if r is None:
            continue
        text, what = r
        applied.append(what)
    return text, applied


# ----------------------------------------------------------------------------
# Checking a mutant
# ----------------------------------------------------------------------------

def exec_line(orig_chunk, fn):
    """EXEC options for a mutant: the original chunk's argument kinds, dims,
    amp, pipeline and reference kept; fusion not required."""
    opts = ec.parse_directive(orig_chunk)
    toks = [f"@{fn}"]
    if opts:
        if opts["dims"]:
            toks.append("dims=" + ",".join(map(str, opts["dims"])))
        toks.append(f"amp={opts['amp']:g}")
        for i, k in sorted(opts["args"].items()):
            toks.append(f"arg{i}={k}")
        if opts["pipeline"]:
            toks.append("pipeline=" + opts["pipeline"].replace(" ", ","))
        if opts["ref"]:
            toks.append(f"ref={opts['ref']}")
        if opts["tol"]:
            toks.append(f"tol={opts['tol']:g}")
    if (not opts or not opts["ref"]) and re.search(r"\btosa\.", orig_chunk):
        # A TOSA chunk without an EXEC line of its own: the stock reference
        # must lower TOSA first.
        toks.append("ref=tosa")
    return "// EXEC: " + " ".join(toks)


def strip_exec(chunk):
    return "\n".join(l for l in chunk.split("\n") if not re.match(r"\s*//\s*EXEC:", l))


def fused_functions(ir):
    names = []
    for m in re.finditer(r"func\.func\s+(?:\w+\s+)?@([\w$.]+)\s*\(", ir):
        start = m.end()
        nxt = re.search(r"func\.func\s", ir[start:])
        body = ir[start:start + nxt.start()] if nxt else ir[start:]
        if "attn.attention" in body:
            names.append(m.group(1))
    return names


def single_result(chunk, fn):
    m = re.search(r"func\.func\s+(?:\w+\s+)?@" + re.escape(fn) + r"\s*\((.*?)\)\s*->\s*(\(?)([^{]*)\{",
                  chunk, re.S)
    if not m:
        return False
    res = m.group(3).strip().rstrip(")")
    return res.count("tensor<") == 1 and "," not in re.sub(r"<[^>]*>", "", res)


STRUCTURAL = ("affine_map", "dimension", "iterator", "linalg.index", "swap operands",
              "delete", "bypass", "permutation", "return", "int constant")
F16_HEX = {"0xFC00": "0xFF800000", "0x7C00": "0x7F800000", "0x7E00": "0x7FC00000",
           "0x0000": "0x00000000", "0x3C00": "0x3F800000"}


def _f16_blob_to_f32(m):
    """A dense f16 hex blob (little-endian, as MLIR prints it) as f32."""
    data = bytes.fromhex(m.group(1))
    if len(data) % 2:
        return m.group(0)
    vals = struct.unpack(f"<{len(data) // 2}e", data)
    blob = struct.pack(f"<{len(vals)}f", *vals).hex().upper()
    return f'dense<"0x{blob}">{m.group(2)}f32>'


def promote_f16(text):
    """The mutant with f16 replaced by f32 (f16 hex literals translated)."""
    text = re.sub(r'dense<"0x([0-9A-Fa-f]+)">(\s*:\s*tensor<[^>]*x)f16>', _f16_blob_to_f32, text)
    # A typed f16 literal, any value: its f32 bits.
    text = re.sub(r"\b0x([0-9A-Fa-f]{4})(\s*:\s*)f16\b",
                  lambda m: "0x%08X%sf32" % (struct.unpack("<I", struct.pack(
                      "<f", struct.unpack("<e", bytes.fromhex(m.group(1))[::-1])[0]))[0],
                      m.group(2)), text)
    text = re.sub(r"\b(0x[0-9A-Fa-f]{4})\b", lambda m: F16_HEX.get(m.group(1).upper().replace("0X", "0x"),
                                                                  m.group(1)), text)
    text = re.sub(r"(?<=[x\W])f16\b", "f32", text)
    # f32 -> f32 casts are invalid: drop them, their uses take the source.
    while True:
        m = re.search(r"^[ \t]*(%[\w.$-]+)\s*=\s*arith\.(?:extf|truncf)\s+(%[\w.$#-]+)\s*:"
                      r"\s*f32\s+to\s+f32[ \t]*\n", text, re.M)
        if not m:
            return text
        # Uses are in the rest of the enclosing region (names are region-scoped).
        depth, end = 0, len(text)
        for i in range(m.end(), len(text)):
            c = text[i]
            depth += c == "{"
            depth -= c == "}"
            if depth < 0:
                end = i
                break
        region = re.sub(re.escape(m.group(1)) + r"(?![\w.$-])", m.group(2), text[m.end():end])
        text = text[:m.start()] + region + text[end:]


POISON = {"f32": "0x7FC00000 : f32", "f16": "0x7E00 : f16", "bf16": "0x7FC0 : bf16",
          "i1": "true", "i8": "0 : i8", "i32": "0 : i32", "i64": "0 : i64"}
EMPTY_RE = re.compile(r"^(\s*)%([\w.$-]+)\s*=\s*tensor\.empty\((.*?)\)\s*:\s*"
                      r"(tensor<(?:[^>]*x)?(f32|f16|bf16|i1|i8|i32|i64)>)\s*$", re.M)


def poison_empties(text):
    """Every tensor.empty becomes a fill (NaN for floats, true/0 otherwise):
    a mutant that reads uninitialized data (e.g. an output map that no
    longer covers its tensor, a bypassed producer) then computes the same
    defined values in both programs, and NaN shows up in the reference
    where floats were read before being written."""
    def rep(m):
        ind, v, dyn, ty, elt = m.groups()
        return (f"{ind}%praw_{v} = tensor.empty({dyn}) : {ty}\n"
                f"{ind}%pnan_{v} = arith.constant {POISON[elt]}\n"
                f"{ind}%{v} = linalg.fill ins(%pnan_{v} : {elt}) outs(%praw_{v} : {ty}) -> {ty}")
    return EMPTY_RE.sub(rep, text)


def check_mutant(orig, text, tools, base, applied=()):
    """Returns (status, detail). status: parse_error, nofuse, ok, refnan,
    skipped, crash, broken_ir, mismatch, error."""
    path = base + ".mlir"
    with open(path, "w") as f:
        f.write(text)
    to = tools.timeout
    try:
        ga.run_tool([tools.mlir_opt, path, "-o", os.devnull], to, what="mlir-opt (verify)")
    except ga.ToolFailure as e:
        if e.kind == "crash":
            return "parse_error", "mlir-opt itself crashed on the mutant (not attn-opt)"
        valid = False
    else:
        valid = True
    try:
        fused_ir = ga.run_tool([tools.attn_opt, path, "--attn-fuse", "--attn-explain"], to,
                               what="attn-opt --attn-fuse")
    except ga.ToolFailure as e:
        if e.kind == "crash":
            return "crash", str(e)
        if valid:
            return "broken_ir", "mlir-opt accepts the mutant, attn-opt --attn-fuse fails:\n" + str(e)
        return "parse_error", ""
    if not valid:
        if re.search(r"\battn\.\w+", text):
            # attn dialect input (stock mlir-opt cannot parse it): attn-opt
            # verified it, so tiling and lowering must not crash either.
            for pipe in (["--attn-tile"], ["--attn-cpu-pipeline"]):
                try:
                    ga.run_tool([tools.attn_opt, path] + pipe + ["-o", os.devnull], to,
                                what="attn-opt " + pipe[0])
                except ga.ToolFailure as e:
                    if e.kind == "crash":
                        return "crash", str(e)
            return "attn_ops", ""
        return "parse_error", "(mlir-opt rejects, attn-opt accepts)"
    fns = fused_functions(fused_ir)
    if not fns:
        return "nofuse", ""
    results = []
    for fn in fns:
        if not single_result(text, fn):
            results.append(("skipped", f"@{fn}: several results"))
            continue
        sig = re.search(r"func\.func\s+(?:\w+\s+)?@" + re.escape(fn) + r"\s*\((.*?)\)\s*->", text, re.S)
        if sig and "?" in sig.group(1) and any(k in w for w in applied for k in STRUCTURAL):
            # The EXEC sizes of the original may no longer be consistent.
            results.append(("skipped", f"@{fn}: dynamic sizes after a structural mutation"))
            continue
        chunk = exec_line(orig, fn) + "\n" + poison_empties(strip_exec(text))
        with open(base + f".{fn}.exec.mlir", "w") as f:
            f.write(chunk)
        status, detail = ga.check_chunk(chunk, tools, base + f".{fn}.full.mlir", expect_fuse=None)
        if status == "mismatch" and re.search(r"(?<=[x\W])f16\b", chunk):
            # Rounding-sensitive mutants (huge scales, near ties): if the
            # all-f32 version matches, the f16 difference is precision.
            st2, d2 = ga.check_chunk(promote_f16(chunk), tools, base + f".{fn}.f32.full.mlir",
                                     expect_fuse=True)
            if st2 == "ok":
                status, detail = "precision", f"{detail}; all-f32 version: {d2}"
        if status == "ok" and "fused=0" in detail:
            status = "skipped"  # the poisoned copy no longer fuses
            detail = "not fused once tensor.empty reads are made defined; " + detail
        results.append((status, f"@{fn}: {detail}"))
    order = ["crash", "pipeline_error", "runtime_error", "mismatch", "error", "ref_error",
             "refnan", "precision", "skipped", "ok"]
    results.sort(key=lambda r: order.index(r[0]) if r[0] in order else 0)
    return results[0]


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

FAILING = {"crash", "broken_ir", "mismatch", "pipeline_error", "runtime_error"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--only", type=int, nargs="*", help="run only these mutant indices")
    ap.add_argument("--corpus", nargs="*", help="glob patterns (default: test/Transforms/*.mlir "
                    "test/corpus/*.mlir)")
    ap.add_argument("--keep", help="directory for the mutants (default: temp dir, removed "
                    "unless something fails)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-v", "--verbose", action="store_true")
    ga.add_tool_args(ap)
    a = ap.parse_args()

    seeds = load_corpus(a.corpus or DEFAULT_CORPUS)
    if not seeds:
        print("mutate: empty corpus")
        return 1
    tools = ga.Tools(a)
    tmp = a.keep or tempfile.mkdtemp(prefix="attn-mut-")
    os.makedirs(tmp, exist_ok=True)
    lock = threading.Lock()
    stats = {}
    failures = []
    t0 = time.time()
    indices = a.only if a.only else list(range(a.count))

    def one(i):
        rng = np.random.default_rng([a.seed, i])
        src, chunk = seeds[int(rng.integers(len(seeds)))]
        text, applied = mutate(chunk, rng, int(rng.choice([1, 1, 2, 3])))
        base = os.path.join(tmp, f"mut_{a.seed}_{i}")
        header = (f"// mutant {a.seed}/{i} of {src}: " + "; ".join(applied) + "\n")
        text = header + strip_exec(text)
        status, detail = check_mutant(chunk, text, tools, base, applied)
        with lock:
            stats[status] = stats.get(status, 0) + 1
            if status in FAILING:
                failures.append((i, status, base + ".mlir"))
                print(f"FAIL[{status}] mutant {i}: {base}.mlir\n  {header.strip()}\n  "
                      f"{detail.strip()[:1500]}", flush=True)
            elif a.verbose:
                print(f"{status}: mutant {i} ({src}: {'; '.join(applied)}) {detail[:200]}",
                      flush=True)

    if a.jobs > 1:
        with ThreadPoolExecutor(a.jobs) as pool:
            list(pool.map(one, indices))
    else:
        for i in indices:
            one(i)
    dt = time.time() - t0
    fused = sum(stats.get(k, 0) for k in ("ok", "mismatch", "refnan", "skipped", "error",
                                          "ref_error", "precision", "pipeline_error",
                                          "runtime_error"))
    print(f"mutate: seed={a.seed} mutants={len(indices)} "
          f"parse_errors={stats.get('parse_error', 0)} not_fused={stats.get('nofuse', 0)} "
          f"attn_op_inputs={stats.get('attn_ops', 0)} "
          f"fused={fused} matched={stats.get('ok', 0)} mismatches={stats.get('mismatch', 0)} "
          f"ref_nan_skipped={stats.get('refnan', 0)} f16_precision={stats.get('precision', 0)} "
          f"unexecuted={stats.get('skipped', 0)} "
          f"exec_errors={stats.get('error', 0) + stats.get('ref_error', 0)} "
          f"pipeline_errors={stats.get('pipeline_error', 0) + stats.get('runtime_error', 0)} "
          f"crashes={stats.get('crash', 0)} "
          f"broken_ir={stats.get('broken_ir', 0)} corpus_chunks={len(seeds)} time={dt:.1f}s")
    if failures:
        print("offending mutants:")
        for i, status, path in sorted(failures):
            print(f"  [{status}] {path}")
        return 1
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
