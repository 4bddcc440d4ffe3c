#!/usr/bin/env python3
"""Hostile inputs for attn-opt: structure, sizes and option values that the
differential fuzzers (gen_attention.py, mutate.py) never build.

The differential fuzzers write short, tree-shaped score expressions with
sane shapes. This one writes what breaks compilers instead:

  chain N      N chained elementwise generics between Q·K^T and the softmax
  diamond N    s' = 0.5 * (s + s): a DAG of depth N (exponential as a tree)
  fib N        s' = max(s, s_prev): every value read by the next two steps
  shift N      s' = s + 0.0, N times (each step asks "does this depend on
               the scores?" of the whole rest of the chain)
  causal N     N nested causal selects
  ormask N     one select whose mask is an `ori` chain of N index compares
  reshape N    N unit-dim expand_shape / collapse_shape pairs
  body N       one generic whose body is N chained ops
  many N       N independent attentions in one function
  nest N       N nested scf.if (no attention: the parser's recursion)
  attn         one attn.attention with random (extreme) sizes, dtypes and
               GPU/CPU options, run through a random pipeline or attn-bundle
               (a bundle it writes must hold its own hashes)

    hostile.py gen KIND N            # print one program
    hostile.py run --seed 1 --count 10000 [--jobs 2] [--keep DIR]

`run` checks every outcome: exit 0 without "error:", or a non-zero exit
with a located diagnostic (file:line:col: error:). A signal, a crash
marker, a timeout, an unlocated error, an error with exit 0, or an internal
error (a pass that built IR which then failed to verify or legalize) is a
failure; failing inputs are kept and the run exits 1.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# ---------------------------------------------------------------------------
# Structural programs: scores [M, N] f32, Q [M, D], K [N, D], V [N, E].
# ---------------------------------------------------------------------------

M, N, D, E = 4, 6, 8, 8
ID2 = "affine_map<(m, n) -> (m, n)>"
T = f"tensor<{M}x{N}xf32>"


def _head(name="f"):
    return [
        f"func.func @{name}(%q: tensor<{M}x{D}xf32>, %k: tensor<{N}x{D}xf32>, "
        f"%v: tensor<{N}x{E}xf32>) -> tensor<{M}x{E}xf32> {{",
        "  %z = arith.constant 0.0 : f32",
        "  %one = arith.constant 1.0 : f32",
        "  %half = arith.constant 0.5 : f32",
        "  %ninf = arith.constant 0xFF800000 : f32",
        f"  %es = tensor.empty() : {T}",
        f"  %fs = linalg.fill ins(%z : f32) outs(%es : {T}) -> {T}",
        "  %s0 = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, "
        "affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] "
        f"ins(%q, %k : tensor<{M}x{D}xf32>, tensor<{N}x{D}xf32>) outs(%fs : {T}) -> {T}",
    ]


def _tail(last, p="p", o="o"):
    return [
        f"  %ep_{p} = tensor.empty() : {T}",
        f"  %{p} = linalg.softmax dimension(1) ins(%{last} : {T}) outs(%ep_{p} : {T}) -> {T}",
        f"  %eo_{o} = tensor.empty() : tensor<{M}x{E}xf32>",
        f"  %fo_{o} = linalg.fill ins(%z : f32) outs(%eo_{o} : tensor<{M}x{E}xf32>) -> tensor<{M}x{E}xf32>",
        f"  %{o} = linalg.matmul ins(%{p}, %v : {T}, tensor<{N}x{E}xf32>) "
        f"outs(%fo_{o} : tensor<{M}x{E}xf32>) -> tensor<{M}x{E}xf32>",
    ]


def _generic(res, ins, body, index=False):
    """An elementwise [M, N] generic; `body` maps block arg names to lines."""
    maps = ", ".join([ID2] * (len(ins) + 1))
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    lines = [
        f"  %{res} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
        f"[\"parallel\", \"parallel\"]}} ins({', '.join('%' + x for x in ins)} : "
        f"{', '.join([T] * len(ins))}) outs(%es : {T}) {{",
        f"  ^bb0({args}, %out: f32):",
    ]
    lines += ["    " + b for b in body]
    lines.append(f"  }} -> {T}")
    return lines


# One elementwise step s_{i+1} = f(...) per kind: (inputs of step i, body).
STEPS = {
    "chain": (lambda i: [f"s{i}"],
              ["%y = arith.mulf %a0, %one : f32", "linalg.yield %y : f32"]),
    "diamond": (lambda i: [f"s{i}", f"s{i}"],
                ["%x = arith.addf %a0, %a1 : f32", "%y = arith.mulf %x, %half : f32",
                 "linalg.yield %y : f32"]),
    "fib": (lambda i: [f"s{i}", f"s{max(i - 1, 0)}"],
            ["%y = arith.maximumf %a0, %a1 : f32", "linalg.yield %y : f32"]),
    "shift": (lambda i: [f"s{i}"],
              ["%y = arith.addf %a0, %z : f32", "linalg.yield %y : f32"]),
    "causal": (lambda i: [f"s{i}"],
               ["%m = linalg.index 0 : index", "%n = linalg.index 1 : index",
                "%c = arith.cmpi ugt, %n, %m : index",
                "%y = arith.select %c, %ninf, %a0 : f32", "linalg.yield %y : f32"]),
}


def gen_structural(kind: str, n: int) -> str:
    if kind == "nest":  # the parser and verifier recurse per level
        return "\n".join(["func.func @f(%c: i1) {"] + ["scf.if %c {"] * n +
                         ["}"] * n + ["return", "}"]) + "\n"
    L = _head()
    last = "s0"
    if kind in STEPS:
        ins, body = STEPS[kind]
        for i in range(n):
            L += _generic(f"s{i+1}", ins(i), body)
        last = f"s{n}"
    elif kind == "ormask":
        body = ["%m = linalg.index 0 : index", "%n = linalg.index 1 : index",
                "%c0 = arith.cmpi ugt, %n, %m : index"]
        for i in range(n):
            body.append(f"%c{i+1} = arith.ori %c{i}, %c0 : i1")
        body += [f"%y = arith.select %c{n}, %ninf, %a0 : f32", "linalg.yield %y : f32"]
        L += _generic("s1", ["s0"], body)
        last = "s1"
    elif kind == "reshape":
        for i in range(n):
            L.append(f"  %x{i} = tensor.expand_shape %s{i} [[0], [1, 2]] output_shape "
                     f"[{M}, {N}, 1] : {T} into tensor<{M}x{N}x1xf32>")
            L.append(f"  %s{i+1} = tensor.collapse_shape %x{i} [[0], [1, 2]] : "
                     f"tensor<{M}x{N}x1xf32> into {T}")
        last = f"s{n}"
    elif kind == "body":
        body = ["%y0 = arith.mulf %a0, %one : f32"]
        for i in range(n):
            body.append(f"%y{i+1} = arith.mulf %y{i}, %one : f32")
        body.append(f"linalg.yield %y{n} : f32")
        L += _generic("s1", ["s0"], body)
        last = "s1"
    elif kind == "many":
        outs = []
        for i in range(n):
            # Its own Q·K^T (the one of _head() stays unused).
            L.append(L[7].replace("%s0 =", f"%u{i} =", 1))
            L += _generic(f"t{i}", [f"u{i}"], ["%y = arith.mulf %a0, %half : f32",
                                               "linalg.yield %y : f32"])
            L += _tail(f"t{i}", p=f"p{i}", o=f"o{i}")
            outs.append(f"o{i}")
        L.append(f"  return %{outs[-1]} : tensor<{M}x{E}xf32>")
        L.append("}")
        return "\n".join(L) + "\n"
    else:
        raise SystemExit(f"unknown kind {kind}")
    L += _tail(last)
    L.append(f"  return %o : tensor<{M}x{E}xf32>")
    L.append("}")
    return "\n".join(L) + "\n"


STRUCTURAL = ["chain", "diamond", "fib", "shift", "causal", "ormask", "reshape",
              "body", "many", "nest"]

# ---------------------------------------------------------------------------
# attn.attention with extreme sizes and options.
# ---------------------------------------------------------------------------

EXTREME = [0, 1, 2, 3, 15, 16, 17, 33, 64, 127, 128, 129, 1000, 65535, 65536,
           2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1]


def _size(rng, small_bias=0.8):
    if rng.random() < small_bias:
        return rng.choice([1, 2, 3, 7, 16, 17, 32, 33, 48, 64, 80, 96, 128, 130])
    return rng.choice(EXTREME)


def gen_attention_op(rng) -> str:
    nb = rng.choice([0, 0, 1, 2, 3])
    batch = [_size(rng, 0.9) for _ in range(nb)]
    m, n = _size(rng), _size(rng)
    d, e = rng.choice([16, 32, 48, 64, 80, 96, 128, 256, 0, 1, 3, 2**33]), \
        rng.choice([16, 32, 64, 128, 0, 1, 2**33])
    if rng.random() < 0.5:
        e = d
    dt = rng.choice(["f16", "bf16", "f32", "f16", "f16"])
    odt = dt if rng.random() < 0.8 else rng.choice(["f16", "f32"])
    dims = [f"b{i}" for i in range(nb)]
    allv = ", ".join(dims + ["m", "n", "d", "e"])

    def ty(shape, t):
        return "tensor<" + "x".join(str(x) for x in shape) + "x" + t + ">"

    qt = ty(batch + [m, d], dt)
    kt = ty(batch + [n, d], dt)
    vt = ty(batch + [n, e], dt)
    ot = ty(batch + [m, e], odt)

    def mp(names):
        return f"affine_map<({allv}) -> ({', '.join(names)})>"

    maps = [mp(dims + ["m", "d"]), mp(dims + ["n", "d"]), mp(dims + ["n", "e"]),
            mp(dims + ["m", "e"])]
    ins = ["%q", "%k", "%v"]
    tys = [qt, kt, vt]
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {vt}"]
    if rng.random() < 0.2:
        mt = ty(batch + [m, n], "i1")
        args.append(f"%mask: {mt}")
        extra_mask = True
    else:
        extra_mask = False
    args.append(f"%o: {ot}")
    if extra_mask:
        ins_mask = f" mask(%mask : {ty(batch + [m, n], 'i1')})"
        maps.append(mp(dims + ["m", "n"]))
    else:
        ins_mask = ""
    attrs = []
    if rng.random() < 0.3:
        attrs.append("causal")
    if rng.random() < 0.15:
        attrs.append(f"window = {rng.choice([1, 2, 64, 2**31, 2**62])}")
    if rng.random() < 0.2:
        attrs.append("mask_value = " + rng.choice(
            ["0xFF800000", "-1.0e+30", "-3.38953139e+38", "0.0", "0x7F800000", "0x7FC00000"]))
    scale = rng.choice(["0.125", "1.0", "0.0", "-1.0", "1.0e+38", "0x7F800000",
                        "0x7FC00000", "1.0e-45"])
    return (
        f"func.func @f({', '.join(args)}) -> {ot} {{\n"
        f"  %s = arith.constant {scale} : f32\n"
        f"  %r = attn.attention ins({', '.join(ins)} : {', '.join(tys)}) scale(%s){ins_mask}\n"
        f"      outs(%o : {ot}) {' '.join(attrs)}\n"
        f"      indexing_maps = [{', '.join(maps)}]\n"
        f"      -> {ot}\n"
        f"  return %r : {ot}\n"
        "}\n")


GPU_OPTIONS = {
    "threads": [0, 1, 32, 128, 1024, 1025, -1, 100000, 2**40],
    "tile-q": [0, 16, 64, 100, 128, 256, 512, -16],
    "tile-kv": [0, 16, 24, 32, 64, 128, 256, -1, 4096],
    "warps": [0, 1, 4, 8, 12, 13, 1000, -4],
    "stages": [0, 1, 2, 3, 4, 5, 99, -2],
    "q-shared": [-1, 0, 1, 5, -7],
    "rescale-threshold": [0, 8, 16, 17, -5],
    "pipeline": [0, 1, 2, -1],
    "wgmma": [-1, 0, 1, 2],
    "warp-specialize": [-1, 0, 1, 7],
    "pingpong": [-1, 0, 1, 3],
    "chip": ["sm_80", "sm_90a", "sm_75", "banana"],
}


def gen_gpu_options(rng, pipeline: bool) -> str:
    opts = []
    for k, vals in GPU_OPTIONS.items():
        if rng.random() < 0.25:
            opts.append(f"{k}={rng.choice(vals)}")
    if pipeline and rng.random() < 0.2:
        opts.append(f"min-blocks={rng.choice([-1, 0, 1, 2, 33, -5])}")
    return " ".join(opts)


def make_case(seed: int, idx: int):
    """(program text, attn-opt arguments) of case `idx`."""
    rng = random.Random(seed * 1_000_003 + idx)
    r = rng.random()
    if r < 0.45:
        kind = rng.choice(STRUCTURAL)
        # Mostly small; now and then large (the linear-time paths).
        n = rng.choice([1, 2, 3, 5, 8, 13, 30, 64, 100, 300])
        if rng.random() < 0.02:
            n = rng.choice([2000, 5000, 20000])
        if kind == "many":
            n = min(n, 64)
        if kind == "nest":  # upstream verification is quadratic in depth
            n = min(n, 5000)
        args = rng.choice([["--attn-fuse", "--attn-explain"], ["--attn-fuse"],
                           ["--attn-cpu-pipeline"] if n <= 64 else ["--attn-fuse"]])
        return gen_structural(kind, n), args
    text = gen_attention_op(rng)
    p = rng.random()
    if p < 0.6:
        return text, [f"--convert-attn-to-gpu={gen_gpu_options(rng, False)}",
                      "--attn-explain"]
    if p < 0.75:
        sizes = [1, 16, 64, 0, -1, 2**40]
        return text, ["--attn-tile=tile-q=" + str(rng.choice(sizes)) +
                      " tile-kv=" + str(rng.choice(sizes))]
    if p < 0.85:
        return text, ["--attn-cpu-pipeline"]
    if p < 0.95:
        return text, [f"--attn-gpu-pipeline={gen_gpu_options(rng, True)} format=isa"]
    # attn-bundle (ptxas included): a bundle is written only when valid.
    flags = [f"--{k.replace('threads', 'block-threads')}={v}"
             for k, v in (o.split("=") for o in gen_gpu_options(rng, True).split())]
    return text, [BUNDLE] + flags


# ---------------------------------------------------------------------------
# Running and classifying.
# ---------------------------------------------------------------------------

CRASH = ("PLEASE submit a bug report", "Stack dump", "LLVM ERROR", "Assertion")
# Errors that mean a pass built IR that does not verify or legalize.
INTERNAL = ("failed to legalize", "is out-of-bounds", "redefinition of symbol",
            "unknown memory side effects", "does not reference a valid function",
            "failed to materialize", "'builtin.unrealized_conversion_cast'",
            "failed to verify", "invalid IR")
LOCATED = re.compile(r"^[^\s:][^:]*:[1-9]\d*:\d+: error: ", re.M)


def classify(rc, err, timed_out):
    if timed_out:
        return "HANG"
    if rc < 0 or rc >= 128 or any(c in err for c in CRASH):
        return "CRASH"
    if any(s in err for s in INTERNAL):
        return "INTERNAL"
    if rc == 0:
        return "SPURIOUS" if "error:" in err else "ok"
    if not LOCATED.search(err):
        return "UNLOCATED"
    return "diagnosed"


BUNDLE = "<attn-bundle>"


def check_bundle(d):
    """A written bundle: its manifest parses and its hashes hold, and so do
    its launch variants' (DIR/v1, ...)."""
    import hashlib
    import json
    try:
        man = json.loads(open(os.path.join(d, "manifest.json")).read())
        for name, digest in man["sha256"].items():
            with open(os.path.join(d, name), "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    return f"sha256 of {name} does not match"
        for v in man.get("variants", []):
            bad = check_bundle(os.path.join(d, v["dir"]))
            if bad:
                return f"variant {v['dir']}: {bad}"
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        return f"bad bundle: {e}"
    return None


def run_case(attn_opt, path, args, timeout):
    t0 = time.time()
    out_dir = None
    if args and args[0] == BUNDLE:
        out_dir = path + ".bundle"
        cmd = [os.path.join(os.path.dirname(attn_opt), "attn-bundle"), path,
               "-o", out_dir] + args[1:]
    else:
        cmd = [attn_opt, path, "-o", os.devnull] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace")
        kind, err = classify(p.returncode, p.stderr, False), p.stderr[-2000:]
        if out_dir and kind == "ok":
            bad = check_bundle(out_dir)
            if bad:
                kind, err = "BADBUNDLE", bad
        elif out_dir and os.path.exists(out_dir):
            kind, err = "BADBUNDLE", "a failed run left a bundle behind"
        return kind, p.returncode, err, time.time() - t0
    except subprocess.TimeoutExpired:
        return "HANG", None, "", time.time() - t0
    finally:
        if out_dir and os.path.isdir(out_dir):
            for f in os.listdir(out_dir):
                os.unlink(os.path.join(out_dir, f))
            os.rmdir(out_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("kind", choices=STRUCTURAL)
    g.add_argument("n", type=int)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--count", type=int, default=1000)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=float, default=20.0)
    r.add_argument("--keep", help="directory for failing inputs")
    r.add_argument("--attn-opt", default=os.path.join(ROOT, "build", "bin", "attn-opt"))
    a = ap.parse_args()
    if a.cmd == "gen":
        sys.stdout.write(gen_structural(a.kind, a.n))
        return 0

    keep = a.keep or tempfile.mkdtemp(prefix="hostile-")
    os.makedirs(keep, exist_ok=True)
    work = tempfile.mkdtemp(prefix="hostile-work-")
    counts, slowest, failures = {}, (0.0, None), []

    def one(i):
        text, args = make_case(a.seed, i)
        path = os.path.join(work, f"case_{a.seed}_{i}.mlir")
        with open(path, "w") as f:
            f.write(text)
        res = run_case(a.attn_opt, path, args, a.timeout)
        os.unlink(path)
        return i, text, args, res

    t0 = time.time()
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for i, text, args, (kind, rc, err, dt) in ex.map(one, range(a.count)):
            counts[kind] = counts.get(kind, 0) + 1
            if dt > slowest[0]:
                slowest = (dt, (i, args))
            if kind not in ("ok", "diagnosed"):
                failures.append(i)
                base = os.path.join(keep, f"{kind.lower()}_{a.seed}_{i}")
                with open(base + ".mlir", "w") as f:
                    f.write(text)
                with open(base + ".txt", "w") as f:
                    f.write(f"attn-opt {base}.mlir {' '.join(repr(x) for x in args)}\n"
                            f"rc={rc}\n{err}")
    total = time.time() - t0
    print(f"hostile: seed {a.seed}, {a.count} inputs in {total:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"hostile: slowest {slowest[0]:.2f} s (case {slowest[1]})")
    if failures:
        print(f"hostile: {len(failures)} failing inputs kept in {keep}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
