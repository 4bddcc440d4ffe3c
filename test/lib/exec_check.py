#!/usr/bin/env python3
"""Execution check: runs every function of an MLIR file through attn-opt's
CPU pipeline and through stock mlir-opt (unfused), and compares the outputs.

Each `// -----` chunk may carry a directive line

    // EXEC: [@fn] [dims=2,33] [amp=1.0] [argN=mask|bias|normal] [seed=N]
    //       [tol=1e-5] [nofuse] [pipeline=tile-q=16,tile-kv=8] [ref=tosa]

`ref=fn:NAME` takes another function of the chunk (same arguments) run
through attn-opt's CPU pipeline as the reference instead of stock MLIR (for
programs that are attn ops already: split-then-merge against the unsplit
op, the op's lse against a logsumexp written in linalg).
`dims` fills the `?` dimensions of the arguments in order. `amp` scales the
random normal inputs (large values give large logits). `argN=mask` fills
argument N with 0 or -inf (the first entry of the last axis is kept finite so
no row is fully masked); `maskrows` also masks every third row fully (for
programs with the safe-softmax guard); `bias` is a finite additive bias; `keep01` is 1 or 0 (Hugging
Face's attention_mask, the first key kept); `leftpad` is Hugging Face's attention_mask with left
padding (each row's first 0..S/2 keys 0, the first row's at least 2: under causal its first query rows
see no key); `lens:K` gives i32 lengths in [1, K]; `seg:K` segment ids in
[0, K), nondecreasing along the last axis (`ids:K`: unsorted; equal shapes
get equal ids). `nofuse` states that
attn-fuse must leave the chunk alone (a look-alike); otherwise the chunk must
fuse. Chunks without a directive are not executed.

Outputs are compared with ||out - ref|| / ||ref|| <= tol; any NaN in the fused
output fails. Exit status 0 when every executed chunk passes.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np

RUNNER_LIBS = ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"]
STOCK = [
    "--one-shot-bufferize=bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map",
    "--convert-linalg-to-loops", "--lower-affine", "--convert-scf-to-cf",
    "--expand-strided-metadata", "--lower-affine", "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]
TOSA = ["--tosa-to-linalg-pipeline", "--tosa-to-arith", "--tosa-to-tensor"]

DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


def parse_tensor(t: str):
    m = re.fullmatch(r"tensor<(.*)x(f32|f16|bf16|i1|i32|f8E4M3FN|f8E5M2)>", t.strip())
    if not m:
        m0 = re.fullmatch(r"tensor<(f32|f16|bf16|i1|i32|f8E4M3FN|f8E5M2)>", t.strip())
        if m0:
            return [], m0.group(1)
        raise ValueError(f"unsupported type {t}")
    return [None if d == "?" else int(d) for d in m.group(1).split("x")], m.group(2)


def fmt_type(shape, elt):
    return "tensor<" + "".join(("?" if d is None else f"{d}") + "x" for d in shape) + elt + ">"


def f8_values(elt: str) -> np.ndarray:
    """The value of each of the 256 codes of an 8-bit float (NaN codes NaN),
    from the format's definition: E4M3FN (bias 7, no infinities, S.1111.111
    NaN) and E5M2 (bias 15, IEEE-like)."""
    ebits, mbits, bias = (4, 3, 7) if elt == "f8E4M3FN" else (5, 2, 15)
    vals = np.empty(256)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> mbits) & ((1 << ebits) - 1)
        m = code & ((1 << mbits) - 1)
        if elt == "f8E4M3FN" and e == 15 and m == 7:
            v = np.nan
        elif elt == "f8E5M2" and e == 31:
            v = np.inf if m == 0 else np.nan
        elif e == 0:
            v = m * 2.0 ** (1 - bias - mbits)
        else:
            v = (1 + m / 2 ** mbits) * 2.0 ** (e - bias)
        vals[code] = sign * v
    return vals


def f8_encode(arr: np.ndarray, elt: str) -> np.ndarray:
    """Nearest finite code of each value (saturating)."""
    vals = f8_values(elt)
    codes = np.array([c for c in range(256) if np.isfinite(vals[c])])
    order = np.argsort(vals[codes], kind="stable")
    sv, sc = vals[codes][order], codes[order]
    x = np.asarray(arr, np.float64).ravel()
    i = np.clip(np.searchsorted(sv, x), 1, len(sv) - 1)
    pick = np.where(np.abs(sv[i - 1] - x) <= np.abs(sv[i] - x), i - 1, i)
    return sc[pick].astype(np.uint8).reshape(np.shape(arr))


def encode(arr: np.ndarray, elt: str) -> str:
    if elt.startswith("f8"):
        raw = f8_encode(arr, elt).tobytes()
    elif elt == "bf16":
        bits = (arr.astype(np.float32).view(np.uint32) + 0x8000) >> 16
        raw = bits.astype("<u2").tobytes()
    elif elt == "i1":
        # MLIR packs i1 dense data one bit per element, little-endian.
        raw = np.packbits(np.asarray(arr, bool).ravel(), bitorder="little").tobytes()
    else:
        raw = arr.astype(DTYPES[elt]).astype("<" + np.dtype(DTYPES[elt]).str[1:]).tobytes()
    return '"0x' + raw.hex().upper() + '"'


def parse_directive(chunk: str):
    m = re.search(r"^\s*//\s*EXEC:(.*)$", chunk, re.M)
    if not m:
        return None
    opts = {"amp": 1.0, "tol": None, "fuse": True, "args": {}, "dims": [],
            "fn": None, "seed": None, "pipeline": None, "ref": None}
    for tok in m.group(1).split():
        if tok.startswith("@"):
            opts["fn"] = tok[1:]
        elif tok == "nofuse":
            opts["fuse"] = False
        elif "=" in tok:
            k, v = tok.split("=", 1)
            if k == "dims":
                opts["dims"] = [int(x) for x in v.split(",")]
            elif k in ("amp", "tol"):
                opts[k] = float(v)
            elif k == "seed":
                opts["seed"] = int(v)
            elif k == "pipeline":
                opts["pipeline"] = v.replace(",", " ")
            elif k == "ref":
                opts["ref"] = v
            elif re.fullmatch(r"arg\d+", k):
                opts["args"][int(k[3:])] = v
            else:
                raise ValueError(f"unknown EXEC option {tok}")
        else:
            raise ValueError(f"unknown EXEC option {tok}")
    return opts


FUNC_RE = re.compile(r"func\.func\s+@([\w$.]+)\s*\((.*?)\)\s*->\s*\(?\s*(tensor<[^>]*>)",
                     re.S)


def make_main(chunk: str, opts, rng):
    funcs = FUNC_RE.findall(chunk)
    if not funcs:
        raise ValueError("no function returning a tensor in chunk")
    name, args, res = funcs[0]
    if opts["fn"]:
        match = [f for f in funcs if f[0] == opts["fn"]]
        name, args, res = match[0]
    arg_types = re.findall(r"%[\w]+\s*:\s*(tensor<[^>]*>)", args)
    dims = list(opts["dims"])
    lines, vals = [], []
    sizes = {}
    for i, t in enumerate(arg_types):
        shape, elt = parse_tensor(t)
        conc = [d if d is not None else dims.pop(0) for d in shape]
        kind = opts["args"].get(i, "normal")
        if kind.startswith("lens:"):
            # Sequence lengths: integers in [1, K].
            arr = rng.integers(1, int(kind[5:]) + 1, size=conc)
        elif kind.startswith(("seg:", "ids:")):
            # Segment ids of packed documents: nondecreasing in [0, K)
            # along the last axis (`ids:K`: in any order). Arguments of one
            # shape get the same ids, as a program's q and kv ids do.
            k = int(kind[4:])
            r2 = np.random.default_rng(zlib.crc32(repr((kind, conc)).encode()))
            arr = r2.integers(0, k, size=conc)
            if kind.startswith("seg:"):
                arr = np.sort(arr, axis=-1)
        elif elt == "i1":
            arr = rng.random(conc) < 0.8
            if conc:
                arr[..., 0] = True
        elif kind == "mask":
            arr = np.where(rng.random(conc) < 0.3, -np.inf, 0.0)
            if conc:
                arr[..., 0] = 0.0
        elif kind == "maskrows":
            # Like mask, but every third row (over the last two axes) is
            # fully masked: exercises the fully-masked-row rule.
            arr = np.where(rng.random(conc) < 0.3, -np.inf, 0.0)
            if conc:
                arr[..., 0] = 0.0
            if len(conc) >= 2:
                arr[..., ::3, :] = -np.inf
        elif kind == "bias":
            arr = rng.standard_normal(conc)
        elif kind == "keep01":
            # Hugging Face's attention_mask: 1 keep, 0 pad, the first key kept.
            arr = np.where(rng.random(conc) < 0.3, 0.0, 1.0)
            if conc:
                arr[..., 0] = 1.0
        elif kind == "leftpad":
            # Left padding: row r's first p_r keys are 0, p_0 >= 2.
            arr = np.ones(conc)
            rows = arr.reshape(-1, conc[-1]) if conc else arr.reshape(1, 1)
            for r in range(rows.shape[0]):
                n = rows.shape[1]
                p = int(rng.integers(2 if r == 0 else 0, max(3, n // 2 + 1)))
                rows[r, :min(p, n)] = 0.0
        else:
            arr = rng.standard_normal(conc) * opts["amp"]
        st = fmt_type(conc, elt)
        lines.append(f"    %a{i} = arith.constant dense<{encode(np.asarray(arr), elt)}> : {st}")
        v = f"%a{i}"
        if st != t:
            lines.append(f"    %c{i} = tensor.cast %a{i} : {st} to {t}")
            v = f"%c{i}"
        vals.append(v)
        sizes[i] = conc
    shape, elt = parse_tensor(res)
    rank = len(shape)
    lines.append(f"    %r = func.call @{name}({', '.join(vals)}) : "
                 f"({', '.join(arg_types)}) -> {res}")
    out = "%r"
    if elt != "f32":
        ftype = fmt_type(shape, "f32")
        dyn = [f"%d{i}" for i, d in enumerate(shape) if d is None]
        for i, d in enumerate(shape):
            if d is None:
                lines.append(f"    %ci{i} = arith.constant {i} : index")
                lines.append(f"    %d{i} = tensor.dim %r, %ci{i} : {res}")
        idmap = "affine_map<(" + ", ".join(f"i{i}" for i in range(rank)) + ") -> (" + \
            ", ".join(f"i{i}" for i in range(rank)) + ")>"
        par = ", ".join(['"parallel"'] * rank)
        lines.append(f"    %e = tensor.empty({', '.join(dyn)}) : {ftype}")
        lines.append(f"    %rf = linalg.generic {{indexing_maps = [{idmap}, {idmap}], "
                     f"iterator_types = [{par}]}} ins(%r : {res}) outs(%e : {ftype}) {{")
        lines.append(f"    ^bb0(%x: {elt}, %y: f32):")
        lines.append(f"      %w = arith.extf %x : {elt} to f32")
        lines.append("      linalg.yield %w : f32")
        lines.append(f"    }} -> {ftype}")
        out, res = "%rf", ftype
    mshape, _ = parse_tensor(res)
    mtype = "memref<" + "".join(("?" if d is None else str(d)) + "x" for d in mshape) + "f32>"
    lines.append(f"    %m = bufferization.to_buffer {out} : {res} to {mtype}")
    lines.append(f"    %u = memref.cast %m : {mtype} to memref<*xf32>")
    lines.append("    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()")
    main = ("  func.func @main() {\n" + "\n".join(lines) + "\n    return\n  }\n"
            "  func.func private @printMemrefF32(memref<*xf32>) attributes "
            "{llvm.emit_c_interface}\n")
    return name, main


def add_main(chunk: str, main: str) -> str:
    body = "\n".join(l for l in chunk.splitlines() if not l.lstrip().startswith("// RUN"))
    m = re.search(r"^\s*module\b[^{]*\{", body, re.M)
    if m:
        end = body.rstrip().rfind("}")
        return body[:end] + main + "}\n"
    return "module {\n" + body + "\n" + main + "}\n"


NUM_RE = re.compile(r"-?nan|-?inf|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def rel_err(out, ref):
    """||out - ref|| / ||ref|| where equal elements (the same infinity
    too: an lse of a fully masked row is -inf in both) count 0 and an
    infinity on one side only makes it infinite."""
    same = out == ref
    if (~same & (np.isinf(out) | np.isinf(ref))).any():
        return float("inf")
    with np.errstate(invalid="ignore"):  # inf - inf where both are equal
        diff = np.where(same, 0.0, out - ref)
    return float(np.linalg.norm(diff) /
                 max(np.linalg.norm(np.where(np.isinf(ref), 0.0, ref)), 1e-30))


def parse_output(text: str) -> np.ndarray:
    i = text.find("data =")
    if i < 0:
        raise ValueError("no printed memref in output:\n" + text[-2000:])
    toks = NUM_RE.findall(text[i + 6:])
    return np.array([float(t) for t in toks], dtype=np.float64)


def reference_steps(mlir_opt, attn_opt, path, text, ref, transform_lib):
    """The commands that lower `path` unfused through stock MLIR to LLVM: the
    first reads `path`, each later one reads the previous one's output."""
    passes = list(TOSA) if ref == "tosa" else []
    passes += [f"--transform-preload-library=transform-library-paths={transform_lib}",
               "--transform-interpreter"] + STOCK
    if "xf8E" not in text:
        return [[mlir_opt, path] + passes]
    # MLIR's LLVM lowering has no extf from 8-bit floats: the reference gets
    # attn-opt's exact expansion of it (checked code by code in
    # Integration/CPU/fp8.mlir).
    cut = passes.index("--convert-to-llvm")
    return [[mlir_opt, path] + passes[:cut], [attn_opt, "-", "--attn-expand-f8"],
            [mlir_opt, "-"] + passes[cut:]]


