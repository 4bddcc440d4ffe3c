//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let summary = "Scaled dot-product attention and its online-softmax form";
  let description = [{
    The `attn` dialect names attention as one operation (`attn.attention`) so
    that it can be recognized once and then rewritten into the online-softmax
    (FlashAttention) recurrence, expressed with `attn.online_update` and
    `attn.finalize`, before lowering to linalg (CPU) or to the GPU.
  }];
  let cppNamespace = "::mlir::attn";
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
