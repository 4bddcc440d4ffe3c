"""Tests that need attn-opt but no GPU."""
from pathlib import Path

import pytest

import attn_opt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "attention.mlir").read_text()


def test_fuse_reports_and_replaces():
    out, remarks = attn_opt.fuse(EXAMPLE)
    assert "attn.attention" in out
    assert "linalg.softmax" not in out
    assert any(r.fused and "scale=0.125" in r.message for r in remarks)


def test_fuse_and_tile_leaves_no_attention_op():
    out, _ = attn_opt.fuse(EXAMPLE, tile=(32, 32))
    assert "attn.online_update" in out
    assert "attn.attention" not in out
    assert "tensor<16x1000x1000" not in out


def test_lower_cpu_reaches_llvm_dialect():
    out = attn_opt.lower_cpu(EXAMPLE)
    assert "llvm.func @mha" in out
    assert "linalg." not in out and "attn." not in out


def test_bad_input_raises_with_location():
    with pytest.raises(attn_opt.CompileError) as info:
        attn_opt.fuse("func.func @f( {")
    assert "error:" in info.value.diagnostics
    assert "<stdin>:1:" in info.value.diagnostics


def test_rejected_lookalike_explained():
    src = EXAMPLE.replace("linalg.softmax dimension(2)", "linalg.softmax dimension(1)")
    out, remarks = attn_opt.fuse(src)
    assert "attn.attention" not in out
    assert any("not over the key axis" in r.message for r in remarks)
