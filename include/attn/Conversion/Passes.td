//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn ops to linalg, arith and math on tensors";
  let description = [{
    `attn.online_update` becomes a row max, the exponentials, the rescale by
    `α = exp(m - m')`, a row sum and the P·V contraction as `linalg.generic`
    ops; `attn.finalize` becomes one elementwise division. Any
    `attn.attention` still present is first tiled with the default tile sizes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