def run(cmd, inp=None):
    p = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {' '.join(cmd)}\n"
                           f"{p.stderr[-4000:]}")
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--tools", required=True, help="LLVM bin dir (mlir-opt, mlir-runner)")
    ap.add_argument("--libs", required=True, help="LLVM lib dir (runner utils)")
    ap.add_argument("--transform-lib", required=True)
    ap.add_argument("--keep", help="directory to keep generated files")
    a = ap.parse_args()

    text = open(a.file).read()
    chunks = re.split(r"^// -----\s*$", text, flags=re.M)
    libs = ",".join(os.path.join(a.libs, l) for l in RUNNER_LIBS)
    runner = [os.path.join(a.tools, "mlir-runner"), "-e", "main",
              "-entry-point-result=void", f"-shared-libs={libs}"]
    mlir_opt = os.path.join(a.tools, "mlir-opt")
    failures = 0
    executed = 0
    tmp = a.keep or tempfile.mkdtemp(prefix="attn-exec-")
    os.makedirs(tmp, exist_ok=True)
    for idx, chunk in enumerate(chunks):
        opts = parse_directive(chunk)
        if opts is None:
            continue
        executed += 1
        funcs = FUNC_RE.findall(chunk)
        fname = opts["fn"] or (funcs[0][0] if funcs else f"chunk{idx}")
        seed = opts["seed"] if opts["seed"] is not None else zlib.crc32(fname.encode())
        rng = np.random.default_rng(seed)
        try:
            name, main_fn = make_main(chunk, opts, rng)
            prog = add_main(chunk, main_fn)
            path = os.path.join(tmp, f"{idx:02d}_{name}.mlir")
            with open(path, "w") as f:
                f.write(prog)
            fused_ir = run([a.attn_opt, path, "--attn-fuse"])
            n_fused = fused_ir.count("attn.attention")
            if opts["fuse"] and n_fused == 0:
                raise RuntimeError("expected attn-fuse to fuse this chunk; it did not")
            if not opts["fuse"] and n_fused:
                raise RuntimeError("attn-fuse fused a look-alike that must stay unfused")
            pipe = "--attn-cpu-pipeline"
            if opts["pipeline"]:
                pipe += "=" + opts["pipeline"]
            llvm_fused = run([a.attn_opt, path, pipe])
            out = parse_output(run(runner, llvm_fused))
            if opts["ref"] and opts["ref"].startswith("fn:"):
                # Same inputs (same seed) into the reference function.
                ref_opts = dict(opts, fn=opts["ref"][3:])
                _, ref_main = make_main(chunk, ref_opts, np.random.default_rng(seed))
                ref_path = os.path.join(tmp, f"{idx:02d}_{name}_ref.mlir")
                with open(ref_path, "w") as f:
                    f.write(add_main(chunk, ref_main))
                ref = parse_output(run(runner, run([a.attn_opt, ref_path, pipe])))
            else:
                llvm_ref = path
                for cmd in reference_steps(mlir_opt, a.attn_opt, path, chunk,
                                           opts["ref"], a.transform_lib):
                    llvm_ref = run(cmd, None if llvm_ref is path else llvm_ref)
                ref = parse_output(run(runner, llvm_ref))
            elt = parse_tensor([f for f in funcs if f[0] == name][0][2])[1]
            tol = opts["tol"] or (1e-5 if elt == "f32" else 1e-2)
            if out.shape != ref.shape:
                raise RuntimeError(f"shape mismatch {out.shape} vs {ref.shape}")
            # The reference first: a NaN there makes the input the problem.
            if np.isnan(ref).any():
                raise RuntimeError("NaN in the reference output: the test input is invalid")
            if np.isnan(out).any():
                raise RuntimeError(f"NaN in fused output ({np.isnan(out).sum()} elements)")
            err = rel_err(out, ref)
            status = "ok" if err <= tol else "FAIL"
            print(f"{status}: @{name} fused={n_fused} rel_err={err:.3e} tol={tol:g} "
                  f"n_out={out.size}")
            if err > tol:
                failures += 1
        except Exception as e:  # report and go on with the next chunk
            failures += 1
            print(f"FAIL: @{fname}: {e}")
    print(f"executed {executed} chunk(s), {failures} failure(s)")
    if executed == 0:
        print("no chunk carries an EXEC directive")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
