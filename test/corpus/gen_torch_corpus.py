#!/usr/bin/env python3
"""Regenerate the PyTorch/ONNX attention corpus: ONNX -> torch -> upstream linalg.

Each variant is an attention block written as the ONNX exports of Hugging
Face models write it (heads split by Reshape + Transpose from [B, S, H*D]
projections and merged back the same way). The script
  1. builds the ONNX graph in code with the `onnx` helper API (opset 17),
  2. imports it to the torch dialect and lowers it with torch-mlir's
     pipelines as shipped in iree-base-compiler:
         iree-import-onnx MODEL.onnx -o MODEL.torch.mlir
         iree-opt --torch-onnx-to-torch-backend-pipeline \\
                  --torch-backend-to-linalg-on-tensors-backend-pipeline \\
                  MODEL.torch.mlir
  3. post-processes the module: i1 constants printed as one byte per element
     in hex (which LLVM 22 does not read for i1) become `dense<[...]>`
     literals, the entry function becomes @torch_<name>, and any op of a
     non-upstream dialect is an error;
  4. verifies the file with stock `mlir-opt` (LLVM/MLIR 22) and writes
     OUT_DIR/torch_<name>.mlir with a header that says how it was made, lit
     RUN lines and the expectations from EXPECTED (as test/corpus/
     gen_corpus.py does for JAX):
       // RUN: attn-opt %s --attn-fuse --attn-explain ... | FileCheck ...
       // RUN: %exec-check %s       (fused vs. the unfused program)
  5. with --attn-opt PATH, fails unless attn-opt prints exactly the expected
     remarks on every file.

Requirements (Python 3.12.1 from pyenv; pip only):
    python3.12 -m venv VENV && VENV/bin/pip install onnx iree-base-compiler numpy
(worked with onnx 1.23.2, iree-base-compiler 3.13.0). iree-import-onnx and
iree-opt are looked up next to the Python interpreter, then on PATH.

Usage:
    VENV/bin/python gen_torch_corpus.py --out DIR [--attn-opt PATH]
                                        [--only NAME ...] [--keep-onnx]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_tools  # noqa: E402

B, S, H, HKV, D = 2, 33, 4, 2, 16


class Graph:
    """A small ONNX graph builder: nodes, initializers, inputs."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype
        self.np = np.float16 if dtype == TP.FLOAT16 else np.float32
        self.nodes, self.inits, self.inputs = [], [], []
        self.n = 0

    def input(self, name, shape):
        self.inputs.append(oh.make_tensor_value_info(name, self.dtype, shape))
        return name

    def const(self, value, dtype=None):
        self.n += 1
        name = f"c{self.n}"
        self.inits.append(nh.from_array(np.asarray(value, dtype=dtype or self.np), name))
        return name

    def op(self, kind, *ins, **attrs):
        self.n += 1
        out = f"t{self.n}"
        self.nodes.append(oh.make_node(kind, list(ins), [out], **attrs))
        return out

    def heads(self, x, heads):
        """[B, S, heads*D] -> [B, heads, S, D] (Reshape + Transpose)."""
        x = self.op("Reshape", x, self.const([B, S, heads, D], np.int64))
        return self.op("Transpose", x, perm=[0, 2, 1, 3])

    def merge(self, o):
        """[B, H, S, D] -> [B, S, H*D]."""
        o = self.op("Transpose", o, perm=[0, 2, 1, 3])
        return self.op("Reshape", o, self.const([B, S, H * D], np.int64))

    def model(self, out):
        g = oh.make_graph(self.nodes, self.name, self.inputs,
                          [oh.make_tensor_value_info(out, self.dtype, [B, S, H * D])],
                          self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def bert(dtype):
    # HF BERT self-attention: scores / sqrt(D) + extended attention mask
    # [B, 1, 1, S] (0 keep, large negative drop), softmax, P V.
    g = Graph("bert", dtype)
    q, k, v = (g.heads(g.input(n, [B, S, H * D]), H) for n in "qkv")
    mask = g.input("mask", [B, 1, 1, S])
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Div", s, g.const(np.sqrt(D)))
    s = g.op("Add", s, mask)
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def gpt2(dtype):
    # HF GPT-2: a lower-triangular bool buffer, Where(mask, scores, finfo.min).
    g = Graph("gpt2", dtype)
    q, k, v = (g.heads(g.input(n, [B, S, H * D]), H) for n in "qkv")
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Div", s, g.const(np.sqrt(D)))
    tril = np.tril(np.ones((S, S), dtype=bool)).reshape(1, 1, S, S)
    s = g.op("Where", g.const(tril, bool), s, g.const(np.finfo(g.np).min))
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def llama(dtype):
    # HF Llama (RoPE applied before, so Q and K are inputs): 2 KV heads
    # repeated to 4 (repeat_kv: Unsqueeze + Expand + Reshape), scale on the
    # scores, causal as an additive constant mask (0 / finfo.min).
    g = Graph("llama", dtype)
    q = g.heads(g.input("q", [B, S, H * D]), H)

    def repeat_kv(x):
        x = g.op("Unsqueeze", x, g.const([2], np.int64))          # [B, HKV, 1, S, D]
        x = g.op("Expand", x, g.const([B, HKV, H // HKV, S, D], np.int64))
        return g.op("Reshape", x, g.const([B, H, S, D], np.int64))

    k = repeat_kv(g.heads(g.input("k", [B, S, HKV * D]), HKV))
    v = repeat_kv(g.heads(g.input("v", [B, S, HKV * D]), HKV))
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Mul", s, g.const(1.0 / np.sqrt(D)))
    causal = np.triu(np.full((S, S), np.finfo(g.np).min, dtype=g.np), 1)
    s = g.op("Add", s, g.const(causal.reshape(1, 1, S, S)))
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def t5(dtype):
    # HF T5: no scaling; the relative position bias [1, H, S, S] is added.
    g = Graph("t5", dtype)
    q, k, v = (g.heads(g.input(n, [B, S, H * D]), H) for n in "qkv")
    bias = g.input("position_bias", [1, H, S, S])
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Add", s, bias)
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


class DynGraph(Graph):
    """Batch and sequence as named (dynamic) ONNX dims: the heads split and
    merge by Reshape with 0 (copy) entries, model buffers cut to the
    sequence by Slice, as exports with dynamic axes write them."""

    def input(self, name, shape):
        shape = [{"B": "batch", "S": "seq"}.get(d, d) if isinstance(d, str) else d
                 for d in shape]
        return super().input(name, shape)

    def heads(self, x, heads):
        x = self.op("Reshape", x, self.const([0, 0, heads, D], np.int64))
        return self.op("Transpose", x, perm=[0, 2, 1, 3])

    def merge(self, o):
        o = self.op("Transpose", o, perm=[0, 2, 1, 3])
        return self.op("Reshape", o, self.const([0, 0, H * D], np.int64))

    def model(self, out):
        g = oh.make_graph(self.nodes, self.name, self.inputs,
                          [oh.make_tensor_value_info(out, self.dtype, ["batch", "seq", H * D])],
                          self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    def corner(self, buffer, x):
        """buffer[..., :S, :S] with S = x.shape[1] (a model's max-positions
        buffer cut to the sequence)."""
        shp = self.op("Shape", x)
        s = self.op("Slice", shp, self.const([1], np.int64), self.const([2], np.int64))
        return self.op("Slice", buffer, self.const([0, 0], np.int64),
                       self.op("Concat", s, s, axis=0), self.const([2, 3], np.int64))


MAXPOS = 64  # the buffers' size; the EXEC sequence lengths stay within it


def dyn_gpt2(dtype):
    # GPT-2 with dynamic axes: the [1, 1, 64, 64] tril buffer cut to S x S.
    g = DynGraph("dyn_gpt2", dtype)
    xq = g.input("q", ["B", "S", H * D])
    q = g.heads(xq, H)
    k, v = (g.heads(g.input(n, ["B", "S", H * D]), H) for n in "kv")
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Div", s, g.const(np.sqrt(D)))
    tril = np.tril(np.ones((MAXPOS, MAXPOS), dtype=bool)).reshape(1, 1, MAXPOS, MAXPOS)
    s = g.op("Where", g.corner(g.const(tril, bool), xq), s, g.const(np.finfo(g.np).min))
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def dyn_llama(dtype):
    # Llama with dynamic axes: repeat_kv by broadcasting Expand, the additive
    # 0 / finfo.min causal buffer cut to S x S.
    g = DynGraph("dyn_llama", dtype)
    xq = g.input("q", ["B", "S", H * D])
    q = g.heads(xq, H)

    def repeat_kv(x):
        x = g.op("Unsqueeze", x, g.const([2], np.int64))
        x = g.op("Expand", x, g.const([1, 1, H // HKV, 1, 1], np.int64))
        return g.op("Reshape", x, g.const([0, H, -1, D], np.int64))

    k = repeat_kv(g.heads(g.input("k", ["B", "S", HKV * D]), HKV))
    v = repeat_kv(g.heads(g.input("v", ["B", "S", HKV * D]), HKV))
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Mul", s, g.const(1.0 / np.sqrt(D)))
    causal = np.triu(np.full((MAXPOS, MAXPOS), np.finfo(g.np).min, dtype=g.np), 1)
    s = g.op("Add", s, g.corner(g.const(causal.reshape(1, 1, MAXPOS, MAXPOS)), xq))
    p = g.op("Softmax", s, axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def dyn_sink(dtype):
    # gpt-oss's sinks with dynamic axes: the per-head logit expanded to one
    # extra score column, softmax, the column dropped by Slice(end=-1)
    # (torch-mlir: clamps of dim(P) - 1 in i64 around index casts).
    g = DynGraph("dyn_sink", dtype)
    q, k, v = (g.heads(g.input(n, ["B", "S", H * D]), H) for n in "qkv")
    sinks = g.input("sinks", [H])
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Mul", s, g.const(1.0 / np.sqrt(D)))
    sk = g.op("Reshape", sinks, g.const([1, H, 1, 1], np.int64))
    lead = g.op("Slice", g.op("Shape", s), g.const([0], np.int64), g.const([3], np.int64))
    sk = g.op("Expand", sk, g.op("Concat", lead, g.const([1], np.int64), axis=0))
    p = g.op("Softmax", g.op("Concat", s, sk, axis=-1), axis=-1)
    p = g.op("Slice", p, g.const([0], np.int64), g.const([-1], np.int64),
             g.const([-1], np.int64))
    return g.model(g.merge(g.op("MatMul", p, v)))


def dyn_bert_hfmask(dtype):
    # BERT with dynamic axes and Hugging Face's extended mask computed in
    # the graph from attention_mask [B, S] (1 keep, 0 pad):
    # (1 - mask[:, None, None, :]) * finfo.min, added to the scores.
    g = DynGraph("dyn_bert_hfmask", dtype)
    q, k, v = (g.heads(g.input(n, ["B", "S", H * D]), H) for n in "qkv")
    am = g.input("attention_mask", ["B", "S"])
    ext = g.op("Mul", g.op("Sub", g.const(1.0), g.op("Unsqueeze", am, g.const([1, 2], np.int64))),
               g.const(np.finfo(g.np).min))
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Div", s, g.const(np.sqrt(D)))
    p = g.op("Softmax", g.op("Add", s, ext), axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def llama_hfmask(dtype):
    # Hugging Face's 4D mask built in the graph from attention_mask [B, S]
    # (1 keep, 0 pad): Where(mask == 0, finfo.min, causal_table), the table
    # a constant 0 / finfo.min triangle, added to the scaled scores. With
    # left padding a query row can see no key: the program then averages V
    # over every key (all its scores are finfo.min).
    g = Graph("llama_hfmask", dtype)
    q, k, v = (g.heads(g.input(n, [B, S, H * D]), H) for n in "qkv")
    am = g.op("Unsqueeze", g.input("attention_mask", [B, S]), g.const([1, 2], np.int64))
    mn = np.finfo(g.np).min
    table = np.triu(np.full((S, S), mn, dtype=g.np), 1).reshape(1, 1, S, S)
    mask = g.op("Where", g.op("Equal", am, g.const(0.0)), g.const(mn), g.const(table))
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    s = g.op("Mul", s, g.const(1.0 / np.sqrt(D)))
    p = g.op("Softmax", g.op("Add", s, mask), axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def _sdpa_scores(g, q, k):
    # torch.onnx's scaled_dot_product_attention: sqrt(scale) on Q and on K^T.
    sc = g.const(np.sqrt(1.0 / np.sqrt(D)))
    return g.op("MatMul", g.op("Mul", q, sc),
                g.op("Mul", g.op("Transpose", k, perm=[0, 1, 3, 2]), sc))


def sdpa_causal(dtype):
    # torch.onnx's SDPA with is_causal=True: ones(L, S) -> Trilu(upper=0) ->
    # Where(tril == 0, -inf, 0) added to the scores.
    g = Graph("sdpa_causal", dtype)
    q, k, v = (g.heads(g.input(n, [B, S, H * D]), H) for n in "qkv")
    s = _sdpa_scores(g, q, k)
    ls = g.op("Slice", g.op("Shape", s), g.const([-2], np.int64), g.const([2**62], np.int64))
    tril = g.op("Trilu", g.op("Expand", g.const(1.0), ls), upper=0)
    mask = g.op("Where", g.op("Equal", tril, g.const(0.0)), g.const(-np.inf), g.const(0.0))
    p = g.op("Softmax", g.op("Add", s, mask), axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


def dyn_sdpa_bool_mask(dtype):
    # torch.onnx's SDPA with a bool attn_mask and dynamic axes:
    # Where(mask, 0, -inf) added to the scores.
    g = DynGraph("dyn_sdpa_bool_mask", dtype)
    q, k, v = (g.heads(g.input(n, ["B", "S", H * D]), H) for n in "qkv")
    g.inputs.append(oh.make_tensor_value_info("attn_mask", TP.BOOL, ["batch", 1, "seq", "seq"]))
    s = _sdpa_scores(g, q, k)
    mask = g.op("Where", "attn_mask", g.const(0.0), g.const(-np.inf))
    p = g.op("Softmax", g.op("Add", s, mask), axis=-1)
    return g.model(g.merge(g.op("MatMul", p, v)))


F32, F16 = TP.FLOAT, TP.FLOAT16
# (name, builder, dtype, exec directive)
VARIANTS = [
    ("bert_f32", bert, F32, "arg3=mask"),
    ("bert_f16", bert, F16, "arg3=mask"),
    ("gpt2_f32", gpt2, F32, ""),
    ("gpt2_f16", gpt2, F16, ""),
    ("llama_gqa_f32", llama, F32, ""),
    ("llama_gqa_f16", llama, F16, ""),
    ("t5_bias_f32", t5, F32, ""),
    # Dynamic batch and sequence (S = 37 and B = 2 at execution; the
    # buffers hold 64 positions).
    ("dyn_gpt2_f16", dyn_gpt2, F16, "dims=2,37,2,37,2,37"),
    ("dyn_llama_gqa_f32", dyn_llama, F32, "dims=2,37,2,37,2,37"),
    ("dyn_sink_f32", dyn_sink, F32, "dims=2,37,2,37,2,37"),
    ("dyn_sink_f16", dyn_sink, F16, "dims=2,37,2,37,2,37"),
    ("dyn_bert_hfmask_f16", dyn_bert_hfmask, F16, "dims=2,37,2,37,2,37,2,37 arg3=keep01"),
    ("sdpa_causal_f16", sdpa_causal, F16, ""),
    ("llama_hfmask_f32", llama_hfmask, F32, "arg3=leftpad"),
    # f16: a row that sees no key gets round_f16(s - 65504) for every key,
    # which the program's f16 rounding decides (equal only while |s| <= 16);
    # a fused kernel keeps s in f32 there. Executed without such rows.
    ("llama_hfmask_f16", llama_hfmask, F16, "arg3=keep01"),
    ("dyn_sdpa_bool_mask_f32", dyn_sdpa_bool_mask, F32, "dims=2,37,2,37,2,37,2,37,37"),
]

# The remarks attn-opt must print on each file, in order.
FUSED = "attention fused: "
EXPECTED = {
    "torch_bert_f32": [FUSED + "scale=0.25, mask=additive over (b0,n), causal=no, batch dims=2, dtype f32 -> f32",
                       "Q·K^T of a fused attention"],
    "torch_bert_f16": [FUSED + "scale=0.25, mask=additive over (b0,n), causal=no, batch dims=2, dtype f16 -> f32",
                       "Q·K^T of a fused attention"],
    "torch_gpt2_f32": [FUSED + "scale=0.25, mask=none, causal=yes, batch dims=2, dtype f32 -> f32",
                       "Q·K^T of a fused attention"],
    "torch_gpt2_f16": [FUSED + "scale=0.25, mask=none, causal=yes, batch dims=2, dtype f16 -> f32",
                       "Q·K^T of a fused attention"],
    # The additive causal mask (0 / finfo.min) is the causal rule: every row
    # keeps a key, and finfo.min (f32's, or -65504 added in f16) underflows
    # exp to 0. K/V are read unrepeated (GQA).
    "torch_llama_gqa_f32": [FUSED + "scale=0.25, mask=none, causal=yes (from a constant additive 0 / finfo.min mask), batch dims=3, dtype f32 -> f32",
                            "Q·K^T of a fused attention"],
    "torch_llama_gqa_f16": [FUSED + "scale=0.25, mask=none, causal=yes (from a constant additive 0 / finfo.min mask), batch dims=3, dtype f16 -> f32",
                            "Q·K^T of a fused attention"],
    # Dynamic axes: the buffers cut to the sequence are still the causal
    # rule (every corner of a causal buffer is causal), and the sink's slice
    # back to N keys is proven through torch-mlir's i64 clamps; repeat_kv's
    # tensor.reshape by a computed shape is the collapse it stands for, so
    # K/V are read unrepeated.
    "torch_dyn_gpt2_f16": [FUSED + "scale=0.25, mask=none, causal=yes, batch dims=2, dtype f16 -> f32",
                           "Q·K^T of a fused attention"],
    "torch_dyn_llama_gqa_f32": [FUSED + "scale=0.25, mask=none, kv heads 2 x group 2, causal=yes (from a constant additive 0 / finfo.min mask), batch dims=3, dtype f32 -> f32",
                                "Q·K^T of a fused attention"],
    "torch_dyn_sink_f32": [FUSED + "scale=0.25, mask=none, sink, causal=no, batch dims=2, dtype f32 -> f32",
                           "Q·K^T of a fused attention"],
    "torch_dyn_sink_f16": [FUSED + "scale=0.25, mask=none, sink, causal=no, batch dims=2, dtype f16 -> f32",
                           "Q·K^T of a fused attention"],
    # The mask expression over attention_mask is a score_mod region
    # (exact: the op evaluates it per score as the program does).
    "torch_dyn_bert_hfmask_f16": [FUSED + "scale=0.25, mask=none, score_mod=addf(s, mulf(subf(1, x0), -65504)), causal=no, batch dims=2, dtype f16 -> f32",
                                  "Q·K^T of a fused attention"],
    # torch.onnx's SDPA: an additive Where(c, -inf, 0) is the select it
    # stands for; the Trilu flag compared with 0 is the causal rule.
    "torch_sdpa_causal_f16": [FUSED + "scale=0.25, mask=none, causal=yes, batch dims=2, dtype f16 -> f32",
                              "Q·K^T of a fused attention"],
    "torch_llama_hfmask_f32": [FUSED + "scale=0.25, mask=boolean over (b0,n), causal=yes (from a constant additive 0 / finfo.min mask), batch dims=2, dtype f32 -> f32",
                               "Q·K^T of a fused attention"],
    # f16: -65504 + s moves with s past |s| = 16, so a row that sees no key
    # does not average V evenly: the mask stays in the region (whose f32
    # scores differ from the program's f16 ones on such rows).
    "torch_llama_hfmask_f16": [FUSED + "scale=0.25, mask=none, score_mod=addf(s, select(cmpf(x1, 0), -65504, x0)), causal=no, batch dims=2, dtype f16 -> f32",
                               "Q·K^T of a fused attention"],
    "torch_dyn_sdpa_bool_mask_f32": [FUSED + "scale=0.25, mask=boolean over (b0,m,n), causal=no, batch dims=2, dtype f32 -> f32",
                                     "Q·K^T of a fused attention"],
    "torch_t5_bias_f32": [FUSED + "scale=1, mask=additive over (b1,m,n), causal=no, batch dims=2, dtype f32 -> f32",
                          "Q·K^T of a fused attention"],
}

UPSTREAM = {"func", "arith", "math", "linalg", "tensor", "scf", "affine",
            "bufferization", "memref", "builtin", "ml_program", "cf"}


def find_tool(name):
    return corpus_tools.find_tool(name, prog="gen_torch_corpus")


def run(cmd):
    return corpus_tools.run(cmd, prog="gen_torch_corpus")


def i1_literals(text):
    """dense<"0x0100..."> : tensor<AxBxi1> (a byte per element) -> a literal."""
    def rep(m):
        data, shape = bytes.fromhex(m.group(1)), m.group(2)
        dims = [int(x) for x in shape.split("x")]
        if len(data) != int(np.prod(dims)):
            sys.exit(f"gen_torch_corpus: unexpected i1 data for tensor<{shape}xi1>")
        vals = ["true" if b else "false" for b in data]

        def nest(vs, ds):
            if len(ds) == 1:
                return "[" + ", ".join(vs) + "]"
            step = len(vs) // ds[0]
            return "[" + ", ".join(nest(vs[i * step:(i + 1) * step], ds[1:])
                                   for i in range(ds[0])) + "]"
        return f"dense<{nest(vals, dims)}> : tensor<{shape}xi1>"
    return re.sub(r'dense<"0x([0-9A-Fa-f]+)"> : tensor<([0-9x]+)xi1>', rep, text)


def postprocess(text, graph_name, fname):
    text = i1_literals(text)
    text = re.sub(rf"@{graph_name}\b", f"@{fname}", text)
    corpus_tools.check_upstream_ops(text, fname, UPSTREAM,
                                    prog="gen_torch_corpus")
    if re.search(r"\btorch(_c)?\.|!torch|!iree|#iree|\butil\.", text):
        sys.exit(f"gen_torch_corpus: {fname}: foreign op, type or attribute left")
    return text


def header(fname, builder, dtype, directive, versions, cmds):
    import inspect
    import textwrap
    remarks = EXPECTED[fname]
    checks = corpus_tools.check_lines(remarks) if remarks else []
    src = textwrap.dedent(inspect.getsource(builder)).rstrip().splitlines()
    lines = corpus_tools.RUN_LINES + checks + [
        f"// EXEC: amp=2.0 {directive}".rstrip(),
        "//",
        f"// {fname}: an ONNX attention block ({'f16' if dtype == F16 else 'f32'}),"
        " lowered by torch-mlir to upstream linalg.",
        "// Generated by test/corpus/gen_torch_corpus.py; do not edit by hand. Regenerate with",
        "//   VENV/bin/python test/corpus/gen_torch_corpus.py --out test/corpus"
        " --attn-opt build/bin/attn-opt",
        f"// Tools: {versions}",
        "// Steps:",
    ] + [f"//   {c}" for c in cmds] + [
        "//   post-process: i1 hex constants -> dense<[...]> literals, "
        f"@{builder.__name__} -> @{fname}",
        "//   verify: mlir-opt FILE > /dev/null (LLVM/MLIR 22)",
        f"// ONNX graph (B={B}, S={S}, H={H}, KV heads={HKV}, D={D}):",
    ] + ["//   " + l if l else "//" for l in src] + [""]
    return "\n".join(lines)


def remarks_of(attn_opt, path):
    p = subprocess.run([attn_opt, path, "--attn-fuse", "--attn-explain", "-o",
                        os.devnull], capture_output=True, text=True)
    return p.returncode, re.findall(r"^\S*: remark: (.*)$", p.stderr, re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--attn-opt", help="check the remarks against EXPECTED")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--keep-onnx", action="store_true")
    ap.add_argument("--print-remarks", action="store_true",
                    help="print what --attn-opt says on each file (to fill EXPECTED)")
    a = ap.parse_args()
    importer, iree_opt = find_tool("iree-import-onnx"), find_tool("iree-opt")
    mlir_opt = "/usr/lib/llvm-22/bin/mlir-opt"
    from importlib.metadata import version
    versions = (f"onnx {onnx.__version__}, iree-base-compiler "
                f"{version('iree-base-compiler')}")
    pipelines = ["--torch-onnx-to-torch-backend-pipeline",
                 "--torch-backend-to-linalg-on-tensors-backend-pipeline"]
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="attn-torch-corpus-")
    bad = 0
    for name, builder, dtype, directive in VARIANTS:
        if a.only and name not in a.only:
            continue
        fname = f"torch_{name}"
        model = builder(dtype)
        onnx_path = os.path.join(tmp, f"{fname}.onnx")
        onnx.save(model, onnx_path)
        if a.keep_onnx:
            shutil.copy(onnx_path, a.out)
        torch_path = os.path.join(tmp, f"{fname}.torch.mlir")
        run([importer, onnx_path, "-o", torch_path])
        linalg = run([iree_opt] + pipelines + [torch_path])
        body = postprocess(linalg, model.graph.name, fname)
        cmds = [f"iree-import-onnx {fname}.onnx -o {fname}.torch.mlir",
                "iree-opt " + " ".join(pipelines) + f" {fname}.torch.mlir"]
        out_path = os.path.join(a.out, f"{fname}.mlir")
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(header(fname, builder, dtype, directive, versions, cmds) + body)
        run([mlir_opt, out_path, "-o", os.devnull])
        print(f"wrote {out_path}")
        if a.attn_opt:
            rc, got = remarks_of(a.attn_opt, out_path)
            want = EXPECTED[fname]
            if a.print_remarks:
                print(f"  {fname}: {got}")
            elif rc or want is None or len(got) != len(want) or any(
                    not g.startswith(w) for g, w in zip(got, want)):
                print(f"gen_torch_corpus: {fname}: remarks differ from EXPECTED\n"
                      f"  want: {want}\n  got:  {got}")
                bad += 1
    shutil.rmtree(tmp, ignore_errors=True)
    if bad:
        sys.exit(f"gen_torch_corpus: {bad} file(s) do not match EXPECTED")


if __name__ == "__main__":
    main()
